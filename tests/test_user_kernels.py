"""User kernels from Python: a Python (or numba) body over NumPy arrays, verified and run by the
library like any kernel; kernel modules and user structs through the C-style API.

The leaky ReLU reference is written plainly here (floor of x * alpha / 256 on Q7.8 values); the
layers around the user node are each run on their own and compared with the one-graph chain.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from api_testing import leak_checked_context
from conftest import ROOT, compile_c, config_flags
from numba import njit

from openvx_nn.api import (
    InvalidFormatError,
    InvalidValueError,
    TensorInfo,
    VXError,
    scalar_input,
    tensor_input,
    tensor_output,
)


@pytest.fixture
def context():
    yield from leak_checked_context()


def leaky_reference(x: np.ndarray, alpha: int) -> np.ndarray:
    out = []
    for v in x.ravel(order="F").tolist():
        if v < 0:
            p = v * alpha
            v = p // 256  # Python's // floors, as the kernels' arithmetic shift does
            v = max(-32768, min(32767, v))
        out.append(v)
    return np.array(out, np.int16).reshape(x.shape, order="F")


def leaky_body(x, alpha, y):
    y[...] = np.where(x >= 0, x, np.clip((x.astype(np.int32) * alpha) >> 8, -32768, 32767))


def leaky_validate(x: TensorInfo, alpha):
    if x.dtype != np.int16 or x.fixed_point_position != 8:
        raise InvalidFormatError(-14, "leaky_validate", f"Q7.8 input expected, got {x}")
    return [x]


PARAMS = [tensor_input(), scalar_input(np.int16), tensor_output()]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_python_leaky_relu_between_convolution_and_softmax_matches_the_reference(context, seed):
    rng = np.random.default_rng(seed)
    w, h, c, k = (int(v) for v in rng.integers(2, 6, 4))
    alpha = int(rng.integers(-300, 300))
    x = rng.integers(-768, 768, (w, h, c)).astype(np.int16)
    weights = rng.integers(-256, 256, (1, 1, c, k)).astype(np.int16)
    kernel = context.add_kernel("test.leaky_relu", leaky_body, PARAMS, leaky_validate)
    tx = context.tensor(x, fixed_point_position=8)
    tw = context.tensor(weights, fixed_point_position=8)

    conv = context.tensor(shape=(w, h, k), dtype=np.int16, fixed_point_position=8)
    with context.graph() as g:
        g.convolution(tx, tw, out=conv)
        g.process()
    leaky = context.tensor(leaky_reference(conv.numpy(), alpha), fixed_point_position=8)
    expected = context.tensor(shape=(w, h, k), dtype=np.int16, fixed_point_position=8)
    with context.graph() as g:
        g.softmax(leaky, out=expected)
        g.process()

    out = context.tensor(shape=(w, h, k), dtype=np.int16, fixed_point_position=8)
    with context.graph() as g:
        middle, activated = g.virtual(), g.virtual()  # shapes left to the layer and the user validator
        g.convolution(tx, tw, out=middle)
        g.node(kernel, middle, alpha, activated)
        g.softmax(activated, out=out)
        g.process()
        g.process()
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_a_numba_body_runs_and_matches_the_reference(context):
    @njit(cache=False)
    def body(x, alpha, y):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                v = np.int32(x[i, j])
                y[i, j] = v if v >= 0 else max(-32768, min(32767, (v * alpha) >> 8))

    kernel = context.add_kernel("test.leaky_numba", body, PARAMS, leaky_validate)
    x = np.random.default_rng(5).integers(-32768, 32767, (7, 5)).astype(np.int16)
    tx, ty = context.tensor(x, fixed_point_position=8), context.tensor(shape=(7, 5), dtype=np.int16,
                                                                       fixed_point_position=8)
    with context.graph() as g:
        g.node(kernel, tx, 77, ty)
        g.process()
    np.testing.assert_array_equal(ty.numpy(), leaky_reference(x, 77))


def test_a_rejecting_validator_fails_verification_with_its_status(context):
    kernel = context.add_kernel("test.leaky_reject", leaky_body, PARAMS, leaky_validate)
    x = context.tensor(np.zeros((3, 2), np.int8))
    y = context.tensor(shape=(3, 2), dtype=np.int8)
    with context.graph() as g:
        g.node(kernel, x, 1, y)
        with pytest.raises(InvalidFormatError, match="test.leaky_reject"):
            g.verify()


def test_an_output_contradicting_the_validator_fails_verification(context):
    kernel = context.add_kernel("test.leaky_shape", leaky_body, PARAMS, leaky_validate)
    x = context.tensor(np.zeros((3, 2), np.int16), fixed_point_position=8)
    y = context.tensor(shape=(2, 3), dtype=np.int16, fixed_point_position=8)
    with context.graph() as g:
        g.node(kernel, x, 1, y)
        with pytest.raises(VXError, match="INVALID_DIMENSION"):
            g.verify()


@pytest.mark.parametrize("raised, error, status_name", [
    (InvalidValueError(-16, "body", "alpha is out of range"), InvalidValueError, "VX_ERROR_INVALID_VALUE"),
    (ZeroDivisionError("boom in the body"), VXError, "VX_FAILURE"),
])
def test_a_failing_body_fails_the_graph_with_its_status_and_message(context, raised, error, status_name):
    def body(x, alpha, y):
        raise raised

    kernel = context.add_kernel("test.failing", body, PARAMS, leaky_validate)
    x = context.tensor(np.zeros((3, 2), np.int16), fixed_point_position=8)
    y = context.tensor(shape=(3, 2), dtype=np.int16, fixed_point_position=8)
    with context.graph() as g:
        g.node(kernel, x, 1, y)
        with pytest.raises(error) as caught:
            g.process()
        assert caught.value.status_name == status_name
        assert "test.failing" in caught.value.log
        assert str(raised) in caught.value.log
        assert g.state == "abandoned"


def test_bad_kernel_definitions_are_refused_by_name(context):
    with pytest.raises(TypeError, match="run must be callable"):
        context.add_kernel("test.bad", 3, PARAMS)
    with pytest.raises(TypeError, match=r"params\[1\]"):
        context.add_kernel("test.bad", leaky_body, [tensor_input(), "scalar"])
    with pytest.raises(TypeError, match="dtype"):
        scalar_input(np.complex64)
    context.add_kernel("test.twice", leaky_body, PARAMS, leaky_validate)
    with pytest.raises(VXError, match="INVALID_PARAMETERS"):
        context.add_kernel("test.twice", leaky_body, PARAMS, leaky_validate)
    kernel = context.add_kernel("test.arity", leaky_body, PARAMS, leaky_validate)
    with context.graph() as g, pytest.raises(ValueError, match="takes 3 arguments"):
        g.node(kernel, None)


# -- kernel modules and user structs (C-style API) ---------------------------------------------------
@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """The conformance suite's kernel module, built here as any application would build one."""
    out = tmp_path_factory.mktemp("modules")
    source = ROOT / "conformance" / "modules" / "ct_module.c"
    for name, defines in (("libct_module.so", []), ("libct_module_fails.so", ["-DCT_PUBLISH_FAILS"])):
        subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-shared", "-fPIC", *defines, str(source),
                        *config_flags(), "-o", str(out / name)], check=True)
    return out


def _module_kernel_runs(vx, ctx) -> bool:
    kernel = vx.vxGetKernelByName(ctx, b"org.ct.module.double")
    if vx.vxGetStatus(vx.ffi.cast("vx_reference", kernel)) != vx.VX_SUCCESS:
        return False
    assert vx.vxReleaseKernel(vx.ffi.new("vx_kernel *", kernel)) == vx.VX_SUCCESS
    return True


def test_a_module_loads_unloads_and_loads_again(vx, ctx, log, modules):
    path = str(modules / "libct_module.so").encode()
    assert not _module_kernel_runs(vx, ctx)
    assert vx.vxLoadKernels(ctx, path) == vx.VX_SUCCESS
    assert _module_kernel_runs(vx, ctx)
    assert vx.vxUnloadKernels(ctx, path) == vx.VX_SUCCESS
    assert not _module_kernel_runs(vx, ctx)
    assert vx.vxLoadKernels(ctx, path) == vx.VX_SUCCESS
    assert _module_kernel_runs(vx, ctx)
    assert vx.vxUnloadKernels(ctx, path) == vx.VX_SUCCESS
    failing = str(modules / "libct_module_fails.so").encode()
    assert vx.vxLoadKernels(ctx, failing) == vx.VX_ERROR_NO_RESOURCES
    assert log.has(vx.VX_ERROR_NO_RESOURCES, "vxPublishKernels", "failed")
    assert not _module_kernel_runs(vx, ctx)
    assert vx.vxLoadKernels(ctx, b"no_such_module_anywhere") == vx.VX_ERROR_INVALID_MODULE
    assert log.has(vx.VX_ERROR_INVALID_MODULE, "libno_such_module_anywhere.so")


MODULE_BY_NAME = """
from openvx_nn import vx
ctx = vx.vxCreateContext()
assert vx.vxLoadKernels(ctx, b"ct_module") == vx.VX_SUCCESS
kernel = vx.vxGetKernelByName(ctx, b"org.ct.module.double")
assert vx.vxGetStatus(vx.ffi.cast("vx_reference", kernel)) == vx.VX_SUCCESS
assert vx.vxReleaseKernel(vx.ffi.new("vx_kernel *", kernel)) == vx.VX_SUCCESS
assert vx.vxUnloadKernels(ctx, b"ct_module") == vx.VX_SUCCESS
print("loaded by name")
"""


def test_a_module_name_is_found_on_the_loader_search_path(modules):
    env = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [str(modules),
                                                                          os.environ.get("LD_LIBRARY_PATH")]))}
    result = subprocess.run([sys.executable, "-c", MODULE_BY_NAME], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "loaded by name" in result.stdout


def test_user_structs_are_array_items_and_scalars(vx, ctx):
    ffi = vx.ffi
    ffi_type = "struct { int32_t id; float score; uint8_t tag[6]; }"
    size = ffi.sizeof(ffi_type)
    enum = vx.vxRegisterUserStructWithName(ctx, size, b"py_detection")
    assert vx.VX_TYPE_USER_STRUCT_START <= enum <= vx.VX_TYPE_USER_STRUCT_END
    back = ffi.new("vx_enum *")
    assert vx.vxGetUserStructEnumByName(ctx, b"py_detection", back) == vx.VX_SUCCESS and back[0] == enum
    name = ffi.new("vx_char[]", 32)
    assert vx.vxGetUserStructNameByEnum(ctx, enum, name, 32) == vx.VX_SUCCESS
    assert ffi.string(name) == b"py_detection"
    items = ffi.new(f"{ffi_type}[4]")
    rng = np.random.default_rng(3)
    for i in range(4):
        items[i].id, items[i].score, items[i].tag[i] = int(rng.integers(-99, 99)), float(rng.random()), i + 1
    array = vx.vxCreateArray(ctx, enum, 4)
    assert vx.vxAddArrayItems(array, 4, items, size) == vx.VX_SUCCESS
    out = ffi.new(f"{ffi_type}[4]")
    assert vx.vxCopyArrayRange(array, 0, 4, size, out, vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    assert bytes(ffi.buffer(out)) == bytes(ffi.buffer(items))
    scalar = vx.vxCreateScalarWithSize(ctx, enum, items, size)
    assert vx.vxGetStatus(ffi.cast("vx_reference", scalar)) == vx.VX_SUCCESS
    assert vx.vxReleaseScalar(ffi.new("vx_scalar *", scalar)) == vx.VX_SUCCESS
    assert vx.vxReleaseArray(ffi.new("vx_array *", array)) == vx.VX_SUCCESS


def test_the_docs_custom_layers_examples_run_as_written(tmp_path):
    """docs/custom-layers.md: the C example compiles and prints what the page says, the Python one runs."""
    text = (ROOT / "docs" / "custom-layers.md").read_text()
    blocks = {}
    for lang in ("c", "python"):
        start = text.index(f"```{lang}\n") + len(f"```{lang}\n")
        blocks[lang] = text[start:text.index("```", start)]
    exe = compile_c(blocks["c"], "custom_layer_example")
    c_result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert c_result.returncode == 0, c_result.stdout + c_result.stderr
    py_result = subprocess.run([sys.executable, "-c", blocks["python"]], capture_output=True, text=True, timeout=300,
                               cwd=tmp_path)
    assert py_result.returncode == 0, py_result.stderr[-2000:]
    for result in (c_result, py_result):
        assert "leaky ReLU matches the reference" in result.stdout
