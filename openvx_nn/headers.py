"""Where the installed C headers live, and what they declare.

The headers in ``include/VX`` are the single source of every standard name and
number: the Python side reads enumerations and declarations from them instead
of repeating them.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

HEADER_NAMES = ("vx_vendors.h", "vx_types.h", "vx_kernels.h", "vx_api.h",
                "vx_nodes.h", "vxu.h", "vx_khr_nn.h", "vx.h",
                "vx_ext_openvx_nn.h")  # ours, hand-written: vendor extensions

_PACKAGE = Path(__file__).resolve().parent


def include_dir() -> Path:
    """The directory holding ``VX/vx.h``: inside the package once installed, the
    repository's ``include/`` for an editable install."""
    for candidate in (_PACKAGE / "include", _PACKAGE.parent / "include"):
        if (candidate / "VX" / "vx.h").is_file():
            return candidate
    raise FileNotFoundError(f"openvx_nn: no VX/vx.h under {_PACKAGE} or its parent")


def _header_text(name: str) -> str:
    return (include_dir() / "VX" / name).read_text()


_ENUM_RE = re.compile(r"enum\s+(\w+)\s*\{([^}]*)\};", re.DOTALL)
_DEFINE_INT_RE = re.compile(r"^#define\s+(\w+)\s+\(?(-?0x[0-9A-Fa-f]+|-?\d+)u?\)?\s*$", re.MULTILINE)


@cache
def enumerations() -> dict[str, dict[str, int]]:
    """Every ``enum`` block of the headers: ``{enum type: {name: value}}``."""
    result: dict[str, dict[str, int]] = {}
    for name in HEADER_NAMES:
        for etype, body in _ENUM_RE.findall(_header_text(name)):
            members = result.setdefault(etype, {})
            for item in body.split(","):
                if "=" in item:
                    key, value = item.split("=")
                    members[key.strip()] = int(value.strip(), 0)
    return result


@cache
def integer_macros() -> dict[str, int]:
    """Object-like ``#define NAME <integer>`` macros (limits such as VX_MAX_KERNEL_NAME)."""
    out: dict[str, int] = {}
    for name in HEADER_NAMES:
        for key, value in _DEFINE_INT_RE.findall(_header_text(name)):
            out[key] = int(value, 0)
    return out


def cdef_source() -> str:
    """The headers as declarations cffi can parse: preprocessor lines and the
    C++ guards dropped, the empty calling-convention macros removed."""
    parts = []
    for name in HEADER_NAMES:
        skipping = False
        for line in _header_text(name).splitlines():
            stripped = line.strip()
            if stripped.startswith("#ifdef __cplusplus"):
                skipping = True
                continue
            if skipping:
                skipping = not stripped.startswith("#endif")
                continue
            if stripped.startswith("#"):
                m = _DEFINE_INT_RE.match(stripped)
                if m:
                    parts.append(f"#define {m.group(1)} {int(m.group(2), 0)}")
                continue
            line = re.sub(r"\b(VX_API_ENTRY|VX_API_CALL|VX_CALLBACK)\b", "", line)
            line = re.sub(r"/\*.*?\*/", "", line)
            parts.append(line)
    return "\n".join(parts)
