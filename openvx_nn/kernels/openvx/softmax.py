"""Softmax layer (OpenVX NN vxSoftmaxLayer): normalized exponentials along one axis.

For each index of the other axes, with ``v_0 .. v_{n-1}`` the real inputs
along the axis (``quantize``: exact dequantization, or float64 of a float32),
in float64::

    m   = v_0, then v_i for each i = 1 .. n-1 with v_i > m   (the maximum)
    e_i = exp(v_i - m)                                         (C library exp)
    s   = 0.0 + e_0 + e_1 + ... + e_{n-1}                      (in this order)
    y_i = e_i / s

and ``y_i`` is quantized once. ``s >= 1`` (the maximum contributes
``exp(0) = 1``), so the division is safe, and ``exp`` never overflows. A row
holding a NaN or +inf, or only -inf, gives NaN throughout (0 in integer
tensors): the formula's own IEEE result, not a special case.

Float32 tensors run on ``frontend/float_softmax`` instead, the float32 softmax
every front end shares: the same formula with a vectorized float32 ``exp``,
within ``float_softmax.ULPS`` float32 steps of the exact result, the same
special values.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from ..frontend import float_softmax
from ..support import jit, native
from ..support.jit import kernel
from ..support.layout import detach, row_index
from .quantize import check_pair, plan, quantize

# Below this many elements the serial kernel wins over waking the thread pool.
PARALLEL_WORK = 1 << 15
# Row blocks per thread in the parallel kernel (each block allocates one buffer of e_i).
_BLOCKS_PER_THREAD = 4


def _softmax(x, out, blocks, in_unit, scale, lo, hi, to_int):
    n0, n1, n2, n3, n4, n = out.shape
    rows = n0 * n1 * n2 * n3 * n4
    for block in prange(blocks):
        e = np.empty(n, np.float64)
        for t in range(block * rows // blocks, (block + 1) * rows // blocks):
            i0, i1, i2, i3, i4 = row_index(t, n1, n2, n3, n4)
            m = np.float64(x[i0, i1, i2, i3, i4, 0]) / in_unit
            for k in range(1, n):
                v = np.float64(x[i0, i1, i2, i3, i4, k]) / in_unit
                if v > m:  # noqa: PLR1730 - the pinned rule, spelled out (NaN never replaces m)
                    m = v
            s = 0.0
            for k in range(n):
                e[k] = math.exp(np.float64(x[i0, i1, i2, i3, i4, k]) / in_unit - m)
                s += e[k]
            for k in range(n):
                out[i0, i1, i2, i3, i4, k] = quantize(e[k] / s, scale, lo, hi, to_int)


_KERNELS = {p: kernel(_softmax, parallel=p, error_model="numpy") for p in (False, True)}


def _rows_along(array: np.ndarray, order: list[int]) -> np.ndarray:
    """``array`` with axes in ``order`` (the softmax axis last), padded to 6-D with leading length-1 axes."""
    view = array.transpose(order)
    return view[(None,) * (6 - view.ndim)]


def softmax(x: np.ndarray, out: np.ndarray, axis: int, *, fpp_in: int = 0, fpp_out: int = 0,
            parallel: bool | None = None) -> None:
    """``out = softmax(x)`` along ``axis`` (OpenVX dim index), in place, per the module's expressions.

    ``x`` and ``out`` share dtype (uint8, int8, int16 or float32) and shape
    (rank 1 to 6, any strides); ``out`` may be ``x`` itself. ``fpp_in`` and
    ``fpp_out`` are the fixed point positions of integer tensors. The caller
    picks ``axis`` (OpenVX's rule by rank). ``parallel``: None chooses the
    thread pool for at least PARALLEL_WORK elements; the result is the same
    either way. Float32 tensors: ``float_softmax`` (its tolerance).
    """
    check_pair(x, out)
    if x.dtype == np.float32:
        float_softmax.softmax(x, out, axis)
        return
    found = _operands(x, out, axis, detach(out, x, True))  # each row is read whole before it is written
    if found is None:
        return
    x6, out6 = found
    rows = out.size // out.shape[axis]
    if parallel is None:
        parallel = rows > 1 and out.size >= PARALLEL_WORK
    with jit.thread_pool() as pool:
        parallel = bool(parallel and pool)
        blocks = min(rows, _BLOCKS_PER_THREAD * numba.get_num_threads()) if parallel else 1
        function = jit.entry(_KERNELS[parallel], jit.array_in(x6), jit.array_out(out6), jit.INT, jit.FLOAT,
                             jit.FLOAT, jit.INT, jit.INT, jit.BOOL)
        function(x6, out6, blocks, *plan(out.dtype, fpp_in, fpp_out).args())


def _operands(x: np.ndarray, out: np.ndarray, axis: int, source: np.ndarray) -> tuple | None:
    """The 6-D rows of ``source`` (``x`` or its copy) and ``out`` along ``axis``; None when empty."""
    check_pair(x, out)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for a tensor of rank {x.ndim}")
    if out.size == 0:
        return None
    # Outer rows in order of decreasing output stride, so consecutive rows are close in memory.
    others = sorted((i for i in range(x.ndim) if i != axis), key=lambda i: -abs(out.strides[i]))
    order = [*others, axis]
    return _rows_along(source, order), _rows_along(out, order)


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
_softmax_serial = _KERNELS[False]


@native.factory
def _native_softmax(dtype: type) -> int:
    def entry(block):
        _softmax_serial(native.array(block, 0, dtype), native.array(block, 13, dtype), 1, native.real(block, 26),
                        native.real(block, 27), block[28], block[29], block[30] != 0)
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, out: np.ndarray, axis: int, *, fpp_in: int = 0,
                 fpp_out: int = 0) -> native.Entry | None:
    """:func:`softmax` (serial) as a native entry; None when empty or when ``x`` overlaps ``out`` other
    than as the very same array (it would need a copy per run)."""
    check_pair(x, out)
    if x.dtype == np.float32:
        return float_softmax.native_entry(x, out, axis)
    if detach(out, x, True) is not x:
        return None
    found = _operands(x, out, axis, x)
    if found is None:
        return None
    return native.Entry(_native_softmax(out.dtype.type),
                        *native.pack(*found, *plan(out.dtype, fpp_in, fpp_out).args()))
