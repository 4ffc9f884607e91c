"""The kernel cache's builds on disk, and the removal of those no install uses any more (``openvx-nn warm``).

The cache directory (``jit.user_cache_dir``) holds one subdirectory per content of the kernel sources, named by
the first 16 hex digits of its stamp (``jit.PACKAGE_STAMP``): each upgrade, and each edit of a source checkout,
adds one of 35-140 MB, and nothing removed the old ones. A build's last use is the newest access or change time
of its files: loading a kernel reads its index file, which updates the access time at least daily on Linux's
default ``relatime`` mounts (on a ``noatime`` mount only compiling counts, and a build that another install
only loads may go after ``days``; that install then compiles again, it does not fail). The current build is
never removed, nor anything whose name is not a stamp's, nor a symbolic link.
"""
from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import NamedTuple

STAMP_NAME = re.compile(r"[0-9a-f]{16}")
UNUSED_DAYS = 30
"""How long a build of other sources stays after its last use: a second virtual environment of another version,
run now and then, keeps its compiled kernels."""


class Pruned(NamedTuple):
    removed: list[Path]
    freed: int  # bytes


def last_use(build: Path) -> float:
    """The newest access or change time (seconds since the epoch) of ``build`` and its files."""
    newest = build.stat().st_mtime
    for path in build.rglob("*"):
        try:
            info = path.lstat()
        except OSError:
            continue
        newest = max(newest, info.st_atime, info.st_mtime)
    return newest


def stale_builds(root: Path, current: str, days: float, now: float | None = None) -> list[Path]:
    """The builds under ``root`` other than ``current`` (a stamp's first 16 hex digits) last used over ``days``
    days before ``now``; ``days`` 0: every other build."""
    if not root.is_dir():
        return []
    now = time.time() if now is None else now
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name == current or not STAMP_NAME.fullmatch(entry.name) or entry.is_symlink() or not entry.is_dir():
            continue
        if days <= 0 or now - last_use(entry) > days * 86400:
            found.append(entry)
    return found


def prune(root: Path, current: str, days: float = UNUSED_DAYS) -> Pruned:
    """Remove :func:`stale_builds`; what was removed and the bytes it held (a build that cannot be removed, say on
    a read-only disk, is left as it is)."""
    removed, freed = [], 0
    for build in stale_builds(root, current, days):
        size = sum(p.lstat().st_size for p in build.rglob("*") if p.is_file() and not p.is_symlink())
        shutil.rmtree(build, ignore_errors=True)
        if not build.exists():
            removed.append(build)
            freed += size
    return Pruned(removed, freed)
