"""Float32 blobs between CoreML's channel-major layout and NHWC, the layout of the NHWC float engines.

A CoreML graph runs its convolution regions on the NHWC engines (``float_convolution``, ``float_depthwise``,
``float_pooling``) and converts only at the edges of a region: once after the input, once before a layer
that needs CoreML's layout. Both directions are one pass over memory; the arrays are the C-contiguous
``[N, C, H, W]`` and ``[N, H, W, C]`` views of the two tensors (``N`` every leading axis: batch, sequence).

The planes may also be binary16 (``VX_TYPE_FLOAT16``, float16 arrays; the pixels stay float32): the copy into
pixels widens each value exactly and the copy back narrows it once to nearest even (``support/binary16``), in the
same pass, so that a float16 layer on the float engine converts in its layout copies instead of in whole-tensor
passes of its own (``operations/openvx/float16_edges``).
"""
from __future__ import annotations

import os

import numpy as np

from ..engine import gang, isa
from ..engine.block_transpose import COPY, NARROW, WIDEN, transpose_region32
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .float_activation import loaded, stored
from .float_sharing import F32, at, block_of, compiled, contiguous_f32

BLOCKS_ENV = "OPENVX_NN_EDGE_BLOCKS"
"""``0`` moves the values one at a time (the plain loop) and gives no zero-bordered buffers (:func:`blocks`); read
when a copy is bound: the switch the measurements in docs/benchmarks.md compare. Either way the same bytes."""


def blocks() -> bool:
    """Whether copies bound now move squares of values in registers (``$OPENVX_NN_EDGE_BLOCKS`` not ``0``)."""
    return os.environ.get(BLOCKS_ENV, "").strip() != "0"


def side() -> int:
    """The square the copies move at once: 16 values a side where the float kernels have 16 lanes (AVX-512), else
    8; 0 (the plain loop) with :func:`blocks` off."""
    return isa.float_lanes() if blocks() else 0


BAND_BYTES = 32 * 1024
"""Pixels' bytes of the rows a copy moves a channel group at a time (:func:`_copy_rows`): about L1's (32K, 256K
and 1M measured alike within the noise of a loaded machine; one row, the first try, moved 96 channels slower)."""


@jit.kernel
def _copy_rows(planes, pixels, into_pixels, border, square, r0, r1):
    """Rows ``[r0, r1)`` (row ``n * H + y``) of ``pixels[n, y + border, x + border, c] = planes[n, c, y, x]``
    (``into_pixels``) or back: per row, the ``[C, W]`` matrix of the planes (rows a plane apart) is the transpose
    of the ``[W, C]`` one of the pixels, moved in squares of ``square`` values (``transpose_region32``) where
    both sides have 8 or more, else one value at a time, the channels' rows walked in step so that the planes
    side is read or written contiguously. ``pixels`` may hold ``border`` pixels of zeros around the image (never
    written). Binary16 planes (``uint16`` bits) are widened into the pixels and narrowed back (module doc)."""
    _, channels, height, width = planes.shape
    full_h, pitch = pixels.shape[1], pixels.shape[2]
    size = planes.itemsize
    if square > 0 and channels >= 8 and width >= 8:
        convert = COPY if size == 4 else WIDEN if into_pixels else NARROW
        plane, pixel = height * width * size, channels * 4
        band = max(1, BAND_BYTES // (width * pixel))
        # a band of rows at a time, ``square`` channels of it after another: the planes side streams from (or to)
        # that many planes at once, the band's pixels stay in cache between the channels' passes
        group = min(square, channels)
        for b0 in range(r0, r1, band):
            for c1 in range(0, channels, group):
                c = min(c1, channels - group)
                for r in range(b0, min(b0 + band, r1)):
                    n, y = r // height, r % height
                    a = planes.ctypes.data + (((n * channels + c) * height + y) * width) * size
                    p = pixels.ctypes.data + ((n * full_h + y + border) * pitch + border) * pixel + c * 4
                    if into_pixels:
                        transpose_region32(a, plane, p, pixel, group, width, square, convert)
                    else:
                        transpose_region32(p, pixel, a, plane, width, group, square, convert)
        return
    for r in range(r0, r1):
        n, y = r // height, r % height
        line = pixels[n, y + border].reshape(pitch * channels)  # the row's pixels, flat
        first = np.uint64(border * channels)
        if channels == 3:  # an RGB image, the three channels' rows walked in step: stores LLVM interleaves
            red, green, blue = planes[n, 0, y], planes[n, 1, y], planes[n, 2, y]
            for i in range(np.uint64(width)):
                at = first + np.uint64(3) * i
                if into_pixels:
                    line[at], line[at + np.uint64(1)], line[at + np.uint64(2)] = \
                        loaded(red[i]), loaded(green[i]), loaded(blue[i])
                else:
                    red[i] = stored(line[at], planes)
                    green[i] = stored(line[at + np.uint64(1)], planes)
                    blue[i] = stored(line[at + np.uint64(2)], planes)
            continue
        for c in range(channels):
            row = planes[n, c, y]
            # unsigned offsets: numba checks them for no wrap-around (the 4-D indexing it replaced ran at ~1 ns
            # a value on a 3-channel image, 7x its memory's pace)
            at, step = first + np.uint64(c), np.uint64(channels)
            if into_pixels:
                for i in range(np.uint64(width)):
                    line[at + i * step] = loaded(row[i])
            else:
                for i in range(np.uint64(width)):
                    row[i] = stored(line[at + i * step], planes)


@jit.kernel
def _copy(planes, pixels, into_pixels, border, square):
    """Every row (:func:`_copy_rows`)."""
    _copy_rows(planes, pixels, into_pixels, border, square, 0, planes.shape[0] * planes.shape[2])


def _takes(to_nhwc: bool, x: np.ndarray, out: np.ndarray) -> bool:
    """Whether both are C-contiguous, the pixels float32 and the planes float32 or binary16."""
    planes, pixels = (x, out) if to_nhwc else (out, x)
    return contiguous_f32(pixels) and planes.flags.c_contiguous and planes.dtype in (np.float32, np.float16)


def _checked(to_nhwc: bool, x: np.ndarray, out: np.ndarray, border: int) -> tuple[np.ndarray, np.ndarray]:
    """(planes, pixels) of a copy, checked: both C-contiguous, the pixels float32 and the planes' ``[N, H, W, C]``
    with ``border`` pixels around, the planes float32 or binary16 (given as their ``uint16`` bits)."""
    if not _takes(to_nhwc, x, out):
        raise ValueError("the layout copy takes C-contiguous arrays, float32 pixels and float32 or float16 planes "
                         "(gather a strided view first)")
    planes, pixels = (x, out) if to_nhwc else (out, x)
    if planes.dtype == np.float16:
        planes = planes.view(np.uint16)
    n, c, h, w = planes.shape
    if pixels.shape != (n, h + 2 * border, w + 2 * border, c):
        raise ValueError(f"pixels of shape {pixels.shape} do not hold planes of shape {planes.shape} "
                         f"inside a border of {border}")
    return planes, pixels


_TYPES = (F32[4, True], F32[4, True], jit.BOOL, jit.INT, jit.INT)
_HALF_TYPES = (jit.types.Array(jit.types.uint16, 4, "C"),) + _TYPES[1:]


def bind(to_nhwc: bool, x: np.ndarray, out: np.ndarray, border: int = 0):
    """A no-argument call copying ``x`` into ``out``: ``[N, C, H, W]`` into ``[N, H, W, C]`` (``to_nhwc``) or
    back; both C-contiguous (the tensors' own arrays, viewed), the pixels float32, the planes float32 or float16
    (widened into the pixels, narrowed back: module doc). The pixels may be the interior of a buffer with
    ``border`` pixels of zeros each side (``[N, H + 2 border, W + 2 border, C]``: a padded layer's input, the copy
    writing the interior only)."""
    planes, pixels = _checked(to_nhwc, x, out, border)
    kernel = compiled(_copy, _HALF_TYPES if planes.dtype == np.uint16 else _TYPES)
    square = side()
    return lambda: kernel(planes, pixels, bool(to_nhwc), int(border), square)


_PLANES, _PIXELS, _COUNTERS = at(0), at(1), at(2)
_INTO_PIXELS, _BORDER, _SIDE, _MAILBOX, _TASK, _CHUNKS = range(at(3), at(3) + 6)
COST_PER_VALUE = 8
"""A value's copy in a convolution multiply-add's time (``float_sharing.NATIVE_PARALLEL_WORK`` weighs work in the
latter): a CoreML model's 224x224x3 input, 24-33 us on one thread (72 in ResNet-18's run, caches cold), is
shared with the helpers."""

_copy_shares = chunk_driver(_copy_rows)


def _lines(dtype):
    """``gang.shared_entry``'s lines for planes of ``dtype`` (float32, or uint16: binary16 bits): every row
    serially, or in ``chunks`` chunks claimed with the helpers."""
    def lines(code, block, chunks, wait):
        planes, pixels = native.c_array(block, _PLANES, dtype)[0, 0], native.c_array(block, _PIXELS, np.float32)[0, 0]
        into, border, square = block[_INTO_PIXELS] != 0, block[_BORDER], block[_SIDE]
        rows = planes.shape[0] * planes.shape[2]
        if chunks == 0:
            _copy_rows(planes, pixels, into, border, square, 0, rows)
        else:
            _copy_shares((planes, pixels, into, border, square), rows, chunks,
                         native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)
    return jit.kernel(lines)


_BODIES = gang.shared_entry(_lines(np.float32), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))
_HALF_BODIES = gang.shared_entry(_lines(np.uint16), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_copy_entry, _copy_helper = gang.makers(_BODIES, __name__, ("_copy_entry", "_copy_helper"))
_half_entry, _half_helper = gang.makers(_HALF_BODIES, __name__, ("_half_entry", "_half_helper"))


def native_layout(to_nhwc: bool, x: np.ndarray, out: np.ndarray, border: int = 0) -> native.Entry | None:
    """:func:`bind` as a native entry (run from C without the GIL); None unless both are C-contiguous, the pixels
    float32 and the planes float32 or float16."""
    if not _takes(to_nhwc, x, out) or out.size == 0:
        return None
    planes, pixels = _checked(to_nhwc, x, out, border)
    entry, helper = (_half_entry, _half_helper) if planes.dtype == np.uint16 else (_copy_entry, _copy_helper)
    rows = planes.shape[0] * planes.shape[2]
    task = gang.NativeTask(rows, planes.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(planes, pixels, task.counters, int(bool(to_nhwc)), int(border), side(),
                           *task.words())
    return native.Entry(entry(), words, keep + task.finish(helper(), words))
