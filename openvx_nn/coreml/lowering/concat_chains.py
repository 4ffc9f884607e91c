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
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

from ..builder import Blob, GraphBuilder, nhwc_dims


def enabled() -> bool:
    """Whether concatenations may grow one buffer (on unless ``OPENVX_NN_CONCAT_VIEWS=0``)."""
    return os.environ.get("OPENVX_NN_CONCAT_VIEWS", "").strip() != "0"


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
