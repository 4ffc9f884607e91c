"""Integer depthwise layers written map by map (one single-map ``vxConvolutionLayer`` per map, on views): the plan
runs the U8 and S8 ones the uint8 depthwise kernel computes exactly as one call (``core/map_groups.py``,
``kernels/openvx/integer_depthwise.py``), and every one, merged or not, gives the bytes of the graph without the
rewrites and of a plain reference written from ``docs/fixed-point.md``: exact sums of exact products, the bias and
the sum aligned by exact left shifts, one shift to the output position rounded by the node's policy, then
saturated or wrapped. Randomized over shapes, windows, strides, paddings, biases, fixed point positions, both
overflow and both rounding policies, for U8, S8 and Q7.8.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run

from openvx_nn.api import Context
from openvx_nn.core import rewrites

FORMATS = {"u8": np.uint8, "s8": np.int8, "q78": np.int16}


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def round_shift(v: int, shift: int, nearest_even: bool) -> int:
    """``v / 2**shift`` (exact for ``shift <= 0``), rounded to zero or to nearest with ties to even."""
    if shift <= 0:
        return v << -shift
    q, r = divmod(v, 1 << shift)  # floor, 0 <= r < 2**shift
    half = 1 << (shift - 1)
    if nearest_even:
        if r > half or (r == half and q % 2 == 1):
            q += 1
    elif q < 0 and r != 0:
        q += 1
    return q


def fit(v: int, dtype, saturate: bool) -> int:
    info = np.iinfo(dtype)
    if saturate:
        return min(max(v, int(info.min)), int(info.max))
    span = int(info.max) - int(info.min) + 1
    return (v - int(info.min)) % span + int(info.min)


def ref_depthwise(x, w, b, pad, stride, out_wh, fpp, saturate, nearest_even):
    """``out[ox, oy, c]`` from map c of ``x`` ``[W, H, C]`` and ``w[:, :, 0, c]``, taps outside ``x`` adding
    nothing, in Python integers (``fpp`` = positions of input, weights, bias, output)."""
    fx, fw, fb, fo = fpp
    products = fx + fw
    scale = max(products, fb) if b is not None else products
    out = np.zeros(out_wh + (x.shape[2],), x.dtype)
    for c in range(x.shape[2]):
        for ox in range(out_wh[0]):
            for oy in range(out_wh[1]):
                total = 0
                for kx in range(w.shape[0]):
                    for ky in range(w.shape[1]):
                        ix, iy = ox * stride[0] - pad[0] + kx, oy * stride[1] - pad[1] + ky
                        if 0 <= ix < x.shape[0] and 0 <= iy < x.shape[1]:
                            total += int(x[ix, iy, c]) * int(w[kx, ky, 0, c])
                total <<= scale - products
                if b is not None:
                    total += int(b[c]) << (scale - fb)
                out[ox, oy, c] = fit(round_shift(total, scale - fo, nearest_even), x.dtype, saturate)
    return out


def draw(rng, fmt, shifted_left=False):
    """One layer's random parameters (``shifted_left``: positions whose result is the sum shifted left, which
    the uint8 kernel takes: the bias at most as fine as the products, the output at least as fine)."""
    dtype = FORMATS[fmt]
    c = int(rng.integers(2 if shifted_left else 1, 13))
    kw, kh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    width, height = int(rng.integers(kw, 16)), int(rng.integers(kh, 16))
    pad = (int(rng.integers(0, kw)), int(rng.integers(0, kh)))
    stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    out_wh = tuple((n + 2 * p - k) // s + 1 for n, p, k, s in zip((width, height), pad, (kw, kh), stride))
    # the layer infers its stride from the sizes: the smallest giving these outputs (the reference takes that one)
    stride = tuple(next(s for s in range(1, n + 2 * p - k + 2) if (n + 2 * p - k) // s == o - 1)
                   for n, p, k, o in zip((width, height), pad, (kw, kh), out_wh))
    if fmt == "q78":
        fpp = (8, 8, int(rng.choice([8, 12, 15])), 8)
    elif fmt == "u8" and rng.random() < 0.5:
        fpp = (0, 0, 0, 0)  # KHR_NN_8: plain integers
    else:  # other positions: some the kernel takes (an exact left shift), some not (a rounded right shift)
        fx, fw = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        fpp = (fx, fw, int(rng.integers(0, fx + fw + 2)), int(rng.integers(0, fx + fw + 3)))
    if shifted_left:
        fx, fw = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        fpp = (fx, fw, int(rng.integers(0, fx + fw + 1)), fx + fw + int(rng.integers(0, 3)))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, int(info.max) + 1, (width, height, c)).astype(dtype)
    w = rng.integers(info.min, int(info.max) + 1, (kw, kh, 1, c)).astype(dtype)
    if fmt == "u8" and rng.random() < 0.5:  # small weights: sums that do not all saturate
        w = rng.integers(0, 3, w.shape).astype(dtype)
    b = rng.integers(info.min, int(info.max) + 1, (c,)).astype(dtype) if rng.random() < 0.6 else None
    overflow = "saturate" if shifted_left else str(rng.choice(["saturate", "wrap"]))
    return {"x": x, "w": w, "b": b, "pad": pad, "stride": stride, "out_wh": out_wh, "fpp": fpp, "overflow": overflow,
            "rounding": str(rng.choice(["nearest_even", "to_zero"]))}


def build_and_run(layer, order, after_relu: bool):
    """The layer's maps as one-map convolutions on views (added in ``order``), optionally followed by a node that
    reads the result; the output's bytes from a native run, and the rewrites' report."""
    x, w, b, fpp = layer["x"], layer["w"], layer["b"], layer["fpp"]
    width, height, c = x.shape
    out_wh = layer["out_wh"]
    with Context() as ctx, ctx.graph() as g:
        xt = ctx.tensor(x, fixed_point_position=fpp[0])
        wt = ctx.tensor(w, fixed_point_position=fpp[1])
        bt = None if b is None else ctx.tensor(b, fixed_point_position=fpp[2])
        target = ctx.tensor(shape=out_wh + (c,), dtype=x.dtype, fixed_point_position=fpp[3])
        d = g.virtual(shape=out_wh + (c,), dtype=x.dtype, fixed_point_position=fpp[3]) if after_relu else target
        for k in order:
            k = int(k)
            g.convolution(xt.view((0, 0, k), (width, height, k + 1)), wt.view((0, 0, 0, k), w.shape[:3] + (k + 1,)),
                          None if bt is None else bt.view((k,), (k + 1,)), out=d.view((0, 0, k), out_wh + (k + 1,)),
                          padding=layer["pad"], stride=layer["stride"], overflow=layer["overflow"],
                          rounding=layer["rounding"])
        if after_relu:  # a reader of the whole result after the group (ReLU leaves the values >= 0 unchanged)
            g.activation(d, "relu", out=target)
        got = native_run(g, target).copy()
        return got, model(g.handle).rewrites


def served(layer) -> bool:
    """Whether the plan should merge the layer (``integer_depthwise.exact_shift``'s conditions)."""
    fx, fw, fb, fo = layer["fpp"]
    return (layer["x"].dtype in (np.uint8, np.int8) and layer["overflow"] == "saturate"
            and (layer["b"] is None or fb <= fx + fw) and 0 <= fo - fx - fw <= 30)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("seed", range(8))
def test_a_depthwise_layer_map_by_map_gives_the_bytes_of_the_reference_merged_or_not(monkeypatch, fmt, seed):
    rng = np.random.default_rng([4060, seed, list(FORMATS).index(fmt)])
    layer = draw(rng, fmt)
    c = layer["x"].shape[2]
    order = rng.permutation(c)
    after_relu = bool(rng.random() < 0.5)
    results = {}
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        results[enabled] = build_and_run(layer, order, after_relu)
    (merged, report), (plain, _) = results[True], results[False]
    expected = ref_depthwise(layer["x"], layer["w"], layer["b"], layer["pad"], layer["stride"], layer["out_wh"],
                             layer["fpp"], layer["overflow"] == "saturate", layer["rounding"] == "nearest_even")
    if after_relu:
        expected = np.maximum(expected, 0)
    assert plain.tobytes() == expected.tobytes()
    assert merged.tobytes() == plain.tobytes()
    assert report.merged == ((c - 1) if served(layer) and c > 1 else 0)


@pytest.mark.parametrize("fmt", ["s8", "u8"])
@pytest.mark.parametrize("seed", range(5))
def test_8_bit_layers_whose_result_is_the_sum_shifted_left_merge_with_the_bytes_of_the_reference(monkeypatch, fmt,
                                                                                                   seed):
    """U8 and S8 fixed point positions the kernel takes (a bias per map or none, either rounding policy: no
    rounding happens), so the plan merges them; S8 sums, biases and results of either sign."""
    rng = np.random.default_rng([4062, seed, fmt == "s8"])
    layer = draw(rng, fmt, shifted_left=True)
    c = layer["x"].shape[2]
    results = {}
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        results[enabled] = build_and_run(layer, rng.permutation(c), bool(seed % 2))
    (merged, report), (plain, _) = results[True], results[False]
    expected = ref_depthwise(layer["x"], layer["w"], layer["b"], layer["pad"], layer["stride"], layer["out_wh"],
                             layer["fpp"], True, layer["rounding"] == "nearest_even")
    if seed % 2:
        expected = np.maximum(expected, 0)
    assert plain.tobytes() == expected.tobytes()
    assert merged.tobytes() == plain.tobytes()
    assert served(layer) and report.merged == c - 1


@pytest.mark.parametrize("seed", range(4))
def test_mobilenet_shaped_u8_layers_merge_with_the_bytes_of_the_plain_plan(monkeypatch, seed):
    """Larger U8 layers (fixed point 0, saturating, no bias: the KHR_NN_8 networks): 3x3, stride 1 or 2, pad 1,
    enough maps and pixels for the kernel's block transposes and its shared rows."""
    rng = np.random.default_rng([4061, seed])
    c, size = int(rng.choice([8, 16, 33])), int(rng.choice([7, 14, 29]))
    stride = int(rng.integers(1, 3))
    x = rng.integers(0, 256, (size, size, c)).astype(np.uint8)
    w = rng.integers(0, 3, (3, 3, 1, c)).astype(np.uint8)
    out_wh = ((size - 1) // stride + 1,) * 2
    layer = {"x": x, "w": w, "b": None, "pad": (1, 1), "stride": (stride, stride), "out_wh": out_wh,
             "fpp": (0, 0, 0, 0), "overflow": "saturate", "rounding": str(rng.choice(["nearest_even", "to_zero"]))}
    results = {}
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        results[enabled] = build_and_run(layer, range(c), True)
    (merged, report), (plain, _) = results[True], results[False]
    expected = ref_depthwise(x, w, None, (1, 1), (stride, stride), out_wh, (0, 0, 0, 0), True, True)
    assert plain.tobytes() == expected.tobytes()
    assert merged.tobytes() == plain.tobytes()
    assert report.merged == c - 1
