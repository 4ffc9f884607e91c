"""CONCATENATION, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESHAPE, RESIZE_BILINEAR,
and the depth normalizations SOFTMAX, L2_NORMALIZATION,
LOCAL_RESPONSE_NORMALIZATION (float32 2-D SOFTMAX with beta 1 runs on the
standard softmax layer, whose 2-D axis is NNAPI's)."""
from __future__ import annotations

import math

import numpy as np

from ...operations.nnapi.reshaping import MAX_CONCAT
from ..enums import DTYPES, OperandType, OperationType
from .context import OpContext
from .registry import lowers

F32T, I32T, Q8 = OperandType.TENSOR_FLOAT32, OperandType.TENSOR_INT32, OperandType.TENSOR_QUANT8_ASYMM
TENSORS = (F32T, I32T, Q8)
T = OperationType


def same_quantization(op: OpContext) -> None:
    """Data movement keeps raw values, so the output must be quantized like the input."""
    a, out = op.operand(0), op.operand(0, output=True)
    if a.type == Q8 and (a.scale != out.scale or a.zeroPoint != out.zeroPoint):
        op.fail(f"output quantization ({out.scale}, {out.zeroPoint}) differs from the input's "
                f"({a.scale}, {a.zeroPoint})")


@lowers(T.CONCATENATION)
def lower_concatenation(op: OpContext) -> None:
    n = sum(1 for k in range(len(op.inputs)) if op.kind(k) in TENSORS)  # the signature put them first
    scalars = len(op.inputs) - n
    if scalars == 2 and op.scalar(n + 1) != 0:
        op.fail(f"fused activation {op.scalar(n + 1)}: concatenation takes none")
    axis = op.scalar(n)
    if n <= MAX_CONCAT:
        op.node("concatenation", {f"input{i}": i for i in range(n)}, {"output": 0}, {"axis": axis})
        return
    for k in range(n):
        op.shape(k)
    join(op, [op.inputs[k] for k in range(n)], op.outputs[0], axis)


def join(op: OpContext, parts: list[int], out: int, axis: int) -> None:
    """Operands ``parts`` concatenated along ``axis`` into ``out``: the kernel joins MAX_CONCAT tensors at most, so
    groups are joined into temporaries quantized like ``out`` (each input is rescaled once, there), then the
    temporaries, which copies raw values."""
    while len(parts) > MAX_CONCAT:
        groups = [parts[i:i + MAX_CONCAT] for i in range(0, len(parts), MAX_CONCAT)]
        parts = []
        for group in groups:
            if len(group) == 1:
                parts.append(group[0])
                continue
            joined = op.b.temporary(out)
            op.node_on("concatenation", {f"input{i}": k for i, k in enumerate(group)}, {"output": joined},
                       {"axis": axis})
            parts.append(joined)
    op.node_on("concatenation", {f"input{i}": k for i, k in enumerate(parts)}, {"output": out}, {"axis": axis})


@lowers(T.DEPTH_TO_SPACE, T.SPACE_TO_DEPTH)
def lower_block_moves(op: OpContext) -> None:
    same_quantization(op)
    op.node(op.type.name.lower(), {"input": 0}, {"output": 0}, {"block_size": op.scalar(1)})


@lowers(T.RESHAPE)
def lower_reshape(op: OpContext) -> None:
    same_quantization(op)
    wanted = [int(d) for d in op.constant(1).reshape(-1)]
    size = int(np.prod(op.shape(0), dtype=np.int64))
    if wanted.count(-1) > 1 or any(d < -1 or d == 0 for d in wanted):
        op.fail(f"shape {wanted} may hold one -1 and otherwise positive sizes")
    if -1 in wanted:
        known = int(np.prod([d for d in wanted if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            op.fail(f"shape {wanted} cannot hold the input's {size} elements")
        wanted[wanted.index(-1)] = size // known
    op.settle(0, tuple(wanted), DTYPES[op.kind(0)])
    op.node("reshape", {"input": 0}, {"output": 0})


@lowers(T.RESIZE_BILINEAR)
def lower_resize(op: OpContext) -> None:
    """By shape, or by scale: ``floor(extent * scale)``, the product in float32 (as RESIZE_NEAREST_NEIGHBOR's);
    uint8 keeps the input's quantization, as the header requires."""
    same_quantization(op)
    if op.kind(1) == OperandType.INT32:
        width, height = op.scalar(1), op.scalar(2)
    else:
        _, in_h, in_w, _ = op.shape(0)  # NHWC (``perm`` applied by the layout wrapper)
        width, height = (math.floor(np.float32(extent) * np.float32(op.scalar(k))) for extent, k in ((in_w, 1), (in_h, 2)))
    op.node("resize_bilinear", {"input": 0}, {"output": 0}, {"width": width, "height": height})


@lowers(T.SOFTMAX)
def lower_softmax(op: OpContext) -> None:
    beta = op.scalar(1)
    shape = op.shape(0)
    if op.kind(0) == F32T and beta == 1.0 and len(shape) == 2 and op.perm is None:
        op.settle(0, shape, np.dtype(np.float32))
        if not op.b.dry:
            op.standard("org.khronos.nn_extension.softmax_layer", [op.vx("in", 0), op.vx("out", 0)])
        return
    op.node("softmax", {"input": 0}, {"output": 0}, floats={"beta": beta})


@lowers(T.L2_NORMALIZATION)
def lower_l2_normalization(op: OpContext) -> None:
    op.node("l2_normalization", {"input": 0}, {"output": 0})


@lowers(T.LOCAL_RESPONSE_NORMALIZATION)
def lower_lrn(op: OpContext) -> None:
    op.node("local_response_normalization", {"input": 0}, {"output": 0}, {"radius": op.scalar(1)},
            {"bias": op.scalar(2), "alpha": op.scalar(3), "beta": op.scalar(4)})
