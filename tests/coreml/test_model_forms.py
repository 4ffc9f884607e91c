"""The seed's forms a converter meets, each against a plain reference: innerProduct of every rank 1 to 5 (the
seed's matrix reading of each rank), batchedMatmul with NumPy broadcasting of the batch axes (either side, a
rank-1 operand), and models with several inputs and outputs of mixed ranks."""
from __future__ import annotations

import math

import numpy as np
import pytest

from .harness import close, run

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7), (4, 2, 3, 5), (2, 3, 2, 3, 4)])
def test_inner_product_of_every_rank(tmp_path, shape):
    """rank 1 (C_in); 2 (x1, C_in); 3 (x1 * x2, C_in); 4 (x1, x2 * x3 * x4); 5 (x1 * x2, x3 * x4 * x5); the output
    (C_out), (x1, C_out), (x1, x2, C_out), (x1, C_out, 1, 1), (x1, x2, C_out, 1, 1)."""
    rank = len(shape)
    c_in = shape[-1] if rank <= 3 else math.prod(shape[-3:])
    c_out = 6
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal((c_out, c_in)).astype(np.float32)
    bias = RNG.standard_normal(c_out).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_inner_product("fc", w, bias, c_in, c_out, True, "x", "y"),
                 exact=True)
    rows = x.reshape(-1, c_in).astype(np.float64)
    product = np.array([[sum(row[i] * float(w[o, i]) for i in range(c_in)) + float(bias[o]) for o in range(c_out)]
                        for row in rows])
    expected_shape = (c_out,) if rank == 1 else shape[:(rank - 1) if rank <= 3 else rank - 3] + (c_out,) + \
        (1, 1) * (rank > 3)
    close(out["y"], product.reshape(expected_shape))


@pytest.mark.parametrize("a_shape,b_shape", [((3, 1, 2, 4), (5, 4, 6)), ((2, 4), (3, 2, 4, 5)), ((4,), (2, 4, 3)),
                                             ((2, 3, 4), (4,)), ((1, 2, 3), (4, 1, 3, 2)), ((5,), (5,))])
def test_batched_matmul_broadcasts_the_batch_axes(tmp_path, a_shape, b_shape):
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    out, _ = run(tmp_path, {"a": a, "b": b}, ["y"], lambda bb: bb.add_batched_mat_mul("mm", ["a", "b"], "y"),
                 exact=True)
    # the seed: a rank-1 a is (1, D), a rank-1 b is (D, 1), kept in the output (its rank is max(2, rank a, rank b));
    # the batch axes broadcast by the usual rules
    a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
    b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    aa = np.broadcast_to(a2, batch + a2.shape[-2:]).astype(np.float64)
    bb = np.broadcast_to(b2, batch + b2.shape[-2:]).astype(np.float64)
    y = np.zeros(batch + (aa.shape[-2], bb.shape[-1]))
    for index in np.ndindex(*batch):
        for i in range(aa.shape[-2]):
            for j in range(bb.shape[-1]):
                y[index + (i, j)] = sum(aa[index + (i, k)] * bb[index + (k, j)] for k in range(aa.shape[-1]))
    close(out["y"], y)


def test_several_inputs_and_outputs_of_mixed_ranks(tmp_path):
    v = RNG.standard_normal((5,)).astype(np.float32)
    m = RNG.standard_normal((4, 5)).astype(np.float32)
    t = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

    def add(b):
        b.add_add_broadcastable("s", ["m", "v"], "s")  # rank 2 from ranks 2 and 1
        b.add_multiply_broadcastable("p", ["t", "s"], "p")  # rank 4 from ranks 4 and 2
        b.add_reduce_sum("r", "p", "r", axes=[1, 2], keepdims=False)  # rank 2
        b.add_activation("e", "RELU", "v", "e")  # rank 1
    out, _ = run(tmp_path, {"v": v, "m": m, "t": t}, ["p", "r", "e"], add, exact=True)
    p = np.empty(t.shape)
    for i, j, k, q in np.ndindex(*t.shape):
        p[i, j, k, q] = float(t[i, j, k, q]) * (float(m[k, q]) + float(v[q]))
    close(out["p"], p)
    close(out["r"], p.sum(axis=(1, 2)))
    close(out["e"], np.maximum(v, 0))


def test_batched_matmul_of_a_vector_and_weights(tmp_path):
    a = RNG.standard_normal((4,)).astype(np.float32)
    w, bias = RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    out, _ = run(tmp_path, {"a": a}, ["y"], lambda bb: bb.add_batched_mat_mul(
        "mm", ["a"], "y", weight_matrix_rows=4, weight_matrix_columns=3, W=w, bias=bias), exact=True)
    close(out["y"], [sum(float(a[k]) * float(w[k, j]) for k in range(4)) + float(bias[j]) for j in range(3)])
