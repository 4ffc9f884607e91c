"""Float32 convolution on NCHW planes as single-threaded OpenBLAS sgemm calls on tiles, shared between cores.

Per item and group the layer is ``W[O/g, K] x patches[K, H*W]`` (``K = C/g * kh * kw``). The product is cut
into tiles (units) of output rows or output pixels, and each unit is one ``cblas_sgemm`` called from numba
(the address of numpy's OpenBLAS entry, ``blas_threads.sgemm``) followed by the epilogue on the tile while it
is in cache: bias, residual, clip. The units are shared between the calling thread and the engine's helpers
(``float_sharing.Rows``), so a layer runs on both cores through the process's one thread budget, with
OpenBLAS itself pinned to one thread (``blas_threads.single``: its own threads thrash a loaded machine).

How a layer is cut, chosen once by :func:`bind`: splitting the pixels makes every unit pack the whole weight
matrix again (``M * K`` floats), splitting the rows makes every unit pack the patches again (``K * N``), so
the larger of the two dimensions is split.

- pixels: a 1x1 stride-1 window reads the input planes themselves (``ldb = H*W``); any other window builds
  its block of patches (im2col of the unit's pixels only, into the unit's scratch, a few hundred KB) right
  before its product;
- rows: the patches of the whole plane are built once per call on the calling thread (small planes only
  take this cut: it is cheap next to the product), then every unit multiplies its rows by them.

Arithmetic: OpenBLAS's float32 sums, as the NumPy ``matmul`` route of ``grouped_convolution`` (the
reference), then ``+ bias (+ residual)`` and the clip in float32.
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..engine import isa
from ..engine.chunk_loop import chunk_driver
from ..support import blas_threads, jit
from .chw_convolution import ROUTE_ENV
from .float_sharing import F32, PARALLEL_WORK, Rows

SCRATCH_FLOATS = 1 << 16
"""A unit's output tile and the patches it builds are at most this many floats where the cut allows (256 KB:
they stay in L2 from the product to the epilogue)."""
MIN_PIXELS = 64
"""Fewest output pixels of a unit when the pixels are split."""
MIN_ROWS = 16
"""Fewest output rows of a unit when the rows are split."""
PIXEL_UNITS_PER_THREAD = 2
"""Pixel blocks per thread of the budget at least (a helper the OS runs late leaves its share to the caller)."""
ROW_UNITS_PER_THREAD = 1
"""Row blocks per thread of the budget: every row block packs the layer's whole patches again, so no more."""

_ROW_MAJOR, _NO_TRANSPOSE = 101, 111


def _call_sgemm(wide: bool):
    def codegen(context, builder, signature, args):
        fn, m, n, k, a, lda, b, ldb, c, ldc = args
        i32, f32 = ir.IntType(32), ir.FloatType()
        blasint = ir.IntType(64 if wide else 32)
        ptr = f32.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, blasint, blasint, blasint, f32, ptr, blasint, ptr,
                                               blasint, f32, ptr, blasint])

        def count(v):
            return v if wide else builder.trunc(v, blasint)
        builder.call(builder.inttoptr(fn, fnty.as_pointer()),
                     [ir.Constant(i32, _ROW_MAJOR), ir.Constant(i32, _NO_TRANSPOSE), ir.Constant(i32, _NO_TRANSPOSE),
                      count(m), count(n), count(k), ir.Constant(f32, 1.0), builder.inttoptr(a, ptr), count(lda),
                      builder.inttoptr(b, ptr), count(ldb), ir.Constant(f32, 0.0), builder.inttoptr(c, ptr),
                      count(ldc)])
        return context.get_dummy_value()
    return codegen


@intrinsic
def _sgemm64(typingctx, fn, m, n, k, a, lda, b, ldb, c, ldc):
    """``C[m, n] = A[m, k] @ B[k, n]`` (row-major, leading dimensions given) by ``cblas_sgemm`` at address ``fn``
    with 64-bit integers; every argument an int64 (addresses of float32 data)."""
    return types.void(*(types.int64,) * 10), _call_sgemm(True)


@intrinsic
def _sgemm32(typingctx, fn, m, n, k, a, lda, b, ldb, c, ldc):
    """As ``_sgemm64`` for a ``cblas_sgemm`` with 32-bit integers."""
    return types.void(*(types.int64,) * 10), _call_sgemm(False)


def _edge(i, count, extent, align):
    """Where part ``i`` of ``count`` of ``[0, extent)`` begins (multiples of ``align``; the last ends at extent)."""
    if i >= count:
        return extent
    return min(extent, (extent * i // count + align // 2) // align * align)


def _patches(x, item, first, scratch, geometry, out_w, p0, p1):
    """``scratch[r * (p1 - p0) + j]`` = the patch value ``r = (c, ky, kx)`` (channel ``first + c``) of output
    pixel ``p0 + j`` of item ``item``; zeros off the input."""
    kh, kw, sy, sx, dy, dx, top, left = geometry[:8]
    height, width = x.shape[2], x.shape[3]
    taps = kh * kw
    n = p1 - p0
    k = scratch.size // n if n > 0 else 0
    for r in range(k):
        c, t = r // taps, r % taps
        ky, kx = t // kw, t % kw
        plane = x[item, first + c]
        shift = kx * dx - left
        lo = 0 if shift >= 0 else (-shift + sx - 1) // sx
        hi = (width - 1 - shift) // sx + 1 if width - 1 - shift >= 0 else 0
        base = r * n - p0
        p = p0
        while p < p1:
            oy = p // out_w
            ox0 = p - oy * out_w
            ox1 = min(out_w, ox0 + p1 - p)
            iy = oy * sy - top + ky * dy
            at = base + oy * out_w
            if iy < 0 or iy >= height:
                for ox in range(ox0, ox1):
                    scratch[at + ox] = 0.0
            else:
                line = plane[iy]
                a, z = max(ox0, min(lo, ox1)), max(ox0, min(hi, ox1))
                for ox in range(ox0, a):
                    scratch[at + ox] = 0.0
                for ox in range(a, z):  # unsigned indices: no wrap-around test per value (numba's, for negatives)
                    scratch[np.uint64(at + ox)] = line[np.uint64(ox * sx + shift)]
                for ox in range(max(a, z), ox1):
                    scratch[at + ox] = 0.0
            p += ox1 - ox0


_EDGE = jit.kernel(_edge)
_PATCHES = jit.kernel(_patches)


def _epilogue(outf, resf, item, o0, o1, p0, p1, bias, low, high, add):
    """``outf[item, o0:o1, p0:p1]`` = clip(itself + bias (+ resf's same tile when ``add``)); NaN stays NaN.
    Two loops, so the one without a residual has no branch on it; both run over slices from 0 (an index that
    may be negative gets numba's wrap-around test, which keeps LLVM from vectorizing: 5x slower)."""
    for o in range(o0, o1):
        line = outf[item, o, p0:p1]
        bo = bias[o]
        if add:
            extra = resf[item, o, p0:p1]
            for p in range(line.size):
                v = line[p] + bo + extra[p]
                if v < low:  # noqa: PLR1730 (comparisons: NaN passes through)
                    v = low
                if v > high:  # noqa: PLR1730
                    v = high
                line[p] = v
        else:
            for p in range(line.size):
                v = line[p] + bo
                if v < low:  # noqa: PLR1730
                    v = low
                if v > high:  # noqa: PLR1730
                    v = high
                line[p] = v


_EPILOGUE = jit.kernel(_epilogue)


def _units(x, w, bias, out, res, cols, geometry, low64, high64, add, u0, u1):
    """Units ``[u0, u1)`` (module doc); ``geometry`` = (kh, kw, sy, sx, dy, dx, top, left, groups, row units,
    pixel units, source, sgemm address, 64-bit integers); source 0: the input planes (1x1 stride 1), 1: the
    unit's own patches, 2: ``cols`` ([item * groups + group, K, pixels], built before the call)."""
    groups, row_units, pixel_units, source, fn, wide = geometry[8:14]
    low, high = np.float32(low64), np.float32(high64)
    c_in = x.shape[1]
    c_out, out_w = out.shape[1], out.shape[3]
    pixels = out.shape[2] * out_w
    og, k = w.shape[1], w.shape[2]
    cg = c_in // groups
    plane_in = x.shape[2] * x.shape[3]
    widest = 0
    if source == 1:
        for cb in range(pixel_units):
            widest = max(widest, _EDGE(cb + 1, pixel_units, pixels, 16) - _EDGE(cb, pixel_units, pixels, 16))
    scratch = np.empty(k * widest, np.float32)
    outf = out.reshape(out.shape[0], c_out, pixels)
    resf = res.reshape(res.shape[0], res.shape[1], res.shape[2] * res.shape[3])
    for u in range(u0, u1):
        cb = u % pixel_units
        rb = u // pixel_units % row_units
        group = u // (pixel_units * row_units) % groups
        item = u // (pixel_units * row_units * groups)
        p0, p1 = _EDGE(cb, pixel_units, pixels, 16), _EDGE(cb + 1, pixel_units, pixels, 16)
        r0, r1 = _EDGE(rb, row_units, og, 8), _EDGE(rb + 1, row_units, og, 8)
        if p1 <= p0 or r1 <= r0:
            continue
        if source == 0:
            b_at, ldb = x.ctypes.data + 4 * ((item * c_in + group * cg) * plane_in + p0), plane_in
        elif source == 1:
            _PATCHES(x, item, group * cg, scratch[:k * (p1 - p0)], geometry, out_w, p0, p1)
            b_at, ldb = scratch.ctypes.data, p1 - p0
        else:
            b_at, ldb = cols.ctypes.data + 4 * ((item * groups + group) * k * pixels + p0), pixels
        o0 = group * og + r0
        a_at = w.ctypes.data + 4 * ((group * og + r0) * k)
        c_at = out.ctypes.data + 4 * ((item * c_out + o0) * pixels + p0)
        if wide:
            _sgemm64(fn, r1 - r0, p1 - p0, k, a_at, k, b_at, ldb, c_at, pixels)
        else:
            _sgemm32(fn, r1 - r0, p1 - p0, k, a_at, k, b_at, ldb, c_at, pixels)
        _EPILOGUE(outf, resf, item, o0, o0 + r1 - r0, p0, p1, bias, low, high, add)


_UNITS = jit.kernel(_units)
_RUN_CHUNKS = chunk_driver(_UNITS)


def _shared(x, w, bias, out, res, cols, geometry, low64, high64, add, n_units, n_chunks, counters, wait):
    _RUN_CHUNKS((x, w, bias, out, res, cols, geometry, low64, high64, add), n_units, n_chunks, counters,
                wait)


_SHARED = jit.kernel(_shared)
_R1 = jit.types.Array(jit.types.float32, 1, "C", readonly=True)
_R3 = jit.types.Array(jit.types.float32, 3, "C", readonly=True)
_TYPES = (F32[4, False], _R3, _R1, F32[4, True], F32[4, False], F32[3, False], jit.types.UniTuple(jit.INT, 14),
          jit.FLOAT, jit.FLOAT, jit.BOOL)
_NONE = np.zeros((1, 1, 1), np.float32)
_NO_RESIDUAL = np.zeros((1, 1, 1, 1), np.float32)
for _a in (_NONE, _NO_RESIDUAL):
    _a.flags.writeable = False


def _readonly(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


def available() -> bool:
    """Whether this route takes the layers ``grouped_convolution`` sends to BLAS: numpy's BLAS is an OpenBLAS
    whose sgemm and thread count are found, and ``$OPENVX_NN_COREML_GEMM`` is not ``numpy`` (which keeps them
    on NumPy's matmul: the reference, and the before of a benchmark)."""
    return blas_threads.sgemm() is not None and os.environ.get(ROUTE_ENV, "").strip() != "numpy"


def pack(w: np.ndarray, groups: int) -> np.ndarray:
    """Weights ``[O, C/g, kh, kw]`` as the units read them: ``[g, O/g, C/g*kh*kw]`` float32, read-only."""
    packed = np.ascontiguousarray(w, np.float32).reshape(groups, w.shape[0] // groups, -1).copy()
    packed.flags.writeable = False
    return packed


def cut(items: int, groups: int, rows: int, pixels: int, k: int, patches: bool, threads: int) -> tuple[int, int]:
    """(row units, pixel units) per item and group (module doc) for a budget of ``threads``: one unit when the
    layer is too small to share; else, when there are at least as many pixels as rows, at least
    ``PIXEL_UNITS_PER_THREAD`` blocks of pixels per thread, more when a unit's output tile (and the ``patches``
    it builds) would pass ``SCRATCH_FLOATS``, each at least ``MIN_PIXELS``; else ``ROW_UNITS_PER_THREAD`` blocks
    of rows per thread, each at least ``MIN_ROWS``."""
    if items * groups * rows * pixels * k < PARALLEL_WORK:
        return 1, 1
    if pixels >= rows:
        share = max(1, -(-PIXEL_UNITS_PER_THREAD * threads // (items * groups)))
        block = max(MIN_PIXELS, SCRATCH_FLOATS // (rows + (k if patches else 0)))
        return 1, max(1, min(max(share, -(-pixels // block)), pixels // MIN_PIXELS))
    share = max(1, -(-ROW_UNITS_PER_THREAD * threads // (items * groups)))
    return max(1, min(share, rows // MIN_ROWS)), 1


def bind(x4: np.ndarray, packed: np.ndarray, bias: np.ndarray, out4: np.ndarray, residual4: np.ndarray | None,
         geometry: tuple[int, ...], clip: tuple[float, float]) -> Callable[[], None]:
    """A no-argument call computing ``out4 = clip(conv(x4) + bias (+ residual4))`` on C-contiguous float32
    NCHW arrays, with ``packed = pack(w, groups)`` and ``bias`` float32 ``[O]``; ``geometry`` = (kh, kw, sy, sx,
    dy, dx, top, left), the output extent fixed by ``out4``'s shape. Needs :func:`available`."""
    found = blas_threads.sgemm()
    if found is None:
        raise RuntimeError("numpy's BLAS has no cblas_sgemm this route can call: use grouped_convolution's route")
    kh, kw, sy, sx, dy, dx, top, left = (int(v) for v in geometry)
    n_items, c_in, height, width = x4.shape
    groups, og, k = packed.shape
    out_h, out_w = out4.shape[2], out4.shape[3]
    pixels = out_h * out_w
    direct = kh == kw == 1 and sy == sx == 1 and top == left == 0 and (out_h, out_w) == (height, width)
    row_units, pixel_units = cut(n_items, groups, og, pixels, k, not direct, isa.threads())
    source = 0 if direct else (1 if row_units == 1 else 2)
    cols = np.empty((n_items * groups, k, pixels), np.float32) if source == 2 else None
    full = (kh, kw, sy, sx, dy, dx, top, left, groups, row_units, pixel_units, source, found[0], int(found[1]))
    res = _NO_RESIDUAL if residual4 is None else residual4
    args = (x4, packed, bias, out4, res, _NONE if cols is None else _readonly(cols), full, float(clip[0]), float(clip[1]), residual4 is not None)
    rows = Rows(_UNITS, _SHARED, args, _TYPES, n_items * groups * row_units * pixel_units, out4.size * k)
    lanes = [(n, g * (c_in // groups), cols[n * groups + g].reshape(-1)) for n in range(n_items)
             for g in range(groups)] if source == 2 else []

    def call() -> None:
        with blas_threads.single():
            for n, first, block in lanes:
                _PATCHES(x4, n, first, block, full, out_w, 0, pixels)
            rows()
    return call
