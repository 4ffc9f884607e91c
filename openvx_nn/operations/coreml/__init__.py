"""Kernel descriptions of the CoreML front end's operations (``org.openvx_nn.coreml.*``)."""
from ...core.kernels import add_publisher, family_publisher
from . import (  # noqa: F401  (registering)
    convolution,
    elementwise,
    indexing,
    layout,
    linear,
    pooling,
    recurrent,
    resample,
    sampling,
    statistics,
    suppression,
    volume,
)

add_publisher("org.openvx_nn.coreml", family_publisher("org.openvx_nn.coreml."))
