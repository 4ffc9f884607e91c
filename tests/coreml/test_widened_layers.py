"""Forms of classic layers the seed allows that used to be refused: a convolution taking its weights from a
second input (2-D and 3-D), a dilated deconvolution, and upsampling by fractional factors; each against a plain
reference."""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import builder, close, load, run

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("groups,stride,dilation,border", [(1, (1, 1), (1, 1), "valid"), (2, (2, 1), (1, 2), "valid"),
                                                           (1, (2, 2), (1, 1), "same")])
def test_convolution_with_weights_from_a_second_input(tmp_path, groups, stride, dilation, border):
    c, h, w, o, k = 4, 7, 6, 6, (3, 2)
    x = RNG.standard_normal((c, h, w)).astype(np.float32)
    wt = RNG.standard_normal((o, c // groups, k[0], k[1])).astype(np.float32)  # the seed's [O, C/g, kh, kw]

    def add(b):
        b.add_convolution("conv", c // groups, o, k[0], k[1], stride[0], stride[1], border, groups, None, None,
                          False, input_name=["x", "w"], output_name="y", dilation_factors=list(dilation))
    out, _ = run(tmp_path, {"x": x, "w": wt}, ["y"], add, exact=True)
    pads = (0, 0, 0, 0)
    if border == "same":
        eff = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
        pads = ref.same_pads(h, eff[0], stride[0]) + ref.same_pads(w, eff[1], stride[1])
    close(out["y"], ref.conv2d(x.astype(np.float64), wt.astype(np.float64), None, stride, dilation, pads, groups))
    wt2 = RNG.standard_normal(wt.shape).astype(np.float32)  # the weights are read on every run
    b = builder({"x": x.shape, "w": wt.shape}, ["y"], exact=True)
    add(b)
    model = load(tmp_path, b, "again")
    close(model.predict({"x": x, "w": wt2})["y"],
          ref.conv2d(x.astype(np.float64), wt2.astype(np.float64), None, stride, dilation, pads, groups))


def test_convolution3d_with_weights_from_a_second_input(tmp_path):
    x = RNG.standard_normal((1, 2, 4, 5, 3)).astype(np.float32)
    wt = RNG.standard_normal((3, 2, 2, 2, 2)).astype(np.float32)
    b = builder({"x": x.shape, "w": wt.shape}, ["y"], exact=True)
    b.add_convolution3d("conv", 2, 3, 2, 2, 2, np.zeros((3, 2, 2, 2, 2)), None, False, input_name="x",
                        output_name="y")
    layer = b.spec.neuralNetwork.layers[0]
    layer.input.append("w")
    del layer.convolution3d.weights.floatValue[:]
    got = load(tmp_path, b).predict({"x": x, "w": wt})["y"]
    expected = np.zeros((1, 3, 3, 4, 2))
    for o, d, i, j in np.ndindex(3, 3, 4, 2):
        expected[0, o, d, i, j] = np.sum(x[0, :, d:d + 2, i:i + 2, j:j + 2].astype(np.float64) * wt[o])
    close(got, expected)


def _dilated_deconv(x, w, b, stride, dilation, groups, before, size):
    """x [C, H, W], w [C, O/g, kh, kw]: input pixel (y, x) adds w * x at (y*s + i*d, x*s + j*d); crop from before."""
    c, h, wd = x.shape
    _, og, kh, kw = w.shape
    full = [(h - 1) * stride[0] + (kh - 1) * dilation[0] + 1, (wd - 1) * stride[1] + (kw - 1) * dilation[1] + 1]
    y = np.zeros((og * groups, max(full[0], before[0] + size[0]), max(full[1], before[1] + size[1])))
    per = c // groups
    for ci, r, q, i, j in np.ndindex(c, h, wd, kh, kw):
        g = ci // per
        y[g * og:(g + 1) * og, r * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]] += x[ci, r, q] * w[ci, :, i, j]
    y = y[:, before[0]:before[0] + size[0], before[1]:before[1] + size[1]]
    return y + b.reshape(-1, 1, 1)


@pytest.mark.parametrize("groups,stride,dilation,border", [(1, (2, 2), (2, 1), "valid"), (2, (1, 2), (2, 3), "same"),
                                                           (1, (3, 1), (1, 2), "valid-pads")])
def test_dilated_deconvolution(tmp_path, groups, stride, dilation, border):
    c, h, w, o, k = 4, 3, 4, 4, (3, 2)
    x = RNG.standard_normal((c, h, w)).astype(np.float32)
    wt = RNG.standard_normal((k[0], k[1], c, o // groups)).astype(np.float32)  # the builder's layout
    bias = RNG.standard_normal(o).astype(np.float32)
    pads = {"padding_top": 1, "padding_bottom": 0, "padding_left": 0, "padding_right": 2} if border == "valid-pads" \
        else {}

    def add(b):
        b.add_convolution("deconv", c, o, k[0], k[1], stride[0], stride[1], border.split("-")[0], groups, wt, bias,
                          True, is_deconv=True, input_name="x", output_name="y", dilation_factors=list(dilation),
                          **pads)
    out, _ = run(tmp_path, {"x": x}, ["y"], add)
    full = [(h - 1) * stride[0] + (k[0] - 1) * dilation[0] + 1, (w - 1) * stride[1] + (k[1] - 1) * dilation[1] + 1]
    if border == "same":
        size = [h * stride[0], w * stride[1]]
        before = [max(f - s, 0) // 2 for f, s in zip(full, size)]
    elif border == "valid":
        size, before = full, [0, 0]
    else:
        before, size = [1, 0], [full[0] - 1, full[1] - 2]
    w_seed = wt.transpose(2, 3, 0, 1).astype(np.float64)  # [C, O/g, kh, kw], as the layer stores it
    close(out["y"], _dilated_deconv(x.astype(np.float64), w_seed, bias.astype(np.float64), stride, dilation, groups,
                                    before, size))


@pytest.mark.parametrize("mode", ["ALIGN_CORNERS_TRUE", "ALIGN_CORNERS_FALSE"])
def test_upsample_by_fractional_factors(tmp_path, mode):
    x = RNG.standard_normal((2, 5, 7)).astype(np.float32)
    fh, fw = 1.5, 2.3

    def add(b):
        b.add_upsample("up", fh, fw, "x", "y", mode="BILINEAR", linear_upsample_mode=mode)
    out, _ = run(tmp_path, {"x": x}, ["y"], add)
    oh, ow = int(np.floor(5 * fh)), int(np.floor(7 * fw))

    def grid(n, m):  # the builder's documented grids (spacing from the sizes), clipped to the input
        if mode == "ALIGN_CORNERS_TRUE":
            pts = [i * (n - 1) / (m - 1) for i in range(m)]
        else:
            pts = [i * n / m + 0.5 * n / m - 0.5 for i in range(m)]
        return [min(n - 1, max(0.0, p)) for p in pts]
    expected = np.zeros((2, oh, ow))
    for c, (i, yy), (j, xx) in ((c, a, b_) for c in range(2) for a in enumerate(grid(5, oh))
                                for b_ in enumerate(grid(7, ow))):
        y0, x0 = int(np.floor(yy)), int(np.floor(xx))
        y1, x1 = min(y0 + 1, 4), min(x0 + 1, 6)
        dy, dx = yy - y0, xx - x0
        expected[c, i, j] = ((1 - dy) * (1 - dx) * x[c, y0, x0] + (1 - dy) * dx * x[c, y0, x1]
                             + dy * (1 - dx) * x[c, y1, x0] + dy * dx * x[c, y1, x1])
    close(out["y"], expected)
