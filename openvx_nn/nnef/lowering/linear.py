"""``matmul`` and ``linear`` on the batched matrix kernel (NNEF's row-major matrices are its [rows, columns])."""
from __future__ import annotations

import numpy as np

from ..builder import NNEFBuilder
from . import quant8
from .common import literal, result, shape_of
from .registry import lowers


@lowers("matmul")
def matmul(g: NNEFBuilder, op) -> str:
    a, b = g.blob(str(op.inputs["A"])), g.blob(str(op.inputs["B"]))
    if a.rank != b.rank or a.rank < 2:
        raise g.fail(f"operands {list(a.shape)} and {list(b.shape)} must have one rank of at least 2")
    name = result(op)
    g.coreml("batched_matmul", (a.tensor, b.tensor, g.i32(bool(op.attribs.get("transposeA"))),
                                g.i32(bool(op.attribs.get("transposeB"))), None, g.output(name, shape_of(g, name))))
    return "coreml.batched_matmul"


@lowers("linear")
def linear(g: NNEFBuilder, op) -> str:
    x, w = g.blob(str(op.inputs["input"])), g.blob(str(op.inputs["filter"]))
    if x.rank != 2 or w.rank != 2 or x.shape[1] != w.shape[1]:
        raise g.fail(f"input {list(x.shape)} and filter {list(w.shape)} must be [N, C] and [M, C]")
    on_uint8 = quant8.linear(g, op, x, result(op), shape_of(g, result(op)))
    if on_uint8 is not None:
        return on_uint8
    bias_value = op.inputs["bias"]
    bias = None
    number = literal(bias_value)
    if number is not None and number != 0.0:
        bias = g.constant(np.full(w.shape[0], number, np.float32))
    elif number is None:
        known = g.values.get(str(bias_value))
        if known is None:
            raise g.fail(f"the bias '{bias_value}' must be a variable or a constant")
        if known.size not in (1, w.shape[0]):
            raise g.fail(f"bias of shape {list(known.shape)} does not match {w.shape[0]} outputs")
        bias = g.constant(np.broadcast_to(known.reshape(-1), (w.shape[0],)))
    name = result(op)
    g.coreml("batched_matmul", (x.tensor, w.tensor, g.i32(0), g.i32(1), bias, g.output(name, shape_of(g, name))))
    return "coreml.batched_matmul(transposed filter, bias)"
