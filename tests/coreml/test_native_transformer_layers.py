"""The layers a converted Transformer is made of run from C (native entries, ``core/native_plan.py``): batched
matrix products (on the float engine's GEMM), broadcast arithmetic (``combine``, on ``float_elementwise``'s loop)
and mean-variance and layer normalization (``moments``' rows). Each graph runs its native plan with the bytes of
its Python path and the numbers of plain NumPy references, over random shapes, broadcasts and transpositions."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import builder, load

EPS32 = 2.0 ** -23


def _runs(tmp_path, b, feeds, native: bool):
    """The output of two runs (the first binds the graph), the native run count and the node kinds."""
    with load(tmp_path, b, "native" if native else "python", nhwc=False) as model:
        model.graph.native_allowed = native
        for _ in range(2):
            out = model.predict(feeds)["y"]
        kinds = {node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes}
        return np.array(out), model.graph.native_runs, kinds


def _native_and_python(tmp_path, b, feeds, kind):
    got, runs, kinds = _runs(tmp_path, b, feeds, True)
    plain, plain_runs, _ = _runs(tmp_path, b, feeds, False)
    assert kind in kinds, kinds
    assert runs > 0, "the graph did not run from C"
    assert plain_runs == 0
    assert got.tobytes() == plain.tobytes(), "the native entry and the Python path differ"
    return got


def _product_reference(a, b):
    """C[..., i, j] = sum_k A[..., i, k] B[..., k, j] in float64, batch axes broadcast by hand (numpy's rule)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    out = np.zeros(batch + (m, n))
    size = np.abs(out.copy())
    for index in np.ndindex(*batch):
        ia = tuple(i if d > 1 else 0 for i, d in zip(index[len(batch) - (a.ndim - 2):], a.shape[:-2]))
        ib = tuple(i if d > 1 else 0 for i, d in zip(index[len(batch) - (b.ndim - 2):], b.shape[:-2]))
        for i in range(m):
            for j in range(n):
                s = t = 0.0
                for kk in range(k):
                    p = float(a[ia + (i, kk)]) * float(b[ib + (kk, j)])
                    s, t = s + p, t + abs(p)
                out[index + (i, j)], size[index + (i, j)] = s, t
    return out, size


@pytest.mark.parametrize("seed", range(8))
def test_a_batched_product_of_two_inputs_runs_from_c_as_sums_of_products(tmp_path, seed):
    rng = np.random.default_rng(seed)
    m, k, n = (int(v) for v in rng.integers(1, 40, 3))
    rank = int(rng.integers(0, 4))
    batch = tuple(int(v) for v in rng.integers(1, 4, rank))
    ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
    batch_a = tuple(d if rng.integers(2) else 1 for d in batch)  # some axes broadcast
    batch_b = batch[int(rng.integers(0, rank + 1)):]  # a shorter rank broadcasts too
    a = rng.standard_normal(batch_a + ((k, m) if ta else (m, k))).astype(np.float32)
    b = rng.standard_normal(batch_b + ((n, k) if tb else (k, n))).astype(np.float32)
    nb = builder({"a": a.shape, "b": b.shape}, ["y"], exact=True)
    nb.add_batched_mat_mul("mm", ["a", "b"], "y", transpose_a=ta, transpose_b=tb)
    got = _native_and_python(tmp_path, nb, {"a": a, "b": b}, "batched_matmul")
    want, size = _product_reference(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
    got = got.reshape(want.shape)
    assert np.all(np.abs(got - want) <= 2 * k * EPS32 * size + 1e-30), np.abs(got - want).max()


@pytest.mark.parametrize("seed", range(4))
def test_a_batched_product_by_weights_with_a_bias_runs_from_c(tmp_path, seed):
    rng = np.random.default_rng(50 + seed)
    m, k, n = (int(v) for v in rng.integers(1, 70, 3))
    lead = tuple(int(v) for v in rng.integers(1, 4, int(rng.integers(0, 3))))
    x = rng.standard_normal(lead + (m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    nb = builder({"x": x.shape}, ["y"], exact=True)
    nb.add_batched_mat_mul("mm", ["x"], "y", weight_matrix_rows=k, weight_matrix_columns=n, W=w, bias=bias)
    got = _native_and_python(tmp_path, nb, {"x": x}, "batched_matmul")
    want, size = _product_reference(x, w)
    want = want + bias.astype(np.float64)
    got = got.reshape(want.shape)
    assert np.all(np.abs(got - want) <= 2 * (k + 1) * EPS32 * (size + np.abs(bias)) + 1e-30)


@pytest.mark.parametrize("transpose_b", [True, False], ids=["scores", "values"])
def test_attention_sized_products_shared_with_the_helpers_match_the_python_path_and_the_sums(tmp_path, transpose_b):
    """Four heads of 128 x 64 by 64 x 128 (``q @ k^T``) and 128 x 128 by 128 x 64 (``weights @ v``): large enough
    that the native entry shares the heads with the gang's helpers."""
    rng = np.random.default_rng(60 + transpose_b)
    m, k, n = (128, 64, 128) if transpose_b else (128, 128, 64)
    a = rng.standard_normal((1, 4, m, k)).astype(np.float32)
    b = rng.standard_normal((1, 4) + ((n, k) if transpose_b else (k, n))).astype(np.float32)
    nb = builder({"a": a.shape, "b": b.shape}, ["y"], exact=True)
    nb.add_batched_mat_mul("mm", ["a", "b"], "y", transpose_a=False, transpose_b=transpose_b)
    got = _native_and_python(tmp_path, nb, {"a": a, "b": b}, "batched_matmul")
    bb = np.swapaxes(b, -1, -2) if transpose_b else b
    want = np.einsum("...ik,...kj->...ij", a.astype(np.float64), bb.astype(np.float64))
    size = np.einsum("...ik,...kj->...ij", np.abs(a.astype(np.float64)), np.abs(bb.astype(np.float64)))
    got = got.reshape(want.shape)
    assert np.all(np.abs(got - want) <= 2 * k * EPS32 * size + 1e-30), np.abs(got - want).max()


OPERATIONS = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y, "multiply": lambda x, y: x * y,
              "divide": lambda x, y: x / y, "max": lambda x, y: x if (x >= y or np.isnan(x)) else y,
              "min": lambda x, y: x if (x <= y or np.isnan(x)) else y}


@pytest.mark.parametrize("seed", range(12))
def test_broadcast_arithmetic_runs_from_c_with_the_bits_of_float64_rounded_once(tmp_path, seed):
    rng = np.random.default_rng(200 + seed)
    operation = list(OPERATIONS)[seed % len(OPERATIONS)]
    rank = int(rng.integers(1, 5))
    shape = tuple(int(v) for v in rng.integers(2, 7, rank))
    # the first operand broadcasts (an add or multiply of equal shapes is the standard layers' tensor_add/multiply)
    shape_a = tuple(1 if i == 0 or rng.integers(2) else d for i, d in enumerate(shape))[int(rng.integers(0, rank)):]
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    a.flat[0], b.flat[-1] = np.inf, 0.0  # an infinity, a zero divisor
    nb = builder({"a": a.shape, "b": b.shape}, ["y"], exact=True)
    getattr(nb, f"add_{operation}_broadcastable")("op", ["a", "b"], "y")
    got = _native_and_python(tmp_path, nb, {"a": a, "b": b}, "combine").reshape(shape)
    want = np.empty(shape, np.float32)
    wide = a.reshape((1,) * (rank - a.ndim) + a.shape)
    with np.errstate(all="ignore"):
        for index in np.ndindex(*shape):
            other = tuple(i if d > 1 else 0 for i, d in zip(index, wide.shape))
            want[index] = np.float32(OPERATIONS[operation](np.float64(wide[other]), np.float64(b[index])))
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(6))
def test_arithmetic_with_a_constant_runs_from_c_and_reads_each_run_s_input(tmp_path, seed):
    """One input and ``alpha`` (a loop counter's ``+ 1``): the constant broadcast over every shape, all-ones
    shapes included, and a second run with new values computes from them (the entry keeps views, not copies)."""
    rng = np.random.default_rng(250 + seed)
    shape = tuple(int(v) for v in rng.integers(1, 4 if seed % 2 else 2, int(rng.integers(1, 4))))
    mode, alpha = ("ADD", 1.5) if seed % 3 else ("MULTIPLY", -0.75)
    nb = builder({"x": shape}, ["y"], exact=True)
    nb.add_elementwise("op", ["x"], "y", mode, alpha=alpha)
    with load(tmp_path, nb, "constant", nhwc=False) as model:
        for run in range(3):
            x = rng.standard_normal(shape).astype(np.float32)
            got = np.array(model.predict({"x": x})["y"]).reshape(shape)
            want = np.empty(shape, np.float32)
            for index in np.ndindex(*shape):
                v = np.float64(x[index])
                want[index] = np.float32(v + alpha if mode == "ADD" else v * alpha)
            assert got.tobytes() == want.tobytes(), run
        kinds = {node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes}
        assert "combine" in kinds, kinds
        assert model.graph.native_runs > 0, "the graph did not run from C"


def _normalized(x, axes, variance, eps, gamma=None, beta=None):
    """Per index of the other axes: the values over ``axes`` minus their mean, over sqrt(mean square + eps)."""
    out = np.empty(x.shape)
    others = [i for i in range(x.ndim) if i not in axes]
    for index in np.ndindex(*[x.shape[i] for i in others]):
        where = [slice(None)] * x.ndim
        for i, v in zip(others, index):
            where[i] = v
        values = x[tuple(where)].astype(np.float64)
        y = values - sum(values.reshape(-1).tolist()) / values.size
        if variance:
            y = y / np.sqrt(sum((y * y).reshape(-1).tolist()) / values.size + eps)
        out[tuple(where)] = y
    if gamma is not None:
        out = out * gamma + beta
    return out


@pytest.mark.parametrize("seed", range(6))
def test_mean_variance_normalization_runs_from_c(tmp_path, seed):
    rng = np.random.default_rng(300 + seed)
    shape = tuple(int(v) for v in rng.integers(1, 9, 3))
    across, variance = bool(seed % 2), seed % 3 != 0
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    nb = builder({"x": shape}, ["y"], exact=True)
    nb.add_mvn("mvn", "x", "y", across_channels=across, normalize_variance=variance, epsilon=1e-5)
    got = _native_and_python(tmp_path, nb, {"x": x}, "normalize").reshape(shape)
    want = _normalized(x, (0, 1, 2) if across else (1, 2), variance, 1e-5)
    np.testing.assert_allclose(got, want, rtol=4 * EPS32, atol=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_layer_normalization_runs_from_c(tmp_path, seed):
    rng = np.random.default_rng(400 + seed)
    rank = int(rng.integers(2, 5))
    shape = tuple(int(v) for v in rng.integers(1, 9, rank))
    last = int(rng.integers(1, min(rank, 3) + 1))
    normalized = shape[rank - last:]
    x = (rng.standard_normal(shape) * 2 - 1).astype(np.float32)
    gamma = rng.standard_normal(normalized).astype(np.float32)
    beta = rng.standard_normal(normalized).astype(np.float32)
    nb = builder({"x": shape}, ["y"], exact=True)
    nb.add_layer_normalization("ln", "x", "y", list(normalized), gamma, beta, eps=1e-5)
    got = _native_and_python(tmp_path, nb, {"x": x}, "normalize").reshape(shape)
    want = _normalized(x, tuple(range(rank - last, rank)), True, 1e-5, gamma.astype(np.float64),
                       beta.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=8 * EPS32, atol=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_an_mvn_and_the_scale_reading_it_run_as_one_normalize_pass(tmp_path, seed):
    """coremltools' layer normalization (``mvn`` then ``scale``): one normalize node, with the numbers of the
    normalization followed by ``x * scale + bias`` (scales of one value, per channel or per position)."""
    rng = np.random.default_rng(500 + seed)
    shape = tuple(int(v) for v in rng.integers(1, 9, 3))
    c, h, w = shape
    scale_shape = [(1,), (c,), (1, 1, w), (c, h, w), (1, h, w), (1, 1, w)][seed]
    across, variance, has_bias = bool(seed % 2), seed % 3 != 0, seed != 4
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    gamma = rng.standard_normal(scale_shape).astype(np.float32)
    beta = rng.standard_normal(scale_shape).astype(np.float32) if has_bias else None
    nb = builder({"x": shape}, ["y"], exact=True)
    nb.add_mvn("mvn", "x", "m", across_channels=across, normalize_variance=variance, epsilon=1e-5)
    nb.add_scale("scale", gamma, beta, has_bias, "m", "y", shape_scale=list(scale_shape),
                 shape_bias=list(scale_shape) if has_bias else None)
    got, _, kinds = _runs(tmp_path, nb, {"x": x}, True)  # from C where gamma's rows merge (moments' native entry)
    plain, _, _ = _runs(tmp_path, nb, {"x": x}, False)
    assert got.tobytes() == plain.tobytes()
    assert kinds == {"normalize"}, kinds  # no multiply or add node left
    per = gamma.reshape(c, 1, 1) if scale_shape == (c,) else gamma
    shift = 0.0 if beta is None else (beta.reshape(c, 1, 1) if scale_shape == (c,) else beta)
    want = _normalized(x, (0, 1, 2) if across else (1, 2), variance, 1e-5) * per.astype(np.float64) + shift
    np.testing.assert_allclose(got.reshape(shape), want, rtol=8 * EPS32, atol=1e-6)


def test_an_mvn_read_by_more_than_the_scale_is_not_folded(tmp_path):
    rng = np.random.default_rng(510)
    x = rng.standard_normal((3, 2, 5)).astype(np.float32)
    gamma, beta = rng.standard_normal(5).reshape(1, 1, 5).astype(np.float32), np.zeros((1, 1, 5), np.float32)
    nb = builder({"x": x.shape}, ["y", "m"], exact=True)
    nb.add_mvn("mvn", "x", "m", across_channels=False, normalize_variance=True, epsilon=1e-5)
    nb.add_scale("scale", gamma, beta, True, "m", "y", shape_scale=[1, 1, 5], shape_bias=[1, 1, 5])
    with load(tmp_path, nb, "python", nhwc=False) as model:
        outs = model.predict({"x": x})
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes]
    assert "normalize" in kinds and len(kinds) > 1, kinds
    m = _normalized(x, (1, 2), True, 1e-5)
    np.testing.assert_allclose(np.asarray(outs["m"]).reshape(x.shape), m, rtol=8 * EPS32, atol=1e-6)
    np.testing.assert_allclose(np.asarray(outs["y"]).reshape(x.shape), m * gamma, rtol=8 * EPS32, atol=1e-6)
