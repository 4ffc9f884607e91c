"""Kernel descriptions of the NNAPI front end's operations (``org.openvx_nn.nnapi.*``)."""
from . import convolution, elementwise, lookup, normalization, recurrent, reshaping  # noqa: F401  (register)
