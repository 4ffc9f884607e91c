"""The later spec's random layers: RandomNormal/Uniform/Bernoulli ``Static`` (the shape is ``outputShape``),
``Like`` (the input's shape; its values are not read) and ``Dynamic`` (the input's values: its graph is built per
value, ``control.KEYED``), each one ``random`` node, and
CategoricalDistribution (``numSamples`` draws per row of its input), one ``categorical`` node; all draw from the
stream ``kernels/frontend/sampling.py`` documents, seeded by the layer's ``seed`` (-1: fresh each run)."""
from __future__ import annotations

from ...operations.coreml.sampling import DISTRIBUTIONS
from ..builder import GraphBuilder
from .common import shape_value, single
from .registry import lowers

LAYERS = {f"random{name}{form}": name.lower() for name in ("Normal", "Uniform", "Bernoulli")
          for form in ("Static", "Like", "Dynamic")}
DISTRIBUTION_FIELDS = {"normal": ("mean", "stdDev"), "uniform": ("minVal", "maxVal"), "bernoulli": ("prob", None)}


@lowers(*LAYERS)
def random_layer(g: GraphBuilder, layer, p) -> str:
    kind = layer.WhichOneof("layer")
    distribution = LAYERS[kind]
    if len(layer.output) != 1:
        raise g.fail(f"expected 1 output, got {len(layer.output)}")
    if kind.endswith("Like"):
        if len(layer.input) != 1:
            raise g.fail(f"expected 1 input (its shape is the output's), got {len(layer.input)}")
        shape = g.shape_of(layer.input[0])
        if shape is None:
            raise g.fail(f"input '{layer.input[0]}' is produced by no earlier layer and is no model input")
    elif kind.endswith("Dynamic"):
        if len(layer.input) != 1:
            raise g.fail(f"expected 1 input (the output's shape), got {len(layer.input)}")
        shape = shape_value(g, layer.input[0])
    else:
        if len(layer.input) != 0:
            raise g.fail(f"expected no input, got {len(layer.input)}")
        shape = tuple(int(d) for d in p.outputShape)
    return draw(g, layer, p, distribution, shape)


def draw(g: GraphBuilder, layer, p, distribution: str, shape) -> str:
    """The layer's output of ``shape`` holds draws of ``distribution`` (parameters and seed from ``p``)."""
    first, second = DISTRIBUTION_FIELDS[distribution]
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
