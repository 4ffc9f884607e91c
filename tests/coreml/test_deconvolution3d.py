"""Transposed 3-D convolution (Convolution3D with ``isDeconvolution``, as coremltools writes PyTorch's
ConvTranspose3d): against a loop reference written from the definition (each input element times each tap added
at ``position * stride + tap * dilation``, then cropped) over randomized shapes, groups, strides, dilations, the
three padding modes and ``outputShape``; and against PyTorch for a converted module."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from .harness import builder, close, load

RNG = np.random.default_rng(3)


def _reference(x, w, bias, groups, stride, dilation, before, sizes):
    """x [B, C, D, H, W]; w [O/groups, C, kd, kh, kw] (what the builder takes); out [B, O, *sizes] = the full
    result from ``before`` on."""
    bsz, c = x.shape[:2]
    og = w.shape[0]
    per = c // groups
    full = [(n - 1) * s + (k - 1) * d + 1 for n, s, k, d in zip(x.shape[2:], stride, w.shape[2:], dilation)]
    reach = [max(f, b + e) for f, b, e in zip(full, before, sizes)]
    y = np.zeros((bsz, og * groups, *reach))
    for b, ci in itertools.product(range(bsz), range(c)):
        g = ci // per
        for pos in itertools.product(*map(range, x.shape[2:])):
            for tap in itertools.product(*map(range, w.shape[2:])):
                at = tuple(p * s + t * d for p, s, t, d in zip(pos, stride, tap, dilation))
                for o in range(og):
                    y[(b, g * og + o) + at] += x[(b, ci) + pos] * w[(o, ci) + tap]
    y = y[(slice(None), slice(None)) + tuple(slice(a, a + e) for a, e in zip(before, sizes))]
    return y + (0 if bias is None else bias.reshape(1, -1, 1, 1, 1))


CASES = [  # (groups, stride, dilation, mode, pads, output_shape)
    (1, (1, 1, 1), (1, 1, 1), "valid", (0,) * 6, None),
    (1, (2, 2, 1), (1, 1, 1), "valid", (0,) * 6, None),
    (2, (2, 1, 2), (1, 2, 1), "custom", (1, 0, 0, 1, 1, 1), None),
    (1, (2, 2, 2), (1, 1, 1), "same", (0,) * 6, None),
    (2, (1, 2, 3), (2, 1, 1), "valid", (0,) * 6, None),
    (1, (2, 2, 2), (1, 1, 1), "custom", (1, 1, 1, 1, 1, 1), (6, 7, 8)),  # outputShape past the crop: bias alone
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_deconvolution3d_against_the_definition(tmp_path, case):
    groups, stride, dilation, mode, pads, output_shape = CASES[case]
    bsz = int(RNG.integers(1, 3))
    c_in, c_out = 2 * groups, 3 * groups
    spatial = tuple(int(d) for d in RNG.integers(2, 4, size=3))
    kernel = tuple(int(d) for d in RNG.integers(1, 4, size=3))
    w = RNG.standard_normal((c_out // groups, c_in, *kernel))
    bias = RNG.standard_normal(c_out)
    full = [(n - 1) * s + (k - 1) * d + 1 for n, s, k, d in zip(spatial, stride, kernel, dilation)]
    if mode == "custom":
        before, sizes = list(pads[0::2]), [f - a - b for f, a, b in zip(full, pads[0::2], pads[1::2])]
    elif mode == "valid":
        before, sizes = [0, 0, 0], full
    else:
        sizes = [n * s for n, s in zip(spatial, stride)]
        before = [max(f - n, 0) // 2 for f, n in zip(full, sizes)]
    if output_shape:
        sizes = list(output_shape)
    shape = (bsz, c_in, *spatial)
    b = builder({"x": shape}, ["y"], exact=True)
    names = ("front", "back", "top", "bottom", "left", "right")
    b.add_convolution3d("deconv", c_in, c_out, *kernel, w, bias, True, groups=groups, stride_depth=stride[0],
                        stride_height=stride[1], stride_width=stride[2], dilation_depth=dilation[0],
                        dilation_height=dilation[1], dilation_width=dilation[2], is_deconv=True,
                        output_shape=output_shape, padding_mode=mode,
                        **{f"padding_{n}": p for n, p in zip(names, pads)}, input_name="x", output_name="y")
    x = RNG.standard_normal(shape).astype(np.float32)
    got = load(tmp_path, b).predict({"x": x})["y"]
    close(got, _reference(x.astype(np.float64), w.astype(np.float32).astype(np.float64),
                          bias.astype(np.float32).astype(np.float64), groups, stride, dilation, before, sizes))


def test_converted_conv_transpose3d_matches_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    ct = pytest.importorskip("coremltools")
    torch.manual_seed(0)
    module = torch.nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1),
                                      groups=2, dilation=(1, 2, 1)).eval()
    x = torch.randn(1, 4, 3, 4, 5)
    traced = torch.jit.trace(module, x)
    mlmodel = ct.convert(traced, inputs=[ct.TensorType(name="x", shape=x.shape)], convert_to="neuralnetwork")
    path = tmp_path / "deconv3d.mlmodel"
    mlmodel.save(str(path))
    import openvx_nn.coreml as cm
    model = cm.load(path)
    (got,) = model.predict({"x": x.numpy()}).values()
    close(got, module(x).detach().numpy().astype(np.float64))
