"""An NNAPI model file for ``openvx-nn run`` and ``map_batches``: one graph for ``batch`` items.

The model's single input has the batch as its first NNAPI dimension (NHWC's N); as OpenVX
tensors list dims fastest first, that is the last OpenVX axis, where the run command wants it.
``rebatch`` sets N to ``batch`` and leaves the first dimension of every computed operand to the
lowering's shape inference; the graph is then made by ``lowering.lower``, as ``Compilation`` does.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from .enums import SCALAR_TYPES, OperandLifeTime, OperandType
from .errors import NNAPIError, refusing
from .hal import Model, load_model

if TYPE_CHECKING:
    from ..api import Context, Graph, Tensor

COMPUTED = (OperandLifeTime.TEMPORARY_VARIABLE, OperandLifeTime.MODEL_OUTPUT)


def _runnable(model: Model, where: str) -> tuple[int, int]:
    """The operand indexes of the input and the (first) output a batched run uses."""
    if len(model.inputIndexes) != 1:
        raise NNAPIError(f"{where} has {len(model.inputIndexes)} inputs; a batched run feeds exactly one")
    k = model.inputIndexes[0]
    operand = model.operands[k]
    if OperandType(operand.type) in SCALAR_TYPES or not operand.dimensions:
        raise NNAPIError(f"{where}: input operand {k} is not a tensor with a batch dimension")
    return k, model.outputIndexes[0]


def rebatch(model: Model, batch: int) -> Model:
    """``model`` with its input's first dimension set to ``batch`` (computed operands' first
    dimensions left to inference); the model itself when it already has that batch."""
    k, _ = _runnable(model, "the model")
    if int(batch) < 1:
        raise NNAPIError(f"batch must be at least 1, got {batch}")
    if model.operands[k].dimensions[0] == batch:
        return model
    operands = []
    for i, operand in enumerate(model.operands):
        dims = list(operand.dimensions)
        if i == k:
            dims[0] = int(batch)
        elif dims and operand.lifetime in COMPUTED:
            dims[0] = 0
        operands.append(replace(operand, dimensions=dims))
    return replace(model, operands=operands)


@refusing
def build_batched(ctx: Context, path: str, batch: int) -> tuple[Graph, Tensor, Tensor]:
    """``(graph, input, output)`` of the ``.nnapi`` model at ``path`` for ``batch`` items, in ``ctx``:
    data in OpenVX order (the NNAPI shape reversed, e.g. ``[C, W, H, N]``), in the operand's dtype."""
    from ..api.adopt import adopt
    from .lowering import lower
    model = rebatch(load_model(path), batch)
    k_in, k_out = _runnable(model, os.fspath(path))
    lowered = lower(model)
    x, y = lowered.builder.tensors[k_in], lowered.builder.tensors[k_out]
    out_shape = lowered.builder.shapes[k_out]
    if out_shape[0] != batch:
        lowered.release()
        raise NNAPIError(f"{os.fspath(path)}: output operand {k_out} has shape {list(out_shape)} for a batch of "
                         f"{batch}; a batched run needs the batch as its first dimension")
    graph, (x_api, y_api) = adopt(ctx, lowered.graph, [x, y], lowered.builder.context, lowered.release)
    return graph, x_api, y_api


@refusing
def run_options(path: str) -> dict:
    """What ``openvx-nn run`` needs besides the graph: the shape of one input item (OpenVX order)."""
    model = load_model(path)
    k, out = _runnable(model, os.fspath(path))
    return {"item_shape": tuple(reversed(model.operands[k].dimensions[1:])),
            "describes": f"output operand {out} values"}
