"""The NHWC route (``coreml/lowering/nhwc.py``): convolution regions on the NHWC float engines give the numbers of
the seed's layers (NumPy references) and of CoreML's-layout route (``load(..., nhwc=False)``), over randomized
shapes, strides, paddings, activations and residuals; a model mixing layers the route takes with layers it
does not converts layout only at the edges, and ``model.layers`` says which route each layer took."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm

from . import references as ref
from .harness import builder, close

CLIPS = {"relu": (0.0, np.inf), "relu6": (0.0, 6.0), "relu1": (-1.0, 1.0), "other-clip": (-0.5, 1.5), "none": None}


def _load_both(tmp_path, b):
    path = tmp_path / "model.mlmodel"
    save_spec(b.spec, str(path))
    return cm.load(path), cm.load(path, nhwc=False)


def _predict_both(tmp_path, b, inputs):
    fast, plain = _load_both(tmp_path, b)
    try:
        return fast.predict(inputs), plain.predict(inputs), fast.layers, plain.layers, len(fast.graph.nodes)
    finally:
        fast.close()
        plain.close()


def _float32_close(actual, exact, terms, products):
    """``|ours - exact| <= (K + 3) * 2**-24 * sum |terms|`` per output (docs/coreml.md), K the products."""
    bound = (products + 3) * 2.0 ** -24 * terms
    assert actual.shape == exact.shape
    assert np.all(np.abs(actual - exact) <= bound), float(np.max(np.abs(actual - exact) - bound))


def _add_clip(b, name, x, out):
    low, high = CLIPS[name]
    if name == "relu":
        b.add_activation(out, "RELU", x, out)
    else:
        b.add_clip(out, x, out, min_value=low, max_value=high)


@pytest.mark.parametrize("draw", range(8))
def test_convolution_on_the_nhwc_engines_matches_the_reference_and_the_chw_route(tmp_path, rng, draw):
    depthwise = draw % 2 == 1
    residual = draw in (2, 3, 6)  # same padding at stride 1, as many outputs as inputs: an add of the input
    c = int(rng.integers(1, 9)) if not depthwise else int(rng.integers(2, 17))
    multiplier = int(rng.integers(1, 3)) if depthwise and not residual else 1
    o = c * multiplier if depthwise or residual else int(rng.integers(1, 21))
    k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    s = (1, 1) if residual else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    h, w = int(rng.integers(k[0], 14)), int(rng.integers(k[1], 14))
    same = residual or bool(rng.integers(0, 2))
    pads = tuple(int(v) for v in rng.integers(0, 3, 4))  # top, bottom, left, right (valid)
    clip = list(CLIPS)[draw % len(CLIPS)] if draw < 5 else list(CLIPS)[int(rng.integers(0, len(CLIPS)))]
    x = (2 * rng.standard_normal((c, h, w))).astype(np.float32)
    wt = rng.standard_normal((k[0], k[1], 1 if depthwise else c, o)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) if draw % 3 else None
    groups = c if depthwise else 1
    b = builder({"x": x.shape}, ["y"])
    geometry = {"same_padding_asymmetry_mode": "TOP_LEFT_HEAVY" if draw % 4 == 0 else "BOTTOM_RIGHT_HEAVY"} \
        if same else dict(zip(("padding_top", "padding_bottom", "padding_left", "padding_right"), pads))
    b.add_convolution("conv", 1 if depthwise else c, o, k[0], k[1], s[0], s[1], "same" if same else "valid", groups,
                      wt, bias, bias is not None, input_name="x", output_name="conv", **geometry)
    blob = "conv"
    if same:
        pads = ref.same_pads(h, k[0], s[0], draw % 4 == 0) + ref.same_pads(w, k[1], s[1], draw % 4 == 0)
    wsp = wt.transpose(3, 2, 0, 1).astype(np.float64)
    want = ref.conv2d(x.astype(np.float64), wsp, bias, s, (1, 1), pads, groups)
    terms = ref.conv2d(np.abs(x.astype(np.float64)), np.abs(wsp), None if bias is None else np.abs(bias), s, (1, 1),
                       pads, groups)
    if residual:
        b.add_elementwise("sum", ["conv", "x"], "sum", mode="ADD")
        want, terms, blob = want + x, terms + np.abs(x), "sum"
    if clip != "none":
        _add_clip(b, clip, blob, "y")
        want = np.clip(want, *CLIPS[clip])
    else:
        b.add_activation("y", "LINEAR", blob, "y", params=[1.0, 0.0])
        want = want.astype(np.float64)
    fast, plain, layers, _, _ = _predict_both(tmp_path, b, {"x": x})
    _float32_close(fast["y"], want, terms, k[0] * k[1] * (1 if depthwise else c))
    close(fast["y"], plain["y"], atol=1e-4)
    assert layers[0].lowering.startswith("nnapi."), layers[0].lowering
    assert ("depthwise_conv_2d" in layers[0].lowering) == depthwise
    # a residual add after a dense convolution runs in its epilogue; after a depthwise one, as its own node
    assert ("conv_2d_residual" in layers[0].lowering) == (residual and not depthwise), layers[0].lowering
    separate = " then nnapi.add" in layers[0].lowering or " then vxTensorAdd" in layers[0].lowering
    assert separate == (residual and depthwise), layers[0].lowering
    # a clip the engines fuse folds into the kernel; another runs as its own layer, on CoreML's layout; the
    # identity linear folds as an affine stage straight after the convolution, not after a residual add
    folds = clip in ("relu", "relu6", "relu1") or (clip == "none" and not residual)
    assert layers[-1].lowering.startswith("folded") == folds, layers[-1].lowering


@pytest.mark.parametrize("case", [
    ("MAX", (3, 3), (2, 2), "VALID", (1, 1, 1, 1), False, False),
    ("MAX", (2, 3), (1, 2), "SAME", None, False, False),
    ("AVERAGE", (3, 2), (2, 1), "VALID", (1, 0, 1, 1), True, False),
    ("AVERAGE", (3, 3), (2, 2), "VALID", (1, 1, 1, 1), False, False),  # counts the padding: CoreML's layout
    ("AVERAGE", (2, 2), (2, 2), "VALID", (0, 0, 0, 0), False, False),
    ("AVERAGE", (3, 3), (1, 1), "INCLUDE_LAST_PIXEL", (1, 1, 1, 1), True, False),
    ("MAX", (1, 1), (1, 1), "VALID", None, False, True),
    ("AVERAGE", (1, 1), (1, 1), "VALID", None, False, True),
], ids=["max-valid-padded", "max-same", "avg-exclude", "avg-include-pad", "avg-unpadded", "avg-last-pixel",
        "max-global", "avg-global"])
def test_pooling_after_a_convolution_matches_the_reference(tmp_path, rng, case):
    kind, k, s, padding, pads, exclude, is_global = case
    c, h, w = 5, 9, 8
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    wt = rng.standard_normal((1, 1, c, c)).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    b.add_convolution("conv", c, c, 1, 1, 1, 1, "valid", 1, wt, None, False, input_name="x", output_name="conv")
    extra = {} if pads is None else dict(zip(("padding_top", "padding_bottom", "padding_left", "padding_right"),
                                              pads))
    b.add_pooling("pool", k[0], k[1], s[0], s[1], kind, padding, "conv", "y", exclude_pad_area=exclude,
                  is_global=is_global, **extra)
    conv = np.einsum("oc,chw->ohw", wt[0, 0].T.astype(np.float64), x.astype(np.float64))
    size = None
    if is_global:
        k, s, pads = (h, w), (1, 1), (0, 0, 0, 0)
    elif padding == "SAME":
        pads = ref.same_pads(h, k[0], s[0]) + ref.same_pads(w, k[1], s[1])
    elif padding == "INCLUDE_LAST_PIXEL":
        size = tuple(-(-(n + 2 - kk) // ss) + 1 for n, kk, ss in ((h, k[0], s[0]), (w, k[1], s[1])))
        size = tuple(o - 1 if (o - 1) * ss >= n + 1 else o for o, n, ss in zip(size, (h, w), s))
    fast, plain, layers, _, _ = _predict_both(tmp_path, b, {"x": x})
    want = ref.pool2d(conv, kind.lower(), k, s, pads, exclude, size)
    close(fast["y"], want, atol=1e-4)
    close(plain["y"], want, atol=1e-4)
    counts_padding = kind == "AVERAGE" and not exclude and any(pads)
    assert layers[1].lowering.startswith("nnapi.") != counts_padding, layers[1].lowering


def _mixed_model(rng, c):
    """conv (NHWC) -> LRN (CoreML's layout) -> depthwise conv + bn + relu6 (NHWC) -> dilated conv (NHWC, the float
    engine with its dilation) + a residual add of an NHWC blob -> conv with a residual held in NHWC (folded add) -> max pool -> a blob that is
    a model output and is read again -> deconvolution (CoreML's) -> global average pool -> inner product -> softmax."""
    b = builder({"x": (c, 12, 11)}, ["probs", "pooled"], output_shapes={"probs": (6,), "pooled": (c, 6, 5)})

    def conv(name, x, o, k, groups=1, dilation=1, stride=1, pad=None):
        wt = rng.standard_normal((k, k, c // groups, o)).astype(np.float32) / k
        bias = rng.standard_normal(o).astype(np.float32)
        pad = k // 2 * dilation if pad is None else pad
        b.add_convolution(name, c // groups, o, k, k, stride, stride, "valid", groups, wt, bias, True, input_name=x,
                          output_name=name, dilation_factors=[dilation, dilation], padding_top=pad,
                          padding_bottom=pad, padding_left=pad, padding_right=pad)

    conv("c1", "x", c, 3)
    b.add_lrn("lrn", "c1", "lrn", alpha=1e-2, beta=0.75, local_size=3, k=1.0)
    conv("dw", "lrn", c, 3, groups=c)
    b.add_batchnorm("bn", c, rng.uniform(0.5, 1.5, c), rng.standard_normal(c), rng.standard_normal(c),
                    rng.uniform(0.5, 1.5, c), "dw", "bn")
    b.add_activation("r6_relu", "RELU", "bn", "r6_relu")
    b.add_activation("r6_neg", "LINEAR", "r6_relu", "r6_neg", params=[-1.0, 0.0])
    b.add_unary("r6_thr", "r6_neg", "r6_thr", mode="threshold", alpha=-6.0)
    b.add_activation("r6", "LINEAR", "r6_thr", "r6", params=[-1.0, 0.0])
    conv("dil", "r6", c, 3, dilation=2)
    b.add_elementwise("sum1", ["dil", "r6"], "sum1", mode="ADD")
    conv("c2", "sum1", c, 1, pad=0)
    b.add_elementwise("sum2", ["c2", "c1"], "sum2", mode="ADD")
    b.add_activation("relu2", "RELU", "sum2", "relu2")
    b.add_pooling("pooled", 3, 3, 2, 2, "MAX", "VALID", "relu2", "pooled", padding_top=1, padding_bottom=1,
                  padding_left=1, padding_right=0)
    wt = rng.standard_normal((3, 3, c, c)).astype(np.float32)  # a kernel past its stride: not the NHWC route's
    b.add_convolution("up", c, c, 3, 3, 2, 2, "valid", 1, wt, None, False, is_deconv=True, input_name="pooled",
                      output_name="up")
    b.add_pooling("gap", 1, 1, 1, 1, "AVERAGE", "VALID", "up", "gap", is_global=True)
    b.add_inner_product("fc", rng.standard_normal((6, c)).astype(np.float32), rng.standard_normal(6), c, 6, True,
                        "gap", "logits")
    b.add_softmax("softmax", "logits", "probs")
    return b


def test_a_model_mixing_nhwc_and_chw_layers_converts_at_the_edges_and_matches_the_chw_route(tmp_path, rng):
    c = 6
    b = _mixed_model(rng, c)
    x = rng.standard_normal((c, 12, 11)).astype(np.float32)
    fast, plain, layers, plain_layers, nodes = _predict_both(tmp_path, b, {"x": x})
    close(fast["pooled"], plain["pooled"], atol=1e-4)
    close(fast["probs"], plain["probs"], atol=1e-5)
    lowered = {layer.name: layer.lowering for layer in layers}
    assert lowered["c1"].startswith("nnapi.conv_2d")
    assert lowered["dw"].startswith("nnapi.depthwise_conv_2d") and "r6" in lowered["dw"]
    assert lowered["dil"] == "nnapi.grouped_conv_2d, dilation [2, 2] (NHWC) then vxTensorAdd with sum1 folded in"
    assert lowered["c2"] == "nnapi.conv_2d_residual (NHWC, the add in the epilogue) with sum2, relu2 folded in"
    assert lowered["pooled"].startswith("nnapi.max_pool_2d")
    assert lowered["up"].startswith("coreml.convolution(transposed")
    assert lowered["gap"].startswith("vxPoolingLayer")  # its input (the deconvolution's) is in CoreML's layout
    assert all(not how.startswith("nnapi.") for how in [p.lowering for p in plain_layers])
    # conversions, each once: x and lrn into NHWC; c1 (for lrn) and pooled (a model output, and the
    # deconvolution's input) back
    fast_model = cm.load(tmp_path / "model.mlmodel")
    try:
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in fast_model.graph.nodes]
    finally:
        fast_model.close()
    assert kinds.count("to_nhwc") == 2 and kinds.count("to_chw") == 2, kinds
    assert len(kinds) == nodes


@pytest.mark.parametrize("network", ["mobilenet_v2", "resnet18"])
def test_the_benchmark_networks_run_every_convolution_on_the_nhwc_engines(tmp_path, network):
    from benchmarks import coreml_models as c
    net = c.mobilenet_v2(0.35, 48, classes=7, stages=4) if network == "mobilenet_v2" else \
        c.resnet18(0.125, 48, classes=7)
    x = c.sample_images(net, 1)[0]
    spec = c.coreml_spec(net)
    path = tmp_path / "model.mlmodel"
    save_spec(spec, str(path))
    fast, plain = cm.load(path), cm.load(path, nhwc=False)
    try:
        want = plain.predict({net.input: x})[net.output]
        for _ in range(2):  # the second run is native: every node has a native entry
            close(fast.predict({net.input: x})[net.output], want, atol=1e-4)
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in fast.graph.nodes]
        convs = [layer.lowering for layer in fast.layers if layer.type == "convolution"]
        native_runs = fast.graph.native_runs
    finally:
        fast.close()
        plain.close()
    assert all(how.startswith("nnapi.") for how in convs), convs
    assert kinds.count("to_nhwc") == 1 and kinds.count("to_chw") == 1, kinds
    assert native_runs > 0


@pytest.mark.parametrize("depthwise", [False, True], ids=["dense", "depthwise"])
@pytest.mark.parametrize("clip", ["relu", "relu6", "relu1", "none"])
def test_a_folded_residual_add_carries_each_fused_activation(tmp_path, rng, clip, depthwise):
    c, h, w = 5, 7, 6
    x = (3 * rng.standard_normal((c, h, w))).astype(np.float32)
    wt = rng.standard_normal((3, 3, 1 if depthwise else c, c)).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    b.add_convolution("conv", 1 if depthwise else c, c, 3, 3, 1, 1, "same", c if depthwise else 1, wt, None, False,
                      input_name="x", output_name="conv")
    b.add_elementwise("sum" if clip != "none" else "y", ["conv", "x"], "sum" if clip != "none" else "y", mode="ADD")
    want = ref.conv2d(x.astype(np.float64), wt.transpose(3, 2, 0, 1).astype(np.float64), None, (1, 1), (1, 1),
                      (1, 1, 1, 1), c if depthwise else 1) + x
    if clip != "none":
        _add_clip(b, clip, "sum", "y")
        want = np.clip(want, *CLIPS[clip])
    fast, plain, layers, _, n_nodes = _predict_both(tmp_path, b, {"x": x})
    close(fast["y"], want, atol=1e-4)
    close(plain["y"], want, atol=1e-4)
    assert all(layer.lowering.startswith("folded") for layer in layers[1:]), layers
    if not depthwise:  # the add and the clip in the convolution's epilogue: one node between the conversions
        assert layers[0].lowering.startswith("nnapi.conv_2d_residual (NHWC, the add in the epilogue)"), layers[0]
        assert n_nodes == 3
        return
    assert layers[0].lowering.split(" then ")[1].split(" with ")[0] == {
        "relu": "vxTensorAdd, vxActivationLayer(relu)", "relu6": "vxTensorAdd, vxActivationLayer(brelu 6)",
        "relu1": "nnapi.add", "none": "vxTensorAdd"}[clip]


def test_a_convolution_of_a_cropped_view_gathers_it_into_nhwc(tmp_path, rng):
    x = rng.standard_normal((3, 9, 10)).astype(np.float32)
    wt = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    b.add_crop("crop", left=1, right=2, top=2, bottom=1, offset=[], input_names=["x"], output_name="crop")
    b.add_convolution("conv", 3, 4, 3, 3, 1, 1, "valid", 1, wt, None, False, input_name="crop", output_name="y")
    fast, plain, layers, _, _ = _predict_both(tmp_path, b, {"x": x})
    want = ref.conv2d(x[:, 2:-1, 1:-2].astype(np.float64), wt.transpose(3, 2, 0, 1).astype(np.float64), None,
                      (1, 1), (1, 1), (0, 0, 0, 0), 1)
    close(fast["y"], want, atol=1e-4)
    close(plain["y"], want, atol=1e-4)
    assert layers[1].lowering.startswith("nnapi.conv_2d")


def test_a_sequence_of_inputs_runs_as_the_nhwc_batch(tmp_path, rng):
    x = rng.standard_normal((4, 3, 9, 10)).astype(np.float32)  # [Seq, C, H, W]: N = 4 on the NHWC route
    wt = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    b = builder({"x": x.shape[1:]}, ["y"])
    b.add_convolution("conv", 3, 4, 3, 3, 2, 1, "same", 1, wt, None, False, input_name="x", output_name="c")
    b.add_pooling("p", 2, 2, 2, 2, "MAX", "VALID", "c", "p")
    b.add_activation("y", "RELU", "p", "y")
    fast, plain, layers, _, _ = _predict_both(tmp_path, b, {"x": x})
    w64 = wt.transpose(3, 2, 0, 1).astype(np.float64)
    pads = ref.same_pads(9, 3, 2) + ref.same_pads(10, 3, 1)
    want = np.stack([np.maximum(ref.pool2d(ref.conv2d(item.astype(np.float64), w64, None, (2, 1), (1, 1), pads, 1),
                                           "max", (2, 2), (2, 2), (0, 0, 0, 0), False), 0.0) for item in x])
    close(fast["y"], want, atol=1e-4)
    close(plain["y"], want, atol=1e-4)
    assert [layer.lowering for layer in layers] == ["nnapi.conv_2d (NHWC)", "nnapi.max_pool_2d (NHWC)",
                                                    "vxActivationLayer(relu) (NHWC)"]
