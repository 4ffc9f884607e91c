"""``openvx-nn nnapi-demo``: build a small quantized NNAPI model, run it, print
each operation's time and the result."""
from __future__ import annotations

import numpy as np

from ..core.enums import Directive
from . import builder
from .enums import OperandType, OperationType

Q8 = OperandType.TENSOR_QUANT8_ASYMM


class _Net:
    """Adds operands to a model with less ceremony."""

    def __init__(self, rng: np.random.Generator):
        self.m = builder.Model()
        self.rng = rng

    def tensor(self, kind, dims, scale=0.0, zero_point=0, value=None) -> int:
        k = self.m.add_operand(kind, dimensions=dims, scale=scale, zero_point=zero_point)
        if value is not None:
            self.m.set_operand_value(k, value)
        return k

    def weights(self, dims, scale) -> int:
        return self.tensor(Q8, dims, scale, 128, self.rng.integers(96, 160, dims, dtype=np.uint8))

    def bias(self, n, scale) -> int:
        return self.tensor(OperandType.TENSOR_INT32, [n], scale, 0, self.rng.integers(-200, 200, n).astype(np.int32))

    def ints(self, *values) -> list[int]:
        return [self.tensor(OperandType.INT32, [], value=v) for v in values]


def build_model(seed: int = 0) -> builder.Model:
    """conv 3x3 SAME RELU6 -> depthwise 3x3 -> max pool 2x2 -> reshape -> fully connected -> softmax, uint8."""
    n = _Net(np.random.default_rng(seed))
    x = n.tensor(Q8, [1, 8, 8, 1], 1 / 255, 0)
    c1 = n.tensor(Q8, [1, 8, 8, 4], 6 / 255, 0)
    n.m.add_operation(OperationType.CONV_2D, [x, n.weights([4, 3, 3, 1], 0.02), n.bias(4, 0.02 / 255)]
                      + n.ints(1, 1, 1, 3), [c1])
    c2 = n.tensor(Q8, [1, 8, 8, 4], 0.05, 128)
    n.m.add_operation(OperationType.DEPTHWISE_CONV_2D, [c1, n.weights([1, 3, 3, 4], 0.02), n.bias(4, 0.12 / 255)]
                      + n.ints(1, 1, 1, 1, 0), [c2])
    p = n.tensor(Q8, [1, 4, 4, 4], 0.05, 128)
    n.m.add_operation(OperationType.MAX_POOL_2D, [c2] + n.ints(2, 2, 2, 2, 2, 0), [p])
    shape = n.tensor(OperandType.TENSOR_INT32, [2], value=np.array([1, 64], np.int32))
    flat = n.tensor(Q8, [1, 64], 0.05, 128)
    n.m.add_operation(OperationType.RESHAPE, [p, shape], [flat])
    logits = n.tensor(Q8, [1, 10], 0.1, 128)
    n.m.add_operation(OperationType.FULLY_CONNECTED, [flat, n.weights([10, 64], 0.01), n.bias(10, 0.0005)]
                      + n.ints(0), [logits])
    beta = n.tensor(OperandType.FLOAT32, [], value=1.0)
    probs = n.tensor(Q8, [1, 10], 1 / 256, 0)
    n.m.add_operation(OperationType.SOFTMAX, [logits, beta], [probs])
    n.m.identify_inputs_and_outputs(inputs=[x], outputs=[probs])
    n.m.finish()
    return n.m


def main(runs: int = 3) -> int:
    model = build_model()
    compilation = builder.Compilation(model)
    compilation.finish()
    prepared = compilation.prepared
    context = prepared.graph.context
    was_timing = context.performance_enabled
    context.directive(Directive.VX_DIRECTIVE_ENABLE_PERFORMANCE)
    image = np.zeros((1, 8, 8, 1), np.uint8)
    image[0, 2:6, 3:5, 0] = 255  # a bar
    out = np.zeros((1, 10), np.uint8)
    try:
        for _ in range(runs):
            execution = builder.Execution(compilation)
            execution.set_input(0, image)
            execution.set_output(0, out)
            execution.compute()
        hal = model.to_hal()
        print(f"NNAPI model: {len(hal.operations)} operations, {len(hal.operands)} operands, quant8 asymmetric; "
              f"lowered onto one OpenVX graph of {len(prepared.graph.nodes)} nodes (run {runs} times)")
        print(f"{'op':>3}  {'NNAPI operation':<20} {'OpenVX kernel':<42} {'last run':>10}")
        for index, kernel, ms in prepared.operation_timings():
            print(f"{index:>3}  {hal.operations[index].type.name:<20} {kernel:<42} {ms * 1000:>8.1f} us")
        probabilities = out[0].astype(np.float64) / 256  # output scale 1/256, zero point 0
        print("result (softmax, raw uint8):", " ".join(str(int(v)) for v in out[0]))
        print("probabilities:", " ".join(f"{p:.3f}" for p in probabilities),
              f"-> class {int(np.argmax(out[0]))}")
    finally:
        if not was_timing:
            context.directive(Directive.VX_DIRECTIVE_DISABLE_PERFORMANCE)
        compilation.release()
    return 0
