"""Layers folded into the convolution before them: per-channel affine layers -- a batchnorm with
stored statistics, a ``scale`` or ``bias`` of one value or one per channel, a ``linear`` activation --
(into the weights and bias, any number of them), a residual add (added by the kernel's epilogue) and
a ReLU, ReLU6 or clip (the kernel's output clip), in that order, each optional.

A converted CNN writes each convolution as conv, batchnorm and an activation, and coremltools'
converter writes ReLU6 as four layers (ReLU, linear(-1), threshold(-6), linear(-1)): folded,
MobileNet v2 is 54 nodes instead of some 250, each a full pass over memory.
A layer folds only when it is the sole reader of the blob before it, that blob is no model
output, and no blob of the chain is written by more than one layer (CoreML allows in-place
names); an add folds only when its other input is made earlier in the layer order. ``plan``
proposes the stages; the convolution's lowering takes them in order while they fit (an affine
stage of one value or the convolution's channel count, a residual of its output's shape) and
records what it took in ``GraphBuilder.folded``, so a stage it declines is lowered as its own
layer. Folding an affine stage rounds ``w * scale`` once in float32 instead of scaling the sum:
the results agree to float32 rounding, as CoreML's own fused kernels do.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..weights import load_weights

CLIP_CODES = {(0.0, float("inf")): 1, (-1.0, 1.0): 2, (0.0, 6.0): 3}
"""The clips the NHWC engines fuse, by NNAPI's activation code: RELU, RELU1, RELU6."""

_NEXT = {None: ("affine", "add", "clip"), "affine": ("affine", "add", "clip"), "add": ("clip",), "clip": ()}


@dataclass(frozen=True)
class Stage:
    """One folded step: ``kind`` affine (``value`` = scale, shift: float64 arrays of one value or one per
    channel), add (the residual blob's name) or clip (low, high); the layers it stands for and the blob it
    leaves."""

    kind: str
    value: object
    positions: tuple[int, ...]
    names: tuple[str, ...]
    output: str


def plan(order: Sequence, keep: set[str]) -> dict[int, list[Stage]]:
    """{position of a convolution in ``order``: the stages it may fold} (convolutions with none left out)."""
    use = _BlobUse(order)
    readers, writers = use.readers, use.writers
    made_at = {name: i for i, layer in enumerate(order) for name in layer.output}
    reader_of = {name: (i, layer) for i, layer in enumerate(order) for name in layer.input}

    def next_layer(blob: str):
        """The sole reader of ``blob`` when it may fold, as (position, layer), else None."""
        if readers[blob] != 1 or writers[blob] != 1 or blob in keep:
            return None
        position, layer = reader_of[blob]
        ok = len(layer.output) == 1 and writers[layer.output[0]] == 1 and list(layer.input).count(blob) == 1
        return (position, layer) if ok else None

    plans = {}
    for i, layer in enumerate(order):
        if layer.WhichOneof("layer") != "convolution" or layer.convolution.isDeconvolution \
                or len(layer.output) != 1:
            continue
        stages: list[Stage] = []
        blob, kind = layer.output[0], None
        while True:
            stage = _match(next_layer, blob, _NEXT[kind], lambda name, i=i: made_at.get(name, -1) < i)
            if stage is None:
                break
            stages.append(stage)
            blob, kind = stage.output, stage.kind
        if stages:
            plans[i] = stages
    return plans


def _match(next_layer, blob: str, allowed: tuple[str, ...], earlier) -> Stage | None:
    found = next_layer(blob)
    if found is None:
        return None
    position, first = found
    kind = first.WhichOneof("layer")
    if "affine" in allowed and len(first.input) == 1:
        value = _affine(first)
        if value is not None and all(np.isfinite(v).all() for v in value):  # a non-finite factor stays a layer
            return Stage("affine", value, (position,), (first.name,), first.output[0])
    if kind == "add" and "add" in allowed and len(first.input) == 2:
        other = first.input[1] if first.input[0] == blob else first.input[0]
        return Stage("add", other, (position,), (first.name,), first.output[0]) if earlier(other) else None
    if "clip" not in allowed or len(first.input) != 1:
        return None
    if kind == "clip":
        bounds = (float(first.clip.minVal), float(first.clip.maxVal))
        return Stage("clip", bounds, (position,), (first.name,), first.output[0])
    if kind != "activation" or first.activation.WhichOneof("NonlinearityType") != "ReLU":
        return None
    # ReLU, then maybe ReLU6 as coremltools writes it: -max(-relu(v), -6) = min(relu(v), 6)
    chain = [found]
    for test in (_negation, _threshold, _negation):
        after = next_layer(chain[-1][1].output[0])
        if after is None or test(after[1]) is None:
            return Stage("clip", (0.0, float("inf")), (position,), (first.name,), first.output[0])
        chain.append(after)
    return Stage("clip", (0.0, -_threshold(chain[2][1])), tuple(p for p, _ in chain), tuple(x.name for _, x in chain),
                 chain[-1][1].output[0])


def _channels(shape, wp, name: str) -> np.ndarray | None:
    """The values of a ``scale`` or ``bias`` layer's parameter of ``shape`` as a float64 vector when they are one
    value or one per channel ([1], [C], [1, 1, 1] or [C, 1, 1]), else None (they vary over the plane)."""
    shape = tuple(int(d) for d in shape) or (1,)
    if len(shape) not in (1, 3) or (len(shape) == 3 and shape[1:] != (1, 1)):
        return None
    return load_weights(wp, (shape[0],), name).astype(np.float64)


def _affine(layer):
    """(scale, shift) of a per-channel affine layer: a batchnorm with stored statistics, a ``scale`` or ``bias``
    of one value or one per channel, or a ``linear`` activation; else None."""
    kind = layer.WhichOneof("layer")
    if kind == "batchnorm":
        p = layer.batchnorm
        if p.computeMeanVar or p.instanceNormalization:
            return None
        c = int(p.channels)
        gamma, beta, mean, var = (load_weights(w, (c,), name).astype(np.float64) for w, name in (
            (p.gamma, "gamma"), (p.beta, "beta"), (p.mean, "mean"), (p.variance, "variance")))
        scale = gamma / np.sqrt(var + p.epsilon)
        return scale, beta - mean * scale
    if kind == "scale":
        p = layer.scale
        scale = _channels(p.shapeScale, p.scale, "scale")
        shift = _channels(p.shapeBias, p.bias, "bias") if p.hasBias else np.zeros(1)
        return None if scale is None or shift is None else (scale, shift)
    if kind == "bias":
        shift = _channels(layer.bias.shape, layer.bias.bias, "bias")
        return None if shift is None else (np.ones(1), shift)
    if kind == "activation" and layer.activation.WhichOneof("NonlinearityType") == "linear":
        p = layer.activation.linear
        return np.array([p.alpha], np.float64), np.array([p.beta], np.float64)
    return None


def _negation(layer):
    if layer.WhichOneof("layer") != "activation" or layer.activation.WhichOneof("NonlinearityType") != "linear":
        return None
    p = layer.activation.linear
    return True if (p.alpha, p.beta) == (-1.0, 0.0) else None


def _threshold(layer):
    """The threshold of a plain threshold unary layer at or below 0, else None."""
    if layer.WhichOneof("layer") != "unary":
        return None
    p = layer.unary
    if p.type != 7 or p.scale != 1.0 or p.shift != 0.0 or p.alpha > 0.0:  # 7: THRESHOLD
        return None
    return float(p.alpha)


def take_stages(g, w: np.ndarray, bias, name: str, out_shape: tuple[int, ...], clip_codes: bool = False):
    """Fold the stages ``g.epilogue`` proposes into a convolution of weights ``w`` ([O, C, kh, kw]) and ``bias``
    that writes blob ``name``, in order, while they fit: an affine stage of 1 or O channels (into the weights and bias),
    a residual made before, of the output's shape, and a clip (``clip_codes``: only one of :data:`CLIP_CODES`,
    the clips the NHWC engines fuse). Records the folded positions in ``g.folded``; returns ``(w, bias, clip,
    residual blob name, output blob name, folded layer names)``, for either route."""
    c_out = w.shape[0]
    clip, residual, folded = None, None, []
    for stage in g.epilogue or ():
        if stage.kind == "affine":
            scale, shift = stage.value
            if len(scale) not in (1, c_out) or len(shift) not in (1, c_out):
                break
            scale, shift = np.broadcast_to(scale, (c_out,)), np.broadcast_to(shift, (c_out,))
            w = (w * scale.reshape(-1, 1, 1, 1)).astype(np.float32)
            bias = (0.0 if bias is None else np.asarray(bias, np.float64)) * scale + shift
        elif stage.kind == "add":
            if g.shape_of(stage.value) != tuple(out_shape):
                break
            residual = stage.value
        else:
            if clip_codes and tuple(stage.value) not in CLIP_CODES:
                break
            clip = stage.value
        name = stage.output
        folded += stage.names
        g.folded.update({position: g.layer[0] for position in stage.positions})
    return w, bias, clip, residual, name, folded


GATES = {"sigmoid": "swish", "sigmoidHard": "hard_swish"}
"""The activations ``f`` whose product with their own input, ``x * f(x)``, runs as one pass (by pointwise name):
coremltools writes PyTorch's SiLU as a sigmoid and a multiply, its hard swish as a thresholded ReLU ``t`` (``x``
where ``x >= alpha``, else 0) and ``t * sigmoidHard(t)``. Where the hard sigmoid is 0 at ``alpha`` and below, the
thresholded ReLU is folded too: the pass reads ``x`` and computes ``x * sigmoidHard(x)`` where ``x >= alpha``, else
+0 (``thresholded_hard_swish``), the layers' bytes below the threshold and for NaN and -inf (+0 each)."""


@dataclass(frozen=True)
class Gate:
    """A multiply of blob ``x`` and ``f(x)`` for an activation ``f`` of :data:`GATES` at ``position`` (folded into
    the multiply): the pointwise ``function`` of parameters ``alpha``, ``beta``."""

    position: int
    x: str
    function: str
    alpha: float
    beta: float
    threshold: int | None = None
    """The position of a thresholded ReLU between ``x`` and the product, folded with the activation."""
    at: float = 0.0
    """That thresholded ReLU's threshold."""


class _BlobUse:
    """How the layers of ``order`` use their blobs: how often each is read and written, and the position of the
    layer that makes it (layers of one output)."""

    def __init__(self, order: Sequence):
        self.readers = Counter(name for layer in order for name in layer.input)
        self.writers = Counter(name for layer in order for name in layer.output)
        self.made_by = {layer.output[0]: i for i, layer in enumerate(order) if len(layer.output) == 1}

    def sole_maker(self, blob: str, j: int, keep: set[str]) -> int | None:
        """The position of the layer before ``j`` that makes ``blob`` where ``blob`` is read once (by the layer at
        ``j``), written once and no model output, else None."""
        i = self.made_by.get(blob)
        if i is None or i > j or self.readers[blob] != 1 or self.writers[blob] != 1 or blob in keep:
            return None
        return i


def gated_products(order: Sequence, keep: set[str]) -> dict[int, Gate]:
    """{position of a multiply in ``order``: its :class:`Gate`} where the activation's output is read by that
    multiply alone, written once and no model output, and ``x`` is written once (no in-place name moves it
    between the two layers)."""
    use = _BlobUse(order)
    gates = {}
    for j, layer in enumerate(order):
        if layer.WhichOneof("layer") != "multiply" or len(layer.input) != 2 or len(layer.output) != 1:
            continue
        for gate_blob, x in (tuple(layer.input), tuple(layer.input)[::-1]):
            i = use.sole_maker(gate_blob, j, keep)
            if i is None or use.writers[x] > 1:
                continue
            act = order[i]
            kind = act.activation.WhichOneof("NonlinearityType") if act.WhichOneof("layer") == "activation" else None
            if kind not in GATES or list(act.input) != [x]:
                continue
            p = act.activation.sigmoidHard
            alpha, beta = (float(p.alpha), float(p.beta)) if kind == "sigmoidHard" else (0.0, 0.0)
            k = use.made_by.get(x)
            threshold = None if kind != "sigmoidHard" or k is None or use.readers[x] != 2 or x in keep \
                else _vanishing_threshold(order[k], alpha, beta, use.writers)
            gates[j] = Gate(i, x, GATES[kind], alpha, beta) if threshold is None else \
                Gate(i, threshold[0], "thresholded_hard_swish", alpha, beta, k, threshold[1])
            break
    return gates


def _vanishing_threshold(layer, alpha: float, beta: float, writers: Counter) -> tuple[str, float] | None:
    """The input blob of ``layer`` and its threshold when it is a thresholded ReLU (written once, of an input
    written at most once) at or below whose threshold the hard sigmoid ``min(max(alpha * v + beta, 0), 1)`` is 0,
    else None."""
    if layer.WhichOneof("layer") != "activation" or len(layer.input) != 1 or len(layer.output) != 1 \
            or layer.activation.WhichOneof("NonlinearityType") != "thresholdedReLU":
        return None
    at = float(layer.activation.thresholdedReLU.alpha)
    source = layer.input[0]
    if not (alpha > 0.0 and math.isfinite(at) and alpha * at + beta <= 0.0) or writers[source] > 1 \
            or writers[layer.output[0]] != 1:
        return None
    return source, at


@dataclass(frozen=True)
class ActivatedAffine:
    """A batchnorm of stored statistics at ``position`` read by a ReLU alone (folded into the ReLU's lowering): one
    per-channel ``affine_relu`` pass. ``layer`` is the batchnorm."""

    position: int
    layer: object


def activated_affines(order: Sequence, keep: set[str]) -> dict[int, ActivatedAffine]:
    """{position of a ReLU in ``order``: the batchnorm before it} where the batchnorm keeps stored statistics, its
    output is read by the ReLU alone, written once and no model output (a pre-activation ``BN -> ReLU`` after a
    concatenation, DenseNet's; one after a convolution is the convolution's to fold first: ``lower_all`` lowers the
    pair only when the convolution did not take the batchnorm)."""
    use = _BlobUse(order)
    pairs = {}
    for j, layer in enumerate(order):
        if layer.WhichOneof("layer") != "activation" or layer.activation.WhichOneof("NonlinearityType") != "ReLU" \
                or len(layer.input) != 1 or len(layer.output) != 1:
            continue
        blob = layer.input[0]
        i = use.sole_maker(blob, j, keep)
        if i is None:
            continue
        bn = order[i]
        if bn.WhichOneof("layer") != "batchnorm" or len(bn.input) != 1 or bn.batchnorm.computeMeanVar \
                or bn.batchnorm.instanceNormalization:
            continue
        pairs[j] = ActivatedAffine(i, bn)
    return pairs


SLOT_WRITERS = ("upsample", "resizeBilinear")
"""Layers besides a transposed convolution that may write into a concatenation's slice (on the NHWC route)."""


def concat_slots(order: Sequence, keep: set[str]) -> dict[str, object]:
    """{output blob of a transposed convolution or a resampling: the concatenation along C that alone reads it}
    where the blob is read once and no model output, and every blob the concatenation reads or writes is written
    once: the layer may then write its result straight into its slice of the concatenation (U-Net's up-sampling
    beside the skip, DeepLab's upsampled image pooling beside the atrous branches) instead of a tensor of its own
    copied there."""
    use = _BlobUse(order)
    readers, writers = use.readers, use.writers
    transposed = {layer.output[0] for layer in order if len(layer.output) == 1 and (
        layer.WhichOneof("layer") == "convolution" and layer.convolution.isDeconvolution
        or layer.WhichOneof("layer") in SLOT_WRITERS)}
    slots = {}
    for layer in order:
        if layer.WhichOneof("layer") != "concat" or layer.concat.sequenceConcat or len(layer.output) != 1 \
                or any(writers[name] != 1 for name in [*layer.input, *layer.output]):
            continue  # an input written again (an in-place name) could change its extent after the slice is made
        for name in layer.input:
            if name in transposed and readers[name] == 1 and writers[name] == 1 and name not in keep:
                slots[name] = layer
    return slots


@dataclass(frozen=True)
class NormalizedScale:
    """A mean-variance normalization at ``position`` read by a ``scale`` layer alone (folded into the scale's
    lowering): one normalize pass with the scale as its ``gamma`` and the bias as its ``beta`` (a converted
    layer normalization: coremltools writes PyTorch's ``LayerNorm`` as ``mvn`` then ``scale``). ``layer`` is the
    ``mvn``."""

    position: int
    layer: object


def normalized_scales(order: Sequence, keep: set[str]) -> dict[int, NormalizedScale]:
    """{position of a ``scale`` in ``order``: the ``mvn`` before it} where the ``mvn``'s output is read by the scale
    alone, written once and no model output (the lowering still checks that the scale's shapes broadcast over
    the normalized axes, and lowers both layers apart where they do not)."""
    use = _BlobUse(order)
    pairs = {}
    for j, layer in enumerate(order):
        if layer.WhichOneof("layer") != "scale" or len(layer.input) != 1 or len(layer.output) != 1:
            continue
        blob = layer.input[0]
        i = use.sole_maker(blob, j, keep)
        if i is None:
            continue
        mvn = order[i]
        if mvn.WhichOneof("layer") != "mvn" or len(mvn.input) != 1:
            continue
        pairs[j] = NormalizedScale(i, mvn)
    return pairs
