"""The MobileNet v1 of ``models.py`` as a ``.tflite`` flatbuffer, for LiteRT (``ai-edge-litert``, optional).

NNAPI's operations are TensorFlow Lite's (same NHWC layouts, filters [out, kh, kw, in], depthwise
[1, kh, kw, C], SAME padding, fused RELU6, uint8 asymmetric quantization with int32 biases of scale
input x filter), so the model is written op for op from the same description with the flatbuffer schema
LiteRT ships (``ai_edge_litert.schema_py_generated``); no TensorFlow is needed::

    from benchmarks.tflite_models import tflite_mobilenet, litert_interpreter
    interpreter = litert_interpreter(tflite_mobilenet(net))          # float32
    interpreter = litert_interpreter(tflite_mobilenet(net, qnet))    # uint8
"""
from __future__ import annotations

import numpy as np

from benchmarks.models import MobileNetV1, same_output
from benchmarks.quant_models import Quantized, QuantMobileNetV1

# TensorFlow Lite schema values (schema.fbs): builtin operators, tensor types, padding, activations
AVERAGE_POOL_2D, CONV_2D, DEPTHWISE_CONV_2D, LOGISTIC = 1, 3, 4, 14
FLOAT32, INT32, UINT8 = 0, 2, 3
SAME, VALID = 0, 1
NONE, RELU6 = 0, 3


class Writer:
    """Tensors, buffers and operators of one subgraph, in the schema's object API (also the tests' writer of
    small ``.tflite`` files)."""

    def __init__(self):
        from ai_edge_litert import schema_py_generated as s
        self.s = s
        self.tensors, self.buffers, self.operators, self.codes = [], [s.BufferT()], [], []

    def tensor(self, shape, kind: int, data: np.ndarray | None = None, q: Quantized | None = None,
               scales=None, zero_points=None, axis: int = 0) -> int:
        """A tensor (a constant with ``data``), quantized per tensor by ``q`` or per channel of ``axis`` by
        ``scales`` and ``zero_points``; returns its index."""
        t = self.s.TensorT()
        t.shape, t.type, t.name = list(shape), kind, f"t{len(self.tensors)}"
        t.buffer = 0
        if data is not None:
            buffer = self.s.BufferT()
            buffer.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
            self.buffers.append(buffer)
            t.buffer = len(self.buffers) - 1
        if q is not None:
            t.quantization = self.s.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [float(q.scale)], [int(q.zero_point)]
        if scales is not None:
            t.quantization = self.s.QuantizationParametersT()
            t.quantization.scale = [float(v) for v in scales]
            t.quantization.zeroPoint = [int(v) for v in (zero_points if zero_points is not None else [0] * len(scales))]
            t.quantization.quantizedDimension = axis
        self.tensors.append(t)
        return len(self.tensors) - 1

    def operator(self, code: int | str, inputs: list[int], output: int | list[int], options_type: int = 0,
                 options=None) -> None:
        """An operator: a builtin code, or a custom operator's name."""
        if code not in self.codes:
            self.codes.append(code)
        op = self.s.OperatorT()
        outputs = output if isinstance(output, list) else [output]
        op.opcodeIndex, op.inputs, op.outputs = self.codes.index(code), inputs, outputs
        op.builtinOptionsType, op.builtinOptions = options_type, options
        self.operators.append(op)

    def conv(self, x: int, depthwise: bool, stride: int, weights: int, bias: int, out: int, activation: int) -> None:
        s = self.s
        options = s.DepthwiseConv2DOptionsT() if depthwise else s.Conv2DOptionsT()
        options.padding, options.strideW, options.strideH = SAME, stride, stride
        options.fusedActivationFunction = activation
        if depthwise:
            options.depthMultiplier = 1
        kind = s.BuiltinOptions.DepthwiseConv2DOptions if depthwise else s.BuiltinOptions.Conv2DOptions
        self.operator(DEPTHWISE_CONV_2D if depthwise else CONV_2D, [x, weights, bias], out, kind, options)

    def serialize(self, inputs: list[int], outputs: list[int], name: str) -> bytes:
        import flatbuffers
        s = self.s
        codes = []
        for code in self.codes:
            c = s.OperatorCodeT()
            if isinstance(code, str):
                c.builtinCode, c.deprecatedBuiltinCode, c.customCode = s.BuiltinOperator.CUSTOM, 32, code
            else:  # codes past 127 sit in the wide field only
                c.builtinCode, c.deprecatedBuiltinCode = code, min(code, s.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES)
            c.version = 1
            codes.append(c)
        graph = s.SubGraphT()
        graph.tensors, graph.operators, graph.inputs, graph.outputs = self.tensors, self.operators, inputs, outputs
        model = s.ModelT()
        model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, codes, [graph], self.buffers
        model.description = name
        builder = flatbuffers.Builder(1 << 20)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


def tflite_mobilenet(net: MobileNetV1, qnet: QuantMobileNetV1 | None = None) -> bytes:
    """``net`` in float32, or ``qnet`` (its quantized form) in uint8, as a ``.tflite`` model: input and output
    NHWC like the NNAPI model's."""
    w = Writer()
    kind = FLOAT32 if qnet is None else UINT8
    layers = net.features + [net.head]
    quant = [None] * len(layers) if qnet is None else qnet.features + [qnet.head]

    def conv(x: int, x_scale: float, k: int, out_shape, activation: int) -> int:
        layer, q = layers[k], quant[k]
        if q is None:
            weights = w.tensor(layer.weights.shape, FLOAT32, layer.weights)
            bias = w.tensor(layer.bias.shape, FLOAT32, layer.bias)
            out = w.tensor(out_shape, FLOAT32)
        else:
            weights = w.tensor(q.weights.values.shape, UINT8, q.weights.values, q.weights)
            bias = w.tensor(q.bias.shape, INT32, q.bias, Quantized(x_scale * q.weights.scale, 0))
            out = w.tensor(out_shape, UINT8, q=q.output)
        w.conv(x, layer.depthwise, layer.stride, weights, bias, out, activation)
        return out

    x = first = w.tensor(net.input_shape, kind, q=None if qnet is None else qnet.input)
    size, scale = net.size, (0.0 if qnet is None else qnet.input.scale)
    for k, layer in enumerate(net.features):
        size = same_output(size, layer.stride)
        x = conv(x, scale, k, (1, size, size, layer.channels_out), RELU6)
        scale = 0.0 if qnet is None else quant[k].output.scale
    last = None if qnet is None else qnet.features[-1].output
    pooled = w.tensor((1, 1, 1, net.features[-1].channels_out), kind, q=last)
    options = w.s.Pool2DOptionsT()
    options.padding, options.strideW, options.strideH, options.filterWidth, options.filterHeight = VALID, 1, 1, size, size
    w.operator(AVERAGE_POOL_2D, [x], pooled, w.s.BuiltinOptions.Pool2DOptions, options)
    logits = conv(pooled, scale, len(net.features), net.output_shape, NONE)
    probs = w.tensor(net.output_shape, kind, q=None if qnet is None else qnet.probs)
    w.operator(LOGISTIC, [logits], probs)
    return w.serialize([first], [probs], net.name)


def litert_interpreter(model: bytes, threads: int | None = None):
    """A LiteRT interpreter of ``model`` with its defaults (XNNPACK where it applies) and ``threads`` threads,
    tensors allocated."""
    from ai_edge_litert.interpreter import Interpreter

    from benchmarks import models
    interpreter = Interpreter(model_content=model, num_threads=models.THREADS if threads is None else threads)
    interpreter.allocate_tensors()
    return interpreter
