"""Pure numeric kernels: numba-compiled functions on NumPy arrays, with no knowledge of graphs.

Arrays are in OpenVX axis order (axis 0 is OpenVX dim 0, the fastest moving
one), 1 to 6 dims, any strides; outputs are preallocated by the caller and
written in place. Policies arrive as plain bools (``saturate``,
``nearest_even``) and fixed point positions as ints: translating OpenVX enums
is the graph engine's job, and so is validation. The arithmetic contract is
``shared/docs/fixed-point.md``; every function states its part of it.
"""
from .activation import activation
from .convert_depth import convert_depth
from .convolution import convolution
from .deconvolution import deconvolution
from .elementwise import add, multiply, subtract
from .fully_connected import fully_connected
from .lookup import table_lookup
from .matmul import matrix_multiply
from .normalization import local_response_normalization
from .pooling import pooling
from .roi_pooling import roi_pooling
from .softmax import softmax
from .transpose import copy, transpose

__all__ = ["activation", "add", "convert_depth", "convolution", "copy", "deconvolution", "fully_connected", "local_response_normalization",
           "matrix_multiply", "multiply", "pooling", "roi_pooling", "softmax", "subtract", "table_lookup", "transpose"]
