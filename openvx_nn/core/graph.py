"""Graphs: the scope of virtual objects and, with the graph engine, what runs nodes."""
from __future__ import annotations

from .context import Context
from .enums import Type
from .reference import Reference


class Graph(Reference):
    vx_type = Type.VX_TYPE_GRAPH

    def __init__(self, context: Context):
        super().__init__(context)
