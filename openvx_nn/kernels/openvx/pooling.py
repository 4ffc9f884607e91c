"""Max and average pooling (OpenVX NN vxPoolingLayer).

Layout. ``x`` has dims ``[W, H, C, *batch]`` (3 to 6 dims) and ``out``
``[OW, OH, C, *batch]``; every plane (channel and batch index) is pooled on
its own. The window of output ``(ox, oy)`` covers the input columns
``ox * stride_x - pad_x`` to ``ox * stride_x - pad_x + size_x - 1`` and the
rows likewise; the caller chooses ``OW`` and ``OH`` (the output size rule
belongs to graph verification), and a window may hang past the input or lie
wholly in the padding.

Max. The largest raw value over the window positions inside the input;
padded positions take no part, and a window with no position inside gives 0.
float32 follows ``window_max.larger`` (NaN propagates, +0.0 beats -0.0).

Average. The sum over the positions inside the input divided by the full
window size ``size_x * size_y`` (padding counts as zeros). Integers: the sum
is exact in int64 and divided with rounding to nearest, ties to even
(``_round_mean``); the mean of in-range values and zeros is in range, so no
saturation is ever needed. Exactness bound: a window holds at most
``min(W * H, size_x * size_y)`` inside values of at most ``2**15`` each, so
``|sum| <= area * 2**15``; the dispatcher refuses sizes, strides, paddings and
output widths and heights of ``2**31`` or more, which keeps window bounds
inside int64 and the area below ``2**62``, and the sum, at most
``W * H * 2**15``, is below ``2**62`` for any input with fewer than ``2**47``
elements per plane.

float32. Max and average run on the plane kernel of ``frontend.chw_pooling`` (the one CoreML's max pool runs
on), its planes shared with the engine's helper threads, with a native entry that shares them too; tensors
whose memory is not OpenVX's own order (C-ordered planes ``[plane, H, W]``) are copied into planes and back.
A tensor the plan laid out channels-last (``core.rewrites``) is pooled as it is, on ``chw_pooling.pool_pixels``
(the same runs: the same bytes as on planes, its output rows shared with the helpers); a planar side of such a
layer converts once (:func:`bind_channels_last`). The
average's sum is float32 in the order ``chw_pooling`` states (each window column top to bottom, then the
columns left to right, then divided by ``size_x * size_y``): within 1e-5 of the window's sum of magnitudes over
its area. With ``$OPENVX_NN_F32_SUMS`` set to ``float64`` (``float_layers.chosen``) the average keeps the exact
route instead: the float64 sum from 0.0 in row-major window order (rows outer, columns inner, padded positions
skipped), divided by ``float64(size_x * size_y)``, cast to float32 once. Maxima are exact on every route.

Same fixed point position in and out: pooling never rescales.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import prange

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..frontend import chw_pooling, float_sharing
from ..support import jit, native
from ..support.jit import kernel
from ..support.layout import RANK, detach
from . import float_layers
from .integer_pooling import MAX_PLANES
from .matmul import PARALLEL_WORK
from .pool_window import inside
from .window_max import larger

DTYPES = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.float32))

# Sizes, strides, paddings and output widths and heights stay below this, so window bounds (at most
# ``OW * stride + size < 2**62 + 2**31``) fit int64 and the window area stays below 2**62.
LIMIT = 1 << 31


@kernel
def _round_mean(total, area, inverse):
    """``total / area`` rounded to nearest, ties to even, exactly; ``inverse = 1.0 / area``.

    Needs ``0 < area`` and ``|total| <= area * 2**15 < 2**62`` (a window holds
    at most ``area`` values of at most ``2**15`` in magnitude). The float
    quotient then carries three roundings, a relative error below ``2**-51``,
    so it is within ``2**-36`` of the exact one and its floor is off by at
    most one, which one correction each way repairs (they fire only for
    totals beyond ``2**53``). Branch-free: the rounding of random data is
    unpredictable, and an integer division costs more than all of this.
    """
    q = np.int64(np.floor(np.float64(total) * inverse))
    r = total - q * area
    below = np.int64(r < 0)
    q -= below
    r += below * area
    above = np.int64(r >= area)
    q += above
    r -= above * area
    twice = 2 * r
    return q + np.int64((twice > area) | ((twice == area) & ((q & 1) == 1)))


# Integer windows and float max windows are reduced in two passes per output row: first down the
# window's rows for every input column (contiguous in OpenVX order, so it vectorizes), then across
# each window's columns. The first pass covers every input column, used or not, so with strides
# larger than the window the extra work is bounded by one read of the input row per window row.

def _max_pool(x, out, size_x, size_y, pad_x, pad_y, stride_x, stride_y):
    width, height, n_c, n_b1, n_b2, n_b3 = x.shape
    out_w, out_h = out.shape[0], out.shape[1]
    n_planes = n_c * n_b1 * n_b2 * n_b3
    scratch = np.empty((n_planes, width), x.dtype)  # one row per plane: nothing allocated inside prange
    for plane in prange(n_planes):
        c, rest = plane % n_c, plane // n_c
        b1, rest = rest % n_b1, rest // n_b1
        b2, b3 = rest % n_b2, rest // n_b2
        src = x[:, :, c, b1, b2, b3]
        dst = out[:, :, c, b1, b2, b3]
        column_max = scratch[plane]
        for oy in range(out_h):
            y_start, y_stop = inside(oy, stride_y, pad_y, size_y, height)
            if y_start >= y_stop:
                for ox in range(out_w):
                    dst[ox, oy] = 0
                continue
            for xi in range(width):
                column_max[xi] = src[xi, y_start]
            for y in range(y_start + 1, y_stop):
                for xi in range(width):
                    column_max[xi] = larger(column_max[xi], src[xi, y])
            for ox in range(out_w):
                x_start, x_stop = inside(ox, stride_x, pad_x, size_x, width)
                if x_start >= x_stop:
                    dst[ox, oy] = 0
                    continue
                m = column_max[x_start]
                for xi in range(x_start + 1, x_stop):
                    m = larger(m, column_max[xi])
                dst[ox, oy] = m


def _max_pool_2x2(x, out, size_x, size_y, pad_x, pad_y, stride_x, stride_y):
    # 2x2 windows all inside the input (no padding reached: :func:`_inside_2x2`), the usual CNN pooling:
    # each output is the larger of two column pairs, read from plane views (2-D indexing: the 6-D one
    # costs six multiplies a load).
    n_c, n_b1, n_b2, n_b3 = x.shape[2], x.shape[3], x.shape[4], x.shape[5]
    out_w, out_h = out.shape[0], out.shape[1]
    for plane in prange(n_c * n_b1 * n_b2 * n_b3):
        c, rest = plane % n_c, plane // n_c
        b1, rest = rest % n_b1, rest // n_b1
        b2, b3 = rest % n_b2, rest // n_b2
        src = x[:, :, c, b1, b2, b3]
        dst = out[:, :, c, b1, b2, b3]
        for oy in range(out_h):
            y = oy * stride_y
            for ox in range(out_w):
                xi = ox * stride_x
                dst[ox, oy] = larger(larger(src[xi, y], src[xi + 1, y]), larger(src[xi, y + 1], src[xi + 1, y + 1]))


def _max_pool_2x2_planes(x, out, size_x, size_y, pad_x, pad_y, stride_x, stride_y):
    # ``_max_pool_2x2`` on C-ordered planes [plane, H, W] (the transposes of F-ordered OpenVX tensors): unit-stride
    # rows, which LLVM vectorizes; the same comparisons in the same order, so the same results.
    # Indexed in place, not through row views: a view per row costs reference counting, which was most of the
    # time of a small layer's short rows.
    n_planes, out_h, out_w = out.shape
    for plane in prange(n_planes):
        for oy in range(out_h):
            t, b = oy * stride_y, oy * stride_y + 1
            if stride_x == 2:  # the usual stride, as a constant: the loads become shuffles of whole vectors
                for ox in range(out_w):
                    out[plane, oy, ox] = larger(larger(x[plane, t, 2 * ox], x[plane, t, 2 * ox + 1]),
                                                larger(x[plane, b, 2 * ox], x[plane, b, 2 * ox + 1]))
                continue
            for ox in range(out_w):
                xi = ox * stride_x
                out[plane, oy, ox] = larger(larger(x[plane, t, xi], x[plane, t, xi + 1]),
                                            larger(x[plane, b, xi], x[plane, b, xi + 1]))


def planes(a: np.ndarray) -> np.ndarray | None:
    """An F-ordered ``a`` [W, H, *rest] as C-ordered planes [prod(rest), H, W] (a view); None if not F-ordered."""
    if not a.flags.f_contiguous:
        return None
    return a.T.reshape(-1, a.shape[1], a.shape[0])


def _inside_2x2(x_shape, out_shape, size_x: int, size_y: int, pad_x: int, pad_y: int, stride_x: int,
                stride_y: int) -> bool:
    """Whether every window is 2x2 and wholly inside the input (``_max_pool_2x2`` applies)."""
    return (size_x == size_y == 2 and pad_x == pad_y == 0 and (out_shape[0] - 1) * stride_x + 2 <= x_shape[0]
            and (out_shape[1] - 1) * stride_y + 2 <= x_shape[1])


def _average_pool_int(x, out, size_x, size_y, pad_x, pad_y, stride_x, stride_y):
    width, height, n_c, n_b1, n_b2, n_b3 = x.shape
    out_w, out_h = out.shape[0], out.shape[1]
    area = np.int64(size_x) * np.int64(size_y)
    inverse = 1.0 / np.float64(area)
    n_planes = n_c * n_b1 * n_b2 * n_b3
    scratch = np.empty((n_planes, width), np.int64)
    for plane in prange(n_planes):
        c, rest = plane % n_c, plane // n_c
        b1, rest = rest % n_b1, rest // n_b1
        b2, b3 = rest % n_b2, rest // n_b2
        src = x[:, :, c, b1, b2, b3]
        dst = out[:, :, c, b1, b2, b3]
        column_sum = scratch[plane]
        for oy in range(out_h):
            y_start, y_stop = inside(oy, stride_y, pad_y, size_y, height)
            for xi in range(width):
                column_sum[xi] = 0
            for y in range(y_start, y_stop):
                for xi in range(width):
                    column_sum[xi] += np.int64(src[xi, y])
            for ox in range(out_w):
                x_start, x_stop = inside(ox, stride_x, pad_x, size_x, width)
                total = np.int64(0)
                for xi in range(x_start, x_stop):
                    total += column_sum[xi]
                dst[ox, oy] = _round_mean(total, area, inverse)


def _average_pool_float(x, out, size_x, size_y, pad_x, pad_y, stride_x, stride_y):
    width, height, n_c, n_b1, n_b2, n_b3 = x.shape
    out_w, out_h = out.shape[0], out.shape[1]
    area = np.float64(size_x * size_y)
    for plane in prange(n_c * n_b1 * n_b2 * n_b3):
        c, rest = plane % n_c, plane // n_c
        b1, rest = rest % n_b1, rest // n_b1
        b2, b3 = rest % n_b2, rest // n_b2
        src = x[:, :, c, b1, b2, b3]
        dst = out[:, :, c, b1, b2, b3]
        for oy in range(out_h):
            y_start, y_stop = inside(oy, stride_y, pad_y, size_y, height)
            for ox in range(out_w):
                x_start, x_stop = inside(ox, stride_x, pad_x, size_x, width)
                total = 0.0
                for y in range(y_start, y_stop):
                    for xi in range(x_start, x_stop):
                        total += np.float64(src[xi, y])
                dst[ox, oy] = np.float32(total / area)


_KERNELS = {(kind, parallel): kernel(function, parallel=parallel)
            for kind, function in (("max", _max_pool), ("max_2x2", _max_pool_2x2),
                                   ("max_2x2_planes", _max_pool_2x2_planes), ("average_int", _average_pool_int),
                                   ("average_float", _average_pool_float))
            for parallel in (False, True)}
_KERNELS.update({("max_planes", parallel): found for parallel, found in MAX_PLANES.items()})


def _as_rank6(a: np.ndarray) -> np.ndarray:
    """``a`` with trailing length-1 axes up to rank 6 (a view, whatever the strides)."""
    return a[(...,) + (None,) * (RANK - a.ndim)]


def pooling(x: np.ndarray, out: np.ndarray, max_pool: bool, size_x: int, size_y: int, pad_x: int, pad_y: int,
            stride_x: int, stride_y: int, *, parallel: bool | None = None) -> None:
    """Max (``max_pool``) or average pooling of ``x`` ``[W, H, C, *batch]`` into ``out`` ``[OW, OH, C, *batch]``.

    Windows and arithmetic as in the module doc; in place. ``parallel`` (the
    integer and exact float64 kernels): None spreads the planes over the thread
    pool from ``PARALLEL_WORK`` window elements on (when another thread's
    parallel kernel holds it, the serial kernel runs); the result is the same
    either way. float32 on the plane kernel shares its planes with the engine's
    helpers by the layer's size, whatever ``parallel`` says. Raises ValueError for
    ranks outside 3..6, planes that differ between ``x`` and ``out``, mixed
    or unsupported dtypes, sizes or strides below 1, negative padding, and
    sizes, strides, paddings or output widths or heights of ``2**31`` or more.
    """
    if x.dtype != out.dtype or out.dtype not in DTYPES:
        raise ValueError(f"pooling needs one dtype among {[str(d) for d in DTYPES]} for x and out, "
                         f"got {x.dtype} and {out.dtype}")
    if not 3 <= x.ndim <= RANK or out.ndim != x.ndim or out.shape[2:] != x.shape[2:]:
        raise ValueError(f"pooling of x {x.shape} cannot fill out {out.shape}; expected 3 to {RANK} dims "
                         f"with the same dims after the first two")
    if min(size_x, size_y, stride_x, stride_y) < 1 or min(pad_x, pad_y) < 0:
        raise ValueError(f"pooling sizes ({size_x}, {size_y}) and strides ({stride_x}, {stride_y}) must be "
                         f"at least 1 and paddings ({pad_x}, {pad_y}) at least 0")
    if max(size_x, size_y, stride_x, stride_y, pad_x, pad_y, out.shape[0], out.shape[1]) >= LIMIT:
        raise ValueError(f"pooling sizes ({size_x}, {size_y}), strides ({stride_x}, {stride_y}), paddings "
                         f"({pad_x}, {pad_y}) and output size {out.shape[:2]} must be below 2**31")
    prepare(detach(out, x), out, max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y, parallel=parallel)()


def prepare(x: np.ndarray, out: np.ndarray, max_pool: bool, size_x: int, size_y: int, pad_x: int, pad_y: int,
            stride_x: int, stride_y: int, *, parallel: bool | None = None) -> Callable[[], None]:
    """:func:`pooling` with the kernel, its views and the thread-pool choice resolved once: the runner only
    runs the kernel.  The arguments are :func:`pooling`'s, already checked; ``x`` must not overlap ``out``
    (see ``detach``)."""
    found = _operands(x, out, max_pool, x, (size_x, size_y, pad_x, pad_y, stride_x, stride_y))
    if found is None:
        return _nothing
    if _on_planes(out, max_pool):
        return _bind_float(x, out, float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y))
    kind, src, dst = found
    if parallel is None:
        n_planes = out.size // (out.shape[0] * out.shape[1])
        parallel = n_planes > 1 and out.size * size_x * size_y >= PARALLEL_WORK
    layout = "C" if kind in ("max_2x2_planes", "max_planes") else "A"
    types = (jit.array_in(src, layout), jit.array_out(dst, layout), *(jit.INT,) * 6)
    serial = functools.partial(jit.entry(_KERNELS[kind, False], *types), src, dst, size_x, size_y, pad_x, pad_y,
                               stride_x, stride_y)
    if not parallel:
        return serial
    shared = functools.partial(jit.entry(_KERNELS[kind, True], *types), src, dst, size_x, size_y, pad_x, pad_y,
                               stride_x, stride_y)

    def run() -> None:
        with jit.thread_pool() as pool:
            (shared if pool else serial)()

    return run


def _nothing() -> None:
    pass


# -- float32 on planes, shared with the helpers (module doc) ---------------------------------------------
@kernel
def float_planes(x, out, average, kh, kw, sy, sx, top, left, p0, p1):
    """Planes ``[p0, p1)`` of the float32 pool (max: empty windows give 0.0, as ``_max_pool``); on binary16 planes
    (uint16 bits) too, which the plane kernel widens as it reads and narrows as it writes (``float16_layers``)."""
    chw_pooling.pool_planes(x, out, average, kh, kw, sy, sx, top, left, np.float32(0.0), p0, p1)


float_shares = chunk_driver(float_planes)


@kernel
def float_planes_shared(x, out, average, kh, kw, sy, sx, top, left, n_planes, n_chunks, counters, wait):
    float_shares((x, out, average, kh, kw, sy, sx, top, left), n_planes, n_chunks, counters, wait)


_F3_IN = jit.types.Array(jit.types.float32, 3, "C", readonly=True)
_F3_OUT = jit.types.Array(jit.types.float32, 3, "C")
_FLOAT_TYPES = (_F3_IN, _F3_OUT, jit.BOOL, *(jit.INT,) * 6)
COST_PER_TAP = 4
"""A window position's cost in a convolution multiply-add's time (the sharing thresholds weigh work in those)."""


def _on_planes(out: np.ndarray, max_pool: bool) -> bool:
    """Whether a float32 layer runs on the plane kernel: max always, average unless the exact float64 sums are
    chosen (``$OPENVX_NN_F32_SUMS``)."""
    return out.dtype == np.float32 and (max_pool or float_layers.chosen())


def _float_operands(x: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(input planes read-only, output planes) of float32 ``x`` and ``out`` when both are OpenVX-ordered and
    apart, else None."""
    if out.dtype != np.float32 or x.dtype != np.float32 or x.size == 0 or out.size == 0:
        return None
    src, dst = planes(x), planes(out)
    if src is None or dst is None or np.may_share_memory(src, dst):
        return None
    src = src.view()
    src.flags.writeable = False
    return src, dst


def _plane_shape(a: np.ndarray) -> tuple[int, int, int]:
    return (a.size // (a.shape[0] * a.shape[1]), a.shape[1], a.shape[0])


def float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y) -> tuple:
    """The plane kernel's window arguments after the arrays: (average, kh, kw, sy, sx, top, left)."""
    return (not max_pool, int(size_y), int(size_x), int(stride_y), int(stride_x), int(pad_y), int(pad_x))


def _bind_float(x: np.ndarray, out: np.ndarray, geometry: tuple) -> Callable[[], None]:
    """The float32 pool of ``x`` into ``out`` on planes, through plane copies of either when its memory is not
    OpenVX's own order."""
    src, dst = planes(x), planes(out)
    staged_in = src is None
    if staged_in:
        src = np.empty(_plane_shape(x), np.float32)
    else:
        src = src.view()
        src.flags.writeable = False
    target = dst if dst is not None else np.empty(_plane_shape(out), np.float32)
    work = target.size * geometry[1] * geometry[2] * COST_PER_TAP
    rows = float_sharing.Rows(float_planes, float_planes_shared, (src, target) + geometry, _FLOAT_TYPES,
                              target.shape[0], work)
    if not staged_in and dst is not None:
        return rows

    def call() -> None:
        if staged_in:
            src.flags.writeable = True
            src[...] = x.T.reshape(src.shape)
            src.flags.writeable = False
        rows()
        if dst is None:
            out.T[...] = target.reshape(out.T.shape)
    return call


_X, _OUT, _COUNTERS = float_sharing.at(0), float_sharing.at(1), float_sharing.at(2)
_AVERAGE, _KH, _KW, _SY, _SX, _TOP, _LEFT, _MAILBOX, _TASK, _CHUNKS = range(float_sharing.at(3), float_sharing.at(3) + 10)


def plane_bodies(planes, shares, dtype, pixels: bool = False) -> tuple:
    """``gang.shared_entry``'s bodies (entry, helper) of a pool on planes of ``dtype``: every plane serially, or
    in chunks claimed with the helpers; ``planes`` is the plane kernel, ``shares`` its ``chunk_driver``; the block
    is :func:`native_planes`'. ``pixels``: the arrays are channels-last ``[N, H, W, C]`` and the units are output
    rows (:func:`chw_pooling.pool_pixels`)."""

    def lines(code, block, chunks, wait):
        if pixels:
            x, out = native.c_array(block, _X, dtype)[0, 0], native.c_array(block, _OUT, dtype)[0, 0]
            units = out.shape[0] * out.shape[1]
        else:
            x, out = native.c_array(block, _X, dtype)[0, 0, 0], native.c_array(block, _OUT, dtype)[0, 0, 0]
            units = out.shape[0]
        args = (x, out, block[_AVERAGE] != 0, block[_KH], block[_KW], block[_SY], block[_SX], block[_TOP],
                block[_LEFT])
        if chunks == 0:
            planes(*args, 0, units)
        else:
            shares(args, units, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)
    return gang.shared_entry(kernel(lines), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@functools.cache
def _float_bodies(dtype: type) -> tuple:
    return plane_bodies(float_planes, float_shares, dtype)


@native.factory
def plane_entry(dtype: type) -> int:
    """The float32 pool on planes of ``dtype`` (float32, or uint16: binary16 bits, ``float16_layers``), its planes
    shared with the gang's spinning helpers when large enough, else serially."""
    return jit.native(_float_bodies(dtype)[0])


@native.factory
def plane_helper(dtype: type) -> int:
    return jit.native(_float_bodies(dtype)[1])


def native_planes(src: np.ndarray, dst: np.ndarray, geometry: tuple, entry: int, helper: int) -> native.Entry:
    """The native entry of a pool on planes ``src`` into ``dst`` (C-ordered ``[P, H, W]``, or channels-last
    ``[N, H, W, C]`` for pixel bodies) whose bodies are ``entry`` and ``helper`` (:func:`plane_bodies`); its
    planes (rows) are shared when the layer is large enough."""
    work = dst.size * geometry[1] * geometry[2] * COST_PER_TAP
    units = dst.shape[0] * (dst.shape[1] if dst.ndim == 4 else 1)
    task = gang.NativeTask(units, work >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = float_sharing.block_of(src, dst, task.counters, int(geometry[0]), *geometry[1:], *task.words())
    return native.Entry(entry, words, keep + task.finish(helper, words))


def _native_float(src: np.ndarray, dst: np.ndarray, geometry: tuple) -> native.Entry:
    return native_planes(src, dst, geometry, plane_entry(np.float32), plane_helper(np.float32))


# -- float32 on channels-last tensors the plan laid out (the plane kernel's arithmetic on pixels) ----------------
@kernel
def _float_pixels(x, out, average, kh, kw, sy, sx, top, left, r0, r1):
    """Output rows ``[r0, r1)`` of the float32 pool on ``[N, H, W, C]`` (empty windows give 0.0, as on planes)."""
    chw_pooling.pool_pixels(x, out, average, kh, kw, sy, sx, top, left, np.float32(0.0), r0, r1)


_pixel_shares = chunk_driver(_float_pixels)


@kernel
def _float_pixels_shared(x, out, average, kh, kw, sy, sx, top, left, n_rows, n_chunks, counters, wait):
    _pixel_shares((x, out, average, kh, kw, sy, sx, top, left), n_rows, n_chunks, counters, wait)


_F4_IN = jit.types.Array(jit.types.float32, 4, "C", readonly=True)
_F4_OUT = jit.types.Array(jit.types.float32, 4, "C")
_PIXEL_TYPES = (_F4_IN, _F4_OUT, jit.BOOL, *(jit.INT,) * 6)
_PIXEL_BODIES = plane_bodies(_float_pixels, _pixel_shares, np.float32, pixels=True)


@native.factory
def _pixel_entry() -> int:
    """The float32 pool on channels-last tensors, its rows shared with the gang's helpers when large enough."""
    return jit.native(_PIXEL_BODIES[0])


@native.factory
def _pixel_helper() -> int:
    return jit.native(_PIXEL_BODIES[1])


def _pixel_sides(x: np.ndarray, out: np.ndarray, layouts: tuple[bool, bool]):
    """(input pixels read-only, output pixels, the output's planes or None): the ``[N, H, W, C]`` views of the
    channels-last sides; a planar input is pooled on planes instead (``None`` pixels: the caller pools planes and
    converts the result), a planar output gets a scratch of pixels converted into its planes after each run."""
    from .float_layers import pixels
    src = pixels(x) if layouts[0] else None
    if src is not None:
        src = src.view()
        src.flags.writeable = False
    if layouts[1]:
        return src, pixels(out), None
    n, c = int(np.prod(out.shape[3:], dtype=np.int64)), out.shape[2]
    return src, np.empty((n, out.shape[1], out.shape[0], c), np.float32), _planes4(out)


def _planes4(a: np.ndarray) -> np.ndarray | None:
    """The C-contiguous ``[N, C, H, W]`` view of OpenVX-order ``a``, or None when its memory is not so."""
    t = a.T
    return t.reshape((-1,) + t.shape[-3:]) if t.flags.c_contiguous else None


def bind_channels_last(x: np.ndarray, out: np.ndarray, layouts: tuple[bool, bool], max_pool: bool, size_x: int,
                       size_y: int, pad_x: int, pad_y: int, stride_x: int, stride_y: int) -> Callable[[], None]:
    """The float32 pool of ``x`` into ``out`` when the plan laid out either channels-last (``layouts``: input,
    output), with the bytes of the planes: the input's side on pixels, or a planar input pooled on planes into a
    scratch of planes that is then converted; a planar output written from pixels through one conversion."""
    from ..frontend import chw_layout
    geometry = float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y)
    if not layouts[0]:  # planes in, pixels out: pool on planes, then convert the (smaller) result
        from .float_layers import pixels
        n, c = int(np.prod(out.shape[3:], dtype=np.int64)), out.shape[2]
        scratch = np.empty((n, c, out.shape[1], out.shape[0]), np.float32)
        pool = _bind_float(x, _openvx_view(scratch, out.shape), geometry)
        convert = chw_layout.bind(True, scratch, pixels(out))

        def planes_then_pixels() -> None:
            pool()
            convert()
        return planes_then_pixels
    src, dst, planes_out = _pixel_sides(x, out, layouts)
    work = dst.size * geometry[1] * geometry[2] * COST_PER_TAP
    rows = float_sharing.Rows(_float_pixels, _float_pixels_shared, (src, dst) + geometry, _PIXEL_TYPES,
                              dst.shape[0] * dst.shape[1], work)
    if layouts[1]:
        return rows
    if planes_out is None:
        def into_strided() -> None:
            rows()
            out.T[...] = dst.transpose(0, 3, 1, 2).reshape(out.T.shape)
        return into_strided
    convert = chw_layout.bind(False, dst, planes_out)

    def pixels_then_planes() -> None:
        rows()
        convert()
    return pixels_then_planes


def _openvx_view(planes4: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """OpenVX-order ``[W, H, C, *batch]`` view of C-contiguous ``[N, C, H, W]`` planes."""
    return planes4.reshape(tuple(reversed(shape))).T


def native_channels_last(x: np.ndarray, out: np.ndarray, layouts: tuple[bool, bool], max_pool: bool,
                         size_x: int, size_y: int, pad_x: int, pad_y: int, stride_x: int,
                         stride_y: int) -> native.Entry | None:
    """:func:`bind_channels_last` as a native entry; None when a planar side is not packed in OpenVX order."""
    from ..frontend import chw_layout
    geometry = float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y)
    if not layouts[0]:
        from .float_layers import pixels
        src = planes(x)
        if src is None:
            return None
        src = src.view()
        src.flags.writeable = False
        n, c = int(np.prod(out.shape[3:], dtype=np.int64)), out.shape[2]
        scratch = np.empty((n, c, out.shape[1], out.shape[0]), np.float32)
        pool = _native_float(src, scratch.reshape(n * c, out.shape[1], out.shape[0]), geometry)
        convert = chw_layout.native_layout(True, scratch, pixels(out))
        if convert is None:
            return None
        whole = native.sequence([pool, convert])
        return native.Entry(whole.address, whole.block, whole.keep + pool.keep + convert.keep + (scratch,))
    src, dst, planes_out = _pixel_sides(x, out, layouts)
    entry = native_planes(src, dst, geometry, _pixel_entry(), _pixel_helper())
    if layouts[1]:
        return entry
    if planes_out is None:
        return None
    convert = chw_layout.native_layout(False, dst, planes_out)
    if convert is None:
        return None
    whole = native.sequence([entry, convert])
    return native.Entry(whole.address, whole.block, whole.keep + entry.keep + convert.keep + (dst,))


def _operands(x: np.ndarray, out: np.ndarray, max_pool: bool, src: np.ndarray, window: tuple) -> tuple | None:
    """(kernel kind, 6-D input, 6-D output); None when nothing is left to compute (an empty output, or an
    empty input whose windows are all empty: zeroed here).  ``window``: sizes, paddings and strides."""
    if out.size == 0:
        return None
    dst = _as_rank6(out)
    if x.size == 0:  # every window is empty
        dst[...] = 0
        return None
    if max_pool and _inside_2x2(x.shape, out.shape, *window):
        pair = (planes(src), planes(out))
        if pair[0] is not None and pair[1] is not None:
            return ("max_2x2_planes", *pair)
        kind = "max_2x2"
    elif max_pool:
        pair = (planes(src), planes(out))
        if out.dtype.kind != "f" and pair[0] is not None and pair[1] is not None:  # integers on contiguous planes
            return ("max_planes", *pair)
        kind = "max"
    else:
        kind = "average_float" if out.dtype.kind == "f" else "average_int"
    return kind, _as_rank6(src), dst


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
_SERIAL = {kind: _KERNELS[kind, False] for kind in ("max", "max_2x2", "max_2x2_planes", "average_int", "average_float",
                                                   "max_planes")}
(_max_serial, _max_2x2_serial, _planes_serial, _average_int_serial, _average_float_serial,
 _max_planes_serial) = _SERIAL.values()


@kernel
def _arguments(block, dtype):
    return (native.array(block, 0, dtype), native.array(block, 13, dtype), block[26], block[27], block[28],
            block[29], block[30], block[31])


@native.factory
def _native_pool(kind: str, dtype: type) -> int:
    if kind == "max":
        def entry(block):
            _max_serial(*_arguments(block, dtype))
            return 0
    elif kind == "max_2x2":
        def entry(block):
            _max_2x2_serial(*_arguments(block, dtype))
            return 0
    elif kind == "max_2x2_planes":
        def entry(block):
            _planes_serial(native.c_array(block, 0, dtype)[0, 0, 0], native.c_array(block, 13, dtype)[0, 0, 0],
                           block[26], block[27], block[28], block[29], block[30], block[31])
            return 0
    elif kind == "max_planes":
        def entry(block):
            _max_planes_serial(native.c_array(block, 0, dtype)[0, 0, 0], native.c_array(block, 13, dtype)[0, 0, 0],
                               block[26], block[27], block[28], block[29], block[30], block[31])
            return 0
    elif kind == "average_int":
        def entry(block):
            _average_int_serial(*_arguments(block, dtype))
            return 0
    else:
        def entry(block):
            _average_float_serial(*_arguments(block, dtype))
            return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, out: np.ndarray, max_pool: bool, size_x: int, size_y: int, pad_x: int,
                 pad_y: int, stride_x: int, stride_y: int) -> native.Entry | None:
    """:func:`pooling` (serial) as a native entry; None when there is nothing to run or ``x`` overlaps
    ``out`` (it would need a copy per run).  The caller has checked the arguments (verify)."""
    if np.may_share_memory(out, x):
        return None
    found = _operands(x, out, max_pool, x, (size_x, size_y, pad_x, pad_y, stride_x, stride_y))
    if found is None:
        return None
    if _on_planes(out, max_pool):
        planes = _float_operands(x, out)
        if planes is None:  # strided views: the Python path copies them
            return None
        return _native_float(*planes, float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y))
    kind, src, dst = found
    if kind in ("max_2x2_planes", "max_planes"):
        src, dst = (a.reshape((1, 1, 1) + a.shape) for a in (src, dst))
    return native.Entry(_native_pool(kind, out.dtype.type),
                        *native.pack(src, dst, size_x, size_y, pad_x, pad_y, stride_x, stride_y))
