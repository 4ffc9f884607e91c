"""Float32 softmax along one axis, vectorized: the one float32 softmax kernel (OpenVX's softmax layer, CoreML's
softmax and softmaxND, NNAPI's float32 SOFTMAX with its ``beta``).

For each row ``x_0 .. x_{n-1}`` (the values along the axis)::

    m   = the maximum (a NaN never replaces it)
    d_i = (x_i - m) * beta                split as hi + lo, hi = float32(d_i): for beta 1, x_i - m itself, hi the
                                          float32 difference and lo its exact error (TwoSum, in float32);
                                          otherwise in float64, then split
    e_i = exp(hi) * 2**64 * (1 + lo)      float32: float_activation's exp (2 ulps), scaled so that it stays normal
    s   = sum of e_i in float64
    y_i = float32(e_i * (1 / s))          one rounding

Tolerance (held by ``tests/kernels/test_float_softmax.py`` against a float64 NumPy reference):
``|y_i - softmax_i| <= RELATIVE * softmax_i + 2**-150`` (half the smallest subnormal: an output below the normal
range is rounded once, its ``e_i`` being normal). ``RELATIVE`` is ``2**-20`` (9.5e-7): exp's 2 ulps (``2**-22`` relative) in the numerator
and in the sum, the roundings of ``e_i`` and of ``y_i``, with room to spare. Special values follow the formula's
own IEEE result, as the float64 form does: a row holding a NaN or +inf, or only -inf, is NaN throughout; a -inf
beside a finite maximum gives 0. ``beta`` must be positive (NNAPI's rule), so that ``d_i <= 0``.

For beta 1 the split is exact: ``hi + lo`` is ``x_i - m``. It is the float64 split's bits wherever the float64
difference is exact (the exponents of ``x_i`` and ``m`` less than 29 apart); elsewhere ``lo`` differs by less
than ``2**-53 |d_i|``, within the bound, and ``e_i`` can differ only where ``e + e * lo`` lies that close to a
rounding boundary. The float32 form is five additions at sixteen lanes and runs in the exponentials' loop;
the float64 one (kept for other ``beta``) converts each value four times, and took as long as the exponentials.

Rows are ``[rows, n]`` C-contiguous views (other layouts through a copy per call); the maximum and the sum
are ``support/lane_reduction``'s vector loops (a fixed order, so fixed bits); for beta 1 the split
and the exponentials are one float32 loop, otherwise the float64 split and the float32 exponentials are separate
loops, each vectorized at its own type's full width. Large calls are shared
with the engine's helpers (``float_sharing.Rows``; ``gang.shared_entry`` from a native plan).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from ..support.lane_reduction import lane_reduction, larger, plus, value, widened
from ..support.vector_width import wide_vectors
from . import float_sharing
from .float_activation import exp32_scaled
from .float_sharing import Rows, at

RELATIVE = 2.0 ** -20
"""The relative error bound against the exact softmax (the module's text derives it)."""
COST_PER_VALUE = 16
"""An element's time in a convolution multiply-add's (``Rows`` weighs work in the latter)."""

_F32_ZERO = np.float32(0.0)
_SCALE = np.int32(64)  # e_i's power-of-two scale: terms down to 2**-190 stay normal (smaller ones round to 0 anyway)


_max8, _sum8 = lane_reduction(value, larger, "maximum"), lane_reduction(widened, plus, "sum")


@jit.inlined
def _row_max(row, n):
    """The maximum of ``row[:n]`` by the rule ``m = v if v > m``, in 32 lanes (a NaN never replaces one; the
    lanes keep the first of equal values, so their order of combination does not matter)."""
    return _max8(row, n, row[0], 0.0)


@jit.inlined
def row_sum(row, n):
    """The float64 sum of ``row[:n]`` in 32 partial sums (``lane_reduction``'s order)."""
    return _sum8(row, n, 0.0, 0.0)


@jit.inlined
def _softmax_row(row, o, low, n, beta):
    """One row by the module's formula in three loops: the float64 split (``o`` takes each ``hi``, ``low`` each
    ``lo``), the float32 exponentials ``e_i`` into ``o`` (apart from the float64 steps, so that LLVM runs them at
    the float32 width, 16 lanes on AVX-512, not the float64 one), their scaling by ``1 / s``. ``low`` holds ``n``
    values or more. Inlined into the row loop, so that its loops take the caller's vector width
    (``wide_vectors``)."""
    m = np.float64(_row_max(row, n))
    for k in range(n):
        d = (np.float64(row[k]) - m) * beta
        hi = np.float32(d)
        lo = np.float32(d - np.float64(hi))
        o[k] = hi
        low[k] = lo if abs(lo) < np.float32(1.0) else _F32_ZERO  # not finite where hi is not
    for k in range(n):
        e = exp32_scaled(o[k], _SCALE)
        o[k] = e + e * low[k]
    inv = 1.0 / row_sum(o, n)
    for k in range(n):
        o[k] = np.float32(np.float64(o[k]) * inv)


@jit.inlined
def _unit_softmax_row(row, o, n):
    """One row for ``beta`` 1, by the module's formula in one loop before the sum: ``hi = x - m`` in float32 and
    its exact error ``lo`` (Knuth's TwoSum, no fused operations), then ``e_i``, all at the float32 width."""
    mf = _row_max(row, n)
    for k in range(n):
        v = row[k]
        hi = v - mf
        t = hi - v
        lo = (v - (hi - t)) + (-mf - t)
        lo = lo if abs(lo) < np.float32(1.0) else _F32_ZERO  # not finite where hi is not
        e = exp32_scaled(hi, _SCALE)
        o[k] = e + e * lo
    inv = 1.0 / row_sum(o, n)
    for k in range(n):
        o[k] = np.float32(np.float64(o[k]) * inv)


@jit.kernel(error_model="numpy")
def _rows(x, out, beta, r0, r1):
    """Rows ``[r0, r1)`` of C-contiguous ``[rows, n]`` arrays (vectorized; rows without reference counts)."""
    wide_vectors()
    n = x.shape[1]
    if beta == 1.0:
        for r in range(r0, r1):
            _unit_softmax_row(native.row_of(x, r), native.row_of(out, r), n)
        return
    low = np.empty(n, np.float32)
    for r in range(r0, r1):
        _softmax_row(native.row_of(x, r), native.row_of(out, r), low, n, beta)


@jit.kernel(error_model="numpy")
def _lines(x, out, beta, r0, r1):
    """Rows ``[r0, r1)`` of ``[outer, n, inner]`` arrays of any strides (row ``t``: ``[t // inner, :, t % inner]``):
    the same operations as :func:`_rows`, element by element, so the same bits."""
    wide_vectors()
    n, inner = x.shape[1], x.shape[2]
    if beta == 1.0:
        for r in range(r0, r1):
            _unit_softmax_row(x[r // inner, :, r % inner], out[r // inner, :, r % inner], n)
        return
    low = np.empty(n, np.float32)
    for r in range(r0, r1):
        _softmax_row(x[r // inner, :, r % inner], out[r // inner, :, r % inner], low, n, beta)


def _sharing(rows):
    run_chunks = chunk_driver(rows)

    def shared(x, out, beta, n_rows, n_chunks, counters, wait):
        run_chunks((x, out, beta), n_rows, n_chunks, counters, wait)
    return jit.kernel(shared, error_model="numpy")


_rows_shared, _lines_shared = _sharing(_rows), _sharing(_lines)


def _merged(a: np.ndarray, order: list[int], shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` with axes in ``order`` as a view of ``shape``, or None when that needs a copy."""
    view = a.transpose(order).view()
    try:
        view.shape = shape
    except AttributeError:
        return None
    return view


class _Operands:
    """The rows of a call: ``[rows, n]`` C-contiguous views (``strided`` False), else ``[outer, n, inner]`` views
    of any strides, else buffers (``copy_in``, ``copy_out``: the copies each call then makes)."""

    def __init__(self, x: np.ndarray, out: np.ndarray, axis: int, beta: float):
        if not 0 <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for a tensor of rank {x.ndim}")
        if x.shape != out.shape or x.dtype != np.float32 or out.dtype != np.float32:
            raise ValueError(f"x {x.dtype}{list(x.shape)} and out {out.dtype}{list(out.shape)} must be float32 of one "
                             "shape")
        if not beta > 0:
            raise ValueError(f"beta {beta} must be positive")
        self.beta = float(beta)
        n = x.shape[axis]
        self.rows = x.size // n if n else 0
        step = abs(out.strides[axis])
        above = sorted((i for i in range(x.ndim) if i != axis and abs(out.strides[i]) >= step),
                       key=lambda i: -abs(out.strides[i]))
        below = sorted((i for i in range(x.ndim) if i != axis and abs(out.strides[i]) < step),
                       key=lambda i: -abs(out.strides[i]))
        order = [*above, axis, *below]
        inner = int(np.prod([x.shape[i] for i in below]))
        shape = (self.rows // inner if inner else 0, n, inner)
        self.copy_in = self.copy_out = None
        xs, outs = _merged(x, order, shape), _merged(out, order, shape)
        if outs is None:
            outs = np.empty(shape, np.float32)
            target = out.transpose(order)

            def copy_out() -> None:
                target[...] = outs.reshape(target.shape)
            self.copy_out = copy_out
        if xs is None or (np.may_share_memory(x, out) and (xs.ctypes.data != outs.ctypes.data
                                                            or xs.strides != outs.strides)):
            source, staged = x.transpose(order), np.empty(shape, np.float32)
            xs = staged

            def copy_in() -> None:
                staged.reshape(source.shape)[...] = source
            self.copy_in = copy_in
        self.strided = not (inner == 1 and xs.strides[1] == 4 and outs.strides[1] == 4
                            and xs.strides[0] == 4 * n and outs.strides[0] == 4 * n)
        self.x, self.out = (xs, outs) if self.strided else (xs.reshape(shape[:2]), outs.reshape(shape[:2]))


_ARG_TYPES = {False: (types.Array(types.float32, 2, "C", readonly=True), types.Array(types.float32, 2, "C"),
                      jit.FLOAT),
              True: (types.Array(types.float32, 3, "A", readonly=True), types.Array(types.float32, 3, "A"),
                     jit.FLOAT)}


def bind(x: np.ndarray, out: np.ndarray, axis: int, beta: float = 1.0) -> Callable[[], None]:
    """A no-argument call ``out = softmax(beta * x)`` along ``axis`` (a NumPy axis of ``x``) from ``x``'s current
    values; float32 arrays of one shape, any strides (``out`` may be ``x``); ``beta`` positive. Large calls are
    shared with the engine's helpers. ValueError names what does not fit."""
    o = _Operands(x, out, axis, beta)
    if o.rows == 0 or x.size == 0:
        return lambda: None
    kernels = (_lines, _lines_shared) if o.strided else (_rows, _rows_shared)
    rows = Rows(*kernels, (o.x, o.out, o.beta), _ARG_TYPES[o.strided], o.rows, x.size * COST_PER_VALUE)
    if o.copy_in is None and o.copy_out is None:
        return rows

    def call() -> None:
        if o.copy_in is not None:
            o.copy_in()
        rows()
        if o.copy_out is not None:
            o.copy_out()
    return call


def softmax(x: np.ndarray, out: np.ndarray, axis: int, beta: float = 1.0) -> None:
    """``bind(...)()``: one call."""
    bind(x, out, axis, beta)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT, _COUNTERS = at(0), at(1), at(2)
_BETA, _ROWS, _STRIDED, _MAILBOX, _TASK, _CHUNKS = range(at(3), at(3) + 6)


@jit.kernel(error_model="numpy")
def _block_rows(code, block, chunks, wait):
    """Every row of the call packed in ``block``: serially (``chunks`` 0), or in ``chunks`` chunks claimed with
    the helpers (``wait``: until every claimed one is done)."""
    beta, n_rows = native.real(block, _BETA), block[_ROWS]
    counters = native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0]
    if block[_STRIDED] == 0:
        x, out = native.c_array(block, _X, np.float32)[0, 0, 0, 0], native.c_array(block, _OUT, np.float32)[0, 0, 0, 0]
        if chunks == 0:
            _rows(x, out, beta, 0, n_rows)
        else:
            _rows_shared(x, out, beta, n_rows, chunks, counters, wait)
    else:
        xs, outs = native.array(block, _X, np.float32)[0, 0, 0], native.array(block, _OUT, np.float32)[0, 0, 0]
        if chunks == 0:
            _lines(xs, outs, beta, 0, n_rows)
        else:
            _lines_shared(xs, outs, beta, n_rows, chunks, counters, wait)


_BODIES = gang.shared_entry(_block_rows, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_entry, _helper = gang.makers(_BODIES, __name__)


def native_entry(x: np.ndarray, out: np.ndarray, axis: int, beta: float = 1.0) -> native.Entry | None:
    """:func:`bind` as a native entry (shared with the gang's helpers when large); None where an operand needs a
    copy per call (axes that do not merge into ``[outer, n, inner]``, or an output overlapping the input other
    than in place) or is empty."""
    o = _Operands(x, out, axis, beta)
    if o.copy_in is not None or o.copy_out is not None or o.rows == 0 or x.size == 0:
        return None
    lead = (1,) * (native.RANK - o.x.ndim)
    task = gang.NativeTask(o.rows, x.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = native.pack(o.x.reshape(lead + o.x.shape), o.out.reshape(lead + o.out.shape),
                              task.counters.reshape((1,) * (native.RANK - 1) + (2,)), o.beta, o.rows, int(o.strided),
                              *task.words())
    return native.Entry(_entry(), words, keep + task.finish(_helper(), words))
