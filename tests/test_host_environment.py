"""Loading and running the kernels and models leaves the host process as it was: nothing is added to
``os.environ`` (which every OpenMP runtime started later and every child process would inherit), a setting
the user made stays as made, and no signal handler or NumPy error setting changes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROGRAM = r"""
import json, os, signal, subprocess, sys
import numpy as np
SIGNALS = [s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP)]
def host():
    return {"signals": {s.name: repr(signal.getsignal(s)) for s in SIGNALS}, "numpy": np.geterr()}
before, host_before = dict(os.environ), host()
import numba
from openvx_nn.api import Context
with Context() as ctx, ctx.graph() as g:
    x = ctx.tensor(np.random.default_rng(0).standard_normal((112, 112, 64, 1)).astype(np.float32))
    g.max_pool(x, size=(3, 3), stride=(2, 2))   # big enough to run on numba's thread pool
    g.process()
from openvx_nn.nnapi.demo import build_model
from openvx_nn import nnapi
compilation = nnapi.Compilation(build_model())
compilation.finish()
execution = nnapi.Execution(compilation)
execution.set_input(0, np.zeros((1, 8, 8, 1), np.uint8))
execution.set_output(0, np.zeros((1, 10), np.uint8))
execution.compute()
if "--coreml" in sys.argv:
    import openvx_nn.coreml as cm
    cm.load(cm.SAMPLE_MODEL).predict({"image": np.zeros((1, 8, 8), np.float32)})
assert host() == host_before, (host(), host_before)
child = subprocess.run([sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
                       capture_output=True, text=True, check=True).stdout
print(json.dumps({"layer": numba.threading_layer(), "before": before, "after": dict(os.environ),
                  "child": json.loads(child)}))
"""


def _run(extra: dict[str, str], *args: str) -> dict:
    # this process may have imported coremltools (which sets TF_CPP_MIN_LOG_LEVEL): the child starts clean
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY",
                                                           "TF_CPP_MIN_LOG_LEVEL")}
    env.update(extra)
    env.pop("OPENVX_NN_THREADS", None)  # the pool must start
    out = subprocess.run([sys.executable, "-c", PROGRAM, *args], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _changes(a: dict, b: dict) -> dict:
    return {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}


def test_the_environment_is_left_alone():
    seen = _run({})
    assert _changes(seen["before"], seen["after"]) == {}
    assert "GOMP_SPINCOUNT" not in seen["child"]


def test_loading_a_coreml_model_leaves_the_environment_alone():
    pytest.importorskip("coremltools")
    seen = _run({}, "--coreml")
    assert _changes(seen["before"], seen["after"]) == {}


def test_a_users_setting_stays():
    seen = _run({"GOMP_SPINCOUNT": "123"})
    assert _changes(seen["before"], seen["after"]) == {}
    assert seen["after"]["GOMP_SPINCOUNT"] == "123" == seen["child"]["GOMP_SPINCOUNT"]
