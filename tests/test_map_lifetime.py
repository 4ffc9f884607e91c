"""Releasing the last reference of a tensor while a map is open: the memory
lives until the unmap, and the handle is good for nothing but that unmap
(docs/decisions.md, "Maps and release")."""
from __future__ import annotations

import numpy as np
from conftest import compile_c, run_c
from test_tensor_support import HOST, create, mapped_array, sizes, status_of, write

from openvx_nn import vx


def _refs(ctx) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def _map(tensor, dims, usage=vx.VX_READ_AND_WRITE):
    map_id, stride, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[]", 6), vx.ffi.new("void **")
    n = len(dims)
    assert vx.vxMapTensorPatch(tensor, n, sizes([0] * n), sizes(dims), map_id, stride, ptr, usage,
                               HOST) == vx.VX_SUCCESS
    return map_id[0], mapped_array(ptr[0], list(stride)[:n], dims, np.int16)


def _release(tensor) -> int:
    return vx.vxReleaseTensor(vx.ffi.new("vx_tensor *", tensor))


def test_released_while_mapped_keeps_memory_until_unmap_and_refuses_everything_else(ctx):
    baseline = _refs(ctx)
    dims = [64, 32]
    tensor = create(ctx, dims)
    data = np.arange(64 * 32, dtype=np.int16).reshape(dims, order="F")
    write(tensor, data)
    map_id, mapped = _map(tensor, dims)
    assert _release(tensor) == vx.VX_SUCCESS
    assert _refs(ctx) == baseline  # gone for the application
    out = vx.ffi.new("vx_size *")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_NUMBER_OF_DIMS, out, 8) == vx.VX_ERROR_INVALID_REFERENCE
    assert _release(tensor) == vx.VX_ERROR_INVALID_REFERENCE
    # churn the allocator: memory freed at the release would now hold other data
    others = [create(ctx, dims) for _ in range(8)]
    for other in others:
        write(other, np.full(dims, -7, np.int16, order="F"))
    assert np.array_equal(mapped, data)
    mapped[...] = 5  # still writable
    assert vx.vxUnmapTensorPatch(tensor, map_id) == vx.VX_SUCCESS
    assert vx.vxUnmapTensorPatch(tensor, map_id) == vx.VX_ERROR_INVALID_REFERENCE  # now fully gone
    for other in others:
        assert _release(other) == vx.VX_SUCCESS
    assert _refs(ctx) == baseline


def test_released_view_keeps_its_parent_pinned_until_unmapped(ctx):
    buffer = np.zeros((8, 4), np.int16, order="F")
    parent = vx.vxCreateTensorFromHandle(ctx, 2, sizes(buffer.shape), vx.VX_TYPE_INT16, 0,
                                         sizes(buffer.strides), vx.ffi.cast("void *", buffer.ctypes.data), HOST)
    view = vx.vxCreateTensorFromView(parent, 2, sizes([2, 1]), sizes([6, 3]))
    assert status_of(view) == vx.VX_SUCCESS
    map_id, mapped = _map(view, [4, 2])
    assert _release(view) == vx.VX_SUCCESS
    previous = vx.ffi.new("void **")
    assert vx.vxSwapTensorHandle(parent, vx.ffi.NULL, previous) == vx.VX_FAILURE  # the map still pins it
    mapped[...] = 9
    assert vx.vxUnmapTensorPatch(view, map_id) == vx.VX_SUCCESS
    assert vx.vxSwapTensorHandle(parent, vx.ffi.NULL, previous) == vx.VX_SUCCESS
    assert (buffer[2:6, 1:3] == 9).all() and buffer.sum() == 9 * 8
    assert _release(parent) == vx.VX_SUCCESS


C_PROGRAM = r"""
#include <stdio.h>
#include <VX/vx.h>
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); return 1; } } while (0)
int main(void)
{
    vx_context context = vxCreateContext();
    vx_size dims[2] = {100, 100}, zero[2] = {0, 0}, stride[2], n = 0, i;
    vx_uint32 baseline = 0, count = 0;
    vx_map_id id;
    vx_int16 *p = NULL;
    vx_tensor t, keep;
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &baseline, sizeof baseline);
    t = vxCreateTensor(context, 2, dims, VX_TYPE_INT16, 0);
    keep = t;
    CHECK(vxMapTensorPatch(t, 2, zero, dims, &id, stride, (void **)&p, VX_READ_AND_WRITE,
                           VX_MEMORY_TYPE_HOST) == VX_SUCCESS);
    for (i = 0; i < 100 * 100; i++)
        p[i] = (vx_int16)i;
    CHECK(vxReleaseTensor(&t) == VX_SUCCESS && t == NULL);
    CHECK(vxQueryTensor(keep, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n) == VX_ERROR_INVALID_REFERENCE);
    for (i = 0; i < 100 * 100; i++)
        CHECK(p[i] == (vx_int16)i);
    CHECK(vxUnmapTensorPatch(keep, id) == VX_SUCCESS);
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &count, sizeof count);
    CHECK(count == baseline);
    CHECK(vxReleaseContext(&context) == VX_SUCCESS);
    puts("ok");
    return 0;
}
"""


def test_c_program_releases_a_mapped_tensor_then_unmaps_it():
    result = run_c(compile_c(C_PROGRAM, "map_release"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
