"""vxCopyTensorPatch done in C (``csrc/tensor_copy.c``) once Python published a tensor's layout: the same
data as NumPy indexing, on plain tensors, application memory with its own strides, and views; back on the
Python path after a swap or a release; errors still judged and logged by Python."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import (
    DTYPES,
    copy,
    create,
    model,
    padded,
    random_box,
    random_data,
    random_dims,
    release,
    sizes,
)

from openvx_nn import vx
from openvx_nn.core import tensor_patch


@pytest.fixture
def python_copies(monkeypatch):
    """How many copies reached the Python path (a list holding the count)."""
    count, original = [0], tensor_patch.copy_patch

    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    monkeypatch.setattr(tensor_patch, "copy_patch", counted)
    return count


def _lower(start, end, rank):
    return tuple(slice(s, e) for s, e in zip(start, end)) + (0,) * (rank - len(start))


def _from_handle(ctx, rng, dims, vx_type, dtype):
    """A tensor over application memory with padded strides: (tensor, the memory as an array, its buffer)."""
    buffer, view = padded(rng, dims, dtype)
    tensor = vx.vxCreateTensorFromHandle(ctx, len(dims), sizes(dims), vx_type, 0, sizes(view.strides),
                                         vx.ffi.cast("void *", view.__array_interface__["data"][0]),
                                         vx.VX_MEMORY_TYPE_HOST)
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", tensor)) == vx.VX_SUCCESS
    return tensor, view, buffer


@pytest.mark.parametrize("seed", range(8))
def test_copies_after_the_first_are_done_in_c_with_numpys_results(ctx, python_copies, seed):
    rng = np.random.default_rng([91, seed])
    vx_type = list(DTYPES)[seed % len(DTYPES)]
    dtype = DTYPES[vx_type]
    dims = random_dims(rng)
    if seed % 2:
        tensor, expected, _buffer = _from_handle(ctx, rng, dims, vx_type, dtype)
        expected[...] = random_data(rng, dims, dtype)
    else:
        tensor, expected = create(ctx, dims, vx_type), random_data(rng, dims, dtype)
        assert copy(tensor, [0] * len(dims), dims, expected, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    everything = np.zeros(dims, dtype, order="F")
    assert copy(tensor, [0] * len(dims), dims, everything, vx.VX_READ_ONLY) == vx.VX_SUCCESS  # published by now
    first = python_copies[0]
    writes = model(tensor).writes
    for k in range(6):
        n = int(rng.integers(1, len(dims) + 1))
        start, end = random_box(rng, dims[:n])
        shape = [e - s for s, e in zip(start, end)]
        _, source = padded(rng, shape, dtype)
        source[...] = random_data(rng, shape, dtype)
        assert copy(tensor, start, end, source, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
        expected[_lower(start, end, len(dims))] = source
        _, target = padded(rng, shape, dtype)
        assert copy(tensor, start, end, target, vx.VX_READ_ONLY) == vx.VX_SUCCESS
        assert np.array_equal(target, expected[_lower(start, end, len(dims))]), (k, start, end)
    assert copy(tensor, [0] * len(dims), dims, everything, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    assert np.array_equal(everything, expected)
    assert python_copies[0] == first, "copies after the first went through Python"
    assert model(tensor).writes == writes + 6, "a write done in C must count as a write"
    release(tensor)


def test_a_view_copies_in_c_within_its_parent(ctx, python_copies):
    rng = np.random.default_rng(92)
    parent = create(ctx, [7, 6, 3], vx.VX_TYPE_INT16)
    data = random_data(rng, [7, 6, 3], np.int16)
    assert copy(parent, [0, 0, 0], [7, 6, 3], data, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    view = vx.vxCreateTensorFromView(parent, 3, sizes([2, 1, 1]), sizes([6, 5, 3]))
    patch = random_data(rng, [4, 4, 2], np.int16)
    assert copy(view, [0, 0, 0], [4, 4, 2], patch, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    back = np.zeros([7, 6, 3], np.int16, order="F")
    assert copy(parent, [0, 0, 0], [7, 6, 3], back, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    published = python_copies[0]
    for _ in range(3):
        patch = random_data(rng, [4, 4, 2], np.int16)
        assert copy(view, [0, 0, 0], [4, 4, 2], patch, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
        data[2:6, 1:5, 1:3] = patch
        assert copy(parent, [0, 0, 0], [7, 6, 3], back, vx.VX_READ_ONLY) == vx.VX_SUCCESS
        assert np.array_equal(back, data)
    assert python_copies[0] == published, "the view's and the parent's later copies went through Python"
    release(view)
    release(parent)


def test_a_swapped_tensor_is_copied_from_its_new_memory_and_a_released_one_is_refused(ctx, log):
    dims = [5, 4]
    first = np.ones(dims, np.float32, order="F")
    tensor = vx.vxCreateTensorFromHandle(ctx, 2, sizes(dims), vx.VX_TYPE_FLOAT32, 0, sizes(first.strides),
                                         vx.ffi.cast("void *", first.__array_interface__["data"][0]),
                                         vx.VX_MEMORY_TYPE_HOST)
    out = np.zeros(dims, np.float32, order="F")
    for _ in range(2):  # the second is C's
        assert copy(tensor, [0, 0], dims, out, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    second = np.full(dims, 2.0, np.float32, order="F")
    previous = vx.ffi.new("void **")
    assert vx.vxSwapTensorHandle(tensor, vx.ffi.cast("void *", second.__array_interface__["data"][0]),
                                 previous) == vx.VX_SUCCESS
    for _ in range(2):
        assert copy(tensor, [0, 0], dims, out, vx.VX_READ_ONLY) == vx.VX_SUCCESS
        assert (out == 2.0).all()
    handle = tensor
    release(tensor)
    assert copy(handle, [0, 0], dims, out, vx.VX_READ_ONLY) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxCopyTensorPatch:")
