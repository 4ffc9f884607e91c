"""vxCopyTensorPatch, vxMapTensorPatch and vxUnmapTensorPatch: data checked
element by element against NumPy indexing in OpenVX axis order."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import (
    DTYPES,
    HOST,
    TYPES,
    copy,
    create,
    mapped_array,
    padded,
    pointer,
    random_box,
    random_data,
    random_dims,
    read,
    release,
    sizes,
    write,
)

from openvx_nn import vx


@pytest.mark.parametrize("name", TYPES)
def test_whole_tensor_copies_round_trip_for_every_type(ctx, name):
    vx_type, fpp, dtype = TYPES[name]
    rng = np.random.default_rng(len(name))
    dims = random_dims(rng, 1, 4)
    tensor = create(ctx, dims, vx_type, fpp)
    data = random_data(rng, dims, dtype)
    write(tensor, data)
    back = read(tensor, dims, dtype)
    assert back.dtype == dtype and np.array_equal(back, data)
    release(tensor)


def _lower_index(start, end, rank):
    """NumPy index of a patch of the lowest len(start) dims; the higher dims at 0."""
    return tuple(slice(s, e) for s, e in zip(start, end)) + (0,) * (rank - len(start))


@pytest.mark.parametrize("seed", range(12))
def test_strided_lower_dimension_patches_match_numpy_indexing(ctx, seed):
    rng = np.random.default_rng(seed)
    vx_type = list(DTYPES)[seed % len(DTYPES)]
    dtype = DTYPES[vx_type]
    dims = random_dims(rng)
    tensor = create(ctx, dims, vx_type, 0)
    expected = random_data(rng, dims, dtype)
    write(tensor, expected)
    for _ in range(4):
        n = int(rng.integers(1, len(dims) + 1))
        start, end = random_box(rng, dims[:n])
        index = _lower_index(start, end, len(dims))
        shape = [e - s for s, e in zip(start, end)]

        # user → tensor through a padded buffer: only the patch changes.
        buffer, source = padded(rng, shape, dtype)
        source[...] = random_data(rng, shape, dtype)
        assert copy(tensor, start, end, source, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
        expected[index] = source
        assert np.array_equal(read(tensor, dims, dtype), expected)

        # tensor → user: the patch lands in the buffer's elements, the padding is untouched.
        buffer, target = padded(rng, shape, dtype)
        untouched = buffer.copy()
        assert copy(tensor, start, end, target, vx.VX_READ_ONLY) == vx.VX_SUCCESS
        assert np.array_equal(target, expected[index])
        untouched[tuple(slice(0, s) for s in shape)] = target
        assert np.array_equal(buffer, untouched)
    release(tensor)


def test_lower_dimension_copy_addresses_index_zero_of_the_higher_dims(ctx):
    dims = [3, 2, 2]
    tensor = create(ctx, dims, vx.VX_TYPE_UINT8)
    write(tensor, np.asfortranarray(np.arange(12, dtype=np.uint8).reshape(dims, order="F")))
    plane = np.zeros((3, 2), np.uint8, order="F")
    assert copy(tensor, [0, 0], [3, 2], plane, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    assert plane.tolist() == [[0, 3], [1, 4], [2, 5]]  # element (x, y, 0) = x + 3y
    release(tensor)


def _map(tensor, start, end, usage, n=None):
    n = len(start) if n is None else n
    map_id, stride, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[6]"), vx.ffi.new("void **")
    status = vx.vxMapTensorPatch(tensor, n, sizes(start), sizes(end), map_id, stride, ptr, usage, HOST)
    return status, map_id[0], list(stride)[:n], ptr[0]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("usage", ["read", "write", "read-write"])
def test_map_gives_the_tensors_own_storage_at_the_patch(ctx, seed, usage):
    rng = np.random.default_rng(100 + seed)
    vx_type = list(DTYPES)[seed]
    dtype = np.dtype(DTYPES[vx_type])
    dims = random_dims(rng, 2, 5)
    tensor = create(ctx, dims, vx_type)
    expected = random_data(rng, dims, dtype)
    write(tensor, expected)
    n = int(rng.integers(1, len(dims) + 1))
    start, end = random_box(rng, dims[:n])
    shape = [e - s for s, e in zip(start, end)]
    index = _lower_index(start, end, len(dims))
    accessor = {"read": vx.VX_READ_ONLY, "write": vx.VX_WRITE_ONLY, "read-write": vx.VX_READ_AND_WRITE}[usage]

    status, map_id, strides, ptr = _map(tensor, start, end, accessor)
    assert status == vx.VX_SUCCESS and map_id != 0
    packed = [dtype.itemsize * int(np.prod(dims[:i])) for i in range(len(dims))]
    assert strides == packed[:n]
    patch = mapped_array(ptr, strides, shape, dtype)
    if usage != "write":
        assert np.array_equal(patch, expected[index])
    if usage != "read":
        patch[...] = random_data(rng, shape, dtype)
        expected[index] = patch
    assert vx.vxUnmapTensorPatch(tensor, map_id) == vx.VX_SUCCESS
    assert np.array_equal(read(tensor, dims, dtype), expected)
    release(tensor)


def test_several_maps_may_be_open_and_each_id_closes_once(ctx, log):
    tensor = create(ctx, [4, 4])
    first = _map(tensor, [0, 0], [2, 2], vx.VX_READ_ONLY)
    second = _map(tensor, [1, 1], [4, 4], vx.VX_WRITE_ONLY)
    assert first[0] == second[0] == vx.VX_SUCCESS and first[1] != second[1]
    assert vx.vxUnmapTensorPatch(tensor, first[1]) == vx.VX_SUCCESS
    assert vx.vxUnmapTensorPatch(tensor, first[1]) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxUnmapTensorPatch", f"map id {first[1]}")
    other = create(ctx, [4])
    assert vx.vxUnmapTensorPatch(other, second[1]) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxUnmapTensorPatch(tensor, 0) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxUnmapTensorPatch(tensor, second[1]) == vx.VX_SUCCESS
    release(other)
    release(tensor)


# -- bad arguments ----------------------------------------------------------------------
# The tensor is INT16 [4, 3, 2]; a good request is n = 2, start [1, 0], end [3, 3],
# user strides [2, 4].  Each case changes one thing:
# (the changed arguments, status, words in the log line)
GOOD = {"n": 2, "start": [1, 0], "end": [3, 3], "stride": [2, 4], "usage": vx.VX_READ_ONLY, "mem": HOST}
BAD_PATCHES = {
    "rank 0": ({"n": 0}, vx.VX_ERROR_INVALID_PARAMETERS, ["number_of_dims 0", "of rank 3", "1..3"]),
    "rank above the tensor's": ({"n": 4, "start": [0] * 4, "end": [1] * 4, "stride": [2, 2, 2, 2]},
                                vx.VX_ERROR_INVALID_PARAMETERS, ["number_of_dims 4", "1..3"]),
    "start NULL": ({"start": None}, vx.VX_ERROR_INVALID_PARAMETERS, ["patch start is NULL"]),
    "end NULL": ({"end": None}, vx.VX_ERROR_INVALID_PARAMETERS, ["patch end is NULL"]),
    "end past the dim": ({"end": [3, 4]}, vx.VX_ERROR_INVALID_PARAMETERS,
                         ["patch end 4 exceeds dimension 1 of size 3"]),
    "empty": ({"start": [3, 0]}, vx.VX_ERROR_INVALID_PARAMETERS, ["patch start 3 is not below end 3",
                                                                   "dimension 0"]),
    "start past end": ({"start": [1, 2], "end": [3, 1]}, vx.VX_ERROR_INVALID_PARAMETERS,
                       ["patch start 2 is not below end 1"]),
    "usage": ({"usage": vx.VX_READ_AND_WRITE}, vx.VX_ERROR_INVALID_PARAMETERS, ["usage", "expected one of"]),
    "usage not an accessor": ({"usage": 0}, vx.VX_ERROR_INVALID_PARAMETERS, ["usage 0x0"]),
    "memory type": ({"mem": vx.VX_MEMORY_TYPE_NONE}, vx.VX_ERROR_INVALID_PARAMETERS,
                    ["memory type", "VX_MEMORY_TYPE_HOST"]),
}
COPY_ONLY = {
    "stride NULL": ({"stride": None}, vx.VX_ERROR_INVALID_PARAMETERS, ["user_stride is NULL"]),
    "stride[0] not the element size": ({"stride": [4, 8]}, vx.VX_ERROR_INVALID_PARAMETERS,
                                       ["user_stride[0] is 4", "element size 2"]),
    "overlapping strides": ({"stride": [2, 2]}, vx.VX_ERROR_INVALID_PARAMETERS,
                            ["user_stride[1] is 2", "at least user_stride[0] * 2 = 4"]),
    "user pointer NULL": ({"ptr": None}, vx.VX_ERROR_INVALID_PARAMETERS, ["user_ptr is NULL"]),
}


def _copy_with(tensor, changes):
    args = {**GOOD, "ptr": True, **changes}
    buffer = np.zeros(64, np.int16)
    ptr = pointer(buffer) if args["ptr"] else vx.ffi.NULL
    return vx.vxCopyTensorPatch(tensor, args["n"], sizes(args["start"]), sizes(args["end"]),
                                sizes(args["stride"]), ptr, args["usage"], args["mem"])


@pytest.mark.parametrize("case", {**BAD_PATCHES, **COPY_ONLY})
def test_copy_rejects_bad_arguments(ctx, log, case):
    changes, status, words = {**BAD_PATCHES, **COPY_ONLY}[case]
    tensor = create(ctx, [4, 3, 2])
    assert _copy_with(tensor, {}) == vx.VX_SUCCESS
    assert _copy_with(tensor, changes) == status
    assert log.has(status, "vxCopyTensorPatch:", *words), log.entries
    release(tensor)


MAP_ONLY = {
    "map_id NULL": ({"out": "map_id"}, vx.VX_ERROR_INVALID_PARAMETERS, ["map_id is NULL"]),
    "stride NULL": ({"out": "stride"}, vx.VX_ERROR_INVALID_PARAMETERS, ["stride is NULL"]),
    "ptr NULL": ({"out": "ptr"}, vx.VX_ERROR_INVALID_PARAMETERS, ["ptr is NULL"]),
    "usage": ({"usage": vx.VX_READ_ONLY + 0x100}, vx.VX_ERROR_INVALID_PARAMETERS,
              ["usage", "VX_READ_AND_WRITE"]),
}


@pytest.mark.parametrize("case", {**BAD_PATCHES, **MAP_ONLY})
def test_map_rejects_bad_arguments(ctx, log, case):
    changes, status, words = {**BAD_PATCHES, **MAP_ONLY}[case]
    args = {**GOOD, "out": None, **changes}
    outs = {"map_id": vx.ffi.new("vx_map_id *"), "stride": vx.ffi.new("vx_size[6]"), "ptr": vx.ffi.new("void **")}
    if args["out"]:
        outs[args["out"]] = vx.ffi.NULL
    tensor = create(ctx, [4, 3, 2])
    result = vx.vxMapTensorPatch(tensor, args["n"], sizes(args["start"]), sizes(args["end"]), outs["map_id"],
                                 outs["stride"], outs["ptr"], args["usage"], args["mem"])
    assert result == status
    assert log.has(status, "vxMapTensorPatch:", *words), log.entries
    release(tensor)
