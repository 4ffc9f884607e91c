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

from collections.abc import Callable

import numpy as np

from ..engine.atomics import fetch_add, pause
from ..support import jit
from .float_microkernel import LANES, tile_6x2, tile_6x2_direct, tile_12x1, tile_12x1_direct
from .float_sharing import F32, PARALLEL_WORK, Rows

PANEL = 2 * LANES
"""Output pixels per panel (the 6 x 2-vector tile's width)."""
ROW_ALIGN = 12
"""The packed weights' rows are padded to a multiple of this (both tiles' row counts divide it)."""
K_BLOCK = 256
"""Inner-dimension block: a tile's weight rows for one block (6 KB) stay in L1 across a unit's panels."""
PANELS_PER_UNIT = 8
"""Panels one unit packs and computes (up to 128 pixels: each input channel copied in runs of 512 bytes)."""
MIN_PIXELS = LANES
"""Output planes smaller than this stay on the BLAS route (a panel would be mostly padding)."""


def _panels(pixels: int) -> tuple[int, int]:
    """(panel count, width of the last panel): full panels of 16, and the rest as one panel of 8 when it fits."""
    full, tail = divmod(pixels, PANEL)
    if tail == 0:
        return full, PANEL
    return full + 1, (LANES if tail <= LANES else PANEL)


def _pack_panel(xi, panel, lanes, valid, p0, c_in, plane_in, pointwise, offsets, taps, k1):
    """One panel: ``panel[k * lanes + j]`` = the patch value ``k = (c, ky, kx)`` of output pixel ``p0 + j``
    (zero past ``valid`` and off the input), then a row of ones (the bias column's partner)."""
    if pointwise:
        for c in range(c_in):
            base, src = c * lanes, c * plane_in + p0
            for j in range(valid):
                panel[base + j] = xi[src + j]
            for j in range(valid, lanes):
                panel[base + j] = 0.0
    else:
        for c in range(c_in):
            for t in range(taps):
                base, src = (c * taps + t) * lanes, c * plane_in
                for j in range(lanes):
                    at = offsets[t * PANEL + j]
                    panel[base + j] = xi[src + at] if at >= 0 else np.float32(0.0)
    for j in range(lanes):
        panel[(k1 - 1) * lanes + j] = 1.0


_PACK_PANEL = jit.kernel(_pack_panel)


def _units(x, a, out, res, geometry, low64, high64, add, u0, u1):
    """Units ``[u0, u1)`` (module doc); ``geometry`` = (kh, kw, sy, sx, dy, dx, top, left, channel groups,
    panels per unit)."""
    kh, kw, sy, sx, dy, dx, top, left, n_groups, per_unit = geometry
    low, high = np.float32(low64), np.float32(high64)
    n_items, c_in, height, width = x.shape
    c_out, out_h, out_w = out.shape[1], out.shape[2], out.shape[3]
    pixels = out_h * out_w
    k1 = a.shape[1]
    taps = kh * kw
    n_panels = -(-pixels // PANEL)  # as _panels (a Python function numba cannot call)
    last_width = LANES if 0 < pixels % PANEL <= LANES else PANEL
    n_blocks = -(-n_panels // per_unit)
    k_blocks = -(-k1 // K_BLOCK)
    row_blocks = a.shape[0] // ROW_ALIGN
    pointwise = taps == 1 and sy == sx == 1 and top == left == 0 and out_h == height and out_w == width
    panels = np.empty(per_unit * k1 * PANEL, np.float32)
    offsets = np.empty(taps * PANEL, np.int64)
    tile = np.empty(ROW_ALIGN * PANEL, np.float32)
    zeros = np.zeros(PANEL, np.float32)
    rows = np.empty(ROW_ALIGN, np.int64)
    tap0 = np.zeros(1, np.int64)
    a_at, panels_at, tile_at, zeros_at = a.ctypes.data, panels.ctypes.data, tile.ctypes.data, zeros.ctypes.data
    rows_at, tap_at, out_at = rows.ctypes.data, tap0.ctypes.data, out.ctypes.data
    resf = res.reshape(res.shape[0], res.shape[1], res.shape[2] * res.shape[3])
    outf = out.reshape(n_items, c_out, pixels)
    plane_in = height * width
    for u in range(u0, u1):
        item = u // (n_blocks * n_groups)
        first = (u // n_groups) % n_blocks * per_unit
        count = min(per_unit, n_panels - first)
        group = u % n_groups
        xi = x[item].reshape(c_in * plane_in)
        for q in range(count):
            pn = first + q
            lanes = last_width if pn == n_panels - 1 else PANEL
            p0 = pn * PANEL
            valid = min(lanes, pixels - p0)
            if not pointwise:
                for j in range(lanes):
                    p = p0 + min(j, valid - 1)
                    oy, ox = p // out_w, p % out_w
                    for ky in range(kh):
                        iy = oy * sy - top + ky * dy
                        for kx in range(kw):
                            ix = ox * sx - left + kx * dx
                            inside = 0 <= iy < height and 0 <= ix < width and j < valid
                            offsets[(ky * kw + kx) * PANEL + j] = iy * width + ix if inside else -1
            _PACK_PANEL(xi, panels[q * k1 * PANEL:(q + 1) * k1 * PANEL], lanes, valid, p0, c_in, plane_in, pointwise,
                  offsets, taps, k1)
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
                b_at = panels_at + 4 * (q * k1 + k0) * lanes
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


def _shared(x, a, out, res, geometry, low64, high64, add, n_units, n_chunks, counters, wait):
    # Chunks of units claimed from counters[0]; counters[1] counts finished ones (float_sharing.py).
    claim = np.int64(counters.ctypes.data)
    i = fetch_add(claim, 1)
    while i < n_chunks:
        _UNITS(x, a, out, res, geometry, low64, high64, add, n_units * i // n_chunks,
               n_units * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
        i = fetch_add(claim, 1)
    while wait and fetch_add(claim + 8, 0) < n_chunks:
        pause()


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


def fits(n_items: int, c_in: int, c_out: int, kernel_hw: tuple[int, int], out_hw: tuple[int, int],
         groups: int) -> bool:
    """Whether this route takes the layer: one group and enough work to share with the helpers.

    Alone on one core OpenBLAS's sgemm is as fast on 3x3 windows and up to twice as fast on small 1x1
    layers (measured: 96 -> 24 channels on 56x56, 0.28 ms against 0.53 ms of CPU), so a layer too small to
    be shared (``float_sharing.PARALLEL_WORK``) stays on the BLAS route."""
    pixels = out_hw[0] * out_hw[1]
    work = n_items * pixels * c_out * c_in * kernel_hw[0] * kernel_hw[1]
    return groups == 1 and pixels >= MIN_PIXELS and work >= PARALLEL_WORK


def bind(x4: np.ndarray, a: np.ndarray, out4: np.ndarray, residual4: np.ndarray | None,
         geometry: tuple[int, ...], clip: tuple[float, float]) -> Callable[[], None]:
    """A no-argument call computing ``out4 = clip(conv(x4) + bias (+ residual4))`` on C-contiguous float32
    NCHW arrays, with ``a = pack(w, bias)``; ``geometry`` = (kh, kw, sy, sx, dy, dx, top, left), the output
    extent fixed by ``out4``'s shape."""
    n_items, _, out_h, out_w = out4.shape
    n_panels, _ = _panels(out_h * out_w)
    per_unit = max(1, min(PANELS_PER_UNIT, n_items * n_panels // 16))
    n_blocks = -(-n_panels // per_unit)
    row_blocks = a.shape[0] // ROW_ALIGN
    # enough units to keep both cores busy when the panels are few (a 7x7 plane is 4 panels)
    n_groups = max(1, min(row_blocks, -(-8 // (n_items * n_blocks))))
    res = _NO_RESIDUAL if residual4 is None else residual4
    args = (x4, a, out4, res, tuple(int(v) for v in geometry) + (n_groups, per_unit), float(clip[0]),
            float(clip[1]), residual4 is not None)
    work = out4.size * a.shape[1]
    return Rows(_UNITS, _SHARED, args, _TYPES, n_items * n_blocks * n_groups, work)
