"""A small CNN through the OpenVX C API (``openvx_nn.vx``: libopenvx.so's entry points called C-style), and as ONNX.

The network (CIFAR-sized: three 3x3 convolutions with ReLU and 2x2 max pooling, a fully connected layer to
10 logits) is held in Q7.8 (``VX_TYPE_INT16``, fixed point position 8: the NN extension's 16-bit format)
with weights that are exact Q7.8 values, so the ONNX float model computes on the very same numbers and
differs only by our per-layer rounding to Q7.8::

    from benchmarks.vx_models import small_cnn, VXGraph, onnx_small_cnn
    net = small_cnn(size=32)
    graph = VXGraph(net)              # tensors, nodes, verified graph
    logits = graph.run(image)         # image float [3, size, size] -> float [10]
    graph.release()

Layouts: an OpenVX tensor lists its dims fastest first, so dims (W, H, C) hold a C-order NumPy array of
shape (C, H, W) and convolution weights (kw, kh, c_in, c_out) one of ONNX's (c_out, c_in, kh, kw).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmarks.models import serialize

Q = 8  # fixed point position of every tensor
CHANNELS = (16, 32, 64)


@dataclass(frozen=True)
class SmallCNN:
    """Weights as float32 holding exact Q7.8 values; ``convs`` are (weights [out, in, 3, 3], bias [out])."""

    size: int
    convs: list[tuple[np.ndarray, np.ndarray]]
    fc: tuple[np.ndarray, np.ndarray]
    name: str = "OpenVX C API small CNN"

    def macs(self) -> int:
        total, size = 0, self.size
        for w, _ in self.convs:
            total += size * size * w.size
            size //= 2
        return total + self.fc[0].size


def to_q78(x: np.ndarray) -> np.ndarray:
    """Round to the nearest Q7.8 value (saturated), as float32."""
    return (np.clip(np.round(np.asarray(x, np.float64) * 2 ** Q), -32768, 32767) / 2 ** Q).astype(np.float32)


def small_cnn(size: int = 32, classes: int = 10, seed: int = 0) -> SmallCNN:
    """conv 3x3 pad 1 + ReLU + max pool 2x2, three times (16, 32, 64 channels), then fully connected to
    ``classes``; ``size`` must be a multiple of 8."""
    if size % 8:
        raise ValueError(f"size must be a multiple of 8, got {size}")
    rng = np.random.default_rng(seed)
    convs, c_in = [], 3
    for c_out in CHANNELS:
        w = rng.standard_normal((c_out, c_in, 3, 3)) * np.sqrt(2.0 / (9 * c_in))
        convs.append((to_q78(w), to_q78(rng.normal(0, 0.1, c_out))))
        c_in = c_out
    n_in = c_in * (size // 8) ** 2
    fc = (to_q78(rng.standard_normal((classes, n_in)) / np.sqrt(n_in)), to_q78(rng.normal(0, 0.1, classes)))
    return SmallCNN(size, convs, fc, f"OpenVX C API small CNN Q7.8 {size}²")


def sample_images(net: SmallCNN, count: int, seed: int = 1) -> list[np.ndarray]:
    """Images [3, size, size] in [-1, 1], exact Q7.8 values."""
    rng = np.random.default_rng(seed)
    return [to_q78(rng.uniform(-1, 1, (3, net.size, net.size))) for _ in range(count)]


def onnx_small_cnn(net: SmallCNN) -> bytes:
    """``net`` as float32 ONNX: input ``x`` [1, 3, size, size], output ``y`` [1, classes]."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, x = [], [], "x"
    for i, (w, b) in enumerate(net.convs):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[3, 3], pads=[1] * 4),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"]),
                  helper.make_node("MaxPool", [f"r{i}"], [f"p{i}"], kernel_shape=[2, 2], strides=[2, 2])]
        x = f"p{i}"
    inits += [numpy_helper.from_array(net.fc[0], "fw"), numpy_helper.from_array(net.fc[1], "fb")]
    nodes += [helper.make_node("Flatten", [x], ["flat"]), helper.make_node("Gemm", ["flat", "fw", "fb"], ["y"], transB=1)]
    classes = net.fc[0].shape[0]
    return serialize(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, net.size, net.size])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes])], inits, net.name)


class VXGraph:
    """``net`` as one verified OpenVX graph built with the C API: vxConvolutionLayer, vxActivationLayer,
    vxPoolingLayer, vxFullyConnectedLayer on Q7.8 tensors (virtual in between)."""

    def __init__(self, net: SmallCNN):
        from openvx_nn import vx
        self.vx, self.ffi = vx, vx.ffi
        self.context = vx.vxCreateContext()
        self._check(vx.vxGetStatus(self.ffi.cast("vx_reference", self.context)), "vxCreateContext")
        self.graph = vx.vxCreateGraph(self.context)
        self.tensors, self.nodes = [], []
        self.input = self._tensor(np.zeros((3, net.size, net.size), np.float32))
        x, size = self.input, net.size
        params = self.ffi.new("vx_nn_convolution_params_t *")
        params.padding_x = params.padding_y = 1
        params.overflow_policy = vx.VX_CONVERT_POLICY_SATURATE
        params.rounding_policy = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
        params.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
        for w, b in net.convs:
            c = w.shape[0]
            conv, act = self._virtual((size, size, c)), self._virtual((size, size, c))
            pooled = self._virtual((size // 2, size // 2, c))
            self._node(vx.vxConvolutionLayer(self.graph, x, self._tensor(w), self._tensor(b), params,
                                             self.ffi.sizeof("vx_nn_convolution_params_t"), conv), "vxConvolutionLayer")
            self._node(vx.vxActivationLayer(self.graph, conv, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, act),
                       "vxActivationLayer")
            self._node(vx.vxPoolingLayer(self.graph, act, vx.VX_NN_POOLING_MAX, 2, 2, 0, 0,
                                         vx.VX_NN_DS_SIZE_ROUNDING_FLOOR, pooled), "vxPoolingLayer")
            x, size = pooled, size // 2
        self.result = np.zeros(net.fc[0].shape[0], np.int16)
        self.output = self._tensor(self.result)
        self._node(vx.vxFullyConnectedLayer(self.graph, x, self._tensor(net.fc[0]), self._tensor(net.fc[1]),
                                            vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN,
                                            self.output), "vxFullyConnectedLayer")
        self._check(vx.vxVerifyGraph(self.graph), "vxVerifyGraph")
        self.raw = np.zeros((3, net.size, net.size), np.int16)
        self.scaled = np.zeros(self.raw.shape, np.float32)
        self.input_patch, self.output_patch = self._patch(self.raw), self._patch(self.result)

    def _check(self, status: int, what: str) -> None:
        if status != self.vx.VX_SUCCESS:
            raise RuntimeError(f"{what} failed with status {status}")

    def _node(self, node, what: str) -> None:
        self._check(self.vx.vxGetStatus(self.ffi.cast("vx_reference", node)), what)
        self.nodes.append(node)

    def _dims(self, shape) -> tuple:
        dims = self.ffi.new("vx_size[]", list(reversed(shape)))
        return dims, len(shape)

    def _tensor(self, values: np.ndarray):
        """A Q7.8 tensor of ``values``' shape (reversed into OpenVX's dims), holding them if nonzero."""
        dims, n = self._dims(values.shape)
        tensor = self.vx.vxCreateTensor(self.context, n, dims, self.vx.VX_TYPE_INT16, Q)
        self._check(self.vx.vxGetStatus(self.ffi.cast("vx_reference", tensor)), "vxCreateTensor")
        self.tensors.append(tensor)
        raw = values if values.dtype == np.int16 else np.round(values.astype(np.float64) * 2 ** Q).astype(np.int16)
        self._copy(tensor, self._patch(np.ascontiguousarray(raw)), self.vx.VX_WRITE_ONLY)
        return tensor

    def _virtual(self, shape):
        dims, n = self._dims(shape[::-1])  # shape given as (W, H, C): dims in that order
        tensor = self.vx.vxCreateVirtualTensor(self.graph, n, dims, self.vx.VX_TYPE_INT16, Q)
        self._check(self.vx.vxGetStatus(self.ffi.cast("vx_reference", tensor)), "vxCreateVirtualTensor")
        self.tensors.append(tensor)
        return tensor

    def _patch(self, array: np.ndarray) -> tuple:
        """vxCopyTensorPatch's box arguments for the whole of ``array`` (made once, as a C program's would be)."""
        n = array.ndim
        return (n, self.ffi.new("vx_size[]", n), self.ffi.new("vx_size[]", list(reversed(array.shape))),
                self.ffi.new("vx_size[]", list(reversed(array.strides))), self.ffi.from_buffer(array))

    def _copy(self, tensor, patch: tuple, usage: int) -> None:
        self._check(self.vx.vxCopyTensorPatch(tensor, *patch, usage, self.vx.VX_MEMORY_TYPE_HOST), "vxCopyTensorPatch")

    def run(self, image: np.ndarray) -> np.ndarray:
        """Logits (float) of ``image`` [3, size, size] (float, rounded to Q7.8): write, process, read."""
        np.multiply(image, 2.0 ** Q, out=self.scaled)
        np.rint(self.scaled, out=self.scaled)
        np.copyto(self.raw, self.scaled, casting="unsafe")
        self._copy(self.input, self.input_patch, self.vx.VX_WRITE_ONLY)
        self._check(self.vx.vxProcessGraph(self.graph), "vxProcessGraph")
        self._copy(self.output, self.output_patch, self.vx.VX_READ_ONLY)
        return self.result / 2.0 ** Q

    def release(self) -> None:
        vx, ffi = self.vx, self.ffi
        for node in self.nodes:
            vx.vxReleaseNode(ffi.new("vx_node *", node))
        for tensor in self.tensors:
            vx.vxReleaseTensor(ffi.new("vx_tensor *", tensor))
        vx.vxReleaseGraph(ffi.new("vx_graph *", self.graph))
        vx.vxReleaseContext(ffi.new("vx_context *", self.context))
        self.nodes, self.tensors = [], []
