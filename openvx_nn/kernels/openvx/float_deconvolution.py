"""The float32 deconvolution layer of OpenVX on the float engine, as convolutions of its output phases.

A deconvolution of upscale ``(ux, uy)`` splits into ``ux * uy`` output phases (``deconvolution.py``'s module doc):
phase ``(px, py)`` holds outputs ``(px + ux * qx, py + uy * qy)``, each a stride-1 correlation of the input with
the sub-kernel ``w[m0x::ux, m0y::uy]`` read from input ``(qx + offset_x, qy + offset_y)``. The plan (made once, at
verify, by ``frontend.transposed_phases``, the route NNAPI's TRANSPOSE_CONV_2D runs on too: this layer is that
one with its kernel flipped) packs each phase's sub-kernel for ``frontend.float_convolution`` and runs phases of one
geometry (sub-kernel extent, offsets and output extent) as one engine convolution whose output channels are the
phases' maps one after the other; ``frontend.phase_scatter`` then places them at their strided places in the
planar output. With a
``k x k`` kernel of stride ``k`` and no padding every phase has the same 1x1 geometry: one 1x1 product to
``k * k * K`` channels, then depth-to-space. The input is copied into channels-last once per call and read by
every phase.

Arithmetic: per output, float32 products of the taps that meet an input sample, summed with fused multiply-adds
from +0.0 in the order sub-kernel row ``my``, then ``mx``, then input channel ``c`` (ascending, as the kernel's own
indices), then ``+ bias`` once; taps on inserted zeros add nothing, taps on the padding of a phase's input add
``w * 0`` (so an infinite weight there makes the output NaN, as in ``float_layers``). Float16 layers run this in
float32 and round each output once (``operations/openvx/float16_edges``).

Fits (:func:`fits`): float32, chosen (``float_layers.chosen``), a bias per output map or none, the whole input
read (no compatibility bound), every phase with a tap (kernel at least the upscale) and none that starts past the
input's first sample (``offset <= 0``: padding that crops at most ``kernel - 1``). Other layers keep
``engine.correlation``'s route.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..frontend import chw_layout, transposed_phases
from ..support import native
from . import float_layers
from .deconvolution import phase_split


def _geometry(kernel: int, pad: int, upscale: int, size_in: int, size_out: int) -> list[tuple[int, int, int, int]]:
    """``(phase, first tap, taps, offset)`` along one axis for every phase that has outputs."""
    return [(phase, m0, len(range(m0, kernel, upscale)), offset)
            for phase, m0, offset in phase_split(kernel, pad, upscale, size_out)]


def fits(x_shape: tuple, w_shape: tuple, bias_shape: tuple | None, out_shape: tuple, pads: tuple[int, int],
         upscales: tuple[int, int], bounds: tuple, dtype) -> bool:
    """Whether a deconvolution layer takes the float engine (module doc)."""
    if np.dtype(dtype) != np.float32 or not float_layers.chosen() or not 3 <= len(x_shape) <= 6:
        return False
    if bias_shape is not None and tuple(bias_shape) != (w_shape[3],):
        return False
    if any(b is not None and b < x_shape[i] for i, b in enumerate(bounds)):
        return False
    if int(np.prod(x_shape)) == 0 or int(np.prod(out_shape)) == 0:
        return False
    for axis in (0, 1):
        phases = _geometry(w_shape[axis], pads[axis], upscales[axis], x_shape[axis], out_shape[axis])
        if any(taps == 0 or offset > 0 for _, _, taps, offset in phases):
            return False
    return True


class Deconvolution:
    """A float32 deconvolution planned on the engine (``frontend.transposed_phases``: phases grouped by geometry,
    each group's sub-kernels packed once); :meth:`bind` and :meth:`native` tie it to the layer's arrays."""

    def __init__(self, w: np.ndarray, pads: tuple[int, int], upscales: tuple[int, int], x_shape: tuple,
                 out_shape: tuple):
        # OpenVX's [kx, ky, C, K] correlates the zero-inserted input; flipped, it is the scattering [K, ky, kx, C]
        scattering = w[::-1, ::-1].transpose(3, 1, 0, 2)
        self.plan = transposed_phases.TransposedPhases(scattering, (pads[1], pads[0]), (upscales[1], upscales[0]),
                                                       (x_shape[1], x_shape[0]), (out_shape[1], out_shape[0]))

    @classmethod
    def scattering(cls, filt: np.ndarray, offset: tuple[int, int], strides: tuple[int, int], x_shape: tuple,
                   out_shape: tuple) -> Deconvolution:
        """The same on OpenVX-order tensors from a scattering filter ``[O, kh, kw, C]`` (input pixel ``(y, x)``
        adds to output ``(y * sy - top + ky, x * sx - left + kx)``; ``offset`` ``(top, left)``, ``strides``
        ``(sy, sx)``): CoreML's one-group deconvolution."""
        layer = cls.__new__(cls)
        layer.plan = transposed_phases.TransposedPhases(filt, offset, strides, (x_shape[1], x_shape[0]),
                                                        (out_shape[1], out_shape[0]))
        return layer

    @staticmethod
    def _plain(layouts, clamp, residual) -> None:
        if any(layouts) or clamp is not None or residual is not None:
            raise ValueError("a deconvolution on the float engine takes planar tensors and no fused epilogue")

    def bind(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray, layouts: tuple[bool, bool] = (False, False),
             clamp: tuple[float, float] | None = None, residual: np.ndarray | None = None) -> Callable[[], None]:
        """A no-argument call computing ``out`` from ``x`` (read at each call) and ``bias`` (read now, packed with the
        plan's phases: bind again after it changes), in OpenVX order."""
        self._plain(layouts, clamp, residual)
        n, c, h, w = float_layers._items(x.shape)
        xn = np.empty((n, h, w, c), np.float32)
        x4, out4 = float_layers._nchw(x), float_layers._nchw(out)
        planar = out4 if out4 is not None else np.empty(float_layers._items(out.shape), np.float32)
        into = chw_layout.bind(True, x4, xn) if x4 is not None else None
        run = self.plan.bind(xn, bias, planar, False)

        def call() -> None:
            if into is not None:
                into()
            else:
                xn[...] = x.T.reshape(n, c, h, w).transpose(0, 2, 3, 1)
            run()
            if out4 is None:
                out.T[...] = planar.reshape(out.T.shape)
        return call

    def native(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
               layouts: tuple[bool, bool] = (False, False), clamp: tuple[float, float] | None = None,
               residual: np.ndarray | None = None) -> native.Entry | None:
        """:meth:`bind` as one native entry; None when ``x`` or ``out`` is a strided view or they overlap."""
        self._plain(layouts, clamp, residual)
        x4, out4 = float_layers._nchw(x), float_layers._nchw(out)
        if x4 is None or out4 is None or np.may_share_memory(x, out):
            return None
        n, c, h, w = float_layers._items(x.shape)
        xn = np.empty((n, h, w, c), np.float32)
        steps = self.plan.native_steps(xn, bias, out4, False)
        parts = [chw_layout.native_layout(True, x4, xn)] + (steps or [None])
        if any(p is None for p in parts):
            return None
        whole = native.sequence(parts)
        return native.Entry(whole.address, whole.block, whole.keep + tuple(k for p in parts for k in p.keep))
