"""Folders that cannot be imported give an error naming the file and the problem, from Python (``NNEFError``)
and from C (``vxImportKernelFromURL`` answers an error object, and the log line names the file); bad inputs at
``predict`` and at a node's verification are refused with the shapes involved."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import compile_c, run_c

from openvx_nn import nnef as nn

from .conftest import NEEDS_PARSER, import_kernel

pytest.importorskip("nnef", reason=NEEDS_PARSER)

C_PROGRAM = Path(__file__).with_name("nnef_import.c")
VX_FAILURE, VX_ERROR_NOT_SUPPORTED = -1, -3


def _graph(folder: Path, body: str, inputs="a", outputs="b") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.nnef").write_text(f"version 1.0;\ngraph G( {inputs} ) -> ( {outputs} )\n{{\n{body}}}\n")
    return folder


def _with_variable(folder: Path, stored_shape=(1, 3)) -> Path:
    import nnef
    _graph(folder, "    a = external(shape = [1, 3]);\n    w = variable(shape = [1, 3], label = 'weights/w');\n"
                   "    b = add(a, w);\n")
    (folder / "weights").mkdir()
    with open(folder / "weights" / "w.dat", "wb") as f:
        nnef.write_tensor(f, np.ones(stored_shape, np.float32))
    return folder


def missing_folder(tmp: Path):
    return tmp / "nowhere", "nowhere", "no such folder"


def missing_graph(tmp: Path):
    (tmp / "empty").mkdir()
    return tmp / "empty", "graph.nnef", "missing file"


def missing_variable(tmp: Path):
    folder = _with_variable(tmp / "m")
    (folder / "weights" / "w.dat").unlink()
    return folder, "w.dat", "missing file for variable 'weights/w'"


def wrong_variable_shape(tmp: Path):
    return _with_variable(tmp / "s", (2, 3)), "w.dat", "holds shape [2, 3]"


def truncated_variable(tmp: Path):
    folder = _with_variable(tmp / "t")
    path = folder / "weights" / "w.dat"
    path.write_bytes(path.read_bytes()[:100])
    return folder, "w.dat", "not a valid NNEF tensor file"


def unknown_operation(tmp: Path):
    return _graph(tmp / "u", "    a = external(shape = [1, 3]);\n    b = frobnicate(a);\n"), "graph.nnef", \
        "undefined operation 'frobnicate'"


def unsupported_operation(tmp: Path):
    return _graph(tmp / "n", "    a = external(shape = [1, 3]);\n    b = add_n([a, a]);\n"), \
        "graph.nnef", "'add_n' is not supported"


def cyclic_graph(tmp: Path):
    return _graph(tmp / "c", "    a = external(shape = [1, 3]);\n    b = relu(c);\n    c = relu(b);\n"), \
        "graph.nnef", "cycle"


def shapes_that_do_not_agree(tmp: Path):
    return _graph(tmp / "w", "    a = external(shape = [1, 3]);\n    c = external(shape = [1, 4]);\n"
                             "    b = add(a, c);\n", inputs="a, c"), "graph.nnef", "not broadcast compatible"


def unsupported_quantization(tmp: Path):
    folder = _graph(tmp / "q", "    a = external(shape = [1, 3]);\n    b = relu(a);\n")
    (folder / "graph.quant").write_text('"b": logarithmic_quantize(max = 1.0, bits = 8);\n')
    return folder, "graph.nnef", "quantized by 'logarithmic_quantize', which is not supported"


CASES = [missing_folder, missing_graph, missing_variable, wrong_variable_shape, truncated_variable,
         unknown_operation, unsupported_operation, cyclic_graph, shapes_that_do_not_agree,
         unsupported_quantization]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_load_names_the_file_and_the_problem(case, tmp_path):
    folder, file, problem = case(tmp_path)
    with pytest.raises(nn.NNEFError) as info:
        nn.load(folder)
    assert file in str(info.value) and problem in str(info.value)


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_the_c_import_answers_an_error_object_and_logs_the_file(case, tmp_path):
    folder, file, problem = case(tmp_path)
    result = run_c(compile_c(C_PROGRAM, "nnef_import", ["-lm"]), "--expect-error", "nnef", str(folder))
    assert result.returncode == 0, result.stdout + result.stderr
    status = VX_ERROR_NOT_SUPPORTED if case in (unsupported_operation, unsupported_quantization) else VX_FAILURE
    assert f"status {status}" in result.stdout
    logged = [line for line in result.stdout.splitlines() if line.startswith("log ")]
    assert any("vxImportKernelFromURL" in line and file in line and problem in line for line in logged), logged


@pytest.mark.parametrize("kind", ["onnx", "NNEF", ""])
def test_other_types_are_not_supported(kind, tmp_path):
    folder = _graph(tmp_path / "ok", "    a = external(shape = [1, 3]);\n    b = relu(a);\n")
    result = run_c(compile_c(C_PROGRAM, "nnef_import", ["-lm"]), "--expect-error", kind, str(folder))
    assert result.returncode == 0, result.stdout
    assert f"status {VX_ERROR_NOT_SUPPORTED}" in result.stdout
    assert f"type '{kind}' is not a format this library imports" in result.stdout


def test_the_other_type_string_imports_too(tmp_path):
    """``vx_khr_nnef`` is the extension's name for the same format."""
    folder = _graph(tmp_path / "ok", "    a = external(shape = [1, 3]);\n    b = relu(a);\n")
    result = run_c(compile_c(C_PROGRAM, "nnef_import", ["-lm"]), "--expect-error", "vx_khr_nnef", str(folder))
    assert result.returncode == 1 and "status 0" in result.stdout  # imported: not the error the mode expects


def test_predict_refuses_inputs_of_other_shapes_or_names(tmp_path):
    folder = _graph(tmp_path / "ok", "    a = external(shape = [1, 3]);\n    b = relu(a);\n")
    with nn.load(folder) as model:
        with pytest.raises(nn.NNEFError, match=r"input 'a' has shape \[3\]; the graph declares \[1, 3\]"):
            model.predict({"a": np.zeros(3, np.float32)})
        with pytest.raises(nn.NNEFError, match="input 'a' is missing"):
            model.predict({})
        with pytest.raises(nn.NNEFError, match=r"unknown input\(s\) \['c'\]"):
            model.predict({"a": np.zeros((1, 3), np.float32), "c": np.zeros(1)})


def test_a_node_with_tensors_of_other_dims_fails_verification(vx, ctx, log, tmp_path):
    """(``ctx`` checks the references: the imported graph's objects are the kernel's, not the application's.)"""
    folder = _graph(tmp_path / "ok", "    a = external(shape = [1, 3]);\n    b = relu(a);\n")
    kernel = vx.ffi.cast("vx_kernel", import_kernel()(int(vx.ffi.cast("uintptr_t", ctx)), b"nnef",
                                                        str(folder).encode()))
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", kernel)) == 0
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxCreateGenericNode(graph, kernel)
    dims = vx.ffi.new("vx_size[2]", [3, 1])  # the NNEF shape reversed: not the convention
    x = vx.vxCreateTensor(ctx, 2, dims, vx.VX_TYPE_FLOAT32, 0)
    y = vx.vxCreateTensor(ctx, 2, dims, vx.VX_TYPE_FLOAT32, 0)
    vx.vxSetParameterByIndex(node, 0, vx.ffi.cast("vx_reference", x))
    vx.vxSetParameterByIndex(node, 1, vx.ffi.cast("vx_reference", y))
    assert vx.vxVerifyGraph(graph) != 0
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "NNEF input 'a'", "[3, 1]", "[1, 3]")
    for handle, release in ((node, vx.vxReleaseNode), (x, vx.vxReleaseTensor), (y, vx.vxReleaseTensor),
                            (graph, vx.vxReleaseGraph), (kernel, vx.vxReleaseKernel)):
        assert release(vx.ffi.new(f"{vx.ffi.typeof(handle).cname} *", handle)) == 0


def test_the_folder_may_be_moved_after_the_import(tmp_path):
    """The import reads every file at once: the model does not go back to the folder."""
    folder = _with_variable(tmp_path / "v")
    model = nn.load(folder)
    shutil.rmtree(folder)
    assert np.array_equal(model.predict({"a": np.zeros((1, 3), np.float32)})["b"], np.ones((1, 3), np.float32))
    model.close()
