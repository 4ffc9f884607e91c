"""The later spec's rank-N layers a converter emits for a plain CNN / MLP, on models
with exact (rank-N) input shapes: *Broadcastable arithmetic, ConcatND, SoftmaxND,
Transpose, ReshapeStatic, Squeeze, ExpandDims, FlattenTo2D, BatchedMatMul, Gelu,
LayerNormalization, the Reduce* family and the element-wise unary layers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from . import references as ref
from .harness import close, run

BROADCAST = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
             "max": np.maximum, "min": np.minimum, "pow": np.power,
             "floor_div": lambda a, b: np.floor(a / b), "mod": lambda a, b: a - np.floor(a / b) * b}


@pytest.mark.parametrize("op", sorted(BROADCAST))
def test_broadcastable_arithmetic(tmp_path, rng, op):
    a = rng.uniform(0.5, 2.0, (2, 3, 4)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (3, 1)).astype(np.float32)
    out, _ = run(tmp_path, {"a": a, "b": b}, ["y"],
                 lambda bb: getattr(bb, f"add_{op}_broadcastable")("op", ["a", "b"], "y"), exact=True)
    close(out["y"], BROADCAST[op](a.astype(np.float64), b.astype(np.float64)))


def test_concat_nd_along_a_negative_axis(tmp_path, rng):
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((2, 5, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"a": a, "b": b}, ["y"], lambda bb: bb.add_concat_nd("c", ["a", "b"], "y", -2), exact=True)
    close(out["y"], np.concatenate([a, b], axis=1))


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_softmax_nd(tmp_path, rng, axis):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_softmax_nd("s", "x", "y", axis), exact=True)
    close(out["y"], ref.softmax(x.astype(np.float64), axis))


def test_transpose(tmp_path, rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_transpose("t", [2, 0, 3, 1], "x", "y"), exact=True)
    close(out["y"], np.transpose(x, (2, 0, 3, 1)))


def test_reshape_squeeze_expand_flatten(tmp_path, rng):
    x = rng.standard_normal((2, 1, 6)).astype(np.float32)

    def add(b):
        b.add_reshape_static("r", "x", "r", [3, -1, 2])
        b.add_squeeze("s", "x", "s", axes=[1])
        b.add_expand_dims("e", "x", "e", axes=[0, -1])
        b.add_flatten_to_2d("f", "x", "f", axis=2)

    out, _ = run(tmp_path, {"x": x}, ["r", "s", "e", "f"], add, exact=True)
    close(out["r"], x.reshape(3, 2, 2))
    close(out["s"], x.reshape(2, 6))
    close(out["e"], x.reshape(1, 2, 1, 6, 1))
    close(out["f"], x.reshape(2, 6))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_batched_matmul_of_two_inputs(tmp_path, rng, ta, tb):
    a = rng.standard_normal((2, 4, 3) if ta else (2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4) if tb else (4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"a": a, "b": b}, ["y"],
                 lambda bb: bb.add_batched_mat_mul("mm", ["a", "b"], "y", ta, tb), exact=True)
    ma = np.swapaxes(a, -1, -2) if ta else a
    mb = b.T if tb else b
    close(out["y"], ma.astype(np.float64) @ mb.astype(np.float64))


def test_batched_matmul_with_weights_and_bias(tmp_path, rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w, bias = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    out, _ = run(tmp_path, {"a": a}, ["y"], lambda bb: bb.add_batched_mat_mul(
        "mm", ["a"], "y", weight_matrix_rows=4, weight_matrix_columns=6, W=w, bias=bias), exact=True)
    close(out["y"], a.astype(np.float64) @ w + bias)


@pytest.mark.parametrize("mode", ["EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"])
def test_gelu(tmp_path, rng, mode):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_gelu("g", "x", "y", mode), exact=True)
    v = x.astype(np.float64)
    want = {"EXACT": 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))),
            "TANH_APPROXIMATION": 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))),
            "SIGMOID_APPROXIMATION": v * ref.sigmoid(1.702 * v)}[mode]
    close(out["y"], want)


def test_layer_normalization(tmp_path, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    gamma, beta = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_layer_normalization("ln", "x", "y", [3, 4], gamma, beta,
                                                                                 1e-5), exact=True)
    v = x.astype(np.float64)
    mean = v.mean(axis=(1, 2), keepdims=True)
    var = v.var(axis=(1, 2), keepdims=True)
    close(out["y"], gamma * (v - mean) / np.sqrt(var + 1e-5) + beta)


REDUCE_ND = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
             "l1": lambda v, axis, keepdims: np.sum(np.abs(v), axis=axis, keepdims=keepdims),
             "l2": lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims)),
             "sumsquare": lambda v, axis, keepdims: np.sum(v * v, axis=axis, keepdims=keepdims),
             "logsum": lambda v, axis, keepdims: np.log(np.sum(v, axis=axis, keepdims=keepdims)),
             "logsumexp": lambda v, axis, keepdims: np.log(np.sum(np.exp(v), axis=axis, keepdims=keepdims))}


@pytest.mark.parametrize("op", sorted(REDUCE_ND))
def test_reduce_family(tmp_path, rng, op):
    x = rng.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    keep = op in ("sum", "max", "l2", "logsum")
    axes = [0, 2] if keep else [-2]
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: getattr(b, f"add_reduce_{op}")("r", "x", "y", axes=axes,
                                                                                     keepdims=keep), exact=True)
    close(out["y"], REDUCE_ND[op](x.astype(np.float64), axis=tuple(axes), keepdims=keep))


UNARY_ND = {"ceil": np.ceil, "floor": np.floor, "sign": np.sign, "round": np.round, "exp2": np.exp2, "sin": np.sin,
            "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
            "erf": np.vectorize(math.erf)}


@pytest.mark.parametrize("op", sorted(UNARY_ND))
def test_unary_nd_layers(tmp_path, rng, op):
    x = rng.uniform(-1.2, 1.2, (3, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: getattr(b, f"add_{op}")("u", "x", "y"), exact=True)
    close(out["y"], UNARY_ND[op](x.astype(np.float64)))


def test_clip_and_clamped_relu(tmp_path, rng):
    x = rng.standard_normal((4, 5)).astype(np.float32) * 2

    def add(b):
        b.add_clip("c", "x", "c", -0.5, 0.7)
        b.add_clamped_relu("r", "x", "r", alpha=0.1, beta=1.5)

    out, _ = run(tmp_path, {"x": x}, ["c", "r"], add, exact=True)
    v = x.astype(np.float64)
    close(out["c"], np.clip(v, -0.5, 0.7))
    close(out["r"], np.where(v >= 0, np.minimum(1.5, v), np.minimum(1.5, 0.1 * v)))


def test_a_converter_style_rank_n_mlp(tmp_path, rng):
    """BatchedMatMul + bias, Gelu, LayerNorm, another BatchedMatMul, SoftmaxND: a small MLP head."""
    x = rng.standard_normal((2, 5)).astype(np.float32)
    w1, b1 = rng.standard_normal((5, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((8, 3)).astype(np.float32)
    gamma, beta = np.ones(8, np.float32), np.zeros(8, np.float32)

    def add(b):
        b.add_batched_mat_mul("fc1", ["x"], "h", weight_matrix_rows=5, weight_matrix_columns=8, W=w1, bias=b1)
        b.add_gelu("act", "h", "g")
        b.add_layer_normalization("ln", "g", "n", [8], gamma, beta, 1e-5)
        b.add_batched_mat_mul("fc2", ["n"], "logits", weight_matrix_rows=8, weight_matrix_columns=3, W=w2)
        b.add_softmax_nd("sm", "logits", "y", -1)

    out, _ = run(tmp_path, {"x": x}, ["y"], add, exact=True)
    h = x.astype(np.float64) @ w1 + b1
    g = 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    n = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    close(out["y"], ref.softmax(n @ w2, -1))


@pytest.mark.parametrize("shape", [(16, 1, 64), (3, 5, 8), (8,), (4, 8)])
def test_inner_product_of_rank_1_to_3_multiplies_the_last_axis(tmp_path, rng, shape):
    # The seed: rank 1 is a vector, rank 2 (x1, x2) a matrix, rank 3 (x1, x2, x3) the matrix (x1 * x2, x3); the
    # output keeps the rank with C_out last (every nn.Linear of a Transformer encoder).
    c_in, c_out = shape[-1], 6
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((c_out, c_in)).astype(np.float32)
    bias = rng.standard_normal(c_out).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_inner_product("fc", w, bias, c_in, c_out, True, "x", "y"),
                 exact=True)
    want = x.astype(np.float64) @ w.T.astype(np.float64) + bias
    close(out["y"], want)


@pytest.mark.parametrize("axis, count", [(1, 2), (-1, 3), (0, 2)])
def test_interleaved_concat_nd_alternates_the_inputs_rows(tmp_path, rng, axis, count):
    # interleave: along the axis the output takes row 0 of every input in turn, then row 1, ... (ShuffleNet's
    # channel shuffle: two branches of C channels become 2C channels, alternating)
    names = [f"x{k}" for k in range(count)]
    xs = {n: rng.standard_normal((2, 3, 4)).astype(np.float32) for n in names}
    out, _ = run(tmp_path, xs, ["y"], lambda b: b.add_concat_nd("c", names, "y", axis, interleave=True), exact=True)
    stacked = np.stack([xs[n] for n in names], axis=(axis % 3) + 1)
    shape = list(xs[names[0]].shape)
    shape[axis % 3] *= count
    close(out["y"], stacked.reshape(shape))
    rows = np.moveaxis(out["y"], axis % 3, 0)
    for k, n in enumerate(names):  # plainly: row i of input k is row i * count + k
        np.testing.assert_array_equal(rows[k::count], np.moveaxis(xs[n], axis % 3, 0))


def test_interleaved_inputs_of_different_shapes_are_refused(tmp_path, rng):
    from openvx_nn.coreml import CoreMLError
    xs = {"a": rng.standard_normal((2, 3)).astype(np.float32), "b": rng.standard_normal((2, 4)).astype(np.float32)}
    with pytest.raises(CoreMLError, match="one shape"):
        run(tmp_path, xs, ["y"], lambda b: b.add_concat_nd("c", ["a", "b"], "y", -1, interleave=True), exact=True)
