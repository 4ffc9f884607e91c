"""``openvx-nn warm`` compiles native entries too: one process records the entries it makes, a second warms
them into a fresh cache, and a third makes the same entry without compiling it."""
from __future__ import annotations

import os

import numpy as np
import pytest
from test_warm import _python  # a child Python that must succeed

from openvx_nn.kernels.support import warm

ENTRY = """
import numpy as np
from openvx_nn.kernels.openvx.transpose import native_entry
from openvx_nn.kernels.support import native
x = np.arange(12, dtype=np.int8).reshape(3, 4)
out = np.zeros((4, 3), np.int8)
assert native.run(native_entry(x, out, 0, 1)) == 0
assert (out == x.T).all()
"""


def test_native_entries_are_recorded_and_warmed_into_a_fresh_cache(tmp_path):
    record = tmp_path / "signatures.txt"
    base = {k: v for k, v in os.environ.items() if k != "OPENVX_NN_RECORD_SIGNATURES"}
    _python(ENTRY, {**base, "NUMBA_CACHE_DIR": str(tmp_path / "first"), "OPENVX_NN_RECORD_SIGNATURES": str(record)})
    lines = [line for line in record.read_text().splitlines() if line.startswith(warm.NATIVE)]
    assert lines == ["native:openvx_nn.kernels.openvx.transpose:_native_copy\tdtype:int8"]
    cache = {**base, "NUMBA_CACHE_DIR": str(tmp_path / "second"), "NUMBA_DEBUG_CACHE": "1"}
    (tmp_path / "native.txt").write_text(lines[0] + "\n")
    warmed = _python(f"from openvx_nn.cli import main; main(['warm', '--only', {str(tmp_path / 'native.txt')!r}])",
                     cache)
    assert "1 kernel specialisations" in warmed.stdout and "data saved" in warmed.stdout
    after = _python(ENTRY, cache)
    assert "data loaded" in after.stdout and "data saved" not in after.stdout, after.stdout


def test_native_lines_round_trip_and_unknown_ones_are_skipped(tmp_path):
    args = (17, np.int16, np.uint8, True, "max")
    text = warm.encode_native(args, (0,))
    assert text == "code:17;dtype:int16;dtype:uint8;bool:1;str:max"
    assert warm.decode_native(text) == (args, (17,))
    assert warm.decode_native("float:1.5") is None
    listed = tmp_path / "lines.txt"
    listed.write_text("native:openvx_nn.kernels.nowhere:_gone\tdtype:int8\n"
                      "native:openvx_nn.kernels.openvx.transpose:_native_copy\tfloat:2\n")
    usable, skipped = warm.signatures([listed])
    assert usable == [] and skipped == 2


KEY = """
import numpy as np
from numba import types
from numba.core.registry import cpu_target
from openvx_nn.kernels.support import jit
bodies = []
jit.native = lambda body: bodies.append(body) or 0  # the entry's body, not compiled
{make}
signature = ((types.CPointer(types.int64),),)
print(repr(jit._KernelCache(bodies[0], "native")._index_key(signature, cpu_target.target_context.codegen())))
"""
MAKERS = [
    # an entry whose body calls a kernel (the serial one)
    "from openvx_nn.kernels.openvx import roi_pooling; roi_pooling._native_roi.__wrapped__(np.int16, np.int16)",
    # a body made by gang.shared_entry: kernels and block offsets in its closure, a literal micro-kernel code
    "from openvx_nn.kernels.engine import nhwc; nhwc._native_entry.__wrapped__(5)",
]


# numba hashes a closure's cells by pickling them, and a kernel (a dispatcher) pickles with a uuid drawn per
# process: before jit._stable, entries that call a kernel compiled again in every process (the SIMD entries:
# 10-30 s each, in every C program, CLI run, benchmark and Dask worker).
@pytest.mark.parametrize("make", MAKERS, ids=["kernel in closure", "gang.shared_entry"])
def test_an_entry_that_calls_a_kernel_has_one_cache_key_in_every_process(tmp_path, make):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    first, second = (_python(KEY.format(make=make), env).stdout for _ in range(2))
    assert first.startswith("((") and first == second


CLOSURES = '''
import numpy as np
from numba.extending import register_jitable
from openvx_nn.kernels.support import jit


def make(k):
    @register_jitable  # a bare numba helper: jit.native names it by what it captures
    def plain(n):
        total = 0
        for i in range(n):
            total += (i * k) % 7
        return total

    @jit.jitable
    def helper(n):
        return plain(n) + 1000 * k

    @jit.kernel
    def scaled(n):
        return n * k

    def entry(block):
        block[0] = helper(block[1])
        block[2] = scaled(block[1])
        return 0
    return jit.native(entry)
'''
CALL = """
import ctypes, sys
import numpy as np
sys.path.insert(0, {folder!r})
from closures import make
for k in {ks!r}:
    block = np.array([0, 5, 0], np.int64)
    ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(make(k))(block.ctypes.data)
    print(k, block[0], block[2])
"""


def test_cached_closures_of_one_def_keep_their_own_code_in_a_process_that_loads_both(tmp_path):
    # Two processes compile (and cache) the same closures with different captured values, drawing the same
    # per-process counts; a third loads both. Named only by qualified name and count, the second body's
    # calls linked to the first one's helpers (k=2 answered as k=1).
    (tmp_path / "closures.py").write_text(CLOSURES)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def expected(k):
        return f"{k} {sum(i * k % 7 for i in range(5)) + 1000 * k} {5 * k}"
    for ks in ((1,), (2,), (1, 2), (2, 1)):
        printed = _python(CALL.format(folder=str(tmp_path), ks=ks), env).stdout.split("\n")[:-1]
        assert printed == [expected(k) for k in ks]
