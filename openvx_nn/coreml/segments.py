"""Running a model with control flow (``control.py``): each segment is built as an ordinary verified graph per
signature of its inputs' shapes (and of the values of the inputs that give a layer's output shape: ``control.KEYED``),
kept among the model's graphs, and run on the blobs passed by name. A value
known at load (a constant, a shape) passes to the segments built after the one making it when only one layer
writes that blob."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.tensor import assign
from .builder import Blob, GraphBuilder
from .control import Segment, run_program
from .errors import CoreMLError
from .lowering import lower_all


def predict(model, arrays: dict[str, np.ndarray], bench: bool) -> dict[str, np.ndarray]:
    """``model``'s outputs for ``arrays`` (CoreML order, by input name), its program run from the start."""
    blobs = dict(arrays)
    run_program(model.flow.program, blobs, lambda segment, held: _run(model, segment, held, bench))
    results = {}
    for name in model._wanted_blobs():
        if name not in blobs:
            raise CoreMLError(f"output '{name}' has not been produced by the run (its producer is in a branch "
                              "not taken or a loop that ran no iteration)")
        value = blobs[name]
        results[name] = value if model.exact else value.reshape(model._output_shape(name, value.shape))
    return results


def _run(model, segment: Segment, blobs: dict[str, np.ndarray], bench: bool) -> None:
    if not segment.outputs:  # nothing reads what it writes (a converter's leftover constant): no graph to run
        return
    arrays = {name: blobs[name] for name in segment.inputs}
    values = {name: np.array(arrays[name], np.float32) for name in segment.keyed}
    key = ("segment", segment.index, tuple((n, a.shape) for n, a in arrays.items()),
           tuple((n, v.tobytes()) for n, v in values.items()))
    g = model._graphs.get(key)
    if g is None:
        g = model._graphs[key] = _build(model, segment, {n: a.shape for n, a in arrays.items()}, values)
    runs = model._run(g, arrays, bench, list(segment.outputs))
    for name, storage, shape in runs.outputs:
        array = np.empty(shape, np.float32)
        assign(array.reshape(storage.shape), storage)
        blobs[name] = array  # a new array: a blob read earlier keeps the value it had
    for name, count in segment.trims:  # a layer's output of data-dependent length: the rows the run filled
        if count in blobs:
            blobs[name] = blobs[name][:int(blobs.pop(count).reshape(-1)[0])]


def _build(model, segment: Segment, shapes: Mapping[str, tuple[int, ...]],
           values: Mapping[str, np.ndarray]) -> GraphBuilder:
    """A verified graph of ``segment``'s layers (in file order: a layer reading a blob a later layer rewrites reads
    the value from before) for its inputs' ``shapes`` and the ``values`` of its keyed inputs."""
    g = GraphBuilder(segment.outputs, model.nhwc_route)
    with g.building():
        g.inputs = {}
        for name, shape in shapes.items():
            g.inputs[name] = tensor = g.real(shape)
            g.blobs[name] = Blob(tensor, tuple(int(d) for d in shape))
            if name in model.flow.known:
                g.values[name] = model.flow.known[name]
            if name in values:
                g.values[name] = values[name]
        for layer, how in zip(segment.layers, lower_all(g, segment.layers, set(segment.outputs))):
            model._how[id(layer)] = how
        for name in segment.outputs:
            g.blob(name)  # in CoreML's layout
        g.verify()
        model.flow.known.update((n, g.values[n]) for n in segment.outputs if n in model.flow.once and n in g.values)
    model._list_layers()
    return g
