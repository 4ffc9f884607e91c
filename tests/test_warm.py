"""``openvx-nn warm``: signatures recorded by one process are compiled into the
cache by another, so a third compiles nothing."""
from __future__ import annotations

import os
import subprocess
import sys

from numba import types

from openvx_nn.kernels.support import jit, native, warm

KERNEL = """
import numpy as np
from openvx_nn.kernels import copy
x = np.arange(12, dtype=np.int8).reshape(3, 4)
out = np.zeros((3, 4), np.int8)
copy(x, out)
assert (out == x).all()
"""


def _python(code: str, env: dict) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    return result


def test_recorded_signatures_warm_a_fresh_cache(tmp_path):
    record = tmp_path / "signatures.txt"
    base = {k: v for k, v in os.environ.items() if k != "OPENVX_NN_RECORD_SIGNATURES"}
    _python(KERNEL, {**base, "NUMBA_CACHE_DIR": str(tmp_path / "first"), "OPENVX_NN_RECORD_SIGNATURES": str(record)})
    lines = record.read_text().splitlines()
    assert any(line.startswith("openvx_nn.kernels.openvx.transpose:_copy:") and "array:int8:" in line for line in lines)
    cache = {**base, "NUMBA_CACHE_DIR": str(tmp_path / "second"), "NUMBA_DEBUG_CACHE": "1"}
    warmed = _python(f"from openvx_nn.cli import main; main(['warm', '--only', {str(record)!r}])", cache)
    assert f"{len(set(lines))} kernel specialisations" in warmed.stdout
    assert "data saved" in warmed.stdout
    after = _python(KERNEL, cache)
    assert "data loaded" in after.stdout and "data saved" not in after.stdout, after.stdout


def test_signature_text_round_trips():
    arg_types = (types.Array(types.uint8, 6, "A", readonly=True), types.Array(types.float32, 3, "C"),
                 types.int64, types.float64, types.boolean)
    assert warm.decode(warm.encode(arg_types)) == arg_types
    engine = (types.literal(525), types.UniTuple(types.int64, 4))  # the SIMD engine's tile code and extents
    assert warm.decode(warm.encode(engine)) == engine
    assert warm.encode((types.UniTuple(types.Array(types.uint8, 1, "C"), 2),)) is None  # no text form
    assert warm.decode("array:nosuchtype:2:A:r") is None
    assert warm.decode("literal:x") is None and warm.decode("tuple:int64") is None


def test_a_line_recorded_before_a_signature_changed_is_skipped(tmp_path):
    stale = tmp_path / "stale.txt"
    stale.write_text("openvx_nn.kernels.openvx.transpose:_copy:False:python\tint64\n")  # _copy takes two arrays
    assert warm.warm([stale], shipped=False) == (0, 1)


def test_the_shipped_signatures_name_kernels_this_package_has():
    warm.load_all_kernels()
    usable, skipped = warm.signatures([warm.SHIPPED])
    assert usable and all(name in jit.dispatchers or name.removeprefix(warm.NATIVE) in native.factories
                          for name, _ in usable)  # kernels, and native entries' makers
    assert skipped <= len(usable) // 2, "most shipped signatures are stale: re-record signatures.txt"


def test_the_shipped_signatures_list_every_native_entry_maker():
    """Each native entry costs 3 to 8 s to compile on a cold cache, so ``openvx-nn warm`` must know every maker:
    the float16, LRN, matmul, transpose, lookup, ROI pooling, depth conversion, element-wise and float activation
    entries added after the file was last recorded had no line, and compiled at a graph's first bind."""
    warm.load_all_kernels()
    listed = {line.partition("\t")[0].removeprefix(warm.NATIVE)
              for line in warm.SHIPPED.read_text().splitlines() if line.startswith(warm.NATIVE)}
    missing = sorted(set(native.factories) - listed)
    assert not missing, "record these into signatures.txt (OPENVX_NN_RECORD_SIGNATURES):\n" + "\n".join(missing)


def test_a_micro_kernel_of_an_instruction_set_this_cpu_lacks_is_not_compiled(monkeypatch):
    # Compiling a tile for a missing instruction set aborts the whole process inside LLVM (it did for
    # every avx512_vnni line of the shipped file on an AVX2 machine), so warm must skip it beforehand.
    from numba import types

    from openvx_nn.kernels.engine import isa, microkernel
    from openvx_nn.kernels.support import warm

    monkeypatch.setattr(isa, "available", lambda: ("avx2", "generic"))
    vnni = types.literal(microkernel.variant("avx512_vnni", "u8s8", 4, 2))
    avx2 = types.literal(microkernel.variant("avx2", "s16", 4, 2))
    array = types.Array(types.int16, 2, "C")
    assert not warm.runs_here((vnni, array, types.int64))
    assert warm.runs_here((avx2, array, types.int64))
    assert not warm.runs_here((types.literal(microkernel.variant("amx", "u8s8", 16, 1)), array, types.int64))
    assert warm.runs_here((array, types.int64))  # no tile code: any CPU
    assert not warm.runs_here((types.literal(10**12),))  # a damaged code is skipped, not decoded
    for variant in (0, 7, 19):  # a tile loop's index (float_convolution.tile_variant), no micro-kernel's code
        assert warm.runs_here((types.literal(variant), array, types.int64))


def _first_uses() -> str:
    """The cold-start benchmark's program (a conv3 U8 layer through the C API), then the digits demo."""
    from benchmarks.bench_cold_start import CHILD
    return CHILD + "\nfrom openvx_nn.demo import run_demo\nrun_demo(batch=128, progress=None)\n"


def test_the_shipped_signatures_cover_the_demo_and_the_cold_start_layer(tmp_path):
    """``openvx-nn warm`` is what makes a first run fast: every kernel and native entry that the digits demo
    and the cold-start benchmark's conv3 layer use must be in ``signatures.txt`` (the demo's native entries
    and the conv3 layer's helper entry were not, so after ``warm`` the demo still compiled for ~45 s).
    Entries of micro-kernel codes the shipped file has never seen (another CPU's instruction set) are left out."""
    record = tmp_path / "recorded.txt"
    _python(_first_uses(), {**os.environ, "OPENVX_NN_RECORD_SIGNATURES": str(record)})
    def codes(line: str) -> set[str]:
        return {part for part in line.replace("\t", ";").split(";") if part.startswith("code:")}
    shipped = set(warm.SHIPPED.read_text().splitlines())
    known_codes = set().union(*map(codes, shipped))
    recorded = set(record.read_text().splitlines())
    assert recorded
    unknown = {line for line in recorded if codes(line) - known_codes}
    missing = sorted(recorded - unknown - shipped)
    assert not missing, "re-record signatures.txt; not in it:\n" + "\n".join(missing)
