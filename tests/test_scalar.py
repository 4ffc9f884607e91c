"""Scalars through the C API: creation, bit-exact copies, queries, virtual
scalars, and every error a caller can make."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import compile_c, ref, run_c

# type name -> (C type, NumPy dtype of its storage)
PLAIN = {
    "VX_TYPE_CHAR": ("vx_char", np.int8),
    "VX_TYPE_INT8": ("vx_int8", np.int8),
    "VX_TYPE_UINT8": ("vx_uint8", np.uint8),
    "VX_TYPE_INT16": ("vx_int16", np.int16),
    "VX_TYPE_UINT16": ("vx_uint16", np.uint16),
    "VX_TYPE_INT32": ("vx_int32", np.int32),
    "VX_TYPE_UINT32": ("vx_uint32", np.uint32),
    "VX_TYPE_INT64": ("vx_int64", np.int64),
    "VX_TYPE_UINT64": ("vx_uint64", np.uint64),
    "VX_TYPE_FLOAT16": ("uint16_t", np.float16),  # no vx_float16 in C: its bits
    "VX_TYPE_FLOAT32": ("vx_float32", np.float32),
    "VX_TYPE_FLOAT64": ("vx_float64", np.float64),
    "VX_TYPE_ENUM": ("vx_enum", np.int32),
    "VX_TYPE_SIZE": ("vx_size", np.uint64),
    "VX_TYPE_DF_IMAGE": ("vx_df_image", np.uint32),
    "VX_TYPE_BOOL": ("vx_bool", np.int32),
}

# type name -> (C struct or None where our headers have none, size)
STRUCTS = {
    "VX_TYPE_RECTANGLE": ("vx_rectangle_t", 16),
    "VX_TYPE_KEYPOINT": ("vx_keypoint_t", 28),
    "VX_TYPE_COORDINATES2D": ("vx_coordinates2d_t", 8),
    "VX_TYPE_COORDINATES3D": ("vx_coordinates3d_t", 12),
    "VX_TYPE_COORDINATES2DF": (None, 8),
    "VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS": ("vx_tensor_matrix_multiply_params_t", 12),
    "VX_TYPE_NN_CONVOLUTION_PARAMS": ("vx_nn_convolution_params_t", 48),
    "VX_TYPE_NN_DECONVOLUTION_PARAMS": ("vx_nn_deconvolution_params_t", 40),
    "VX_TYPE_NN_ROI_POOL_PARAMS": ("vx_nn_roi_pool_params_t", 4),
}

_NAN_BITS = {np.float16: 0x7E01, np.float32: 0x7FC12345, np.float64: 0x7FF8000000012345}


def extremes(type_name: str) -> list[bytes]:
    """The values whose bits must survive every copy: limits, zero, sign, and for
    floats the smallest subnormal, infinities, -0.0 and a NaN with a payload."""
    dtype = np.dtype(PLAIN[type_name][1])
    if type_name == "VX_TYPE_BOOL":
        values = [0, 1]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = [info.min, info.max, 0, 1] + ([-1] if dtype.kind == "i" else [])
    else:
        info = np.finfo(dtype)
        values = [info.max, -info.max, info.tiny, info.smallest_subnormal, np.inf, -np.inf, -0.0]
    raw = [np.array(v, dtype).tobytes() for v in values]
    if dtype.kind == "f":
        raw.append(int(_NAN_BITS[dtype.type]).to_bytes(dtype.itemsize, "little"))
    return raw


def c_value(vx, type_name: str, raw: bytes):
    """A C variable of the scalar's type holding the bytes ``raw``."""
    box = vx.ffi.new(PLAIN[type_name][0] + " *")
    vx.ffi.memmove(box, raw, len(raw))
    return box


def read(vx, scalar, size: int) -> bytes:
    out = vx.ffi.new("char[]", size)
    assert vx.vxCopyScalar(scalar, out, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    return bytes(vx.ffi.buffer(out, size))


def status(vx, handle) -> int:
    return vx.vxGetStatus(ref(vx, handle))


def release(vx, scalar) -> None:
    assert vx.vxReleaseScalar(vx.ffi.new("vx_scalar *", scalar)) == vx.VX_SUCCESS


@pytest.fixture
def scalar(vx, ctx):
    """An INT32 scalar holding 7."""
    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_INT32, vx.ffi.new("vx_int32 *", 7))
    yield s
    release(vx, s)


@pytest.fixture
def graph(vx, ctx):
    g = vx.vxCreateGraph(ctx)
    yield g
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", g)) == vx.VX_SUCCESS


# -- plain types --------------------------------------------------------------
@pytest.mark.parametrize("type_name", PLAIN)
def test_plain_scalar_keeps_extreme_values_bit_exactly(vx, ctx, type_name):
    vx_type = getattr(vx, type_name)
    for raw in extremes(type_name):
        s = vx.vxCreateScalar(ctx, vx_type, c_value(vx, type_name, raw))
        assert status(vx, s) == vx.VX_SUCCESS
        assert read(vx, s, len(raw)) == raw

        assert vx.vxCopyScalar(s, c_value(vx, type_name, bytes(len(raw))), vx.VX_WRITE_ONLY,
                               vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
        assert read(vx, s, len(raw)) == bytes(len(raw))
        assert vx.vxCopyScalar(s, c_value(vx, type_name, raw), vx.VX_WRITE_ONLY,
                               vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
        assert read(vx, s, len(raw)) == raw
        release(vx, s)

        s = vx.vxCreateScalarWithSize(ctx, vx_type, c_value(vx, type_name, raw), len(raw))
        assert status(vx, s) == vx.VX_SUCCESS
        out = vx.ffi.new("char[]", len(raw))
        assert vx.vxCopyScalarWithSize(s, len(raw), out, vx.VX_READ_ONLY,
                                       vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
        assert bytes(vx.ffi.buffer(out)) == raw
        release(vx, s)


@pytest.mark.parametrize("type_name", PLAIN)
def test_query_gives_the_type_and_null_pointer_gives_zero(vx, ctx, type_name):
    vx_type = getattr(vx, type_name)
    size = np.dtype(PLAIN[type_name][1]).itemsize
    s = vx.vxCreateScalar(ctx, vx_type, vx.ffi.NULL)
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryScalar(s, vx.VX_SCALAR_TYPE, out, vx.ffi.sizeof("vx_enum")) == vx.VX_SUCCESS
    assert out[0] == vx_type
    assert read(vx, s, size) == bytes(size)
    release(vx, s)


def test_c_type_sizes_match_the_storage(vx):
    for type_name, (ctype, dtype) in PLAIN.items():
        assert vx.ffi.sizeof(ctype) == np.dtype(dtype).itemsize, type_name


# -- struct types ---------------------------------------------------------------
def test_convolution_params_scalar_round_trips_every_field(vx, ctx):
    fields = {"padding_x": 3, "padding_y": 2**64 - 1,
              "overflow_policy": vx.VX_CONVERT_POLICY_SATURATE,
              "rounding_policy": vx.VX_ROUND_POLICY_TO_NEAREST_EVEN,
              "down_scale_size_rounding": vx.VX_NN_DS_SIZE_ROUNDING_CEILING,
              "dilation_x": 1, "dilation_y": 5}
    params = vx.ffi.new("vx_nn_convolution_params_t *", fields)
    size = vx.ffi.sizeof("vx_nn_convolution_params_t")
    s = vx.vxCreateScalarWithSize(ctx, vx.VX_TYPE_NN_CONVOLUTION_PARAMS, params, size)
    assert status(vx, s) == vx.VX_SUCCESS
    back = vx.ffi.new("vx_nn_convolution_params_t *")
    assert vx.vxCopyScalarWithSize(s, size, back, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    assert {name: getattr(back, name) for name in fields} == fields

    fields["dilation_y"] = 9
    params.dilation_y = 9
    assert vx.vxCopyScalarWithSize(s, size, params, vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    assert vx.vxCopyScalar(s, back, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    assert {name: getattr(back, name) for name in fields} == fields
    release(vx, s)


@pytest.mark.parametrize("type_name", STRUCTS)
def test_struct_scalar_round_trips_its_bytes(vx, ctx, type_name):
    ctype, size = STRUCTS[type_name]
    if ctype is not None:
        assert vx.ffi.sizeof(ctype) == size
    raw = bytes(range(1, size + 1))
    s = vx.vxCreateScalarWithSize(ctx, getattr(vx, type_name), raw, size)
    assert status(vx, s) == vx.VX_SUCCESS
    assert read(vx, s, size) == raw
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryScalar(s, vx.VX_SCALAR_TYPE, out, 4) == vx.VX_SUCCESS
    assert out[0] == getattr(vx, type_name)
    release(vx, s)


@pytest.mark.parametrize("type_name", STRUCTS)
def test_struct_type_needs_create_with_size(vx, ctx, log, type_name):
    s = vx.vxCreateScalar(ctx, getattr(vx, type_name), bytes(STRUCTS[type_name][1]))
    assert status(vx, s) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateScalar:", type_name, "vxCreateScalarWithSize")


# -- creation errors --------------------------------------------------------------
@pytest.mark.parametrize("vx_type", [0, 0x11, 0x2A, 0x999, -1, 0x807])
def test_unknown_type_is_invalid_type(vx, ctx, log, vx_type):
    for create in (lambda: vx.vxCreateScalar(ctx, vx_type, vx.ffi.NULL),
                   lambda: vx.vxCreateScalarWithSize(ctx, vx_type, vx.ffi.NULL, 4)):
        log.clear()
        assert status(vx, create()) == vx.VX_ERROR_INVALID_TYPE
        assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateScalar", "cannot be held by a scalar")


@pytest.mark.parametrize("type_name, size", [("VX_TYPE_INT32", 8), ("VX_TYPE_UINT8", 0),
                                             ("VX_TYPE_NN_CONVOLUTION_PARAMS", 40),
                                             ("VX_TYPE_RECTANGLE", 2**64 - 1)])
def test_create_with_wrong_size_is_invalid_parameters(vx, ctx, log, type_name, size):
    s = vx.vxCreateScalarWithSize(ctx, getattr(vx, type_name), vx.ffi.new("char[64]"), size)
    assert status(vx, s) == vx.VX_ERROR_INVALID_PARAMETERS
    expected = PLAIN[type_name] if type_name in PLAIN else STRUCTS[type_name]
    expected = np.dtype(expected[1]).itemsize if type_name in PLAIN else expected[1]
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateScalarWithSize", f"size {size}",
                   type_name, f"expected {expected}")


def test_bool_outside_false_true_is_invalid_value(vx, ctx, log):
    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_BOOL, vx.ffi.new("vx_bool *", 2))
    assert status(vx, s) == vx.VX_ERROR_INVALID_VALUE
    assert log.has(vx.VX_ERROR_INVALID_VALUE, "vxCreateScalar", "VX_TYPE_BOOL value 2", "vx_true_e")

    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_BOOL, vx.ffi.new("vx_bool *", vx.vx_true_e))
    assert vx.vxCopyScalar(s, vx.ffi.new("vx_bool *", -1), vx.VX_WRITE_ONLY,
                           vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_INVALID_VALUE
    assert log.has(vx.VX_ERROR_INVALID_VALUE, "vxCopyScalar", "VX_TYPE_BOOL value -1", "scalar")
    assert read(vx, s, 4) == (1).to_bytes(4, "little")
    release(vx, s)


def test_bad_context_gives_null(vx, ctx):
    bogus = vx.ffi.cast("vx_context", 0x1234)
    assert vx.vxCreateScalar(bogus, vx.VX_TYPE_INT32, vx.ffi.NULL) == vx.ffi.NULL
    assert vx.vxCreateScalarWithSize(vx.ffi.NULL, vx.VX_TYPE_INT32, vx.ffi.NULL, 4) == vx.ffi.NULL
    # a live reference of another type names its context: the failure is an error object
    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_INT32, vx.ffi.NULL)
    err = vx.vxCreateScalar(vx.ffi.cast("vx_context", s), vx.VX_TYPE_INT32, vx.ffi.NULL)
    assert status(vx, err) == vx.VX_ERROR_INVALID_REFERENCE
    release(vx, s)


def test_failed_creation_leaves_no_reference(vx, ctx):
    count = vx.ffi.new("vx_uint32 *")
    vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, count, 4)
    before = count[0]
    vx.vxCreateScalar(ctx, vx.VX_TYPE_BOOL, vx.ffi.new("vx_bool *", 5))
    vx.vxCreateScalarWithSize(ctx, vx.VX_TYPE_INT8, vx.ffi.NULL, 2)
    vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, count, 4)
    assert count[0] == before


# -- copy errors ------------------------------------------------------------------
@pytest.mark.parametrize("usage", ["VX_READ_AND_WRITE", 0, 0x11004])
def test_copy_with_bad_usage_is_invalid_parameters(vx, scalar, log, usage):
    usage = getattr(vx, usage) if isinstance(usage, str) else usage
    out = vx.ffi.new("vx_int32 *")
    assert vx.vxCopyScalar(scalar, out, usage, vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyScalar", "usage", f"{usage:#x}", "VX_READ_ONLY")
    assert vx.vxCopyScalarWithSize(scalar, 4, out, usage,
                                   vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyScalarWithSize", "usage")


@pytest.mark.parametrize("mem", ["VX_MEMORY_TYPE_NONE", 0])
def test_copy_with_bad_memory_type_is_invalid_parameters(vx, scalar, log, mem):
    mem = getattr(vx, mem) if isinstance(mem, str) else mem
    out = vx.ffi.new("vx_int32 *")
    assert vx.vxCopyScalar(scalar, out, vx.VX_READ_ONLY, mem) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyScalar", "memory type", f"{mem:#x}",
                   "VX_MEMORY_TYPE_HOST")


@pytest.mark.parametrize("usage", ["VX_READ_ONLY", "VX_WRITE_ONLY"])
def test_copy_with_null_pointer_is_invalid_parameters(vx, scalar, log, usage):
    for copy in (lambda: vx.vxCopyScalar(scalar, vx.ffi.NULL, getattr(vx, usage), vx.VX_MEMORY_TYPE_HOST),
                 lambda: vx.vxCopyScalarWithSize(scalar, 4, vx.ffi.NULL, getattr(vx, usage),
                                                 vx.VX_MEMORY_TYPE_HOST)):
        assert copy() == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyScalar:", "pointer", "NULL", "scalar")
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyScalarWithSize:", "pointer", "NULL")


@pytest.mark.parametrize("size", [0, 2, 8, 2**64 - 1])
def test_copy_with_wrong_size_is_invalid_parameters(vx, scalar, log, size):
    out = vx.ffi.new("vx_int64 *", 99)
    assert vx.vxCopyScalarWithSize(scalar, size, out, vx.VX_READ_ONLY,
                                   vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_INVALID_PARAMETERS
    assert out[0] == 99
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCopyScalarWithSize", f"size {size}",
                   "VX_TYPE_INT32", "expected 4")


def test_released_bogus_and_mistyped_handles_are_invalid_reference(vx, ctx, log):
    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_INT32, vx.ffi.NULL)
    holder = vx.ffi.new("vx_scalar *", s)
    assert vx.vxReleaseScalar(holder) == vx.VX_SUCCESS
    assert holder[0] == vx.ffi.NULL
    graph = vx.vxCreateGraph(ctx)
    out = vx.ffi.new("vx_int32 *")
    H, R = vx.VX_MEMORY_TYPE_HOST, vx.VX_ERROR_INVALID_REFERENCE
    for handle in (s, vx.ffi.cast("vx_scalar", 0xDEAD0), vx.ffi.NULL, vx.ffi.cast("vx_scalar", graph)):
        log.clear()
        assert vx.vxCopyScalar(handle, out, vx.VX_READ_ONLY, H) == R
        assert log.has(R, "vxCopyScalar:", "scalar")
        assert vx.vxCopyScalarWithSize(handle, 4, out, vx.VX_READ_ONLY, H) == R
        assert log.has(R, "vxCopyScalarWithSize:", "scalar")
        assert vx.vxQueryScalar(handle, vx.VX_SCALAR_TYPE, out, 4) == R
        assert log.has(R, "vxQueryScalar:")
        assert vx.vxReleaseScalar(vx.ffi.new("vx_scalar *", handle)) == R
        assert log.has(R, "vxReleaseScalar:")
    assert log.has(R, "vxCopyScalar:", "is a VX_TYPE_GRAPH, not a scalar")
    assert vx.vxReleaseScalar(vx.ffi.NULL) == R
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


def test_query_errors(vx, scalar, log):
    out = vx.ffi.new("vx_int64 *")
    assert vx.vxQueryScalar(scalar, vx.VX_SCALAR_TYPE, out, 8) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryScalar", "VX_SCALAR_TYPE", "size is 8")
    assert vx.vxQueryScalar(scalar, vx.VX_SCALAR_TYPE, vx.ffi.NULL, 4) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryScalar", "NULL")
    assert vx.vxQueryScalar(scalar, vx.VX_LUT_COUNT, out, 8) == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(vx.VX_ERROR_NOT_SUPPORTED, "vxQueryScalar", "VX_LUT_COUNT")


# -- virtual scalars ------------------------------------------------------------------
@pytest.mark.parametrize("type_name", ["VX_TYPE_INT32", "VX_TYPE_FLOAT16", "VX_TYPE_BOOL",
                                       "VX_TYPE_NN_ROI_POOL_PARAMS"])
def test_virtual_scalar_is_queryable_but_not_copyable(vx, graph, log, type_name):
    s = vx.vxCreateVirtualScalar(graph, getattr(vx, type_name))
    assert status(vx, s) == vx.VX_SUCCESS
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryScalar(s, vx.VX_SCALAR_TYPE, out, 4) == vx.VX_SUCCESS
    assert out[0] == getattr(vx, type_name)
    buf = vx.ffi.new("char[64]")
    for usage in (vx.VX_READ_ONLY, vx.VX_WRITE_ONLY):
        assert vx.vxCopyScalar(s, buf, usage, vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_OPTIMIZED_AWAY
    assert log.has(vx.VX_ERROR_OPTIMIZED_AWAY, "vxCopyScalar", "virtual")
    assert vx.vxCopyScalarWithSize(s, 4, buf, vx.VX_READ_ONLY,
                                   vx.VX_MEMORY_TYPE_HOST) == vx.VX_ERROR_OPTIMIZED_AWAY
    release(vx, s)


def test_virtual_scalar_errors(vx, ctx, graph, log):
    s = vx.vxCreateVirtualScalar(graph, vx.VX_TYPE_INVALID)
    assert status(vx, s) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateVirtualScalar", "VX_TYPE_INVALID")
    s = vx.vxCreateVirtualScalar(vx.ffi.cast("vx_graph", ctx), vx.VX_TYPE_INT32)
    assert status(vx, s) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxCreateVirtualScalar", "not a graph")
    assert vx.vxCreateVirtualScalar(vx.ffi.NULL, vx.VX_TYPE_INT32) == vx.ffi.NULL
    assert vx.vxCreateVirtualScalar(vx.ffi.cast("vx_graph", 0xBAD0), vx.VX_TYPE_INT32) == vx.ffi.NULL


# -- a C application --------------------------------------------------------------------
C_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

#define CHECK(cond) \
    do { if (!(cond)) { fprintf(stderr, "line %d: %s\n", __LINE__, #cond); return 1; } } while (0)

static vx_uint32 references(vx_context context)
{
    vx_uint32 n = 0;
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &n, sizeof n);
    return n;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_uint32 baseline = references(context);
    vx_int8 i8 = -128, i8_out = 0;
    vx_uint64 u64 = 0xFFFFFFFFFFFFFFFFull, u64_out = 0;
    vx_float32 f32 = -3.25e38f, f32_out = 0.0f;
    vx_bool b = vx_true_e, b_out = vx_false_e;
    vx_enum type = 0;
    vx_nn_convolution_params_t conv, conv_out;
    vx_scalar s8, s64, sf, sb, sconv;
    vx_lut lut;
    vx_int16 table[511], back[511];
    vx_size count = 0, size = 0;
    vx_uint32 offset = 0;
    vx_map_id map_id = 0;
    void *ptr = NULL;
    int i;

    CHECK(vxGetStatus((vx_reference)context) == VX_SUCCESS);
    s8 = vxCreateScalar(context, VX_TYPE_INT8, &i8);
    s64 = vxCreateScalar(context, VX_TYPE_UINT64, &u64);
    sf = vxCreateScalar(context, VX_TYPE_FLOAT32, NULL);
    sb = vxCreateScalarWithSize(context, VX_TYPE_BOOL, &b, sizeof b);
    memset(&conv, 0, sizeof conv);
    conv.padding_x = 2; conv.dilation_y = 3; conv.rounding_policy = VX_ROUND_POLICY_TO_ZERO;
    sconv = vxCreateScalarWithSize(context, VX_TYPE_NN_CONVOLUTION_PARAMS, &conv, sizeof conv);
    CHECK(vxGetStatus((vx_reference)sconv) == VX_SUCCESS);
    CHECK(references(context) == baseline + 5);

    CHECK(vxCopyScalar(s8, &i8_out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS && i8_out == -128);
    CHECK(vxCopyScalar(s64, &u64_out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS && u64_out == u64);
    CHECK(vxCopyScalar(sf, &f32_out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS && f32_out == 0.0f);
    CHECK(vxCopyScalar(sf, &f32, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS);
    CHECK(vxCopyScalar(sf, &f32_out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS && f32_out == f32);
    CHECK(vxCopyScalarWithSize(sb, sizeof b_out, &b_out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS);
    CHECK(b_out == vx_true_e);
    CHECK(vxCopyScalarWithSize(sconv, sizeof conv_out, &conv_out, VX_READ_ONLY,
                               VX_MEMORY_TYPE_HOST) == VX_SUCCESS);
    CHECK(memcmp(&conv, &conv_out, sizeof conv) == 0);
    CHECK(vxQueryScalar(sb, VX_SCALAR_TYPE, &type, sizeof type) == VX_SUCCESS && type == VX_TYPE_BOOL);
    CHECK(vxCopyScalar(s8, &i8_out, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST) == VX_ERROR_INVALID_PARAMETERS);

    lut = vxCreateLUT(context, VX_TYPE_INT16, 511);
    CHECK(vxGetStatus((vx_reference)lut) == VX_SUCCESS);
    CHECK(vxQueryLUT(lut, VX_LUT_COUNT, &count, sizeof count) == VX_SUCCESS && count == 511);
    CHECK(vxQueryLUT(lut, VX_LUT_SIZE, &size, sizeof size) == VX_SUCCESS && size == sizeof table);
    CHECK(vxQueryLUT(lut, VX_LUT_OFFSET, &offset, sizeof offset) == VX_SUCCESS && offset == 255);
    for (i = 0; i < 511; i++)
        table[i] = (vx_int16)(i * 64 - 32768);
    CHECK(vxCopyLUT(lut, table, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS);
    CHECK(vxMapLUT(lut, &map_id, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, VX_NOGAP_X) == VX_SUCCESS);
    CHECK(memcmp(ptr, table, sizeof table) == 0);
    ((vx_int16 *)ptr)[offset + 7] = 32767; /* the entry for value 7 */
    table[offset + 7] = 32767;
    CHECK(vxUnmapLUT(lut, map_id) == VX_SUCCESS);
    CHECK(vxUnmapLUT(lut, map_id) == VX_ERROR_INVALID_PARAMETERS);
    CHECK(vxCopyLUT(lut, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS);
    CHECK(memcmp(back, table, sizeof table) == 0);
    CHECK(references(context) == baseline + 6);

    CHECK(vxReleaseScalar(&s8) == VX_SUCCESS && s8 == NULL);
    CHECK(vxReleaseScalar(&s64) == VX_SUCCESS);
    CHECK(vxReleaseScalar(&sf) == VX_SUCCESS);
    CHECK(vxReleaseScalar(&sb) == VX_SUCCESS);
    CHECK(vxReleaseScalar(&sconv) == VX_SUCCESS);
    CHECK(vxReleaseLUT(&lut) == VX_SUCCESS && lut == NULL);
    CHECK(references(context) == baseline);
    CHECK(vxReleaseContext(&context) == VX_SUCCESS);
    puts("ok");
    return 0;
}
"""


def test_c_program_round_trips_scalars_and_an_int16_lut():
    result = run_c(compile_c(C_PROGRAM, "scalar_lut"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ok"


# -- what the graph engine sees ---------------------------------------------------------
def model_of(vx, handle):
    """The object-model object behind a handle (the library runs in this interpreter)."""
    from openvx_nn.core import reference
    return reference.find(int(vx.ffi.cast("uintptr_t", handle)))


def test_engine_reads_and_writes_values_that_the_application_sees(vx, ctx, graph):
    from openvx_nn.core.errors import VXError

    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_FLOAT16, vx.ffi.new("uint16_t *", 0x3E00))  # 1.5
    obj = model_of(vx, s)
    assert (obj.data_type, obj.size, obj.value, obj.bytes, obj.virtual) == \
        (vx.VX_TYPE_FLOAT16, 2, 1.5, b"\x00\x3e", False)
    obj.value = -2.0
    assert read(vx, s, 2) == np.array(-2.0, np.float16).tobytes()
    release(vx, s)

    s = vx.vxCreateScalar(ctx, vx.VX_TYPE_BOOL, vx.ffi.NULL)
    with pytest.raises(VXError) as err:
        model_of(vx, s).value = 2
    assert err.value.status == vx.VX_ERROR_INVALID_VALUE
    release(vx, s)

    s = vx.vxCreateVirtualScalar(graph, vx.VX_TYPE_NN_ROI_POOL_PARAMS)
    obj = model_of(vx, s)
    assert obj.virtual and obj.scope is model_of(vx, graph)
    assert obj.value == bytes(4)
    obj.value = vx.VX_NN_POOLING_MAX.to_bytes(4, "little")
    assert obj.bytes == vx.VX_NN_POOLING_MAX.to_bytes(4, "little")
    release(vx, s)
