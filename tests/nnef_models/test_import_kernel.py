"""The kernel ``vxImportKernelFromURL`` returns, used from Python's C-style API: its node's output feeds a
standard layer through a virtual tensor whose meta-data the import declared, and the imported kernel is
published in the context like a user kernel."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openvx_nn import nnef as nn

from .conftest import NEEDS_PARSER, import_kernel

pytest.importorskip("nnef", reason=NEEDS_PARSER)


def _folder(tmp: Path) -> Path:
    folder = tmp / "model.nnef"
    folder.mkdir()
    (folder / "graph.nnef").write_text(
        "version 1.0;\ngraph G( a, b ) -> ( s, d )\n{\n    a = external(shape = [2, 3]);\n"
        "    b = external(shape = [2, 3]);\n    s = add(a, b);\n    d = sub(a, b);\n}\n")
    return folder


def _tensor(vx, ctx, shape, values=None):
    dims = vx.ffi.new(f"vx_size[{len(shape)}]", list(shape))
    t = vx.vxCreateTensor(ctx, len(shape), dims, vx.VX_TYPE_FLOAT32, 0)
    if values is not None:
        _copy(vx, t, shape, values, vx.VX_WRITE_ONLY)
    return t


def _copy(vx, t, shape, array, usage):
    """The tensor's bytes as NNEF lays them out (dims in NNEF order, NNEF's last axis fastest in memory)."""
    n = len(shape)
    start = vx.ffi.new(f"vx_size[{n}]", [0] * n)
    end = vx.ffi.new(f"vx_size[{n}]", list(shape))
    strides = [4]
    for d in shape[:-1]:
        strides.append(strides[-1] * d)
    stride = vx.ffi.new(f"vx_size[{n}]", strides)
    buffer = vx.ffi.from_buffer(array)
    assert vx.vxCopyTensorPatch(t, n, start, end, stride, buffer, usage, vx.VX_MEMORY_TYPE_HOST) == 0


def test_an_imported_node_feeds_a_standard_layer_through_a_virtual_tensor(vx, tmp_path):
    ctx = vx.vxCreateContext()
    kernel = vx.ffi.cast("vx_kernel", import_kernel()(int(vx.ffi.cast("uintptr_t", ctx)), b"nnef",
                                                        str(_folder(tmp_path)).encode()))
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", kernel)) == 0
    count = vx.ffi.new("vx_uint32 *")
    vx.vxQueryKernel(kernel, vx.VX_KERNEL_PARAMETERS, count, 4)
    assert count[0] == 4
    name = vx.ffi.new("vx_char[256]")
    vx.vxQueryKernel(kernel, vx.VX_KERNEL_NAME, name, 256)
    found = vx.vxGetKernelByName(ctx, name)  # published in the context's kernel table
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", found)) == 0

    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (2, 3)).astype(np.float32), rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    graph = vx.vxCreateGraph(ctx)
    ta, tb, ts = _tensor(vx, ctx, (2, 3), a), _tensor(vx, ctx, (2, 3), b), _tensor(vx, ctx, (2, 3))
    dims = vx.ffi.new("vx_size[2]", [2, 3])
    virtual = vx.vxCreateVirtualTensor(graph, 0, vx.ffi.NULL, 0, 0)  # dims and type from the import's meta format
    relu = _tensor(vx, ctx, (2, 3))
    node = vx.vxCreateGenericNode(graph, kernel)
    for index, t in enumerate((ta, tb, ts, virtual)):
        assert vx.vxSetParameterByIndex(node, index, vx.ffi.cast("vx_reference", t)) == 0
    layer = vx.vxActivationLayer(graph, virtual, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, relu)
    assert vx.vxVerifyGraph(graph) == 0
    assert vx.vxProcessGraph(graph) == 0
    got_sum, got_relu = np.empty((2, 3), np.float32), np.empty((2, 3), np.float32)
    _copy(vx, ts, (2, 3), got_sum, vx.VX_READ_ONLY)
    _copy(vx, relu, (2, 3), got_relu, vx.VX_READ_ONLY)
    assert np.array_equal(got_sum, a + b)
    assert np.array_equal(got_relu, np.maximum(a - b, 0))
    del dims
    for handle, release in ((node, vx.vxReleaseNode), (layer, vx.vxReleaseNode), (ta, vx.vxReleaseTensor),
                            (tb, vx.vxReleaseTensor), (ts, vx.vxReleaseTensor), (virtual, vx.vxReleaseTensor),
                            (relu, vx.vxReleaseTensor), (graph, vx.vxReleaseGraph), (found, vx.vxReleaseKernel),
                            (kernel, vx.vxReleaseKernel), (ctx, vx.vxReleaseContext)):
        assert release(vx.ffi.new(f"{vx.ffi.typeof(handle).cname} *", handle)) == 0


def test_predict_and_the_imported_node_agree_on_the_layout(vx, tmp_path):
    """The node's tensors hold NNEF's bytes with dims in NNEF order: the same numbers predict gives (a transpose
    and a product, which a wrong layout would change)."""
    folder = tmp_path / "layout.nnef"
    folder.mkdir()
    (folder / "graph.nnef").write_text(
        "version 1.0;\ngraph G( a, b ) -> ( s, d )\n{\n    a = external(shape = [2, 3]);\n"
        "    b = external(shape = [3, 2]);\n    s = transpose(a, axes = [1, 0]);\n    d = matmul(b, a);\n}\n")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2) - 2.5
    with nn.load(folder) as model:
        expected = model.predict({"a": a, "b": b})
    assert np.array_equal(expected["s"], a.T) and np.array_equal(expected["d"], b @ a)
    ctx = vx.vxCreateContext()
    kernel = vx.ffi.cast("vx_kernel", import_kernel()(int(vx.ffi.cast("uintptr_t", ctx)), b"vx_khr_nnef",
                                                        str(folder).encode()))
    graph = vx.vxCreateGraph(ctx)
    tensors = [_tensor(vx, ctx, (2, 3), a), _tensor(vx, ctx, (3, 2), b), _tensor(vx, ctx, (3, 2)),
               _tensor(vx, ctx, (3, 3))]
    node = vx.vxCreateGenericNode(graph, kernel)
    for index, t in enumerate(tensors):
        vx.vxSetParameterByIndex(node, index, vx.ffi.cast("vx_reference", t))
    assert vx.vxProcessGraph(graph) == 0
    for t, name in zip(tensors[2:], ("s", "d")):
        got = np.empty(expected[name].shape, np.float32)
        _copy(vx, t, got.shape, got, vx.VX_READ_ONLY)
        assert np.array_equal(got, expected[name])
    assert vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx)) == 0


def _bool_tensor(vx, ctx, shape):
    dims = vx.ffi.new(f"vx_size[{len(shape)}]", list(shape))
    return vx.vxCreateTensor(ctx, len(shape), dims, vx.VX_TYPE_BOOL, 0)


def _copy_bools(vx, t, array, usage, item=4):
    """``array`` (int32, NNEF order) in or out of a VX_TYPE_BOOL tensor, ``item`` bytes per element."""
    n = array.ndim
    start, end = vx.ffi.new(f"vx_size[{n}]", [0] * n), vx.ffi.new(f"vx_size[{n}]", list(array.shape))
    strides = [item]
    for d in array.shape[:-1]:
        strides.append(strides[-1] * d)
    stride = vx.ffi.new(f"vx_size[{n}]", strides)
    return vx.vxCopyTensorPatch(t, n, start, end, stride, vx.ffi.from_buffer(array), usage, vx.VX_MEMORY_TYPE_HOST)


def test_logical_parameters_are_vx_bool_tensors_of_four_byte_elements(vx, tmp_path):
    """NNEF ``logical`` is VX_TYPE_BOOL: the meta format says so, the node takes vx_bool tensors (sizeof(vx_bool),
    a vx_enum, per element; any value other than vx_false_e counts as true) and writes vx_true_e / vx_false_e;
    a tensor of the old stand-in type (UINT8) fails verification naming both types."""
    folder = tmp_path / "logical.nnef"
    folder.mkdir()
    (folder / "graph.nnef").write_text(
        "version 1.0;\ngraph G( m, x ) -> ( y, k )\n{\n    m = external<logical>(shape = [2, 5]);\n"
        "    x = external(shape = [2, 5]);\n    y = select(m, x, 0.0);\n    k = and(not(m), gt(x, 0.0));\n}\n")
    rng = np.random.default_rng(11)
    mask = rng.integers(0, 2, (2, 5)).astype(np.int32) * rng.choice([1, 7, -1], (2, 5)).astype(np.int32)
    x = rng.uniform(-1, 1, (2, 5)).astype(np.float32)
    truth = mask != 0  # a plain reading of select, and, not and gt
    want_y, want_k = np.where(truth, x, 0.0).astype(np.float32), (~truth & (x > 0)).astype(np.int32)

    ctx = vx.vxCreateContext()
    kernel = vx.ffi.cast("vx_kernel", import_kernel()(int(vx.ffi.cast("uintptr_t", ctx)), b"nnef", str(folder).encode()))
    types = []
    for index in range(4):
        p = vx.vxGetKernelParameterByIndex(kernel, index)
        meta = vx.ffi.new("vx_meta_format *")
        assert vx.vxQueryParameter(p, vx.VX_PARAMETER_META_FORMAT, meta, vx.ffi.sizeof(meta[0])) == 0
        kind = vx.ffi.new("vx_enum *")
        assert vx.vxQueryMetaFormatAttribute(meta[0], vx.VX_TENSOR_DATA_TYPE, kind, 4) == 0
        types.append(kind[0])
        vx.vxReleaseParameter(vx.ffi.new("vx_parameter *", p))
    assert types == [vx.VX_TYPE_BOOL, vx.VX_TYPE_FLOAT32, vx.VX_TYPE_FLOAT32, vx.VX_TYPE_BOOL]

    tm, tk = _bool_tensor(vx, ctx, (2, 5)), _bool_tensor(vx, ctx, (2, 5))
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", tm)) == 0
    assert _copy_bools(vx, tm, mask, vx.VX_WRITE_ONLY, item=1) != 0  # a vx_bool is four bytes, not one
    assert _copy_bools(vx, tm, mask, vx.VX_WRITE_ONLY) == 0
    tx, ty = _tensor(vx, ctx, (2, 5), x), _tensor(vx, ctx, (2, 5))
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxCreateGenericNode(graph, kernel)
    for index, t in enumerate((tm, tx, ty, tk)):
        assert vx.vxSetParameterByIndex(node, index, vx.ffi.cast("vx_reference", t)) == 0
    assert vx.vxProcessGraph(graph) == 0
    got_y, got_k = np.empty((2, 5), np.float32), np.full((2, 5), 9, np.int32)
    _copy(vx, ty, (2, 5), got_y, vx.VX_READ_ONLY)
    assert _copy_bools(vx, tk, got_k, vx.VX_READ_ONLY) == 0
    assert np.array_equal(got_y, want_y) and np.array_equal(got_k, want_k)

    dims = vx.ffi.new("vx_size[2]", [2, 5])
    bytes_mask = vx.vxCreateTensor(ctx, 2, dims, vx.VX_TYPE_UINT8, 0)
    assert vx.vxSetParameterByIndex(node, 0, vx.ffi.cast("vx_reference", bytes_mask)) == 0
    assert vx.vxVerifyGraph(graph) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx)) == 0


def test_built_in_kernels_refuse_bool_tensors_at_verify_and_bools_take_no_fixed_point(vx):
    ctx = vx.vxCreateContext()
    dims = vx.ffi.new("vx_size[3]", [4, 4, 2])
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", vx.vxCreateTensor(ctx, 3, dims, vx.VX_TYPE_BOOL, 1))) == \
        vx.VX_ERROR_INVALID_VALUE
    flags = vx.vxCreateTensor(ctx, 3, dims, vx.VX_TYPE_BOOL, 0)
    out = vx.vxCreateTensor(ctx, 3, dims, vx.VX_TYPE_FLOAT32, 0)
    graph = vx.vxCreateGraph(ctx)
    vx.vxActivationLayer(graph, flags, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, out)
    assert vx.vxVerifyGraph(graph) == vx.VX_ERROR_INVALID_TYPE
    assert vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx)) == 0
