"""The headers in include/VX match the ABI facts tables (tests/abi/*.tsv).

Each check is generated as C source and settled by the compiler: enumerator
values, struct layouts and function signatures are compile-time facts, so a
mismatch is a compile error that names the offending entry.
"""
from __future__ import annotations

import csv
import subprocess
from dataclasses import dataclass, replace

import pytest
from conftest import ABI, BUILD, ROOT

INCLUDE = ROOT / "include"

# The standard headers this project ships (every header the tables name, and
# vx_compatibility.h, whose deprecated functions tools/compatibility.tsv lists).
HEADERS = ("vx.h", "vx_types.h", "vx_api.h", "vx_kernels.h", "vx_vendors.h",
           "vx_nodes.h", "vxu.h", "vx_khr_nn.h", "vx_import.h", "vx_khr_ix.h",
           "vx_khr_import_kernel.h", "vx_khr_pipelining.h", "vx_khr_user_data_object.h",
           "vx_compatibility.h")
COMPATIBILITY = ROOT / "tools" / "compatibility.tsv"

C11 = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]
C99 = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
CXX11 = ["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"]


# -- the tables --------------------------------------------------------------
@dataclass(frozen=True)
class Enumerator:
    header: str
    enum_type: str
    name: str
    value: int


@dataclass(frozen=True)
class Function:
    tier: int
    header: str
    name: str
    returns: str
    parameters: str


@dataclass(frozen=True)
class StructRow:
    struct: str
    field: str
    offset: int  # for the "sizeof" row: the struct's size
    size: int    # for the "sizeof" row: the struct's alignment


def _rows(name: str) -> list[dict[str, str]]:
    with open(ABI / name, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def enumerators() -> list[Enumerator]:
    return [Enumerator(r["header"], r["enum_type"], r["name"], int(r["value"], 16))
            for r in _rows("enums.tsv") if r["header"] in HEADERS]


def functions(tier: int | None = None) -> list[Function]:
    rows = [Function(int(r["tier"]), r["header"], r["name"], r["returns"], r["parameters"])
            for r in _rows("functions.tsv")]
    return [f for f in rows if tier is None or f.tier == tier]


def compatibility_functions() -> list[Function]:
    """The deprecated functions vx_compatibility.h declares (tier 0 here)."""
    with open(COMPATIBILITY, newline="") as f:
        return [Function(0, r["header"], r["name"], r["returns"], r["parameters"])
                for r in csv.DictReader(f, delimiter="\t")]


def struct_rows() -> list[StructRow]:
    return [StructRow(r["struct"], r["field"], int(r["offset_bytes"]), int(r["size_bytes"]))
            for r in _rows("structs.tsv")]


# -- generated C -----------------------------------------------------------------
PRELUDE = """\
#include <stddef.h>
{includes}
/* One assertion macro for C11, C++11 and (through a negative array size) C99. */
#if defined(__cplusplus)
#define ABI_CHECK(cond, id) static_assert(cond, #id)
#define ABI_ALIGNOF(t) alignof(t)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ABI_CHECK(cond, id) _Static_assert(cond, #id)
#define ABI_ALIGNOF(t) _Alignof(t)
#else
#define ABI_CHECK(cond, id) typedef char abi_check_##id[(cond) ? 1 : -1]
#define ABI_ALIGNOF(t) offsetof(struct {{ char c; t member; }}, member)
#endif
#define ABI_FIELD_SIZE(t, f) sizeof(((t *)0)->f)
"""


def _includes(headers) -> str:
    return "\n".join(f"#include <VX/{h}>" for h in headers)


def enum_checks(rows: list[Enumerator]) -> str:
    """Static assertions of every enumerator's 32-bit pattern, plus (C++ only,
    where enums are distinct types) that it belongs to its table's enum type."""
    lines = []
    for i, e in enumerate(rows):
        lines.append(f"ABI_CHECK((vx_uint32){e.name} == 0x{e.value:X}u, enum_{i}_{e.name});")
    lines.append("#ifdef __cplusplus")
    for e in rows:
        # A name the standard defines as a macro (VX_LIBRARY_KHR_NN_EXTENSION) has no enum type.
        lines.append(f"#ifndef {e.name}\nenum {e.enum_type} abi_type_of_{e.name} = {e.name};\n#endif")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def struct_checks(rows: list[StructRow]) -> str:
    lines = []
    for i, s in enumerate(rows):
        tag = f"struct_{i}_{s.struct}_{s.field}"
        if s.field == "sizeof":
            lines.append(f"ABI_CHECK(sizeof({s.struct}) == {s.offset}, {tag}_size);")
            lines.append(f"ABI_CHECK(ABI_ALIGNOF({s.struct}) == {s.size}, {tag}_align);")
        else:
            lines.append(f"ABI_CHECK(offsetof({s.struct}, {s.field}) == {s.offset}, {tag}_offset);")
            lines.append(f"ABI_CHECK(ABI_FIELD_SIZE({s.struct}, {s.field}) == {s.size}, {tag}_size);")
    return "\n".join(lines) + "\n"


def signature_checks(rows: list[Function]) -> str:
    """Each function assigned to a pointer of exactly the table's type: any
    difference in return or parameter types is an incompatible-pointer error."""
    return "".join(f"{f.returns} (*p_{f.name})({f.parameters}) = {f.name};\n" for f in rows)


def check_source(headers, enum_rows=(), fn_rows=(), struct_rows_=()) -> str:
    return (PRELUDE.format(includes=_includes(headers)) + enum_checks(list(enum_rows))
            + struct_checks(list(struct_rows_)) + signature_checks(list(fn_rows)))


def compile_only(source: str, compiler: list[str], name: str) -> subprocess.CompletedProcess:
    BUILD.mkdir(exist_ok=True)
    suffix = ".cpp" if compiler[0] == "g++" else ".c"
    path = BUILD / f"{name}{suffix}"
    path.write_text(source)
    return subprocess.run([*compiler, f"-I{INCLUDE}", "-fsyntax-only", str(path)],
                          capture_output=True, text=True)


def assert_compiles(source: str, compiler: list[str], name: str) -> None:
    result = compile_only(source, compiler, name)
    assert result.returncode == 0, f"{' '.join(compiler)} rejected {name}:\n{result.stderr[:6000]}"


# -- the tables themselves ----------------------------------------------------------
def test_tables_hold_what_the_checks_rely_on():
    enums = enumerators()
    assert len(enums) > 400
    assert len({e.name for e in enums}) == len(enums), "an enumerator is listed twice"
    tier1 = functions(1)
    assert len(tier1) == 91 and all(f.header in HEADERS for f in tier1)
    assert any(f.parameters.endswith("...") for f in tier1)  # vxAddLogEntry
    structs = {s.struct for s in struct_rows()}
    assert {"vx_nn_convolution_params_t", "vx_kernel_info_t", "vx_border_t", "vx_perf_t"} <= structs


# -- enumerators and structs ---------------------------------------------------------
@pytest.mark.parametrize("header", sorted({e.header for e in enumerators()}))
def test_every_enumerator_has_its_standard_value_in_its_own_header(header):
    """Including only the header the standard puts an enumerator in is enough
    to see it, with the table's value (C11) and in the table's enum type (C++)."""
    rows = [e for e in enumerators() if e.header == header]
    # vx_types.h first for vx_uint32 (vx_vendors.h and vx_kernels.h stand alone, as in the standard).
    source = check_source(["vx_types.h", header], enum_rows=rows)
    assert_compiles(source, C11, f"abi_enums_{header[:-2]}_c11")
    assert_compiles(source, CXX11, f"abi_enums_{header[:-2]}_cxx11")


def test_every_struct_field_offset_size_and_alignment_matches():
    rows = struct_rows()
    source = check_source(["vx.h", "vx_khr_nn.h"], struct_rows_=rows)
    assert_compiles(source, C11, "abi_structs_c11")
    assert_compiles(source, CXX11, "abi_structs_cxx11")
    assert source.count("\nABI_CHECK(") == 2 * len(rows)


# -- functions ------------------------------------------------------------------------
@pytest.mark.parametrize("header", sorted({f.header for f in functions() + compatibility_functions()}))
def test_every_function_of_every_tier_is_declared_with_the_standard_signature(header):
    rows = [f for f in functions() + compatibility_functions() if f.header == header]
    source = check_source([header], fn_rows=rows)
    assert_compiles(source, C11, f"abi_sig_{header[:-2]}_c11")
    assert_compiles(source, CXX11, f"abi_sig_{header[:-2]}_cxx11")


def test_all_checks_together_compile_as_c99_c11_and_cxx11():
    """The headers are valid pedantic C99 and C++11, and every check holds in
    all three languages at once (all headers included together)."""
    source = check_source(HEADERS, enum_rows=enumerators(), fn_rows=functions() + compatibility_functions(),
                          struct_rows_=struct_rows())
    for compiler, tag in ((C99, "c99"), (C11, "c11"), (CXX11, "cxx11")):
        assert_compiles(source, compiler, f"abi_all_{tag}")


def test_headers_alone_compile_in_any_order():
    """Each header is self-contained: a program may include any one of them first."""
    for header in HEADERS:
        source = f"#include <VX/{header}>\n#include <VX/vx.h>\nint abi_unused_{header[:-2]};\n"
        assert_compiles(source, C99, f"abi_alone_{header[:-2]}_c99")
        assert_compiles(source, CXX11, f"abi_alone_{header[:-2]}_cxx11")


# -- the checks can fail ------------------------------------------------------------------
def _rejected(source: str, name: str, needle: str) -> None:
    for compiler, tag in ((C11, "c11"), (C99, "c99"), (CXX11, "cxx11")):
        result = compile_only(source, compiler, f"{name}_{tag}")
        assert result.returncode != 0, f"{tag}: a deliberately wrong check compiled"
        assert needle in result.stderr, f"{tag}: the error does not name {needle}:\n{result.stderr}"


def test_a_wrong_enumerator_value_fails_to_compile():
    rows = enumerators()
    target = next(e for e in rows if e.name == "VX_ERROR_INVALID_REFERENCE")
    wrong = [replace(e, value=e.value + 1) if e is target else e for e in rows]
    _rejected(check_source(HEADERS, enum_rows=wrong), "abi_wrong_enum", "VX_ERROR_INVALID_REFERENCE")


def test_an_enumerator_listed_under_the_wrong_enum_type_fails_to_compile_as_cxx():
    rows = [Enumerator("vx_types.h", "vx_status_e", "VX_TYPE_TENSOR", 0x815)]
    result = compile_only(check_source(HEADERS, enum_rows=rows), CXX11, "abi_wrong_enum_type")
    assert result.returncode != 0 and "VX_TYPE_TENSOR" in result.stderr


def test_a_wrong_struct_offset_fails_to_compile():
    target = ("vx_nn_convolution_params_t", "dilation_x")
    rows = [replace(s, offset=s.offset + 4) if (s.struct, s.field) == target else s for s in struct_rows()]
    _rejected(check_source(HEADERS, struct_rows_=rows), "abi_wrong_struct", "dilation_x")


def test_a_wrong_signature_fails_to_compile():
    rows = [replace(f, parameters=f.parameters.replace("vx_size size", "vx_uint32 size"))
            if f.name == "vxQueryTensor" else f for f in functions(1)]
    for compiler, tag in ((C11, "c11"), (CXX11, "cxx11")):
        result = compile_only(check_source(HEADERS, fn_rows=rows), compiler, f"abi_wrong_sig_{tag}")
        assert result.returncode != 0 and "vxQueryTensor" in result.stderr, result.stderr


def test_headers_are_what_the_generator_makes_from_the_tables(tmp_path, monkeypatch):
    """include/VX is tools/gen_headers.py's output for tests/abi: no hand edits drift."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_headers", ROOT / "tools" / "gen_headers.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    monkeypatch.setattr(gen, "OUT", tmp_path)
    gen.main(ABI)
    for header in HEADERS:
        assert (tmp_path / header).read_text() == (INCLUDE / "VX" / header).read_text(), header
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(HEADERS)


def test_the_generator_leaves_headers_it_does_not_make_alone(tmp_path, monkeypatch):
    """A vendor header in include/VX (hand-written) survives a regeneration."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_headers", ROOT / "tools" / "gen_headers.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    monkeypatch.setattr(gen, "OUT", tmp_path)
    (tmp_path / "vx_ext_vendor.h").write_text("/* vendor */\n")
    gen.main(ABI)
    assert (tmp_path / "vx_ext_vendor.h").read_text() == "/* vendor */\n"


def test_image_patch_addressing_has_stride_x_bits_and_its_initialiser():
    """VX_IMAGEPATCH_ADDR_INIT initialises every field (stride_x_bits included) to 0."""
    source = PRELUDE.format(includes="#include <VX/vx.h>") + (
        "static const vx_imagepatch_addressing_t a = VX_IMAGEPATCH_ADDR_INIT;\n"
        "ABI_CHECK(offsetof(vx_imagepatch_addressing_t, stride_x_bits) == 30, bits_at_30);\n"
        "int f(void) { return (int)a.stride_x_bits; }\n")
    for compiler, tag in ((C99, "c99"), (C11, "c11"), (CXX11, "cxx11")):
        assert_compiles(source, [*compiler, "-Wmissing-field-initializers"], f"abi_patch_init_{tag}")
