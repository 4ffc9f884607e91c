"""The shipped digits model and the OpenVX graph that runs it.

``digits_lenet.npz`` (written by ``tools/train_digits.py``) holds float32
weights, their Q7.8 quantization and the held-out test images and labels, all
in OpenVX dim order.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..api import Context, Graph, Tensor, quantize

WEIGHTS_FILE = Path(__file__).resolve().parent / "digits_lenet.npz"
LAYERS = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc_w", "fc_b")


@dataclass(frozen=True)
class Variant:
    """One numeric format for the whole graph: data type and fraction bits of
    activations and weights, and of the softmax output."""

    name: str
    dtype: type
    fpp: int = 0
    softmax_fpp: int = 0

    def to_raw(self, real: np.ndarray) -> np.ndarray:
        return quantize(real, self.dtype, self.fpp)


Q78 = Variant("Q7.8", np.int16, 8, softmax_fpp=15)   # probabilities in Q0.15 for resolution
F32 = Variant("F32", np.float32)
VARIANTS = {"q78": Q78, "f32": F32}


@dataclass(frozen=True)
class DigitsModel:
    weights: dict[str, np.ndarray]          # float32, OpenVX dim order
    quantized: dict[str, np.ndarray]        # the shipped Q7.8 raw values
    test_images: np.ndarray                 # [8, 8, 1, N] float32 in [0, 1]
    test_labels: np.ndarray                 # [N] uint8

    def layer(self, name: str, variant: Variant) -> np.ndarray:
        if variant == Q78:
            return self.quantized[name]
        return variant.to_raw(self.weights[name])


def load_model(path: Path = WEIGHTS_FILE) -> DigitsModel:
    with np.load(path) as data:
        return DigitsModel({k: data[f"f32_{k}"] for k in LAYERS}, {k: data[f"q78_{k}"] for k in LAYERS},
                           data["test_images"], data["test_labels"])


def build_graph(ctx: Context, model: DigitsModel, variant: Variant, batch: int) -> tuple[Graph, Tensor, Tensor]:
    """(graph, input [8, 8, 1, batch], output probabilities [10, batch])."""
    def param(name):
        return ctx.tensor(model.layer(name, variant), fixed_point_position=variant.fpp)

    x = ctx.tensor(shape=(8, 8, 1, batch), dtype=variant.dtype, fixed_point_position=variant.fpp)
    probs = ctx.tensor(shape=(10, batch), dtype=variant.dtype, fixed_point_position=variant.softmax_fpp)
    g = ctx.graph()
    h = g.max_pool(g.relu(g.convolution(x, param("conv1_w"), param("conv1_b"), padding=1)))
    h = g.max_pool(g.relu(g.convolution(h, param("conv2_w"), param("conv2_b"), padding=1)))
    logits = g.fully_connected(h, param("fc_w"), param("fc_b"))
    g.softmax(logits, out=probs)
    g.verify()
    return g, x, probs


@lru_cache(maxsize=1)
def _shipped_model() -> DigitsModel:
    return load_model()


def build(ctx: Context, batch: int, variant: str = "q78") -> tuple[Graph, Tensor, Tensor]:
    """The shipped digits network for ``batch`` images in ``variant`` ('q78' or 'f32'): a
    module-level function so ``functools.partial(build, batch=64)`` ships cheaply to Dask workers."""
    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r} is not one of {', '.join(map(repr, VARIANTS))}")
    return build_graph(ctx, _shipped_model(), VARIANTS[variant], batch)
