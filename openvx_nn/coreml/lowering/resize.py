"""Upsample, resize bilinear and crop-resize layers onto the resample kernels."""
from __future__ import annotations

import math

from ...operations.coreml.resample import BOX_MODES, RESAMPLE_METHODS
from ..builder import Blob, GraphBuilder
from .common import need_rank, single
from .nhwc import slot
from .registry import lowers

SAMPLING = {0: "strict_align_endpoints", 1: "align_endpoints", 2: "upsample", 3: "roi_align"}
LINEAR_UPSAMPLE = {0: "upsample_default", 1: "align_corners_true", 2: "align_corners_false"}


@lowers("upsample")
def upsample(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer, held=True)
    need_rank(g, x, 3)
    method = "nearest" if p.mode == 0 else LINEAR_UPSAMPLE.get(p.linearUpsampleMode)
    if method is None:
        raise g.fail(f"linearUpsampleMode {p.linearUpsampleMode} is not defined")
    fractions = [float(f) for f in p.fractionalScalingFactor]
    if fractions:  # the output is floor(in * factor) on the grid of its mode (spacing in / out)
        if len(fractions) != 2 or not all(math.isfinite(f) and f > 0 for f in fractions):
            raise g.fail(f"fractionalScalingFactor {fractions} must be two positive numbers")
        if method not in ("align_corners_true", "align_corners_false"):
            raise g.fail("fractionalScalingFactor needs BILINEAR mode with ALIGN_CORNERS_TRUE or ALIGN_CORNERS_FALSE")
        size = [math.floor(x.shape[-2 + i] * fractions[i]) for i in range(2)]
        if min(size) < 1:
            raise g.fail(f"fractionalScalingFactor {fractions} leaves no output of {list(x.shape[-2:])}")
        shape = x.shape[:-2] + tuple(size)
    else:
        factors = [int(f) for f in p.scalingFactor] or [1, 1]
        if len(factors) != 2 or min(factors) < 1:
            raise g.fail(f"scalingFactor {factors} must be two positive integers")
        shape = x.shape[:-2] + (x.shape[-2] * factors[0], x.shape[-1] * factors[1])
    return _resample(g, layer, x, method, shape)


def _resample(g: GraphBuilder, layer, x: Blob, method: str, shape: tuple[int, ...]) -> str:
    """``coreml.resample`` of ``x`` to ``shape``; ``coreml.resample_nhwc`` on the NHWC route when the input is held
    there and the concatenation along C alone reads the output (``fusion.concat_slots``: written into its slice
    when the concatenation's other inputs are made, so that the concatenation stays in NHWC with one copy less)."""
    name, target = layer.input[0], layer.output[0]
    held = g.nhwc.get(name)
    # one image (N 1): its [W, H, C] view merges into the kernel's planes, so the native entry takes it as it is
    if target in g.slots and held is not None and len(held.tensor.dims) == 4 and held.tensor.dims[3] == 1:
        view = slot(g, target, shape)
        out = view if view is not None else g.nhwc_output(target, shape)
        g.coreml("resample_nhwc", (held.tensor, g.enum(RESAMPLE_METHODS.index(method)), out))
        return f"coreml.resample_nhwc({method}) (NHWC" + (", into the concatenation's slice)" if view is not None
                                                           else ")")
    g.coreml("resample", (g.blob(name).tensor, g.enum(RESAMPLE_METHODS.index(method)), g.output(target, shape)))
    return f"coreml.resample({method})"


@lowers("resizeBilinear")
def resize_bilinear(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer, held=True)
    need_rank(g, x, 3)
    size = [int(v) for v in p.targetSize] or [1, 1]
    method = SAMPLING.get(p.mode.samplingMethod)
    if len(size) != 2 or min(size) < 1 or method is None:
        raise g.fail(f"targetSize {size} / sampling mode {p.mode.samplingMethod} is not valid")
    shape = x.shape[:-2] + tuple(size)
    return _resample(g, layer, x, method, shape)


@lowers("cropResize")
def crop_resize(g: GraphBuilder, layer, p) -> str:
    if len(layer.input) != 2:
        raise g.fail("crop-resize takes 2 inputs (feature map, boxes)")
    x, boxes = g.blob(layer.input[0]), g.blob(layer.input[1])
    need_rank(g, x, 5, 5)
    if x.shape[0] != 1 or boxes.rank != 5 or boxes.shape[1:] not in ((1, 4, 1, 1), (1, 5, 1, 1)):
        raise g.fail(f"inputs must be [1, B, C, H, W] and [N, 1, 4 or 5, 1, 1], got {list(x.shape)}, "
                     f"{list(boxes.shape)}")
    size = [int(v) for v in p.targetSize] or [1, 1]
    method = SAMPLING.get(p.mode.samplingMethod)
    if method is None or p.boxIndicesMode.boxMode >= len(BOX_MODES):
        raise g.fail("sampling or box mode is not defined")
    batch = x.shape[1] if boxes.shape[2] == 4 else 1
    shape = (boxes.shape[0], batch, x.shape[2], size[0], size[1])
    g.coreml("crop_resize", (x.tensor, boxes.tensor, g.enum(RESAMPLE_METHODS.index(method)),
                             g.enum(p.boxIndicesMode.boxMode), g.i32(p.normalizedCoordinates),
                             g.f32(p.spatialScale or 1.0), g.output(layer.output[0], shape)))
    return f"coreml.crop_resize({method})"
