"""Element-wise arithmetic layers: add, multiply, average, max, min, bias, scale, dot
product, and the later spec's ``*Broadcastable`` family. Two same-shaped (or
OpenVX-broadcastable) inputs of add and multiply run on the OpenVX tensor
operations; everything else chains the combine kernel."""
from __future__ import annotations

from collections.abc import Sequence

from ...api.builder_nodes import broadcast_shape
from ...core.enums import ConvertPolicy, RoundPolicy
from ...operations.coreml.elementwise import COMBINE_OPERATIONS
from ..builder import Blob, GraphBuilder
from ..weights import load_weights
from . import nhwc
from .common import single
from .registry import lowers

SATURATE = ConvertPolicy.VX_CONVERT_POLICY_SATURATE
NEAREST = RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN


def _ranked(g: GraphBuilder, blob: Blob, rank: int) -> Blob:
    """``blob`` with leading length-1 CoreML axes up to ``rank`` (a reshape node when needed)."""
    if blob.rank == rank:
        return blob
    from .common import reshape
    return reshape(g, blob, (1,) * (rank - blob.rank) + blob.shape)


def combine(g: GraphBuilder, a: Blob, b: Blob | None, operation: str, name: str | None = None,
            constant: float = 0.0) -> Blob:
    shape = a.shape if b is None else broadcast_shape(g, [a.shape, b.shape])
    if b is not None:
        a, b = _ranked(g, a, len(shape)), _ranked(g, b, len(shape))
    out = g.output(name, shape) if name else g.temp(shape)
    if b is not None and a.shape == shape and operation in ("add", "multiply"):
        if operation == "add":
            g.node("org.khronos.openvx.tensor_add", (a.tensor, b.tensor, g.enum(SATURATE), out))
        else:
            g.node("org.khronos.openvx.tensor_multiply", (a.tensor, b.tensor, g.f32(1.0), g.enum(SATURATE),
                                                           g.enum(NEAREST), out))
    else:
        g.coreml("combine", (a.tensor, None if b is None else b.tensor,
                             g.enum(COMBINE_OPERATIONS.index(operation)), g.f32(constant), out))
    return Blob(out, shape)


def chain(g: GraphBuilder, layer, operation: str, finish=None) -> str:
    """Fold the layer's inputs with ``operation`` (the last step writes the output)."""
    if len(layer.output) != 1 or not layer.input:
        raise g.fail("expected at least 1 input and exactly 1 output")
    blobs = [g.blob(n) for n in layer.input]
    name = layer.output[0]
    if len(blobs) == 1:
        raise g.fail(f"{operation} of a single input is not defined")
    acc = blobs[0]
    for i, b in enumerate(blobs[1:]):
        last = i == len(blobs) - 2 and finish is None
        acc = combine(g, acc, b, operation, name if last else None)
    if finish is not None:
        finish(acc)
    return f"{len(blobs) - 1} x {operation}"


@lowers("add", "multiply")
def add_multiply(g: GraphBuilder, layer, params) -> str:
    operation = layer.WhichOneof("layer")
    if len(layer.input) == 1:
        x = single(g, layer)
        combine(g, x, None, "add" if operation == "add" else "multiply", layer.output[0], params.alpha)
        return f"coreml.combine({operation} constant)"
    if g.nhwc_route:
        how = nhwc.add(g, layer) if operation == "add" else nhwc.multiply(g, layer)
        if how is not None:
            return how
    return chain(g, layer, operation)


@lowers("max", "min")
def max_min(g: GraphBuilder, layer, params) -> str:
    return chain(g, layer, layer.WhichOneof("layer"))


@lowers("average")
def average(g: GraphBuilder, layer, params) -> str:
    n = len(layer.input)
    return chain(g, layer, "add", lambda acc: combine(g, acc, None, "multiply", layer.output[0], 1.0 / n)) + \
        " then scale"


def _weights_blob(g: GraphBuilder, wp, shape: Sequence[int], what: str) -> Blob:
    shape = tuple(int(s) for s in shape) or (1,)
    if len(shape) == 1 and shape[0] > 1:
        shape = (shape[0], 1, 1)
    array = load_weights(wp, shape, what)
    return Blob(g.constant(array), shape)


@lowers("bias")
def bias(g: GraphBuilder, layer, params) -> str:
    x = single(g, layer)
    combine(g, x, _weights_blob(g, params.bias, params.shape, "bias"), "add", layer.output[0])
    return "add constant"


@lowers("scale")
def scale(g: GraphBuilder, layer, params) -> str:
    x = single(g, layer)
    s = _weights_blob(g, params.scale, params.shapeScale, "scale")
    if not params.hasBias:
        combine(g, x, s, "multiply", layer.output[0])
        return "multiply constant"
    y = combine(g, x, s, "multiply")
    combine(g, y, _weights_blob(g, params.bias, params.shapeBias, "bias"), "add", layer.output[0])
    return "multiply + add constants"


@lowers("dot")
def dot(g: GraphBuilder, layer, params) -> str:
    if len(layer.input) != 2:
        raise g.fail(f"dot product needs 2 inputs, got {len(layer.input)}")
    a, b = g.blob(layer.input[0]), g.blob(layer.input[1])
    if a.shape != b.shape or a.rank < 3:
        raise g.fail(f"inputs {list(a.shape)} and {list(b.shape)} must have one shape of rank 3 or more")
    shape = a.shape[:-3] + (1, 1, 1)
    out = g.output(layer.output[0], shape)
    g.coreml("dot_product", (a.tensor, b.tensor, g.i32(params.cosineSimilarity), out))
    return "coreml.dot_product"


BROADCASTABLE = {"addBroadcastable": "add", "subtractBroadcastable": "subtract",
                 "multiplyBroadcastable": "multiply", "divideBroadcastable": "divide",
                 "maxBroadcastable": "max", "minBroadcastable": "min", "powBroadcastable": "pow",
                 "modBroadcastable": "mod", "floorDivBroadcastable": "floor_divide"}


@lowers(*BROADCASTABLE)
def broadcastable(g: GraphBuilder, layer, params) -> str:
    operation = BROADCASTABLE[layer.WhichOneof("layer")]
    if operation in ("max", "min", "add", "multiply") and len(layer.input) > 2:
        return chain(g, layer, operation)
    if len(layer.input) != 2:
        raise g.fail(f"expected 2 inputs, got {len(layer.input)}")
    combine(g, g.blob(layer.input[0]), g.blob(layer.input[1]), operation, layer.output[0])
    return f"coreml.combine({operation})"




COMPARISONS = {"equal": "equal", "notEqual": "not_equal", "lessThan": "less", "lessEqual": "less_equal",
               "greaterThan": "greater", "greaterEqual": "greater_equal", "logicalAnd": "logical_and",
               "logicalOr": "logical_or", "logicalXor": "logical_xor"}


@lowers(*COMPARISONS)
def comparison(g: GraphBuilder, layer, params) -> str:
    """1.0 where the relation holds, else 0.0; one input compares with ``alpha``."""
    operation = COMPARISONS[layer.WhichOneof("layer")]
    if len(layer.input) == 1 and hasattr(params, "alpha"):
        combine(g, single(g, layer), None, operation, layer.output[0], params.alpha)
    elif len(layer.input) == 2:
        combine(g, g.blob(layer.input[0]), g.blob(layer.input[1]), operation, layer.output[0])
    else:
        raise g.fail(f"expected 2 inputs (or 1 with alpha), got {len(layer.input)}")
    return f"coreml.combine({operation})"
