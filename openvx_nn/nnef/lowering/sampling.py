"""``nearest_upsample`` and ``multilinear_upsample`` on the resampling kernel (2-D, whole factors).
``multilinear_upsample``'s grids: ``aligned`` puts the corners on the corners; ``symmetric`` samples pixel
centres and ``asymmetric`` pixel corners, both with the border replicated (a ``constant`` border, which
blends the edges with zeros, is refused)."""
from __future__ import annotations

from ...operations.coreml.resample import RESAMPLE_METHODS
from ..builder import NNEFBuilder
from .common import result, shape_of
from .registry import lowers

GRIDS = {("aligned", "replicate"): "align_corners_true", ("aligned", "constant"): "align_corners_true",
         ("symmetric", "replicate"): "align_corners_false", ("asymmetric", "replicate"): "upsample"}


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
    grid = GRIDS.get((method, border))
    if grid is None:
        raise g.fail(f"method '{method}' with border '{border}' is not supported (supported: "
                     f"{', '.join(f'{m}/{b}' for m, b in GRIDS)})")
    name = result(op)
    g.coreml("resample", (x.tensor, g.enum(RESAMPLE_METHODS.index(grid)), g.output(name, shape_of(g, name))))
    return f"coreml.resample({grid})"
