"""Float32 outputs of a strided layer's phases, computed channels-last, placed at their strided places.

A transposed convolution of stride ``(uy, ux)`` computes its output as phases: phase ``(py, px)`` holds the output
pixels ``(py + y * uy, px + x * ux)``. Phases of one geometry run as one convolution whose output channels are the
phases' channels one after the other (``src`` ``[N, nh, nw, P * K]``, C-contiguous); this copies phase ``j``'s
channels ``[j * K, (j + 1) * K)`` into ``out[n, k, py_j + y * uy, px_j + x * ux]`` of the C-contiguous
``[N, K, OH, OW]`` output (OpenVX's own layout), one pass, no arithmetic. With a ``k x k`` kernel of stride ``k``
and no padding, all ``k * k`` phases are one 1x1 product and this is depth-to-space into the planar output.
A channels-last output ``[N, OH, OW, K]`` (NNAPI's NHWC) takes each phase's ``K`` values as one run.

When the phases are the whole ``uy x ux`` grid in row order (a kernel that is a multiple of its stride: every
phase has the same taps), an input row and phase row ``py`` hold ``nw`` runs of ``ux * K`` values that, laid end
to end, are output row ``py + y * uy`` of every map as an ``[nw * ux, K]`` matrix: the planar placement copies
those runs together and writes the matrix transposed in 8x8 blocks (``engine.block_transpose``), contiguous
stores along the output rows instead of one store per value. Both routes only move bits.

A planar output may also be binary16 (``VX_TYPE_FLOAT16``: a float16 deconvolution on the float engine): each value
is then narrowed once to nearest even as it is placed (``support/binary16``; the whole grid's rows as they are
gathered, then moved in blocks of 2-byte elements), so that the layer needs no narrowing pass of its own.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..engine import gang
from ..engine.block_transpose import SIDE, transpose_region
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .float_activation import stored
from .float_sharing import F32, at, block_of, compiled, contiguous_f32

_PHASES = types.Array(types.int64, 2, "C", readonly=True)


@jit.jitable
def _whole_grid(phases, uy, ux):
    """Whether ``phases`` are every ``(py, px)`` of the stride, row by row (module doc)."""
    if phases.shape[0] != uy * ux:
        return False
    for j in range(phases.shape[0]):
        if phases[j, 0] != j // ux or phases[j, 1] != j % ux:
            return False
    return True


@jit.kernel
def _scatter_rows(src, out, phases, uy, ux, r0, r1):
    """Rows ``[r0, r1)`` (row ``n * nh + y`` of ``src``) of every phase: as block transposes for a whole grid
    with sides of at least 8 (module doc), else pixel by pixel, each pixel's channels read in one contiguous run
    and written to their maps (the output lines a row touches stay in cache from one pixel to the next, so each is
    filled before it leaves)."""
    _, nh, nw, _ = src.shape
    maps = out.shape[1]
    if maps >= SIDE and nw * ux >= SIDE and _whole_grid(phases, uy, ux):
        _transposed_rows(src, out, uy, ux, r0, r1)
        return
    for r in range(r0, r1):
        n, y = r // nh, r % nh
        for x in range(nw):
            pixel = src[n, y, x]
            for j in range(phases.shape[0]):
                oy, ox, c0 = phases[j, 0] + y * uy, phases[j, 1] + x * ux, j * maps
                for k in range(maps):
                    out[n, k, oy, ox] = stored(pixel[c0 + k], out)


@jit.kernel
def _transposed_rows(src, out, uy, ux, r0, r1):
    """:func:`_scatter_rows` for a whole grid: per input row and phase row, its ``[nw * ux, K]`` matrix gathered
    into one buffer (narrowed there for a binary16 output), then written transposed into the maps' output row
    (``K`` and ``nw * ux`` at least 8)."""
    _, nh, nw, _ = src.shape
    maps, oh, ow = out.shape[1], out.shape[2], out.shape[3]
    run, width, size = ux * maps, nw * ux, out.itemsize
    stage = np.empty(width * maps, out.dtype)
    staged, target, plane = np.int64(stage.ctypes.data), np.int64(out.ctypes.data), oh * ow * size
    for r in range(r0, r1):
        n, y = r // nh, r % nh
        for py in range(uy):
            c0 = py * run
            for x in range(nw):
                pixel = src[n, y, x]
                for i in range(run):
                    stage[x * run + i] = stored(pixel[c0 + i], out)
            row = target + ((n * maps * oh) + py + y * uy) * ow * size
            transpose_region(staged, maps * size, row, plane, width, maps, size)


@jit.kernel
def _scatter(src, out, phases, uy, ux):
    """Every row (:func:`_scatter_rows`)."""
    _scatter_rows(src, out, phases, uy, ux, 0, src.shape[0] * src.shape[1])


@jit.kernel
def _scatter_pixels(src, out, phases, uy, ux):
    """Every row into a channels-last ``out`` ``[N, OH, OW, K]``: each phase's ``K`` values one contiguous run."""
    n_items, nh, nw, _ = src.shape
    maps = out.shape[3]
    for n in range(n_items):
        for y in range(nh):
            for x in range(nw):
                for j in range(phases.shape[0]):
                    oy, ox, c0 = phases[j, 0] + y * uy, phases[j, 1] + x * ux, j * maps
                    for k in range(maps):
                        out[n, oy, ox, k] = src[n, y, x, c0 + k]


_TYPES = (F32[4, False], F32[4, True], _PHASES, jit.INT, jit.INT)
_HALF_TYPES = (F32[4, False], jit.types.Array(jit.types.uint16, 4, "C"), _PHASES, jit.INT, jit.INT)


def _takes(src: np.ndarray, out: np.ndarray, channels_last: bool = False) -> bool:
    """Whether both are C-contiguous float32, or the output planar binary16 (module doc)."""
    half = out.dtype == np.float16 and out.flags.c_contiguous and not channels_last
    return contiguous_f32(src) and (half or contiguous_f32(out))


def _target(out: np.ndarray) -> np.ndarray:
    """The output as the kernels take it: float32, or binary16 as its ``uint16`` bits."""
    return out.view(np.uint16) if out.dtype == np.float16 else out


def _checked(src: np.ndarray, out: np.ndarray, phases: np.ndarray, strides: tuple[int, int],
             channels_last: bool = False) -> np.ndarray:
    phases = np.ascontiguousarray(phases, np.int64).reshape(-1, 2)
    if not _takes(src, out, channels_last):
        raise ValueError("the phase scatter takes C-contiguous float32 arrays (or a planar float16 output)")
    n, nh, nw, c = src.shape
    uy, ux = strides
    maps, oh, ow = (out.shape[3], out.shape[1], out.shape[2]) if channels_last else out.shape[1:]
    if c != phases.shape[0] * maps or n != out.shape[0] or ((phases[:, 0] + (nh - 1) * uy) >= oh).any() \
            or ((phases[:, 1] + (nw - 1) * ux) >= ow).any() or (phases < 0).any():
        raise ValueError(f"phases {phases.tolist()} of {list(src.shape)} at strides {strides} do not fit the output "
                         f"{list(out.shape)}")
    view = phases.view()
    view.flags.writeable = False
    return view


def bind(src: np.ndarray, out: np.ndarray, phases: np.ndarray, strides: tuple[int, int], channels_last: bool = False):
    """A no-argument call placing ``src``'s phases (``phases`` ``[P, 2]``: each one's ``(py, px)``) into ``out``
    (module doc), planar ``[N, K, OH, OW]`` (float32 or float16) or ``channels_last`` ``[N, OH, OW, K]`` (float32);
    ``strides`` ``(uy, ux)``."""
    phases = _checked(src, out, phases, strides, channels_last)
    out = _target(out)
    kernel = compiled(_scatter_pixels if channels_last else _scatter,
                      _HALF_TYPES if out.dtype == np.uint16 else _TYPES)
    source = src.view()
    source.flags.writeable = False
    uy, ux = int(strides[0]), int(strides[1])
    return lambda: kernel(source, out, phases, uy, ux)


_SRC, _OUT, _PHASE_TABLE, _COUNTERS = at(0), at(1), at(2), at(3)
_UY, _UX, _MAILBOX, _TASK, _CHUNKS = range(at(4), at(4) + 5)
COST_PER_VALUE = 8
"""A value's placement in a convolution multiply-add's time (as ``chw_layout``'s copy)."""

_scatter_shares = chunk_driver(_scatter_rows)


def _lines(dtype):
    """``gang.shared_entry``'s lines for an output of ``dtype`` (float32, or uint16: binary16 bits): every row
    serially, or in ``chunks`` chunks claimed with the helpers."""
    def lines(code, block, chunks, wait):
        src, out = native.c_array(block, _SRC, np.float32)[0, 0], native.c_array(block, _OUT, dtype)[0, 0]
        phases = native.c_array(block, _PHASE_TABLE, np.int64)[0, 0, 0, 0]
        uy, ux = block[_UY], block[_UX]
        rows = src.shape[0] * src.shape[1]
        if chunks == 0:
            _scatter_rows(src, out, phases, uy, ux, 0, rows)
        else:
            _scatter_shares((src, out, phases, uy, ux), rows, chunks,
                            native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)
    return jit.kernel(lines)


_BODIES = gang.shared_entry(_lines(np.float32), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))
_HALF_BODIES = gang.shared_entry(_lines(np.uint16), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

# the placement, its rows shared with the gang's spinning helpers when it is large enough
_scatter_entry, _scatter_helper = gang.makers(_BODIES, __name__, ("_scatter_entry", "_scatter_helper"))
_half_entry, _half_helper = gang.makers(_HALF_BODIES, __name__, ("_half_entry", "_half_helper"))


def native_scatter(src: np.ndarray, out: np.ndarray, phases: np.ndarray, strides: tuple[int, int]) -> native.Entry:
    """:func:`bind` as a native entry (run from C without the GIL)."""
    phases = np.ascontiguousarray(_checked(src, out, phases, strides))
    out = _target(out)
    entry, helper = (_half_entry, _half_helper) if out.dtype == np.uint16 else (_scatter_entry, _scatter_helper)
    rows = src.shape[0] * src.shape[1]
    task = gang.NativeTask(rows, src.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(src, out, phases, task.counters, int(strides[0]), int(strides[1]), *task.words())
    return native.Entry(entry(), words, keep + (phases,) + task.finish(helper(), words))
