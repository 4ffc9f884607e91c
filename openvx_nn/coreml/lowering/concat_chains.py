"""Concatenations along C that grow one buffer: DenseNet's dense blocks without copying the earlier channels again.

In a dense block each layer concatenates the block's concatenation so far with its own new channels, and the next
layer's batchnorm + ReLU reads the result. Copied as such, every concatenation copies every earlier channel once
more (a block of 24 layers copies its first channels 24 times). Held in NHWC (each pixel's channels side by side),
the concatenation so far is a channel prefix of the next one: the chain's last concatenation is one buffer, every
earlier one a view of its first channels, and each concatenation copies only its new inputs into their slice.
The batchnorm + ReLU pass reads such a prefix in place (``channel_affine`` takes pixels wider than its channels).

The plan (:func:`links`, before lowering) pairs a concatenation with the later one that takes its output as first
input; the buffer's channels are summed when the chain's first concatenation is lowered, from the layers that make
the later inputs (a convolution's ``outputChannels``, a batchnorm's ``channels``, an activation's input). Where a
count is not known, or a later concatenation does not run in NHWC, the chain ends there and the next
concatenation copies as before: the same bytes either way. ``OPENVX_NN_CONCAT_VIEWS=0`` (read at each load)
turns the plan off, to compare.

A dense layer's new channels need no copy either: a convolution whose output a later concatenation of a chain
alone reads writes it straight into its slice of the buffer (:func:`producer_slice`; the float engine takes an
output whose pixels are wider than its channels), and the concatenation copies only what no producer placed.
A convolution whose output a concatenation along C outside any chain alone reads (DeepLab's atrous branches)
writes its slice too: the concatenation's output is made when the first such convolution is lowered, from the
channels of its inputs made or stated by their layers (:func:`early_slot`), and the concatenation runs in NHWC,
copying only the inputs no producer placed. ``OPENVX_NN_CONCAT_SLICES=0`` turns both alone off.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

from ..builder import Blob, GraphBuilder, nhwc_dims


def enabled() -> bool:
    """Whether concatenations may grow one buffer (on unless ``OPENVX_NN_CONCAT_VIEWS=0``)."""
    return os.environ.get("OPENVX_NN_CONCAT_VIEWS", "").strip() != "0"


def slices_enabled() -> bool:
    """Whether producers may write into a chain's buffer (on unless ``OPENVX_NN_CONCAT_SLICES=0``)."""
    return os.environ.get("OPENVX_NN_CONCAT_SLICES", "").strip() != "0"


def _along_c(layer) -> bool:
    return layer.WhichOneof("layer") == "concat" and not layer.concat.sequenceConcat and len(layer.output) == 1


def links(order: Sequence, keep: set[str]) -> dict[str, object]:
    """{output blob of a concatenation along C: the later concatenation along C that takes it as its first input}
    where the blob is written once, no model output nor read after ``order`` (``keep``), and is not another input
    of that concatenation; every blob the later one reads or writes is written once (an in-place name could move
    a slice after it is made)."""
    if not enabled():
        return {}
    writers = Counter(name for layer in order for name in layer.output)
    makers = {layer.output[0]: layer for layer in order if _along_c(layer)}
    found = {}
    for layer in order:
        if not _along_c(layer) or not layer.input or any(writers[n] > 1 for n in [*layer.input, *layer.output]):
            continue
        first = layer.input[0]
        if first in makers and first not in keep and first not in layer.input[1:]:
            found[first] = layer
    return found


def slice_inputs(order: Sequence, keep: set[str], found: dict[str, object]) -> dict[str, object]:
    """{blob: the concatenation of the chain ``found`` (:func:`links`) that alone reads it} for the blobs after
    the first input of a concatenation that continues a chain, read once, written once and no model output: their
    producers may write them into their slice of the chain's buffer (:func:`producer_slice`)."""
    if not found or not slices_enabled():
        return {}
    readers = Counter(name for layer in order for name in layer.input)
    writers = Counter(name for layer in order for name in layer.output)
    return {name: layer for layer in found.values() for name in layer.input[1:]
            if readers[name] == 1 and writers[name] == 1 and name not in keep}


PLACED_BY = ("convolution", "batchnorm", "activation")
"""Layers whose output may be a dense convolution's, with a batchnorm and an activation folded into it."""


def early_slots(order: Sequence, keep: set[str], found: dict[str, object]) -> dict[str, object]:
    """{blob: the concatenation along C that alone reads it} for the outputs of :data:`PLACED_BY` layers read once,
    written once and no model output, where the concatenation is in no chain (``found``: :func:`links`) and every
    blob it reads or writes is written once: a dense convolution making the blob may write it into its slice of the
    concatenation's output made early (:func:`early_slot`)."""
    if not slices_enabled():
        return {}
    readers = Counter(name for layer in order for name in layer.input)
    writers = Counter(name for layer in order for name in layer.output)
    chained = {id(layer) for layer in found.values()} | {id(layer) for layer in order
                                                          if layer.output and layer.output[0] in found}
    made = {layer.output[0] for layer in order if len(layer.output) == 1 and layer.WhichOneof("layer") in PLACED_BY}
    slots = {}
    for layer in order:
        if not _along_c(layer) or id(layer) in chained or \
                any(writers[n] != 1 for n in [*layer.input, *layer.output]):
            continue
        for name in layer.input:
            if name in made and readers[name] == 1 and name not in keep:
                slots[name] = layer
    return slots


def early_slot(g: GraphBuilder, name: str, shape: tuple[int, ...]):
    """The view of the output of the concatenation that alone reads blob ``name`` (:func:`early_slots`) where its
    producer writes it, the output made now if no input made it yet (``g.written`` then lists the inputs written
    there, as ``nhwc.slot`` does); None unless every input's channels are known (made, or stated by the layers
    making it: :func:`_stated`) and those made have ``name``'s extent."""
    layer = g.early_slots.get(name)
    if layer is None:
        return None
    channels = []
    for n in layer.input:
        made = shape if n == name else g.shape_of(n)
        if made is not None and (len(made) != len(shape) or made[:-3] != shape[:-3] or made[-2:] != shape[-2:]):
            return None
        count = made[-3] if made is not None else _stated(g, n)
        if count is None:
            return None
        channels.append(count)
    target = layer.output[0]
    if target not in g.written:
        if g.known(target):
            return None
        g.nhwc_output(target, shape[:-3] + (sum(channels),) + shape[-2:])
        g.written[target] = set()
    out = g.nhwc[target].tensor
    offset = sum(channels[:list(layer.input).index(name)])
    if out.dims[0] != sum(channels) or tuple(out.dims[1:]) != tuple(nhwc_dims(shape)[1:]):
        return None
    view = g.view(out, [offset, 0, 0, 0], [offset + shape[-3], *out.dims[1:]])
    g.nhwc[name] = Blob(view, shape)
    g.blobs.pop(name, None)
    g.written[target].add(name)
    return view


def makers(order: Sequence) -> dict[str, object]:
    """{blob written once: the layer of one output that writes it}."""
    writers = Counter(name for layer in order for name in layer.output)
    return {layer.output[0]: layer for layer in order if len(layer.output) == 1 and writers[layer.output[0]] == 1}


KEEP_CHANNELS = ("activation", "upsample", "resizeBilinear", "pooling")
"""Layers whose output has their input's channels (DeepLab's image pooling: pool, upsample)."""


def _stated(g: GraphBuilder, name: str, depth: int = 8) -> int | None:
    """The channels of blob ``name`` not made yet: as its layer states them (a convolution's ``outputChannels``, a
    batchnorm's ``channels``), or its input's through :data:`KEEP_CHANNELS` layers, that input made or stated."""
    layer = g.concat_makers.get(name)
    if layer is None or depth == 0:
        return None
    kind = layer.WhichOneof("layer")
    if kind == "convolution" and layer.convolution.outputChannels > 0 and not layer.convolution.isDeconvolution:
        return int(layer.convolution.outputChannels)
    if kind == "batchnorm" and layer.batchnorm.channels > 0:
        return int(layer.batchnorm.channels)
    if kind in KEEP_CHANNELS and len(layer.input) == 1:
        made = g.shape_of(layer.input[0])
        return made[-3] if made is not None and len(made) >= 3 else _stated(g, layer.input[0], depth - 1)
    return None


def producer_slice(g: GraphBuilder, name: str, shape: tuple[int, ...]):
    """The view of a chain's buffer that blob ``name`` (of model-order ``shape``) is written into by its producer,
    recorded in ``g.placed`` for the concatenation, which then copies it no more; None unless the concatenation's
    first input is held as the buffer's prefix already, the inputs before ``name`` have known channels, and the
    buffer has ``name``'s extent and room for its channels."""
    layer = g.chain_slices.get(name)
    if layer is None:
        return None
    first = layer.input[0]
    grown, held = g.grown.get(first), g.nhwc.get(first)
    if grown is None or held is None or held.tensor is not grown[1]:
        return None
    buffer, prefix = grown
    offset = prefix.dims[0]
    for other in layer.input[1:list(layer.input).index(name)]:
        if other not in g.chain_channels:
            return None
        offset += g.chain_channels[other]
    dims = nhwc_dims(shape)
    if len(dims) != 4 or tuple(buffer.dims[1:]) != tuple(dims[1:]) or offset + dims[0] > buffer.dims[0]:
        return None
    view = g.view(buffer, [offset, 0, 0, 0], [offset + dims[0], *dims[1:]])
    g.nhwc[name] = Blob(view, shape)
    g.blobs.pop(name, None)
    g.placed.setdefault(layer.output[0], set()).add(name)
    return view


def channel_counts(order: Sequence) -> dict[str, int]:
    """{blob: its channels} for the blobs whose channels the making layer states: a convolution's
    ``outputChannels``, a batchnorm's ``channels``, and an activation's input's (blobs written once)."""
    writers = Counter(name for layer in order for name in layer.output)
    counts: dict[str, int] = {}
    for layer in order:
        if len(layer.output) != 1 or writers[layer.output[0]] != 1:
            continue
        kind = layer.WhichOneof("layer")
        if kind == "convolution" and layer.convolution.outputChannels > 0:
            counts[layer.output[0]] = int(layer.convolution.outputChannels)
        elif kind == "batchnorm" and layer.batchnorm.channels > 0:
            counts[layer.output[0]] = int(layer.batchnorm.channels)
        elif kind == "activation" and len(layer.input) == 1 and layer.input[0] in counts:
            counts[layer.output[0]] = counts[layer.input[0]]
    return counts


def _planned_channels(g: GraphBuilder, name: str, channels: int) -> int:
    """The channels of the buffer a chain starting at concatenation output ``name`` (of ``channels``) grows to:
    each later concatenation's new inputs added while their counts are known and none is written into its slice
    by its producer (``GraphBuilder.slots``)."""
    later = g.chain_links.get(name)
    while later is not None:
        new = later.input[1:]
        if any(n not in g.chain_channels or n in g.slots for n in new):
            break
        channels += sum(g.chain_channels[n] for n in new)
        later = g.chain_links.get(later.output[0])
    return channels


def output(g: GraphBuilder, layer, shape: tuple[int, ...]):
    """(the buffer concatenation ``layer`` of model-order ``shape`` writes its inputs' slices into, whether its
    first input is already in place there): the buffer its first input is a prefix of, or a new one when a later
    concatenation takes its output (:func:`links`), its output blob then held as the buffer's first channels;
    (None, False) otherwise (the caller makes a tensor of its own)."""
    name, first = layer.output[0], layer.input[0]
    channels = shape[-3]
    grown = g.grown.get(first)
    held = g.nhwc.get(first)
    if grown is not None and held is not None and held.tensor is grown[1]:
        buffer = grown[0]
        if buffer.dims[0] < channels or tuple(buffer.dims[1:]) != tuple(nhwc_dims(shape)[1:]):
            grown = None
    else:
        grown = None
    if grown is None:
        if name not in g.chain_links:
            return None, False
        total = _planned_channels(g, name, channels)
        if total <= channels:
            return None, False
        buffer = g.temp_dims((total, *nhwc_dims(shape)[1:]))
    tensor = buffer if buffer.dims[0] == channels else \
        g.view(buffer, [0, 0, 0, 0], [channels, *buffer.dims[1:]])
    g.nhwc[name] = Blob(tensor, shape)
    g.blobs.pop(name, None)
    if name in g.chain_links:
        g.grown[name] = (buffer, tensor)
    return buffer, grown is not None
