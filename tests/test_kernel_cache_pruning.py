"""``openvx-nn warm`` removes the cached kernel builds of other sources that no install has used for a while, and
nothing else."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from openvx_nn import kernel_cache
from openvx_nn.kernels.support import jit

DAY = 86400.0


def _build(root: Path, name: str, age_days: float, size: int = 1000) -> Path:
    """A fake build: an index file of ``size`` bytes, every time stamp ``age_days`` old."""
    build = root / name / "engine"
    build.mkdir(parents=True)
    index = build / "simd._units-1.py311.nbi"
    index.write_bytes(b"x" * size)
    then = time.time() - age_days * DAY
    for path in (index, build, build.parent):
        os.utime(path, (then, then))
    return build.parent


def test_only_builds_of_other_sources_unused_for_the_days_given_are_stale(tmp_path):
    current = "0123456789abcdef"
    _build(tmp_path, current, 400)  # however old: it is this install's
    old = _build(tmp_path, "aaaaaaaaaaaaaaaa", 40)
    _build(tmp_path, "bbbbbbbbbbbbbbbb", 1)
    read_lately = _build(tmp_path, "cccccccccccccccc", 40)
    index = next(read_lately.rglob("*.nbi"))
    os.utime(index, (time.time() - 2 * DAY, index.stat().st_mtime))  # loaded two days ago: accessed, not changed
    _build(tmp_path, "kernels_aaaaaaaaaaaaaaaaaaaa", 40)  # numba's own layout (NUMBA_CACHE_DIR): not a build name
    _build(tmp_path, "AAAAAAAAAAAAAAAA", 40)
    (tmp_path / "dddddddddddddddd").write_text("a file")
    (tmp_path / "eeeeeeeeeeeeeeee").symlink_to(old)
    assert kernel_cache.stale_builds(tmp_path, current, 30) == [old]
    assert [p.name for p in kernel_cache.stale_builds(tmp_path, current, 0)] == [
        "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"]
    assert kernel_cache.stale_builds(tmp_path / "missing", current, 30) == []


def test_prune_removes_the_stale_builds_and_counts_their_bytes(tmp_path):
    current = "0123456789abcdef"
    keep = _build(tmp_path, current, 400)
    old = _build(tmp_path, "aaaaaaaaaaaaaaaa", 40, size=3000)
    recent = _build(tmp_path, "bbbbbbbbbbbbbbbb", 1)
    (tmp_path / "eeeeeeeeeeeeeeee").symlink_to(old)
    pruned = kernel_cache.prune(tmp_path, current, 30)
    assert pruned == kernel_cache.Pruned([old], 3000)
    assert not old.exists() and keep.exists() and recent.exists()
    assert kernel_cache.prune(tmp_path, current, 30) == kernel_cache.Pruned([], 0)


def test_warm_prunes_its_cache_directory(tmp_path):
    # A cache directory of this process's own (OPENVX_NN_CACHE_DIR), with an old build of other sources beside it.
    old = _build(tmp_path, "aaaaaaaaaaaaaaaa", 40, size=5 * 2**20)
    recent = _build(tmp_path, "bbbbbbbbbbbbbbbb", 1)
    current = _build(tmp_path, jit.PACKAGE_STAMP[:16], 400)  # this install's build, however old
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "OPENVX_NN_RECORD_SIGNATURES")}
    env["OPENVX_NN_CACHE_DIR"] = str(tmp_path)
    empty = tmp_path / "none.txt"
    empty.write_text("")
    result = subprocess.run([sys.executable, "-m", "openvx_nn", "warm", "--only", str(empty)], capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "removed 1 kernel builds of other sources unused for 30 days (5 MiB)" in result.stdout, result.stdout
    assert not old.exists() and recent.exists()
    result = subprocess.run([sys.executable, "-m", "openvx_nn", "warm", "--only", str(empty), "--keep-days", "0"],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert not recent.exists() and current.exists()


def test_keep_days_must_be_a_number_of_days():
    result = subprocess.run([sys.executable, "-m", "openvx_nn", "warm", "--keep-days", "-1"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2
    assert "must be 0 or more days, got -1" in result.stderr
