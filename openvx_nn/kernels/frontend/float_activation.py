"""Fast float32 activations: logistic, tanh, swish, hard sigmoid and hard swish (also behind a threshold),
softplus, exp; and the OpenVX
activation layer's exact ones (relu, brelu, abs, square, sqrt, linear: the bits of its float64 expressions).

The one float32 kernel of these functions: the OpenVX activation layer's float32 tensors, NNAPI's LOGISTIC and
TANH and CoreML's activations (and the swish a converter writes as a sigmoid times its input) all run here.
Every function is evaluated in float32 with selects, never branches, so LLVM vectorizes the loops; a layer's
elements are shared with the engine's helpers when it is large (``float_sharing``).

``exp`` is Cody-Waite reduced (``x = n ln2 + r``, ``|r| <= ln2 / 2``, ``n`` by one rounding instruction, the two
products of ``n`` by fused multiply-adds) with Cephes' degree-6 polynomial for ``exp(r)`` (Horner's scheme in
fused multiply-adds), and ``2**n`` applied as two exact power-of-two factors, so results down into the subnormals
are rounded once. No function calls libm: every lane is a short run of vector instructions. The logistic of a
negative ``x`` is ``exp(x) / (1 + exp(x))`` with the power of two applied last (no overflow, no lost subnormal
bits); swish is one such exponential and one division (:func:`swish32`); tanh is Cephes' odd polynomial below ``|x| < 0.625`` and
``1 - 2 / (exp(2|x|) + 1)`` above; softplus is ``max(x, 0) + log1p(exp(-|x|))`` with Cephes' ``log``
polynomial on an exactly reduced argument. Hard sigmoid is rounded once from float64 (its ``a * x + b``
cancels); hard swish too where ``b`` is tiny, else it is computed in float32 with ``a * x + b`` as one fused
multiply-add (rounded once, so the cancellation costs nothing) times ``x``: two roundings, within a step.

Binary16 (``VX_TYPE_FLOAT16``) tensors run on the same loops in a load/store mode: the arrays hold binary16 bits
(``uint16``), each value is widened exactly as it is loaded (:func:`loaded`), the function is the float32 one,
and each result is rounded once to binary16 as it is stored (:func:`stored`, nearest-even, a NaN keeping its
payload's high bits: ``support/binary16``). A binary16 result is thus the float32 result on the widened input
rounded once, bit for bit (NumPy's ``astype(np.float16)`` of it), the float16 layers' documented semantics.
The functions whose float32 result is the input itself, a constant or a NaN (relu, brelu, abs) skip both
conversions there: they select on the binary16 bits in integer lanes (:func:`relu_element` and its neighbours),
which gives those same bits (a NaN is the canonical quiet NaN ``0x7E00``, what the float32 one rounds to).

Tolerance (docs/fixed-point.md, held by ``tests/test_float_activation.py`` over dense sweeps of float32 bit
patterns): against the float64 function rounded to float32, at most :data:`ULPS` units in the last place
(counted as steps between adjacent float32 values, subnormals included); ±0, ±inf and NaN give the reference's.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import types
from numba.extending import overload

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from ..support.binary16 import narrow_bits, widen_bits
from ..support.bit_casts import bits_of_float, float_of_bits, fused_multiply_add
from ..support.vector_width import wide_vectors
from . import float_sharing
from .float_sharing import F32, Rows, at, block_of

(LOGISTIC, TANH, SWISH, HARD_SIGMOID, HARD_SWISH, SOFTPLUS, EXP, RELU, BRELU, ABS, SQUARE, SQRT, LINEAR,
 THRESHOLDED_HARD_SWISH) = range(14)
FUNCTIONS = ("logistic", "tanh", "swish", "hard_sigmoid", "hard_swish", "softplus", "exp",
             "relu", "brelu", "abs", "square", "sqrt", "linear", "thresholded_hard_swish")
"""The functions by code: ``tanh`` is ``a * tanh(b * x)``, ``swish`` ``x * logistic(x)``, ``hard_sigmoid``
``min(max(a * x + b, 0), 1)``, ``hard_swish`` ``x * hard_sigmoid(x)`` and ``thresholded_hard_swish`` with a
third parameter ``c`` ``x * hard_sigmoid(x) if x >= c else +0`` (CoreML's thresholded ReLU of threshold ``c``
before a hard swish, the three layers' bytes at the edges: +0 below ``c``, for NaN and for -inf). The OpenVX activation layer's exact
functions follow its expressions: ``relu`` is ``0 if x <= 0 else x`` (-0 gives +0), ``brelu`` ``min(relu(x), a)``
as ``a if relu(x) > a else relu(x)``, ``abs``; ``square`` ``x * x``, ``sqrt`` and ``linear`` ``a * x + b`` are
evaluated in float64 and rounded once, as the layer's expression is (the same bits). The others read no
parameter."""
ULPS = {"logistic": 3, "tanh": 3, "swish": 4, "hard_sigmoid": 1, "hard_swish": 1, "softplus": 3, "exp": 2,
        "relu": 0, "brelu": 0, "abs": 0, "square": 0, "sqrt": 0, "linear": 0, "thresholded_hard_swish": 1}
"""The largest distance from the float64 reference rounded to float32, in float32 steps (for ``a = b = 1``; a
scaled tanh adds the roundings of ``b * x`` and ``a * t``: a step more). Hard sigmoid and hard swish take ``a``
and ``b`` as float32 values, as the other functions' float64 reference does."""

_F = np.float32
_ONE, _HALF, _ZERO, _TWO = _F(1.0), _F(0.5), _F(0.0), _F(2.0)
_NAN = _F(np.nan)  # the canonical quiet NaN, which every NaN result is (as the OpenVX expression stores it)
_LOG2E = _F(1.44269504088896341)
_LN2_HI, _LN2_LO = _F(0.693359375), _F(-2.12194440e-4)  # ln 2 = HI + LO, HI of 9 bits: n * HI is exact
_NEG_LN2_HI, _NEG_LN2_LO = -_LN2_HI, -_LN2_LO
_EXP_LO, _EXP_HI = _F(-150.0), _F(89.0)  # exp is 0 below (the swish too) and inf above
_MINUS_INF = _F(-np.inf)
_SWISH_SHIFT = 91  # exp(-150) is 2**-216.4: exp(-|x|) * 2**91 stays a normal float32 for every |x| <= 150
_SWISH_UP, _SWISH_DOWN = _F(2.0 ** _SWISH_SHIFT), _F(2.0 ** -_SWISH_SHIFT)
_E0, _E1, _E2, _E3, _E4, _E5 = (_F(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                               4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
_T0, _T1, _T2, _T3, _T4 = (_F(c) for c in (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2,
                                          1.33314422036e-1, -3.33332819422e-1))
_TANH_SMALL = _F(0.625)
_L = tuple(_F(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                           -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_L0, _L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8 = _L
_SQRT2_M1 = _F(0.41421356237)


@jit.jitable
def canonical(y):
    """Float32 ``y``, a NaN as the canonical quiet NaN: selected on the bits, since LLVM may fold a float select
    of a NaN test into ``y`` itself (NaN payloads are not values to it) and keep a NaN's sign and payload."""
    bits = bits_of_float(y)
    return float_of_bits(np.uint32(0x7FC00000) if (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000) else bits)


def loaded(v):
    """The float32 value of an element ``v``: a float32 as it is, binary16 bits (``uint16``) widened exactly."""
    raise NotImplementedError("loaded() is called from kernels only")


@overload(loaded)
def _loaded(v):
    if v == types.uint16:
        return lambda v: float_of_bits(widen_bits(v))
    if v == types.float32:
        return lambda v: v
    return None


def stored(value, target):
    """The float32 ``value`` as an element of the array ``target``: itself for float32, binary16 bits
    (``uint16``) rounded once to nearest even for binary16."""
    raise NotImplementedError("stored() is called from kernels only")


@overload(stored)
def _stored(value, target):
    if not isinstance(target, types.Array):
        return None
    if target.dtype == types.uint16:
        return lambda value, target: narrow_bits(bits_of_float(value))
    if target.dtype == types.float32:
        return lambda value, target: value
    return None


@jit.jitable
def _power_of_two(k):
    """``2.0 ** k`` for int32 ``k`` in [-126, 127]."""
    return float_of_bits(np.int32((k + np.int32(127)) << np.int32(23)))


@jit.jitable
def _scaled(y, n):
    """``y * 2 ** n`` for ``n`` in [-252, 254], by two exact factors: rounded once, into the subnormals too."""
    half = n >> np.int32(1)
    return y * _power_of_two(half) * _power_of_two(n - half)


@jit.jitable
def _exp_parts(x):
    """(y, n) with ``exp(x) = y * 2 ** n`` for float32 ``x`` in [-150, 89], ``y`` in [0.70, 1.42]."""
    z = np.rint(x * _LOG2E)  # one instruction (vrndscaleps), to nearest
    r = fused_multiply_add(z, _NEG_LN2_HI, x)  # exact: z * HI has at most 17 bits
    r = fused_multiply_add(z, _NEG_LN2_LO, r)
    p = fused_multiply_add(fused_multiply_add(fused_multiply_add(fused_multiply_add(
        fused_multiply_add(_E0, r, _E1), r, _E2), r, _E3), r, _E4), r, _E5)
    return fused_multiply_add(p, r * r, r) + _ONE, np.int32(z)


@jit.jitable
def _clamped(x):
    return min(max(x, _EXP_LO), _EXP_HI)


@jit.jitable
def exp32(x):
    """``exp(x)`` in float32."""
    y, n = _exp_parts(_clamped(x))
    r = _scaled(y, n)
    return _NAN if math.isnan(r) else r


@jit.jitable
def exp32_scaled(x, k):
    """``exp(x) * 2 ** k`` in float32, rounded once (``k`` a small int32: the result stays normal where ``exp(x)``
    alone would be subnormal, as softmax's terms of ``x <= 0`` are with ``k = 64``)."""
    y, n = _exp_parts(_clamped(x))
    r = _scaled(y, n + k)
    return _NAN if math.isnan(r) else r


@jit.jitable
def logistic32(x):
    """``1 / (1 + exp(-x))`` in float32."""
    y, n = _exp_parts(_clamped(-abs(x)))
    den = _ONE + _scaled(y, n)
    positive = x >= _ZERO
    q = (_ONE if positive else y) / den  # one division for both sides
    r = q if positive else _scaled(q, n)
    return _NAN if math.isnan(r) else r


@jit.jitable
def swish32(x):
    """``x * logistic(x)`` in float32 from one exponential and one division: with ``e = exp(-|x|)``, ``x / (1 + e)``
    for ``x >= 0`` and ``x e / (1 + e)`` below, ``e`` carried as ``e * 2**91`` (normal down to ``x = -150``) and the
    ``2**-91`` put into the divisor, so the quotient is rounded once even where it is subnormal. Within
    ``ULPS["swish"]`` steps of the float64 ``x * logistic(x)`` rounded; -0 stays -0, a negative ``x`` below -150
    gives -0, +inf gives +inf, and NaN and -inf give the canonical NaN, as the product ``-inf * logistic(-inf)``
    (``-inf * 0``) of CoreML's sigmoid and multiply layers does."""
    v = max(x, _EXP_LO)  # below -150 the quotient is -0 anyway; NaN and -inf are chosen last
    y, n = _exp_parts(max(-abs(v), _EXP_LO))  # exp(-|v|) = y * 2**n, n >= -216
    m = y * _power_of_two(n + np.int32(_SWISH_SHIFT))  # exact
    den = fused_multiply_add(m, _SWISH_DOWN, _ONE)  # 1 + exp(-|v|)
    negative = v < _ZERO
    r = (v * m if negative else v) / (den * _SWISH_UP if negative else den)
    return r if x > _MINUS_INF else _NAN


@jit.jitable
def tanh32(v):
    """``tanh(v)`` in float32."""
    z = v * v
    small = ((((_T0 * z + _T1) * z + _T2) * z + _T3) * z + _T4) * z * v + v
    y, n = _exp_parts(_clamped(_TWO * abs(v)))
    large = _ONE - _TWO / (_scaled(y, n) + _ONE)
    r = small if abs(v) < _TANH_SMALL else (large if v >= _ZERO else -large)
    r = v if v == _ZERO else r  # -0 stays -0
    return _NAN if math.isnan(r) else r


@jit.jitable
def _log1p_unit(e):
    """``log(1 + e)`` for float32 ``e`` in [0, 1]: ``1 + e = 2 ** k (1 + f)``, ``f`` in [-0.293, 0.414] exactly
    (``(e - 1) / 2`` when ``k`` is 1), then Cephes' polynomial of ``log(1 + f)``."""
    big = e > _SQRT2_M1
    f = (e - _ONE) * _HALF if big else e
    k = _ONE if big else _ZERO
    z = f * f
    p = (((((((_L0 * f + _L1) * f + _L2) * f + _L3) * f + _L4) * f + _L5) * f + _L6) * f + _L7) * f + _L8
    y = p * f * z + _LN2_LO * k - _HALF * z
    return f + y + _LN2_HI * k


@jit.jitable
def softplus32(x):
    """``log(1 + exp(x))`` in float32."""
    y, n = _exp_parts(_clamped(-abs(x)))
    r = max(x, _ZERO) + _log1p_unit(_scaled(y, n))
    return _NAN if math.isnan(r) else r


@jit.jitable
def hard_sigmoid64(x, a, b):
    """``min(max(a x + b, 0), 1)`` in float64 (``a``, ``b`` float64; NaN stays NaN)."""
    v = a * np.float64(x) + b
    return np.nan if math.isnan(v) else min(max(v, 0.0), 1.0)


@jit.jitable
def hard_swish64(x, a, b):
    """``x * hard_sigmoid64(x, a, b)`` in float64."""
    r = np.float64(x) * hard_sigmoid64(x, a, b)
    return np.nan if math.isnan(r) else r


SINGLE_ROUNDING_BELOW = 2.0 ** -60
"""A hard swish whose ``b`` is at least this in magnitude (and ``a``, ``b`` finite) runs in float32
(:func:`hard_swish32`): ``a * x + b`` rounded once is then 0 or at least 2**-107 (the products of float32 values
near ``-b`` are multiples of about 2**-47 times ``|b|``), never subnormal, so the product by ``x`` is within a
step of the float64 result; other parameters take the float64 expression."""


@jit.jitable
def single_precision_hard_swish(a, b):
    """Whether a hard swish of float64 parameters ``a``, ``b`` (float32 values) runs on :func:`hard_swish32`."""
    return math.isfinite(a) and math.isfinite(b) and abs(b) >= SINGLE_ROUNDING_BELOW


@jit.jitable
def hard_swish32(x, af, bf):
    """``x * min(max(af * x + bf, 0), 1)`` in float32, the sum by one fused multiply-add (parameters as
    :func:`single_precision_hard_swish` allows): within a step of :func:`hard_swish64` rounded, at twice its lanes."""
    t = fused_multiply_add(af, x, bf)
    h = min(max(t, _ZERO), _ONE)
    return canonical(x * h)


@jit.jitable
def thresholded_hard_swish32(x, af, bf, cf):
    """:func:`hard_swish32` where ``x >= cf``, else +0 (NaN too): CoreML's thresholded ReLU then hard swish."""
    return hard_swish32(x, af, bf) if x >= cf else _ZERO


@jit.jitable
def thresholded_hard_swish64(x, a, b, c):
    """:func:`hard_swish64` rounded to float32 where ``x >= c``, else +0 (NaN too)."""
    return _F(hard_swish64(x, a, b)) if x >= c else _ZERO


@jit.jitable
def relu32(x):
    """``0 if x <= 0 else x`` in float32 (-0 gives +0, NaN the canonical NaN)."""
    return canonical(_ZERO if x <= _ZERO else x)  # noqa: FURB136 - max() would pin another NaN and -0 rule


_H_MAGNITUDE, _H_INF, _H_NAN, _H_SIGN = (np.uint16(v) for v in (0x7FFF, 0x7C00, 0x7E00, 0x8000))
_H_ZERO = np.uint16(0)


@jit.jitable
def _relu_bits(h):
    """relu32 on binary16 bits, rounded once: +0 for a negative sign (-0 and -inf too), the canonical quiet NaN
    for a NaN, else ``h`` itself (a positive binary16 value is its own float32 result rounded)."""
    r = _H_ZERO if h >= _H_SIGN else h
    return _H_NAN if (h & _H_MAGNITUDE) > _H_INF else r


@jit.jitable
def half_cap(a):
    """``(start, capped)`` of the float32 bound ``a`` of brelu on binary16 bits: a relu result ``r`` (a bit
    pattern of +0 to +inf, ordered as its value) exceeds ``a`` exactly when ``r >= start``, and then the float32
    route stores ``a``, whose rounding is ``capped``."""
    capped = narrow_bits(bits_of_float(a))
    if math.isnan(a):
        return np.uint16(0x7C01), capped  # nothing exceeds a NaN
    if a <= _ZERO:
        return np.uint16(0 if a < _ZERO else 1), capped  # below zero every r exceeds it; at ±0 every r > 0
    # past the largest binary16 value at most a: a rounded to nearest, one step further unless that rounded up
    up = float_of_bits(widen_bits(capped)) <= a
    return np.uint16(capped + np.uint16(1) if up else capped), capped


def relu_element(v):
    """relu of one element, as the element is stored: ``relu32`` for float32, its bits rounded once for
    binary16 bits (selected in integer lanes, no conversion)."""
    raise NotImplementedError("relu_element() is called from kernels only")


@overload(relu_element)
def _relu_element(v):
    if v == types.uint16:
        return lambda v: _relu_bits(v)
    if v == types.float32:
        return lambda v: relu32(v)
    return None


def brelu_element(v, a, start, capped):
    """brelu of one element with the float32 bound ``a``: ``a if relu(v) > a else relu(v)``; binary16 bits select
    with :func:`half_cap`'s ``start`` and ``capped`` of ``a`` (float32 ignores them)."""
    raise NotImplementedError("brelu_element() is called from kernels only")


@overload(brelu_element)
def _brelu_element(v, a, start, capped):
    if v == types.uint16:
        def bits(v, a, start, capped):
            r = _H_ZERO if v >= _H_SIGN else v
            r = capped if r >= start else r
            return _H_NAN if (v & _H_MAGNITUDE) > _H_INF else r
        return bits
    if v == types.float32:
        def single(v, a, start, capped):
            r = relu32(v)
            return a if r > a else r  # noqa: FURB136 - min() would pin another NaN rule
        return single
    return None


def abs_element(v):
    """abs of one element, as stored: the float32 one with a NaN canonical, or binary16 bits with the sign
    cleared (a NaN: ``0x7E00``)."""
    raise NotImplementedError("abs_element() is called from kernels only")


@overload(abs_element)
def _abs_element(v):
    if v == types.uint16:
        def bits(v):
            m = v & _H_MAGNITUDE
            return _H_NAN if m > _H_INF else m
        return bits
    if v == types.float32:
        return lambda v: canonical(abs(v))
    return None


@jit.jitable
def rounded64(r):
    """The float64 ``r`` rounded once to float32, NaN as the canonical NaN."""
    return canonical(_F(r))


@jit.kernel(error_model="numpy")
def _rows(x, out, code, a, b, c, r0, r1):
    """Elements ``[r0 * BLOCK, r1 * BLOCK)`` of flat ``x`` into ``out`` (which may be ``x``): one loop per code.
    Both float32, or both binary16 bits (``uint16``: widened on load, rounded once on store)."""
    wide_vectors()
    # Slices indexed from 0: LLVM then knows no index wraps (a negative one would), and loads whole vectors.
    xs, ys = x[r0 * BLOCK:min(r1 * BLOCK, x.size)], out[r0 * BLOCK:min(r1 * BLOCK, x.size)]
    af, bf = _F(a), _F(b)
    if code == LOGISTIC:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(logistic32(v), ys)
    elif code == TANH:
        if a == 1.0 and b == 1.0:
            for i in range(xs.size):
                v = loaded(xs[i])
                ys[i] = stored(tanh32(v), ys)
        else:
            for i in range(xs.size):
                v = loaded(xs[i])
                ys[i] = stored(af * tanh32(bf * v), ys)
    elif code == SWISH:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(swish32(v), ys)
    elif code == HARD_SIGMOID:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(_F(hard_sigmoid64(v, a, b)), ys)
    elif code == HARD_SWISH:
        if single_precision_hard_swish(a, b):
            for i in range(xs.size):
                v = loaded(xs[i])
                ys[i] = stored(hard_swish32(v, af, bf), ys)
        else:
            for i in range(xs.size):
                v = loaded(xs[i])
                ys[i] = stored(_F(hard_swish64(v, a, b)), ys)
    elif code == THRESHOLDED_HARD_SWISH:
        cf = _F(c)
        if single_precision_hard_swish(a, b):
            for i in range(xs.size):
                v = loaded(xs[i])
                ys[i] = stored(thresholded_hard_swish32(v, af, bf, cf), ys)
        else:
            for i in range(xs.size):
                v = loaded(xs[i])
                ys[i] = stored(thresholded_hard_swish64(v, a, b, c), ys)
    elif code == SOFTPLUS:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(softplus32(v), ys)
    elif code == EXP:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(exp32(v), ys)
    elif code == RELU:  # relu, brelu, abs: binary16 bits select in integer lanes (module doc)
        for i in range(xs.size):
            ys[i] = relu_element(xs[i])
    elif code == BRELU:
        start, capped = half_cap(af)
        for i in range(xs.size):
            ys[i] = brelu_element(xs[i], af, start, capped)
    elif code == ABS:
        for i in range(xs.size):
            ys[i] = abs_element(xs[i])
    elif code == SQUARE:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(rounded64(np.float64(v) * np.float64(v)), ys)
    elif code == SQRT:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(rounded64(math.sqrt(np.float64(v))), ys)
    else:
        for i in range(xs.size):
            v = loaded(xs[i])
            ys[i] = stored(rounded64(a * np.float64(v) + b), ys)


BLOCK = 8192
"""Elements per row of the shared loop (a chunk is one or more rows)."""
COST_PER_VALUE = 12
"""An element's time in a convolution multiply-add's (``Rows`` weighs work in the latter)."""


_RUN_CHUNKS = chunk_driver(_rows)


@jit.kernel(error_model="numpy")
def _rows_shared(x, out, code, a, b, c, n_rows, n_chunks, counters, wait):
    _RUN_CHUNKS((x, out, code, a, b, c), n_rows, n_chunks, counters, wait)


_HALF_IN, _HALF_OUT = (types.Array(types.uint16, 1, "C", readonly=r) for r in (True, False))
_TYPES = {False: (F32[1, False], F32[1, True], jit.INT, jit.FLOAT, jit.FLOAT, jit.FLOAT),
          True: (_HALF_IN, _HALF_OUT, jit.INT, jit.FLOAT, jit.FLOAT, jit.FLOAT)}
"""The loops' argument types by element: float32 (False) or binary16 bits (True)."""
_ELEMENTS = (np.dtype(np.float32), np.dtype(np.float16))


def code_of(function: str) -> int:
    """The code of ``function`` (one of :data:`FUNCTIONS`), or a ValueError naming the known ones."""
    if function not in FUNCTIONS:
        raise ValueError(f"float32 activation {function!r} is unknown; expected one of {', '.join(FUNCTIONS)}")
    return FUNCTIONS.index(function)


def _float32s(a: float, b: float, c: float) -> tuple[float, float, float]:
    return float(np.float32(a)), float(np.float32(b)), float(np.float32(c))


def flat_views(x: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """1-D views of ``x`` and ``out``, both float32 or both float16, in one element order (both C- or both
    Fortran-contiguous, an OpenVX tensor's array), when they are apart or the same memory; else None. Float16
    arrays give their bits (``uint16`` views), as the loops take them."""
    if x.dtype != out.dtype or x.dtype not in _ELEMENTS or x.shape != out.shape:
        return None
    if np.may_share_memory(x, out) and (x.ctypes.data != out.ctypes.data or x.strides != out.strides):
        return None
    for order, flag in (("C", "C_CONTIGUOUS"), ("F", "F_CONTIGUOUS")):
        if x.flags[flag] and out.flags[flag]:
            fx, fo = x.reshape(-1, order=order), out.reshape(-1, order=order)
            return (fx.view(np.uint16), fo.view(np.uint16)) if x.dtype == np.float16 else (fx, fo)
    return None


def bind(x: np.ndarray, out: np.ndarray, function: str, a: float = 1.0, b: float = 1.0,
         c: float = 0.0) -> Callable[[], None]:
    """A no-argument call ``out = function(x)`` from ``x``'s current values (``a``, ``b``, ``c``: the parameters of
    :data:`FUNCTIONS`, as float32 values); arrays of one shape, both float32 or both float16 (binary16: module doc),
    any layout (contiguous ones are read and written in place, others through a copy per call); ``out`` may be
    ``x``. Large tensors are shared with the engine's helpers."""
    code = code_of(function)
    if x.dtype != out.dtype or x.dtype not in _ELEMENTS:
        raise ValueError(f"x and out are {x.dtype} and {out.dtype}, expected both float32 or both float16")
    if x.shape != out.shape:
        raise ValueError(f"x has shape {x.shape} and out {out.shape}, expected one shape")
    vectors = flat_views(x, out)
    if vectors is None:
        xs, target = np.empty(x.shape, x.dtype), np.empty(out.shape, out.dtype)
        inner = bind(xs, target, function, a, b, c)

        def copied() -> None:
            xs[...] = x
            inner()
            out[...] = target
        return copied
    fx, fo = vectors
    n_rows = -(-fx.size // BLOCK)
    return Rows(_rows, _rows_shared, (fx, fo, code, *_float32s(a, b, c)), _TYPES[fx.dtype == np.uint16], n_rows,
                fx.size * COST_PER_VALUE)


def apply(x: np.ndarray, out: np.ndarray, function: str, a: float = 1.0, b: float = 1.0, c: float = 0.0) -> None:
    """``bind(...)()``: one call."""
    bind(x, out, function, a, b, c)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT, _COUNTERS = at(0), at(1), at(2)
_CODE, _A, _B, _C, _ROWS, _MAILBOX, _TASK, _CHUNKS = range(at(3), at(3) + 8)


def _block_rows(element: type):
    """The entry body of elements ``element`` (``np.float32``, or ``np.uint16`` for binary16 bits): every element
    of the call packed in ``block``, serially (``chunks`` 0) or in ``chunks`` chunks claimed with the helpers
    (``wait``: until every claimed one is done)."""
    def block_rows(code, block, chunks, wait):
        args = (native.c_array(block, _X, element)[0, 0, 0, 0, 0], native.c_array(block, _OUT, element)[0, 0, 0, 0, 0],
                block[_CODE], native.real(block, _A), native.real(block, _B), native.real(block, _C))
        if chunks == 0:
            _rows(*args, 0, block[_ROWS])
        else:
            _rows_shared(*args, block[_ROWS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0],
                         wait)
    return jit.kernel(block_rows, error_model="numpy")


_BODIES = {half: gang.shared_entry(_block_rows(np.uint16 if half else np.float32), gang.nothing_first,
                                   (_MAILBOX, _TASK, _CHUNKS, _COUNTERS)) for half in (False, True)}


@native.factory
def _entry(half: bool) -> int:
    return jit.native(_BODIES[half][0])


@native.factory
def _helper(half: bool) -> int:
    return jit.native(_BODIES[half][1])


def native_entry(x: np.ndarray, out: np.ndarray, function: str, a: float = 1.0,
                 b: float = 1.0, c: float = 0.0) -> native.Entry | None:
    """:func:`bind` as a native entry (shared with the gang's helpers when large); None unless ``x`` and ``out``
    are both float32 or both float16 of one shape, contiguous in one order, the same memory or apart, and not
    empty."""
    code = code_of(function)
    vectors = flat_views(x, out)
    if vectors is None or x.size == 0:
        return None
    fx, fo = vectors
    n_rows = -(-fx.size // BLOCK)
    task = gang.NativeTask(n_rows, fx.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(fx, fo, task.counters, code, *_float32s(a, b, c), n_rows, *task.words())
    half = bool(fx.dtype == np.uint16)
    return native.Entry(_entry(half), words, keep + task.finish(_helper(half), words))
