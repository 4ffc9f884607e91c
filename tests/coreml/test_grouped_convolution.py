"""Grouped, depthwise and channel-multiplier convolution and deconvolution (CoreML's nGroups)
become one node and match the references written from the seed's text, over random geometry."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend.grouped_convolution import Geometry, grouped_convolution

from . import references as ref
from .harness import builder, close, load, weights

# (name, groups as a function of C, output channels as a function of C)
GROUPINGS = [
    ("dense", lambda c: 1, lambda c: 5),
    ("two-groups", lambda c: 2, lambda c: 6),
    ("depthwise", lambda c: c, lambda c: c),
    ("multiplier-2", lambda c: c, lambda c: 2 * c),
]


def _model_of(tmp_path, x, add):
    """The model on CoreML's layout: its one ``coreml.convolution`` node is what these tests hold to the
    references (``test_nhwc_route`` does the same for the NHWC engines)."""
    b = builder({"x": x.shape}, ["y"])
    add(b)
    return load(tmp_path, b, nhwc=False), b.spec


@pytest.mark.parametrize("trial", range(3))
@pytest.mark.parametrize("name,groups_of,outputs_of", GROUPINGS, ids=[g[0] for g in GROUPINGS])
def test_grouped_convolution_is_one_node_and_matches_the_reference(tmp_path, rng, name, groups_of, outputs_of, trial):
    c = int(rng.choice([2, 4, 6]))
    groups, o = groups_of(c), outputs_of(c)
    h, w = int(rng.integers(3, 12)), int(rng.integers(3, 12))
    k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    d = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if trial == 2 else (1, 1)
    eff = [(k[i] - 1) * d[i] + 1 for i in range(2)]
    border = "same" if trial == 0 else "valid"
    pads = tuple(int(v) for v in rng.integers(0, 3, 4))
    if border == "valid":  # the window must fit the padded input
        h, w = max(h, eff[0]), max(w, eff[1])
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    x.flat[rng.integers(0, x.size, 3)] = [0.0, -1e4, 1e4]  # edge values among the normal ones
    wt = rng.standard_normal((k[0], k[1], c // groups, o)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    asymmetry = str(rng.choice(["BOTTOM_RIGHT_HEAVY", "TOP_LEFT_HEAVY"]))
    extra = {"same_padding_asymmetry_mode": asymmetry} if border == "same" else {
        "padding_top": pads[0], "padding_bottom": pads[1], "padding_left": pads[2], "padding_right": pads[3]}

    model, spec = _model_of(tmp_path, x, lambda b: b.add_convolution(
        "conv", c // groups, o, k[0], k[1], s[0], s[1], border, groups, wt, bias, True, input_name="x",
        output_name="y", dilation_factors=list(d), **extra))
    try:
        assert len(model.graph.nodes) == 1
        out = model.predict({"x": x})["y"]
    finally:
        model.close()
    p = spec.neuralNetwork.layers[0].convolution
    if border == "same":
        top, bottom = ref.same_pads(h, eff[0], s[0], asymmetry == "TOP_LEFT_HEAVY")
        left, right = ref.same_pads(w, eff[1], s[1], asymmetry == "TOP_LEFT_HEAVY")
        pads = (top, bottom, left, right)
    expected = ref.conv2d(x.astype(np.float64), weights(p.weights, (o, c // groups, k[0], k[1])),
                          weights(p.bias, (o,)), s, d, pads, groups)
    close(out, expected, atol=1e-3)  # products of 1e4 inputs: float32 sums


@pytest.mark.parametrize("border", ["same", "valid", "output-shape"])
@pytest.mark.parametrize("name,groups_of,outputs_of", GROUPINGS, ids=[g[0] for g in GROUPINGS])
def test_grouped_deconvolution_is_one_node_and_matches_the_reference(tmp_path, rng, name, groups_of, outputs_of,
                                                                     border):
    c = int(rng.choice([2, 4]))
    groups, o = groups_of(c), outputs_of(c)
    h, w = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    s = (int(rng.integers(1, 3)), int(rng.integers(1, 4)))
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    wt = rng.standard_normal((k[0], k[1], c, o // groups)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    full = [(h - 1) * s[0] + k[0], (w - 1) * s[1] + k[1]]
    extra, output_shape = {}, None
    if border == "valid":
        pads = [int(min(v, (full[i // 2] - 1) // 2)) for i, v in enumerate(rng.integers(0, 2, 4))]
        extra = {"padding_top": pads[0], "padding_bottom": pads[1], "padding_left": pads[2], "padding_right": pads[3]}
        crop = tuple(pads)
    elif border == "output-shape":  # one row and column past the full result: the bias alone there
        output_shape = (full[0] + 1, full[1] + 1)
        crop = (0, -1, 0, -1)
        border = "valid"
    else:
        crop = ()
        for i, n in enumerate((h, w)):
            cut = full[i] - n * s[i]
            crop += (cut // 2, cut - cut // 2) if cut >= 0 else (0, cut)

    model, spec = _model_of(tmp_path, x, lambda b: b.add_convolution(
        "deconv", c, o, k[0], k[1], s[0], s[1], border, groups, wt, bias, True, is_deconv=True,
        output_shape=output_shape, input_name="x", output_name="y", **extra))
    try:
        assert len(model.graph.nodes) == 1
        out = model.predict({"x": x})["y"]
    finally:
        model.close()
    p = spec.neuralNetwork.layers[0].convolution
    expected = ref.deconv2d(x.astype(np.float64), weights(p.weights, (c, o // groups, k[0], k[1])),
                            weights(p.bias, (o,)), s, groups, crop)
    close(out, expected)


def test_the_kernel_reads_and_writes_strided_tensors_with_batch_dims(rng):
    """Views (a channel window of a larger tensor) in and out, two batch dims: the same numbers."""
    big_in = rng.standard_normal((7, 6, 8, 2, 3)).astype(np.float32, order="F")
    x = big_in[:, :, 2:6]  # [W, H, C=4, 2, 3]
    w = rng.standard_normal((3, 3, 1, 8)).astype(np.float32, order="F")  # depthwise, multiplier 2
    bias = rng.standard_normal(8).astype(np.float32)
    big_out = np.zeros((7, 6, 10, 2, 3), np.float32, order="F")
    out = big_out[:, :, 1:9]
    grouped_convolution(x, w, bias, out, Geometry(4, (1, 1), (1, 1), (1, 1)))
    for n in np.ndindex(2, 3):
        item = x[(slice(None),) * 3 + n].T.astype(np.float64)  # [C, H, W]
        expected = ref.conv2d(item, w.T.astype(np.float64), bias, (1, 1), (1, 1), (1, 1, 1, 1), 4)
        close(out[(slice(None),) * 3 + n].T, expected)
    assert not big_out[:, :, 0].any() and not big_out[:, :, 9].any()


@pytest.mark.parametrize("change,message", [
    (lambda a: {**a, "x": a["x"].astype(np.float64)}, "x has dtype float64"),
    (lambda a: {**a, "geo": Geometry(3, (1, 1), (1, 1), (0, 0))}, "groups 3 does not divide"),
    (lambda a: {**a, "w": a["w"][:, :, :1]}, "weights"),
    (lambda a: {**a, "bias": a["bias"][:2]}, "bias"),
    (lambda a: {**a, "geo": Geometry(2, (0, 1), (1, 1), (0, 0))}, "strides"),
])
def test_the_kernel_refuses_mismatched_arguments_by_name(change, message):
    args = {"x": np.zeros((5, 5, 4), np.float32, order="F"), "w": np.zeros((3, 3, 2, 4), np.float32, order="F"),
            "bias": np.zeros(4, np.float32), "out": np.zeros((3, 3, 4), np.float32, order="F"),
            "geo": Geometry(2, (1, 1), (1, 1), (0, 0))}
    a = change(args)
    with pytest.raises(ValueError, match=message):
        grouped_convolution(a["x"], a["w"], a["bias"], a["out"], a["geo"])
