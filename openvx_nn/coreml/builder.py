"""The CoreML front end's graph builder: the shared one (``api.graph_builder``) raising ``CoreMLError``."""
from __future__ import annotations

from ..api import graph_builder
from ..api.graph_builder import Blob, nhwc_dims
from .errors import CoreMLError

__all__ = ["Blob", "GraphBuilder", "nhwc_dims"]


class GraphBuilder(graph_builder.GraphBuilder):
    """Owns the context reference, the graph and every object made for a CoreML model; errors are CoreMLErrors."""

    error = CoreMLError
