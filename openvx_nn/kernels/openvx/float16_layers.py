"""Pooling and activation layers on binary16 (``VX_TYPE_FLOAT16``) tensors read and written in the kernel's own pass.

Both layers move little arithmetic per value, so widening a whole float16 input to float32 first and narrowing a
whole output after (``float16_edges``) costs more than the layer. Here the float32 kernel itself runs on the
binary16 tensors: pooling is ``chw_pooling.pool_planes`` (the float32 layer's plane kernel) on binary16 planes,
its window passes widening the input as they load it and narrowing each output as they store it; an activation
widens each value, evaluates ``activation.formula`` and its float32 cast (``quantize``) as the float32 layer does,
and narrows the result. The results are those of the float32 layer on the widened inputs, rounded once per output
to binary16 (``float16.narrow``, nearest-even), bit for bit. Planes and units are shared with the engine's helpers
as the float32 layers share theirs (``float_sharing``; the gang for native entries).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..engine import gang
from ..frontend import chw_pooling, float_sharing
from ..frontend.chw_chunks import chunk_driver
from ..support import jit, native
from ..support.jit import kernel
from . import float_layers, pooling
from .activation import _CODES, FAST_FLOAT32, _flat_pair, _parameters, formula
from .float16 import narrow, widen
from .quantize import quantize

UNIT = 8192
"""Values an activation unit converts and evaluates (the units the helpers share)."""
ACTIVATION_COST = 2
"""A value's cost in a convolution multiply-add's time (the sharing thresholds weigh work in those)."""


# -- pooling -------------------------------------------------------------------------------------------------------
@kernel
def _pool_planes(x, out, average, kh, kw, sy, sx, top, left, p0, p1):
    """Planes ``[p0, p1)`` of the pool of ``x`` into ``out``: binary16 bits (uint16), C-ordered ``[P, H, W]``,
    read and written by the plane kernel's own passes (empty windows give 0.0, as the float32 layer's)."""
    chw_pooling.pool_planes(x, out, average, kh, kw, sy, sx, top, left, np.float32(0.0), p0, p1)


_pool_shares = chunk_driver(_pool_planes)


@kernel
def _pool_planes_shared(x, out, average, kh, kw, sy, sx, top, left, n_planes, n_chunks, counters, wait):
    _pool_shares((x, out, average, kh, kw, sy, sx, top, left), n_planes, n_chunks, counters, wait)


_H3_IN = jit.types.Array(jit.types.uint16, 3, "C", readonly=True)
_H3_OUT = jit.types.Array(jit.types.uint16, 3, "C")
_POOL_TYPES = (_H3_IN, _H3_OUT, jit.BOOL, *(jit.INT,) * 6)


def _geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y) -> tuple:
    return (not max_pool, int(size_y), int(size_x), int(stride_y), int(stride_x), int(pad_y), int(pad_x))


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16)


def _pool_work(out: np.ndarray, geometry: tuple) -> int:
    return out.size * geometry[1] * geometry[2] * pooling.COST_PER_TAP


def bind_pooling(x: np.ndarray, out: np.ndarray, max_pool: bool, size_x: int, size_y: int, pad_x: int, pad_y: int,
                 stride_x: int, stride_y: int) -> Callable[[], None] | None:
    """A runner of the float16 pool of ``x`` into ``out`` (OpenVX order ``[W, H, C, *batch]``, checked by the
    layer's validator); None when the float32 layer would not run on the plane kernel (the exact float64
    average), when either tensor is not packed in OpenVX order, or when they overlap."""
    if not (max_pool or float_layers.chosen()) or x.size == 0 or out.size == 0:
        return None
    src, dst = pooling.planes(x), pooling.planes(out)
    if src is None or dst is None or np.may_share_memory(src, dst):
        return None
    src = _bits(src).view()
    src.flags.writeable = False
    geometry = _geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y)
    return float_sharing.Rows(_pool_planes, _pool_planes_shared, (src, _bits(dst)) + geometry, _POOL_TYPES,
                              dst.shape[0], _pool_work(dst, geometry))


_POOL_BODIES = pooling.plane_bodies(_pool_planes, _pool_shares, np.uint16)


@native.factory
def _pool_entry() -> int:
    return jit.native(_POOL_BODIES[0])


@native.factory
def _pool_helper() -> int:
    return jit.native(_POOL_BODIES[1])


def native_pooling(x: np.ndarray, out: np.ndarray, max_pool: bool, size_x: int, size_y: int, pad_x: int,
                   pad_y: int, stride_x: int, stride_y: int) -> native.Entry | None:
    """:func:`bind_pooling` as a native entry (None where it gives None)."""
    if bind_pooling(x, out, max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y) is None:
        return None
    geometry = _geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y)
    return pooling.native_planes(_bits(pooling.planes(x)), _bits(pooling.planes(out)), geometry, _pool_entry(),
                                 _pool_helper())


# -- activation ----------------------------------------------------------------------------------------------------
_X, _OUT, _COUNTERS = float_sharing.at(0), float_sharing.at(1), float_sharing.at(2)
_A, _B, _MAILBOX, _TASK, _CHUNKS = range(float_sharing.at(3), float_sharing.at(3) + 5)


@functools.cache
def _activation_kernels(code: int) -> tuple:
    """(units, shared, native bodies) of function number ``code``: a constant of each compiled body, so the
    expression folds to the function's own and the loop vectorizes where the function allows."""

    def units(x, out, a, b, u0, u1):
        lo, hi = u0 * UNIT, min(u1 * UNIT, out.size)
        source, target = x[lo:hi], out[lo:hi]  # slices: loops from index 0 vectorize
        for i in range(target.size):
            value = quantize(formula(code, np.float64(widen(source[i])), a, b), 1.0, 0, 0, False)
            target[i] = narrow(np.float32(value))

    unit_kernel = kernel(units, error_model="numpy")
    shares = chunk_driver(unit_kernel)

    def shared(x, out, a, b, n_units, n_chunks, counters, wait):
        shares((x, out, a, b), n_units, n_chunks, counters, wait)

    def lines(code_, block, chunks, wait):
        x = native.c_array(block, _X, np.uint16)[0, 0, 0, 0, 0]
        out = native.c_array(block, _OUT, np.uint16)[0, 0, 0, 0, 0]
        a, b = native.real(block, _A), native.real(block, _B)
        n_units = (out.size + UNIT - 1) // UNIT
        if chunks == 0:
            unit_kernel(x, out, a, b, 0, n_units)
        else:
            shares((x, out, a, b), n_units, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)

    bodies = gang.shared_entry(kernel(lines, error_model="numpy"), gang.nothing_first,
                               (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))
    return unit_kernel, kernel(shared, error_model="numpy"), bodies


_H1_IN = jit.types.Array(jit.types.uint16, 1, "C", readonly=True)
_H1_OUT = jit.types.Array(jit.types.uint16, 1, "C")
_ACTIVATION_TYPES = (_H1_IN, _H1_OUT, jit.FLOAT, jit.FLOAT)


def _activation_operands(x: np.ndarray, out: np.ndarray, function: str, a: float, b: float) -> tuple | None:
    """(code, flat input bits read-only, flat output bits, a, b), or None where this route does not apply: the
    functions the float32 layer computes on ``float_activation`` (those keep the widening edges), tensors not
    packed alike, and an input overlapping the output other than as the same memory."""
    if function in FAST_FLOAT32 or function not in _CODES:
        return None
    flat = _flat_pair(x, out)
    if flat is None:
        return None
    src, dst = (_bits(f) for f in flat)
    if np.may_share_memory(src, dst) and not (src.ctypes.data == dst.ctypes.data and src.strides == dst.strides):
        return None
    src = src.view()
    src.flags.writeable = False
    return (_CODES[function], src, dst, *_parameters(function, a, b))


def bind_activation(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0,
                    b: float = 0.0) -> Callable[[], None] | None:
    """A runner of the float16 activation of ``x`` into ``out`` (same shape, checked by the layer's validator);
    None where :func:`_activation_operands` gives None."""
    found = _activation_operands(x, out, function, a, b)
    if found is None:
        return None
    code, src, dst, a, b = found
    units, shared, _ = _activation_kernels(code)
    n_units = (dst.size + UNIT - 1) // UNIT
    return float_sharing.Rows(units, shared, (src, dst, a, b), _ACTIVATION_TYPES, n_units,
                              dst.size * ACTIVATION_COST)


@native.factory
def _activation_entry(code: int, helper: bool) -> int:
    return jit.native(_activation_kernels(code)[2][int(helper)])


def native_activation(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0,
                      b: float = 0.0) -> native.Entry | None:
    """:func:`bind_activation` as a native entry (None where it gives None)."""
    found = _activation_operands(x, out, function, a, b)
    if found is None:
        return None
    code, src, dst, a, b = found
    n_units = (dst.size + UNIT - 1) // UNIT
    task = gang.NativeTask(n_units, dst.size * ACTIVATION_COST >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = float_sharing.block_of(src, dst, task.counters, float(a), float(b), *task.words())
    return native.Entry(_activation_entry(code, False), words, keep + task.finish(_activation_entry(code, True), words))
