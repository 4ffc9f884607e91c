"""Small helpers the lowerings share: one input/output, permutations, copies into views, values known when the
graph is built."""
from __future__ import annotations

import math

import numpy as np

from ...api.builder_nodes import concat, permute, reshape, view, vx_axes  # noqa: F401 - the lowerings take them here
from ..builder import Blob, GraphBuilder


def axis_index(g: GraphBuilder, axis: int, rank: int) -> int:
    """A CoreML axis (negative counts from the end) as 0..rank-1."""
    if not -rank <= axis < rank:
        raise g.fail(f"axis {axis} is outside rank {rank}")
    return axis % rank


def only_input(g: GraphBuilder, layer) -> Blob:
    """The layer's only input (any number of outputs)."""
    if len(layer.input) != 1:
        raise g.fail(f"expected exactly 1 input, got {len(layer.input)}")
    return g.blob(layer.input[0])


def split_views(g: GraphBuilder, x: Blob, cm_axis: int, sizes, names) -> str:
    """Outputs ``names`` are consecutive views of ``x`` of ``sizes`` along ``cm_axis``."""
    offset = 0
    for name, size in zip(names, sizes):
        begin = [0] * x.rank
        begin[cm_axis] = offset
        shape = list(x.shape)
        shape[cm_axis] = size
        view(g, x, begin, shape, name)
        offset += size
    return f"{len(sizes)} views of the input"


def single(g: GraphBuilder, layer, count: int = 1, held: bool = False) -> Blob:
    """The layer's only input, checking the input and output counts (``held``: in whichever layout it is held,
    for its shape; else in CoreML's layout)."""
    if len(layer.input) != 1 or len(layer.output) != count:
        raise g.fail(f"expected 1 input and {count} output(s), got {len(layer.input)} and {len(layer.output)}")
    return g.held(layer.input[0]) if held else g.blob(layer.input[0])


def need_rank(g: GraphBuilder, blob: Blob, low: int, high: int = 6) -> None:
    if not low <= blob.rank <= high:
        raise g.fail(f"input of shape {list(blob.shape)} has rank {blob.rank}; this layer needs {low} to {high}")


def known_value(g: GraphBuilder, name: str) -> np.ndarray:
    """The values of blob ``name`` when the graph is built (a constant, a shape, or an input the segment's graph is
    built per value of: ``control.KEYED``), flat, float64."""
    value = g.values.get(name)
    if value is None:
        raise g.fail(f"input '{name}' has no value known when the graph is built (the layer's output shape "
                     "depends on it)")
    return np.asarray(value, np.float64).reshape(-1)


def integer_values(g: GraphBuilder, name: str, what: str) -> list[int]:
    """Blob ``name``'s known values, each an integer."""
    v = known_value(g, name)
    if not (np.isfinite(v).all() and (np.rint(v) == v).all()):
        raise g.fail(f"{what} '{name}' holds {v.tolist()}; each value must be an integer")
    return [int(d) for d in v]


def shape_value(g: GraphBuilder, name: str) -> tuple[int, ...]:
    """A shape given by blob ``name``'s values (rank 1 to 6, each size at least 1)."""
    shape = integer_values(g, name, "the shape input")
    if not 1 <= len(shape) <= 6 or min(shape) < 1:
        raise g.fail(f"the shape input '{name}' holds {shape}; a shape has 1 to 6 sizes, each at least 1")
    return tuple(shape)


def weights_input(g: GraphBuilder, layer, shape) -> object:
    """The layer's second input as the weights tensor of ``shape`` (CoreML order; reshaped when it holds the same
    values in another shape)."""
    w = g.blob(layer.input[1])
    if math.prod(w.shape) != math.prod(shape):
        raise g.fail(f"the weights input '{layer.input[1]}' of shape {list(w.shape)} does not hold the "
                     f"{list(shape)} the layer's parameters give")
    return w.tensor if tuple(w.shape) == tuple(shape) else reshape(g, w, shape).tensor
