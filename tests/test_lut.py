"""LUTs through the C API: attributes, copies, maps, virtual LUTs and every
error a caller can make."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ref

DTYPES = {"VX_TYPE_UINT8": np.uint8, "VX_TYPE_INT16": np.int16}
CASES = [("VX_TYPE_UINT8", 1), ("VX_TYPE_UINT8", 100), ("VX_TYPE_UINT8", 256),
         ("VX_TYPE_INT16", 1), ("VX_TYPE_INT16", 2), ("VX_TYPE_INT16", 511), ("VX_TYPE_INT16", 65536)]
HOST = "VX_MEMORY_TYPE_HOST"


def status(vx, handle) -> int:
    return vx.vxGetStatus(ref(vx, handle))


def release(vx, lut) -> None:
    assert vx.vxReleaseLUT(vx.ffi.new("vx_lut *", lut)) == vx.VX_SUCCESS


def table(type_name: str, count: int, seed: int = 0) -> np.ndarray:
    """Random entries with the type's extremes at both ends."""
    dtype = np.dtype(DTYPES[type_name])
    info = np.iinfo(dtype)
    values = np.random.default_rng(seed).integers(info.min, info.max, count, endpoint=True).astype(dtype)
    values[0] = info.min
    values[-1] = info.max
    return values


def copy_in(vx, lut, values: np.ndarray) -> int:
    return vx.vxCopyLUT(lut, vx.ffi.from_buffer(values), vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST)


def copy_out(vx, lut, type_name: str, count: int) -> np.ndarray:
    out = np.full(count, 0x5A, DTYPES[type_name])
    result = vx.vxCopyLUT(lut, vx.ffi.from_buffer(out), vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST)
    assert result == vx.VX_SUCCESS
    return out


def map_lut(vx, lut, usage: int, flags: int = 0):
    """(status, map id, a NumPy view of the mapped memory or None)."""
    map_id = vx.ffi.new("vx_map_id *")
    ptr = vx.ffi.new("void **")
    count, size, vx_type = vx.ffi.new("vx_size *"), vx.ffi.new("vx_size *"), vx.ffi.new("vx_enum *")
    vx.vxQueryLUT(lut, vx.VX_LUT_COUNT, count, 8)
    vx.vxQueryLUT(lut, vx.VX_LUT_SIZE, size, 8)
    vx.vxQueryLUT(lut, vx.VX_LUT_TYPE, vx_type, 4)
    result = vx.vxMapLUT(lut, map_id, ptr, usage, vx.VX_MEMORY_TYPE_HOST, flags)
    if result != vx.VX_SUCCESS:
        return result, None, None
    dtype = np.uint8 if vx_type[0] == vx.VX_TYPE_UINT8 else np.int16
    return result, map_id[0], np.frombuffer(vx.ffi.buffer(ptr[0], size[0]), dtype, count[0])


@pytest.fixture
def lut(vx, ctx):
    """An INT16 LUT of 10 entries."""
    handle = vx.vxCreateLUT(ctx, vx.VX_TYPE_INT16, 10)
    yield handle
    release(vx, handle)


@pytest.fixture
def graph(vx, ctx):
    g = vx.vxCreateGraph(ctx)
    yield g
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", g)) == vx.VX_SUCCESS


# -- attributes and data ---------------------------------------------------------
@pytest.mark.parametrize("type_name, count", CASES)
def test_query_gives_type_count_size_and_offset(vx, ctx, type_name, count):
    lut = vx.vxCreateLUT(ctx, getattr(vx, type_name), count)
    assert status(vx, lut) == vx.VX_SUCCESS
    vx_type, n, size, offset = (vx.ffi.new("vx_enum *"), vx.ffi.new("vx_size *"),
                                vx.ffi.new("vx_size *"), vx.ffi.new("vx_uint32 *"))
    assert vx.vxQueryLUT(lut, vx.VX_LUT_TYPE, vx_type, 4) == vx.VX_SUCCESS
    assert vx.vxQueryLUT(lut, vx.VX_LUT_COUNT, n, 8) == vx.VX_SUCCESS
    assert vx.vxQueryLUT(lut, vx.VX_LUT_SIZE, size, 8) == vx.VX_SUCCESS
    assert vx.vxQueryLUT(lut, vx.VX_LUT_OFFSET, offset, 4) == vx.VX_SUCCESS
    assert vx_type[0] == getattr(vx, type_name)
    assert n[0] == count
    assert size[0] == count * np.dtype(DTYPES[type_name]).itemsize
    assert offset[0] == (count // 2 if type_name == "VX_TYPE_INT16" else 0)
    release(vx, lut)


@pytest.mark.parametrize("type_name, count", CASES)
def test_copy_in_and_out_round_trips_and_starts_at_zero(vx, ctx, type_name, count):
    lut = vx.vxCreateLUT(ctx, getattr(vx, type_name), count)
    assert np.array_equal(copy_out(vx, lut, type_name, count), np.zeros(count))
    values = table(type_name, count)
    assert copy_in(vx, lut, values) == vx.VX_SUCCESS
    assert np.array_equal(copy_out(vx, lut, type_name, count), values)
    release(vx, lut)


@pytest.mark.parametrize("type_name, count", CASES)
def test_map_read_only_sees_the_table(vx, ctx, type_name, count):
    lut = vx.vxCreateLUT(ctx, getattr(vx, type_name), count)
    values = table(type_name, count, seed=1)
    copy_in(vx, lut, values)
    result, map_id, view = map_lut(vx, lut, vx.VX_READ_ONLY)
    assert result == vx.VX_SUCCESS
    assert np.array_equal(view, values)
    assert vx.vxUnmapLUT(lut, map_id) == vx.VX_SUCCESS
    release(vx, lut)


@pytest.mark.parametrize("type_name, count", CASES)
@pytest.mark.parametrize("usage", ["VX_WRITE_ONLY", "VX_READ_AND_WRITE"])
def test_writes_through_a_map_are_visible_to_a_later_copy(vx, ctx, type_name, count, usage):
    lut = vx.vxCreateLUT(ctx, getattr(vx, type_name), count)
    copy_in(vx, lut, table(type_name, count, seed=2))
    values = table(type_name, count, seed=3)
    result, map_id, view = map_lut(vx, lut, getattr(vx, usage), vx.VX_NOGAP_X)
    assert result == vx.VX_SUCCESS
    view[:] = values
    assert vx.vxUnmapLUT(lut, map_id) == vx.VX_SUCCESS
    assert np.array_equal(copy_out(vx, lut, type_name, count), values)
    release(vx, lut)


def test_read_and_write_map_reads_then_updates_in_place(vx, lut):
    values = table("VX_TYPE_INT16", 10, seed=4)
    copy_in(vx, lut, values)
    offset = vx.ffi.new("vx_uint32 *")
    vx.vxQueryLUT(lut, vx.VX_LUT_OFFSET, offset, 4)
    _, map_id, view = map_lut(vx, lut, vx.VX_READ_AND_WRITE)
    assert view[offset[0] - 5] == values[0]  # the entry for value -5
    view[offset[0] + 4] = -1234               # the entry for value 4
    values[offset[0] + 4] = -1234
    assert vx.vxUnmapLUT(lut, map_id) == vx.VX_SUCCESS
    assert np.array_equal(copy_out(vx, lut, "VX_TYPE_INT16", 10), values)


def test_maps_have_distinct_ids_and_each_unmaps_once(vx, lut, log):
    _, first, _ = map_lut(vx, lut, vx.VX_READ_ONLY)
    _, second, _ = map_lut(vx, lut, vx.VX_WRITE_ONLY)
    assert first != second
    assert vx.vxUnmapLUT(lut, first) == vx.VX_SUCCESS
    assert vx.vxUnmapLUT(lut, first) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxUnmapLUT", f"map id {first}", "lut")
    assert vx.vxUnmapLUT(lut, second) == vx.VX_SUCCESS


# -- creation errors --------------------------------------------------------------
@pytest.mark.parametrize("vx_type", ["VX_TYPE_FLOAT32", "VX_TYPE_INT8", "VX_TYPE_UINT16",
                                     "VX_TYPE_INVALID", 0x999])
def test_other_types_are_invalid_type(vx, ctx, graph, log, vx_type):
    vx_type = getattr(vx, vx_type) if isinstance(vx_type, str) else vx_type
    assert status(vx, vx.vxCreateLUT(ctx, vx_type, 16)) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateLUT:", "not a LUT type",
                   "VX_TYPE_UINT8 or VX_TYPE_INT16")
    assert status(vx, vx.vxCreateVirtualLUT(graph, vx_type, 16)) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateVirtualLUT:", "not a LUT type")


@pytest.mark.parametrize("type_name, count, allowed", [
    ("VX_TYPE_UINT8", 0, "1..256"), ("VX_TYPE_UINT8", 257, "1..256"),
    ("VX_TYPE_INT16", 0, "1..65536"), ("VX_TYPE_INT16", 65537, "1..65536"),
    ("VX_TYPE_INT16", 2**64 - 1, "1..65536")])
def test_count_out_of_range_is_invalid_parameters(vx, ctx, graph, log, type_name, count, allowed):
    assert status(vx, vx.vxCreateLUT(ctx, getattr(vx, type_name), count)) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateLUT:", f"count {count}", type_name, allowed)
    virtual = vx.vxCreateVirtualLUT(graph, getattr(vx, type_name), count)
    assert status(vx, virtual) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateVirtualLUT:", f"count {count}")


def test_bad_context_or_graph_gives_null(vx, ctx):
    assert vx.vxCreateLUT(vx.ffi.NULL, vx.VX_TYPE_UINT8, 256) == vx.ffi.NULL
    assert vx.vxCreateLUT(vx.ffi.cast("vx_context", 0xBAD0), vx.VX_TYPE_UINT8, 256) == vx.ffi.NULL
    assert vx.vxCreateVirtualLUT(vx.ffi.NULL, vx.VX_TYPE_UINT8, 256) == vx.ffi.NULL
    assert vx.vxCreateVirtualLUT(vx.ffi.cast("vx_graph", 0xBAD0), vx.VX_TYPE_UINT8, 256) == vx.ffi.NULL


# -- copy, map and unmap errors ------------------------------------------------------
@pytest.mark.parametrize("usage", ["VX_READ_AND_WRITE", 0, 0x11004])
def test_copy_with_bad_usage_is_invalid_parameters(vx, lut, log, usage):
    usage = getattr(vx, usage) if isinstance(usage, str) else usage
    out = vx.ffi.new("vx_int16[10]")
    assert vx.vxCopyLUT(lut, out, usage, vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyLUT:", "lut", "usage", f"{usage:#x}",
                   "VX_WRITE_ONLY")


@pytest.mark.parametrize("usage", [0, 0x11004])
def test_map_with_bad_usage_is_invalid_parameters(vx, lut, log, usage):
    result = vx.vxMapLUT(lut, vx.ffi.new("vx_map_id *"), vx.ffi.new("void **"), usage,
                         vx.VX_MEMORY_TYPE_HOST, 0)
    assert result == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxMapLUT:", "usage", "VX_READ_AND_WRITE")


@pytest.mark.parametrize("mem", ["VX_MEMORY_TYPE_NONE", 0])
def test_bad_memory_type_is_invalid_parameters(vx, lut, log, mem):
    mem = getattr(vx, mem) if isinstance(mem, str) else mem
    out = vx.ffi.new("vx_int16[10]")
    assert vx.vxCopyLUT(lut, out, vx.VX_READ_ONLY, mem) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyLUT:", "memory type", f"{mem:#x}")
    assert vx.vxMapLUT(lut, vx.ffi.new("vx_map_id *"), vx.ffi.new("void **"), vx.VX_READ_ONLY,
                       mem, 0) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxMapLUT:", "memory type", "VX_MEMORY_TYPE_HOST")


@pytest.mark.parametrize("usage", ["VX_READ_ONLY", "VX_WRITE_ONLY"])
def test_copy_with_null_pointer_is_invalid_parameters(vx, lut, log, usage):
    assert vx.vxCopyLUT(lut, vx.ffi.NULL, getattr(vx, usage), vx.VX_MEMORY_TYPE_HOST) \
        == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyLUT:", "lut", "pointer is NULL")


def test_map_with_null_outputs_or_bad_flags_is_invalid_parameters(vx, lut, log):
    P = vx.VX_ERROR_INVALID_PARAMETERS
    map_id, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("void **")
    assert vx.vxMapLUT(lut, vx.ffi.NULL, ptr, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST, 0) == P
    assert log.has(P, "vxMapLUT:", "map_id is NULL")
    assert vx.vxMapLUT(lut, map_id, vx.ffi.NULL, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST, 0) == P
    assert log.has(P, "vxMapLUT:", "ptr is NULL")
    for flags in (2, 0xFFFFFFFF):
        assert vx.vxMapLUT(lut, map_id, ptr, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST, flags) == P
        assert log.has(P, "vxMapLUT:", f"flags {flags:#x}", "VX_NOGAP_X")


def test_unmap_with_an_id_not_open_on_this_lut_is_invalid_parameters(vx, ctx, lut, log):
    other = vx.vxCreateLUT(ctx, vx.VX_TYPE_UINT8, 256)
    _, map_id, _ = map_lut(vx, other, vx.VX_READ_ONLY)
    for bad in (0, 987654321, map_id):
        assert vx.vxUnmapLUT(lut, bad) == vx.VX_ERROR_INVALID_PARAMETERS
        assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxUnmapLUT:", f"map id {bad}")
    assert vx.vxUnmapLUT(other, map_id) == vx.VX_SUCCESS
    release(vx, other)


def test_released_bogus_and_mistyped_handles_are_invalid_reference(vx, ctx, log):
    lut = vx.vxCreateLUT(ctx, vx.VX_TYPE_UINT8, 4)
    holder = vx.ffi.new("vx_lut *", lut)
    assert vx.vxReleaseLUT(holder) == vx.VX_SUCCESS
    assert holder[0] == vx.ffi.NULL
    scalar = vx.vxCreateScalar(ctx, vx.VX_TYPE_UINT8, vx.ffi.NULL)
    R, H = vx.VX_ERROR_INVALID_REFERENCE, vx.VX_MEMORY_TYPE_HOST
    buf, map_id, ptr = vx.ffi.new("char[8]"), vx.ffi.new("vx_map_id *"), vx.ffi.new("void **")
    for handle in (lut, vx.ffi.cast("vx_lut", 0xDEAD0), vx.ffi.NULL, vx.ffi.cast("vx_lut", scalar)):
        log.clear()
        assert vx.vxCopyLUT(handle, buf, vx.VX_READ_ONLY, H) == R
        assert log.has(R, "vxCopyLUT:", "lut")
        assert vx.vxMapLUT(handle, map_id, ptr, vx.VX_READ_ONLY, H, 0) == R
        assert log.has(R, "vxMapLUT:", "lut")
        assert vx.vxUnmapLUT(handle, 1) == R
        assert log.has(R, "vxUnmapLUT:", "lut")
        assert vx.vxQueryLUT(handle, vx.VX_LUT_COUNT, buf, 8) == R
        assert log.has(R, "vxQueryLUT:")
        assert vx.vxReleaseLUT(vx.ffi.new("vx_lut *", handle)) == R
        assert log.has(R, "vxReleaseLUT:")
    assert log.has(R, "vxMapLUT:", "is a VX_TYPE_SCALAR, not a lut")
    assert vx.vxReleaseLUT(vx.ffi.NULL) == R
    assert vx.vxReleaseScalar(vx.ffi.new("vx_scalar *", scalar)) == vx.VX_SUCCESS


@pytest.mark.parametrize("attribute, size", [("VX_LUT_TYPE", 8), ("VX_LUT_COUNT", 4),
                                             ("VX_LUT_SIZE", 4), ("VX_LUT_OFFSET", 8)])
def test_query_with_wrong_size_is_invalid_parameters(vx, lut, log, attribute, size):
    out = vx.ffi.new("char[16]")
    assert vx.vxQueryLUT(lut, getattr(vx, attribute), out, size) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryLUT:", attribute, f"size is {size}")


def test_query_of_a_foreign_attribute_or_null_pointer_fails(vx, lut, log):
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryLUT(lut, vx.VX_SCALAR_TYPE, out, 4) == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(vx.VX_ERROR_NOT_SUPPORTED, "vxQueryLUT:", "VX_SCALAR_TYPE")
    assert vx.vxQueryLUT(lut, vx.VX_LUT_TYPE, vx.ffi.NULL, 4) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryLUT:", "NULL")


# -- virtual LUTs -------------------------------------------------------------------
@pytest.mark.parametrize("type_name, count", [("VX_TYPE_UINT8", 256), ("VX_TYPE_INT16", 1001)])
def test_virtual_lut_is_queryable_but_not_accessible(vx, graph, log, type_name, count):
    lut = vx.vxCreateVirtualLUT(graph, getattr(vx, type_name), count)
    assert status(vx, lut) == vx.VX_SUCCESS
    n, offset = vx.ffi.new("vx_size *"), vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryLUT(lut, vx.VX_LUT_COUNT, n, 8) == vx.VX_SUCCESS and n[0] == count
    assert vx.vxQueryLUT(lut, vx.VX_LUT_OFFSET, offset, 4) == vx.VX_SUCCESS
    assert offset[0] == (500 if type_name == "VX_TYPE_INT16" else 0)
    buf = vx.ffi.new("char[]", 2 * count)
    away = vx.VX_ERROR_OPTIMIZED_AWAY
    for usage in (vx.VX_READ_ONLY, vx.VX_WRITE_ONLY):
        assert vx.vxCopyLUT(lut, buf, usage, vx.VX_MEMORY_TYPE_HOST) == away
    assert log.has(away, "vxCopyLUT:", "lut", "virtual")
    assert map_lut(vx, lut, vx.VX_READ_AND_WRITE)[0] == away
    assert log.has(away, "vxMapLUT:", "lut", "virtual")
    release(vx, lut)


def test_engine_sees_the_storage_the_application_maps(vx, graph, lut):
    from openvx_nn.core import reference

    obj = reference.find(int(vx.ffi.cast("uintptr_t", lut)))
    assert (obj.data_type, obj.count, obj.offset, obj.virtual) == (vx.VX_TYPE_INT16, 10, 5, False)
    obj.array[obj.offset + 3] = 77
    _, map_id, view = map_lut(vx, lut, vx.VX_READ_ONLY)
    assert view[5 + 3] == 77
    vx.vxUnmapLUT(lut, map_id)

    virtual = vx.vxCreateVirtualLUT(graph, vx.VX_TYPE_UINT8, 256)
    obj = reference.find(int(vx.ffi.cast("uintptr_t", virtual)))
    assert obj.virtual and obj.array.dtype == np.uint8 and obj.array.shape == (256,)
    release(vx, virtual)
