"""The lowering of each NNEF operation family onto our graphs (``registry``: the table the modules fill)."""
from . import elementwise, linear, normalization, sampling, shape, windowed  # noqa: F401  (fill the table)
from .registry import LOWERINGS, lower

__all__ = ["LOWERINGS", "lower"]
