"""Kernel descriptions of the CoreML front end's operations (``org.openvx_nn.coreml.*``)."""
from ...core.kernels import add_publisher, family_publisher
from . import elementwise, layout, linear, recurrent, resample, statistics  # noqa: F401  (each registers its kernels)

add_publisher("org.openvx_nn.coreml", family_publisher("org.openvx_nn.coreml."))
