"""An NNEF model for ``openvx-nn run`` and ``map_batches``: one graph for ``batch`` items.

NNEF's first axis is the batch, its slowest, so the OpenVX dims of an NNEF tensor end with it: the graph
built for an input of ``[batch, ...]`` (shapes inferred anew) takes and gives the run's data as it is, in
OpenVX order with the batch last. A run feeds one input and writes the first output.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .errors import NNEFError
from .model import NNEFModel, load
from .reader import read

if TYPE_CHECKING:
    from ..api import Context, Graph, Tensor


def _declared(path) -> object:
    graph = read(path)
    if len(graph.inputs) != 1:
        raise NNEFError(f"{os.fspath(path)} has {len(graph.inputs)} inputs ({', '.join(graph.inputs)}); a "
                        "batched run feeds exactly one")
    shape = graph.tensors[graph.inputs[0]].shape
    if len(shape) < 2:
        raise NNEFError(f"input '{graph.inputs[0]}' of shape {list(shape)} has no batch axis before its items")
    return graph


def batched_model(path, batch: int) -> NNEFModel:
    """The model of ``path`` built for ``batch`` items (its input's first axis)."""
    if int(batch) < 1:
        raise NNEFError(f"batch must be at least 1, got {batch}")
    graph = _declared(path)
    name = graph.inputs[0]
    return load(path, {name: [int(batch)] + list(graph.tensors[name].shape[1:])})


def build_batched(ctx: Context, path: str, batch: int) -> tuple[Graph, Tensor, Tensor]:
    """``(graph, input, output)`` of the NNEF folder ``path`` for ``batch`` items, in ``ctx``."""
    from ..api.adopt import adopt
    model = batched_model(path, batch)
    g = model.builder
    first = model.outputs[0].name
    graph, (x, y) = adopt(ctx, g.graph, [g.inputs[model.inputs[0].name], g.blobs[first].tensor], g.context,
                          g.close)
    return graph, x, y


def run_options(path: str) -> dict:
    """The run's item shape (the input's NNEF shape after the batch, in OpenVX order) and what it writes."""
    graph = _declared(path)
    return {"item_shape": tuple(int(d) for d in reversed(graph.tensors[graph.inputs[0]].shape[1:])),
            "describes": f"'{graph.outputs[0]}' values"}
