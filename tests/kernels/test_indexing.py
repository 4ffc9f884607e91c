"""The index kernels (``kernels/frontend/indexing.py``, ``ordering.py``, ``reduction.cumulative_sum``) called
directly against plain loops, and their refusals of indices that are not integers or leave their axis."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import indexing
from openvx_nn.kernels.frontend.ordering import sort_first
from openvx_nn.kernels.frontend.reduction import cumulative_sum


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_take_matches_loops(rng, axis):
    data = rng.standard_normal((3, 4, 5))
    n = data.shape[axis]
    idx = rng.integers(-n, n, (2, 3)).astype(np.float32)
    out = np.empty(data.shape[:axis] + idx.shape + data.shape[axis + 1:])
    indexing.gather(data, idx, out, "axis", axis)
    for pos in np.ndindex(out.shape):
        i = int(idx[pos[axis:axis + 2]]) % n
        assert out[pos] == data[pos[:axis] + (i,) + pos[axis + 2:]]


def test_scatter_nd_add_applies_every_repeat(rng):
    container = rng.standard_normal((3, 2))
    idx = np.array([[1], [1], [-1], [0]], np.float32)
    updates = rng.standard_normal((4, 2))
    out = np.empty_like(container)
    indexing.scatter(container, idx, updates, out, "nd", "add")
    expected = container.copy()
    for u, (i,) in enumerate(idx.astype(int)):
        expected[i % 3] += updates[u]
    np.testing.assert_allclose(out, expected)


def test_scatter_update_keeps_the_last_repeat():
    container = np.zeros(4)
    out = np.empty(4)
    indexing.scatter(container, np.array([2, 2, 2], np.float32), np.array([1.0, 2.0, 3.0]), out, "axis", "update")
    np.testing.assert_array_equal(out, [0, 0, 3, 0])


@pytest.mark.parametrize("bad,error,words", [(5.0, IndexError, "outside -3..2"), (-4.0, IndexError, "-4"),
                                             (1.5, ValueError, "not an integer"), (np.nan, ValueError, "integer")])
def test_bad_indices_are_named(bad, error, words):
    with pytest.raises(error, match=words):
        indexing.gather(np.zeros(3), np.array([0, bad], np.float32), np.empty(2), "axis", 0)


def test_sort_first_keeps_ties_in_input_order():
    x = np.array([[1.0, 3.0, 1.0, 3.0, 2.0]])
    values, indices = np.empty((1, 3)), np.empty((1, 3))
    sort_first(x, 3, 1, True, values, indices)
    np.testing.assert_array_equal(indices, [[1, 3, 4]])
    sort_first(x, 3, 1, False, values, indices)
    np.testing.assert_array_equal(indices, [[0, 2, 4]])
    np.testing.assert_array_equal(values, [[1, 1, 2]])


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_sum_matches_loops(rng, exclusive, reverse):
    x = rng.standard_normal((4, 6))
    out = np.empty_like(x)
    cumulative_sum(x, out, 1, exclusive, reverse)
    for r in range(4):
        for j in range(6):
            span = range(j, 6) if reverse else range(j + 1)
            assert out[r, j] == pytest.approx(sum(x[r, t] for t in span if not (exclusive and t == j)), abs=1e-12)


def test_reverse_sequences_refuses_a_length_past_the_axis():
    with pytest.raises(ValueError, match="0..3"):
        indexing.reverse_sequences(np.zeros((2, 3)), np.array([1, 4], np.float32), np.empty((2, 3)), 0, 1)
