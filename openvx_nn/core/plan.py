"""Graph verification: scope, writers, dependency order, then each node's validator.

Data objects are compared by the memory they cover, not by identity: a view
and its parent (or two views of one tensor) overlap when their boxes in the
root tensor intersect.  Disjoint views of one tensor may be written by
different nodes (splitting and concatenation); overlapping writes may not.
"""
from __future__ import annotations

import heapq

from .enums import Direction, Status, Type
from .errors import VXError
from .node import Node
from .reference import Reference
from .validation import Validation

Region = tuple[object, tuple[tuple[int, int], ...] | None]


def region(obj: Reference) -> Region:
    """(root object, box in root coordinates or None for the whole object)."""
    if obj.vx_type != Type.VX_TYPE_TENSOR or getattr(obj, "parent", None) is None:
        return obj, None
    offsets = [0] * len(obj.dims)
    node = obj
    while node.parent is not None:
        offsets = [o + s for o, s in zip(offsets, node.view_start)]
        node = node.parent
    return node, tuple((o, o + d) for o, d in zip(offsets, obj.dims))


def overlap(a: Region, b: Region) -> bool:
    if a[0] is not b[0]:
        return False
    if a[1] is None or b[1] is None:
        return True
    return all(s1 < e2 and s2 < e1 for (s1, e1), (s2, e2) in zip(a[1], b[1]))


def _objects(node: Node, direction: int) -> list[tuple[int, Reference]]:
    return [(i, p) for i, (spec, p) in enumerate(zip(node.description.params, node.params))
            if p is not None and spec.direction == direction]


class Verifier:
    """Runs every check, logging each error; ``run`` raises the first."""

    def __init__(self, graph: Reference):  # a graph.Graph
        self.graph = graph
        self.errors: list[VXError] = []

    def error(self, status: int, message: str, node: Node | None = None) -> None:
        err = VXError(status, message, node or self.graph)
        self.errors.append(err)
        self.graph.context.log(err.ref, status, f"vxVerifyGraph: {message}")

    def run(self) -> list[Node]:
        nodes = list(self.graph.nodes)
        if not nodes:
            self.error(Status.VX_ERROR_INVALID_GRAPH, f"{self.graph.describe()} has no nodes")
        for node in nodes:
            self._check_presence_and_scope(node)
        self._check_writers(nodes)
        order = self._order(nodes) if not self.errors else []
        if not self.errors:
            self._check_unwritten_virtuals(nodes)
        if not self.errors:
            for node in order:
                try:
                    node.description.validate(Validation(node))
                except VXError as err:
                    self.error(err.status, err.message, node)
        if self.errors:
            first = self.errors[0]
            first.logged = True  # type: ignore[attr-defined]
            raise first
        return order

    def _check_presence_and_scope(self, node: Node) -> None:
        for i, (spec, value) in enumerate(zip(node.description.params, node.params)):
            where = f"{node.describe()} parameter {i} ({spec.name})"
            if value is None:
                if not spec.optional:
                    self.error(Status.VX_ERROR_NOT_SUFFICIENT, f"{where}: required parameter is not set", node)
                continue
            if not value.alive:
                self.error(Status.VX_ERROR_INVALID_REFERENCE, f"{where}: the object was destroyed", node)
            if spec.static and getattr(value, "virtual", False):
                self.error(Status.VX_ERROR_INVALID_PARAMETERS,
                           f"{where}: [static] parameters must hold data before verification; "
                           f"virtual {value.describe()} cannot", node)
            owner = getattr(value, "graph", None) or getattr(value, "scope", None)
            if getattr(value, "virtual", False) and owner is not self.graph:
                self.error(Status.VX_ERROR_INVALID_SCOPE,
                           f"{where}: virtual {value.describe()} belongs to another graph", node)

    def _check_writers(self, nodes: list[Node]) -> None:
        writes = [(n, i, region(p)) for n in nodes for i, p in _objects(n, Direction.VX_OUTPUT)]
        for a in range(len(writes)):
            for b in range(a + 1, len(writes)):
                (n1, i1, r1), (n2, i2, r2) = writes[a], writes[b]
                if overlap(r1, r2):
                    self.error(Status.VX_ERROR_MULTIPLE_WRITERS,
                               f"{n1.describe()} parameter {i1} and {n2.describe()} parameter {i2} "
                               f"write the same data", n2)

    def _order(self, nodes: list[Node]) -> list[Node]:
        position = {id(n): k for k, n in enumerate(nodes)}
        writes = {id(n): [region(p) for _, p in _objects(n, Direction.VX_OUTPUT)] for n in nodes}
        reads = {id(n): [region(p) for _, p in _objects(n, Direction.VX_INPUT)] for n in nodes}
        after: dict[int, set[int]] = {id(n): set() for n in nodes}
        for w in nodes:
            for r in nodes:
                if w is not r and any(overlap(a, b) for a in writes[id(w)] for b in reads[id(r)]):
                    after[id(w)].add(id(r))
        pending = {id(n): 0 for n in nodes}
        for targets in after.values():
            for t in targets:
                pending[t] += 1
        ready = [position[id(n)] for n in nodes if pending[id(n)] == 0]
        heapq.heapify(ready)
        order: list[Node] = []
        while ready:
            node = nodes[heapq.heappop(ready)]
            order.append(node)
            for t in after[id(node)]:
                pending[t] -= 1
                if pending[t] == 0:
                    heapq.heappush(ready, position[t])
        if len(order) != len(nodes):
            stuck = ", ".join(n.describe() for n in nodes if pending[id(n)] > 0)
            self.error(Status.VX_ERROR_INVALID_GRAPH, f"{self.graph.describe()} has a cycle among {stuck}")
        return order

    def _check_unwritten_virtuals(self, nodes: list[Node]) -> None:
        written = [region(p) for n in nodes for _, p in _objects(n, Direction.VX_OUTPUT)]
        for node in nodes:
            for i, value in _objects(node, Direction.VX_INPUT):
                if getattr(value, "virtual", False) and not any(overlap(region(value), w) for w in written):
                    self.error(Status.VX_ERROR_INVALID_GRAPH,
                               f"{node.describe()} parameter {i}: virtual {value.describe()} is read "
                               f"but no node writes it", node)
