"""A chain of float32 element-wise steps, each by one value per channel, in one pass over a channels-last tensor.

MediaPipe writes a 1x1 depthwise convolution (a scale and a shift per channel) between PRELUs, which TFLite's NNAPI
mapping turns into ``MUL -> ADD -> PRELU -> MUL -> ADD``: five passes over the same tensor, each reading and
writing it whole. Here the steps run one after the other on a block of pixels while it is in cache. Each step is
the float32 operation its node computes, rounded as that node rounds it (``x * v[c]``, ``x + v[c]``, and PRELU's
``float_elementwise.prelu32``), so the bytes are those of the nodes run apart (a NaN stays NaN).

The tensor is seen flat as ``[pixels, channels]`` (the last axis fastest); each step's vector holds one value per
channel. The vectors are read through their own arrays at each call, so a write to one between calls is seen: each
call first repeats every vector along one row of pixels (``_tile``, on the calling thread), so that a step is one
flat loop over the row's values, whatever the channel count (a pixel at a time, hand recrop's 8 channels had left
most vector lanes idle: one step over 128x128x8 values 19 us, flat 11; one thread). The first step reads the
input, the later ones the output in place (``_step_in_place``).
"""
from __future__ import annotations

import numpy as np

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .float_elementwise import prelu32
from .float_sharing import at, block_of

MUL, ADD, PRELU = 0, 1, 2
"""The steps' codes."""
MAX_STEPS = 8
"""Steps one call computes (a longer chain is cut into calls of at most this many)."""
BLOCK = 4096
"""Values per row: a run of whole pixels the steps finish while it is in cache."""
COST_PER_VALUE = 1
"""A value's time per step in a convolution multiply-add's (a load, an operation, a store; ``Rows``' unit)."""

_X, _OUT, _KINDS, _COUNTERS, _V0, _TILED = at(0), at(1), at(2), at(3), at(4), at(4 + MAX_STEPS)
_N, _CHANNELS, _GROUP, _PIXELS, _ROWS, _MAILBOX, _TASK, _CHUNKS = range(at(5 + MAX_STEPS), at(5 + MAX_STEPS) + 8)


@jit.kernel(error_model="numpy")
def _tile(block):
    """Each step's vector repeated over the first row's pixels (``tiled[j, p * channels + c] = v_j[c]``): read
    afresh at every call, before any thread runs a row."""
    tiled = native.c_array(block, _TILED, np.float32)[0, 0, 0, 0]
    channels = block[_CHANNELS]
    span = tiled.shape[1] // channels
    for j in range(block[_N]):
        v = native.c_array(block, _V0 + j * native.ARRAY_WORDS, np.float32)[0, 0, 0, 0, 0]
        line = tiled[j]
        for p in range(span):
            for c in range(channels):
                line[p * channels + c] = v[c]


@jit.kernel(error_model="numpy")
def _rows(block, r0, r1):
    """Rows ``[r0, r1)`` of the call packed in ``block``: ``group`` pixels each, every step on one row at a time."""
    x = native.c_array(block, _X, np.float32)[0, 0, 0, 0, 0]
    out = native.c_array(block, _OUT, np.float32)[0, 0, 0, 0, 0]
    kinds = native.c_array(block, _KINDS, np.int64)[0, 0, 0, 0, 0]
    tiled = native.c_array(block, _TILED, np.float32)[0, 0, 0, 0]
    n, channels, group, pixels = block[_N], block[_CHANNELS], block[_GROUP], block[_PIXELS]
    in_place = x.ctypes.data == out.ctypes.data
    for r in range(r0, r1):
        p0 = r * group
        values = (min(p0 + group, pixels) - p0) * channels
        ys = out[p0 * channels:p0 * channels + values]
        if in_place:
            _step_in_place(kinds[0], ys, tiled[0], values)
        else:
            _step(kinds[0], x[p0 * channels:p0 * channels + values], ys, tiled[0], values)
        for j in range(1, n):
            _step_in_place(kinds[j], ys, tiled[j], values)


@jit.jitable
def _step(kind, src, ys, v, values):
    """``ys = src (step) v`` over ``values`` values: the chain's first step, from the input."""
    if kind == MUL:
        for i in range(values):
            ys[i] = src[i] * v[i]
    elif kind == ADD:
        for i in range(values):
            ys[i] = src[i] + v[i]
    else:
        for i in range(values):
            ys[i] = prelu32(src[i], v[i])


@jit.jitable
def _step_in_place(kind, ys, v, values):
    """``ys = ys (step) v``: the later steps, on the output in place. One array, not the output passed as the
    source too: LLVM's vectorized loop checks that two arrays do not overlap and, when they are one, runs its
    scalar loop (``PRELU -> MUL -> ADD`` over 128x128x8 values 75 us so, 21 in place; 32x32x64 38 against 10)."""
    if kind == MUL:
        for i in range(values):
            ys[i] = ys[i] * v[i]
    elif kind == ADD:
        for i in range(values):
            ys[i] = ys[i] + v[i]
    else:
        for i in range(values):
            ys[i] = prelu32(ys[i], v[i])


_RUN_CHUNKS = chunk_driver(_rows)


@jit.kernel(error_model="numpy")
def _block_rows(code, block, chunks, wait):
    """Every row of the call: serially (``chunks`` 0), or in ``chunks`` chunks claimed with the helpers."""
    if chunks == 0:
        _rows(block, 0, block[_ROWS])
    else:
        _RUN_CHUNKS((block,), block[_ROWS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(_block_rows, _tile, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_entry, _helper = gang.makers(_BODIES, __name__)


def _checked(x: np.ndarray, out: np.ndarray, steps: list[tuple[int, np.ndarray]]) -> tuple[int, list[np.ndarray]]:
    """(channels, the steps' vectors as flat views); ValueError names what does not fit."""
    if x.dtype != np.float32 or out.dtype != np.float32 or x.shape != out.shape:
        raise ValueError(f"x and out are {x.dtype}{list(x.shape)} and {out.dtype}{list(out.shape)}, expected float32 "
                         "of one shape")
    if not (x.flags.c_contiguous and out.flags.c_contiguous):
        raise ValueError("x and out must be C-contiguous")
    if np.may_share_memory(x, out) and x.ctypes.data != out.ctypes.data:
        raise ValueError("x overlaps the output without being it")
    if not 1 <= len(steps) <= MAX_STEPS:
        raise ValueError(f"a chain has 1 to {MAX_STEPS} steps, not {len(steps)}")
    channels = x.shape[-1] if x.ndim else 1
    vectors = []
    for kind, v in steps:
        if kind not in (MUL, ADD, PRELU):
            raise ValueError(f"step code {kind} is not MUL, ADD or PRELU")
        if v.dtype != np.float32 or not v.flags.c_contiguous or v.size != channels:
            raise ValueError(f"a step's vector is {v.dtype}{list(v.shape)}: expected {channels} contiguous float32 "
                             "values (one per channel)")
        vectors.append(v.reshape(-1))
    return channels, vectors


def native_entry(x: np.ndarray, out: np.ndarray, steps: list[tuple[int, np.ndarray]],
                 share: bool = True) -> native.Entry | None:
    """``out`` = the ``steps`` (``(code, vector)``: :data:`MUL`, :data:`ADD` or :data:`PRELU` by one float32
    value per channel of the last axis) applied in order to ``x``, as a native entry (shared with the gang's
    helpers when large and ``share``); None when empty. ``out`` may be ``x``. ValueError names what does not
    fit."""
    channels, vectors = _checked(x, out, steps)
    if x.size == 0:
        return None
    pixels = x.size // channels
    group = max(1, BLOCK // channels)
    n_rows = -(-pixels // group)
    kinds = np.array([kind for kind, _ in steps], np.int64)
    vectors += [vectors[0]] * (MAX_STEPS - len(vectors))  # unread places
    tiled = np.empty((len(steps), min(group, pixels) * channels), np.float32)  # _tile's rows, written per call
    task = gang.NativeTask(n_rows, share and x.size * len(steps) * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(x.reshape(-1), out.reshape(-1), kinds, task.counters, *vectors, tiled, len(steps),
                           channels, group, pixels, n_rows, *task.words())
    return native.Entry(_entry(), words, keep + (kinds, *vectors, tiled) + task.finish(_helper(), words))


def bind(x: np.ndarray, out: np.ndarray, steps: list[tuple[int, np.ndarray]]):
    """:func:`native_entry` as a no-argument call from Python (on this thread alone)."""
    entry = native_entry(x, out, steps, share=False)
    if entry is None:
        return lambda: None
    return lambda: native.run(entry)
