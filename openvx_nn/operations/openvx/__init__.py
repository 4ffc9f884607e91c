"""Kernel descriptions of the OpenVX standard kernels: the NN extension layers and the 1.2 tensor operations."""
from . import convolution, layers, tensor_ops  # noqa: F401  (each module registers its descriptions)
