"""The cffi ``ffi``/``lib`` of the running libopenvx.so (importable only once it has started)."""
from openvx_nn._capi import ffi, lib  # type: ignore[import-not-found]  # noqa: F401
