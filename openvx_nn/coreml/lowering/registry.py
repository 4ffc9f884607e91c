"""The table of CoreML layer lowerings: ``LOWERINGS[type](builder, layer, params) -> str`` adds the
layer's nodes to the graph and says how it ran (for ``CoreMLModel.layers``). The lowering modules fill it
with ``@lowers``; the package imports them all."""
from __future__ import annotations

from collections.abc import Callable

from ..errors import CoreMLError
from ..validation import UNTYPED

LOWERINGS: dict[str, Callable] = {}
FUSED: dict[str, Callable] = {}
"""Lowerings of layers fused by a plan of ``fusion`` (not CoreML layer types), by the plan's name, filled with
``@fuses``: ``FUSED["gate"](builder, multiply layer, fusion.Gate) -> str``; a stand-in layer naming one in its ``fused``
attribute (``coreml.recurrent_loops.GRULoop``) is lowered by it too."""


def lowers(*kinds: str):
    def register(function: Callable) -> Callable:
        for kind in kinds:
            LOWERINGS[kind] = function
        return function
    return register


def fuses(name: str):
    def register(function: Callable) -> Callable:
        FUSED[name] = function
        return function
    return register


def lower(builder, layer) -> str:
    """Lower one layer (``builder.layer`` names it for errors)."""
    kind = layer.WhichOneof("layer")
    if kind is None:
        raise CoreMLError(UNTYPED, layer.name, "none")
    builder.layer = (layer.name, kind)
    fused = getattr(layer, "fused", None)  # a pattern of layers recognized at load (``recurrent_loops``)
    function = FUSED.get(fused) if fused else LOWERINGS.get(kind)
    if function is None:
        raise builder.fail("this layer type is not supported by openvx_nn.coreml")
    try:
        return function(builder, layer, getattr(layer, fused or kind))
    except CoreMLError as err:
        if err.layer is not None:
            raise
        # raised by a helper that does not know the layer (weights, blob axes): name it here
        raise CoreMLError(err.reason, layer.name, kind) from None



def lower_all(builder, layers, keep: set[str]) -> list[str]:
    """Lower ``layers`` in order, folding what a convolution may take (``fusion.plan``), an activation into
    the multiply by its own input (``fusion.gated_products``), a batchnorm no convolution took into the ReLU
    after it (``fusion.activated_affines``) and a mean-variance normalization into the ``scale`` after it
    (``fusion.normalized_scales``), and lets a transposed convolution write into the slice of the
    concatenation that alone reads it (``fusion.concat_slots``; ``keep``: blobs read after them); returns how each
    ran."""
    from . import concat_chains, fusion
    stages = fusion.plan(layers, keep)
    builder.slots = fusion.concat_slots(layers, keep)
    builder.chain_links = concat_chains.links(layers, keep)
    builder.chain_channels = concat_chains.channel_counts(layers) if builder.chain_links else {}
    builder.chain_slices = concat_chains.slice_inputs(layers, keep, builder.chain_links)
    builder.early_slots = concat_chains.early_slots(layers, keep, builder.chain_links)
    if builder.early_slots:
        builder.concat_makers = concat_chains.makers(layers)
    gates = fusion.gated_products(layers, keep)
    gate_of = {position: layers[j].name for j, gate in gates.items()
               for position in (gate.position, gate.threshold) if position is not None}
    activated = fusion.activated_affines(layers, keep)
    relu_of = {pair.position: j for j, pair in activated.items()}
    normalized = fusion.normalized_scales(layers, keep)
    scale_of = {pair.position: j for j, pair in normalized.items()}
    skipped: set[int] = set()  # batchnorms left to the ReLU after them, mvns left to the scale after them
    hows = []
    for i, layer in enumerate(layers):
        if i in builder.folded:
            hows.append(f"folded into convolution '{builder.folded[i]}'")
        elif i in gate_of:
            hows.append(f"folded into multiply '{gate_of[i]}'")
        elif i in gates:
            builder.layer = (layer.name, "multiply")
            hows.append(FUSED["gate"](builder, layer, gates[i]))
        elif i in relu_of:
            skipped.add(i)
            hows.append(f"folded into activation '{layers[relu_of[i]].name}'")
        elif i in activated and activated[i].position in skipped:
            builder.layer = (layer.name, "activation")
            hows.append(FUSED["affine_relu"](builder, layer, activated[i]))
        elif i in scale_of and FUSED["normalized_scale"](builder, layers[scale_of[i]], normalized[scale_of[i]],
                                                         check=True):
            skipped.add(i)
            hows.append(f"folded into scale '{layers[scale_of[i]].name}'")
        elif i in normalized and normalized[i].position in skipped:
            builder.layer = (layer.name, "scale")
            hows.append(FUSED["normalized_scale"](builder, layer, normalized[i]))
        else:
            builder.epilogue = stages.get(i)
            hows.append(lower(builder, layer))
    builder.layer, builder.epilogue = None, None
    return hows
