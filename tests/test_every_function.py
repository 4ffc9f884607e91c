"""Every function of the ABI tables (all tiers) and of vx_compatibility.h is
declared, compiles in a call from C99 and C++, links, is exported, and answers
an error (never a crash) when called with NULL and zero arguments."""
from __future__ import annotations

import subprocess

from conftest import BUILD, compile_c, config_flags, run_c
from test_abi import HEADERS, Function, compatibility_functions, functions
from test_exports import exported_symbols

ALL = functions() + compatibility_functions()
NO_RESULT_CHECK = {"vxCreateContext"}  # takes no argument: it succeeds


def _zero_args(f: Function) -> str:
    """One zero per parameter (a null pointer, 0, 0.0); enums need a cast in C++."""
    if f.parameters.strip() == "void":
        return ""
    args = []
    for param in f.parameters.split(","):
        param = param.strip()
        if param == "...":
            continue
        args.append(f"({' '.join(param.split()[:2])})0" if param.startswith("enum ") else "0")
    return ", ".join(args)


def call_every_function_source() -> str:
    includes = "".join(f"#include <VX/{h}>\n" for h in HEADERS)
    body = []
    for f in ALL:
        call = f"{f.name}({_zero_args(f)})"
        if f.returns == "vx_status" and f.name not in NO_RESULT_CHECK:
            body.append(f'    expect_error("{f.name}", {call});')
        elif f.returns.startswith("vx_") and f.returns in HANDLE_TYPES and f.name not in NO_RESULT_CHECK:
            body.append(f'    expect_no_object("{f.name}", (vx_reference){call});')
        else:
            body.append(f"    (void){call};")
    return f"""{includes}#include <stdio.h>
static int failures;
static void expect_error(const char *name, vx_status status)
{{
    if (status >= 0) {{ printf("%s returned %d\\n", name, (int)status); failures++; }}
}}
static void expect_no_object(const char *name, vx_reference ref)
{{
    if (ref != NULL && vxGetStatus(ref) == VX_SUCCESS) {{ printf("%s made an object\\n", name); failures++; }}
}}
int main(void)
{{
{chr(10).join(body)}
    printf("called %d functions, %d failures\\n", {len(ALL)}, failures);
    return failures != 0;
}}
"""


HANDLE_TYPES = {"vx_reference", "vx_context", "vx_graph", "vx_node", "vx_kernel", "vx_parameter",
                "vx_scalar", "vx_lut", "vx_image", "vx_object_array", "vx_array", "vx_meta_format",
                "vx_tensor", "vx_delay", "vx_distribution", "vx_pyramid", "vx_threshold", "vx_matrix",
                "vx_convolution", "vx_remap", "vx_import", "vx_user_data_object"}


def test_the_tables_name_every_tier_and_the_compatibility_functions():
    assert {f.tier for f in ALL} == {0, 1, 2, 3}
    assert len({f.name for f in ALL}) == len(ALL)
    assert {f.returns for f in ALL if f.returns.startswith("vx_")} - {"vx_status", "vx_size", "vx_enum", "vx_bool",
                                                                         "vx_nodecomplete_f"} \
        <= HANDLE_TYPES


def test_a_c99_program_calling_every_function_compiles_links_and_gets_errors():
    exe = compile_c(call_every_function_source(), "every_function",
                    extra=["-Werror=implicit-function-declaration"])
    result = run_c(exe)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"called {len(ALL)} functions, 0 failures" in result.stdout


def test_a_cxx_program_calling_every_function_compiles_and_links():
    BUILD.mkdir(exist_ok=True)
    src = BUILD / "every_function.cpp"
    src.write_text(call_every_function_source())
    exe = BUILD / "every_function_cxx"
    cmd = ["g++", "-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe),
           *config_flags()]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[:6000]


def test_the_library_exports_exactly_the_declared_functions():
    """nm -D --defined-only: every function of the tables, nothing else."""
    assert exported_symbols() == {f.name for f in ALL}


def test_an_unimplemented_function_logs_and_returns_not_implemented(vx, ctx, log):
    import ctypes

    from openvx_nn.library import library_path
    lib = ctypes.CDLL(str(library_path()))
    lib.vxCreatePyramid.restype = ctypes.c_void_p
    lib.vxCreatePyramid.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_float, ctypes.c_uint32,
                                    ctypes.c_uint32, ctypes.c_uint32]
    handle = lib.vxCreatePyramid(int(vx.ffi.cast("uintptr_t", ctx)), 2, 0.5, 8, 8, vx.VX_DF_IMAGE_U8)
    error = vx.ffi.cast("vx_reference", handle)
    assert vx.vxGetStatus(error) == vx.VX_ERROR_NOT_IMPLEMENTED
    assert log.has(vx.VX_ERROR_NOT_IMPLEMENTED, "vxCreatePyramid", "not implemented")
    lib.vxAgeDelay.argtypes = [ctypes.c_void_p]
    assert lib.vxAgeDelay(None) == vx.VX_ERROR_NOT_IMPLEMENTED
