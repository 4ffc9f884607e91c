"""The loader of cached machine code against objects LLVM emits as numba's JIT would (large code model): code,
constants, a global written at run time, a common symbol, a call to a name found elsewhere; and what it must
decline (another relocation model, a name it cannot find, a file that is not one) without raising."""
from __future__ import annotations

import ctypes
import platform

import llvmlite.binding as llvm
import pytest

from openvx_nn.kernels.support import object_loader

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the loader reads x86-64 objects only")

IR = """
@counter = global i64 5
@slot = common global i64 0, align 8
@table = private unnamed_addr constant [4 x double] [double 1.5, double 2.5, double 3.5, double 4.5]
declare double @scale(double)
define double @pick(i64 %i) {
  %p = getelementptr [4 x double], ptr @table, i64 0, i64 %i
  %v = load double, ptr %p
  %s = call double @scale(double %v)
  ret double %s
}
define i64 @bump() {
  %v = load i64, ptr @counter
  %w = add i64 %v, 1
  store i64 %w, ptr @counter
  ret i64 %w
}
define ptr @slot_address() { ret ptr @slot }
define i64 @choose(i64 %k) {
  switch i64 %k, label %other [ i64 0, label %a  i64 1, label %b  i64 2, label %c  i64 3, label %d  i64 4, label %e ]
a: ret i64 10
b: ret i64 11
c: ret i64 12
d: ret i64 13
e: ret i64 14
other: ret i64 -1
}
"""

_SCALE = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(lambda x: 2.0 * x)


def _object(reloc: str = "default", codemodel: str = "jitdefault") -> bytes:
    from numba.core import codegen  # initialises LLVM's native target
    codegen.initialize_llvm()
    target = llvm.Target.from_default_triple().create_target_machine(reloc=reloc, codemodel=codemodel)
    return target.emit_object(llvm.parse_assembly(IR))


def _resolve(name: str) -> int:
    return ctypes.cast(_SCALE, ctypes.c_void_p).value if name == "scale" else 0


def _permissions(address: int) -> str:
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, permissions = line.split()[:2]
            low, high = (int(part, 16) for part in span.split("-"))
            if low <= address < high:
                return permissions
    return ""


def test_an_object_of_the_jits_code_model_runs_from_its_own_pages():
    symbols = object_loader.load(_object(), _resolve)
    assert symbols is not None and {"pick", "bump", "slot_address", "choose", "counter", "slot"} <= set(symbols)
    pick = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int64)(symbols["pick"])
    assert [pick(i) for i in range(4)] == [3.0, 5.0, 7.0, 9.0]  # the constants, through the external call
    bump = ctypes.CFUNCTYPE(ctypes.c_int64)(symbols["bump"])
    assert (bump(), bump()) == (6, 7)
    assert ctypes.c_int64.from_address(symbols["counter"]).value == 7
    slot = ctypes.CFUNCTYPE(ctypes.c_void_p)(symbols["slot_address"])
    assert slot() == symbols["slot"] and ctypes.c_int64.from_address(symbols["slot"]).value == 0
    choose = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(symbols["choose"])
    assert [choose(k) for k in range(-1, 6)] == [-1, 10, 11, 12, 13, 14, -1]  # a jump table, if LLVM made one
    assert _permissions(symbols["pick"]) == "r-xp"  # code never writable
    assert _permissions(symbols["counter"]) == "rw-p"


def test_what_it_cannot_load_it_declines():
    code = _object()
    assert object_loader.load(code, lambda name: 0) is None  # "scale" found nowhere
    assert object_loader.load(b"MZ" + code[2:], _resolve) is None  # not ELF
    assert object_loader.load(_object("pic", "small"), _resolve) is None  # GOT-relative relocations
    for cut in (16, 64, len(code) // 2, len(code) - 8):
        assert object_loader.load(code[:cut], _resolve) is None  # cut short: never raises
