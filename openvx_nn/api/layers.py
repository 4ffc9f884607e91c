"""The NN extension's layers as :class:`Graph` methods."""
from __future__ import annotations

import math

import numpy as np

from .. import vx
from ..operations.geometry import effective_kernel, output_size
from .arguments import Constant, integer, pair, real
from .formats import ACTIVATION, DS_ROUNDING, NORMALIZATION, OVERFLOW, POOLING, ROUNDING, choose
from .reference import ffi
from .tensor import Tensor

NULL = ffi.NULL


def _h(tensor):
    return NULL if tensor is None else tensor.handle


class LayerMethods:
    """Convolution, deconvolution, fully connected, pooling, softmax, LRN,
    activation and ROI pooling.  Every method returns the output tensor.

    ``weights``, ``biases`` and ``rois`` may be NumPy arrays or nested lists
    of raw values: they become constant tensors of the input's data type and
    fixed point position, owned by the graph."""

    def convolution(self, x: Tensor, weights: Constant, biases: Constant | None = None, out: Tensor | None = None, *,
                    padding=(0, 0), dilation=(0, 0), stride=(1, 1), overflow: str = "saturate",
                    rounding: str = "nearest_even", ds_rounding: str = "floor",
                    fixed_point_position: int | None = None) -> Tensor:
        """vxConvolutionLayer.  Weights are [kx, ky, #IFM, #OFM]; ``stride`` only
        sizes an inferred output (OpenVX infers the stride from the output size)."""
        x, out = self._inputs(x, out)
        weights, biases = self._constant(weights, "weights", x), self._constant(biases, "biases", x, optional=True)
        pad, dil, step = pair(padding, "padding"), pair(dilation, "dilation"), pair(stride, "stride", 1)
        ceiling = choose(DS_ROUNDING, ds_rounding, "ds_rounding") == vx.VX_NN_DS_SIZE_ROUNDING_CEILING
        shape = None
        xs, ws = x.known()[0], weights.known()[0]
        if xs and ws and len(xs) >= 3 and len(ws) == 4:
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

    def deconvolution(self, x: Tensor, weights: Constant, biases: Constant | None = None, out: Tensor | None = None, *,
                      padding=(0, 0), a=(0, 0), upscale=None, overflow: str = "saturate",
                      rounding: str = "nearest_even", fixed_point_position: int | None = None) -> Tensor:
        """vxDeconvolutionLayer; ``upscale`` (default a + 1) only sizes an inferred output."""
        x, out = self._inputs(x, out)
        weights, biases = self._constant(weights, "weights", x), self._constant(biases, "biases", x, optional=True)
        pad, extra = pair(padding, "padding"), pair(a, "a")
        up = pair(upscale, "upscale", 1) if upscale is not None else (extra[0] + 1, extra[1] + 1)
        shape = None
        xs, ws = x.known()[0], weights.known()[0]
        if xs and ws and len(xs) >= 3 and len(ws) == 4:
            sizes = tuple((xs[i] - 1) * up[i] - 2 * pad[i] + ws[i] + extra[i] for i in (0, 1))
            shape = sizes + (ws[3],) + tuple(xs[3:])
        out = self._output(out, shape, x, fixed_point_position)
        params = ffi.new("vx_nn_deconvolution_params_t *", {
            "padding_x": pad[0], "padding_y": pad[1], "overflow_policy": choose(OVERFLOW, overflow, "overflow"),
            "rounding_policy": choose(ROUNDING, rounding, "rounding"), "a_x": extra[0], "a_y": extra[1]})
        self._node("vxDeconvolutionLayer", "deconvolution_layer", {0: x, 1: weights, 2: biases, 4: out},
                   x.handle, weights.handle, _h(biases), params, ffi.sizeof(params[0]), out.handle)
        return out

    def fully_connected(self, x: Tensor, weights: Constant, biases: Constant | None = None, out: Tensor | None = None,
                        *, overflow: str = "saturate", rounding: str = "nearest_even",
                        fixed_point_position: int | None = None) -> Tensor:
        """vxFullyConnectedLayer.  Weights are [#IFM, #OFM] (or [kx, ky, #IFM_maps, #OFM]: leading dims
        multiplying to #IFM); the input is [#IFM, #batches...] or [width, height, #IFM, #batches...]."""
        x, out = self._inputs(x, out)
        weights, biases = self._constant(weights, "weights", x), self._constant(biases, "biases", x, optional=True)
        shape = None
        xs, ws = x.known()[0], weights.known()[0]
        if xs and ws and len(ws) >= 2:
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
        x, out = self._inputs(x, out)
        win, pad = pair(size, "size", 1), pair(padding, "padding")
        step = pair(stride, "stride", 1) if stride is not None else win
        ceiling = choose(DS_ROUNDING, ds_rounding, "ds_rounding") == vx.VX_NN_DS_SIZE_ROUNDING_CEILING
        xs = x.known()[0]
        shape = None
        if xs and len(xs) >= 2:
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
        x, out = self._inputs(x, out)
        out = self._output(out, x.known()[0], x, fixed_point_position)
        self._node("vxSoftmaxLayer", "softmax_layer", {0: x, 1: out}, x.handle, out.handle)
        return out

    def local_response_normalization(self, x: Tensor, out: Tensor | None = None, *, kind: str = "across_maps",
                                     size: int = 5, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0,
                                     fixed_point_position: int | None = None) -> Tensor:
        """vxLocalResponseNormalizationLayer (``kind`` 'same_map' or 'across_maps')."""
        x, out = self._inputs(x, out)
        size = integer(size, "size", 1)
        alpha, beta, bias = real(alpha, "alpha"), real(beta, "beta"), real(bias, "bias")
        out = self._output(out, x.known()[0], x, fixed_point_position)
        self._node("vxLocalResponseNormalizationLayer", "local_response_normalization_layer", {0: x, 6: out},
                   x.handle, choose(NORMALIZATION, kind, "normalization"), size, alpha, beta, bias, out.handle)
        return out

    def activation(self, x: Tensor, function: str = "relu", a: float = 0.0, b: float = 0.0,
                   out: Tensor | None = None, *, fixed_point_position: int | None = None) -> Tensor:
        """vxActivationLayer; ``function`` is one of logistic, tanh, relu, brelu,
        softrelu, abs, square, sqrt, linear."""
        x, out = self._inputs(x, out)
        a, b = real(a, "a"), real(b, "b")
        out = self._output(out, x.known()[0], x, fixed_point_position)
        self._node("vxActivationLayer", "activation_layer", {0: x, 4: out}, x.handle,
                   choose(ACTIVATION, function, "activation function"), a, b, out.handle)
        return out

    def relu(self, x: Tensor, out: Tensor | None = None, **options) -> Tensor:
        return self.activation(x, "relu", out=out, **options)

    def roi_pooling(self, x: Tensor, rois: Constant, pooled_size=None, out: Tensor | None = None) -> Tensor:
        """vxROIPoolingLayer (max); ``rois`` are [4, #rois(, #batches)] integer pixel
        corners; give ``pooled_size`` (w, h) or ``out``."""
        x, out = self._inputs(x, out)
        rois = self._constant(rois, "rois", None, default=np.int32)
        if out is None:
            if pooled_size is None:
                raise ValueError("roi_pooling needs pooled_size=(width, height) or out=")
            xs, rs = x.known()[0], rois.known()[0]
            w, h = pair(pooled_size, "pooled_size", 1)
            shape = (w, h, xs[2], rs[1]) + tuple(xs[3:]) if xs and rs and len(xs) >= 3 and len(rs) >= 2 else None
            out = self._output(None, shape, x)
        params = ffi.new("vx_nn_roi_pool_params_t *", {"pool_type": vx.VX_NN_POOLING_MAX})
        self._node("vxROIPoolingLayer", "roi_pooling_layer", {0: x, 1: rois, 3: out}, x.handle, rois.handle,
                   params, ffi.sizeof(params[0]), out.handle)
        return out

    lrn = local_response_normalization
