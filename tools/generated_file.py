"""The end of every tool that writes a committed file: write it, or with ``--check`` only say whether it is stale."""
from __future__ import annotations

from pathlib import Path


def write_or_check(path: Path, text: str, check: bool, command: str) -> int:
    """Write ``text`` to ``path``; with ``check``, compare instead: 1 when the committed file differs."""
    if check:
        stale = not path.exists() or path.read_text() != text
        print(f"{path} is {'stale: run ' + command if stale else 'up to date'}")
        return 1 if stale else 0
    path.write_text(text)
    print(f"wrote {path}")
    return 0
