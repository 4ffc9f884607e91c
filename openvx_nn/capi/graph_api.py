"""Entry points for graphs."""
from __future__ import annotations

from ..core import reference
from ..core.context import Context
from ..core.graph import Graph
from .entry import creator_entry


@creator_entry
def vxnn_create_graph(context):
    return Graph(reference.lookup(context, Context, "context"))
