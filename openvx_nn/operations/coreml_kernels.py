"""Registers every kernel description the CoreML front end uses (``org.openvx_nn.coreml.*``)."""
from . import (  # noqa: F401
    coreml_elementwise,
    coreml_layout,
    coreml_linear,
    coreml_recurrent,
    coreml_resample,
    coreml_statistics,
)
