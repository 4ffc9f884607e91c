"""The seven tensor operations through the C API, in three forms each: the
typed node constructor in a graph, the vxu immediate call, and a generic node
built by parameter index.  All three must equal the plain reference of
tests/kernels bit for bit, over random shapes (1 to 6 dims, broadcast
input2), every format and both policies."""
from __future__ import annotations

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    INT_FORMATS,
    Q78,
    S8,
    U8,
    assert_bits_equal,
    broadcast_shape,
    random_shape,
    random_values,
)
from test_convert_depth import reference_convert
from test_elementwise import reference_add_sub, reference_multiply
from test_lookup_transpose import reference_lookup, reference_transpose
from test_matmul import reference_matmul
from vxhelp import as_ref, empty, read, release, scalar, status, tensor

FORMS = ("node", "vxu", "generic")
SATURATE = {True: "VX_CONVERT_POLICY_SATURATE", False: "VX_CONVERT_POLICY_WRAP"}
ROUNDING = {True: "VX_ROUND_POLICY_TO_NEAREST_EVEN", False: "VX_ROUND_POLICY_TO_ZERO"}


def _run(vx, ctx, form, kernel, typed, immediate, params):
    """Run one operation in ``form``.  ``params`` lists the kernel parameters in
    the kernel's order as (reference) or ("enum"/"size", value) pairs; ``typed``
    and ``immediate`` make the typed node / vxu call from a graph / context."""
    if form == "vxu":
        assert immediate(ctx) == vx.VX_SUCCESS
        return
    graph = vx.vxCreateGraph(ctx)
    made = []
    if form == "node":
        node = typed(graph)
    else:
        k = vx.vxGetKernelByEnum(ctx, kernel)
        node = vx.vxCreateGenericNode(graph, k)
        for index, value in enumerate(params):
            if isinstance(value, tuple):
                kind, number = value
                ctype, type_name = {"enum": ("vx_enum", "VX_TYPE_ENUM"),
                                    "size": ("vx_size", "VX_TYPE_SIZE")}[kind]
                value = scalar(vx, ctx, ctype, number, type_name)
                made.append(value)
            if value is not None:
                assert vx.vxSetParameterByIndex(node, index, as_ref(vx, value)) == vx.VX_SUCCESS
        made.append(k)
    assert status(vx, node) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    release(vx, node, *made, graph)


def _fmt_tensor(vx, ctx, array, fmt):
    return tensor(vx, ctx, array, 0 if fmt.is_float else fmt.fpp)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("minus", [False, True], ids=["add", "subtract"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_add_and_subtract_match_the_reference(vx, ctx, fmt, minus, saturate, form):
    rng = np.random.default_rng([11, FORMATS.index(fmt), minus, saturate, FORMS.index(form)])
    shape = random_shape(rng, max_size=120)
    a = random_values(rng, fmt, shape)
    b = random_values(rng, fmt, broadcast_shape(rng, shape, 0.5))
    ta, tb = _fmt_tensor(vx, ctx, a, fmt), _fmt_tensor(vx, ctx, b, fmt)
    out = empty(vx, ctx, shape, fmt.dtype, 0 if fmt.is_float else fmt.fpp)
    policy = getattr(vx, SATURATE[saturate])
    make = vx.vxTensorSubtractNode if minus else vx.vxTensorAddNode
    now = vx.vxuTensorSubtract if minus else vx.vxuTensorAdd
    _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_SUBTRACT if minus else vx.VX_KERNEL_TENSOR_ADD,
         lambda g: make(g, ta, tb, policy, out), lambda c: now(c, ta, tb, policy, out),
         [ta, tb, ("enum", policy), out])
    expected = reference_add_sub(a, b, shape, fmt, saturate, minus)
    assert_bits_equal(read(vx, out, shape, fmt.dtype), expected)
    release(vx, ta, tb, out)


SCALES = [1.0, 0.5, 2.0 ** -7, 2.0 ** -15, 1 / 255, 0.3, 3.0]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("policies", [(True, True), (True, False), (False, True), (False, False)],
                         ids=["sat-even", "sat-zero", "wrap-even", "wrap-zero"])
@pytest.mark.parametrize("fmt", [U8, S8, Q78, F32], ids=str)
def test_multiply_matches_the_reference(vx, ctx, fmt, policies, scale, form):
    saturate, nearest = policies
    rng = np.random.default_rng([12, [U8, S8, Q78, F32].index(fmt), saturate, nearest,
                                 SCALES.index(scale), FORMS.index(form)])
    shape = random_shape(rng, max_size=100)
    a = random_values(rng, fmt, shape)
    b = random_values(rng, fmt, broadcast_shape(rng, shape, 0.5))
    ta, tb = _fmt_tensor(vx, ctx, a, fmt), _fmt_tensor(vx, ctx, b, fmt)
    out = empty(vx, ctx, shape, fmt.dtype, 0 if fmt.is_float else fmt.fpp)
    s = scalar(vx, ctx, "vx_float32", scale, "VX_TYPE_FLOAT32")
    ov, rd = getattr(vx, SATURATE[saturate]), getattr(vx, ROUNDING[nearest])
    _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_MULTIPLY,
         lambda g: vx.vxTensorMultiplyNode(g, ta, tb, s, ov, rd, out),
         lambda c: vx.vxuTensorMultiply(c, ta, tb, s, ov, rd, out),
         [ta, tb, s, ("enum", ov), ("enum", rd), out])
    expected = reference_multiply(a, b, shape, scale, fmt, fmt, fmt, saturate, nearest)
    assert_bits_equal(read(vx, out, shape, fmt.dtype), expected)
    release(vx, ta, tb, out, s)


def test_multiply_rounds_q78_ties_by_the_policy(vx, ctx):
    # 1.5 * 1.0 * 0.5 = 0.75 exact; 3 LSB * 1 LSB-unit products land on halves
    a = np.array([3, -3, 5, -5, 1, -1], np.int16)          # raw Q7.8
    b = np.full(6, 128, np.int16)                            # 0.5
    ta, tb = tensor(vx, ctx, a, 8), tensor(vx, ctx, b, 8)
    for nearest, expected in ((True, [2, -2, 2, -2, 0, 0]), (False, [1, -1, 2, -2, 0, 0])):
        out = empty(vx, ctx, (6,), np.int16, 8)
        s = scalar(vx, ctx, "vx_float32", 1.0, "VX_TYPE_FLOAT32")
        assert vx.vxuTensorMultiply(ctx, ta, tb, s, vx.VX_CONVERT_POLICY_SATURATE,
                                    getattr(vx, ROUNDING[nearest]), out) == vx.VX_SUCCESS
        assert read(vx, out, (6,), np.int16).tolist() == expected
        release(vx, out, s)
    release(vx, ta, tb)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fmt", [U8, Q78], ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_table_lookup_matches_the_reference(vx, ctx, fmt, seed, form):
    rng = np.random.default_rng([13, fmt.fpp, seed, FORMS.index(form)])
    shape = random_shape(rng, max_size=150)
    x = random_values(rng, fmt, shape)
    count = 256 if fmt is U8 else int(rng.choice([65536, 1000, 4097]))
    lut_values = random_values(rng, fmt, (count,))
    lut = vx.vxCreateLUT(ctx, vx.VX_TYPE_UINT8 if fmt is U8 else vx.VX_TYPE_INT16, count)
    assert vx.vxCopyLUT(lut, vx.ffi.from_buffer(lut_values), vx.VX_WRITE_ONLY,
                        vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    tx = _fmt_tensor(vx, ctx, x, fmt)
    out = empty(vx, ctx, shape, fmt.dtype, fmt.fpp)
    _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_TABLE_LOOKUP,
         lambda g: vx.vxTensorTableLookupNode(g, tx, lut, out),
         lambda c: vx.vxuTensorTableLookup(c, tx, lut, out), [tx, lut, out])
    offset = 0 if fmt is U8 else count // 2
    assert_bits_equal(read(vx, out, shape, fmt.dtype), reference_lookup(x, lut_values, offset))
    release(vx, tx, out, lut)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_transpose_matches_the_reference(vx, ctx, fmt, form):
    rng = np.random.default_rng([14, FORMATS.index(fmt), FORMS.index(form)])
    shape = random_shape(rng, ndim=int(rng.integers(2, 7)), max_size=200)
    d1, d2 = (int(d) for d in rng.choice(len(shape), 2, replace=False))
    x = random_values(rng, fmt, shape)
    expected = reference_transpose(x, d1, d2)
    tx = _fmt_tensor(vx, ctx, x, fmt)
    out = empty(vx, ctx, expected.shape, fmt.dtype, 0 if fmt.is_float else fmt.fpp)
    _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_TRANSPOSE,
         lambda g: vx.vxTensorTransposeNode(g, tx, out, d1, d2),
         lambda c: vx.vxuTensorTranspose(c, tx, out, d1, d2),
         [tx, ("size", d1), ("size", d2), out])
    assert_bits_equal(read(vx, out, expected.shape, fmt.dtype), expected)
    release(vx, tx, out)


CONVERSIONS = [(Q78, U8), (Q78, S8), (U8, Q78), (S8, Q78), (F32, Q78), (Q78, F32), (U8, S8), (F32, U8)]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("formats", CONVERSIONS, ids=lambda f: f"{f[0]}-{f[1]}")
def test_convert_depth_matches_the_reference(vx, ctx, formats, saturate, form):
    fin, fout = formats
    rng = np.random.default_rng([15, CONVERSIONS.index(formats), saturate, FORMS.index(form)])
    shape = random_shape(rng, max_size=150)
    x = random_values(rng, fin, shape)
    norm, offset = float(rng.choice([1.0, 0.5, 3.0, 0.1])), float(rng.choice([0.0, 3.25, -10.0]))
    tx = _fmt_tensor(vx, ctx, x, fin)
    out = empty(vx, ctx, shape, fout.dtype, 0 if fout.is_float else fout.fpp)
    n = scalar(vx, ctx, "vx_float32", norm, "VX_TYPE_FLOAT32")
    o = scalar(vx, ctx, "vx_float32", offset, "VX_TYPE_FLOAT32")
    policy = getattr(vx, SATURATE[saturate])
    _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_CONVERT_DEPTH,
         lambda g: vx.vxTensorConvertDepthNode(g, tx, policy, n, o, out),
         lambda c: vx.vxuTensorConvertDepth(c, tx, policy, n, o, out),
         [tx, ("enum", policy), n, o, out])
    expected = reference_convert(x, fin, fout, norm, offset, saturate)
    assert_bits_equal(read(vx, out, shape, fout.dtype), expected)
    release(vx, tx, out, n, o)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("flags", [(False, False, False), (True, False, True), (False, True, False),
                                   (True, True, True)], ids=lambda f: "".join("T" if x else "N" for x in f))
@pytest.mark.parametrize("with_c", [True, False], ids=["abc", "ab"])
@pytest.mark.parametrize("fmt", [U8, S8, Q78, F32], ids=str)
def test_matrix_multiply_matches_the_reference(vx, ctx, fmt, with_c, flags, form):
    ta_, tb_, tc_ = flags
    rng = np.random.default_rng([16, [U8, S8, Q78, F32].index(fmt), with_c, *flags, FORMS.index(form)])
    m, k, n = (int(v) for v in rng.integers(1, 9, 3))
    a = random_values(rng, fmt, (m, k) if ta_ else (k, m))
    b = random_values(rng, fmt, (k, n) if tb_ else (n, k))
    c = random_values(rng, fmt, (m, n) if tc_ else (n, m)) if with_c else None
    tensors = [_fmt_tensor(vx, ctx, x, fmt) for x in (a, b)]
    t3 = _fmt_tensor(vx, ctx, c, fmt) if with_c else None
    out = empty(vx, ctx, (n, m), fmt.dtype, 0 if fmt.is_float else fmt.fpp)
    params = vx.ffi.new("vx_tensor_matrix_multiply_params_t *", list(flags))
    param_scalar = vx.vxCreateScalarWithSize(ctx, vx.VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS, params,
                                             vx.ffi.sizeof("vx_tensor_matrix_multiply_params_t"))
    null3 = t3 if t3 is not None else vx.ffi.NULL
    _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_MATRIX_MULTIPLY,
         lambda g: vx.vxTensorMatrixMultiplyNode(g, tensors[0], tensors[1], null3, params, out),
         lambda cx: vx.vxuTensorMatrixMultiply(cx, tensors[0], tensors[1], null3, params, out),
         [tensors[0], tensors[1], t3, param_scalar, out])
    expected = reference_matmul(a, b, c, fmt, fmt, fmt, fmt, ta_, tb_, tc_)
    assert_bits_equal(read(vx, out, (n, m), fmt.dtype), expected)
    release(vx, *tensors, out, param_scalar, *([t3] if with_c else []))


@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_generic_node_gives_the_same_bytes_as_the_typed_constructor(vx, ctx, fmt):
    rng = np.random.default_rng([17, INT_FORMATS.index(fmt)])
    shape = random_shape(rng, max_size=200)
    a, b = random_values(rng, fmt, shape), random_values(rng, fmt, shape)
    ta, tb = _fmt_tensor(vx, ctx, a, fmt), _fmt_tensor(vx, ctx, b, fmt)
    results = []
    for form in ("node", "generic"):
        out = empty(vx, ctx, shape, fmt.dtype, fmt.fpp)
        s = scalar(vx, ctx, "vx_float32", 0.5, "VX_TYPE_FLOAT32")
        ov, rd = vx.VX_CONVERT_POLICY_WRAP, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
        _run(vx, ctx, form, vx.VX_KERNEL_TENSOR_MULTIPLY,
             lambda g, s=s, ov=ov, rd=rd, out=out: vx.vxTensorMultiplyNode(g, ta, tb, s, ov, rd, out), None,
             [ta, tb, s, ("enum", ov), ("enum", rd), out])
        results.append(read(vx, out, shape, fmt.dtype).tobytes())
        release(vx, out, s)
    assert results[0] == results[1]
    release(vx, ta, tb)


def test_vxu_reports_a_verification_failure(vx, ctx, log):
    a, b = empty(vx, ctx, (4,), np.uint8), empty(vx, ctx, (5,), np.uint8)
    out = empty(vx, ctx, (4,), np.uint8)
    assert vx.vxuTensorAdd(ctx, a, b, vx.VX_CONVERT_POLICY_WRAP, out) == vx.VX_ERROR_INVALID_DIMENSION
    assert log.has(vx.VX_ERROR_INVALID_DIMENSION, "vxVerifyGraph", "tensor_add", "parameter 1")
    assert vx.vxuTensorAdd(ctx, a, a, 0x1234, out) == vx.VX_ERROR_INVALID_VALUE
    assert log.has(vx.VX_ERROR_INVALID_VALUE, "parameter 2", "policy")
    release(vx, a, b, out)
