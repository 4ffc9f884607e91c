"""PyTorch modules using gather, topk, cumsum, scatter, scatter_add, argsort, tril, where, index_select, one_hot
and triu, converted by coremltools to NeuralNetworks (gatherAlongAxis, topK, cumSum, scatterAlongAxis in two
modes, argSort, matrixBandPart, whereBroadcastable, gather, oneHot), run by ``openvx_nn.coreml`` and compared
with PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import close

torch = pytest.importorskip("torch", reason="PyTorch converts the module")
ct = pytest.importorskip("coremltools")


class IndexOps(torch.nn.Module):
    def forward(self, x, i, s):
        values, positions = torch.topk(x, 3, dim=-1)
        return (torch.gather(x, 1, i), values, positions, torch.cumsum(x, dim=0), torch.scatter(x, 1, i, s),
                torch.scatter_add(x, 1, i, s), torch.argsort(x, dim=1, descending=True), torch.tril(x, diagonal=1),
                torch.where(x > 0, x, s.sum() * torch.ones_like(x)), torch.index_select(x, 0, i[:, 0]))


LAYERS = {"gatherAlongAxis", "topK", "cumSum", "scatterAlongAxis", "argSort", "matrixBandPart",
          "whereBroadcastable", "gather"}


def test_converted_index_module_matches_pytorch():
    g = torch.Generator().manual_seed(3)
    x, s = torch.randn(6, 6, generator=g), torch.randn(6, 3, generator=g)
    i = torch.stack([torch.randperm(6, generator=g)[:3] for _ in range(6)])  # distinct per row: scatter is exact
    traced = torch.jit.trace(IndexOps().eval(), (x, i, s))
    spec = ct.convert(traced, convert_to="neuralnetwork",
                      inputs=[ct.TensorType(name="x", shape=x.shape), ct.TensorType(name="i", shape=i.shape,
                                                                                    dtype=np.int32),
                              ct.TensorType(name="s", shape=s.shape)]).get_spec()
    assert LAYERS <= {layer.WhichOneof("layer") for layer in spec.neuralNetwork.layers}
    model = cm.load(spec)
    try:
        out = model.predict({"x": x.numpy(), "i": i.numpy().astype(np.float32), "s": s.numpy()})
    finally:
        model.close()
    expected = [r.numpy().astype(np.float64) for r in IndexOps()(x, i, s)]
    for feature, want in zip(spec.description.output, expected):
        close(out[feature.name], want)


class OneHotBand(torch.nn.Module):
    def forward(self, x, i):
        return torch.nn.functional.one_hot(i, 7).float(), torch.triu(x, -1)


def test_converted_one_hot_and_band_match_pytorch():
    g = torch.Generator().manual_seed(5)
    x, i = torch.randn(4, 8, generator=g), torch.randint(0, 7, (4, 3), generator=g)
    traced = torch.jit.trace(OneHotBand().eval(), (x, i))
    spec = ct.convert(traced, convert_to="neuralnetwork",
                      inputs=[ct.TensorType(name="x", shape=x.shape),
                              ct.TensorType(name="i", shape=i.shape, dtype=np.int32)]).get_spec()
    assert {"oneHot", "matrixBandPart"} <= {layer.WhichOneof("layer") for layer in spec.neuralNetwork.layers}
    model = cm.load(spec)
    try:
        out = model.predict({"x": x.numpy(), "i": i.numpy().astype(np.float32)})
    finally:
        model.close()
    for feature, want in zip(spec.description.output, OneHotBand()(x, i)):
        close(out[feature.name], want.numpy().astype(np.float64))
