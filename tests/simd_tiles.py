"""One micro-kernel tile for the integer SIMD engine, for tests that bind native entries over random shapes.

A SIMD native entry is compiled per tile and dtypes: 10-30 s each on an empty cache, and (numba keys an
entry's cache by a per-process hash, see test_native_warm.py) again in every process. Which tile the planner
picks for a shape changes the speed, not the bits: the kernel tests reach every tile through their random
shapes, on the Python route that runs the same ``units`` code. So these tests plan with one tile, the one
picked for a large output of one channel block, and bind one entry per format; shapes stay as random.
"""
from __future__ import annotations

from openvx_nn.kernels.engine import isa, microkernel, tiles


def single() -> tuple[int, tuple[tuple[int, int]]] | None:
    """``(lanes, (tile,))``: the entry of ``tiles.TILES`` that leaves one tile on this CPU (None: no SIMD engine)."""
    lanes = microkernel.LANES.get(isa.selected())
    if lanes not in tiles.TILES:
        return None
    return lanes, (tiles.choose_tile(lanes, 1 << 10, lanes),)


def use_single() -> None:
    """Plan with :func:`single`'s tile in this process (a child's ``sitecustomize`` calls this)."""
    one = single()
    if one is not None:
        tiles.TILES[one[0]] = one[1]


def sitecustomize(tests_dir: str) -> str:
    """The text of a ``sitecustomize`` module that makes a child's embedded interpreter plan with one tile."""
    return f"import sys\nsys.path.insert(0, {tests_dir!r})\nimport simd_tiles\nsimd_tiles.use_single()\n"
