"""The compatibility mode: the standard's text, or the Khronos sample implementation's conventions.

Where the sample implementation (and the conformance suite's references)
compute some layers differently from the standard's text, the library follows
the text by default and the sample on request: ``OPENVX_NN_COMPAT=khronos-sample``
in the environment, or the vendor context attribute
``VX_CONTEXT_OPENVX_NN_COMPAT`` (``VX/vx_ext_openvx_nn.h``). The mode is
resolved once per node when a graph is verified and kept in the node's plan;
``docs/decisions.md`` lists every difference with its formula.
"""
from __future__ import annotations

import ctypes
import os
from enum import IntEnum

from ..headers import enumerations
from .enums import Status
from .errors import VXError

ENVIRONMENT_VARIABLE = "OPENVX_NN_COMPAT"
ContextAttrExt = IntEnum("vx_ext_openvx_nn_context_attribute_e",  # type: ignore[misc]
                         enumerations()["vx_ext_openvx_nn_context_attribute_e"])
Compat = IntEnum("vx_ext_openvx_nn_compat_e", enumerations()["vx_ext_openvx_nn_compat_e"])  # type: ignore[misc]
_BY_WORD = {"": Compat.VX_OPENVX_NN_COMPAT_STANDARD, "standard": Compat.VX_OPENVX_NN_COMPAT_STANDARD,
            "khronos-sample": Compat.VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE}


def _process_getenv():
    try:
        getenv = ctypes.CDLL(None).getenv
    except (OSError, AttributeError):
        return None
    getenv.restype, getenv.argtypes = ctypes.c_char_p, [ctypes.c_char_p]
    return getenv


_GETENV = _process_getenv()


def environment_word() -> str:
    """``OPENVX_NN_COMPAT`` as the process environment holds it now. Python's ``os.environ`` is a copy
    taken when the interpreter started, so a C host's ``setenv`` after its first OpenVX call would go
    unseen there; the C library's ``getenv`` sees both that and ``os.environ`` changes (which putenv)."""
    if _GETENV is None:
        return os.environ.get(ENVIRONMENT_VARIABLE, "")
    value = _GETENV(ENVIRONMENT_VARIABLE.encode())
    return "" if value is None else value.decode("utf-8", "replace")


def from_environment() -> Compat:
    """The mode ``OPENVX_NN_COMPAT`` asks for; VXError (VX_ERROR_INVALID_VALUE) for an unknown word."""
    word = environment_word().strip().lower()
    if word not in _BY_WORD:
        raise VXError(Status.VX_ERROR_INVALID_VALUE,
                      f"environment variable {ENVIRONMENT_VARIABLE}={word!r} is not a compatibility mode "
                      f"(expected 'standard' or 'khronos-sample')")
    return _BY_WORD[word]


def resolve(setting: int) -> Compat:
    """The effective mode of a context whose attribute holds ``setting``."""
    if setting == Compat.VX_OPENVX_NN_COMPAT_ENVIRONMENT:
        return from_environment()
    return Compat(setting)


def check_setting(value: int) -> Compat:
    """``value`` as a setting of the attribute; VXError (VX_ERROR_INVALID_VALUE) when it is none."""
    if value not in Compat._value2member_map_:
        names = ", ".join(m.name for m in Compat)
        raise VXError(Status.VX_ERROR_INVALID_VALUE,
                      f"VX_CONTEXT_OPENVX_NN_COMPAT value {value:#x} is not one of {names}")
    return Compat(value)


def sample_conventions(context) -> bool:
    """True when graphs of ``context`` verified now follow the sample implementation's conventions."""
    return resolve(context.nn_compat) == Compat.VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE
