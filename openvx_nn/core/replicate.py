"""``vxReplicateNode``: one copy of a node per item of the object arrays it is given.

The first node holds item 0 of an object array at each replicated parameter; every replicated
parameter's array has the same number of items N. The library adds N - 1 replicas, replica k
holding item k at the replicated parameters and the first node's objects elsewhere. Replicas are
the graph's own (the application has no handle on them); removing the first node removes them.
"""
from __future__ import annotations

from collections.abc import Sequence

from .enums import Status
from .errors import VXError
from .node import Node


def replicate(graph, first: Node, flags: Sequence[bool]) -> list[Node]:
    """Add the replicas of ``first`` (in ``graph``) for the parameters ``flags`` marks."""
    where = f"vxReplicateNode of {first.describe()}"
    if first.graph is not graph:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{where}: the node is not in {graph.describe()}", first)
    if getattr(first, "replicas", None) is not None:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{where}: the node is replicated already", first)
    if len(flags) != len(first.params):
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"{where}: number_of_parameters is {len(flags)}, the node has {len(first.params)}", first)
    if not any(flags):
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{where}: no parameter is marked for replication", first)
    count = None
    arrays = {}
    for index, flag in enumerate(flags):
        if not flag:
            continue
        value = first.params[index]
        owner = getattr(value, "owner", None) if value is not None else None
        if owner is None or owner[1] != 0:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"{where}: parameter {index} is not item 0 of an object array", first)
        array = owner[0]
        if count is not None and len(array.items) != count:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"{where}: parameter {index}'s object array has {len(array.items)} items, "
                          f"an earlier one {count}", first)
        count = len(array.items)
        arrays[index] = array
    replicas: list[Node] = []
    try:
        for k in range(1, count):
            node = Node(graph, first.description)
            node.release()  # the graph's alone: the application never sees a replica
            replicas.append(node)
            for index, value in enumerate(first.params):
                item = arrays[index].items[k] if index in arrays else value
                if item is not None:
                    node.set_parameter(index, item)
    except VXError:
        for node in replicas:
            graph.remove_node(node)
        raise
    first.replicas = replicas
    first.replicate_flags = tuple(bool(f) for f in flags)
    return replicas
