"""Tensor add, subtract and multiply (OpenVX 1.2 vxTensorAdd/Subtract/MultiplyNode).

Integer tensors are computed exactly in int64 and rounded (multiply only)
and fitted once. Both inputs broadcast NumPy-style against the output's shape
(OpenVX itself only broadcasts ``in2``, along dims of length 1).

Multiply, integers. ``float32(scale)`` is a dyadic rational ``m * 2**e``
(``|m| < 2**24``, see ``fixed_point.dyadic``), so the exact result in units of
the output's LSB is ``in1 * in2 * m / 2**t`` with ``t = p1 + p2 - p_out - e``.
When the scale is ``float32(1/255)`` the exact rational 1/255 is used instead
(``m = 1``, divisor 255), as OpenVX requires 1/255 to be exact: e.g.
``255 * 255 * (1/255) == 255`` where the float32 value would give 254.99...
Int64 cannot overflow: ``|in1|, |in2| <= 2**15`` for 16-bit data, so
``|in1 * in2| <= 2**30`` and ``|in1 * in2 * m| < 2**54``, inside the helpers'
``|v| < 2**62`` domain; the 1/255 divisor ``255 << t`` stays below ``2**62``
for ``t <= 53``, and a left shift is fitted by comparison before shifting.
"""
from __future__ import annotations

import functools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..engine import gang, isa
from ..engine.chunk_loop import chunk_driver
from ..frontend import float_sharing
from ..support import jit, native, stamps
from ..support.fixed_point import ONE_255, dyadic, fit, float32_value, int_range, requantize_ratio
from ..support.jit import kernel
from ..support.layout import detach, each_element, loop_views


@jit.jitable
def _added_int(x, y, subtract, saturate, lo, hi):
    v = np.int64(x) - np.int64(y) if subtract else np.int64(x) + np.int64(y)
    return fit(v, lo, hi, saturate)


@jit.jitable
def _added_float(x, y, subtract):
    if np.isnan(x):  # a NaN input1 is the result, whatever input2 is (``add``)
        return x
    return x - y if subtract else x + y


@jit.jitable
def _multiplied_int(x, y, m, shift, divisor, nearest_even, saturate, lo, hi):
    return requantize_ratio(np.int64(x) * np.int64(y) * m, shift, divisor, nearest_even, saturate, lo, hi)


@jit.jitable
def _multiplied_float(x, y, scale):
    return np.float32(np.float64(x) * np.float64(y) * scale)


_EACH_ADDED_INT, _EACH_ADDED_FLOAT = each_element(_added_int), each_element(_added_float)
_EACH_MULTIPLIED_INT, _EACH_MULTIPLIED_FLOAT = each_element(_multiplied_int), each_element(_multiplied_float)


@kernel
def _add_sub_int(a, b, out, subtract, saturate, lo, hi):
    _EACH_ADDED_INT(out, (a, b), (subtract, saturate, lo, hi))


@kernel
def _add_sub_float(a, b, out, subtract):
    _EACH_ADDED_FLOAT(out, (a, b), (subtract,))


@kernel
def _multiply_int(a, b, out, m, shift, divisor, nearest_even, saturate, lo, hi):
    _EACH_MULTIPLIED_INT(out, (a, b), (m, shift, divisor, nearest_even, saturate, lo, hi))


@kernel
def _multiply_float(a, b, out, scale):
    _EACH_MULTIPLIED_FLOAT(out, (a, b), (scale,))


def _is_float(*arrays: np.ndarray) -> bool:
    kinds = {x.dtype.kind for x in arrays}
    if kinds == {"f"}:
        if any(x.dtype != np.float32 for x in arrays):
            raise ValueError(f"float tensors must be float32, got {[str(x.dtype) for x in arrays]}")
        return True
    if "f" in kinds:
        raise ValueError(f"cannot mix float and integer tensors: {[str(x.dtype) for x in arrays]}")
    return False


def _views(out: np.ndarray, in1: np.ndarray, in2: np.ndarray, bound: bool) -> tuple | None:
    """``(o, a, b)`` 6-D loop views (None when empty).  ``bound``: the views are kept for later runs, so an
    input that would need a copy (it overlaps the output) gives ValueError instead (the copy would go stale)."""
    a, b = detach(out, in1, True), detach(out, in2, True)
    if bound and (a is not in1 or b is not in2):
        raise ValueError("an input overlaps the output: it must be copied on every run")
    return loop_views(out, a, b)


def _add_sub_operands(in1, in2, out, saturate, subtract, bound=False) -> tuple[bool, tuple] | None:
    """(float?, the kernel's arguments), None when empty."""
    views = _views(out, in1, in2, bound)
    if views is None:
        return None
    o, a, b = views
    if _is_float(in1, in2, out):
        return True, (a, b, o, subtract)
    lo, hi = int_range(out.dtype)
    return False, (a, b, o, subtract, bool(saturate), lo, hi)


def _add_sub(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool, subtract: bool) -> None:
    found = _add_sub_operands(in1, in2, out, saturate, subtract)
    if found is None:
        return
    is_float, arguments = found
    a, b, o = arguments[:3]
    types = (jit.array_in(a), jit.array_in(b), jit.array_out(o), jit.BOOL)
    if is_float:
        jit.entry(_add_sub_float, *types)(*arguments)
        return
    jit.entry(_add_sub_int, *types, jit.BOOL, jit.INT, jit.INT)(*arguments)


def add(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool) -> None:
    """``out = in1 + in2`` element-wise, in place.

    Integers: the raw values (all three tensors share one fixed point
    position, so it plays no part) are added exactly, then saturated to
    ``out``'s range (``saturate``) or wrapped two's-complement. float32: plain
    float32 addition; ``saturate`` is ignored; a NaN ``in1`` is the result as it
    is (which of two NaN operands a vector add keeps is the compiler's choice:
    this rule fixes it, and the float engine's residual epilogue follows it).
    ``in1`` and ``in2`` broadcast against ``out.shape``.
    """
    _add_sub(in1, in2, out, saturate, subtract=False)


def subtract(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool) -> None:
    """``out = in1 - in2`` element-wise, in place; otherwise exactly as :func:`add`."""
    _add_sub(in1, in2, out, saturate, subtract=True)


def multiply(in1: np.ndarray, in2: np.ndarray, scale: float, out: np.ndarray, saturate: bool,
             nearest_even: bool, *, fpp1: int = 0, fpp2: int = 0, fpp_out: int = 0) -> None:
    """``out = in1 * in2 * scale`` element-wise, in place, rounded once and fitted once.

    Integers: the exact value in units of ``out``'s LSB is
    ``in1_raw * in2_raw * scale / 2**(fpp1 + fpp2 - fpp_out)``; it is rounded
    toward zero or to nearest with ties to even (``nearest_even``), then
    saturated or wrapped. ``scale`` is taken as its float32 value exactly,
    except that ``float32(1/255)`` means exactly 1/255; a scale that is not a
    finite float32 raises ValueError. float32 tensors: ``float32(float64(in1)
    * float64(in2) * float64(float32(scale)))`` (IEEE, no special 1/255 rule);
    the policies and positions are ignored.
    """
    found = _multiply_operands(in1, in2, scale, out, saturate, nearest_even, fpp1, fpp2, fpp_out)
    if found is None:
        return
    is_float, arguments = found
    a, b, o = arguments[:3]
    arrays = (jit.array_in(a), jit.array_in(b), jit.array_out(o))
    if is_float:
        jit.entry(_multiply_float, *arrays, jit.FLOAT)(*arguments)
        return
    function = jit.entry(_multiply_int, *arrays, jit.INT, jit.INT, jit.INT, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
    function(*arguments)


def _multiply_operands(in1, in2, scale, out, saturate, nearest_even, fpp1, fpp2, fpp_out,
                       bound=False) -> tuple[bool, tuple] | None:
    """(float?, the kernel's arguments), None when empty."""
    views = _views(out, in1, in2, bound)
    if views is None:
        return None
    o, a, b = views
    if _is_float(in1, in2, out):
        return True, (a, b, o, float32_value(scale))
    if float32_value(scale) == ONE_255:
        m, e, divisor = 1, 0, 255
    else:
        (m, e), divisor = dyadic(scale), 1
    lo, hi = int_range(out.dtype)
    shift = fpp1 + fpp2 - fpp_out - e
    return False, (a, b, o, m, shift, divisor, bool(nearest_even), bool(saturate), lo, hi)


# -- native entries (a C loop calls them without the GIL; see support/native.py) --------------------------
# An entry's elements are cut along the views' outermost axis (:func:`_outer_first`) into units that the gang's
# spinning helpers may share (``gang.shared_entry``): each element is computed by the same operations whichever
# thread computes it, so the bits do not depend on the split. Block: the views a, b, out, the chunk counters,
# then [units, mailbox, task, chunks], then the kernel's scalars.
_A, _B, _O, _COUNTERS = (k * native.ARRAY_WORDS for k in range(4))
_UNITS, _MAILBOX, _TASK, _CHUNKS = range(4 * native.ARRAY_WORDS, 4 * native.ARRAY_WORDS + 4)
_SCALARS = _CHUNKS + 1
COST_PER_VALUE = 16
"""An element's time in a convolution multiply-add's (``float_sharing.NATIVE_PARALLEL_WORK`` weighs work in the
latter): the float multiply took 0.6 ns an element on EfficientNet's gates, one thread."""


@kernel
def _add_sub_float_units(a, b, out, subtract, u0, u1):
    _EACH_ADDED_FLOAT(out[u0:u1], (a[u0:u1], b[u0:u1]), (subtract,))


@kernel
def _add_sub_int_units(a, b, out, subtract, saturate, lo, hi, u0, u1):
    _EACH_ADDED_INT(out[u0:u1], (a[u0:u1], b[u0:u1]), (subtract, saturate, lo, hi))


@kernel
def _multiply_float_units(a, b, out, scale, u0, u1):
    _EACH_MULTIPLIED_FLOAT(out[u0:u1], (a[u0:u1], b[u0:u1]), (scale,))


@kernel
def _multiply_int_units(a, b, out, m, shift, divisor, nearest_even, saturate, lo, hi, u0, u1):
    _EACH_MULTIPLIED_INT(out[u0:u1], (a[u0:u1], b[u0:u1]), (m, shift, divisor, nearest_even, saturate, lo, hi))


_ADD_SUB_FLOAT_CHUNKS, _ADD_SUB_INT_CHUNKS = chunk_driver(_add_sub_float_units), chunk_driver(_add_sub_int_units)
_MULTIPLY_FLOAT_CHUNKS, _MULTIPLY_INT_CHUNKS = chunk_driver(_multiply_float_units), chunk_driver(_multiply_int_units)


@functools.cache
def _bodies(multiply: bool, dtype: type, is_float: bool) -> tuple:
    """``gang.shared_entry``'s (entry, helper) bodies of one element-wise kernel on ``dtype`` views."""
    if multiply and is_float:
        def scalars(block):
            return (native.real(block, _SCALARS),)
        units, chunks_of = _multiply_float_units, _MULTIPLY_FLOAT_CHUNKS
    elif multiply:
        def scalars(block):
            at = _SCALARS
            return (block[at], block[at + 1], block[at + 2], block[at + 3] != 0, block[at + 4] != 0, block[at + 5],
                    block[at + 6])
        units, chunks_of = _multiply_int_units, _MULTIPLY_INT_CHUNKS
    elif is_float:
        def scalars(block):
            return (block[_SCALARS] != 0,)
        units, chunks_of = _add_sub_float_units, _ADD_SUB_FLOAT_CHUNKS
    else:
        def scalars(block):
            at = _SCALARS
            return block[at] != 0, block[at + 1] != 0, block[at + 2], block[at + 3]
        units, chunks_of = _add_sub_int_units, _ADD_SUB_INT_CHUNKS
    read = jit.jitable(scalars)

    def lines(code, block, chunks, wait):
        args = (native.array(block, _A, dtype), native.array(block, _B, dtype), native.array(block, _O, dtype)) + \
            read(block)
        if chunks == 0:
            units(*args, 0, block[_UNITS])
        else:
            chunks_of(args, block[_UNITS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)
    return gang.shared_entry(kernel(lines), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _native_add_sub(dtype: type, is_float: bool, helper: bool = False) -> int:
    """Add or subtract (``helper``: a helper's part), its units shared with the gang's spinning helpers when large
    enough, else serially."""
    return jit.native(_bodies(False, dtype, is_float)[int(helper)])


@native.factory
def _native_multiply(dtype: type, is_float: bool, helper: bool = False) -> int:
    """Multiply, as :func:`_native_add_sub`."""
    return jit.native(_bodies(True, dtype, is_float)[int(helper)])


LINE = 1024
"""Values a unit holds about where the loop view is one line (``_outer_first``): the line is cut in lines of this
many, or of the length nearest it (half to twice it) that divides the line."""


def _line_length(n: int) -> int:
    """The length of the lines a contiguous line of ``n`` values is cut into: a divisor of ``n`` in ``[LINE // 2,
    2 * LINE]``, the nearest ``LINE``, multiples of the 16 lanes of a vector first; ``n`` where none is."""
    if n <= LINE:
        return n
    for step in (16, 1):
        for off in range(0, LINE + 1, step):
            for d in (LINE - off, LINE + off):
                if LINE // 2 <= d < n and n % d == 0:
                    return d
    return n


def _outer_first(view: np.ndarray) -> np.ndarray:
    """The 6-D loop view ``view`` with its outermost axis longer than 1 moved to axis 0 (the axes before it are 1s:
    the same elements in the same order), so that units of work are slices ``[u0:u1]`` of axis 0. A view of one
    line (a contiguous tensor, collapsed) is cut into lines (:func:`_line_length`) instead, or kept as one unit
    where its length has no divisor near ``LINE``: moving its only axis to the front would leave the innermost
    loop one value long, and the kernel then runs element by element (36 ns a value against 1.1 vectorized)."""
    k = next((i for i, n in enumerate(view.shape) if n > 1), 0)
    if k == view.ndim - 1:
        n, stride = view.shape[-1], view.strides[-1]
        length = _line_length(n)
        if length == n:
            return view
        shape = (n // length,) + (1,) * (view.ndim - 2) + (length,)
        strides = (length * stride,) + (0,) * (view.ndim - 2) + (stride,)
        return as_strided(view, shape, strides, writeable=view.flags.writeable)
    order = [k] + [i for i in range(view.ndim) if i != k]
    return as_strided(view, [view.shape[i] for i in order], [view.strides[i] for i in order],
                      writeable=view.flags.writeable)


def _entry(found: tuple[bool, tuple] | None, out: np.ndarray, multiply: bool) -> native.Entry | None:
    if found is None:
        return None
    is_float, arguments = found
    a, b, o = (_outer_first(v) for v in arguments[:3])
    task = gang.NativeTask(o.shape[0], _shares(out))
    # Unshared: zeros for the counters (never read) and the task's words, so that the block can be stamped.
    sharing = (native.as6(task.counters), *task.words()) if task.chunks else (0,) * (native.ARRAY_WORDS + 3)
    words, keep = native.pack(a, b, o, *sharing[:-3], o.shape[0], *sharing[-3:], *arguments[3:])
    dtype = out.dtype.type
    entry = (_native_multiply if multiply else _native_add_sub)(dtype, is_float)
    if task.chunks == 0:
        return native.Entry(entry, words, keep)
    helper = (_native_multiply if multiply else _native_add_sub)(dtype, is_float, True)
    return native.Entry(entry, words, keep + task.finish(helper, words))  # built afresh: counters of its own


def _shares(out: np.ndarray) -> bool:
    """Whether an entry writing ``out`` shares its units (part of its stamp's key: a shared entry is never
    stamped, so that each keeps chunk counters of its own)."""
    return isa.threads() > 1 and out.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK


def native_add_sub(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool,
                   subtract: bool) -> native.Entry | None:
    """:func:`add` (or :func:`subtract`) on these arrays as a native entry; None when empty.
    ValueError when an input overlaps the output other than as the very same view."""
    key = ("add_sub", bool(saturate), bool(subtract)) + (("shared",) if _shares(out) else ())
    return stamps.stamped(key, (in1, in2, out), lambda: _entry(
        _add_sub_operands(in1, in2, out, saturate, subtract, bound=True), out, False))


def native_multiply(in1: np.ndarray, in2: np.ndarray, scale: float, out: np.ndarray, saturate: bool,
                    nearest_even: bool, *, fpp1: int = 0, fpp2: int = 0, fpp_out: int = 0) -> native.Entry | None:
    """:func:`multiply` on these arrays as a native entry; None when empty (ValueError as :func:`native_add_sub`)."""
    def build() -> native.Entry | None:
        found = _multiply_operands(in1, in2, scale, out, saturate, nearest_even, fpp1, fpp2, fpp_out, bound=True)
        return _entry(found, out, True)
    key = ("multiply", float(scale), bool(saturate), bool(nearest_even), int(fpp1), int(fpp2), int(fpp_out)) + \
        (("shared",) if _shares(out) else ())
    return stamps.stamped(key, (in1, in2, out), build)
