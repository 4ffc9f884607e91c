"""One lowering per CoreML layer type, one module per family; ``registry`` holds the table they fill."""
from . import (  # noqa: F401  (each module registers its lowerings)
    activation,
    arithmetic,
    control,
    convolution,
    custom,
    dynamic,
    indexing,
    normalization,
    recurrent,
    resize,
    sampling,
    shape,
    shape_nd,
    tensor_nd,
    volume,
)
from .registry import LOWERINGS, lower, lower_all, lowers  # noqa: F401
