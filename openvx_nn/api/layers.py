"""The NN extension's layers as :class:`Graph` methods."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import vx
from ..operations.geometry import effective_kernel, output_size
from .formats import ACTIVATION, DS_ROUNDING, NORMALIZATION, OVERFLOW, POOLING, ROUNDING, choose
from .reference import ffi

if TYPE_CHECKING:
    from .tensor import Tensor

NULL = ffi.NULL


def _pair(value) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    a, b = value
    return int(a), int(b)


def _h(tensor):
    return NULL if tensor is None else tensor.handle


class LayerMethods:
    """Convolution, deconvolution, fully connected, pooling, softmax, LRN,
    activation and ROI pooling.  Every method returns the output tensor."""

    def convolution(self, x: Tensor, weights: Tensor, biases: Tensor | None = None, out: Tensor | None = None, *,
                    padding=(0, 0), dilation=(0, 0), stride=(1, 1), overflow: str = "saturate",
                    rounding: str = "nearest_even", ds_rounding: str = "floor",
                    fixed_point_position: int | None = None) -> Tensor:
        """vxConvolutionLayer.  Weights are [kx, ky, #IFM, #OFM]; ``stride`` only
        sizes an inferred output (OpenVX infers the stride from the output size)."""
        pad, dil, step = _pair(padding), _pair(dilation), _pair(stride)
        ceiling = choose(DS_ROUNDING, ds_rounding, "ds_rounding") == vx.VX_NN_DS_SIZE_ROUNDING_CEILING
        shape = None
        xs, ws = x.known()[0], weights.known()[0]
        if xs and ws:
            sizes = tuple(output_size(xs[a], pad[a], effective_kernel(ws[a], dil[a]), step[a], ceiling) for a in (0, 1))
            shape = sizes + (ws[3],) + tuple(xs[3:])
        out = self._output(out, shape, x, fixed_point_position)
        params = ffi.new("vx_nn_convolution_params_t *", {
            "padding_x": pad[0], "padding_y": pad[1], "overflow_policy": choose(OVERFLOW, overflow, "overflow"),
            "rounding_policy": choose(ROUNDING, rounding, "rounding"),
            "down_scale_size_rounding": choose(DS_ROUNDING, ds_rounding, "ds_rounding"),
            "dilation_x": dil[0], "dilation_y": dil[1]})
        self._node("vxConvolutionLayer", "convolution_layer", {0: x, 1: weights, 2: biases, 4: out},
                   x.handle, weights.handle, _h(biases), params, ffi.sizeof(params[0]), out.handle)
        return out

    def deconvolution(self, x: Tensor, weights: Tensor, biases: Tensor | None = None, out: Tensor | None = None, *,
                      padding=(0, 0), a=(0, 0), upscale=None, overflow: str = "saturate",
                      rounding: str = "nearest_even", fixed_point_position: int | None = None) -> Tensor:
        """vxDeconvolutionLayer; ``upscale`` (default a + 1) only sizes an inferred output."""
        pad, extra = _pair(padding), _pair(a)
        up = _pair(upscale) if upscale is not None else (extra[0] + 1, extra[1] + 1)
        shape = None
        xs, ws = x.known()[0], weights.known()[0]
        if xs and ws:
            sizes = tuple((xs[i] - 1) * up[i] - 2 * pad[i] + ws[i] + extra[i] for i in (0, 1))
            shape = sizes + (ws[3],) + tuple(xs[3:])
        out = self._output(out, shape, x, fixed_point_position)
        params = ffi.new("vx_nn_deconvolution_params_t *", {
            "padding_x": pad[0], "padding_y": pad[1], "overflow_policy": choose(OVERFLOW, overflow, "overflow"),
            "rounding_policy": choose(ROUNDING, rounding, "rounding"), "a_x": extra[0], "a_y": extra[1]})
        self._node("vxDeconvolutionLayer", "deconvolution_layer", {0: x, 1: weights, 2: biases, 4: out},
                   x.handle, weights.handle, _h(biases), params, ffi.sizeof(params[0]), out.handle)
        return out

    def fully_connected(self, x: Tensor, weights: Tensor, biases: Tensor | None = None, out: Tensor | None = None,
                        *, overflow: str = "saturate", rounding: str = "nearest_even",
                        fixed_point_position: int | None = None) -> Tensor:
        """vxFullyConnectedLayer.  Weights are [#IFM, #OFM] (or [kx, ky, #IFM_maps, #OFM]: leading dims
        multiplying to #IFM); the input is [#IFM, #batches...] or [width, height, #IFM, #batches...]."""
        shape = None
        xs, ws = x.known()[0], weights.known()[0]
        if xs and ws:
            batch = tuple(xs[1:]) if xs[0] == math.prod(ws[:-1]) else tuple(xs[3:])
            shape = (ws[-1],) + batch
        out = self._output(out, shape, x, fixed_point_position)
        self._node("vxFullyConnectedLayer", "fully_connected_layer", {0: x, 1: weights, 2: biases, 5: out},
                   x.handle, weights.handle, _h(biases), choose(OVERFLOW, overflow, "overflow"),
                   choose(ROUNDING, rounding, "rounding"), out.handle)
        return out

    def pooling(self, x: Tensor, out: Tensor | None = None, *, kind: str = "max", size=(2, 2), padding=(0, 0),
                stride=None, ds_rounding: str = "floor") -> Tensor:
        """vxPoolingLayer (``kind`` 'max' or 'avg'); ``stride`` (default: the window
        size) only sizes an inferred output."""
        win, pad = _pair(size), _pair(padding)
        step = _pair(stride) if stride is not None else win
        ceiling = choose(DS_ROUNDING, ds_rounding, "ds_rounding") == vx.VX_NN_DS_SIZE_ROUNDING_CEILING
        xs = x.known()[0]
        shape = None
        if xs:
            shape = tuple(output_size(xs[i], pad[i], win[i], step[i], ceiling) for i in (0, 1)) + tuple(xs[2:])
        out = self._output(out, shape, x)
        self._node("vxPoolingLayer", "pooling_layer", {0: x, 7: out}, x.handle, choose(POOLING, kind, "pooling"),
                   win[0], win[1], pad[0], pad[1], choose(DS_ROUNDING, ds_rounding, "ds_rounding"), out.handle)
        return out

    def max_pool(self, x: Tensor, size=(2, 2), out: Tensor | None = None, **options) -> Tensor:
        return self.pooling(x, out, kind="max", size=size, **options)

    def avg_pool(self, x: Tensor, size=(2, 2), out: Tensor | None = None, **options) -> Tensor:
        return self.pooling(x, out, kind="avg", size=size, **options)

    def softmax(self, x: Tensor, out: Tensor | None = None, *, fixed_point_position: int | None = None) -> Tensor:
        """vxSoftmaxLayer: along dim 0 for 1-D/2-D inputs, dim 2 from 3-D on."""
        out = self._output(out, x.known()[0], x, fixed_point_position)
        self._node("vxSoftmaxLayer", "softmax_layer", {0: x, 1: out}, x.handle, out.handle)
        return out

    def local_response_normalization(self, x: Tensor, out: Tensor | None = None, *, kind: str = "across_maps",
                                     size: int = 5, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0,
                                     fixed_point_position: int | None = None) -> Tensor:
        """vxLocalResponseNormalizationLayer (``kind`` 'same_map' or 'across_maps')."""
        out = self._output(out, x.known()[0], x, fixed_point_position)
        self._node("vxLocalResponseNormalizationLayer", "local_response_normalization_layer", {0: x, 6: out},
                   x.handle, choose(NORMALIZATION, kind, "normalization"), size, alpha, beta, bias, out.handle)
        return out

    def activation(self, x: Tensor, function: str = "relu", a: float = 0.0, b: float = 0.0,
                   out: Tensor | None = None, *, fixed_point_position: int | None = None) -> Tensor:
        """vxActivationLayer; ``function`` is one of logistic, tanh, relu, brelu,
        softrelu, abs, square, sqrt, linear."""
        out = self._output(out, x.known()[0], x, fixed_point_position)
        self._node("vxActivationLayer", "activation_layer", {0: x, 4: out}, x.handle,
                   choose(ACTIVATION, function, "activation function"), a, b, out.handle)
        return out

    def relu(self, x: Tensor, out: Tensor | None = None, **options) -> Tensor:
        return self.activation(x, "relu", out=out, **options)

    def roi_pooling(self, x: Tensor, rois: Tensor, pooled_size=None, out: Tensor | None = None) -> Tensor:
        """vxROIPoolingLayer (max); ``rois`` are [4, #rois(, #batches)] integer pixel
        corners; give ``pooled_size`` (w, h) or ``out``."""
        if out is None:
            if pooled_size is None:
                raise ValueError("roi_pooling needs pooled_size=(width, height) or out=")
            xs, rs = x.known()[0], rois.known()[0]
            w, h = _pair(pooled_size)
            shape = (w, h, xs[2], rs[1]) + tuple(xs[3:]) if xs and rs else None
            out = self._output(None, shape, x)
        params = ffi.new("vx_nn_roi_pool_params_t *", {"pool_type": vx.VX_NN_POOLING_MAX})
        self._node("vxROIPoolingLayer", "roi_pooling_layer", {0: x, 1: rois, 3: out}, x.handle, rois.handle,
                   params, ffi.sizeof(params[0]), out.handle)
        return out

    lrn = local_response_normalization
