"""docs/coverage.md is what tools/gen_coverage.py generates now (regenerate it when this fails)."""
from __future__ import annotations

import importlib.util
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
