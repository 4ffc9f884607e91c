"""Plain references for the nonlinear layers: activation, softmax, local response normalization.

Written from the contracts in the kernel modules' docstrings, one element at
a time in plain Python floats (IEEE float64) and Python's ``math``, sharing
no code with ``openvx_nn.kernels``. Where Python raises and C returns an IEEE
value (``exp`` and ``pow`` overflowing, ``sqrt`` of a negative, division by
zero) the helpers here return the C value, which is what the contracts pin.
"""
from __future__ import annotations

import math

import numpy as np
from kernel_testing import Format, assert_bits_equal, assert_float32_ulps

CANONICAL_NAN = np.array([0x7FC00000], np.uint32).view(np.float32)[0]


# ---- C semantics for the few places where Python raises ---------------------------------------

def c_exp(t: float) -> float:
    try:
        return math.exp(t)
    except OverflowError:
        return math.inf


def c_pow(base: float, exponent: float) -> float:
    """C's pow for the non-negative bases LRN produces (NaN passes through math.pow)."""
    assert not base < 0, base
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return math.inf
    except ValueError:  # pow(0, negative): C gives +inf (pole error)
        assert base == 0 and exponent < 0
        return math.inf


def c_sqrt(v: float) -> float:
    return math.nan if v < 0 else math.sqrt(v)


def c_div(p: float, q: float) -> float:
    if q != 0:
        return p / q
    if math.isnan(p) or p == 0:
        return math.nan
    return math.copysign(math.inf, p) * math.copysign(1.0, q)


# ---- formats --------------------------------------------------------------------------------------

class Scale:
    """One format's conversions, with its constants looked up once (``Format``'s properties are slow)."""

    def __init__(self, fmt: Format):
        self.is_float = fmt.is_float
        self.unit = 2 ** fmt.fpp  # a Python int: raw / unit is one correctly rounded (here exact) division
        self.lo, self.hi = (0, 0) if self.is_float else (fmt.lo, fmt.hi)

    def real(self, raw) -> float:
        """The real value of one stored element (float32: its float64 value)."""
        return float(raw) if self.is_float else int(raw) / self.unit

    def stored(self, v: float):
        """``v`` as the format stores it: float32 (one cast, canonical NaN) or the rounded, saturated raw int."""
        if self.is_float:
            if math.isnan(v):
                return CANONICAL_NAN
            with np.errstate(over="ignore"):
                return np.float32(v)
        if math.isnan(v):
            return 0
        t = v * self.unit
        if math.isinf(t):
            return self.hi if t > 0 else self.lo
        return min(max(round(t), self.lo), self.hi)  # round(float): nearest, ties to even, exact


# ---- activation -----------------------------------------------------------------------------------

def activation_value(function: str, v: float, a: float, b: float) -> float:
    if function == "logistic":
        return 1.0 / (1.0 + c_exp(-v))
    if function == "tanh":
        return a * math.tanh(b * v)
    if function == "relu":
        return 0.0 if v <= 0.0 else v  # noqa: FURB136 - the contract's NaN rule, spelled out
    if function == "brelu":
        r = 0.0 if v <= 0.0 else v  # noqa: FURB136
        return a if r > a else r  # noqa: FURB136
    if function == "softrelu":
        return (v if v > 0.0 else 0.0) + math.log1p(c_exp(-abs(v)))  # noqa: FURB136
    if function == "abs":
        return abs(v)
    if function == "square":
        return v * v
    if function == "sqrt":
        return c_sqrt(v)
    if function == "linear":
        return a * v + b
    raise ValueError(function)


def activation_table(function: str, a: float, b: float, fin: Format, fout: Format) -> np.ndarray:
    """Stored outputs for every raw input of an integer ``fin``, indexed by ``raw - fin.lo``."""
    sin, sout = Scale(fin), Scale(fout)
    return np.array([sout.stored(activation_value(function, sin.real(raw), a, b))
                     for raw in range(fin.lo, fin.hi + 1)], dtype=fout.dtype)


def reference_activation(x: np.ndarray, function: str, a: float, b: float, fin: Format,
                         fout: Format) -> np.ndarray:
    sin, sout = Scale(fin), Scale(fout)
    result = np.empty(x.shape, fout.dtype)
    for index in np.ndindex(x.shape):
        result[index] = sout.stored(activation_value(function, sin.real(x[index]), a, b))
    return result


FLOAT32_ULPS = {"logistic": 3, "tanh": 3, "softrelu": 3}
"""The float32 activations computed to a stated tolerance rather than bit for bit (docs/fixed-point.md): float32
steps from the reference rounded once; a scaled tanh (``a``, ``b`` not 1) one step more."""


def assert_activation(actual: np.ndarray, expected: np.ndarray, function: str, a: float, b: float) -> None:
    """``actual`` equals the reference ``expected`` bit for bit, or within the stated float32 ulps where the
    function has them (float32 tensors only)."""
    if actual.dtype == np.float32 and function in FLOAT32_ULPS:
        scaled = function == "tanh" and (a, b) != (1.0, 1.0)
        assert_float32_ulps(actual, expected, FLOAT32_ULPS[function] + scaled)
    else:
        assert_bits_equal(actual, expected)


# ---- softmax --------------------------------------------------------------------------------------

def reference_softmax(x: np.ndarray, axis: int, fin: Format, fout: Format) -> np.ndarray:
    sin, sout = Scale(fin), Scale(fout)
    result = np.empty(x.shape, fout.dtype)
    n = x.shape[axis]
    rest = x.shape[:axis] + x.shape[axis + 1:]
    for outer in np.ndindex(rest):
        positions = [outer[:axis] + (k,) + outer[axis:] for k in range(n)]
        values = [sin.real(x[p]) for p in positions]
        m = values[0]
        for v in values[1:]:
            if v > m:  # noqa: PLR1730 - the pinned rule, spelled out
                m = v
        exps = [math.exp(v - m) for v in values]  # v - m <= 0 (or NaN): never overflows
        s = 0.0
        for e in exps:
            s += e
        for p, e in zip(positions, exps):
            result[p] = sout.stored(e / s)
    return result


SOFTMAX_RELATIVE = 2.0 ** -20
"""The float32 softmax's documented bound (docs/fixed-point.md): ``|y - softmax| <= 2**-20 softmax + 2**-150``."""


def assert_softmax(actual: np.ndarray, expected: np.ndarray) -> None:
    """Integer formats: the reference's bits. Float32: within the float32 softmax's bound of ``expected`` (the
    reference rounded once, which adds half a step), NaN exactly where it is NaN."""
    if actual.dtype != np.float32:
        assert_bits_equal(actual, expected)
        return
    assert expected.dtype == np.float32 and actual.shape == expected.shape
    nan = np.isnan(expected)
    assert (np.isnan(actual) == nan).all(), "NaN differs from the reference's"
    a, e = actual[~nan].astype(np.float64), expected[~nan].astype(np.float64)
    excess = np.abs(a - e) - ((SOFTMAX_RELATIVE + 2.0 ** -23) * np.abs(e) + 2.0 ** -148)
    worst = int(np.argmax(excess)) if excess.size else 0
    assert excess.size == 0 or excess[worst] <= 0, f"got {a[worst]!r}, expected {e[worst]!r}"


# ---- local response normalization --------------------------------------------------------------

def reference_lrn(x: np.ndarray, across_maps: bool, size: int, alpha: float, beta: float, bias: float,
                  fin: Format, fout: Format) -> np.ndarray:
    """``alpha``, ``beta``, ``bias`` must already be float32 values."""
    width, height, maps = x.shape[:3]
    h = size // 2
    n = size if across_maps else size * size
    sin, sout = Scale(fin), Scale(fout)
    result = np.empty(x.shape, fout.dtype)
    for index in np.ndindex(x.shape):
        i, y, c, *batch = index
        s = 0.0
        if across_maps:
            for k in range(c - h, c + h + 1):
                if 0 <= k < maps:
                    w = sin.real(x[(i, y, k, *batch)])
                    s += w * w
        else:
            for j in range(y - h, y + h + 1):
                for ii in range(i - h, i + h + 1):
                    if 0 <= j < height and 0 <= ii < width:
                        w = sin.real(x[(ii, j, c, *batch)])
                        s += w * w
        d = c_pow(bias + (alpha / n) * s, beta)
        result[index] = sout.stored(c_div(sin.real(x[index]), d))
    return result
