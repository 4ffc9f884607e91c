"""Kernel descriptions (name, enum, signature, validator, executor) of every
kernel the library provides; importing this package registers them."""
from . import nn_convolution, nn_layers, tensor_ops  # noqa: F401
from . import coreml_elementwise, coreml_layout, coreml_linear, coreml_recurrent, coreml_resample, coreml_statistics  # noqa: F401,E501
