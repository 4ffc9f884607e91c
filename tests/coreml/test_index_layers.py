"""The later spec's index layers (gather and scatter families with every scatter mode, TopK, ArgSort, CumSum,
OneHot, SliceBySize, ReverseSeq, SlidingWindows, MatrixBandPart, Lower/UpperTriangular, WhereBroadcastable,
RangeStatic) against plain-loop references written from the seed's text, over random shapes and axes (negative
too); the refusals and run-time failures are in test_index_layer_edges.py."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from .harness import builder, close, load, run


def _wrap(i, n):
    i = int(i)
    assert -n <= i < n
    return i + n if i < 0 else i


def _indices(rng, n, shape):
    """Random integer indices of an axis of ``n``, some negative (the spec allows them), as float32."""
    idx = rng.integers(0, n, shape)
    flip = rng.random(shape) < 0.3
    return np.where(flip, idx - n, idx).astype(np.float32)


def _shape(rng, rank, low=1, high=4):
    return tuple(int(d) for d in rng.integers(low, high + 1, rank))


# -- references, from the seed's text --------------------------------------------------------------
def ref_gather(data, idx, axis):
    """output[a.., i.., b..] = data[a.., idx[i..], b..]"""
    out = np.empty(data.shape[:axis] + idx.shape + data.shape[axis + 1:])
    for pos in np.ndindex(out.shape):
        a, i, b = pos[:axis], pos[axis:axis + idx.ndim], pos[axis + idx.ndim:]
        out[pos] = data[a + (_wrap(idx[i], data.shape[axis]),) + b]
    return out


def ref_gather_nd(data, idx):
    """output[i..j, :] = params[indices[i..j, :], :]"""
    k = idx.shape[-1]
    out = np.empty(idx.shape[:-1] + data.shape[k:])
    for pos in np.ndindex(idx.shape[:-1]):
        point = tuple(_wrap(idx[pos + (c,)], data.shape[c]) for c in range(k))
        out[pos] = data[point]
    return out


def ref_gather_along(data, idx, axis):
    out = np.empty(idx.shape)
    for pos in np.ndindex(idx.shape):
        src = list(pos)
        src[axis] = _wrap(idx[pos], data.shape[axis])
        out[pos] = data[tuple(src)]
    return out


def _combine(mode, old, new):
    return {"UPDATE": lambda: new, "ADD": lambda: old + new, "SUB": lambda: old - new, "MUL": lambda: old * new,
            "DIV": lambda: old / new, "MAX": lambda: max(old, new), "MIN": lambda: min(old, new)}[mode]()


def ref_scatter(container, idx, updates, mode, target):
    """``target(pos)`` is the container element update ``pos`` lands on; updates in row-major order."""
    out = np.array(container, np.float64)
    for pos in np.ndindex(updates.shape):
        t = target(pos)
        out[t] = _combine(mode, out[t], float(updates[pos]))
    return out


def ref_sort(x, axis, k, descending):
    moved = np.moveaxis(x, axis, -1)
    vals = np.empty(moved.shape[:-1] + (k,))
    idxs = np.empty_like(vals)
    for pos in np.ndindex(moved.shape[:-1]):
        line = [float(v) for v in moved[pos]]
        ranked = sorted(range(len(line)), key=lambda i: ((-line[i] if descending else line[i]), i))[:k]
        vals[pos] = [line[i] for i in ranked]
        idxs[pos] = ranked
    return np.moveaxis(vals, -1, axis), np.moveaxis(idxs, -1, axis)


# -- gather ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trial", range(4))
def test_gather_along_any_axis_with_negative_indices(tmp_path, rng, trial):
    data = rng.standard_normal(_shape(rng, int(rng.integers(1, 4)))).astype(np.float32)
    axis = int(rng.integers(-data.ndim, data.ndim))
    idx = _indices(rng, data.shape[axis], _shape(rng, int(rng.integers(1, 3))))
    out, _ = run(tmp_path, {"d": data, "i": idx}, ["y"], lambda b: b.add_gather("g", ["d", "i"], "y", axis),
                 exact=True)
    close(out["y"], ref_gather(data, idx, axis % data.ndim))


def test_gather_seed_example_shapes(tmp_path, rng):
    data = rng.standard_normal((2, 3, 5)).astype(np.float32)
    idx = _indices(rng, 3, (6, 8))
    out, _ = run(tmp_path, {"d": data, "i": idx}, ["y"], lambda b: b.add_gather("g", ["d", "i"], "y", 1), exact=True)
    assert out["y"].shape == (2, 6, 8, 5)
    close(out["y"], ref_gather(data, idx, 1))


@pytest.mark.parametrize("data_shape,idx_shape", [((4, 2, 3, 4), (6, 2)), ((3, 3, 3, 4, 2), (3, 5)),
                                                  ((5, 3, 2, 5), (2, 7, 3, 2)), ((4, 3), (5, 1))])
def test_gather_nd_seed_examples(tmp_path, rng, data_shape, idx_shape):
    data = rng.standard_normal(data_shape).astype(np.float32)
    idx = np.stack([_indices(rng, data_shape[c], idx_shape[:-1]) for c in range(idx_shape[-1])], -1)
    out, _ = run(tmp_path, {"d": data, "i": idx}, ["y"], lambda b: b.add_gather_nd("g", ["d", "i"], "y"), exact=True)
    expected = ref_gather_nd(data, idx)
    close(out["y"], expected.reshape(expected.shape or (1,)))


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_gather_along_axis(tmp_path, rng, axis):
    data = rng.standard_normal((3, 4, 5)).astype(np.float32)
    shape = list(data.shape)
    shape[axis] = int(rng.integers(1, 7))
    idx = _indices(rng, data.shape[axis], tuple(shape))
    out, _ = run(tmp_path, {"d": data, "i": idx}, ["y"],
                 lambda b: b.add_gather_along_axis("g", ["d", "i"], "y", axis), exact=True)
    close(out["y"], ref_gather_along(data, idx, axis % 3))


# -- scatter -------------------------------------------------------------------------------------------
MODES = ["UPDATE", "ADD", "SUB", "MUL", "DIV", "MAX", "MIN"]


def _updates(rng, shape):
    return rng.uniform(0.5, 2.0, shape).astype(np.float32) * rng.choice([-1, 1], shape).astype(np.float32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis", [0, -1])
def test_scatter_every_mode_with_repeated_indices(tmp_path, rng, mode, axis):
    container = _updates(rng, (3, 4, 5))
    idx = _indices(rng, container.shape[axis], (7,))  # 7 updates into at most 5 rows: repeats certain
    upd_shape = container.shape[:axis % 3] + idx.shape + container.shape[axis % 3 + 1:]
    updates = _updates(rng, upd_shape)
    a = axis % 3
    out, _ = run(tmp_path, {"c": container, "i": idx, "u": updates}, ["y"],
                 lambda b: b.add_scatter("s", ["c", "i", "u"], "y", axis, mode), exact=True)

    def target(pos):
        return pos[:a] + (_wrap(idx[pos[a]], container.shape[a]),) + pos[a + 1:]
    close(out["y"], ref_scatter(container, idx, updates, mode, target))


@pytest.mark.parametrize("mode", MODES)
def test_scatter_nd_every_mode(tmp_path, rng, mode):
    container = _updates(rng, (4, 3, 2))
    idx = np.stack([_indices(rng, 4, (6,)), _indices(rng, 3, (6,))], -1)
    updates = _updates(rng, (6, 2))
    out, _ = run(tmp_path, {"c": container, "i": idx, "u": updates}, ["y"],
                 lambda b: b.add_scatter_nd("s", ["c", "i", "u"], "y", mode), exact=True)

    def target(pos):
        return (_wrap(idx[pos[0], 0], 4), _wrap(idx[pos[0], 1], 3), pos[1])
    close(out["y"], ref_scatter(container, idx, updates, mode, target))


@pytest.mark.parametrize("mode", MODES)
def test_scatter_along_axis_every_mode_seed_shapes(tmp_path, rng, mode):
    container = _updates(rng, (2, 5, 6))
    idx = _indices(rng, 5, (2, 2, 6))
    updates = _updates(rng, (2, 2, 6))
    out, _ = run(tmp_path, {"c": container, "i": idx, "u": updates}, ["y"],
                 lambda b: b.add_scatter_along_axis("s", ["c", "i", "u"], "y", -2, mode), exact=True)

    def target(pos):
        return (pos[0], _wrap(idx[pos], 5), pos[2])
    close(out["y"], ref_scatter(container, idx, updates, mode, target))


# -- ordering, sums -----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis,k,bottom", [(0, 1, False), (1, 3, False), (-1, 2, True), (-2, 4, True)])
def test_top_k_values_and_indices_with_ties(tmp_path, rng, axis, k, bottom):
    x = rng.integers(-3, 4, (4, 5, 6)).astype(np.float32)  # few values: ties everywhere
    out, _ = run(tmp_path, {"x": x}, ["v", "i"],
                 lambda b: b.add_topk("t", ["x"], ["v", "i"], k=k, axis=axis, use_bottom_k=bottom), exact=True)
    values, indices = ref_sort(x, axis % 3, k, not bottom)
    close(out["v"], values)
    np.testing.assert_array_equal(out["i"], indices)


@pytest.mark.parametrize("descending", [False, True])
def test_arg_sort_seed_examples(tmp_path, descending):
    x = np.array([3.1, 5.4, 32.9, 3.2, 77.0], np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_argsort("a", "x", "y", 0, descending), exact=True)
    np.testing.assert_array_equal(out["y"], [4, 2, 1, 3, 0] if descending else [0, 3, 1, 2, 4])
    m = np.array([[3, 5, 32], [3, 77, 6]], np.float32)
    out, _ = run(tmp_path, {"x": m}, ["y"], lambda b: b.add_argsort("a", "x", "y", 1, descending), exact=True)
    np.testing.assert_array_equal(out["y"], [[2, 1, 0], [1, 2, 0]] if descending else [[0, 1, 2], [0, 2, 1]])


@pytest.mark.parametrize("axis", [0, 2, -2])
def test_arg_sort_random(tmp_path, rng, axis):
    x = rng.integers(-5, 5, (3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_argsort("a", "x", "y", axis, True), exact=True)
    np.testing.assert_array_equal(out["y"], ref_sort(x, axis % 3, x.shape[axis], True)[1])


@pytest.mark.parametrize("exclusive,reverse", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("axis", [0, -1, 1])
def test_cum_sum(tmp_path, rng, axis, exclusive, reverse):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"],
                 lambda b: b.add_cumsum("c", ["x"], "y", axis, reverse, exclusive), exact=True)
    a = axis % 3
    moved = np.moveaxis(x.astype(np.float64), a, -1)
    expected = np.zeros_like(moved)
    n = moved.shape[-1]
    for pos in np.ndindex(moved.shape[:-1]):
        for j in range(n):
            span = range(j, n) if reverse else range(j + 1)
            expected[pos + (j,)] = sum(moved[pos + (t,)] for t in span if not (exclusive and t == j))
    close(out["y"], np.moveaxis(expected, -1, a))


# -- one-hot, windows, slices, sequences --------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_with_out_of_range_and_negative_indices(tmp_path, rng, axis):
    size = 5
    idx = rng.integers(-2, size + 2, (3, 4)).astype(np.float32)  # outside 0..size-1: a row of offValue
    out, _ = run(tmp_path, {"i": idx}, ["y"], lambda b: b.add_one_hot("o", ["i"], "y", size, axis, 2.5, -0.5),
                 exact=True)
    expected = np.full((3, 4, size), -0.5)
    for pos in np.ndindex(idx.shape):
        if 0 <= idx[pos] < size:
            expected[pos + (int(idx[pos]),)] = 2.5
    close(out["y"], np.moveaxis(expected, -1, axis % 3))


@pytest.mark.parametrize("axis,window,step", [(0, 2, 1), (1, 3, 2), (-1, 1, 3), (-2, 4, 1)])
def test_sliding_windows(tmp_path, rng, axis, window, step):
    x = rng.standard_normal((3, 5, 7)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_sliding_windows("s", "x", "y", axis, window, step),
                 exact=True)
    a = axis % 3
    length = x.shape[a]
    count = (length - window) // step + 1
    expected = np.empty(x.shape[:a] + (count, window) + x.shape[a + 1:])
    for pos in np.ndindex(expected.shape):
        m, w = pos[a], pos[a + 1]
        expected[pos] = x[pos[:a] + (m * step + w,) + pos[a + 2:]]
    close(out["y"], expected)


@pytest.mark.parametrize("axis,size,begin", [(1, 2, 1), (-1, 3, -3), (0, 1, 2)])
def test_slice_by_size(tmp_path, rng, axis, size, begin):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x, "b": np.array([begin], np.float32)}, ["y"],
                 lambda b: b.add_slice_by_size("s", ["x", "b"], "y", axis, size), exact=True)
    a = axis % 3
    start = begin + x.shape[a] if begin < 0 else begin
    index = [slice(None)] * 3
    index[a] = slice(start, start + size)
    close(out["y"], x[tuple(index)])


def test_reverse_seq_seed_example(tmp_path):
    data = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    out, _ = run(tmp_path, {"x": data, "n": np.array([2, 3], np.float32)}, ["y"],
                 lambda b: b.add_reverse_sequence("r", ["x", "n"], "y", 0, 1), exact=True)
    close(out["y"], [[[2, 3], [0, 1], [4, 5]], [[10, 11], [8, 9], [6, 7]]])


@pytest.mark.parametrize("batch_axis,seq_axis", [(0, -1), (1, 2), (-3, -2)])
def test_reverse_seq_random(tmp_path, rng, batch_axis, seq_axis):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ba, sa = batch_axis % 3, seq_axis % 3
    lengths = rng.integers(0, x.shape[sa] + 1, x.shape[ba]).astype(np.float32)
    out, _ = run(tmp_path, {"x": x, "n": lengths}, ["y"],
                 lambda b: b.add_reverse_sequence("r", ["x", "n"], "y", batch_axis, seq_axis), exact=True)
    expected = x.copy()
    for pos in np.ndindex(x.shape):
        length = int(lengths[pos[ba]])
        if pos[sa] < length:
            src = list(pos)
            src[sa] = length - 1 - pos[sa]
            expected[pos] = x[tuple(src)]
    close(out["y"], expected)


# -- masks, where, range ---------------------------------------------------------------------------
def _masked(x, keep):
    out = np.zeros_like(x, dtype=np.float64)
    for pos in np.ndindex(x.shape):
        if keep(pos[-2], pos[-1]):
            out[pos] = x[pos]
    return out


@pytest.mark.parametrize("lower,upper", [(-1, -1), (0, 0), (1, -1), (-1, 2), (2, 1)])
def test_matrix_band_part(tmp_path, rng, lower, upper):
    x = rng.standard_normal((2, 4, 5)).astype(np.float32)
    x[0, 3, 0] = np.inf  # outside every band but the full one: zero, not NaN
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_matrix_band_part("m", "x", "y", lower, upper),
                 exact=True)
    close(out["y"], _masked(x, lambda i, j: (lower < 0 or i - j <= lower) and (upper < 0 or j - i <= upper)))


@pytest.mark.parametrize("k", [0, 1, -2, 4])
def test_lower_and_upper_triangular(tmp_path, rng, k):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)

    def add(b):
        b.add_lower_triangular("lo", "x", "lo", k)
        b.add_upper_triangular("up", "x", "up", k)
    out, _ = run(tmp_path, {"x": x}, ["lo", "up"], add, exact=True)
    close(out["lo"], _masked(x, lambda i, j: j - i <= k))
    close(out["up"], _masked(x, lambda i, j: j - i >= k))


def test_where_broadcastable(tmp_path, rng):
    c = (rng.random((4, 1)) < 0.5).astype(np.float32)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    y = rng.standard_normal((5,)).astype(np.float32)
    out, _ = run(tmp_path, {"c": c, "x": x, "y": y}, ["z"],
                 lambda b: b.add_where_broadcastable("w", ["c", "x", "y"], "z"), exact=True)
    expected = np.empty((3, 4, 5))
    for i, j, k in np.ndindex(expected.shape):
        expected[i, j, k] = x[i, j, k] if c[j, 0] else y[k]
    close(out["z"], expected)


@pytest.mark.parametrize("start,end,step", [(0, 5, 1), (2.5, -1, -0.75), (-3, 4, 2), (1, 1.5, 0.1)])
def test_range_static(tmp_path, start, end, step):
    b = builder({"x": (1,)}, ["y", "z"], exact=True)
    b.add_range_static("r", "y", end=end, start=start, step=step)
    b.add_activation("a", "LINEAR", "x", "z")
    model = load(tmp_path, b)
    got = model.predict({"x": np.zeros(1, np.float32)})["y"]
    expected, v = [], float(start)
    while (v < end) if step > 0 else (v > end):
        expected.append(v)
        v = start + len(expected) * step
    close(got, np.array(expected))
