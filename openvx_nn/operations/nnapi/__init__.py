"""Kernel descriptions of the NNAPI front end's operations (``org.openvx_nn.nnapi.*``)."""
from ...core.kernels import add_publisher, family_publisher
from . import (  # noqa: F401  (register)
    convolution,
    detection,
    elementwise,
    functions,
    lookup,
    movement,
    multinomial,
    normalization,
    per_channel,
    recurrent,
    reshaping,
    selection,
    sequence_recurrent,
    spread,
    statistics,
    suppression,
    windowed_float,
)

add_publisher("org.openvx_nn.nnapi", family_publisher("org.openvx_nn.nnapi."))
