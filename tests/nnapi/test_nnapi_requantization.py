"""The documented requantization rule (docs/nnapi.md), bit for bit: the exact
integer accumulator times a 31-bit multiplier, rounded once half away from
zero, plus the zero point, clamped to the activation's range."""
from fractions import Fraction

import numpy as np
import pytest
from nnapi_harness import (
    Q8,
    Out,
    Tensor,
    collect_garbage,  # noqa: F401 - an autouse fixture
    i32,
    run,
)

from openvx_nn import nnapi

OP = nnapi.OperationType


def rule(acc: int, multiplier: float, zero_point: int, low: int = 0, high: int = 255) -> int:
    """Plain Python integers: M = m / 2**shift with 2**30 <= m < 2**31."""
    exact = Fraction(multiplier)
    shift = 0
    while exact * 2 ** shift < 2 ** 30:
        shift += 1
    while exact * 2 ** shift >= 2 ** 31:
        shift -= 1
    m = round(exact * 2 ** shift)
    if m == 2 ** 31:
        m, shift = m // 2, shift - 1
    product = Fraction(acc * m, 2 ** shift)
    magnitude = int(abs(product) + Fraction(1, 2))  # half away from zero
    value = magnitude if product >= 0 else -magnitude
    return min(max(value + zero_point, low), high)


def test_mul_ties_round_half_away_from_zero():
    # s_a * s_b / s_out = 0.5 exactly: odd products land on .5
    qa = np.array([[131, 125, 129, 127, 133, 123]], np.uint8)  # offsets 3, -3, 1, -1, 5, -5 from 128
    qb = np.array([[129]], np.uint8)                            # offset 1
    (got,) = run(OP.MUL, [Tensor(qa, 0.5, 128), Tensor(qb, 0.5, 128), i32(0)], [Out(Q8, (1, 6), 0.5, 128)])
    want = [rule(int(a) - 128, 0.5, 128) for a in qa[0]]
    assert got[0].tolist() == want == [130, 126, 129, 127, 131, 125]


@pytest.mark.parametrize("act", [0, 1, 2, 3])
def test_conv2d_uint8_is_the_rule_exactly(act):
    rng = np.random.default_rng(40 + act)
    x = rng.integers(0, 256, (1, 4, 5, 3), dtype=np.uint8)
    w = rng.integers(0, 256, (2, 2, 3, 3), dtype=np.uint8)
    s_in, z_in, s_w, z_w, s_out, z_out = 0.03, 117, 0.007, 131, 0.05, 90
    bias = rng.integers(-3000, 3000, 2).astype(np.int32)
    (got,) = run(OP.CONV_2D, [Tensor(x, s_in, z_in), Tensor(w, s_w, z_w, const=True),
                              Tensor(bias, s_in * s_w, 0, const=True), i32(2), i32(1), i32(1), i32(act)],
                 [Out(Q8, (1, 3, 3, 2), s_out, z_out)])
    low, high = {0: (0, 255), 1: (z_out, 255), 2: (z_out - 20, z_out + 20), 3: (z_out, 210)}[act]
    multiplier = s_in * s_w / s_out
    for oy in range(3):
        for ox in range(3):
            for o in range(2):
                acc = int(bias[o]) + sum((int(x[0, oy + i, ox + j, c]) - z_in) * (int(w[o, i, j, c]) - z_w)
                                         for i in range(2) for j in range(3) for c in range(3))
                assert got[0, oy, ox, o] == rule(acc, multiplier, z_out, low, high), (oy, ox, o)
