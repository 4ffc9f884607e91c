"""Shared by the Pythonic API tests: a leak-checked ``Context`` (each module wraps it in a fixture)."""
from __future__ import annotations

from collections.abc import Iterator

from openvx_nn.api import Context


def leak_checked_context() -> Iterator[Context]:
    """A Context whose VX_CONTEXT_REFERENCES must be back at its start value at the end."""
    with Context() as ctx:
        baseline = ctx.references
        yield ctx
        for obj in reversed(ctx._owned):
            obj.close()
        ctx._owned.clear()
        assert ctx.references == baseline, f"leaked references: {ctx.references} live, {baseline} at start"
