"""Activation layer (OpenVX NN vxActivationLayer): one nonlinear function applied element-wise.

With ``v`` the real input (``quantize``: exact dequantization, or float64 of
a float32) and ``a``, ``b`` the parameters as float32 values widened to
float64, each function is exactly this float64 expression (``exp``, ``tanh``,
``log1p``, ``sqrt`` are the C library's functions, the ones Python's ``math``
wraps; no fused multiply-add)::

    logistic   1.0 / (1.0 + exp(-v))
    tanh       a * tanh(b * v)
    relu       0.0 if v <= 0.0 else v                 (NaN stays NaN)
    brelu      r = relu(v); a if r > a else r
    softrelu   (v if v > 0.0 else 0.0) + log1p(exp(-fabs(v)))
    abs        fabs(v)
    square     v * v
    sqrt       sqrt(v)                                (v < 0 gives NaN)
    linear     a * v + b

softrelu is ``log(1 + exp(v))`` rearranged so it neither overflows
(the literal form is inf beyond v = 709.78) nor loses small results (the
literal form is 0 below v = -37, where float32 still holds ``exp(v)``).
Overflow inside ``exp`` gives inf (C semantics, where Python's ``math.exp``
would raise); logistic then gives 0.

The result is quantized once (``quantize``). Integer tensors (8 and 16 bits)
go through a table of all 256 or 65536 raw inputs, built with the same
compiled expression once per (function, a, b, dtype, fpp_in, fpp_out) and
cached. Float32 tensors run on ``frontend/float_activation``, the float32 kernel
every front end shares (one vectorized loop per function, shared with the
engine's helpers when large): logistic, tanh and softrelu within a few float32
units in the last place of the expression (its ``ULPS``); relu, brelu, abs,
square, sqrt and linear with the expression's bits (:data:`EXACT_FLOAT32`).
Strided float32 tensors those loops cannot take evaluate the expression per
element. Where the whole
table is a clamp of the raw input (relu, or brelu, between equal formats:
checked on all of its entries), contiguous tensors take one flat min/max loop
instead (vectorized, several times faster than the gather): the same bits.

One compiled expression serves both paths, so the tables are not built by
Python's ``math`` but by numba's, which calls the same C library functions
(``exp``, ``tanh``, ``log1p``, ``sqrt``); the tests hold every 8- and 16-bit
input, and random float32 ones of the exact functions, to a plain ``math``
reference bit for bit.
A numba set up to vectorise with Intel SVML (``icc_rt`` installed) would
swap in its own approximations; those tests would then fail.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numba import prange

from ..frontend import float_activation
from ..support import jit, native, stamps
from ..support.fixed_point import float32_value
from ..support.jit import kernel
from ..support.layout import detach, loop_views, row_index
from .quantize import check_pair, plan, quantize

FUNCTIONS = ("logistic", "tanh", "relu", "brelu", "softrelu", "abs", "square", "sqrt", "linear")
_CODES = {name: code for code, name in enumerate(FUNCTIONS)}
_USES_A = {"tanh", "brelu", "linear"}
_USES_B = {"tanh", "linear"}

# Below this many elements the serial kernel wins over waking the thread pool.
PARALLEL_WORK = 1 << 18
FAST_FLOAT32 = {"logistic": "logistic", "tanh": "tanh", "softrelu": "softplus"}
"""The functions float32 tensors compute on ``frontend/float_activation`` (within its stated tolerance), by its
names."""
EXACT_FLOAT32 = ("relu", "brelu", "abs", "square", "sqrt", "linear")
"""The functions contiguous float32 tensors compute on ``frontend/float_activation`` under the same names, with
the bits of :func:`formula` rounded once (relu, brelu and abs are exact in float32; square, sqrt and linear are
evaluated there in float64 as here)."""


@kernel(error_model="numpy")
def formula(code, v, a, b):
    """The float64 expression of function number ``code`` (index into FUNCTIONS) at ``v``."""
    if code == 0:
        return 1.0 / (1.0 + math.exp(-v))
    if code == 1:
        return a * math.tanh(b * v)
    if code == 2 or code == 3:
        r = 0.0 if v <= 0.0 else v  # noqa: FURB136 - max() would pin another NaN rule
        if code == 3 and r > a:
            return a
        return r
    if code == 4:
        return (v if v > 0.0 else 0.0) + math.log1p(math.exp(-math.fabs(v)))  # noqa: FURB136
    if code == 5:
        return math.fabs(v)
    if code == 6:
        return v * v
    if code == 7:
        return math.sqrt(v)
    return a * v + b


def _evaluate(x, out, code, a, b, in_unit, scale, lo, hi, to_int):
    n0, n1, n2, n3, n4, n5 = out.shape
    rows = n0 * n1 * n2 * n3 * n4
    for t in prange(rows):
        i0, i1, i2, i3, i4 = row_index(t, n1, n2, n3, n4)
        for i5 in range(n5):
            v = np.float64(x[i0, i1, i2, i3, i4, i5]) / in_unit
            out[i0, i1, i2, i3, i4, i5] = quantize(formula(code, v, a, b), scale, lo, hi, to_int)


def _gather(x, table, offset, out):
    n0, n1, n2, n3, n4, n5 = out.shape
    rows = n0 * n1 * n2 * n3 * n4
    for t in prange(rows):
        i0, i1, i2, i3, i4 = row_index(t, n1, n2, n3, n4)
        for i5 in range(n5):
            out[i0, i1, i2, i3, i4, i5] = table[np.int64(x[i0, i1, i2, i3, i4, i5]) + offset]


def _clamp_loop(x, out, lo, hi):
    """``out[i] = min(max(x[i], lo), hi)`` on flat arrays: a vectorized loop, in the elements' own type (with
    int64 bounds every lane widened to int64: 5x slower on 16-bit data)."""
    bounds = np.empty(2, x.dtype)
    bounds[0], bounds[1] = lo, hi
    low, high = bounds[0], bounds[1]
    for i in range(x.size):
        out[i] = min(max(x[i], low), high)


_clamp = kernel(_clamp_loop)


_EVALUATE = {p: kernel(_evaluate, parallel=p, error_model="numpy") for p in (False, True)}
_GATHER = {p: kernel(_gather, parallel=p) for p in (False, True)}
# Below HOLD_GIL_BELOW elements the kernel keeps the GIL: handing it to a waiting thread (a graph on
# another thread) and taking it back costs a thread switch each, more than such a kernel (measured:
# 8 threads on 1x1x8 relu graphs went from 0.65x to about 1x the throughput of one thread).
HOLD_GIL_BELOW = 4096
_EVALUATE["gil"] = kernel(_evaluate, error_model="numpy", nogil=False)
_GATHER["gil"] = kernel(_gather, nogil=False)
_clamp_holding_gil = kernel(_clamp_loop, nogil=False)


def _run_evaluate(x6: np.ndarray, out6: np.ndarray, code: int, a: float, b: float, q, parallel: bool) -> None:
    function = jit.entry(_EVALUATE[parallel], jit.array_in(x6), jit.array_out(out6), jit.INT, jit.FLOAT,
                         jit.FLOAT, jit.FLOAT, jit.FLOAT, jit.INT, jit.INT, jit.BOOL)
    function(x6, out6, code, a, b, *q.args())


@lru_cache(maxsize=128)
def _clamp_of(function: str, a: float, b: float, dtype: np.dtype, fpp_in: int, fpp_out: int) -> tuple[int, int] | None:
    """(lo, hi) when the table of these arguments is ``clip(raw, lo, hi)`` for every raw input, else None."""
    if function not in ("relu", "brelu"):
        return None
    table = _table(function, a, b, dtype, fpp_in, fpp_out)
    lo, hi = int(table[0]), int(table[-1])
    info = np.iinfo(dtype)
    raw = np.arange(int(info.min), int(info.max) + 1, dtype=np.int64)
    return (lo, hi) if np.array_equal(table, np.clip(raw, lo, hi)) else None


def clamp(function: str, a: float, b: float, dtype, fpp_in: int, fpp_out: int) -> tuple[int, int] | None:
    """The raw ``(lo, hi)`` an integer activation of these arguments is (its whole table ``clip(raw, lo, hi)``),
    or None: what a layer's saturating epilogue may compute in its place (``core.rewrites``)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" or function not in ("relu", "brelu"):
        return None
    return _clamp_of(function, float(a), float(b), dtype, int(fpp_in), int(fpp_out))


def _flat_pair(x: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """1-D views of ``x`` and ``out`` in one element order, when both are contiguous alike; else None."""
    if x.shape != out.shape or x.size == 0:
        return None
    for order, flag in (("C", "C_CONTIGUOUS"), ("F", "F_CONTIGUOUS")):
        if x.flags[flag] and out.flags[flag]:
            return x.ravel(order), out.ravel(order)
    return None


@lru_cache(maxsize=128)
def _table(function: str, a: float, b: float, dtype: np.dtype, fpp_in: int, fpp_out: int) -> np.ndarray:
    """Raw outputs for every raw input ``lo .. hi`` of ``dtype`` (read-only, index ``raw - lo``)."""
    info = np.iinfo(dtype)
    raw = np.arange(int(info.min), int(info.max) + 1, dtype=np.int64).astype(dtype)
    table = np.empty(raw.shape, dtype)
    shape6 = (1, 1, 1, 1, 1, raw.size)
    _run_evaluate(raw.reshape(shape6), table.reshape(shape6), _CODES[function], a, b,
                  plan(dtype, fpp_in, fpp_out), False)
    table.flags.writeable = False
    return table


def activation(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0, b: float = 0.0, *,
               fpp_in: int = 0, fpp_out: int = 0, parallel: bool | None = None) -> None:
    """``out = function(x, a, b)`` element-wise, in place, per the module's expressions.

    ``function`` is one of FUNCTIONS; ``a`` and ``b`` are taken as float32
    values (OpenVX passes vx_float32), and only the functions that use them
    read them. ``x`` and ``out`` share dtype (uint8, int8, int16 or float32)
    and shape (rank 1 to 6, any strides); ``out`` may be ``x`` itself.
    ``fpp_in`` and ``fpp_out`` are the fixed point positions of integer
    tensors. ``parallel``: None chooses the thread pool for at least
    PARALLEL_WORK elements; the result is the same either way.
    """
    run = prepare(detach_from(out, x), out, function, a, b, fpp_in=fpp_in, fpp_out=fpp_out, parallel=parallel)
    run()


def detach_from(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x``, or its copy when it overlaps ``out`` other than as the very same view."""
    check_pair(x, out)
    return detach(out, x, True)


def _parameters(function: str, a: float, b: float) -> tuple[float, float]:
    """``a`` and ``b`` as the float32 values OpenVX passes, 0.0 for those ``function`` does not read (so one
    table serves every call that computes the same thing)."""
    return (float32_value(a) if function in _USES_A else 0.0, float32_value(b) if function in _USES_B else 0.0)


def float32_function(function: str, a: float, b: float) -> tuple[str, float, float] | None:
    """``float_activation``'s (function, a, b) for the transcendental functions (logistic, tanh, softrelu), which
    the plan may fuse as a gate into a product that reads them; None for the others (relu and the exactly
    computed ones run on their own loops and are not fused as gates)."""
    return (FAST_FLOAT32[function], *_parameters(function, a, b)) if function in FAST_FLOAT32 else None


def _operands(x: np.ndarray, out: np.ndarray, function: str, a: float, b: float, fpp_in: int,
              fpp_out: int) -> tuple | None:
    """The kernel's arguments (``_evaluate``'s for float32, ``_gather``'s for integers); None when empty."""
    code = _CODES.get(function)
    if code is None:
        raise ValueError(f"activation function {function!r} is unknown; expected one of {', '.join(FUNCTIONS)}")
    check_pair(x, out)
    a, b = _parameters(function, a, b)
    views = loop_views(out, x)
    if views is None:
        return None
    o, v = views
    if out.dtype.kind == "f":
        return (v, o, code, a, b, *plan(out.dtype, 0, 0).args())
    table = _table(function, a, b, out.dtype, int(fpp_in), int(fpp_out))
    return (v, table, -int(np.iinfo(out.dtype).min), o)


def prepare(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0, b: float = 0.0, *,
            fpp_in: int = 0, fpp_out: int = 0, parallel: bool | None = None) -> Callable[[], None]:
    """:func:`activation` with every check, view, table and compiled function resolved once:
    the returned runner only runs the kernel (on the arrays' current contents).

    ``x`` must not overlap ``out`` except as the very same view (see :func:`detach_from`).
    """
    arguments = _operands(x, out, function, a, b, fpp_in, fpp_out)
    if arguments is None:
        return _nothing
    if out.dtype == np.float32 and function in FAST_FLOAT32:
        return float_activation.bind(x, out, FAST_FLOAT32[function], *_parameters(function, a, b))
    if out.dtype == np.float32 and function in EXACT_FLOAT32 and float_activation.flat_views(x, out) is not None:
        return float_activation.bind(x, out, function, *_parameters(function, a, b))
    clamped = _clamped(x, out, function, a, b, fpp_in, fpp_out)
    if clamped is not None:
        xf, of, lo, hi = clamped
        clamp = jit.entry(_clamp_holding_gil if out.size < HOLD_GIL_BELOW else _clamp, jit.array_in(xf, "C"),
                          jit.array_out(of, "C"), jit.INT, jit.INT)
        return functools.partial(clamp, xf, of, lo, hi)
    wants_pool = bool(out.size >= PARALLEL_WORK if parallel is None else parallel)
    if out.dtype.kind == "f":
        v, o = arguments[:2]
        types = (jit.array_in(v), jit.array_out(o), jit.INT, jit.FLOAT, jit.FLOAT, jit.FLOAT, jit.FLOAT,
                 jit.INT, jit.INT, jit.BOOL)
        kernels = {p: jit.entry(_EVALUATE[p], *types) for p in {False, wants_pool}}
    else:
        v, table, _, o = arguments
        types = (jit.array_in(v), jit.array_in(table, "C"), jit.INT, jit.array_out(o))
        kernels = {p: jit.entry(_GATHER[p], *types) for p in {False, wants_pool}}
    serial = kernels[False]
    if out.size < HOLD_GIL_BELOW and not wants_pool:
        serial = jit.entry((_EVALUATE if out.dtype.kind == "f" else _GATHER)["gil"], *types)
    if not wants_pool:
        return functools.partial(serial, *arguments)
    parallel_kernel = kernels[True]

    def run() -> None:
        with jit.thread_pool() as pool:
            (parallel_kernel if pool else serial)(*arguments)

    return run


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
_evaluate_serial, _gather_serial = _EVALUATE[False], _GATHER[False]


@native.factory
def _native_evaluate(dtype: type) -> int:
    def entry(block):
        x, out = native.array(block, 0, dtype), native.array(block, 13, dtype)
        _evaluate_serial(x, out, block[26], native.real(block, 27), native.real(block, 28),
                         native.real(block, 29), native.real(block, 30), block[31], block[32], block[33] != 0)
        return 0
    return jit.native(entry)


@native.factory
def _native_clamp(dtype: type) -> int:
    def entry(block):
        n = block[1] * block[2] * block[3] * block[4] * block[5] * block[6]
        _clamp(native.c_array(block, 0, dtype).reshape(n), native.c_array(block, 13, dtype).reshape(n),
               block[26], block[27])
        return 0
    return jit.native(entry)


@native.factory
def _native_gather(dtype: type) -> int:
    def entry(block):
        x, table = native.array(block, 0, dtype), native.array(block, 13, dtype)[0, 0, 0, 0, 0]
        _gather_serial(x, table, block[26], native.array(block, 27, dtype))
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0, b: float = 0.0, *,
                 fpp_in: int = 0, fpp_out: int = 0) -> native.Entry | None:
    """:func:`prepare`'s serial kernel as a native entry; None for an empty tensor (nothing to run).

    ``x`` must not overlap ``out`` except as the very same view (see :func:`detach_from`).
    """
    key = ("activation", function, float(a), float(b), int(fpp_in), int(fpp_out))
    return stamps.stamped(key, (x, out), lambda: _native_entry(x, out, function, a, b, fpp_in, fpp_out))


def _native_entry(x: np.ndarray, out: np.ndarray, function: str, a: float, b: float, fpp_in: int,
                  fpp_out: int) -> native.Entry | None:
    arguments = _operands(x, out, function, a, b, fpp_in, fpp_out)
    if arguments is None:
        return None
    if out.dtype == np.float32 and function in FAST_FLOAT32:  # None for a strided tensor: the Python path runs it
        return float_activation.native_entry(x, out, FAST_FLOAT32[function], *_parameters(function, a, b))
    if out.dtype == np.float32 and function in EXACT_FLOAT32:  # None for a strided tensor: the expression runs it
        entry = float_activation.native_entry(x, out, function, *_parameters(function, a, b))
        if entry is not None:
            return entry
    clamped = _clamped(x, out, function, a, b, fpp_in, fpp_out)
    if clamped is not None:
        xf, of, lo, hi = clamped
        return native.Entry(_native_clamp(out.dtype.type), *native.pack(native.as6(xf), native.as6(of), lo, hi))
    if out.dtype.kind == "f":
        address = _native_evaluate(out.dtype.type)
    else:
        v, table, offset, o = arguments
        arguments, address = (v, native.as6(table), offset, o), _native_gather(out.dtype.type)
    return native.Entry(address, *native.pack(*arguments))


def _clamped(x: np.ndarray, out: np.ndarray, function: str, a: float, b: float, fpp_in: int,
             fpp_out: int) -> tuple | None:
    """``_clamp``'s arguments (flat ``x``, flat ``out``, lo, hi) when the function is a clamp of the raw values
    and both tensors are contiguous alike; else None."""
    if out.dtype.kind == "f":
        return None
    a, b = _parameters(function, a, b)
    bounds = _clamp_of(function, a, b, out.dtype, int(fpp_in), int(fpp_out))
    flat = _flat_pair(x, out) if bounds is not None else None
    return None if flat is None else (*flat, *bounds)


def _nothing() -> None:
    pass
