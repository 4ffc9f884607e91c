"""Every tensor operation through the Pythonic API gives exactly what the
C-style path (the ``vxu`` immediate functions through libopenvx.so) gives."""
from __future__ import annotations

import numpy as np
import pytest
from api_testing import leak_checked_context
from kernel_testing import F32, Q78, S8, U8, random_values
from vxhelp import empty, read, release, scalar, tensor

FORMATS = [Q78, S8, U8, F32]


@pytest.fixture
def context():
    yield from leak_checked_context()


def _c_style(vx, fmt, inputs, out_shape, call, out_fmt=None):
    """Run ``call(ctx, *input_handles, out_handle)`` on fresh C-style tensors; the output array."""
    out_fmt = out_fmt or fmt
    ctx = vx.vxCreateContext()
    handles = [tensor(vx, ctx, a, fmt.fpp) for a in inputs]
    out = empty(vx, ctx, out_shape, out_fmt.dtype, out_fmt.fpp)
    made = call(vx, ctx, *handles, out)
    result = read(vx, out, out_shape, out_fmt.dtype)
    release(vx, *handles, out, *made)
    vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx))
    return result


def _api(ctx, fmt, inputs, build, out_fmt=None):
    out_fmt = out_fmt or fmt
    ts = [ctx.tensor(a, fixed_point_position=fmt.fpp) for a in inputs]
    with ctx.graph() as g:
        out = build(g, *ts)
        g.verify()
        assert not out.virtual
        g.process()
    return out.numpy()


def _pair(fmt, shape=(4, 3, 2), broadcast=(4, 1, 2)):
    rng = np.random.default_rng(11)
    return random_values(rng, fmt, shape), random_values(rng, fmt, broadcast)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("op", ["add", "subtract"])
@pytest.mark.parametrize("overflow", ["saturate", "wrap"])
def test_add_and_subtract_with_broadcasting_equal_the_c_path(vx, context, fmt, op, overflow):
    a, b = _pair(fmt)
    policy = vx.VX_CONVERT_POLICY_SATURATE if overflow == "saturate" else vx.VX_CONVERT_POLICY_WRAP
    fn = vx.vxuTensorAdd if op == "add" else vx.vxuTensorSubtract
    want = _c_style(vx, fmt, [a, b], a.shape, lambda vx, c, x, y, o: (fn(c, x, y, policy, o), [])[1])
    got = _api(context, fmt, [a, b], lambda g, x, y: getattr(g, op)(
        x, y, context.tensor(shape=a.shape, dtype=fmt.dtype, fixed_point_position=fmt.fpp), overflow=overflow))
    assert np.array_equal(got, want, equal_nan=fmt.is_float)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("rounding", ["nearest_even", "to_zero"])
def test_multiply_with_a_scale_equals_the_c_path(vx, context, fmt, rounding):
    a, b = _pair(fmt)
    rd = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN if rounding == "nearest_even" else vx.VX_ROUND_POLICY_TO_ZERO

    def c_call(vx, c, x, y, o):
        s = scalar(vx, c, "vx_float32", 0.75, "VX_TYPE_FLOAT32")
        assert vx.vxuTensorMultiply(c, x, y, s, vx.VX_CONVERT_POLICY_SATURATE, rd, o) == vx.VX_SUCCESS
        return [s]

    want = _c_style(vx, fmt, [a, b], a.shape, c_call)
    got = _api(context, fmt, [a, b], lambda g, x, y: g.multiply(
        x, y, context.tensor(shape=a.shape, dtype=fmt.dtype, fixed_point_position=fmt.fpp), scale=0.75,
        rounding=rounding))
    assert np.array_equal(got, want, equal_nan=fmt.is_float)


@pytest.mark.parametrize("fmt", [U8, Q78], ids=str)
def test_table_lookup_equals_the_c_path(vx, context, fmt):
    rng = np.random.default_rng(12)
    a = random_values(rng, fmt, (5, 3))
    count = 256 if fmt.dtype == np.uint8 else 65536
    table = rng.integers(np.iinfo(fmt.dtype).min, np.iinfo(fmt.dtype).max, count).astype(fmt.dtype)

    def c_call(vx, c, x, o):
        lut = vx.vxCreateLUT(c, vx.VX_TYPE_UINT8 if fmt.dtype == np.uint8 else vx.VX_TYPE_INT16, count)
        assert vx.vxCopyLUT(lut, vx.ffi.from_buffer(table), vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST) == 0
        assert vx.vxuTensorTableLookup(c, x, lut, o) == vx.VX_SUCCESS
        return [lut]

    want = _c_style(vx, fmt, [a], a.shape, c_call)
    lut = context.lut(table)
    assert np.array_equal(lut.numpy(), table)
    got = _api(context, fmt, [a], lambda g, x: g.table_lookup(
        x, lut, context.tensor(shape=a.shape, dtype=fmt.dtype, fixed_point_position=fmt.fpp)))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_transpose_equals_the_c_path_and_numpy(vx, context, fmt):
    a = random_values(np.random.default_rng(13), fmt, (4, 3, 2))
    want = _c_style(vx, fmt, [a], (2, 3, 4),
                    lambda vx, c, x, o: (vx.vxuTensorTranspose(c, x, o, 0, 2), [])[1])
    got = _api(context, fmt, [a], lambda g, x: g.transpose(
        x, 0, 2, context.tensor(shape=(2, 3, 4), dtype=fmt.dtype, fixed_point_position=fmt.fpp)))
    assert np.array_equal(got, want, equal_nan=fmt.is_float)
    assert np.array_equal(got, np.swapaxes(a, 0, 2), equal_nan=fmt.is_float)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_convert_depth_to_q78_equals_the_c_path(vx, context, fmt):
    a = random_values(np.random.default_rng(14), fmt, (4, 3))

    def c_call(vx, c, x, o):
        n = scalar(vx, c, "vx_float32", 2.0, "VX_TYPE_FLOAT32")
        off = scalar(vx, c, "vx_float32", 1.0, "VX_TYPE_FLOAT32")
        assert vx.vxuTensorConvertDepth(c, x, vx.VX_CONVERT_POLICY_SATURATE, n, off, o) == vx.VX_SUCCESS
        return [n, off]

    want = _c_style(vx, fmt, [a], a.shape, c_call, Q78)
    got = _api(context, fmt, [a], lambda g, x: g.convert_depth(
        x, out=context.tensor(shape=a.shape, dtype=np.int16, fixed_point_position=8), norm=2.0, offset=1.0))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_matrix_multiply_with_transposes_equals_the_c_path(vx, context, fmt):
    rng = np.random.default_rng(15)
    a = (random_values(rng, fmt, (4, 3)) // (1 if fmt.is_float else 8)).astype(fmt.dtype)  # read transposed
    b = (random_values(rng, fmt, (5, 3)) // (1 if fmt.is_float else 8)).astype(fmt.dtype)
    c = random_values(rng, fmt, (5, 4))

    def c_call(vx, ctx, x, y, z, o):
        p = vx.ffi.new("vx_tensor_matrix_multiply_params_t *", {"transpose_input1": 1})
        assert vx.vxuTensorMatrixMultiply(ctx, x, y, z, p, o) == vx.VX_SUCCESS
        return []

    want = _c_style(vx, fmt, [a, b, c], (5, 4), c_call)
    got = _api(context, fmt, [a, b, c], lambda g, x, y, z: g.matrix_multiply(
        x, y, z, context.tensor(shape=(5, 4), dtype=fmt.dtype, fixed_point_position=fmt.fpp), transpose_a=True))
    assert np.array_equal(got, want, equal_nan=fmt.is_float)
