"""A correlation route bound to its arrays once, and run start to end by one nopython driver.

``correlation.execute`` decides per call what a layer's route needs: the packed-input scratch, the
bias views, the unit counts, the Fortran-ordered target, whether to lend chunks to helper threads
(``simd.correlate``). A bound node whose arrays are fixed until it is bound again needs none of
that per call: :func:`bind` makes it once, as the argument block of a native entry (``native.py``),
and the entry's driver does what ``simd.correlate`` (then, if the input allows no int32 block, the
int64 loops) or ``correlation._direct`` does, on the calling thread alone, with the same kernels in
the same order: the same bits.

The native plan calls the entry from C; the Python path calls it too (``native.run``) when the layer
would not be shared between threads anyway (:attr:`Bound.shared`), which saves it the per-call
preparation. A SIMD layer of ``NATIVE_SHARE_WORK`` multiply-adds or more shares its units, once the input
is packed, with the helpers spinning in the gang (``gang.begin_native``: the C plan's helper threads, or
Python's): the same units, each computed by one thread, so the same bits. The GEMM route (float64 BLAS, only when no SIMD instruction set is in force) has no
entry: it stays on ``correlation.execute``.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from ..support import jit, native
from ..support.fixed_point import int_range
from ..support.jit import is_crowded
from . import correlation, gang, isa, simd
from .atomics import shared_words
from .block_bounds import run_steps
from .microkernel import ELEMENTS

NATIVE_SHARE_WORK = 1 << 18
"""Multiply-adds from which a native SIMD layer shares its units with spinning helpers (no wake-up to pay)."""

# Packed arrays, in this order, ARRAY_WORDS each; then the scalars.
_ARRAYS = ("x", "xp", "taps", "weights", "corr", "bias1", "bias4", "flat", "out", "target", "wt", "bias3",
           "counters")
_SCALARS = ("lo_x", "lo_y", "flip", "mask", "measure", "bias_kind", "ow", "oh", "k_out", "images", "n_units", "rows",
            "block", "n_strips", "strip", "stride_x", "stride_y", "inner", "tap_stride", "block_steps", "w_max",
            "elements", "sum_shift", "bias_shift", "shift", "nearest", "saturate", "lo", "hi", "copy_back", "kx", "ky",
            "step_x", "step_y", "offset_x", "offset_y", "mailbox", "task", "chunks", "run_steps", "w_total", "w_split",
            "all_steps", "pixel_major")
(X, XP, TAPS, WEIGHTS, CORR, BIAS1, BIAS4, FLAT, OUT, TARGET, WT, BIAS3, COUNTERS) = (
    native.ARRAY_WORDS * i for i in range(len(_ARRAYS)))
_FIRST = native.ARRAY_WORDS * len(_ARRAYS)
(LO_X, LO_Y, FLIP, MASK, MEASURE, BIAS_KIND, OW, OH, K_OUT, IMAGES, N_UNITS, ROWS, BLOCK, N_STRIPS, STRIP, STRIDE_X,
 STRIDE_Y, INNER, TAP_STRIDE, BLOCK_STEPS, W_MAX, ELEMS, SUM_SHIFT, BIAS_SHIFT, SHIFT, NEAREST, SATURATE, LO, HI,
 COPY_BACK, KX, KY, STEP_X, STEP_Y, OFFSET_X, OFFSET_Y, MAILBOX, TASK, CHUNKS, RUN_STEPS, W_TOTAL, W_SPLIT,
 ALL_STEPS, PIXEL_MAJOR) = (
    _FIRST + i for i in range(len(_SCALARS)))


class Bound(NamedTuple):
    """A bound correlation: its native entry, and whether the Python path would rather share it between threads."""

    entry: native.Entry
    shared: bool

    def worth_sharing(self) -> bool:
        """Whether a Python-path call should take ``correlation.execute`` (helpers, numba's pool) instead."""
        return self.shared and not is_crowded()


def _six(a: np.ndarray, leading: bool = False) -> np.ndarray:
    """``a`` as a 6-D view: length-1 axes added after (or, ``leading``, before) its own."""
    pad = (None,) * (native.RANK - a.ndim)
    return a[pad + (...,)] if leading else a[(...,) + pad]


def _geometry(route, w: np.ndarray) -> tuple:
    return (w.shape[0], w.shape[1], route.window.step_x, route.window.step_y, route.window.offset_x,
            route.window.offset_y)


def _requantizing(route, out_dtype, clamp: tuple[int, int] | None = None) -> tuple:
    steps, arithmetic = route.steps, route.arithmetic
    if steps is None:  # float32
        return (0, 0, 0, 0, 0, 0, 0)
    lo, hi = int_range(out_dtype) if clamp is None else clamp
    return (steps.sum_shift, steps.bias_shift, steps.shift, int(arithmetic.nearest_even), int(arithmetic.saturate),
            lo, hi)


def bind(route: correlation.Route, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
         clamp: tuple[int, int] | None = None) -> Bound | None:
    """``route`` bound to ``x`` (W, H, C, *batch), ``bias`` (None, (K,) or (OW, OH, K)) and ``out``; None for
    an empty output or the GEMM route. The inputs must not overlap ``out`` (the caller checks). ``clamp``: raw
    bounds within the output type that a saturating integer route saturates to instead of the type's (an
    activation fused into the layer); ValueError for a route that wraps."""
    if clamp is not None and (route.steps is None or not route.arithmetic.saturate):
        raise ValueError("only a saturating integer layer can clamp its output in its epilogue")
    if out.size == 0 or route.engine == "gemm":
        return None
    x6, out6 = correlation.as6(x), correlation.as6(out)
    ow, oh, k_out = out.shape[:3]
    bias3 = np.broadcast_to(np.zeros((), out.dtype) if bias is None else bias, (ow, oh, k_out))
    work = out6.size * route.w.shape[0] * route.w.shape[1] * route.w.shape[2]
    if route.engine == "simd":
        return _bind_simd(route, x6, bias, bias3, out6, work, clamp)
    wt = correlation._tap_major(route.w, np.int64 if route.steps is not None else np.float64)
    lines = out6.size // (out6.shape[0] * out6.shape[2])
    shared = lines > 1 and work >= correlation.PARALLEL_WORK and isa.threads() > 1
    kind = "float" if route.steps is None else "int"
    scalars = _scalar_words(ow=ow, oh=oh, k_out=k_out, **_direct_scalars(route, out.dtype, clamp))
    blocks = _pack(scalars, x=x6, out=out6, wt=_six(wt, leading=True), bias3=_six(bias3))
    return Bound(native.Entry(_direct_entry(kind, x.dtype.type, out.dtype.type), *blocks), shared)


def _direct_scalars(route, out_dtype, clamp: tuple[int, int] | None = None) -> dict:
    names = ("sum_shift", "bias_shift", "shift", "nearest", "saturate", "lo", "hi")
    geometry = ("kx", "ky", "step_x", "step_y", "offset_x", "offset_y")
    return {"stride_x": route.window.stride_x, "stride_y": route.window.stride_y,
            **dict(zip(names, _requantizing(route, out_dtype, clamp))),
            **dict(zip(geometry, _geometry(route, route.w)))}


def _bind_simd(route, x6, bias, bias3, out6, work, clamp: tuple[int, int] | None = None) -> Bound:
    plan = route.simd
    images = math.prod(x6.shape[3:])
    xp = simd.packed_input(plan, images)
    per_image = bias  # as correlation.execute passes it
    if bias is not None and bias.ndim == 3:
        per_image = np.broadcast_to(bias[..., None], bias.shape + (math.prod(out6.shape[3:]),))
    bias1, bias4, bias_kind = simd._bias_views(per_image, out6.dtype if bias is None else bias.dtype)
    head, (n_units,), tail = simd._unit_args(plan, x6, bias1, bias4, bias_kind, xp, out6, route.steps,
                                             route.arithmetic.saturate, route.arithmetic.nearest_even)
    flat, pixel_major = head[8], head[9][4] != 0
    copy_back = not out6.flags.f_contiguous and not pixel_major
    target = flat.reshape(out6.shape, order="F") if copy_back else out6
    # The int64 loops' weights, for an int16 input whose measured range allows no int32 block.
    fallback = simd.block_steps(plan, plan.x_max if plan.kind == "u8s8" else 32768) == 0
    wt = correlation._tap_major(route.w, np.int64) if fallback else np.zeros((1, 1), np.int64)
    rows, block, n_strips, strip, _, _, inner, tap_stride, steps = tail[:9]  # strides: the window's
    task = gang.NativeTask(n_units, work >= NATIVE_SHARE_WORK)
    # [2] = 1: chunks from both ends, so that each thread computes the same end of the layer run after run
    # (AlexNet's conv3 165 -> 157 us; simd.correlate's calls, which keep the claim order, measured 190 -> 212 us
    # that way, for a reason not found); [3] = 1: "go" for simd's chunk loop (packed before posting)
    task.counters = shared_words(4)
    task.counters[2:] = 1
    mailbox, record, chunks = task.words()
    scalars = _scalar_words(mailbox=mailbox, task=record, chunks=chunks,
        lo_x=plan.origin[0], lo_y=plan.origin[1], flip=plan.flip, mask=0xFF if plan.kind == "u8s8" else -1,
        measure=int(plan.kind != "u8s8"), bias_kind=bias_kind, ow=out6.shape[0], oh=out6.shape[1],
        k_out=out6.shape[2], images=images, n_units=n_units, rows=rows, block=block, n_strips=n_strips, strip=strip,
        inner=inner, tap_stride=tap_stride, block_steps=steps, w_max=plan.w_max, elements=ELEMENTS[plan.kind],
        w_total=plan.w_total, w_split=plan.w_split, all_steps=plan.taps.size * plan.inner,
        copy_back=int(copy_back), pixel_major=int(pixel_major), **_direct_scalars(route, out6.dtype, clamp))
    weights = plan.weights.reshape((-1,) + plan.weights.shape[2:])  # 7-D C as 6-D C: only its address is read
    blocks = _pack(scalars, x=x6, xp=_six(xp, leading=True), taps=_six(plan.taps, leading=True), weights=weights,
                   corr=_six(plan.corr, leading=True), bias1=_six(bias1, leading=True), bias4=_six(bias4),
                   flat=_six(flat, leading=True), out=out6, target=target, wt=_six(wt, leading=True),
                   bias3=_six(bias3), counters=_six(task.counters, leading=True))
    dtypes = (plan.code, x6.dtype.type, plan.store.type, plan.weights.dtype.type, bias1.dtype.type, out6.dtype.type)
    block, keep = blocks
    shared = work >= simd.PARALLEL_WORK and isa.threads() > 1
    return Bound(native.Entry(_simd_entry(*dtypes), block, keep + task.finish(_simd_helper(*dtypes), block)), shared)


def _scalar_words(**values) -> list[int]:
    words = [0] * len(_SCALARS)
    for name, value in values.items():
        words[_SCALARS.index(name)] = int(value)
    return words


def _pack(words: list[int], **arrays) -> tuple[np.ndarray, tuple]:
    """The block: the arrays of :data:`_ARRAYS` (an unused one as a placeholder), then ``words``."""
    unused = np.zeros((1,) * native.RANK, np.int64)
    return native.pack(*(arrays.get(name, unused) for name in _ARRAYS), *words)


# ---- the drivers (numba; a C loop calls them without the GIL) -------------------------------------------

@jit.kernel
def _head(block, store_dtype, weights_dtype, bias_dtype, out_dtype):
    """The SIMD units' array arguments (``simd._correlate_units``: those after the micro-kernel code)."""
    return (native.c_array(block, XP, store_dtype)[0, 0], native.c_array(block, TAPS, np.int64)[0, 0, 0, 0, 0],
            native.c_array(block, WEIGHTS, weights_dtype), native.c_array(block, CORR, np.int64)[0, 0, 0, 0, 0],
            native.array(block, BIAS1, bias_dtype)[0, 0, 0, 0, 0],
            native.array(block, BIAS4, bias_dtype)[:, :, :, :, 0, 0], block[BIAS_KIND],
            native.c_array(block, FLAT, out_dtype)[0, 0, 0, 0, 0], (block[OW], block[OH], block[K_OUT], block[IMAGES],
                                                                block[PIXEL_MAJOR]))


@functools.cache
def _simd_bodies(code: int, x_dtype, store_dtype, weights_dtype, bias_dtype, out_dtype) -> tuple:
    """The SIMD route's (entry, helper) bodies for micro-kernel ``code`` and these dtypes (``gang.shared_entry``):
    the caller packs the input (measuring an int16 one's range for the K-block, ``simd.block_steps``), then the
    units run serially or in chunks shared with the gang's helpers. Bound by closure, so ``code`` stays a
    compile-time literal and each body caches on disk."""
    pack, units, claimed = simd._PACK, simd._UNITS, simd._UNITS_SHARED
    direct = correlation._DIRECT["int", False]

    @jit.jitable
    def prepare(block):
        x6 = native.array(block, X, x_dtype)
        xp = native.c_array(block, XP, store_dtype)[0, 0]
        measured = pack(x6, xp, block[LO_X], block[LO_Y], block[FLIP], block[MASK], block[MEASURE] != 0, 0, 1)
        steps = block[BLOCK_STEPS]
        if block[MEASURE] != 0:  # s16: as simd.block_steps
            steps = run_steps(measured, block[W_MAX], block[ELEMS], block[W_TOTAL], block[W_SPLIT],
                              block[ALL_STEPS])
        block[RUN_STEPS] = steps  # read by every thread's units; 0: done here
        if steps == 0:  # no int32 block is safe for these values: the int64 loops (correlation._direct)
            direct(x6, native.c_array(block, WT, np.int64)[0, 0, 0, 0],
                   native.array(block, BIAS3, bias_dtype)[:, :, :, 0, 0, 0], native.array(block, OUT, out_dtype),
                   block[KX], block[KY], block[STRIDE_X], block[STRIDE_Y], block[STEP_X], block[STEP_Y],
                   block[OFFSET_X], block[OFFSET_Y], block[SUM_SHIFT], block[BIAS_SHIFT], block[SHIFT],
                   block[NEAREST] != 0, block[SATURATE] != 0, block[LO], block[HI])

    @jit.jitable
    def lines(code_, block, chunks, wait):
        if block[RUN_STEPS] == 0:
            return
        xp, taps, weights, corr, bias1, bias4, bias_kind, flat, shape = _head(block, store_dtype, weights_dtype,
                                                                               bias_dtype, out_dtype)
        if chunks == 0:
            units(code, xp, taps, weights, corr, bias1, bias4, bias_kind, flat, shape, 0, block[N_UNITS],
                  block[ROWS], block[BLOCK], block[N_STRIPS], block[STRIP], block[STRIDE_X], block[STRIDE_Y],
                  block[INNER], block[TAP_STRIDE], block[RUN_STEPS], block[SUM_SHIFT], block[BIAS_SHIFT],
                  block[SHIFT], block[NEAREST] != 0, block[SATURATE] != 0, block[LO], block[HI])
        else:
            claimed(code, xp, taps, weights, corr, bias1, bias4, bias_kind, flat, shape, block[N_UNITS], chunks,
                    native.c_array(block, COUNTERS, np.int64)[0, 0, 0, 0, 0], wait, block[ROWS], block[BLOCK],
                    block[N_STRIPS], block[STRIP], block[STRIDE_X], block[STRIDE_Y], block[INNER],
                    block[TAP_STRIDE], block[RUN_STEPS], block[SUM_SHIFT], block[BIAS_SHIFT], block[SHIFT],
                    block[NEAREST] != 0, block[SATURATE] != 0, block[LO], block[HI])
        if (chunks == 0 or wait) and block[COPY_BACK] != 0:  # the caller, once every unit is done
            native.array(block, OUT, out_dtype)[...] = native.array(block, TARGET, out_dtype)

    return gang.shared_entry(lines, prepare, (MAILBOX, TASK, CHUNKS, COUNTERS), code)


@native.factory(codes=(0,))
def _simd_entry(code: int, x_dtype, store_dtype, weights_dtype, bias_dtype, out_dtype) -> int:
    """The SIMD route's entry for micro-kernel ``code`` and these dtypes (``simd.correlate``'s work)."""
    return jit.native(_simd_bodies(code, x_dtype, store_dtype, weights_dtype, bias_dtype, out_dtype)[0])


@native.factory(codes=(0,))
def _simd_helper(code: int, x_dtype, store_dtype, weights_dtype, bias_dtype, out_dtype) -> int:
    """A helper's part of a shared SIMD layer: chunks while any is left."""
    return jit.native(_simd_bodies(code, x_dtype, store_dtype, weights_dtype, bias_dtype, out_dtype)[1])


@native.factory
def _direct_entry(kind: str, x_dtype, out_dtype) -> int:
    """The int64 (or float64) loops' entry: ``correlation._direct``, serially."""
    direct = correlation._DIRECT[kind, False]
    if kind == "int":
        def entry(block):
            direct(native.array(block, X, x_dtype), native.c_array(block, WT, np.int64)[0, 0, 0, 0],
                   native.array(block, BIAS3, out_dtype)[:, :, :, 0, 0, 0], native.array(block, OUT, out_dtype),
                   block[KX], block[KY], block[STRIDE_X], block[STRIDE_Y], block[STEP_X], block[STEP_Y],
                   block[OFFSET_X], block[OFFSET_Y], block[SUM_SHIFT], block[BIAS_SHIFT], block[SHIFT],
                   block[NEAREST] != 0, block[SATURATE] != 0, block[LO], block[HI])
            return 0
    else:
        def entry(block):
            direct(native.array(block, X, x_dtype), native.c_array(block, WT, np.float64)[0, 0, 0, 0],
                   native.array(block, BIAS3, out_dtype)[:, :, :, 0, 0, 0], native.array(block, OUT, out_dtype),
                   block[KX], block[KY], block[STRIDE_X], block[STRIDE_Y], block[STEP_X], block[STEP_Y],
                   block[OFFSET_X], block[OFFSET_Y])
            return 0
    return jit.native(entry)
