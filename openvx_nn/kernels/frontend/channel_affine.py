"""A float32 tensor scaled and shifted per channel, optionally clamped at zero: ``y = max(x * s[c] + b[c], 0)``.

A batch norm with stored statistics is this affine map; where it follows a concatenation (DenseNet's
pre-activation ``BN -> ReLU`` before each layer's convolution) it cannot fold into a producing convolution and
runs as a pass of its own, once per layer. This is that pass, native and shared with the engine's helpers.

The arithmetic is ``pointwise``'s ``affine`` (and ``affine_relu``) with per-channel parameters, in its float64:
the input and the float32 parameters widened, ``s * (x + 0) + b`` in float64 (the ``+ 0``: pointwise's shift of 0,
which turns -0 into +0 before the product), the clamp, then one rounding to float32 -- so the bits are those of
its NumPy expression. The clamp keeps NaN and -0 as
``numpy.maximum(v, 0)`` does (a value below zero becomes +0; NaN and -0 pass).

Arrays are seen flat as ``[outer, channels, inner]`` (the last fastest): an OpenVX tensor's array (first dim
fastest) with the channel on dim 2 has ``inner = W * H`` (a plane per channel), one held channels-last (dims
``[C, W, H, N]``, channel dim 0) has ``inner = 1`` (the channels of a pixel side by side).

Channels-last, a pixel's channels may be a run inside a wider pixel (``pitch``: the values from one pixel to the
next, at least the channels): a channel-prefix view of a concatenation held channels-last, which DenseNet's
blocks read without copying the earlier layers' channels out first (``coreml/lowering/fusion.concat_chains``).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .float_sharing import F32, Rows, at, block_of

BLOCK = 8192
"""Values per row of the channels-last loop (a row is a run of whole pixels; a plane is one row otherwise)."""
COST_PER_VALUE = 2
"""A value's time in a convolution multiply-add's (``Rows`` weighs work in the latter): a load, an FMA, a store."""
_F64 = types.Array(types.float64, 1, "C", readonly=True)


@jit.kernel(error_model="numpy")
def _rows(x, out, s, b, relu, channels, inner, group, outer, x_pitch, out_pitch, r0, r1):
    """Rows ``[r0, r1)``: ``group`` pixels each when ``inner`` is 1 (pixel ``p``'s channels at ``p * x_pitch`` and
    ``p * out_pitch``), else one plane (channel ``row % channels``)."""
    if inner == 1:
        for r in range(r0, r1):
            p1 = min((r + 1) * group, outer)
            for p in range(r * group, p1):
                xs, ys = x[p * x_pitch:p * x_pitch + channels], out[p * out_pitch:p * out_pitch + channels]
                if relu:
                    for c in range(channels):
                        v = (np.float64(xs[c]) + 0.0) * s[c] + b[c]
                        ys[c] = np.float32(0.0 if v < 0.0 else v)  # noqa: FURB136 - NaN and -0 pass, as the doc says
                else:
                    for c in range(channels):
                        ys[c] = np.float32((np.float64(xs[c]) + 0.0) * s[c] + b[c])
        return
    for r in range(r0, r1):
        sc, bc = s[r % channels], b[r % channels]
        xs, ys = x[r * inner:(r + 1) * inner], out[r * inner:(r + 1) * inner]
        if relu:
            for i in range(inner):
                v = (np.float64(xs[i]) + 0.0) * sc + bc
                ys[i] = np.float32(0.0 if v < 0.0 else v)  # noqa: FURB136 - NaN and -0 pass, as the doc says
        else:
            for i in range(inner):
                ys[i] = np.float32((np.float64(xs[i]) + 0.0) * sc + bc)


_RUN_CHUNKS = chunk_driver(_rows)


@jit.kernel(error_model="numpy")
def _rows_shared(x, out, s, b, relu, channels, inner, group, outer, x_pitch, out_pitch, n_rows, n_chunks, counters,
                 wait):
    _RUN_CHUNKS((x, out, s, b, relu, channels, inner, group, outer, x_pitch, out_pitch), n_rows, n_chunks, counters,
                wait)


_TYPES = (F32[1, False], F32[1, True], _F64, _F64, jit.BOOL, jit.INT, jit.INT, jit.INT, jit.INT, jit.INT, jit.INT)


def _flat(a: np.ndarray, order: str) -> np.ndarray | None:
    flag = "F_CONTIGUOUS" if order == "F" else "C_CONTIGUOUS"
    return a.reshape(-1, order=order) if a.flags[flag] else None


def _pixel_runs(a: np.ndarray, axis: int) -> tuple[np.ndarray, int] | None:
    """(a flat view from ``a``'s first value to its last, the pixel pitch in values) when ``a``'s channel ``axis``
    is a contiguous run and its other dims step over whole pixels of one pitch, the channels fastest in memory
    (channels-last, perhaps inside wider pixels: a channel-prefix view of a concatenation); None otherwise."""
    if a.ndim == 0 or a.strides[axis] != a.itemsize or a.size == 0:
        return None
    channels = a.shape[axis]
    dims = [(n, st) for d, (n, st) in enumerate(zip(a.shape, a.strides)) if d != axis and n != 1]
    dims.sort(key=lambda d: d[1])
    step = dims[0][1] if dims else channels * a.itemsize
    if step % a.itemsize or step < channels * a.itemsize:
        return None
    for (n, st), (_, nxt) in itertools.pairwise(dims):
        if nxt != st * n:
            return None
    pitch = step // a.itemsize
    pixels = a.size // channels
    flat = np.lib.stride_tricks.as_strided(a, ((pixels - 1) * pitch + channels,), (a.itemsize,))
    return flat, pitch


def _operands(x: np.ndarray, out: np.ndarray, scale, shift, relu: bool, axis: int):
    """The kernel's arguments and its row count; ValueError names what does not fit."""
    if x.dtype != np.float32 or out.dtype != np.float32:
        raise ValueError(f"x and out are {x.dtype} and {out.dtype}, expected float32")
    if x.shape != out.shape:
        raise ValueError(f"x has shape {x.shape} and out {out.shape}, expected one shape")
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"channel axis {axis} is outside a tensor of rank {x.ndim}")
    axis %= max(x.ndim, 1)
    channels = x.shape[axis] if x.ndim else 1
    s = np.asarray(scale, np.float32).astype(np.float64).reshape(-1)
    b = np.asarray(shift, np.float32).astype(np.float64).reshape(-1)
    for name, v in (("scale", s), ("shift", b)):
        if v.size not in (1, channels):
            raise ValueError(f"{name} has {v.size} values; expected 1 or {channels} (the channels)")
    s, b = np.ascontiguousarray(np.broadcast_to(s, channels)), np.ascontiguousarray(np.broadcast_to(b, channels))
    if np.may_share_memory(x, out) and (x.ctypes.data != out.ctypes.data or x.strides != out.strides):
        raise ValueError("x overlaps the output without being it")
    for order in ("F", "C"):
        fx, fo = _flat(x, order), _flat(out, order)
        if fx is not None and fo is not None:
            before, after = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1:])
            inner, outer = (before, after) if order == "F" else (after, before)
            x_pitch = out_pitch = channels
            break
    else:  # channels-last pixels inside wider ones (a channel-prefix view of a concatenation)
        rx, ro = _pixel_runs(x, axis), _pixel_runs(out, axis)
        if rx is None or ro is None:
            raise ValueError("x and out must both be contiguous in one order, or channels-last pixels of one pitch")
        (fx, x_pitch), (fo, out_pitch) = rx, ro
        inner, outer = 1, x.size // max(channels, 1)
    group = max(1, BLOCK // max(channels, 1))
    n_rows = -(-outer // group) if inner == 1 else outer * channels
    return (fx, fo, s, b, bool(relu), channels, inner, group, outer, x_pitch, out_pitch), n_rows


def bind(x: np.ndarray, out: np.ndarray, scale, shift, relu: bool, axis: int = 2) -> Callable[[], None]:
    """A no-argument call ``out = max(x * scale[c] + shift[c], 0)`` (without the clamp unless ``relu``) from ``x``'s
    current values; ``scale`` and ``shift`` hold 1 or ``x.shape[axis]`` float32 values, read now; ``x`` and
    ``out`` float32 of one shape, contiguous in one order or channels-last pixels of a pitch each (``out`` may be
    ``x``). Large tensors are shared with
    the engine's helpers. ValueError names what does not fit."""
    args, n_rows = _operands(x, out, scale, shift, relu, axis)
    return Rows(_rows, _rows_shared, args, _TYPES, n_rows, x.size * COST_PER_VALUE)


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT, _S, _B, _COUNTERS = at(0), at(1), at(2), at(3), at(4)
_RELU, _CHANNELS, _INNER, _GROUP, _OUTER, _X_PITCH, _OUT_PITCH, _ROWS, _MAILBOX, _TASK, _CHUNKS = \
    range(at(5), at(5) + 11)


@jit.kernel(error_model="numpy")
def _block_rows(code, block, chunks, wait):
    """Every row of the call packed in ``block``: serially (``chunks`` 0), or in ``chunks`` chunks claimed with
    the helpers (``wait``: until every claimed one is done)."""
    args = (native.c_array(block, _X, np.float32)[0, 0, 0, 0, 0], native.c_array(block, _OUT, np.float32)[0, 0, 0, 0, 0],
            native.c_array(block, _S, np.float64)[0, 0, 0, 0, 0], native.c_array(block, _B, np.float64)[0, 0, 0, 0, 0],
            block[_RELU] != 0, block[_CHANNELS], block[_INNER], block[_GROUP], block[_OUTER], block[_X_PITCH],
            block[_OUT_PITCH])
    if chunks == 0:
        _rows(*args, 0, block[_ROWS])
    else:
        _rows_shared(*args, block[_ROWS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(_block_rows, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_entry, _helper = gang.makers(_BODIES, __name__)


def native_entry(x: np.ndarray, out: np.ndarray, scale, shift, relu: bool, axis: int = 2) -> native.Entry | None:
    """:func:`bind` as a native entry (shared with the gang's helpers when large); None when the arrays do not
    fit (:func:`bind` would say why) or are empty."""
    try:
        (fx, fo, s, b, relu, channels, inner, group, outer, x_pitch, out_pitch), n_rows = \
            _operands(x, out, scale, shift, relu, axis)
    except ValueError:
        return None
    if fx.size == 0:
        return None
    task = gang.NativeTask(n_rows, x.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(fx, fo, s, b, task.counters, int(relu), channels, inner, group, outer, x_pitch, out_pitch,
                           n_rows,
                           *task.words())
    return native.Entry(_entry(), words, keep + task.finish(_helper(), words))
