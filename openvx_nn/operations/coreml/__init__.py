"""Kernel descriptions of the CoreML front end's operations (``org.openvx_nn.coreml.*``)."""
from . import convolution, elementwise, layout, linear, recurrent, resample, statistics  # noqa: F401 (registering)
