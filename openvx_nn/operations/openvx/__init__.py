"""Kernel descriptions of the OpenVX standard kernels: the NN extension layers and the 1.2 tensor operations."""
from ...core.kernels import add_publisher, family_publisher
from . import color_convert, convolution, layers, tensor_ops  # noqa: F401  (each module registers its descriptions)

add_publisher("org.khronos", family_publisher("org.khronos."))
