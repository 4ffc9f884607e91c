"""The lane reduction (``support/lane_reduction``) that softmax's maximum and sum and the moments' sums share: bit
for bit the order its module text gives (group g of eight terms into accumulator g % 4, term 8g + j into its lane
j; accumulators combined (0, 1), (2, 3), lanes ((0, 1), (2, 3)), ((4, 5), (6, 7)), the tail term by term), written
here as plain Python, over random lengths (every count of whole groups modulo four, tails of 0 to 7) and values
whose sums depend on the order; and the kernels built on it through their
callers' reductions (``float_softmax.row_sum``, ``moments._row_squares``, ``float_softmax._row_max``)."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_softmax, moments
from openvx_nn.kernels.support import jit
from openvx_nn.kernels.support.lane_reduction import lane_reduction, plus, widened


def ordered(terms, add, first):
    """The module text's order, in plain Python."""
    whole = len(terms) // 8 * 8
    accumulators = [[first] * 8 for _ in range(4)]
    for k in range(whole):
        acc = accumulators[k // 8 % 4]
        acc[k % 8] = add(acc[k % 8], terms[k])
    a0, a1, a2, a3 = accumulators
    lanes = [add(add(a0[j], a1[j]), add(a2[j], a3[j])) for j in range(8)]
    a = add(add(add(lanes[0], lanes[1]), add(lanes[2], lanes[3])), add(add(lanes[4], lanes[5]), add(lanes[6], lanes[7])))
    for t in terms[whole:]:
        a = add(a, t)
    return a


def larger(m, v):
    return v if v > m else m  # noqa: FURB136 - the rule written out: a NaN never replaces m


def _cube(b, x, arg):
    """``(float64(x) * arg) ** 3``, each product rounded: a term the module does not define."""
    v = b.fmul(widened(b, x, arg), arg)
    return b.fmul(b.fmul(v, v), v)


_CUBES = lane_reduction(_cube, plus, "cubes")


@jit.kernel
def _cubes(row, n, scale):
    return _CUBES(row, n, 0.0, scale)


@jit.kernel
def _sum(row, n):
    return float_softmax.row_sum(row, n)


@jit.kernel
def _squares(row, n, mean):
    return moments._row_squares(row, n, mean)


@jit.kernel
def _max(row, n):
    return float_softmax._row_max(row, n)


def _rows(seed):
    """float32 rows of every length 1 .. 40 and of 30 random lengths to 300: values of magnitudes 2**-20 .. 2**20
    and both signs, a quarter of them replaced by +-2**50, which cancel each other: a sum of them in another order
    rounds differently."""
    rng = np.random.default_rng(seed)
    for n in [*range(1, 41), *rng.integers(41, 301, 30)]:
        row = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        big = rng.integers(0, n, max(1, n // 4))
        row[big] = np.float32(2.0 ** 50) * rng.choice(np.array([-1, 1], np.float32), big.size)
        yield row


def _layouts(row):
    """``row`` as the reductions meet it: contiguous float32, float64, every other value of a longer array, and
    reversed (a negative stride)."""
    spread = np.zeros(2 * row.size, row.dtype)
    spread[::2] = row
    return row, row.astype(np.float64), spread[::2], row[::-1].copy()[::-1]


@pytest.mark.parametrize("seed", range(4))
def test_sums_follow_the_lane_order_bit_for_bit(seed):
    for row in (view for r in _rows(seed) for view in _layouts(r)):
        n = row.size
        wide = [float(v) for v in row]
        assert _sum(row, n) == ordered(wide, lambda a, b: a + b, 0.0)
        mean = wide[0] / 3.0
        assert _squares(row, n, mean) == ordered([(v - mean) * (v - mean) for v in wide], lambda a, b: a + b, 0.0)
        assert _cubes(row, n, 1.5) == ordered([(v * 1.5) * (v * 1.5) * (v * 1.5) for v in wide], lambda a, b: a + b,
                                             0.0)


def test_order_matters_for_these_rows():
    """The rows above are sums a plain left-to-right order rounds otherwise (else the test above proves nothing)."""
    differs = 0
    for row in _rows(0):
        wide = [float(v) for v in row]
        differs += sum(wide[1:], wide[0]) != ordered(wide, lambda a, b: a + b, 0.0)
    assert differs > 15


@pytest.mark.parametrize("seed", range(4))
def test_maximum_keeps_the_first_of_equal_values_and_never_takes_a_nan(seed):
    rng = np.random.default_rng(seed)
    for n in [*range(1, 41), *rng.integers(41, 301, 20)]:
        values = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, -np.inf, 1e-45, np.inf], np.float32), n)
        for row in _layouts(values)[::2]:  # float32 rows: contiguous and every other value
            got = _max(row, n)
            want = ordered([np.float32(v) for v in row], larger, row[0])
            assert np.float32(got).tobytes() == np.float32(want).tobytes(), row
            if not np.isnan(row[0]) and not np.isnan(row).all():
                assert got == np.nanmax(row)
