"""An integer convolution computing the relu or brelu after it in its epilogue (``core/rewrites.py``'s fusion of
clamp activations, for integer tensors): the activation's table is a clip of the raw input, and a saturating
epilogue saturates to the clip's bounds. Randomized small layers in Q7.8 and the other integer formats are held
bit for bit to the plain references (convolution, then activation, written from the NN extension's text), on the
native plan and on the Python path, and a layer that wraps, or an activation whose table is no clip, is not fused.
"""
from __future__ import annotations

import numpy as np
import pytest
from conv_reference import reference_convolution
from kernel_testing import Q7, Q11_4, Q78, S8, U8, random_values
from native_testing import model, native_run
from nonlinear_reference import reference_activation

from openvx_nn.api import Context
from openvx_nn.core import rewrites

FORMATS = [Q78, Q78, Q11_4, U8, S8, Q7]


def _layer(rng, fmt):
    """A small convolution: (input, weights, bias or None, padding, output shape)."""
    w_, h_ = (int(v) for v in rng.integers(1, 13, 2))
    c, k = int(rng.integers(1, 9)), int(rng.integers(1, 40))
    kx, ky = (int(v) for v in rng.integers(1, 4, 2))
    pad = (int(rng.integers(0, (kx - 1) // 2 + 1)), int(rng.integers(0, (ky - 1) // 2 + 1)))
    kx, ky = min(kx, w_ + 2 * pad[0]), min(ky, h_ + 2 * pad[1])
    x = random_values(rng, fmt, (w_, h_, c))
    w = random_values(rng, fmt, (kx, ky, c, k))
    if fmt.dtype == np.int16:  # keep most sums inside the type, so that the clamp's two sides both show
        w = (w // 64).astype(np.int16)
    bias = random_values(rng, fmt, (k,)) if rng.random() < 0.7 else None
    out_shape = (w_ + 2 * pad[0] - kx + 1, h_ + 2 * pad[1] - ky + 1, k)
    return x, w, bias, pad, out_shape


def _activation(rng, fmt):
    """relu, or brelu with a bound inside the type's range, past it, or a few steps above zero (off the grid too)."""
    if rng.random() < 0.5:
        return "relu", 0.0
    top = (np.iinfo(fmt.dtype).max + 1) / 2 ** fmt.fpp
    return "brelu", float(rng.choice([rng.uniform(0.01, top), 2 * top, rng.integers(1, 4) / 2 ** fmt.fpp,
                                      (rng.integers(0, 4) + 0.5) / 2 ** fmt.fpp + 1e-3]))


def _run(fmt, layer, function, a, saturate, nearest, python_path):
    """The activation's output and the plan's report, of conv -> (virtual) -> activation -> output."""
    x, w, bias, pad, out_shape = layer
    p = fmt.fpp
    with Context() as ctx, ctx.graph() as g:
        xt = ctx.tensor(x, fixed_point_position=p)
        wt = ctx.tensor(w, fixed_point_position=p)
        bt = None if bias is None else ctx.tensor(bias, fixed_point_position=p)
        middle = g.virtual(out_shape, fmt.dtype, p)
        out = ctx.tensor(shape=out_shape, dtype=fmt.dtype, fixed_point_position=p)
        g.convolution(xt, wt, bt, out=middle, padding=pad, overflow="saturate" if saturate else "wrap",
                      rounding="nearest_even" if nearest else "to_zero")
        g.activation(middle, function, a=a, out=out)
        if python_path:
            model(ctx.handle).performance_enabled = True
            g.process()
            got = out.numpy().copy()
        else:
            got = native_run(g, out).copy()
        return got, model(g.handle).rewrites


def _reference(fmt, layer, function, a, saturate, nearest):
    x, w, bias, pad, out_shape = layer
    p = fmt.fpp
    conv = reference_convolution(x, w, bias, out_shape, pad, (1, 1), (0, 0), fmt, (p, p, p, p), saturate, nearest)
    return reference_activation(conv, function, a, 0.0, fmt, fmt)


@pytest.mark.parametrize("seed", range(12))
def test_a_fused_relu_or_brelu_gives_the_references_bits_on_both_paths(monkeypatch, seed):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)
    monkeypatch.setattr(rewrites, "ENABLED", True)
    rng = np.random.default_rng([7808, seed])
    fmt = FORMATS[seed % len(FORMATS)]
    layer = _layer(rng, fmt)
    function, a = _activation(rng, fmt)
    nearest = bool(rng.integers(2))
    expected = _reference(fmt, layer, function, a, True, nearest)
    for python_path in (False, True):
        got, report = _run(fmt, layer, function, a, True, nearest, python_path)
        assert [(p.description.name.split(".")[-1], q.description.name.split(".")[-1]) for p, q in report.fused] == [
            ("convolution_layer", "activation_layer")]
        assert np.array_equal(got, expected), (fmt, function, a, python_path)


@pytest.mark.parametrize("seed", range(3))
def test_a_wrapping_convolution_keeps_its_activation_apart(monkeypatch, seed):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)
    monkeypatch.setattr(rewrites, "ENABLED", True)
    rng = np.random.default_rng([7809, seed])
    layer = _layer(rng, Q78)
    expected = _reference(Q78, layer, "relu", 0.0, False, True)
    got, report = _run(Q78, layer, "relu", 0.0, False, True, False)
    assert report.fused == []
    assert np.array_equal(got, expected)


def test_an_activation_that_is_no_clip_keeps_its_node():
    rng = np.random.default_rng(7810)
    layer = _layer(rng, Q78)
    expected = _reference(Q78, layer, "abs", 0.0, True, True)
    got, report = _run(Q78, layer, "abs", 0.0, True, True, False)
    assert report.fused == []
    assert np.array_equal(got, expected)
