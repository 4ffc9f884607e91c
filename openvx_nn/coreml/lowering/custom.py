"""``custom``: a layer whose arithmetic the application provides (``coreml/custom.py``: a Python function
registered for its class, or a kernel of that name in the context's kernel table)."""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.validation import Validation
from ...operations.coreml.common import F32, T, kernel_enum
from ..builder import GraphBuilder
from ..custom import outputs_of, parameters, registered
from .registry import lowers

ENUM = kernel_enum(0xFFF)
"""The enum of every description made for a Python custom layer (they never enter a kernel table)."""


@lowers("custom")
def custom(g: GraphBuilder, layer, p) -> str:
    name = p.className
    if not name:
        raise g.fail("the custom layer names no className")
    inputs = [g.blob(n) for n in layer.input]
    python = registered(name)
    if python is not None:
        return _python(g, layer, p, inputs, python)
    description = g.context.kernels.by_name(name)
    if description is None:
        raise g.fail(f"custom layer class '{name}' is not registered (openvx_nn.coreml.register_custom_layer "
                     "from Python, or a kernel of that name in the context: vxAddUserKernel, vxLoadKernels)")
    count = len(inputs) + len(layer.output)
    if len(description.params) != count:
        raise g.fail(f"kernel '{name}' takes {len(description.params)} parameters; the layer passes {count} (its "
                     f"{len(inputs)} input(s), then its {len(layer.output)} output(s))")
    if not inputs:
        raise g.fail("a custom layer run by a kernel needs an input (its outputs take the first input's shape)")
    outs = [g.output(n, inputs[0].shape) for n in layer.output]
    g.custom_node(description, [b.tensor for b in inputs] + outs)
    return f"kernel '{name}' of the context"


def _python(g: GraphBuilder, layer, p, inputs, python) -> str:
    name = p.className
    params = parameters(p)
    weights = [_flat(g, w, i) for i, w in enumerate(p.weights)]
    in_shapes = [b.shape for b in inputs]
    if python.shapes is not None:
        try:
            shapes = [tuple(int(d) for d in s) for s in python.shapes(list(in_shapes), dict(params))]
        except Exception as err:  # noqa: BLE001 - the application's function: report whatever it raised
            raise g.fail(f"custom layer class '{name}': shapes() raised {type(err).__name__}: {err}") from None
    elif inputs:
        shapes = [in_shapes[0]] * len(layer.output)
    else:
        raise g.fail(f"custom layer class '{name}' has no input: register it with shapes= to give its output shapes")
    if len(shapes) != len(layer.output):
        raise g.fail(f"custom layer class '{name}': shapes() gave {len(shapes)} shape(s) for {len(layer.output)} "
                     "output(s)")
    specs = tuple([ParamSpec(f"input{i}", IN, T) for i in range(len(inputs))] +
                  [ParamSpec(f"output{i}", OUT, T) for i in range(len(shapes))])
    first = len(inputs)

    def validate(v: Validation) -> None:
        for i in range(first):
            meta = v.tensor(i)
            v.require(meta.data_type == F32, i, Status.VX_ERROR_INVALID_TYPE, "custom layers take FLOAT32 tensors")
        for i, shape in enumerate(shapes):
            v.output(first + i, tuple(reversed(shape)), F32, 0)

    def execute(params_, state) -> None:
        arrays = [np.array(t.array.T) for t in params_[:first]]
        result = python.function(arrays, dict(params), [w.copy() for w in weights])
        for tensor, array in zip(params_[first:], outputs_of(name, result, shapes)):
            tensor.array.T[...] = array

    description = KernelDescription(name, ENUM, 0, specs, validate, execute)
    outs = [g.output(n, s) for n, s in zip(layer.output, shapes)]
    g.custom_node(description, [b.tensor for b in inputs] + outs)
    return f"Python function registered for class '{name}'"


def _flat(g: GraphBuilder, w, index: int) -> np.ndarray:
    """A custom layer's weights (no shape is declared for them) as a 1-D float32 array."""
    if w.HasField("quantization"):
        raise g.fail(f"weights[{index}] are quantized; a custom layer's weights must be float, float16 or raw float32")
    if len(w.floatValue):
        return np.asarray(w.floatValue, np.float32)
    if len(w.float16Value):
        return np.frombuffer(w.float16Value, np.float16).astype(np.float32)
    if len(w.rawValue) % 4:
        raise g.fail(f"weights[{index}] hold {len(w.rawValue)} raw bytes, not a whole number of float32 values")
    return np.frombuffer(w.rawValue, np.float32).copy()
