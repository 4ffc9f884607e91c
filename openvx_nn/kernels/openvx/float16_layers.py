"""Pooling and activation layers on binary16 (``VX_TYPE_FLOAT16``) tensors read and written in the kernel's own pass.

Convolution and deconvolution layers on the float engine convert in their layout copies instead
(:func:`engine_copies`).

Both layers move little arithmetic per value, so widening a whole float16 input to float32 first and narrowing a
whole output after (``float16_edges``) costs more than the layer. Here the float32 kernel itself runs on the
binary16 tensors: pooling is ``chw_pooling.pool_planes`` (the float32 layer's plane kernel) on binary16 planes,
its window passes widening the input as they load it and narrowing each output as they store it; an activation
the float32 layer computes exactly (relu, brelu, abs, square, sqrt, linear) is ``float_activation``'s loop of the
function in its binary16 mode, widening each value as it loads it and narrowing each result as it stores it (relu,
brelu and abs select on the binary16 bits instead, in integer lanes: no conversion at all). The results are those of the float32 layer on the widened inputs, rounded once per output
to binary16 (``float16.narrow``, nearest-even), bit for bit. Planes and units are shared with the engine's helpers
as the float32 layers share theirs (``float_sharing``; the gang for native entries).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..frontend import float_activation, float_sharing
from ..support import jit, native
from . import float_layers, pooling
from .activation import EXACT_FLOAT32, _parameters

# -- pooling: the float32 layer's plane kernel (``pooling.float_planes``) on binary16 planes ----------------------
_H3_IN = jit.types.Array(jit.types.uint16, 3, "C", readonly=True)
_H3_OUT = jit.types.Array(jit.types.uint16, 3, "C")
_POOL_TYPES = (_H3_IN, _H3_OUT, jit.BOOL, *(jit.INT,) * 6)


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
    geometry = pooling.float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y)
    return float_sharing.Rows(pooling.float_planes, pooling.float_planes_shared, (src, _bits(dst)) + geometry,
                              _POOL_TYPES, dst.shape[0], _pool_work(dst, geometry))


def native_pooling(x: np.ndarray, out: np.ndarray, max_pool: bool, size_x: int, size_y: int, pad_x: int,
                   pad_y: int, stride_x: int, stride_y: int) -> native.Entry | None:
    """:func:`bind_pooling` as a native entry (None where it gives None)."""
    if bind_pooling(x, out, max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y) is None:
        return None
    geometry = pooling.float_geometry(max_pool, size_x, size_y, pad_x, pad_y, stride_x, stride_y)
    return pooling.native_planes(_bits(pooling.planes(x)), _bits(pooling.planes(out)), geometry,
                                 pooling.plane_entry(np.uint16), pooling.plane_helper(np.uint16))


# -- activation ----------------------------------------------------------------------------------------------------
def _activation_operands(x: np.ndarray, out: np.ndarray, function: str) -> bool:
    """Whether this route applies: the functions the float32 layer computes exactly on ``float_activation``
    (the others keep the widening edges) on tensors that kernel reads and writes in place (packed alike, apart
    or the same memory)."""
    return function in EXACT_FLOAT32 and x.size > 0 and float_activation.flat_views(x, out) is not None


def bind_activation(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0,
                    b: float = 0.0) -> Callable[[], None] | None:
    """A runner of the float16 activation of ``x`` into ``out`` (same shape, checked by the layer's validator):
    ``float_activation``'s loop of the function in its binary16 mode; None where :func:`_activation_operands`
    says no."""
    if not _activation_operands(x, out, function):
        return None
    return float_activation.bind(x, out, function, *_parameters(function, a, b))


def native_activation(x: np.ndarray, out: np.ndarray, function: str, a: float = 0.0,
                      b: float = 0.0) -> native.Entry | None:
    """:func:`bind_activation` as a native entry (None where it gives None)."""
    if not _activation_operands(x, out, function):
        return None
    return float_activation.native_entry(x, out, function, *_parameters(function, a, b))


# -- convolution, deconvolution: the float engine's layout copies convert ------------------------------------------
def engine_copies(x: np.ndarray, out: np.ndarray) -> bool:
    """Whether a float16 convolution or deconvolution on the float engine runs as the float32 layer on ``x`` and
    ``out`` themselves: both packed in OpenVX order and apart, so that the copy of the input into channels-last
    (``chw_layout``) widens it exactly and the copy of the output back (``chw_layout``, ``phase_scatter``) narrows
    it once to nearest even, where the edges would widen and narrow in whole-tensor passes of their own."""
    return (x.dtype == out.dtype == np.float16 and x.size > 0 and out.size > 0 and x.T.flags.c_contiguous
            and out.T.flags.c_contiguous and not np.may_share_memory(x, out))
