"""The CNN / MLP layers against plain references: convolution (groups, dilation,
same/valid padding, stride, deconvolution), pooling, every activation, inner
product, batchnorm, softmax, element-wise layers, concat, flatten, reshape."""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import close, run, weights

CONV_CASES = [  # (C, H, W, O, k, stride, dilation, groups, border, pads or asymmetry)
    (3, 7, 6, 4, (3, 3), (1, 1), (1, 1), 1, "valid", (0, 0, 0, 0)),
    (4, 8, 7, 6, (3, 2), (2, 2), (1, 1), 2, "same", "BOTTOM_RIGHT_HEAVY"),
    (2, 9, 9, 3, (2, 2), (2, 1), (1, 1), 1, "same", "TOP_LEFT_HEAVY"),
    (3, 9, 8, 2, (3, 3), (1, 2), (2, 1), 1, "valid", (1, 2, 0, 1)),
    (6, 6, 6, 6, (3, 3), (3, 3), (1, 1), 3, "valid", (1, 1, 1, 1)),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[f"conv{i}" for i in range(len(CONV_CASES))])
def test_convolution_matches_the_reference(tmp_path, rng, case):
    c, h, w, o, k, s, d, groups, border, pads = case
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    wt = rng.standard_normal((k[0], k[1], c // groups, o)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    extra = {}
    if border == "same":
        extra["same_padding_asymmetry_mode"] = pads
    else:
        extra.update(padding_top=pads[0], padding_bottom=pads[1], padding_left=pads[2], padding_right=pads[3])

    def add(b):
        b.add_convolution("conv", c // groups, o, k[0], k[1], s[0], s[1], border, groups, wt, bias, True,
                          input_name="x", output_name="y", dilation_factors=list(d), **extra)

    out, spec = run(tmp_path, {"x": x}, ["y"], add)
    p = spec.neuralNetwork.layers[0].convolution
    wsp = weights(p.weights, (o, c // groups, k[0], k[1]))
    if border == "same":
        eff = [(k[i] - 1) * d[i] + 1 for i in range(2)]
        top, bottom = ref.same_pads(h, eff[0], s[0], pads == "TOP_LEFT_HEAVY")
        left, right = ref.same_pads(w, eff[1], s[1], pads == "TOP_LEFT_HEAVY")
        pads = (top, bottom, left, right)
    close(out["y"], ref.conv2d(x.astype(np.float64), wsp, weights(p.bias, (o,)), s, d, pads, groups))


@pytest.mark.parametrize("groups,stride,border", [(1, (2, 2), "valid"), (2, (2, 3), "same"), (1, (1, 1), "valid")])
def test_deconvolution_matches_the_reference(tmp_path, rng, groups, stride, border):
    c, h, w, o, k = 4, 3, 4, 4, (3, 2)
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    wt = rng.standard_normal((k[0], k[1], c, o // groups)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    pads = {"padding_top": 1, "padding_bottom": 0, "padding_left": 0, "padding_right": 1} if border == "valid" else {}

    def add(b):
        b.add_convolution("deconv", c, o, k[0], k[1], stride[0], stride[1], border, groups, wt, bias, True,
                          is_deconv=True, input_name="x", output_name="y", **pads)

    out, spec = run(tmp_path, {"x": x}, ["y"], add)
    p = spec.neuralNetwork.layers[0].convolution
    wsp = weights(p.weights, (c, o // groups, k[0], k[1]))
    full = [(h - 1) * stride[0] + k[0], (w - 1) * stride[1] + k[1]]
    if border == "same":
        crop_h, crop_w = full[0] - h * stride[0], full[1] - w * stride[1]
        crop = tuple(v for c_ in (crop_h, crop_w) for v in ((c_ // 2, c_ - c_ // 2) if c_ >= 0 else (0, c_)))
    else:
        crop = (1, 0, 0, 1)
    close(out["y"], ref.deconv2d(x.astype(np.float64), wsp, weights(p.bias, (o,)), stride, groups, crop))


POOL_CASES = [  # (kind, kernel, stride, padding type, pads, exclude, global)
    ("MAX", (2, 2), (2, 2), "VALID", (0, 0, 0, 0), True, False),
    ("AVERAGE", (3, 3), (2, 2), "VALID", (1, 1, 1, 1), False, False),
    ("AVERAGE", (3, 2), (1, 2), "VALID", (1, 0, 1, 1), True, False),
    ("MAX", (3, 3), (2, 2), "SAME", None, True, False),
    ("L2", (2, 3), (2, 1), "VALID", (0, 0, 0, 0), True, False),
    ("AVERAGE", (3, 3), (1, 1), "VALID", (0, 0, 0, 0), True, True),
    ("MAX", (3, 3), (2, 2), "INCLUDE_LAST_PIXEL", (1, 1, 1, 1), True, False),
    ("AVERAGE", (3, 3), (2, 2), "VALID", (1, 1, 1, 1), True, False),
    ("AVERAGE", (2, 3), (2, 2), "SAME", None, True, False),
    ("MAX", (3, 2), (1, 3), "VALID", (1, 0, 1, 1), True, False),  # uneven padding, a stride the sizes do not imply
    ("MAX", (3, 3), (1, 1), "VALID", (0, 0, 0, 0), True, True),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(POOL_CASES)])
def test_pooling_matches_the_reference(tmp_path, rng, case):
    kind, k, s, padding, pads, exclude, is_global = case
    x = rng.standard_normal((3, 7, 8)).astype(np.float32)
    extra = {} if pads is None else {"padding_top": pads[0], "padding_bottom": pads[1], "padding_left": pads[2],
                                         "padding_right": pads[3]}

    def add(b):
        b.add_pooling("pool", k[0], k[1], s[0], s[1], kind, padding, "x", "y", exclude_pad_area=exclude,
                      is_global=is_global, **extra)

    out, _ = run(tmp_path, {"x": x}, ["y"], add)
    x64 = x.astype(np.float64)
    size = None
    if is_global:
        k, s, pads = (7, 8), (1, 1), (0, 0, 0, 0)
    elif padding == "SAME":
        pads = ref.same_pads(7, k[0], s[0]) + ref.same_pads(8, k[1], s[1])
    elif padding == "INCLUDE_LAST_PIXEL":
        size = tuple(-(-(n + 2 - kk) // ss) + 1 for n, kk, ss in ((7, k[0], s[0]), (8, k[1], s[1])))
        size = tuple(o - 1 if (o - 1) * ss >= n + 1 else o for o, n, ss in zip(size, (7, 8), s))
    close(out["y"], ref.pool2d(x64, kind.lower(), k, s, pads, exclude, size))


ACTIVATION_PARAMS = {"LEAKYRELU": [0.3], "SCALED_TANH": [1.7, 0.6], "LINEAR": [-0.5, 0.25], "SIGMOID_HARD": [0.2, 0.5],
                     "ELU": [0.8], "THRESHOLDEDRELU": [0.4], "PRELU": None, "PARAMETRICSOFTPLUS": None}


@pytest.mark.parametrize("name", sorted(ref.ACTIVATIONS))
def test_every_activation_matches_the_reference(tmp_path, rng, name):
    x = (rng.standard_normal((4, 3, 5)) * 2).astype(np.float32)
    params = ACTIVATION_PARAMS.get(name)
    alpha = beta = None
    if name == "PRELU":
        alpha = rng.uniform(0.1, 0.9, 4)
        params = [alpha]
    elif name == "PARAMETRICSOFTPLUS":
        alpha, beta = rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 4)
        params = [alpha, beta]
    given = params
    if name in ("ELU", "THRESHOLDEDRELU"):
        given = params[0]  # the builder takes these as a bare float
    elif name == "PRELU":
        given = alpha
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_activation("act", name, "x", "y", given))
    if alpha is not None:
        a = alpha.reshape(4, 1, 1)
        bb = beta.reshape(4, 1, 1) if beta is not None else 0.0
    else:
        a, bb = (params + [0.0, 0.0])[:2] if params else (0.0, 0.0)
    close(out["y"], ref.ACTIVATIONS[name](x.astype(np.float64), a, bb))


def test_inner_product_matches_the_reference(tmp_path, rng):
    x = rng.standard_normal((12,)).astype(np.float32)
    w = rng.standard_normal((5, 12)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    out, spec = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_inner_product("fc", w, bias, 12, 5, True, "x", "y"),
                    output_shapes={"y": (5,)})
    p = spec.neuralNetwork.layers[0].innerProduct
    close(out["y"], weights(p.weights, (5, 12)) @ x + weights(p.bias, (5,)))


@pytest.mark.parametrize("mode", ["stored", "instance"])
def test_batchnorm_matches_the_reference(tmp_path, rng, mode):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 2, 3), rng.standard_normal(3)
    mean, var = rng.standard_normal(3), rng.uniform(0.2, 2, 3)
    inst = mode == "instance"
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_batchnorm(
        "bn", 3, gamma, beta, None if inst else mean, None if inst else var, "x", "y", compute_mean_var=inst,
        instance_normalization=inst, epsilon=1e-3))
    x64 = x.astype(np.float64)
    if inst:
        mean = x64.mean(axis=(1, 2))
        var = x64.var(axis=(1, 2))
    col = (-1, 1, 1)
    want = gamma.reshape(col) * (x64 - mean.reshape(col)) / np.sqrt(var.reshape(col) + 1e-3) + beta.reshape(col)
    close(out["y"], want)


def test_softmax_normalises_along_channels(tmp_path, rng):
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_softmax("sm", "x", "y"))
    close(out["y"], ref.softmax(x.astype(np.float64), 0))


@pytest.mark.parametrize("mode", ["ADD", "MULTIPLY", "AVE", "MAX", "MIN"])
def test_elementwise_layers_of_several_inputs(tmp_path, rng, mode):
    xs = {f"x{i}": rng.standard_normal((3, 4, 2)).astype(np.float32) for i in range(3)}
    xs["x2"] = xs["x2"][:, :1, :1].copy()  # [C, 1, 1] broadcasts
    shapes = {n: a.shape for n, a in xs.items()}
    out, _ = run(tmp_path, xs, ["y"], lambda b: b.add_elementwise("e", list(xs), "y", mode), shapes=shapes)
    a, b_, c = (xs[f"x{i}"].astype(np.float64) for i in range(3))
    want = {"ADD": a + b_ + c, "MULTIPLY": a * b_ * c, "AVE": (a + b_ + c) / 3, "MAX": np.maximum(np.maximum(a, b_), c),
            "MIN": np.minimum(np.minimum(a, b_), c)}[mode]
    close(out["y"], want)


@pytest.mark.parametrize("mode", ["ADD", "MULTIPLY"])
def test_single_input_add_and_multiply_use_alpha(tmp_path, rng, mode):
    x = rng.standard_normal((2, 3, 3)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_elementwise("e", ["x"], "y", mode, alpha=1.75))
    close(out["y"], x + 1.75 if mode == "ADD" else x * 1.75)


def test_bias_and_scale_broadcast_their_constants(tmp_path, rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    bias = rng.standard_normal((1, 4, 5)).astype(np.float32)
    scale, sbias = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)

    def add(b):
        b.add_bias("bias", bias, "x", "t", shape_bias=[1, 4, 5])
        b.add_scale("scale", scale, sbias, True, "t", "y", shape_scale=[3], shape_bias=[3])

    out, _ = run(tmp_path, {"x": x}, ["y"], add)
    col = (3, 1, 1)
    close(out["y"], (x + bias) * scale.reshape(col) + sbias.reshape(col))


def test_concat_along_channels_and_sequence(tmp_path, rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    c = rng.standard_normal((3, 3, 4)).astype(np.float32)

    def add(b):
        b.add_elementwise("concat", ["a", "c"], "y", "CONCAT")
        b.add_elementwise("seq", ["a", "a"], "z", "SEQUENCE_CONCAT")

    out, _ = run(tmp_path, {"a": a, "c": c}, ["y", "z"], add)
    close(out["y"], np.concatenate([a, c]))
    close(out["z"], np.stack([a, a]))


@pytest.mark.parametrize("mode", [0, 1])
def test_flatten_in_both_orders(tmp_path, rng, mode):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_flatten("f", mode, "x", "y"), output_shapes={"y": (24,)})
    close(out["y"], x.reshape(-1) if mode == 0 else x.transpose(1, 2, 0).reshape(-1))


@pytest.mark.parametrize("mode", [0, 1])
def test_reshape_in_both_orders(tmp_path, rng, mode):
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_reshape("r", "x", "y", (2, 6, 2), mode))
    want = x.reshape(2, 6, 2) if mode == 0 else x.transpose(1, 2, 0).reshape(6, 2, 2).transpose(2, 0, 1)
    close(out["y"], want)
