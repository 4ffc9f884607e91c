"""Local response normalization (OpenVX NN vxLocalResponseNormalizationLayer).

Tensors are ``[W, H, C, *batch]`` (dims 0, 1, 2 = width, height, maps; up to
three batch dims). With ``h = size // 2`` and ``v`` the real value at
``(x, y, c)`` (``quantize``: exact dequantization, or float64 of a float32),
in float64::

    across maps:  window (x, y, k) for k = c-h .. c+h ascending,         n = size
    same map:     window (i, j, c) for j = y-h .. y+h ascending (outer),
                                   i = x-h .. x+h ascending (inner),     n = size * size
    s = 0.0, then s += w * w for each real w of the window, in that order
    d = pow(bias + (alpha / n) * s, beta)                              (C library pow)
    y = v / d

Positions outside the tensor are zero padding: their zero squares leave
``s`` unchanged, so they are skipped. ``alpha / n`` is rounded first, then
multiplied by ``s``, then ``bias`` added, then ``pow``. Every square is exact
(at most 48 significant bits); only the sum, the parameters' arithmetic,
``pow`` and the division round. The result is quantized once. IEEE rules
apply throughout: ``d == 0`` (``bias == 0`` and an all-zero window, or
``pow`` underflowing) divides to +-inf or NaN, and ``pow`` overflowing gives
``d = inf`` and ``y = 0``; alpha, beta and bias are not range-checked here.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..support import jit, native
from ..support.fixed_point import float32_value
from ..support.jit import kernel
from ..support.layout import detach, row_index
from .quantize import check_pair, plan, quantize

# Below this many window terms the serial kernel wins over waking the thread pool.
PARALLEL_WORK = 1 << 16
SIZES = (3, 5, 7)


def _lrn(x, out, across_maps, size, alpha_n, beta, bias, in_unit, scale, lo, hi, to_int):
    width, height, maps, n3, n4, n5 = out.shape
    h = size // 2
    rows = height * maps * n3 * n4 * n5
    for t in prange(rows):  # one output row (fixed y, c and batch index) per iteration, y fastest
        i5, i4, i3, c, y = row_index(t, n4, n3, maps, height)
        for i in range(width):
            s = 0.0
            if across_maps:
                for k in range(max(c - h, 0), min(c + h, maps - 1) + 1):
                    w = np.float64(x[i, y, k, i3, i4, i5]) / in_unit
                    s += w * w
            else:
                for jj in range(max(y - h, 0), min(y + h, height - 1) + 1):
                    for ii in range(max(i - h, 0), min(i + h, width - 1) + 1):
                        w = np.float64(x[ii, jj, c, i3, i4, i5]) / in_unit
                        s += w * w
            d = math.pow(bias + alpha_n * s, beta)
            v = np.float64(x[i, y, c, i3, i4, i5]) / in_unit
            out[i, y, c, i3, i4, i5] = quantize(v / d, scale, lo, hi, to_int)


_KERNELS = {p: kernel(_lrn, parallel=p, error_model="numpy") for p in (False, True)}


def local_response_normalization(x: np.ndarray, out: np.ndarray, across_maps: bool, size: int, alpha: float,
                                 beta: float, bias: float, *, fpp_in: int = 0, fpp_out: int = 0,
                                 parallel: bool | None = None) -> None:
    """``out = x / (bias + alpha / n * sum of squares) ** beta`` over the module's windows, in place.

    ``across_maps``: the window runs over ``size`` neighbouring maps, else
    over a ``size x size`` square in the same map. ``size`` is 3, 5 or 7.
    ``alpha``, ``beta``, ``bias`` are taken as float32 values (OpenVX passes
    vx_float32). ``x`` and ``out`` share dtype (uint8, int8, int16 or
    float32) and shape ``[W, H, C, *batch]`` (rank 3 to 6, any strides);
    ``out`` may overlap ``x`` (the input is then copied first). ``fpp_in``
    and ``fpp_out`` are the fixed point positions of integer tensors.
    ``parallel``: None chooses the thread pool for at least PARALLEL_WORK
    window terms; the result is the same either way.
    """
    found = _operands(x, out, across_maps, size, alpha, beta, bias, fpp_in, fpp_out, detach(out, x))
    if found is None:
        return
    x6, out6, arguments = found
    if parallel is None:
        parallel = out.size // out.shape[0] > 1 and out.size * (size if across_maps else size * size) >= PARALLEL_WORK
    with jit.thread_pool() as pool:
        function = jit.entry(_KERNELS[bool(parallel and pool)], jit.array_in(x6), jit.array_out(out6), jit.BOOL,
                             jit.INT, jit.FLOAT, jit.FLOAT, jit.FLOAT, jit.FLOAT, jit.FLOAT, jit.INT, jit.INT,
                             jit.BOOL)
        function(x6, out6, *arguments)


def _operands(x, out, across_maps, size, alpha, beta, bias, fpp_in, fpp_out, source) -> tuple | None:
    """(6-D input, 6-D output, the kernel's scalars) with ``source`` (``x`` or its copy) as the input; None when
    empty. ValueError for the arguments :func:`local_response_normalization` refuses."""
    check_pair(x, out)
    if x.ndim < 3:
        raise ValueError(f"tensor of rank {x.ndim} is not supported; expected [W, H, C, *batch], rank 3 to 6")
    if size not in SIZES:
        raise ValueError(f"normalization size {size} is not supported; expected 3, 5 or 7")
    if out.size == 0:
        return None
    n = size if across_maps else size * size
    pad = (None,) * (6 - x.ndim)
    return (source[(..., *pad)], out[(..., *pad)],
            (bool(across_maps), int(size), float32_value(alpha) / n, float32_value(beta), float32_value(bias),
             *plan(out.dtype, fpp_in, fpp_out).args()))


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
@native.factory
def _native_lrn(dtype: type) -> int:
    serial = _KERNELS[False]

    def entry(block):
        serial(native.array(block, 0, dtype), native.array(block, 13, dtype), block[26] != 0, block[27],
               native.real(block, 28), native.real(block, 29), native.real(block, 30), native.real(block, 31),
               native.real(block, 32), block[33], block[34], block[35] != 0)
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, out: np.ndarray, across_maps: bool, size: int, alpha: float, beta: float,
                 bias: float, *, fpp_in: int = 0, fpp_out: int = 0) -> native.Entry | None:
    """:func:`local_response_normalization` (serial) as a native entry; None when empty or when ``x`` overlaps
    ``out`` (a copy per run)."""
    if np.may_share_memory(out, x):
        return None
    found = _operands(x, out, across_maps, size, alpha, beta, bias, fpp_in, fpp_out, x)
    if found is None:
        return None
    x6, out6, arguments = found
    return native.Entry(_native_lrn(out.dtype.type), *native.pack(x6, out6, *arguments))
