"""A CoreML model for ``openvx-nn run`` and ``map_batches``: one graph for ``batch`` items.

CoreML blobs are ``[Seq, Batch, C, H, W]``, so the batch is OpenVX axis 3 of a blob; the run
command wants it last.  The graph is the one ``predict`` builds (``CoreMLModel.build_graph``) for
an input of ``batch`` items, plus two copies: the run input, the declared feature shape in OpenVX
order with the batch last (``[W, H, C, N]`` for a ``[C, H, W]`` input, ``[C, N]`` for ``[C]``),
into the model's input blob, and the output blob into the run output of the same form.  A
classifier's output is its probabilities (``[classes, N]``); ``run_options`` makes the run command
write the class labels instead.
"""
from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..core.tensor import Tensor as ModelTensor
from .builder import GraphBuilder
from .errors import CoreMLError
from .model import CoreMLModel, _parse

if TYPE_CHECKING:
    from ..api import Context, Graph, Tensor


def _runnable(path) -> CoreMLModel:
    """The model of ``path`` (no graph built yet), checked to have what a batched run needs."""
    # The library's embedded runtime must start before coremltools is imported: cffi's start-up
    # spins forever in a process that imported coremltools first (see tests/coreml/conftest.py).
    from .. import vx
    vx.vxGetStatus(vx.ffi.NULL)
    model = CoreMLModel(_parse(path), declared=False)
    if len(model.inputs) != 1:
        raise CoreMLError(f"{os.fspath(path)} has {len(model.inputs)} inputs ({', '.join(sorted(model.inputs))}); "
                          "a batched run feeds exactly one")
    if model.exact:
        raise CoreMLError(f"{os.fspath(path)} uses the EXACT array shape mapping; a batched run needs the "
                          "classic rank-5 blobs, whose Batch axis it fills")
    return model


def _item_shape(model: CoreMLModel) -> tuple[int, ...]:
    """One run input item in OpenVX order: the declared feature shape reversed."""
    return tuple(reversed(model._feature_shape(next(iter(model.inputs)))))


def _output_features(model: CoreMLModel, name: str, shape: tuple[int, ...], batch: int) -> tuple[int, ...]:
    """The CoreML feature shape of one item of output blob ``name`` (``[C]`` or ``[C, H, W]``)."""
    if len(shape) != 5 or shape[0] != 1 or shape[1] != batch:
        raise CoreMLError(f"output '{name}' has shape {list(shape)}; a batched run needs [1, {batch}, C, H, W] "
                          "(one sequence step, the batch kept)")
    declared = model.outputs.get(name)
    vector = model.kind == "neuralNetworkClassifier" or (
        declared is not None and declared.type.WhichOneof("Type") == "multiArrayType"
        and len(declared.type.multiArrayType.shape) == 1)
    return shape[2:3] if vector and shape[3:] == (1, 1) else shape[2:]


def batched_graph(model: CoreMLModel, batch: int) -> tuple[GraphBuilder, ModelTensor, ModelTensor]:
    """The verified graph of ``model`` for ``batch`` items and its batch-last input and output."""
    if int(batch) < 1:
        raise CoreMLError(f"batch must be at least 1, got {batch}")
    name = next(iter(model.inputs))
    blob_shape = (1, int(batch)) + model._declared_shape(name)[2:]
    made: dict[str, ModelTensor] = {}

    def add_copies(g: GraphBuilder) -> None:
        features = tuple(reversed(_item_shape(model)))
        made["input"] = g.real((batch,) + features)
        g.coreml("reshape", (made["input"], g.inputs[name]))
        out = model._wanted_blobs()[0]
        blob = g.blobs[out]
        made["output"] = g.real((batch,) + _output_features(model, out, blob.shape, batch))
        g.coreml("reshape", (blob.tensor, made["output"]))

    g = model.build_graph({name: blob_shape}, add_copies)
    return g, made["input"], made["output"]


def build_batched(ctx: Context, path: str, batch: int) -> tuple[Graph, Tensor, Tensor]:
    """``(graph, input, output)`` of the ``.mlmodel`` at ``path`` for ``batch`` items, in ``ctx``:
    data in OpenVX order with the batch on the last axis (float32)."""
    from ..api.adopt import adopt
    g, x, y = batched_graph(_runnable(path), batch)
    graph, (x_api, y_api) = adopt(ctx, g.graph, [x, y], g.context, g.close)
    return graph, x_api, y_api


def class_labels(probabilities: np.ndarray, labels: tuple | None) -> np.ndarray:
    """The label of the most probable class of each item (``probabilities`` is ``[classes, N]``)."""
    best = probabilities.argmax(axis=0)
    return best.astype(np.int64) if labels is None else np.asarray(labels)[best]


def run_options(path: str) -> dict:
    """What ``openvx-nn run`` needs besides the graph: the input item shape, and for classifiers a
    ``finish`` that writes class labels (the model's own: strings or integers) as CoreML's
    ``predict`` gives them."""
    model = _runnable(path)
    options: dict = {"item_shape": _item_shape(model)}
    if model.kind == "neuralNetworkClassifier":
        which = model.network.WhichOneof("ClassLabels")
        labels = tuple(getattr(model.network, which).vector) if which else None
        options.update(finish=partial(class_labels, labels=labels), describes="class labels")
    else:
        options["describes"] = f"'{model._wanted_blobs()[0]}' values"
    return options
