"""Kernel descriptions (name, enum, signature, validator, executor) of every
kernel the library provides; importing this package registers them."""
from . import nnapi_convolution, nnapi_elementwise, nnapi_lookup, nnapi_normalization, nnapi_recurrent, nnapi_reshaping  # noqa: F401, I001
from . import nn_convolution, nn_layers, tensor_ops  # noqa: F401

# isort: split
from . import coreml_kernels  # noqa: F401
