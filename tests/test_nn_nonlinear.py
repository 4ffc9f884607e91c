"""Activation, softmax and local response normalization through the C API
(typed constructor and generic node) against the plain references."""
from __future__ import annotations

import numpy as np
import pytest
from kernel_testing import F32, Q7, Q78, S8, U8, Format, assert_bits_equal, random_shape, random_values
from nn_forms import FORMS, run_layer
from nonlinear_reference import (
    assert_activation,
    assert_softmax,
    reference_activation,
    reference_lrn,
    reference_softmax,
)
from vxhelp import empty, read, release, tensor

FUNCTIONS = ["logistic", "tanh", "relu", "brelu", "softrelu", "abs", "square", "sqrt", "linear"]
Q0_15 = Format("Q0.15", np.int16, 15)
FORMAT_PAIRS = [(U8, U8), (S8, S8), (Q7, Q7), (Q78, Q78), (Q78, Q0_15), (F32, F32)]


def _fpp(fmt):
    return 0 if fmt.is_float else fmt.fpp


def _f32(value):
    return float(np.float32(value))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("pair", FORMAT_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("function", FUNCTIONS)
def test_activation_matches_the_reference(vx, ctx, function, pair, form):
    fin, fout = pair
    rng = np.random.default_rng([21, FUNCTIONS.index(function), FORMAT_PAIRS.index(pair), FORMS.index(form)])
    shape = random_shape(rng, max_size=200)
    x = random_values(rng, fin, shape)
    a, b = _f32(rng.uniform(0.25, 3.0)), _f32(rng.uniform(0.25, 2.0))
    tx, out = tensor(vx, ctx, x, _fpp(fin)), empty(vx, ctx, shape, fout.dtype, _fpp(fout))
    enum = getattr(vx, "VX_NN_ACTIVATION_" + {"tanh": "HYPERBOLIC_TAN"}.get(function, function.upper()))
    run_layer(vx, ctx, form, vx.VX_KERNEL_ACTIVATION_LAYER,
              lambda g: vx.vxActivationLayer(g, tx, enum, a, b, out),
              [tx, ("enum", enum), ("float32", a), ("float32", b), out])
    assert_activation(read(vx, out, shape, fout.dtype), reference_activation(x, function, a, b, fin, fout), function,
                      a, b)
    release(vx, tx, out)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("pair", FORMAT_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("rank", range(1, 7))
def test_softmax_follows_the_rank_rule_and_matches_the_reference(vx, ctx, rank, pair, form):
    fin, fout = pair
    rng = np.random.default_rng([22, rank, FORMAT_PAIRS.index(pair), FORMS.index(form)])
    shape = random_shape(rng, ndim=rank, max_size=150)
    x = random_values(rng, fin, shape)
    tx, out = tensor(vx, ctx, x, _fpp(fin)), empty(vx, ctx, shape, fout.dtype, _fpp(fout))
    run_layer(vx, ctx, form, vx.VX_KERNEL_SOFTMAX_LAYER, lambda g: vx.vxSoftmaxLayer(g, tx, out), [tx, out])
    axis = 0 if rank <= 2 else 2
    assert_softmax(read(vx, out, shape, fout.dtype), reference_softmax(x, axis, fin, fout))
    release(vx, tx, out)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("size", [3, 5, 7])
@pytest.mark.parametrize("across", [True, False], ids=["across", "same"])
@pytest.mark.parametrize("pair", FORMAT_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_lrn_matches_the_reference(vx, ctx, pair, across, size, form):
    fin, fout = pair
    rng = np.random.default_rng([23, FORMAT_PAIRS.index(pair), across, size, FORMS.index(form)])
    shape = random_shape(rng, ndim=int(rng.integers(3, 7)), max_size=300)
    x = random_values(rng, fin, shape)
    alpha, beta, bias = _f32(rng.uniform(1e-4, 2.0)), _f32(rng.uniform(0.5, 1.0)), _f32(rng.uniform(0.5, 3))
    kind = vx.VX_NN_NORMALIZATION_ACROSS_MAPS if across else vx.VX_NN_NORMALIZATION_SAME_MAP
    tx, out = tensor(vx, ctx, x, _fpp(fin)), empty(vx, ctx, shape, fout.dtype, _fpp(fout))
    run_layer(vx, ctx, form, vx.VX_KERNEL_LOCAL_RESPONSE_NORMALIZATION_LAYER,
              lambda g: vx.vxLocalResponseNormalizationLayer(g, tx, kind, size, alpha, beta, bias, out),
              [tx, ("enum", kind), ("size", size), ("float32", alpha), ("float32", beta), ("float32", bias), out])
    expected = reference_lrn(x, across, size, alpha, beta, bias, fin, fout)
    assert_bits_equal(read(vx, out, shape, fout.dtype), expected)
    release(vx, tx, out)
