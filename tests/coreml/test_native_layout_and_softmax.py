"""CoreML's permute (transpose), strided slice and softmax run from C (native entries, ``core/native_plan.py``):
a graph of only such layers runs its native plan, with the same bytes as its Python path and the numbers of plain
NumPy references, over random shapes, axes, steps and values."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import builder, load


def _runs(tmp_path, b, x, native: bool):
    """The output of two runs (the first binds the graph), the graph's native run count and its node kinds."""
    with load(tmp_path, b, "native" if native else "python", nhwc=False) as model:
        model.graph.native_allowed = native
        for _ in range(2):
            out = model.predict({"x": x})["y"]
        kinds = {node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes}
        return np.array(out), model.graph.native_runs, kinds


def _check(tmp_path, b, x, want, kind):
    got, runs, kinds = _runs(tmp_path, b, x, True)
    plain, plain_runs, _ = _runs(tmp_path, b, x, False)
    assert kind in kinds, kinds
    assert runs > 0, "the graph did not run from C"
    assert plain_runs == 0
    assert got.tobytes() == plain.tobytes(), "the native entry and the Python path differ"
    return got, want


def _shape(rng, rank):
    return tuple(int(n) for n in rng.integers(1, 7, rank))


@pytest.mark.parametrize("seed", range(4))
def test_a_transpose_runs_from_c_as_numpy_transposes(tmp_path, seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(2, 6))
    x = rng.standard_normal(_shape(rng, rank)).astype(np.float32)
    axes = [int(a) for a in rng.permutation(rank)]
    b = builder({"x": x.shape}, ["y"], exact=True)
    b.add_transpose("y", axes, "x", "y")
    got, _ = _check(tmp_path, b, x, None, "permute")
    want = np.empty(tuple(x.shape[a] for a in axes), np.float32)
    for index in np.ndindex(*want.shape):  # out[i0, i1, ..] = x at index i_k on axis axes[k]
        source = [0] * rank
        for k, a in enumerate(axes):
            source[a] = index[k]
        want[index] = x[tuple(source)]
    assert got.reshape(want.shape).tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_a_strided_slice_runs_from_c_as_numpy_indexing(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    rank = int(rng.integers(2, 5))
    shape = tuple(int(n) for n in rng.integers(2, 9, rank))
    x = rng.standard_normal(shape).astype(np.float32)
    begin = [int(rng.integers(0, n)) for n in shape]
    end = [int(rng.integers(b + 1, n + 1)) for b, n in zip(begin, shape)]
    strides = [int(rng.integers(1, 4)) for _ in shape]
    b = builder({"x": x.shape}, ["y"], exact=True)
    b.add_slice_static("y", "x", "y", begin, end, strides, [False] * rank, [False] * rank)
    got, _ = _check(tmp_path, b, x, None, "slice")
    sizes = [len(range(s, e, t)) for s, e, t in zip(begin, end, strides)]
    want = np.empty(sizes, np.float32)
    for index in np.ndindex(*sizes):
        want[index] = x[tuple(s + i * t for s, i, t in zip(begin, index, strides))]
    assert got.reshape(want.shape).tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_a_softmax_runs_from_c_with_the_numbers_of_numpy(tmp_path, seed):
    rng = np.random.default_rng(200 + seed)
    rank = int(rng.integers(2, 6))
    x = (rng.standard_normal(_shape(rng, rank)) * 8).astype(np.float32)
    # not CoreML's channel axis (-3), which the lowering gives the standard softmax layer
    axis = int(rng.choice([a for a in range(-rank, rank) if a not in (-3, rank - 3)]))
    b = builder({"x": x.shape}, ["y"], exact=True)
    b.add_softmax_nd("y", "x", "y", axis)
    got, _ = _check(tmp_path, b, x, None, "softmax")
    v = np.moveaxis(x.astype(np.float64), axis, -1)
    want = np.empty_like(v)
    for row in np.ndindex(*v.shape[:-1]):  # exp(v - max) / its sum, row by row
        e = np.exp(v[row] - v[row].max())
        want[row] = e / e.sum()
    want = np.moveaxis(want, -1, axis)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-6, atol=1e-7)
