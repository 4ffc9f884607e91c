"""openvx-nn: the Khronos OpenVX 1.3 Neural Network extension as a shared library and a Python package.

C programs link ``libopenvx.so`` (next to this file) and include ``<VX/vx.h>``;
Python programs reach the same C API through :mod:`openvx_nn.vx`.
"""
__version__ = "0.2.0"

from .errors import Error

_LAZY = {"VXError": ("openvx_nn.api.errors", "VXError"), "NNAPIError": ("openvx_nn.nnapi.errors", "NNAPIError"),
         "CoreMLError": ("openvx_nn.coreml.errors", "CoreMLError"), "NNEFError": ("openvx_nn.nnef.errors", "NNEFError")}


def __getattr__(name: str):
    """The error classes of the layers and front ends, imported on first use (not every program needs them)."""
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'openvx_nn' has no attribute {name!r}")


__all__ = ["CoreMLError", "Error", "NNAPIError", "NNEFError", "VXError", "__version__"]
