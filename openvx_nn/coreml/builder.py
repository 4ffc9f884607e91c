"""The CoreML front end's graph builder: the shared one (``api.graph_builder``) raising ``CoreMLError``."""
from __future__ import annotations

from ..api import graph_builder
from ..api.graph_builder import Blob, nhwc_dims
from .errors import CoreMLError

__all__ = ["Blob", "GraphBuilder", "nhwc_dims"]


class GraphBuilder(graph_builder.GraphBuilder):
    """Owns the context reference, the graph and every object made for a CoreML model; errors are CoreMLErrors."""

    error = CoreMLError

    def __init__(self, outputs=(), nhwc_route: bool = True):
        super().__init__(outputs, nhwc_route)
        # Concatenations along C growing one buffer (``lowering.concat_chains``): the plan's links and the channels
        # of the blobs their layers state; the outputs made as a buffer's prefix -> (the buffer, the prefix).
        self.chain_links: dict[str, object] = {}
        self.chain_channels: dict[str, int] = {}
        self.grown: dict[str, tuple] = {}
        # blobs their producers may write into a chain's buffer -> the concatenation; a concatenation's output ->
        # its inputs so written (``concat_chains.producer_slice``)
        self.chain_slices: dict[str, object] = {}
        self.placed: dict[str, set[str]] = {}
        # blobs a convolution may write into the output of a concatenation outside the chains, made early; the
        # layers making blobs written once, whose channels they state (``concat_chains.early_slot``)
        self.early_slots: dict[str, object] = {}
        self.concat_makers: dict[str, object] = {}
