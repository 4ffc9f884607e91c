"""One lowering per CoreML layer type: ``LOWERINGS[type](builder, layer, params) -> str``
adds the layer's nodes to the graph and says how it ran (for ``CoreMLModel.layers``)."""
from __future__ import annotations

from collections.abc import Callable

from ..errors import CoreMLError

LOWERINGS: dict[str, Callable] = {}


def lowers(*kinds: str):
    def register(function: Callable) -> Callable:
        for kind in kinds:
            LOWERINGS[kind] = function
        return function
    return register


def lower(builder, layer) -> str:
    """Lower one layer (``builder.layer`` names it for errors)."""
    kind = layer.WhichOneof("layer")
    if kind is None:
        raise CoreMLError("the layer has no type", layer.name, "none")
    builder.layer = (layer.name, kind)
    function = LOWERINGS.get(kind)
    if function is None:
        raise builder.fail("this layer type is not supported by openvx_nn.coreml")
    return function(builder, layer, getattr(layer, kind))


from . import (  # noqa: F401  (each module registers its lowerings)
    activation,
    arithmetic,
    convolution,
    normalization,
    recurrent,
    resize,
    shape,
    shape_nd,
    tensor_nd,
)
