"""Pure numeric kernels: numba-compiled functions on NumPy arrays, with no knowledge of graphs.

Arrays are in OpenVX axis order (axis 0 is OpenVX dim 0, the fastest moving
one), 1 to 6 dims, any strides; outputs are preallocated by the caller and
written in place. Policies arrive as plain bools (``saturate``,
``nearest_even``) and fixed point positions as ints: translating OpenVX enums
is the graph engine's job, and so is validation. The arithmetic contract is
``shared/docs/fixed-point.md``; every function states its part of it.
"""
import os

from .openvx.activation import activation
from .openvx.convert_depth import convert_depth
from .openvx.convolution import convolution
from .openvx.deconvolution import deconvolution
from .openvx.elementwise import add, multiply, subtract
from .openvx.fully_connected import fully_connected
from .openvx.lookup import table_lookup
from .openvx.matmul import matrix_multiply
from .openvx.normalization import local_response_normalization
from .openvx.pooling import pooling
from .openvx.roi_pooling import roi_pooling
from .openvx.softmax import softmax
from .openvx.transpose import copy, copy_run, transpose
from .support import warm

if os.environ.get("OPENVX_NN_RECORD_SIGNATURES"):  # record the specialisations this process compiles
    warm.start_recording()

__all__ = ["activation", "add", "convert_depth", "convolution", "copy", "copy_run", "deconvolution", "fully_connected", "local_response_normalization",
           "matrix_multiply", "multiply", "pooling", "roi_pooling", "softmax", "subtract", "table_lookup", "transpose"]
