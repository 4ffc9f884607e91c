"""The later spec's random layers with shapes known at load: RandomNormal/Uniform/Bernoulli ``Static`` (the shape
is ``outputShape``) and ``Like`` (the input's shape; its values are not read), each one ``random`` node, and
CategoricalDistribution (``numSamples`` draws per row of its input), one ``categorical`` node; all draw from the
stream ``kernels/frontend/sampling.py`` documents, seeded by the layer's ``seed`` (-1: fresh each run)."""
from __future__ import annotations

from ...operations.coreml.sampling import DISTRIBUTIONS
from ..builder import GraphBuilder
from .common import single
from .registry import lowers

LAYERS = {
    "randomNormalStatic": ("normal", "mean", "stdDev"), "randomNormalLike": ("normal", "mean", "stdDev"),
    "randomUniformStatic": ("uniform", "minVal", "maxVal"), "randomUniformLike": ("uniform", "minVal", "maxVal"),
    "randomBernoulliStatic": ("bernoulli", "prob", None), "randomBernoulliLike": ("bernoulli", "prob", None),
}


@lowers(*LAYERS)
def random_layer(g: GraphBuilder, layer, p) -> str:
    kind = layer.WhichOneof("layer")
    distribution, first, second = LAYERS[kind]
    if len(layer.output) != 1:
        raise g.fail(f"expected 1 output, got {len(layer.output)}")
    if kind.endswith("Like"):
        if len(layer.input) != 1:
            raise g.fail(f"expected 1 input (its shape is the output's), got {len(layer.input)}")
        shape = g.shape_of(layer.input[0])
        if shape is None:
            raise g.fail(f"input '{layer.input[0]}' is produced by no earlier layer and is no model input")
    else:
        if len(layer.input) != 0:
            raise g.fail(f"expected no input, got {len(layer.input)}")
        shape = tuple(int(d) for d in p.outputShape)
    params = [float(getattr(p, first)), float(getattr(p, second)) if second else 0.0]
    g.coreml("random", (g.enum(DISTRIBUTIONS.index(distribution)), g.floats(params), g.i64(p.seed),
                        g.output(layer.output[0], shape)))
    return f"coreml.random({distribution}, {'unseeded' if p.seed == -1 else f'seed {p.seed}'})"


@lowers("categoricalDistribution")
def categorical_distribution(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    samples = int(p.numSamples)
    g.coreml("categorical", (x.tensor, g.i32(p.isLogits), g.f32(p.eps), g.f32(p.temperature), g.i64(p.seed),
                             g.output(layer.output[0], x.shape[:-1] + (samples,))))
    return f"coreml.categorical({samples} samples per row, {'logits' if p.isLogits else 'probabilities'})"
