"""The Pythonic API: contexts, graphs and tensors over the same C API
(libopenvx.so) that C programs use.

>>> import numpy as np
>>> from openvx_nn.api import Context, quantize
>>> with Context() as ctx, ctx.graph() as g:
...     x = ctx.tensor(quantize(np.ones((4, 4, 1)), np.int16, 8), fixed_point_position=8)
...     y = g.relu(x, out=ctx.tensor(shape=(4, 4, 1), dtype=np.int16, fixed_point_position=8))
...     g.process()
...     int(y.numpy().sum())
4096
"""
from .context import Context, KernelInfo
from .errors import (
    InvalidDimensionError,
    InvalidFormatError,
    InvalidParametersError,
    InvalidReferenceError,
    InvalidTypeError,
    InvalidValueError,
    NotSupportedError,
    OptimizedAwayError,
    VXError,
)
from .fixed_point import dequantize, quantize
from .graph import Graph, Node
from .lut import Lut
from .tensor import Tensor
from .user_kernel import Param, TensorInfo, UserKernel, scalar_input, tensor_input, tensor_output

__all__ = [
    "Context", "Graph", "InvalidDimensionError", "InvalidFormatError", "InvalidParametersError",
    "InvalidReferenceError", "InvalidTypeError", "InvalidValueError", "KernelInfo", "Lut", "Node",
    "NotSupportedError", "OptimizedAwayError", "Param", "Tensor", "TensorInfo", "UserKernel", "VXError",
    "dequantize", "quantize", "scalar_input", "tensor_input", "tensor_output",
]
