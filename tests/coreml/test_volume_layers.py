"""Convolution3D, Pooling3D and GlobalPooling3D against plain-loop references written from the seed's text, over
random shapes, strides, dilations, groups and the three padding types (the seed's SAME example among them);
geometry that cannot be run is refused at load."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import builder, close, load, run

ct = pytest.importorskip("coremltools")


def _same(n, k, s, d=1):
    """The seed's SAME padding: ceil(n / s) outputs, the total split with the odd one after."""
    total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _pads(mode, sizes, kernel, stride, dilation, custom):
    if mode == "custom":
        return custom
    if mode == "valid":
        return [(0, 0)] * 3
    return [_same(n, k, s, d) for n, k, s, d in zip(sizes, kernel, stride, dilation)]


def ref_conv3d(x, w, b, stride, dilation, pads, groups):
    bsz = x.shape[0]
    c_out, per = w.shape[:2]
    og = c_out // groups
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(pads))
    outs = [(xp.shape[2 + i] - (w.shape[2 + i] - 1) * dilation[i] - 1) // stride[i] + 1 for i in range(3)]
    y = np.zeros((bsz, c_out, *outs))
    for n, o, z, r, q in np.ndindex(y.shape):
        g = o // og
        acc = 0.0 if b is None else float(b[o])
        for c, a, h, v in itertools.product(range(per), *(range(k) for k in w.shape[2:])):
            acc += w[o, c, a, h, v] * xp[n, g * per + c, z * stride[0] + a * dilation[0],
                                         r * stride[1] + h * dilation[1], q * stride[2] + v * dilation[2]]
        y[n, o, z, r, q] = acc
    return y


def ref_pool3d(x, kind, kernel, stride, pads, exclude):
    sizes = x.shape[2:]
    outs = [(sizes[i] + sum(pads[i]) - kernel[i]) // stride[i] + 1 for i in range(3)]
    y = np.zeros(x.shape[:2] + tuple(outs))
    for pos in np.ndindex(y.shape):
        n, c, z, r, q = pos
        inside = []
        for a, h, v in itertools.product(*(range(k) for k in kernel)):
            at = (z * stride[0] + a - pads[0][0], r * stride[1] + h - pads[1][0], q * stride[2] + v - pads[2][0])
            if all(0 <= t < s for t, s in zip(at, sizes)):
                inside.append(float(x[(n, c) + at]))
        if kind == "MAX":
            y[pos] = max(inside)
        else:
            y[pos] = sum(inside) / (len(inside) if exclude else int(np.prod(kernel)))
    return y


def test_convolution3d_seed_same_example(tmp_path, rng):
    x = rng.standard_normal((1, 3, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3, 3)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_convolution3d(
        "c", 3, 2, 3, 3, 3, w, None, False, stride_depth=2, stride_height=2, stride_width=2, padding_mode="same",
        input_name="x", output_name="y"), exact=True)
    assert out["y"].shape == (1, 2, 2, 4, 4)
    close(out["y"], ref_conv3d(x, w, None, (2, 2, 2), (1, 1, 1), [(1, 1), (0, 1), (0, 1)], 1))


@pytest.mark.parametrize("trial", range(6))
def test_convolution3d_random_geometry(tmp_path, rng, trial):
    groups = int(rng.choice([1, 2]))
    c_in, c_out = 2 * int(rng.integers(1, 3)), 2 * int(rng.integers(1, 3))
    sizes = tuple(int(s) for s in rng.integers(5, 8, 3))  # at least the widest span, (3 - 1) * 2 + 1
    kernel = tuple(int(k) for k in rng.integers(1, 4, 3))
    stride = tuple(int(s) for s in rng.integers(1, 3, 3))
    dilation = tuple(int(d) for d in rng.integers(1, 3, 3))
    mode = ["valid", "same", "custom"][trial % 3]
    custom = [tuple(int(p) for p in rng.integers(0, 3, 2)) for _ in range(3)]
    x = rng.standard_normal((2, c_in) + sizes).astype(np.float32)
    w = rng.standard_normal((c_out, c_in // groups) + kernel).astype(np.float32)
    bias = rng.standard_normal(c_out).astype(np.float32)
    pads = _pads(mode, sizes, kernel, stride, dilation, custom)

    def add(b):
        b.add_convolution3d("c", c_in, c_out, *kernel, w, bias, True, groups=groups, stride_depth=stride[0],
                            stride_height=stride[1], stride_width=stride[2], dilation_depth=dilation[0],
                            dilation_height=dilation[1], dilation_width=dilation[2], padding_mode=mode,
                            padding_front=custom[0][0], padding_back=custom[0][1], padding_top=custom[1][0],
                            padding_bottom=custom[1][1], padding_left=custom[2][0], padding_right=custom[2][1],
                            input_name="x", output_name="y")
    out, _ = run(tmp_path, {"x": x}, ["y"], add, exact=True)
    close(out["y"], ref_conv3d(x, w, bias, stride, dilation, pads, groups))


@pytest.mark.parametrize("kind", ["MAX", "AVERAGE"])
@pytest.mark.parametrize("mode,exclude", [("valid", False), ("same", False), ("same", True), ("custom", True),
                                          ("custom", False)])
def test_pooling3d(tmp_path, rng, kind, mode, exclude):
    x = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    kernel, stride = (2, 3, 3), (1, 2, 2)
    custom = [(1, 0), (1, 2), (0, 2)]
    pads = _pads(mode, x.shape[2:], kernel, stride, (1, 1, 1), custom)

    def add(b):
        b.add_pooling3d("p", "x", "y", kind, *kernel, *stride, padding_mode=mode, custom_padding_front=custom[0][0],
                        custom_padding_back=custom[0][1], custom_padding_top=custom[1][0],
                        custom_padding_bottom=custom[1][1], custom_padding_left=custom[2][0],
                        custom_padding_right=custom[2][1], average_pooling_count_excludes_padding=exclude)
    out, _ = run(tmp_path, {"x": x}, ["y"], add, exact=True)
    close(out["y"], ref_pool3d(x, kind, kernel, stride, pads, exclude))


@pytest.mark.parametrize("kind", ["MAX", "AVERAGE"])
def test_global_pooling3d(tmp_path, rng, kind):
    x = rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_global_pooling3d("g", "x", "y", kind), exact=True)
    expected = np.zeros((2, 3, 1, 1, 1))
    for n, c in np.ndindex(2, 3):
        values = [float(v) for v in x[n, c].reshape(-1)]
        expected[n, c] = max(values) if kind == "MAX" else sum(values) / len(values)
    close(out["y"], expected)


def _refused(tmp_path, shape, add, *words):
    b = builder({"x": shape}, ["y"], exact=True)
    add(b)
    with pytest.raises(cm.CoreMLError) as caught:
        load(tmp_path, b).predict({"x": np.zeros(shape, np.float32)})
    for word in words:
        assert word in str(caught.value)


W = np.ones((2, 2, 3, 3, 3), np.float32)


@pytest.mark.parametrize("case", ["rank", "channels", "too-big", "pool-padding", "stride-0"])
def test_bad_3d_geometry_is_refused_at_load(tmp_path, case):
    def conv(**kw):
        return lambda b: b.add_convolution3d("c", kw.pop("c_in", 2), 2, 3, 3, 3, W, None, False, input_name="x",
                                             output_name="y", **kw)
    cases = {
        "rank": ((2, 4, 4, 4), conv(), ("c", "rank 5")),
        "channels": ((1, 3, 4, 4, 4), conv(), ("c", "inputChannels is 2")),
        "too-big": ((1, 2, 2, 4, 4), conv(), ("c", "does not fit")),
        "pool-padding": ((1, 2, 4, 4, 4), lambda b: b.add_pooling3d(
            "p", "x", "y", "MAX", 2, 2, 2, 1, 1, 1, padding_mode="custom", custom_padding_front=2), ("p", "less than")),
        "stride-0": ((1, 2, 4, 4, 4), lambda b: b.add_pooling3d("p", "x", "y", "MAX", 2, 2, 2, 0, 1, 1),
                     ("p", "strideDepth")),
    }
    shape, add, words = cases[case]
    _refused(tmp_path, shape, add, *words)


def test_converted_pytorch_3d_network_matches_pytorch():
    torch = pytest.importorskip("torch", reason="PyTorch converts the module")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv3d(3, 8, 3, stride=1, padding=1)
            self.c2 = torch.nn.Conv3d(8, 8, 3, stride=2, padding=1, groups=2, dilation=1)
            self.mp = torch.nn.MaxPool3d(2)
            self.ap = torch.nn.AvgPool3d(3, stride=1, padding=1, count_include_pad=False)

        def forward(self, x):
            return self.ap(self.c2(self.mp(torch.relu(self.c1(x)))))

    torch.manual_seed(0)
    net, x = Net().eval(), torch.randn(1, 3, 12, 14, 16)
    spec = ct.convert(torch.jit.trace(net, x), convert_to="neuralnetwork",
                      inputs=[ct.TensorType(name="x", shape=x.shape)]).get_spec()
    kinds = [layer.WhichOneof("layer") for layer in spec.neuralNetwork.layers]
    assert kinds.count("convolution3d") == 2 and kinds.count("pooling3d") == 2
    model = cm.load(spec)
    try:
        out = model.predict({"x": x.numpy()})
    finally:
        model.close()
    close(out[spec.description.output[0].name], net(x).detach().numpy().astype(np.float64))
