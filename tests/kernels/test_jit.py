"""The compilation machinery: disk cache fallbacks, cache invalidation, one specialisation per dtype."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import openvx_nn
from openvx_nn import kernels
from openvx_nn.kernels.openvx import elementwise
from openvx_nn.kernels.support import jit

PACKAGE = Path(openvx_nn.__file__).resolve().parent

PROBE = textwrap.dedent("""
    import json
    import sys
    import numpy as np
    from openvx_nn.kernels import add, matrix_multiply
    from openvx_nn.kernels.openvx import elementwise
    from openvx_nn.kernels.support import jit
    out = np.zeros(3, np.int8)
    add(np.array([100, -100, 5], np.int8), np.array([100, -100, 6], np.int8), out, True)
    m = np.zeros((2, 2), np.int16)
    if "matmul" in sys.argv:
        matrix_multiply(np.array([[1, 2], [3, 4]], np.int16), np.array([[5, 6], [7, 8]], np.int16), None, m,
                        False, False, False)
    hits = sum(elementwise._add_sub_int.stats.cache_hits.values())
    print(json.dumps({"add": out.tolist(), "matmul": m.tolist(), "uncached": jit.uncached(), "hits": hits}))
""")


def copy_package(root: Path) -> Path:
    """The package's pure-Python part (no libopenvx.so needed) copied under ``root``."""
    target = root / "openvx_nn"
    target.mkdir(parents=True)
    shutil.copy(PACKAGE / "__init__.py", target)
    shutil.copytree(PACKAGE / "kernels", target / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    return target


def run_probe(root: Path, *, matmul: bool = False, **env: str) -> dict:
    """The probe's results in a child Python on ``root``: add int8, and with ``matmul`` a matrix multiply too (its
    SIMD route compiles for tens of seconds on an empty cache: only where a test asserts on it)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    environment.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1", **env)
    done = subprocess.run([sys.executable, "-c", PROBE, *(["matmul"] if matmul else [])], env=environment,
                          capture_output=True, text=True, timeout=300, cwd=root, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


EXPECTED_ADD = [127, -128, 11]
EXPECTED_MATMUL = [[23, 34], [31, 46]]  # (A @ B).T with A = a.T = [[1, 3], [2, 4]], B = b.T


def test_kernels_run_uncached_when_no_cache_directory_is_writable(tmp_path):
    # Root ignores permission bits, so "unwritable" is a path below a regular file. The cache would otherwise
    # fall back from NUMBA_CACHE_DIR to $OPENVX_NN_CACHE_DIR or ~/.cache: block those too (never the package's own
    # __pycache__).
    copy_package(tmp_path / "site")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    result = run_probe(tmp_path / "site", matmul=True, NUMBA_CACHE_DIR=str(blocker / "numba"),
                       OPENVX_NN_CACHE_DIR=str(blocker / "chosen"), XDG_CACHE_HOME=str(blocker / "xdg"),
                       HOME=str(blocker))
    assert result["add"] == EXPECTED_ADD and result["matmul"] == EXPECTED_MATMUL
    assert "_add_sub_int" in result["uncached"] and "_matmul_int" in result["uncached"]


def test_editing_a_helper_recompiles_the_kernels_that_use_it(tmp_path):
    # numba keys a cached function by its own file only: without the package stamp, a changed fit() in
    # fixed_point.py would be ignored by the cached add kernel of elementwise.py.
    package = copy_package(tmp_path / "site")
    cache = str(tmp_path / "cache")
    first = run_probe(tmp_path / "site", NUMBA_CACHE_DIR=cache)
    assert first["add"] == EXPECTED_ADD and first["uncached"] == [] and first["hits"] == 0
    again = run_probe(tmp_path / "site", NUMBA_CACHE_DIR=cache)
    assert again["add"] == EXPECTED_ADD and again["hits"] == 1, "an unchanged package loads from the cache"
    helper = package / "kernels" / "support" / "fixed_point.py"
    source = helper.read_text()
    edited = source.replace("        if v > hi:\n            return hi\n", "        if v > hi:\n            return hi - 1\n")
    assert edited != source
    helper.write_text(edited)
    changed = run_probe(tmp_path / "site", NUMBA_CACHE_DIR=cache)
    assert changed["add"] == [126, -128, 11] and changed["hits"] == 0


def test_a_cache_that_breaks_after_decoration_only_costs_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "cache"))
    module_file = tmp_path / "late_failure.py"
    module_file.write_text("from openvx_nn.kernels.support.jit import kernel\n\n\n"
                           "@kernel\ndef triple_late(x):\n    return 3 * x\n")
    spec = importlib.util.spec_from_file_location("late_failure", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # decorated: numba found tmp_path/cache writable
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
    (tmp_path / "cache").write_text("now a file")
    assert module.triple_late(14) == 42
    assert "triple_late" in jit.uncached()


def test_one_compiled_function_serves_every_layout():
    rng = np.random.default_rng(0)
    before = {s for s in elementwise._add_sub_int.signatures if s[0].dtype == numba.int16}
    for out in (np.zeros((4, 6), np.int16), np.zeros((4, 6), np.int16, order="F"),
                np.zeros((8, 12), np.int16)[::2, ::2], np.zeros((6, 4), np.int16).T):
        a = rng.integers(-9, 9, (4, 6)).astype(np.int16)
        kernels.add(a, a[:, :1], out, True)
        assert (out == a + a[:, :1]).all()
    after = {s for s in elementwise._add_sub_int.signatures if s[0].dtype == numba.int16}
    # at most one new compiled form for the four layouts (an earlier test may have compiled another, e.g. for a
    # read-only input)
    assert len(after - before) <= 1 and after and before <= after


def test_every_kernel_is_compiled_nogil():
    dispatchers = [obj for module in (kernels.openvx.elementwise, kernels.openvx.lookup, kernels.openvx.transpose,
                                      kernels.openvx.convert_depth, kernels.openvx.matmul,
                                      kernels.support.fixed_point)
                   for obj in vars(module).values() if isinstance(obj, numba.core.dispatcher.Dispatcher)]
    dispatchers += list(kernels.openvx.matmul._KERNELS.values())
    assert len(dispatchers) >= 15
    assert all(d.targetoptions.get("nogil") for d in dispatchers)


THREADS = textwrap.dedent("""
    import threading
    import numba
    import numpy as np
    from openvx_nn.kernels import matrix_multiply
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, (300, 200)).astype(np.int16)  # dims [K=300, M=200]
    b = rng.integers(-100, 100, (200, 300)).astype(np.int16)  # dims [N=200, K=300]
    expected = np.clip((a.T.astype(np.int64) @ b.T.astype(np.int64)).T, -32768, 32767)
    outs = [np.zeros((200, 200), np.int16) for _ in range(4)]
    matrix_multiply(a, b, None, outs[0], False, False, False, parallel=True, isa="generic")  # the parallel kernel
    def work(out):
        for _ in range(15):
            matrix_multiply(a, b, None, out, False, False, False, parallel=True, isa="generic")
    threads = [threading.Thread(target=work, args=(out,)) for out in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(numba.threading_layer(), all((out == expected).all() for out in outs))
""")


def test_parallel_kernels_from_many_threads_survive_the_workqueue_layer():
    # The workqueue layer aborts the process on concurrent parallel launches; jit.thread_pool prevents them.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    environment.update(PYTHONPATH=str(PACKAGE.parent), NUMBA_THREADING_LAYER="workqueue")
    done = subprocess.run([sys.executable, "-c", THREADS], env=environment, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["workqueue", "True"]


def _variants():
    """Three jit-callable functions, and one that cannot compile (it names no attribute an int has)."""
    def plus(x, y):
        return x + y

    def times(x, y):
        return x * y

    def broken(x, y):
        return x.no_such_attribute

    return jit.jitable(plus), jit.jitable(times), jit.jitable(broken)


def test_switch_compiles_only_the_function_of_a_literal_code():
    plus, times, broken = _variants()
    choose = jit.switch((plus, broken, times))

    @numba.njit
    def run(code, x, y):
        return choose(code, (x, y))

    # the broken function at code 1 never compiles: each literal code compiles its own function alone
    assert run.compile((numba.types.literal(0), numba.types.int64, numba.types.int64))
    assert run.compile((numba.types.literal(2), numba.types.int64, numba.types.int64))
    literal_0 = run.overloads[(numba.types.literal(0), numba.types.int64, numba.types.int64)].entry_point
    literal_2 = run.overloads[(numba.types.literal(2), numba.types.int64, numba.types.int64)].entry_point
    assert literal_0(0, 6, 7) == 13 and literal_2(2, 6, 7) == 42
    with pytest.raises(numba.core.errors.TypingError):
        run.compile((numba.types.literal(1), numba.types.int64, numba.types.int64))
    with pytest.raises(numba.core.errors.TypingError):  # a run-time code: no function chosen
        run.compile((numba.types.int64, numba.types.int64, numba.types.int64))
