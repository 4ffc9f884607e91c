"""Float32 depthwise convolution (one input channel per group, any channel multiplier) on NCHW planes.

Depthwise convolution is memory-bound, so it runs direct, one output plane at a time, vectorized along W:
each input plane is copied once into ``sy * sx`` phase planes of its zero-padded self (phase ``(fy, fx)``
holds padded rows ``fy, fy + sy, ...`` and columns ``fx, fx + sx, ...``), after which each tap ``(ky, kx)``
is ONE contiguous multiply-add over the whole output plane (``pw`` columns a row: the ``out_w`` kept and
``(kw-1)*dx // sx`` dropped), at any stride: long vectors even for 7x7 planes, no bounds inside the loop,
and at stride 2 a quarter of the columns the unphased plane would need. A 3x3 window (MobileNet's) sums
its nine taps in one pass, the sum in registers, with FMA (``contract``); other windows three taps a pass
(a third of the accumulator's loads and stores). The phase copy is a contiguous copy at stride 1 and a
constant-stride one at stride 2 (unsigned indices: no wrap-around test per value). The residual and the
clip are applied on the way to the output.

Order of the sums: from the bias, tap by tap in the order ``ky`` (outer), ``kx``, with fused multiply-adds
(a 3x3 window in one expression, other windows three taps a pass); with ``bias_last`` from +0.0 and the bias
added on the way to the output. The latter, for windows of 9 taps or fewer than 3, is the float engine's order
for one input map bit for bit (``float_convolution``: taps from +0.0, then the bias once), which lets a
convolution of one input map run here instead (``kernels/openvx/float_layers``).

The planes are shared between the calling thread and the engine's helpers (``float_sharing.Rows``).
Sums are float32 in a fixed order: within the float32 summation bound of the float64 reference.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .epilogue_activation import clamped_value
from .float_sharing import F32, Rows, at, block_of, contiguous_f32

CHUNK = 1024
"""Accumulator values summed through every tap at a time (4 KB: L1 with the rows they read)."""


def _planes(x, w, bias, out, residual, geometry, low64, high64, add, bias_last, plane0, plane1):
    """Output planes ``[plane0, plane1)`` (plane = item * channels_out + channel); ``geometry`` = (kh, kw, sy,
    sx, dy, dx, top, left); ``bias_last``: the sums start from +0.0 and the bias is added to each (module doc)."""
    kh, kw, sy, sx, dy, dx, top, left = geometry
    low, high = np.float32(low64), np.float32(high64)
    clamped = low > -np.inf or high < np.inf  # an activation's clamp: NaN stored canonical (float_microkernel)
    _, channels, height, width = x.shape
    n_out, out_h, out_w = out.shape[1], out.shape[2], out.shape[3]
    multiplier = n_out // channels
    n_taps = kh * kw
    ph = out_h + ((kh - 1) * dy) // sy + 1  # rows of a phase (+ 1: the last row's extra columns read on)
    pw = out_w + ((kw - 1) * dx) // sx  # columns of a phase
    phase_size = ph * pw
    total = out_h * pw  # the accumulator: out_w results and pw - out_w dropped columns per row
    phases = np.zeros(sy * sx * phase_size, np.float32)  # the padding stays zero: every plane writes the same places
    acc = np.empty(total, np.float32)
    starts = np.empty(n_taps, np.int64)
    for ky in range(kh):
        for kx in range(kw):
            phase = ((ky * dy) % sy) * sx + (kx * dx) % sx
            starts[ky * kw + kx] = phase * phase_size + ((ky * dy) // sy) * pw + (kx * dx) // sx
    last = -1
    for plane in range(plane0, plane1):
        n, o = plane // n_out, plane % n_out
        source = n * channels + o // multiplier
        if source != last:
            last = source
            src = x[n, o // multiplier]
            for iy in range(min(height, ph * sy - top)):
                fy, r = (iy + top) % sy, (iy + top) // sy
                line = src[iy]
                for fx in range(sx):
                    # phase columns c hold input column c * sx + fx - left
                    c0 = max(0, (left - fx + sx - 1) // sx)
                    c1 = min(pw, (width + left - fx + sx - 1) // sx)
                    dst = phases[(fy * sx + fx) * phase_size + r * pw:(fy * sx + fx) * phase_size + (r + 1) * pw]
                    if sx == 1:  # a contiguous copy (vectorized), the common case
                        dst[c0:c1] = line[c0 - left:c1 - left]
                    elif sx == 2:  # a constant stride: LLVM deinterleaves with shuffles
                        for c in range(c0, c1):  # unsigned indices: no wrap-around test per value
                            dst[np.uint64(c)] = line[np.uint64(2 * c + fx - left)]
                    else:
                        for c in range(c0, c1):
                            dst[np.uint64(c)] = line[np.uint64(c * sx + fx - left)]
        taps = w[o]
        b = np.float32(0.0) if bias_last else bias[o]
        late = bias[o]
        for c0 in range(0, total, CHUNK):  # a chunk of the accumulator stays in L1 through every tap
            n_c = min(CHUNK, total - c0)
            part = acc[c0:c0 + n_c]
            if n_taps == 9:  # 3x3: every tap in one pass, the sum in registers (a ninth of the loads and stores)
                a0 = phases[starts[0] + c0:starts[0] + c0 + n_c]
                a1 = phases[starts[1] + c0:starts[1] + c0 + n_c]
                a2 = phases[starts[2] + c0:starts[2] + c0 + n_c]
                a3 = phases[starts[3] + c0:starts[3] + c0 + n_c]
                a4 = phases[starts[4] + c0:starts[4] + c0 + n_c]
                a5 = phases[starts[5] + c0:starts[5] + c0 + n_c]
                a6 = phases[starts[6] + c0:starts[6] + c0 + n_c]
                a7 = phases[starts[7] + c0:starts[7] + c0 + n_c]
                a8 = phases[starts[8] + c0:starts[8] + c0 + n_c]
                w0, w1, w2, w3, w4, w5, w6, w7, w8 = (taps[0], taps[1], taps[2], taps[3], taps[4], taps[5], taps[6],
                                                      taps[7], taps[8])
                for i in range(n_c):
                    part[i] = (b + w0 * a0[i] + w1 * a1[i] + w2 * a2[i] + w3 * a3[i] + w4 * a4[i] + w5 * a5[i]
                               + w6 * a6[i] + w7 * a7[i] + w8 * a8[i])
                continue
            for i in range(n_c):
                part[i] = b
            for t in range(0, n_taps - 2, 3):
                a0 = phases[starts[t] + c0:starts[t] + c0 + n_c]
                a1 = phases[starts[t + 1] + c0:starts[t + 1] + c0 + n_c]
                a2 = phases[starts[t + 2] + c0:starts[t + 2] + c0 + n_c]
                w0, w1, w2 = taps[t], taps[t + 1], taps[t + 2]
                for i in range(n_c):
                    part[i] += w0 * a0[i] + w1 * a1[i] + w2 * a2[i]
            for t in range(n_taps - n_taps % 3, n_taps):
                a0 = phases[starts[t] + c0:starts[t] + c0 + n_c]
                w0 = taps[t]
                for i in range(n_c):
                    part[i] += w0 * a0[i]
        dst = out[n, o]
        for oy in range(out_h):
            line = dst[oy]
            row = acc[oy * pw:oy * pw + out_w]
            if bias_last:
                for i in range(out_w):
                    row[i] += late
            if add:
                more = residual[n, o, oy]
                for i in range(out_w):
                    row[i] += more[i]
            for i in range(out_w):
                line[i] = clamped_value(row[i], low, high, clamped)


_PLANES = jit.kernel(_planes, contract=True)
_RUN_CHUNKS = chunk_driver(_PLANES)


def _shared(x, w, bias, out, residual, geometry, low64, high64, add, bias_last, n_planes, n_chunks, counters, wait):
    _RUN_CHUNKS((x, w, bias, out, residual, geometry, low64, high64, add, bias_last), n_planes, n_chunks, counters,
                wait)


_SHARED = jit.kernel(_shared)
_R2 = jit.types.Array(jit.types.float32, 2, "C", readonly=True)
_TYPES = (F32[4, False], _R2, F32[1, False], F32[4, True], F32[4, False], jit.types.UniTuple(jit.INT, 8), jit.FLOAT,
          jit.FLOAT, jit.BOOL, jit.BOOL)
_NO_RESIDUAL = np.zeros((1, 1, 1, 1), np.float32)
_NO_RESIDUAL.flags.writeable = False


def bind(x4: np.ndarray, w2: np.ndarray, bias: np.ndarray, out4: np.ndarray, residual4: np.ndarray | None,
         geometry: tuple[int, ...], clip: tuple[float, float], bias_last: bool = False) -> Callable[[], None]:
    """A no-argument call computing ``out4 = clip(depthwise(x4) + bias (+ residual4))`` on C-contiguous float32
    NCHW arrays; ``w2`` [O, kh*kw] float32 (output channel ``o`` reads input channel ``o // (O / C)``),
    ``geometry`` = (kh, kw, sy, sx, dy, dx, top, left), the output extent fixed by ``out4``'s shape;
    ``bias_last``: the order of the sums (module doc)."""
    res = _NO_RESIDUAL if residual4 is None else residual4
    args = (x4, w2, bias, out4, res, tuple(int(v) for v in geometry), float(clip[0]), float(clip[1]),
            residual4 is not None, bool(bias_last))
    n_planes = out4.shape[0] * out4.shape[1]
    return Rows(_PLANES, _SHARED, args, _TYPES, n_planes, out4.size * w2.shape[1])


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _W, _BIAS, _OUT, _RESIDUAL, _COUNTERS = (at(k) for k in range(6))
_KH, _KW, _SY, _SX, _DY, _DX, _TOP, _LEFT, _LO, _HI, _ADD, _LAST, _MAILBOX, _TASK, _CHUNKS = range(at(6), at(6) + 15)


@jit.kernel
def _planes_block(code, block, chunks, wait):
    """Every output plane of the layer packed in ``block``: serially (``chunks`` 0), or in ``chunks`` chunks
    claimed with the helpers (``wait``: until every claimed one is done)."""
    out = native.c_array(block, _OUT, np.float32)[0, 0]
    args = (native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _W, np.float32)[0, 0, 0, 0],
            native.c_array(block, _BIAS, np.float32)[0, 0, 0, 0, 0], out,
            native.c_array(block, _RESIDUAL, np.float32)[0, 0],
            (block[_KH], block[_KW], block[_SY], block[_SX], block[_DY], block[_DX], block[_TOP], block[_LEFT]),
            native.real(block, _LO), native.real(block, _HI), block[_ADD] != 0, block[_LAST] != 0)
    n_planes = out.shape[0] * out.shape[1]
    if chunks == 0:
        _PLANES(*args, 0, n_planes)
    else:
        _RUN_CHUNKS(args, n_planes, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(_planes_block, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_planes_entry, _planes_helper = gang.makers(_BODIES, __name__, ("_planes_entry", "_planes_helper"))


def native_bind(x4: np.ndarray, w2: np.ndarray, bias: np.ndarray, out4: np.ndarray, residual4: np.ndarray | None,
                geometry: tuple[int, ...], clip: tuple[float, float], bias_last: bool = False) -> native.Entry | None:
    """:func:`bind` as a native entry (the same planes, shared with the helpers when large enough); None unless
    every array is C-contiguous float32 and the output overlaps no input."""
    res = _NO_RESIDUAL if residual4 is None else residual4
    arrays = (x4, w2, bias, out4, res)
    if not all(contiguous_f32(a) for a in arrays) or out4.size == 0 or any(
            np.may_share_memory(out4, a) for a in (x4, w2, bias, res)):
        return None
    n_planes = out4.shape[0] * out4.shape[1]
    task = gang.NativeTask(n_planes, out4.size * w2.shape[1] >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(*arrays, task.counters, *(int(v) for v in geometry), float(clip[0]), float(clip[1]),
                           int(residual4 is not None), int(bool(bias_last)), *task.words())
    return native.Entry(_planes_entry(), words, keep + task.finish(_planes_helper(), words))
