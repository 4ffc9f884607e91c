"""Loading and running the kernels leaves the host process's environment as it was: nothing is added to
``os.environ`` (which every OpenMP runtime started later and every child process would inherit), and a
setting the user made stays as made."""
from __future__ import annotations

import json
import os
import subprocess
import sys

PROGRAM = r"""
import json, os, subprocess, sys
before = dict(os.environ)
import numpy as np
import numba
from openvx_nn.api import Context
with Context() as ctx, ctx.graph() as g:
    x = ctx.tensor(np.random.default_rng(0).standard_normal((112, 112, 64, 1)).astype(np.float32))
    g.max_pool(x, size=(3, 3), stride=(2, 2))   # big enough to run on numba's thread pool
    g.process()
child = subprocess.run([sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
                       capture_output=True, text=True, check=True).stdout
print(json.dumps({"layer": numba.threading_layer(), "before": before, "after": dict(os.environ),
                  "child": json.loads(child)}))
"""


def _run(extra: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(extra)
    env.pop("OPENVX_NN_THREADS", None)  # the pool must start
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _changes(a: dict, b: dict) -> dict:
    return {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}


def test_the_environment_is_left_alone():
    seen = _run({})
    assert _changes(seen["before"], seen["after"]) == {}
    assert "GOMP_SPINCOUNT" not in seen["child"]


def test_a_users_setting_stays():
    seen = _run({"GOMP_SPINCOUNT": "123"})
    assert _changes(seen["before"], seen["after"]) == {}
    assert seen["after"]["GOMP_SPINCOUNT"] == "123" == seen["child"]["GOMP_SPINCOUNT"]
