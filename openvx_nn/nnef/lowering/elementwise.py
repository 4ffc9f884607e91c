"""Element-wise operations: NNEF's unary functions and activations on the pointwise kernel, its binary
arithmetic, comparisons and logic (broadcasting, literal operands) on the combine kernel, ``clamp``, ``select``,
``prelu`` and ``copy``."""
from __future__ import annotations

from ...operations.coreml.elementwise import COMBINE_OPERATIONS, POINTWISE_FUNCTIONS
from ..builder import Blob, NNEFBuilder
from .common import broadcast, literal, operand, ranked, result, shape_of
from .registry import lowers

UNARY = {  # NNEF name -> (pointwise function, alpha, beta, epsilon); alpha "attr:NAME" reads an attribute
    "copy": ("identity", 0, 0), "neg": ("linear", -1.0, 0.0), "rcp": ("inverse", 0, 0), "exp": ("exp", 0, 0),
    "log": ("log", 0, 0), "sin": ("sin", 0, 0), "cos": ("cos", 0, 0), "tan": ("tan", 0, 0),
    "sinh": ("sinh", 0, 0), "cosh": ("cosh", 0, 0), "asin": ("asin", 0, 0), "acos": ("acos", 0, 0),
    "atan": ("atan", 0, 0), "asinh": ("asinh", 0, 0), "acosh": ("acosh", 0, 0), "atanh": ("atanh", 0, 0),
    "abs": ("abs", 0, 0), "sign": ("sign", 0, 0), "floor": ("floor", 0, 0), "ceil": ("ceil", 0, 0),
    "sqrt": ("sqrt", 0, 0), "rsqrt": ("rsqrt", 0, 0), "sqr": ("power", 2.0, 0), "rsqr": ("power", -2.0, 0),
    "not": ("logical_not", 0, 0), "relu": ("relu", 0, 0), "sigmoid": ("sigmoid", 0, 0), "tanh": ("tanh", 0, 0),
    "softplus": ("softplus", 0, 0), "elu": ("elu", "attr:alpha", 0), "leaky_relu": ("leaky_relu", "attr:alpha", 0),
    "gelu": ("gelu_sigmoid", 0, 0),
}

BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "pow": "pow", "min": "min",
          "max": "max", "lt": "less", "gt": "greater", "le": "less_equal", "ge": "greater_equal", "eq": "equal",
          "ne": "not_equal", "and": "logical_and", "or": "logical_or"}


def pointwise(g: NNEFBuilder, x: Blob, name: str, function: str, alpha: float = 0.0, beta: float = 0.0) -> None:
    out = g.output(name, x.shape)
    g.coreml("pointwise", (x.tensor, g.enum(POINTWISE_FUNCTIONS.index(function)),
                           g.floats([1.0, 0.0, alpha, beta, 0.0]), None, None, out))


def combine(g: NNEFBuilder, a: Blob, b: Blob | None, operation: str, name: str | None, shape,
            constant: float = 0.0) -> Blob:
    """``operation(a, b)`` (or of ``a`` and ``constant``) into tensor ``name`` (None: a temporary)."""
    shape = tuple(shape)
    out = g.output(name, shape) if name else g.temp(shape)
    g.coreml("combine", (ranked(g, a, len(shape)).tensor, None if b is None else ranked(g, b, len(shape)).tensor,
                         g.enum(COMBINE_OPERATIONS.index(operation)), g.f32(constant), out))
    return Blob(out, shape)


@lowers(*UNARY)
def unary(g: NNEFBuilder, op) -> str:
    function, alpha, beta = UNARY[op.name]
    if isinstance(alpha, str):
        alpha = float(op.attribs[alpha.split(":")[1]])
    x = operand(g, op.inputs["x"])
    pointwise(g, x, result(op), function, alpha, beta)
    return f"coreml.pointwise({function})"


@lowers(*BINARY)
def binary(g: NNEFBuilder, op) -> str:
    operation = BINARY[op.name]
    x, y = op.inputs["x"], op.inputs["y"]
    name = result(op)
    shape = shape_of(g, name)
    right = literal(y)
    if right is not None and literal(x) is None:
        combine(g, g.blob(str(x)), None, operation, name, shape, right)
        return f"coreml.combine({operation} constant)"
    a, b = operand(g, x, len(shape)), operand(g, y, len(shape))
    broadcast(g, [a.shape, b.shape])
    combine(g, a, b, operation, name, shape)
    return f"coreml.combine({operation})"


@lowers("clamp")
def clamp(g: NNEFBuilder, op) -> str:
    name = result(op)
    shape = shape_of(g, name)
    low, high = literal(op.inputs["a"]), literal(op.inputs["b"])
    x = operand(g, op.inputs["x"])
    if low is not None and high is not None:
        pointwise(g, x, name, "clip", low, high)
        return "coreml.pointwise(clip)"
    above = combine(g, x, operand(g, op.inputs["a"], len(shape)), "max", None, shape)
    combine(g, above, operand(g, op.inputs["b"], len(shape)), "min", name, shape)
    return "coreml.combine(max), coreml.combine(min)"


@lowers("select")
def select(g: NNEFBuilder, op) -> str:
    name = result(op)
    shape = shape_of(g, name)
    blobs = [ranked(g, operand(g, op.inputs[k], len(shape)), len(shape)) for k in ("condition", "true_value",
                                                                                     "false_value")]
    broadcast(g, [b.shape for b in blobs])
    g.coreml("select", (*(b.tensor for b in blobs), g.output(name, shape)))
    return "coreml.select"


@lowers("prelu")
def prelu(g: NNEFBuilder, op) -> str:
    """``select(x < 0, alpha * x, x)``, the spec's fragment, ``alpha`` broadcast (a [1, C] tensor or a number)."""
    name = result(op)
    shape = shape_of(g, name)
    x = operand(g, op.inputs["x"])
    negative = combine(g, x, None, "less", None, shape, 0.0)
    scaled = combine(g, x, operand(g, op.inputs["alpha"], len(shape)), "multiply", None, shape)
    g.coreml("select", (negative.tensor, scaled.tensor, x.tensor, g.output(name, shape)))
    return "coreml.combine(less, multiply), coreml.select"
