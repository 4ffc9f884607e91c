"""Concatenations along C growing one buffer (``lowering.concat_chains``): a random dense block -- each layer's
``BN -> ReLU -> conv 1x1 -> conv 3x3`` (or a batchnorm of the input) concatenated after the block so far -- gives the
numbers of a plain NumPy reference of the layers and the same bytes as the graph with the plan off
(``OPENVX_NN_CONCAT_VIEWS=0``: every concatenation copies all its inputs); with it on, every concatenation after the
first copies only its new channels -- none where they are a convolution's output, which the convolution writes into
its slice itself (``concat_chains.producer_slice``; the same bytes as with ``OPENVX_NN_CONCAT_SLICES=0``) -- and the
graph runs from its native plan."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.coreml.lowering import concat_chains

from . import references as ref
from .harness import batchnorm_parameters, builder, load, predict_twice


def _dense_block(rng, c: int, h: int, w: int, layers: int):
    """The builder and a float64 reference function of ``x``: a 3x3 stem conv to ``c`` channels, then ``layers``
    dense layers (concatenations chained on their first input), a closing BN -> ReLU -> 1x1 conv to ``y``."""
    b = builder({"x": (3, h, w)}, ["y"])
    steps = []
    stem = (rng.standard_normal((c, 3, 3, 3)) * 0.5).astype(np.float32)
    b.add_convolution("stem", 3, c, 3, 3, 1, 1, "same", 1, stem.transpose(2, 3, 1, 0), None, False,
                      input_name="x", output_name="cat0")
    width, cat = c, "cat0"
    for i in range(layers):
        growth = int(rng.integers(1, 6))
        if rng.integers(4) == 0:  # the new channels a batchnorm of the stem's output (a concat of batch-norm outputs)
            growth = c
            bn = batchnorm_parameters(rng, c)
            b.add_batchnorm(f"bn_new{i}", c, *bn, input_name="cat0", output_name=f"new{i}", epsilon=1e-5)
            steps.append(("bn", bn))
        else:
            bn = batchnorm_parameters(rng, width)
            inner = int(rng.integers(1, 9))
            w1 = (rng.standard_normal((inner, width, 1, 1)) * 0.5).astype(np.float32)
            w3 = (rng.standard_normal((growth, inner, 3, 3)) * 0.5).astype(np.float32)
            b.add_batchnorm(f"bn{i}", width, *bn, input_name=cat, output_name=f"n{i}", epsilon=1e-5)
            b.add_activation(f"relu{i}", "RELU", f"n{i}", f"r{i}")
            b.add_convolution(f"squeeze{i}", width, inner, 1, 1, 1, 1, "valid", 1, w1.transpose(2, 3, 1, 0), None,
                              False, input_name=f"r{i}", output_name=f"s{i}")
            b.add_convolution(f"grow{i}", inner, growth, 3, 3, 1, 1, "same", 1, w3.transpose(2, 3, 1, 0), None,
                              False, input_name=f"s{i}", output_name=f"new{i}")
            steps.append(("layer", (bn, w1, w3)))
        b.add_elementwise(f"cat{i + 1}", [cat, f"new{i}"], f"cat{i + 1}", mode="CONCAT")
        width, cat = width + growth, f"cat{i + 1}"
    bn_out = batchnorm_parameters(rng, width)
    wy = (rng.standard_normal((2, width, 1, 1)) * 0.5).astype(np.float32)
    b.add_batchnorm("bn_out", width, *bn_out, input_name=cat, output_name="n_out", epsilon=1e-5)
    b.add_activation("relu_out", "RELU", "n_out", "r_out")
    b.add_convolution("head", width, 2, 1, 1, 1, 1, "valid", 1, wy.transpose(2, 3, 1, 0), None, False,
                      input_name="r_out", output_name="y")

    def reference(x):
        first = ref.conv2d(x.astype(np.float64), stem.astype(np.float64), None, (1, 1), (1, 1), (1, 1, 1, 1), 1)
        cat = first
        for kind, params in steps:
            if kind == "bn":
                new = ref.batchnorm(first, params, relu=False)
            else:
                bn, w1, w3 = params
                s = ref.conv2d(ref.batchnorm(cat, bn, relu=True), w1.astype(np.float64), None, (1, 1), (1, 1),
                               (0, 0, 0, 0), 1)
                new = ref.conv2d(s, w3.astype(np.float64), None, (1, 1), (1, 1), (1, 1, 1, 1), 1)
            cat = np.concatenate([cat, new])
        return ref.conv2d(ref.batchnorm(cat, bn_out, relu=True), wy.astype(np.float64), None, (1, 1), (1, 1),
                          (0, 0, 0, 0), 1)

    return b, reference


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(6))
def test_a_dense_block_grows_one_buffer_with_the_layers_numbers_and_bytes(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng([4610, seed])
    c, h, w, layers = (int(v) for v in (*rng.integers(1, 9, 3), rng.integers(2, 6)))
    b, reference = _dense_block(rng, c, h, w, layers)
    x = (rng.standard_normal((3, h, w)) * 2).astype(np.float32)
    monkeypatch.delenv("OPENVX_NN_CONCAT_VIEWS", raising=False)
    monkeypatch.delenv("OPENVX_NN_CONCAT_SLICES", raising=False)
    y, hows, runs = predict_twice(tmp_path, b, x)
    want = reference(x)
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert runs >= 1, "the graph did not run from its native plan"
    assert "the output a prefix of one buffer" in hows["cat1"], hows["cat1"]
    for i in range(2, layers + 1):
        how = hows[f"cat{i}"]
        assert "first input in place" in how, how
        if f"grow{i - 1}" in hows:  # the new channels a convolution's output: written in place
            assert how.startswith("0 x coreml.reshape") and "written there by its producer" in how, how
        else:
            assert how.startswith("1 x coreml.reshape"), how
    monkeypatch.setenv("OPENVX_NN_CONCAT_SLICES", "0")
    copied, hows, _ = predict_twice(tmp_path, b, x)
    assert all(hows[f"cat{i}"].startswith("1 x coreml.reshape") for i in range(2, layers + 1)), hows
    np.testing.assert_array_equal(y.view(np.int32), copied.view(np.int32))
    monkeypatch.setenv("OPENVX_NN_CONCAT_VIEWS", "0")
    apart, hows, _ = predict_twice(tmp_path, b, x)
    assert all(hows[f"cat{i}"].startswith("2 x coreml.reshape") for i in range(1, layers + 1)), hows
    np.testing.assert_array_equal(y.view(np.int32), apart.view(np.int32))


def test_a_chain_stops_where_a_later_input_is_also_read_after(tmp_path, rng):
    """A concatenation whose output is a model output (read after the network) is no buffer's prefix: it keeps a
    tensor of its own, and the next one copies both inputs; the numbers are the layers'."""
    b = builder({"p": (3, 2, 4), "q": (2, 2, 4)}, ["c1", "c2"])
    wp = (rng.standard_normal((4, 3, 1, 1))).astype(np.float32)
    b.add_convolution("a", 3, 4, 1, 1, 1, 1, "valid", 1, wp.transpose(2, 3, 1, 0), None, False, input_name="p",
                      output_name="pa")
    b.add_convolution("b", 3, 2, 1, 1, 1, 1, "valid", 1, wp[:2].transpose(2, 3, 1, 0), None, False, input_name="p",
                      output_name="pb")
    b.add_elementwise("cat1", ["pa", "pb"], "c1", mode="CONCAT")
    b.add_elementwise("cat2", ["c1", "pb"], "c2", mode="CONCAT")
    p, q = rng.standard_normal((3, 2, 4)).astype(np.float32), rng.standard_normal((2, 2, 4)).astype(np.float32)
    model = load(tmp_path, b)
    try:
        out = model.predict({"p": p, "q": q})
        hows = {layer.name: layer.lowering for layer in model.layers}
    finally:
        model.close()
    assert "in place" not in hows["cat2"] and "prefix" not in hows["cat1"]
    pa = np.einsum("oc,chw->ohw", wp[:, :, 0, 0].astype(np.float64), p)
    want1 = np.concatenate([pa, pa[:2]])
    np.testing.assert_allclose(out["c1"].reshape(want1.shape), want1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["c2"].reshape(8, 2, 4), np.concatenate([want1, pa[:2]]), rtol=1e-5, atol=1e-5)


def test_the_plan_links_only_concatenations_along_c_on_their_first_input(monkeypatch):
    """``links`` pairs a concatenation with the later one reading its output first, and is empty with the switch
    off."""
    b = builder({"p": (3, 2, 4), "q": (3, 2, 4)}, ["c3"])
    b.add_elementwise("cat1", ["p", "q"], "c1", mode="CONCAT")
    b.add_elementwise("cat2", ["c1", "q"], "c2", mode="CONCAT")
    b.add_elementwise("cat3", ["q", "c2"], "c3", mode="CONCAT")  # the chain's output second: no link
    layers = b.spec.neuralNetwork.layers
    monkeypatch.delenv("OPENVX_NN_CONCAT_VIEWS", raising=False)
    found = concat_chains.links(layers, set())
    assert {k: v.name for k, v in found.items()} == {"c1": "cat2"}
    assert concat_chains.links(layers, {"c1"}) == {}
    monkeypatch.setenv("OPENVX_NN_CONCAT_VIEWS", "0")
    assert concat_chains.links(layers, set()) == {}
