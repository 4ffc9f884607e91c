"""Test-side tools for the kernel tests: formats, awkward arrays, and the plain reference arithmetic.

Nothing here is shared with ``openvx_nn.kernels``: the references use Python
integers and ``fractions.Fraction``, the obvious way, so a kernel bug cannot
hide behind the same bug in its reference.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np


@dataclass(frozen=True)
class Format:
    name: str
    dtype: type
    fpp: int = 0

    @property
    def is_float(self) -> bool:
        return np.dtype(self.dtype).kind == "f"

    @property
    def lo(self) -> int:
        return int(np.iinfo(self.dtype).min)

    @property
    def hi(self) -> int:
        return int(np.iinfo(self.dtype).max)

    def __str__(self) -> str:
        return self.name


U8 = Format("U8", np.uint8)
S8 = Format("S8", np.int8)
Q7 = Format("Q0.7", np.int8, 7)
Q78 = Format("Q7.8", np.int16, 8)
Q11_4 = Format("Q11.4", np.int16, 4)
Q3_12 = Format("Q3.12", np.int16, 12)
F32 = Format("F32", np.float32)
INT_FORMATS = [U8, S8, Q7, Q78, Q11_4, Q3_12]
FORMATS = INT_FORMATS + [F32]


# ---- shapes and arrays ------------------------------------------------------------------------

def random_shape(rng: np.random.Generator, ndim: int | None = None, max_size: int = 400,
                 max_dim: int = 6) -> tuple[int, ...]:
    ndim = int(rng.integers(1, 7)) if ndim is None else ndim
    shape = [int(rng.integers(1, max_dim + 1)) for _ in range(ndim)]
    while int(np.prod(shape)) > max_size:
        shape[int(np.argmax(shape))] -= 1
    return tuple(shape)


def broadcast_shape(rng: np.random.Generator, shape: tuple[int, ...], p: float = 0.4) -> tuple[int, ...]:
    """``shape`` with random dims set to 1 (same rank: OpenVX's broadcasting)."""
    return tuple(1 if rng.random() < p else n for n in shape)


LAYOUTS = ["c", "f", "step", "perm", "reversed"]


def blank(rng: np.random.Generator, shape: tuple[int, ...], dtype, layout: str) -> np.ndarray:
    """A writable array of ``shape`` whose memory layout is ``layout`` (see LAYOUTS), filled with junk."""
    dtype = np.dtype(dtype)
    if layout == "c":
        base = np.empty(shape, dtype)
        view = base
    elif layout == "f":
        base = np.empty(shape, dtype, order="F")
        view = base
    elif layout == "step":  # every axis stepped by 1..3 from a random start
        steps = [int(rng.integers(1, 4)) for _ in shape]
        starts = [int(rng.integers(0, 2)) for _ in shape]
        base = np.empty([s0 + n * st for n, st, s0 in zip(shape, steps, starts)], dtype)
        view = base[tuple(slice(s0, s0 + n * st, st) for n, st, s0 in zip(shape, steps, starts))]
    elif layout == "perm":  # memory order is a random permutation of the axes
        order = rng.permutation(len(shape))
        base = np.empty([shape[i] for i in order], dtype)
        view = base.transpose(np.argsort(order))
    elif layout == "reversed":  # OpenVX order (dim 0 fastest) read backwards along dim 0: negative stride
        base = np.empty(shape, dtype, order="F")
        view = base[::-1]
    else:
        raise ValueError(layout)
    assert view.shape == tuple(shape), (view.shape, shape, layout)
    if dtype.kind == "f":
        base[...] = np.float32(-7.75)  # finite junk, so an unwritten element is visible but not a NaN
    else:
        info = np.iinfo(dtype)
        base[...] = rng.integers(info.min, int(info.max) + 1, base.shape).astype(dtype)
    return view


def placed(rng: np.random.Generator, values: np.ndarray, layout: str | None = None) -> np.ndarray:
    """``values`` copied into an array of a random (or given) memory layout."""
    layout = layout if layout is not None else LAYOUTS[int(rng.integers(len(LAYOUTS)))]
    out = blank(rng, values.shape, values.dtype, layout)
    out[...] = values
    return out


def random_values(rng: np.random.Generator, fmt: Format, shape: tuple[int, ...],
                  extremes: float = 0.2) -> np.ndarray:
    """Raw values over the whole range of ``fmt``, with a share of exact extremes (and zeros)."""
    if fmt.is_float:
        mant = rng.standard_normal(shape)
        exp = rng.integers(-6, 7, shape).astype(np.float64)
        values = (mant * 10.0 ** exp).astype(np.float32)
        special = rng.random(shape)
        values[special < extremes / 2] = np.float32(0.0)
        values[(special >= extremes / 2) & (special < extremes)] = np.float32(-0.0)
        return values
    values = rng.integers(fmt.lo, fmt.hi + 1, shape).astype(fmt.dtype)
    special = rng.random(shape)
    values[special < extremes / 3] = fmt.lo
    values[(special >= extremes / 3) & (special < 2 * extremes / 3)] = fmt.hi
    values[(special >= 2 * extremes / 3) & (special < extremes)] = 0
    return values


# ---- reference arithmetic ---------------------------------------------------------------------

def round_exact(q: Fraction, nearest_even: bool) -> int:
    """``q`` rounded toward zero, or to nearest with ties to even."""
    if nearest_even:
        return round(q)  # Fraction.__round__: half to even
    return int(q)  # truncates toward zero


def fit_exact(v: int, fmt: Format, saturate: bool) -> int:
    """``v`` into ``fmt``'s type: clamped, or wrapped two's-complement."""
    if saturate:
        return min(max(v, fmt.lo), fmt.hi)
    span = fmt.hi - fmt.lo + 1
    return (v - fmt.lo) % span + fmt.lo


def as_ints(x: np.ndarray) -> np.ndarray:
    """An object array of Python ints with ``x``'s values."""
    out = np.empty(x.shape, dtype=object)
    for index in np.ndindex(x.shape):
        out[index] = int(x[index])
    return out


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, same shape, same bits (float32 compared bitwise, so -0.0 != 0.0)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype.kind == "f":
        a = np.ascontiguousarray(actual).view(np.uint32)
        e = np.ascontiguousarray(expected).view(np.uint32)
    else:
        a, e = actual, expected
    bad = np.argwhere(a != e)
    assert bad.size == 0, (f"{len(bad)} of {a.size} elements differ; first at {tuple(bad[0])}: "
                           f"got {actual[tuple(bad[0])]!r}, expected {expected[tuple(bad[0])]!r}")


FLOAT32_SUMS = 1e-5
"""The float engine's bound: a float32 sum of K terms lies within K * 2**-24 of the terms' magnitudes of the exact
value; the layers promise 1e-5 of that magnitude (``kernels/openvx/float_layers.py``)."""


def assert_float32_sums(actual: np.ndarray, expected: np.ndarray, magnitude: np.ndarray) -> None:
    """float32 results of sums in float32 (the float engine's): each within ``FLOAT32_SUMS`` times ``magnitude`` (the
    sum of its terms' absolute values, from the same reference over absolute inputs) of the exact ``expected``."""
    assert actual.dtype == expected.dtype == np.float32, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape == magnitude.shape, (actual.shape, expected.shape, magnitude.shape)
    error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bad = np.argwhere(~(error <= FLOAT32_SUMS * magnitude.astype(np.float64)))
    assert bad.size == 0, (f"{len(bad)} of {actual.size} elements beyond {FLOAT32_SUMS} of their terms' magnitude; "
                           f"first at {tuple(bad[0])}: got {actual[tuple(bad[0])]!r}, expected "
                           f"{expected[tuple(bad[0])]!r}, magnitude {magnitude[tuple(bad[0])]!r}")


SUBNORMAL_STEP = 2.0 ** -149
"""The smallest float32 step: the float32 means may lose a few where subnormal inputs are scaled."""


def assert_float32_means(actual: np.ndarray, expected: np.ndarray, magnitude: np.ndarray, count: int) -> None:
    """float32 means of float32 sums (the pooling kernel's average): where the exact mean ``expected`` is not
    finite, the same value (NaN where it is NaN); elsewhere within ``FLOAT32_SUMS`` times ``magnitude`` (the mean
    of the terms' absolute values) plus ``count`` subnormal steps (``count`` the terms of a window)."""
    assert actual.dtype == expected.dtype == np.float32, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape == magnitude.shape, (actual.shape, expected.shape, magnitude.shape)
    finite = np.isfinite(expected)
    same = np.where(np.isnan(expected), np.isnan(actual), actual == expected)
    bad_special = np.argwhere(~finite & ~same)
    assert bad_special.size == 0, (f"first at {tuple(bad_special[0])}: got {actual[tuple(bad_special[0])]!r}, "
                                   f"expected {expected[tuple(bad_special[0])]!r}")
    with np.errstate(invalid="ignore"):
        error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bound = FLOAT32_SUMS * magnitude.astype(np.float64) + count * SUBNORMAL_STEP
    bad = np.argwhere(finite & ~(error <= bound))
    assert bad.size == 0, (f"{len(bad)} of {actual.size} means beyond {FLOAT32_SUMS} of their terms' magnitude; "
                           f"first at {tuple(bad[0])}: got {actual[tuple(bad[0])]!r}, expected "
                           f"{expected[tuple(bad[0])]!r}, magnitude {magnitude[tuple(bad[0])]!r}")


def float32_steps(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """How many float32 values lie between ``actual`` and ``expected`` plus one (0: equal, ±0 alike): the
    distance in units in the last place, counted across exponents and through the subnormals."""
    def ordered(a: np.ndarray) -> np.ndarray:
        bits = np.ascontiguousarray(a, np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    return np.abs(ordered(actual) - ordered(expected))


def assert_float32_ulps(actual: np.ndarray, expected: np.ndarray, ulps: int, x: np.ndarray | None = None) -> None:
    """float32 ``actual`` within ``ulps`` float32 steps of ``expected`` (the float64 function rounded to float32);
    NaN exactly where it is NaN, and the same bits where it is zero or infinite."""
    assert actual.dtype == expected.dtype == np.float32, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a, e = actual.reshape(-1), expected.reshape(-1)
    inputs = None if x is None else np.asarray(x).reshape(-1)
    nan = np.isnan(e)
    special = ~nan & ((e == 0) | np.isinf(e))
    bad = np.flatnonzero((np.isnan(a) != nan) | (special & (a.view(np.uint32) != e.view(np.uint32))))
    steps = np.where(nan | special, 0, float32_steps(np.where(nan, 0, a), np.where(nan, 0, e)))
    bad = np.union1d(bad, np.flatnonzero(steps > ulps))
    at = "" if inputs is None or not bad.size else f" at x={inputs[bad[0]]!r}"
    assert bad.size == 0, (f"{bad.size} of {a.size} elements beyond {ulps} ulps or special values differ; first"
                           f"{at}: got {a[bad[0]]!r}, expected {e[bad[0]]!r}, max steps {steps.max()}")
