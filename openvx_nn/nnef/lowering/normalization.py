"""Reductions (``sum_reduce``, ``mean_reduce``, ``min_reduce``, ``max_reduce``, ``argmax_reduce``,
``argmin_reduce``, ``any_reduce``, ``all_reduce``: NNEF keeps the reduced axes), ``moments``, ``softmax`` (one axis or
adjacent ones), ``batch_normalization`` (nodes on its four
operands, no folding at load), ``local_response_normalization``."""
from __future__ import annotations

import math

from ...api.builder_nodes import reshape
from ...core.enums import NNNorm
from ...operations.coreml.statistics import REDUCE_OPERATIONS
from ..builder import Blob, NNEFBuilder
from .common import axis, operand, result, shape_of, vx_axis
from .elementwise import combine, pointwise
from .registry import lowers

REDUCTIONS = {"sum_reduce": "sum", "mean_reduce": "mean", "min_reduce": "min", "max_reduce": "max",
              "argmax_reduce": "argmax", "argmin_reduce": "argmin", "any_reduce": "max", "all_reduce": "min"}
"""NNEF reduction -> the reduce kernel's operation (logicals are 0 and 1 here: any is a max, all a min)."""


@lowers(*REDUCTIONS)
def reduce(g: NNEFBuilder, op) -> str:
    operation = REDUCTIONS[op.name]
    if op.name == "sum_reduce" and op.attribs.get("normalize"):
        operation = "mean"
    x = g.blob(str(op.inputs["input"]))
    axes = sorted({axis(g, int(a), x.rank) for a in op.attribs["axes"]})
    name = result(op)
    if operation in ("argmax", "argmin") and len(axes) != 1:
        raise g.fail(f"{op.name} over {len(axes)} axes is not supported (one axis)")
    g.coreml("reduce", (x.tensor, g.ints([vx_axis(a, x.rank) for a in axes]),
                        g.enum(REDUCE_OPERATIONS.index(operation)), g.f32(0.0), g.output(name, shape_of(g, name))))
    return f"coreml.reduce({operation})"


@lowers("softmax")
def softmax(g: NNEFBuilder, op) -> str:
    """One axis on the softmax kernel; adjacent axes as one axis of a reshaped copy (the same sums)."""
    x = g.blob(str(op.inputs["x"]))
    axes = sorted({axis(g, int(a), x.rank) for a in op.attribs["axes"]})
    if axes != list(range(axes[0], axes[-1] + 1)):
        raise g.fail(f"softmax over axes {axes} is not supported (one axis, or adjacent axes)")
    if len(axes) == 1:
        g.coreml("softmax", (x.tensor, g.i32(vx_axis(axes[0], x.rank)), g.output(result(op), x.shape)))
        return "coreml.softmax"
    merged = x.shape[:axes[0]] + (math.prod(x.shape[a] for a in axes),) + x.shape[axes[-1] + 1:]
    flat, out = reshape(g, x, merged), g.temp(merged)
    g.coreml("softmax", (flat.tensor, g.i32(vx_axis(axes[0], len(merged))), out))
    reshape(g, Blob(out, merged), x.shape, result(op))
    return "coreml.reshape, coreml.softmax (the axes as one), coreml.reshape"


@lowers("moments")
def moments(g: NNEFBuilder, op) -> str:
    """The spec's ``mean = mean_reduce(input)``, ``variance = mean_reduce(sqr(input - mean))``, node by node."""
    x = g.blob(str(op.inputs["input"]))
    axes = sorted({axis(g, int(a), x.rank) for a in op.attribs["axes"]})
    mean, variance = result(op, "mean"), result(op, "variance")
    vx_axes = g.ints([vx_axis(a, x.rank) for a in axes])
    g.coreml("reduce", (x.tensor, vx_axes, g.enum(REDUCE_OPERATIONS.index("mean")), g.f32(0.0),
                        g.output(mean, shape_of(g, mean))))
    centred = combine(g, x, g.blob(mean), "subtract", None, x.shape)
    squares = combine(g, centred, centred, "multiply", None, x.shape)
    g.coreml("reduce", (squares.tensor, vx_axes, g.enum(REDUCE_OPERATIONS.index("mean")), g.f32(0.0),
                        g.output(variance, shape_of(g, variance))))
    return "coreml.reduce(mean), coreml.combine(subtract, multiply), coreml.reduce(mean)"


@lowers("batch_normalization")
def batch_normalization(g: NNEFBuilder, op) -> str:
    """``(input - mean) / sqrt(variance + epsilon) * scale + offset``, the spec's definition, node by node."""
    x = g.blob(str(op.inputs["input"]))
    shape = x.shape
    rank = x.rank
    centred = combine(g, x, operand(g, op.inputs["mean"], rank), "subtract", None, shape)
    variance = operand(g, op.inputs["variance"], rank)
    spread = combine(g, variance, None, "add", None, variance.shape, float(op.attribs.get("epsilon", 0.0)))
    root = f"{result(op)} deviation"
    pointwise(g, spread, root, "sqrt")
    normalized = combine(g, centred, g.blob(root), "divide", None, shape)
    scaled = combine(g, normalized, operand(g, op.inputs["scale"], rank), "multiply", None, shape)
    combine(g, scaled, operand(g, op.inputs["offset"], rank), "add", result(op), shape)
    return "coreml.combine(subtract, divide, multiply, add), coreml.pointwise(sqrt)"


@lowers("local_response_normalization")
def local_response_normalization(g: NNEFBuilder, op) -> str:
    """``input / (bias + alpha * box(sqr(input), size, normalize = true)) ^ beta``: the NN extension's layer,
    whose windows are the spec's for odd sizes 3, 5 and 7 over the channels or a square of one map."""
    x = g.blob(str(op.inputs["input"]))
    size = [int(s) for s in op.attribs["size"]]
    alpha, beta, bias = (float(op.attribs.get(k, d)) for k, d in (("alpha", 1.0), ("beta", 0.5), ("bias", 1.0)))
    across = x.rank == 4 and size[0] == size[2] == size[3] == 1
    square = x.rank == 4 and size[0] == size[1] == 1 and size[2] == size[3]
    n = size[1] if across else size[2]
    if not (across or square) or n not in (3, 5, 7) or min(alpha, beta, bias) <= 0:
        raise g.fail(f"size {size} with alpha {alpha}, beta {beta}, bias {bias} is not supported (windows of 3, 5 "
                     "or 7 channels, or of 3 x 3, 5 x 5 or 7 x 7 in one map, on [N, C, H, W]; positive parameters)")
    kind = NNNorm.VX_NN_NORMALIZATION_ACROSS_MAPS if across else NNNorm.VX_NN_NORMALIZATION_SAME_MAP
    g.node("org.khronos.nn_extension.local_response_normalization_layer",
           (x.tensor, g.enum(kind), g.size(n), g.f32(alpha), g.f32(beta), g.f32(bias), g.output(result(op), x.shape)))
    return f"vxLocalResponseNormalizationLayer({'across maps' if across else 'same map'})"
