"""docs/coverage.md is what tools/gen_coverage.py generates now (regenerate it when this fails)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("gen_coverage", ROOT / "tools" / "gen_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_coverage_doc_is_up_to_date():
    gen = _generator()
    assert (ROOT / "docs" / "coverage.md").read_text() == gen.render(), \
        "docs/coverage.md is stale: run python tools/gen_coverage.py"


def test_the_coverage_doc_lists_every_tier1_function_and_every_kernel():
    gen = _generator()
    text = gen.render()
    for _, name in gen.tier1_functions():
        assert f"| `{name}` |" in text
    from openvx_nn.core.kernels import all_kernels
    for kernel in all_kernels():
        assert f"### `{kernel.name}`" in text


def test_the_generator_run_as_a_script_imports_the_checkout_it_sits_in(tmp_path):
    # As ``python tools/gen_coverage.py`` does: sys.path starts at tools/, from another directory. It imported
    # an installed openvx_nn (another checkout's, in an editable install) unless PYTHONPATH named this one.
    script = ROOT / "tools" / "gen_coverage.py"
    program = (f"import runpy, sys; sys.path[0] = {str(script.parent)!r}; runpy.run_path({str(script)!r}); "
               "import openvx_nn; print(openvx_nn.__file__)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).resolve() == ROOT / "openvx_nn" / "__init__.py"
