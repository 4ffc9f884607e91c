"""The cffi ``ffi``/``lib`` of the running libneuralnetworks.so (importable only once it has started)."""
from openvx_nn._nnapi_capi import ffi, lib  # type: ignore[import-not-found]  # noqa: F401
