"""A depthwise layer of U8 or S8 maps in OpenVX order, on the uint8 depthwise kernel NNAPI's layers run on.

The NN extension has no grouped convolution: a depthwise layer is written as one single-map convolution per map
(``core.map_groups`` merges them). Their sums are those of ``frontend.quant8_depthwise`` with the weights' zero
point 0 and a scale ratio of ``2**k``: exact int32 sums of exact products, the bias added in int64, then
``engine.nhwc.scale_lane`` with ``m = 2**30`` and ``shift = 30 - k``, which multiplies by ``2**k`` exactly (the
rounding term stays below one unit, for negative sums too) and clamps. U8 data has zero points 0 and the clamp
is 0..255. S8 data enters as its bits ``xor 0x80`` (``s + 128`` as uint8) with zero points 128, so the kernel
reads ``s`` and writes ``clamp(v * 2**k, -128, 127) + 128``, turned back by the same ``xor``. That is the
fixed-point contract's result (``docs/fixed-point.md``) when

- every tensor is U8, or every one S8, and the overflow policy saturates (the kernel cannot wrap);
- the sum needs no shift to meet the bias (``fpp_x + fpp_w >= fpp_b``, or no bias) and the output shift
  ``fpp_x + fpp_w - fpp_out`` is ``-k <= 0``: an exact left shift, so the rounding policy plays no part (a right
  shift would round half up, not as either policy);
- no dilation, and a bias per map or none.

:func:`exact_shift` says whether a layer is such; :class:`Depthwise` binds it.
The kernel reads ``[N, H, W, C]`` while an OpenVX tensor ``[W, H, C, *batch]`` holds ``[N, C, H, W]``: each call
transposes the input's planes into pixels and the result back (8x8 block transposes, ``engine.block_transpose``).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import types

from ..engine.block_transpose import SIDE, transpose_region
from ..frontend import quant8_depthwise
from ..support import jit, native
from ..support.jit import kernel

MAX_LEFT_SHIFT = 30
"""The largest ``k`` (output scale ``2**k``) the kernel's ``shift = 30 - k`` takes."""


def exact_shift(dtype, saturate: bool, taps: int, has_bias: bool, fpp_x: int, fpp_w: int, fpp_b: int,
                fpp_out: int) -> int | None:
    """``k`` (the result is ``(sum + bias * 2**bias_shift) * 2**k``, saturated) for a layer the kernel computes
    bit for bit (module doc), else None."""
    products = fpp_x + fpp_w
    if np.dtype(dtype) not in (np.uint8, np.int8) or not saturate or taps > quant8_depthwise.MAX_TAPS:
        return None
    if has_bias and fpp_b > products:
        return None
    k = fpp_out - products
    return k if 0 <= k <= MAX_LEFT_SHIFT else None


@kernel
def _relayout(planes, pixels, into_pixels, flip):
    """``pixels[n, p, c] = planes[n, c, p] ^ flip`` (``into_pixels``) or back, uint8, both C-contiguous (going
    back, ``pixels`` is scratch and is flipped in place first)."""
    images, channels, count = planes.shape
    if flip != 0 and not into_pixels:
        flat = pixels.reshape(-1)
        for i in range(flat.size):
            flat[i] ^= flip
    for n in range(images):
        a = np.int64(planes[n].ctypes.data)
        b = np.int64(pixels[n].ctypes.data)
        if channels >= SIDE and count >= SIDE:
            if into_pixels:
                transpose_region(a, count, b, channels, channels, count, 1)
            else:
                transpose_region(b, channels, a, count, count, channels, 1)
        else:
            for c in range(channels):
                for p in range(count):
                    if into_pixels:
                        pixels[n, p, c] = planes[n, c, p]
                    else:
                        planes[n, c, p] = pixels[n, p, c]
    if flip != 0 and into_pixels:
        flat = pixels.reshape(-1)
        for i in range(flat.size):
            flat[i] ^= flip


_U8 = types.Array(types.uint8, 3, "C")


@functools.cache
def _relayout_call():
    return jit.entry(_relayout, _U8, _U8, jit.BOOL, jit.INT)


@native.factory
def _native_relayout() -> int:
    def entry(block):
        planes = native.c_array(block, 0, np.uint8)[0, 0, 0]
        pixels = native.c_array(block, native.ARRAY_WORDS, np.uint8)[0, 0, 0]
        _relayout(planes, pixels, block[2 * native.ARRAY_WORDS] != 0, block[2 * native.ARRAY_WORDS + 1])
        return 0
    return jit.native(entry)


def _six(a: np.ndarray) -> np.ndarray:
    return a.reshape((1,) * (native.RANK - a.ndim) + a.shape)


class Depthwise:
    """A depthwise layer of C maps planned once: ``w`` the maps' windows ``[kx, ky, C]`` (map c's window is
    ``w[:, :, c]``), ``bias`` ``[C]`` (already aligned to the products' position) or None, ``k`` from
    :func:`exact_shift`, ``pad`` and ``stride`` ``(x, y)``, ``x_shape`` and ``out_shape`` the OpenVX dims of the
    whole input and output ``[W, H, C, *batch]``."""

    def __init__(self, w: np.ndarray, bias: np.ndarray | None, k: int, pad: tuple[int, int],
                 stride: tuple[int, int], x_shape: tuple[int, ...], out_shape: tuple[int, ...]):
        images = int(np.prod(x_shape[3:], dtype=np.int64))
        self.x_pixels = (images, x_shape[1], x_shape[0], x_shape[2])  # [N, H, W, C]
        self.out_pixels = (images, out_shape[1], out_shape[0], out_shape[2])
        nnapi_w = np.ascontiguousarray(np.transpose(w, (1, 0, 2))[None]).astype(np.int32)  # [1, KY, KX, C]
        self.flip = 0x80 if w.dtype == np.int8 else 0
        zero = self.flip  # S8 values enter as s + 128 (module doc)
        self.layer = quant8_depthwise.prepare_depthwise(
            nnapi_w, bias, self.out_pixels, (pad[0], pad[0], pad[1], pad[1]), (stride[0], stride[1]), 1, 0,
            (1.0, zero), (1.0, 0), (2.0 ** -k, zero))

    def _sides(self, x: np.ndarray, out: np.ndarray):
        """(input planes, input pixels, output pixels, output planes) as C-contiguous 3-D arrays, or None when
        ``x`` or ``out`` is not a whole contiguous OpenVX-order array."""
        if not (x.T.flags.c_contiguous and out.T.flags.c_contiguous) or np.may_share_memory(x, out):
            return None
        n, h, w, c = self.x_pixels
        _, oh, ow, k = self.out_pixels
        x_planes = x.T.reshape(n, c, h * w).view(np.uint8)
        out_planes = out.T.reshape(n, k, oh * ow).view(np.uint8)
        return (x_planes, np.empty((n, h * w, c), np.uint8), np.empty((n, oh * ow, k), np.uint8), out_planes)

    def bind(self, x: np.ndarray, out: np.ndarray) -> Callable[[], None] | None:
        """A no-argument call computing ``out`` from ``x`` (OpenVX order), or None (:meth:`_sides`)."""
        sides = self._sides(x, out)
        if sides is None:
            return None
        x_planes, x_pixels, out_pixels, out_planes = sides
        layer = self.layer.attach(x_pixels.reshape(self.x_pixels), out_pixels.reshape(self.out_pixels))
        relayout, flip = _relayout_call(), self.flip

        def run() -> None:
            relayout(x_planes, x_pixels, True, flip)
            layer()
            relayout(out_planes, out_pixels, False, flip)
        return run

    def native(self, x: np.ndarray, out: np.ndarray) -> native.Entry | None:
        """:meth:`bind` as one native entry (input relayout, the kernel, output relayout), or None."""
        sides = self._sides(x, out)
        if sides is None:
            return None
        x_planes, x_pixels, out_pixels, out_planes = sides
        layer = self.layer.native(x_pixels.reshape(self.x_pixels), out_pixels.reshape(self.out_pixels))
        if layer is None:
            return None
        parts = []
        for planes, pixels, into in ((x_planes, x_pixels, 1), (out_planes, out_pixels, 0)):
            words, keep = native.pack(_six(planes), _six(pixels), into, self.flip)
            parts.append(native.Entry(_native_relayout(), words, keep))
        return native.sequence([parts[0], layer, parts[1]])
