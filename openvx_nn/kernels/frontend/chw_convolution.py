"""Float32 convolution (one group) on channel-major NCHW planes as a GEMM on the FMA micro-kernels.

For CoreML's CHW layout the product is ``W[O, C*kh*kw] x patches[C*kh*kw, H*W]``: the output pixels are
the vector axis, so each output channel's plane is written in contiguous runs and no layer needs a
transpose. The work is cut into units of (item, panel of 16 output pixels, group of output channels);
a unit copies its panel's patches once into a small ``[K + 1, 16]`` block (the im2col of 16 pixels, the
input itself for a 1x1 window; the last row all ones) and runs ``float_microkernel``'s tiles over it:
``tile_6x2`` takes 6 channels x 16 pixels (the weights broadcast, the patches as two vectors), and a last
panel of 8 pixels or fewer ``tile_12x1``, 12 channels x 8. The weights are packed once at ``prepare``
as ``[O padded to 12, K + 1]`` with the bias in the extra column, so the bias rides in the sum and a full
tile stores straight to the output with the fused clip (the ``_direct`` tiles); a partial tile, or one
with a residual to add, goes through a small buffer and a scalar epilogue.

The units are shared between the calling thread and the engine's helpers (``float_sharing.Rows``:
chunks behind a counter, no barrier), so a layer runs on both cores through the process's one thread
budget; OpenBLAS is not involved.

Arithmetic: float32 fused multiply-adds in a fixed order, the bias the sum's last term; results agree with the BLAS route (``grouped_convolution``) to float32 rounding of the sum of
|products| (docs/coreml.md).
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from ..engine.chunk_loop import chunk_driver
from ..support import jit
from .float_microkernel import LANES, tile_6x2, tile_6x2_direct, tile_12x1, tile_12x1_direct
from .float_sharing import F32, PARALLEL_WORK, Rows

PANEL = 2 * LANES
"""Output pixels per panel (the 6 x 2-vector tile's width)."""
ROW_ALIGN = 12
"""The packed weights' rows are padded to a multiple of this (both tiles' row counts divide it)."""
K_BLOCK = 256
"""Inner-dimension block: a tile's weight rows for one block (6 KB) stay in L1 across a unit's panels."""
PANELS_PER_UNIT = 16
"""Most panels one unit packs and computes (256 pixels)."""
UNITS = 8
"""Units a layer is cut into when it can (two per chunk of ``float_sharing.Rows`` on two cores)."""
MIN_PIXELS = LANES
"""Output planes smaller than this stay on the BLAS route (a panel would be mostly padding)."""


def _panels(pixels: int) -> tuple[int, int]:
    """(panel count, width of the last panel): full panels of 16, and the rest as one panel of 8 when it fits."""
    full, tail = divmod(pixels, PANEL)
    if tail == 0:
        return full, PANEL
    return full + 1, (LANES if tail <= LANES else PANEL)


def _pack(x, item, panels, where, runs, geometry, first, count, k1, out_w, pixels):
    """The unit's panels ``first ..``: panel ``q`` at ``panels[q * k1 * 16:]`` holds ``[k * lanes + j]`` = the
    patch value ``k = (c, ky, kx)`` of its output pixel ``j`` (zero past the plane and off the input), then a
    row of ones (the bias column's partner). Channel by channel across the panels: each input channel is read
    in one run of up to 16 * 16 pixels (the hardware prefetcher follows a few runs, not a hundred)."""
    kh, kw, sy, sx, dy, dx, top, left = geometry[:8]
    _, c_in, height, width = x.shape
    taps = kh * kw
    n_panels = -(-pixels // PANEL)
    last_width = LANES if 0 < pixels % PANEL <= LANES else PANEL
    pointwise = taps == 1 and sy == sx == 1 and top == left == 0 and pixels == height * width
    plane_in = height * width
    xi = x[item].reshape(c_in * plane_in)
    # where[(q, tap, lane)]: the input offset of each patch value in its plane, -1 off the input; runs[(q, tap)]:
    # the first lane's offset when all the panel's lanes lie inside one input row (then lane j reads
    # offset + j * sx: a copy, contiguous at stride 1, with no test per value), else -1
    for q in range(count):
        pn = first + q
        lanes = last_width if pn == n_panels - 1 else PANEL
        p0 = pn * PANEL
        valid = min(lanes, pixels - p0)
        for j in range(lanes):
            p = p0 + min(j, valid - 1)
            oy, ox = p // out_w, p % out_w
            for ky in range(kh):
                iy = oy * sy - top + ky * dy
                for kx in range(kw):
                    ix = ox * sx - left + kx * dx
                    inside = 0 <= iy < height and 0 <= ix < width and j < valid
                    where[(q * taps + ky * kw + kx) * PANEL + j] = iy * width + ix if inside else -1
        for t in range(taps):
            at = where[(q * taps + t) * PANEL:(q * taps + t) * PANEL + lanes]
            one_row = valid == lanes and at[0] >= 0 and at[lanes - 1] == at[0] + (lanes - 1) * sx
            runs[q * taps + t] = at[0] if one_row and (at[0] // width) == (at[lanes - 1] // width) else -1
        for j in range(lanes):
            panels[q * k1 * PANEL + (k1 - 1) * lanes + j] = 1.0
    for c in range(c_in):
        src = xi[c * plane_in:(c + 1) * plane_in]
        for q in range(count):
            pn = first + q
            lanes = last_width if pn == n_panels - 1 else PANEL
            p0 = pn * PANEL
            valid = min(lanes, pixels - p0)
            if pointwise:
                dst = panels[q * k1 * PANEL + c * lanes:q * k1 * PANEL + (c + 1) * lanes]
                for j in range(valid):
                    dst[j] = src[p0 + j]
                for j in range(valid, lanes):
                    dst[j] = 0.0
                continue
            for t in range(taps):
                dst = panels[q * k1 * PANEL + (c * taps + t) * lanes:q * k1 * PANEL + (c * taps + t + 1) * lanes]
                start = runs[q * taps + t]
                if start >= 0 and sx == 1:
                    line = src[start:start + lanes]
                    for j in range(lanes):
                        dst[j] = line[j]
                elif start >= 0:
                    for j in range(lanes):
                        dst[j] = src[start + j * sx]
                else:
                    at = where[(q * taps + t) * PANEL:(q * taps + t + 1) * PANEL]
                    for j in range(lanes):
                        dst[j] = src[at[j]] if at[j] >= 0 else np.float32(0.0)


_PACK = jit.kernel(_pack)


def _units(x, a, out, res, geometry, low64, high64, add, u0, u1):
    """Units ``[u0, u1)`` (module doc); ``geometry`` = (kh, kw, sy, sx, dy, dx, top, left, channel groups,
    panels per unit)."""
    kh, kw, n_groups, per_unit = geometry[0], geometry[1], geometry[8], geometry[9]
    low, high = np.float32(low64), np.float32(high64)
    n_items = x.shape[0]
    c_out, out_h, out_w = out.shape[1], out.shape[2], out.shape[3]
    pixels = out_h * out_w
    k1 = a.shape[1]
    taps = kh * kw
    n_panels = -(-pixels // PANEL)  # as _panels (a Python function numba cannot call)
    last_width = LANES if 0 < pixels % PANEL <= LANES else PANEL
    n_blocks = -(-n_panels // per_unit)
    k_blocks = -(-k1 // K_BLOCK)
    row_blocks = a.shape[0] // ROW_ALIGN
    panels = np.empty(per_unit * k1 * PANEL, np.float32)
    where = np.empty(per_unit * taps * PANEL, np.int64)
    runs = np.empty(per_unit * taps, np.int64)
    tile = np.empty(ROW_ALIGN * PANEL, np.float32)
    zeros = np.zeros(PANEL, np.float32)
    rows = np.empty(ROW_ALIGN, np.int64)
    tap0 = np.zeros(1, np.int64)
    a_at, panels_at, tile_at, zeros_at = a.ctypes.data, panels.ctypes.data, tile.ctypes.data, zeros.ctypes.data
    rows_at, tap_at, out_at = rows.ctypes.data, tap0.ctypes.data, out.ctypes.data
    resf = res.reshape(res.shape[0], res.shape[1], res.shape[2] * res.shape[3])
    outf = out.reshape(n_items, c_out, pixels)
    for u in range(u0, u1):
        item = u // (n_blocks * n_groups)
        first = (u // n_groups) % n_blocks * per_unit
        count = min(per_unit, n_panels - first)
        group = u % n_groups
        _PACK(x, item, panels, where, runs, geometry, first, count, k1, out_w, pixels)
        o_begin = row_blocks * group // n_groups * ROW_ALIGN
        o_end = min(c_out, row_blocks * (group + 1) // n_groups * ROW_ALIGN)
        # K blocks outermost: a block of 6 (12) weight rows stays in L1 across the unit's panels
        for kb in range(k_blocks):
            k0 = kb * K_BLOCK
            k_len = min(K_BLOCK, k1 - k0)
            last = kb == k_blocks - 1
            for q in range(count):
                pn = first + q
                lanes = last_width if pn == n_panels - 1 else PANEL
                p0 = pn * PANEL
                valid = min(lanes, pixels - p0)
                r_tile = 6 if lanes == PANEL else 12
                b_at = panels_at + 4 * (q * k1 * PANEL + k0 * lanes)
                for o0 in range(o_begin, o_end, r_tile):
                    for r in range(r_tile):
                        rows[r] = a_at + ((o0 + r) * k1 + k0) * 4
                    if k_blocks == 1 and o0 + r_tile <= c_out and valid == lanes and not add:
                        at = out_at + 4 * ((item * c_out + o0) * pixels + p0)
                        if lanes == PANEL:
                            tile_6x2_direct(at, rows_at, tap_at, 1, k_len, b_at, 0, 4 * pixels, zeros_at, low, high)
                        else:
                            tile_12x1_direct(at, rows_at, tap_at, 1, k_len, b_at, 0, 4 * pixels, zeros_at, low,
                                             high)
                        continue
                    if lanes == PANEL:
                        tile_6x2(tile_at, rows_at, tap_at, 1, k_len, b_at, 0)
                    else:
                        tile_12x1(tile_at, rows_at, tap_at, 1, k_len, b_at, 0)
                    for r in range(min(r_tile, c_out - o0)):
                        dst = outf[item, o0 + r]
                        for j in range(valid):
                            v = tile[r * lanes + j]
                            if kb > 0:
                                v += dst[p0 + j]
                            if last:
                                if add:
                                    v += resf[item, o0 + r, p0 + j]
                                if v < low:  # noqa: PLR1730 (comparisons: NaN passes through)
                                    v = low
                                if v > high:  # noqa: PLR1730
                                    v = high
                            dst[p0 + j] = v


_UNITS = jit.kernel(_units)
_RUN_CHUNKS = chunk_driver(_UNITS)


def _shared(x, a, out, res, geometry, low64, high64, add, n_units, n_chunks, counters, wait):
    _RUN_CHUNKS((x, a, out, res, geometry, low64, high64, add), n_units, n_chunks, counters, wait)


_SHARED = jit.kernel(_shared)
_TYPES = (F32[4, False], jit.types.Array(jit.types.float32, 2, "C", readonly=True), F32[4, True], F32[4, False],
          jit.types.UniTuple(jit.INT, 10), jit.FLOAT, jit.FLOAT, jit.BOOL)
_NO_RESIDUAL = np.zeros((1, 1, 1, 1), np.float32)
_NO_RESIDUAL.flags.writeable = False


def pack(w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """Weights ``[O, C, kh, kw]`` and bias ``[O]`` as the tiles read them: ``[O padded to 12, C*kh*kw + 1]``
    float32, the bias in the last column, the padding rows zero."""
    c_out = w.shape[0]
    k = int(np.prod(w.shape[1:]))
    a = np.zeros((-(-c_out // ROW_ALIGN) * ROW_ALIGN, k + 1), np.float32)
    a[:c_out, :k] = w.reshape(c_out, k)
    if bias is not None:
        a[:c_out, k] = bias
    a.flags.writeable = False
    return a


ROUTE_ENV = "OPENVX_NN_COREML_GEMM"
"""``own`` sends the layers ``fits`` takes to this route; ``numpy`` keeps every GEMM layer on NumPy's matmul
(``chw_gemm.available``); anything else (the default) sends them to ``chw_gemm``'s BLAS tiles."""


def fits(n_items: int, c_in: int, c_out: int, kernel_hw: tuple[int, int], out_hw: tuple[int, int],
         groups: int) -> bool:
    """Whether this route takes the layer: chosen (``$OPENVX_NN_COREML_GEMM=own``), one group, and enough work
    to share with the helpers.

    Off by default: on the shared 2-core machine (load 3-4) whole models ran slower on it than with every
    GEMM on single-threaded OpenBLAS, interleaved in one process (MobileNet v2 82 against 62 ms, ResNet-18
    229 against 164 ms; on one thread 84 against 55 and 224 against 165), although alone its tiles reach
    35-42 GMAC/s on one core. Small layers would stay on BLAS even when chosen (a share costs more than it
    gains)."""
    if os.environ.get(ROUTE_ENV, "").strip() != "own":
        return False
    pixels = out_hw[0] * out_hw[1]
    work = n_items * pixels * c_out * c_in * kernel_hw[0] * kernel_hw[1]
    return groups == 1 and pixels >= MIN_PIXELS and work >= PARALLEL_WORK


def _padded(x4: np.ndarray, geometry: tuple[int, ...], out_hw: tuple[int, int]):
    """(what the units read, the geometry they read it with, the copy to make before each call or None): ``x4``
    itself when every window lies inside it, else a zero-bordered buffer (allocated once, its border never
    written) that ``x4`` is copied into, so no patch value needs a bounds test."""
    kh, kw, sy, sx, dy, dx, top, left = geometry
    n_items, c_in, height, width = x4.shape
    need_h = max(top + height, (out_hw[0] - 1) * sy + (kh - 1) * dy + 1)
    need_w = max(left + width, (out_hw[1] - 1) * sx + (kw - 1) * dx + 1)
    if (need_h, need_w, top, left) == (height, width, 0, 0):
        return x4, geometry, None
    buffer = np.zeros((n_items, c_in, need_h, need_w), np.float32)
    inner = buffer[:, :, top:top + height, left:left + width]

    def copy() -> None:
        inner[...] = x4
    return buffer, (kh, kw, sy, sx, dy, dx, 0, 0), copy


def bind(x4: np.ndarray, a: np.ndarray, out4: np.ndarray, residual4: np.ndarray | None,
         geometry: tuple[int, ...], clip: tuple[float, float]) -> Callable[[], None]:
    """A no-argument call computing ``out4 = clip(conv(x4) + bias (+ residual4))`` on C-contiguous float32
    NCHW arrays, with ``a = pack(w, bias)``; ``geometry`` = (kh, kw, sy, sx, dy, dx, top, left), the output
    extent fixed by ``out4``'s shape."""
    n_items, _, out_h, out_w = out4.shape
    n_panels, _ = _panels(out_h * out_w)
    # As many panels per unit as leave UNITS units: a block of weight rows is then read from memory once for
    # all the unit's panels (a 14x14 plane is 13 panels; with one panel per unit every panel read all the
    # weights), and channel groups make up the count when the panels are few (a 7x7 plane is 4 panels).
    per_unit = max(1, min(PANELS_PER_UNIT, -(-n_items * n_panels // UNITS)))
    n_blocks = -(-n_panels // per_unit)
    row_blocks = a.shape[0] // ROW_ALIGN
    n_groups = max(1, min(row_blocks, -(-UNITS // (n_items * n_blocks))))
    res = _NO_RESIDUAL if residual4 is None else residual4
    source, geometry, copy = _padded(x4, tuple(int(v) for v in geometry), (out_h, out_w))
    args = (source, a, out4, res, geometry + (n_groups, per_unit), float(clip[0]), float(clip[1]),
            residual4 is not None)
    rows = Rows(_UNITS, _SHARED, args, _TYPES, n_items * n_blocks * n_groups, out4.size * a.shape[1])
    if copy is None:
        return rows

    def call() -> None:
        copy()
        rows()
    return call
