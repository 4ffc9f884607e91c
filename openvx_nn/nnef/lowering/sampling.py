"""``nearest_upsample`` and ``multilinear_upsample`` on the resampling kernel (2-D, whole factors).
``multilinear_upsample``'s grids: ``aligned`` puts the corners on the corners; ``symmetric`` samples pixel
centres and ``asymmetric`` pixel corners. A ``constant`` border blends the outputs past the outermost input
centres with zeros: the replicated border's result times the weight the inside neighbour keeps there (a
constant table per axis, 1 inside), since the interpolation weights of the two axes multiply."""
from __future__ import annotations

import numpy as np

from ...operations.coreml.elementwise import COMBINE_OPERATIONS
from ...operations.coreml.resample import RESAMPLE_METHODS
from ..builder import NNEFBuilder
from .common import result, shape_of
from .registry import lowers

GRIDS = {"aligned": "align_corners_true", "symmetric": "align_corners_false", "asymmetric": "upsample"}


def _spatial(g: NNEFBuilder, op):
    x = g.blob(str(op.inputs["input"]))
    if x.rank != 4:
        raise g.fail(f"input of shape {list(x.shape)}: only 2-D upsampling of [N, C, H, W] is supported")
    return x


@lowers("nearest_upsample")
def nearest_upsample(g: NNEFBuilder, op) -> str:
    x = _spatial(g, op)
    name = result(op)
    g.coreml("resample", (x.tensor, g.enum(RESAMPLE_METHODS.index("nearest")), g.output(name, shape_of(g, name))))
    return "coreml.resample(nearest)"


@lowers("multilinear_upsample")
def multilinear_upsample(g: NNEFBuilder, op) -> str:
    x = _spatial(g, op)
    method, border = op.attribs.get("method", "symmetric"), op.attribs.get("border", "replicate")
    grid = GRIDS.get(method)
    if grid is None or border not in ("replicate", "constant"):
        raise g.fail(f"method '{method}' with border '{border}' is not supported (methods {', '.join(GRIDS)}; "
                     "borders replicate, constant)")
    name = result(op)
    shape = shape_of(g, name)
    factors = [o // i for o, i in zip(shape[2:], x.shape[2:])]
    weights = [_inside_weight(n, f, method) for n, f in zip(x.shape[2:], factors)]
    if border == "replicate" or all(np.all(w == 1.0) for w in weights):
        g.coreml("resample", (x.tensor, g.enum(RESAMPLE_METHODS.index(grid)), g.output(name, shape)))
        return f"coreml.resample({grid})"
    replicated = g.temp(shape)
    g.coreml("resample", (x.tensor, g.enum(RESAMPLE_METHODS.index(grid)), replicated))
    table = np.outer(weights[0], weights[1]).reshape((1, 1) + tuple(shape[2:]))
    g.coreml("combine", (replicated, g.constant(table), g.enum(COMBINE_OPERATIONS.index("multiply")), g.f32(0.0),
                         g.output(name, shape)))
    return f"coreml.resample({grid}), coreml.combine(multiply by the border's weights)"


def _inside_weight(n: int, factor: int, method: str) -> np.ndarray:
    """Per output along one axis: the weight the input's edge keeps where the sampling position falls past the
    outermost input centre (the rest goes to the zero beyond), 1 inside."""
    i = np.arange(n * factor, dtype=np.float64)
    if method == "symmetric":
        position = (i + 0.5) / factor - 0.5
    elif method == "asymmetric":
        position = i / factor
    else:  # aligned: every position is inside
        return np.ones(n * factor)
    return 1.0 - np.maximum(0.0, -position) - np.maximum(0.0, position - (n - 1))
