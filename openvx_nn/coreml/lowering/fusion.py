"""Layers folded into the convolution before them: a batchnorm with stored statistics (into the
weights and bias) and a ReLU, ReLU6 or clip (into the kernel's output clip).

A converted CNN writes each convolution as conv, batchnorm and an activation, and coremltools'
converter writes ReLU6 as four layers (ReLU, linear(-1), threshold(-6), linear(-1)): folded,
MobileNet v2 is 52 convolution nodes instead of some 250 nodes, each a full pass over memory.
A layer folds only when it is the sole reader of the blob before it, that blob is no model
output, and no blob of the chain is written by more than one layer (CoreML allows in-place
names). Folding a batchnorm rounds ``w * scale`` once in float32 instead of scaling the sum:
the results agree to float32 rounding, as CoreML's own fused kernels do.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..weights import load_weights


@dataclass
class Epilogue:
    """What a convolution absorbs: per-channel ``scale``/``shift`` (None: none), a ``clip``, the blob the
    fused node writes, and the positions (in the layer order) and names of the absorbed layers."""

    output: str
    scale: np.ndarray | None = None
    shift: np.ndarray | None = None
    clip: tuple[float, float] | None = None
    absorbed: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


def plan(order: Sequence, keep: set[str]) -> dict[int, Epilogue]:
    """{position of a convolution in ``order``: its epilogue} for each convolution that absorbs layers."""
    readers = Counter(name for layer in order for name in layer.input)
    writers = Counter(name for layer in order for name in layer.output)
    position = {id(layer): i for i, layer in enumerate(order)}
    reader_of: dict[str, object] = {}
    for layer in order:
        for name in layer.input:
            reader_of[name] = layer
    plans = {}
    for i, layer in enumerate(order):
        if layer.WhichOneof("layer") != "convolution" or layer.convolution.isDeconvolution \
                or len(layer.output) != 1:
            continue
        epilogue = Epilogue(layer.output[0])
        stage = 0  # 0: batchnorm or activation may follow, 1: activation only, 2: done

        def next_layer(blob: str):
            if readers[blob] != 1 or writers[blob] != 1 or blob in keep:
                return None
            after = reader_of[blob]
            return after if len(after.input) == 1 and len(after.output) == 1 and writers[after.output[0]] == 1 \
                else None

        while stage < 2:
            chain = _match(next_layer, epilogue.output, stage == 0)
            if chain is None:
                break
            kind, layers, value = chain
            if kind == "batchnorm":
                epilogue.scale, epilogue.shift = value
                stage = 1
            else:
                epilogue.clip = value
                stage = 2
            epilogue.absorbed += [position[id(x)] for x in layers]
            epilogue.names += [x.name for x in layers]
            epilogue.output = layers[-1].output[0]
        if epilogue.absorbed:
            plans[i] = epilogue
    return plans


def _match(next_layer, blob: str, batchnorm_allowed: bool):
    """("batchnorm", [layer], (scale, shift)) or ("clip", layers, (low, high)) starting at ``blob``'s reader."""
    first = next_layer(blob)
    if first is None:
        return None
    kind = first.WhichOneof("layer")
    if kind == "batchnorm" and batchnorm_allowed:
        p = first.batchnorm
        c = int(p.channels)
        if p.computeMeanVar or p.instanceNormalization:
            return None
        gamma, beta = (load_weights(w, (c,), n).astype(np.float64) for w, n in ((p.gamma, "gamma"), (p.beta, "beta")))
        mean, var = (load_weights(w, (c,), n).astype(np.float64) for w, n in ((p.mean, "mean"), (p.variance, "var")))
        scale = gamma / np.sqrt(var + p.epsilon)
        return "batchnorm", [first], (scale, beta - mean * scale)
    if kind == "clip":
        return "clip", [first], (float(first.clip.minVal), float(first.clip.maxVal))
    if kind != "activation" or first.activation.WhichOneof("NonlinearityType") != "ReLU":
        return None
    # ReLU, then maybe ReLU6 as coremltools writes it: -max(-relu(v), -6) = min(relu(v), 6)
    chain = [first]
    for test in (_negation, _threshold, _negation):
        after = next_layer(chain[-1].output[0])
        if after is None or test(after) is None:
            return "clip", [first], (0.0, float("inf"))
        chain.append(after)
    return "clip", chain, (0.0, -_threshold(chain[2]))


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
