"""CoreML convolutions on the NHWC route (``nnapi.conv_2d`` and ``nnapi.conv_2d_residual``) exchange their float32
intermediates through zero-bordered buffers (``core/bordered_tensors.py``).

Randomized models (pads 1 and 2, symmetric or not; a tensor read by two convolutions and as the residual of a folded
add + ReLU; a tensor a pooling layer also reads; a model output a convolution also reads) give the bytes of the same
model loaded with ``OPENVX_NN_BORDERED_TENSORS=0``, agree with a float64 reference written from CoreML's definition
of the layers, and border exactly the tensors the rule allows.
"""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import builder, load

ENV = "OPENVX_NN_BORDERED_TENSORS"


@pytest.fixture(autouse=True)
def rewrites_on(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)


class _Net:
    """A CoreML model and its float64 reference built together: each blob a pair (value, the same computation on
    magnitudes: the bound of the float32 rounding)."""

    def __init__(self, rng, x, outputs):
        self.rng, self.b = rng, builder({"x": x.shape}, outputs)
        self.values = {"x": (x.astype(np.float64), np.abs(x.astype(np.float64)))}

    def conv(self, name, source, maps, kernel, pads, stride=1, relu=False):
        """``pads`` (top, bottom, left, right)."""
        v, s = self.values[source]
        c = v.shape[0]
        w = (self.rng.standard_normal((kernel, kernel, c, maps)) / np.sqrt(c * kernel * kernel)).astype(np.float32)
        bias = self.rng.standard_normal(maps).astype(np.float32)
        top, bottom, left, right = pads
        out = name + "_conv" if relu else name
        self.b.add_convolution(out, c, maps, kernel, kernel, stride, stride, "valid", 1, w, bias, True,
                               input_name=source, output_name=out, padding_top=top, padding_bottom=bottom,
                               padding_left=left, padding_right=right)
        wr = np.transpose(w, (3, 2, 0, 1)).astype(np.float64)  # [O, C, kh, kw]
        rv = ref.conv2d(v, wr, bias, (stride, stride), (1, 1), pads, 1)
        rs = ref.conv2d(s, np.abs(wr), np.abs(bias), (stride, stride), (1, 1), pads, 1)
        if relu:
            self.b.add_activation(name, "RELU", out, name)
            rv = np.maximum(rv, 0)
        self.values[name] = (rv, rs)
        return name

    def add_relu(self, name, a, b):
        (va, sa), (vb, sb) = self.values[a], self.values[b]
        self.b.add_elementwise(name + "_sum", [a, b], name + "_sum", mode="ADD")
        self.b.add_activation(name, "RELU", name + "_sum", name)
        self.values[name] = (np.maximum(va + vb, 0), sa + sb)
        return name

    def max_pool(self, name, source):
        v, s = self.values[source]
        self.b.add_pooling(name, 2, 2, 2, 2, "MAX", "VALID", source, name)
        c, h, w = v.shape
        oh, ow = h // 2, w // 2

        def pool(a):
            return a[:, :2 * oh, :2 * ow].reshape(c, oh, 2, ow, 2).max(axis=(2, 4))
        self.values[name] = (pool(v), pool(s))
        return name


def _model(rng, x):
    """(builder, outputs' references, expected (C, H, W) and border of each bordered blob):

    x -> A (pad pa, ReLU) -> a ; B(a) (pad pb) + a -> ReLU -> r (folded: conv_2d_residual reading ``a`` as its input
    and its residual) ; a -> C (pad pc, stride sc) -> y1 (a model output) -> E (pad 1) -> y4 ;
    r -> D (pad pd, ReLU) -> d -> F (pads asymmetric) -> y2 ; r -> max pool -> y3.
    ``a`` bordered by max(pb, pc), ``d`` by F's largest; not ``r`` (the pool reads it), not ``y1`` (an output)."""
    outputs = ["y1", "y2", "y3", "y4"]
    net = _Net(rng, x, outputs)
    maps = int(rng.integers(2, 20))
    pa, pb, pc, pd = (int(rng.integers(1, 3)) for _ in range(4))
    net.conv("a", "x", maps, 2 * pa + 1, (pa,) * 4, relu=True)
    net.conv("t", "a", maps, 2 * pb + 1, (pb,) * 4)
    net.add_relu("r", "t", "a")
    net.conv("y1", "a", int(rng.integers(1, 9)), 3, (pc,) * 4, stride=int(rng.integers(1, 3)))
    net.conv("y4", "y1", int(rng.integers(1, 9)), 3, (1,) * 4)
    net.conv("d", "r", int(rng.integers(1, 17)), 2 * pd + 1, (pd,) * 4, relu=True)
    f_pads = tuple(int(p) for p in rng.integers(1, 3, 4))
    net.conv("y2", "d", int(rng.integers(1, 9)), 3, f_pads)
    net.max_pool("y3", "r")
    shape = {k: tuple(v.shape) for k, (v, _) in net.values.items()}
    return net.b, [net.values[o] for o in outputs], {(shape["a"], max(pb, pc)), (shape["d"], max(f_pads))}


def _run(monkeypatch, tmp_path, b, x, bordered: bool):
    """The four outputs, how the add was lowered, and the (C, H, W) and border of each blob the plan bordered."""
    monkeypatch.setenv(ENV, "1" if bordered else "0")
    model = load(tmp_path, b, name=f"bordered{int(bordered)}")
    try:
        outs = [model.predict({"x": x}) for _ in range(3)][-1]
        found = {((root.dims[0], root.dims[2], root.dims[1]), border)
                 for root, border in model.graph.rewrites.bordered}
        lowered = {layer.name: layer.lowering for layer in model.layers}
        return [np.array(outs[name]) for name in ("y1", "y2", "y3", "y4")], lowered, found
    finally:
        model.close()


@pytest.mark.parametrize("seed", range(4))
def test_convolutions_through_bordered_buffers_give_the_plain_bytes_and_the_reference(monkeypatch, tmp_path, seed):
    rng = np.random.default_rng([7302, seed])
    x = rng.standard_normal((int(rng.integers(1, 9)), int(rng.integers(4, 15)), int(rng.integers(4, 13))))
    x = x.astype(np.float32)
    edge = seed == 3
    if edge:  # NaN, infinities and -0 through every layer: the bytes alone are compared
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 4)] = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
    with np.errstate(all="ignore"):
        b, refs, expected = _model(rng, x)
    got, lowered, bordered = _run(monkeypatch, tmp_path, b, x, True)
    plain, _, none = _run(monkeypatch, tmp_path, b, x, False)
    assert "conv_2d_residual" in lowered["t"] and "folded" in lowered["r_sum"]
    assert bordered == expected
    assert none == set()
    for mine, theirs in zip(got, plain):
        assert mine.tobytes() == theirs.tobytes()
    if not edge:
        for mine, (value, scale) in zip(got, refs):
            assert np.all(np.abs(mine - value) <= 1e-5 * scale + 1e-6)
