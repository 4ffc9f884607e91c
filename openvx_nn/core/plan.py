"""Graph verification in one linear pass: scope, writers, dependency order, then each node's validator.

Every parameter of every node is read once into an index of accesses by root
object (``regions``); writers, dependencies and unwritten virtual tensors are
found within each root's accesses, never by comparing all nodes with each
other, so verifying costs O(nodes + edges) (plus a sort per root's views).
Disjoint views of one tensor may be written by different nodes (splitting and
concatenation); overlapping writes may not.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable

from .enums import Direction, Status, Type
from .errors import VXError
from .node import Node
from .reference import Reference
from .regions import Access, overlapping, region
from .validation import Validation


class Uses:
    """The accesses of one root object by the graph's nodes, by direction."""

    __slots__ = ("others", "reads", "root", "writes")

    def __init__(self, root: object):
        self.root = root
        self.reads: list[Access] = []
        self.writes: list[Access] = []
        self.others: list[Access] = []  # bidirectional parameters


_OUTPUT, _INPUT = int(Direction.VX_OUTPUT), int(Direction.VX_INPUT)
_TENSOR, _IMAGE = int(Type.VX_TYPE_TENSOR), int(Type.VX_TYPE_IMAGE)


def index_uses(nodes: list[Node], check: Callable[[Node, int, object, object], None] | None = None
               ) -> dict[int, Uses]:
    """Every parameter of ``nodes`` (positions in that list), grouped by ``id`` of its root object.

    Left out: inputs that are neither tensors nor images nor virtual (scalars, LUTs,
    arrays an application set) unless some node writes them -- no check or order
    depends on them, and they are most of a layer's parameters.

    ``check(node, index, spec, value)`` is called for each parameter that is unset or
    not plainly usable (destroyed, virtual): the verifier's presence and scope checks
    ride on this one pass over the parameters.
    """
    uses: dict[int, Uses] = {}
    get = uses.get
    new = tuple.__new__  # an Access without the named tuple's Python-level constructor: one per parameter
    written_plain: set[int] = set()  # ids of objects left out when read, that some node writes
    for position, node in enumerate(nodes):
        graph = node.graph
        description = node.description
        specs, plain = description.params, description.plain_inputs
        for i, value in enumerate(node.params):
            if value is None:
                if check is not None:
                    check(node, i, specs[i], value)
                continue
            virtual = value.virtual
            kind = value.vx_type
            if plain[i] and not virtual and value.alive and kind != _TENSOR and kind != _IMAGE:
                continue  # left out (see above) unless written: added below
            spec = specs[i]
            if check is not None and (not value.alive or (virtual and (
                    spec.static or (getattr(value, "graph", None) or getattr(value, "scope", None)) is not graph))):
                check(node, i, spec, value)
            direction = spec.direction
            if kind == _IMAGE or (kind == _TENSOR and value.parent is not None):
                root, box = region(value)
            elif kind != _TENSOR and not virtual:
                if direction == _INPUT:
                    continue
                written_plain.add(id(value))
                root, box = value, None
            else:  # the object is its own root, whole
                root, box = value, None
            entry = get(id(root))
            if entry is None:
                entry = uses[id(root)] = Uses(root)
            target = entry.writes if direction == _OUTPUT else entry.reads if direction == _INPUT else entry.others
            target.append(new(Access, (position, i, value, box)))
    if written_plain:  # rare: a node writes a scalar (or array, LUT) that others read; its readers are ordered after
        for position, node in enumerate(nodes):
            for i, (spec, value) in enumerate(zip(node.description.params, node.params)):
                if (value is not None and spec.direction == _INPUT and id(value) in written_plain
                        and not value.virtual):
                    uses[id(value)].reads.append(new(Access, (position, i, value, None)))
    return uses


_BOOL = int(Type.VX_TYPE_BOOL)


def _refuse_booleans(node: Node) -> None:
    """A built-in kernel computes on numbers: a ``VX_TYPE_BOOL`` tensor (an imported NNEF ``logical``) reaches
    only user kernels, which check their own types."""
    if node.description.user is not None:
        return
    for index, value in enumerate(node.params):
        if value is not None and value.vx_type == _TENSOR and value.data_type == _BOOL:
            raise VXError(Status.VX_ERROR_INVALID_TYPE,
                          f"{node.describe()} parameter {index} ({node.description.params[index].name}): "
                          f"kernel {node.description.name} does not take VX_TYPE_BOOL tensors", node)


class Verifier:
    """Runs every check, logging each error; ``run`` raises the first."""

    def __init__(self, graph: Reference):  # a graph.Graph
        self.graph = graph
        self.errors: list[VXError] = []
        self.uses: dict[int, Uses] = {}
        """After ``run``: the index of accesses, by root, with positions in the graph's node list."""

    def error(self, status: int, message: str, node: Node | None = None) -> None:
        err = VXError(status, message, node or self.graph)
        self.errors.append(err)
        self.graph.context.log(err.ref, status, f"vxVerifyGraph: {message}")

    def run(self) -> list[Node]:
        nodes = list(self.graph.nodes)
        if not nodes:
            self.error(Status.VX_ERROR_INVALID_GRAPH, f"{self.graph.describe()} has no nodes")
        self.uses = index_uses(nodes, self._check_parameter)
        self._check_writers(nodes)
        order = self._order(nodes) if not self.errors else []
        if not self.errors:
            for node in order:
                try:
                    _refuse_booleans(node)
                    node.description.validate(Validation(node))
                except VXError as err:
                    self.error(err.status, err.message, node)
        if self.errors:
            first = self.errors[0]
            first.logged = True  # type: ignore[attr-defined]
            raise first
        return order

    def _check_parameter(self, node: Node, i: int, spec, value) -> None:
        """Presence and scope of one parameter that ``index_uses`` found unset, destroyed or virtual."""
        where = f"{node.describe()} parameter {i} ({spec.name})"
        if value is None:
            if not spec.optional:
                self.error(Status.VX_ERROR_NOT_SUFFICIENT, f"{where}: required parameter is not set", node)
            return
        virtual = value.virtual
        owner = (getattr(value, "graph", None) or getattr(value, "scope", None)) if virtual else None
        if not value.alive:
            self.error(Status.VX_ERROR_INVALID_REFERENCE, f"{where}: the object was destroyed", node)
        if spec.static and virtual:
            self.error(Status.VX_ERROR_INVALID_PARAMETERS,
                       f"{where}: [static] parameters must hold data before verification; "
                       f"virtual {value.describe()} cannot", node)
        if virtual and owner is not self.graph:
            self.error(Status.VX_ERROR_INVALID_SCOPE,
                       f"{where}: virtual {value.describe()} belongs to another graph", node)

    def _check_writers(self, nodes: list[Node]) -> None:
        clashes = [pair for uses in self.uses.values() if len(uses.writes) > 1
                   for pair in overlapping(uses.writes)]
        for a, b in sorted(clashes, key=lambda p: (p[0].position, p[0].index, p[1].position, p[1].index)):
            self.error(Status.VX_ERROR_MULTIPLE_WRITERS,
                       f"{nodes[a.position].describe()} parameter {a.index} and {nodes[b.position].describe()} "
                       f"parameter {b.index} write the same data", nodes[b.position])

    def _order(self, nodes: list[Node]) -> list[Node]:
        """Kahn's algorithm over writer -> reader edges; ties go to the node added first.

        When every edge goes from a node to one added later (graphs are mostly built in
        order) that order is the node list itself: only then are the edges not collected.
        """
        unwritten: list[Access] = []
        whole: list[Uses] = []  # one whole writer, whole readers: the edges are writer -> each reader
        boxed: list[tuple[int, int]] = []  # (writer, reader) found by overlapping views
        forward = True
        for uses in self.uses.values():
            reads, writes = uses.reads, uses.writes
            if not reads:
                continue
            if not writes:  # read only: an application's data, or a virtual object nothing writes
                if uses.root.virtual:  # a view of a non-virtual root is not virtual
                    unwritten += [r for r in reads if r.obj.virtual]
                continue
            if len(writes) == 1 and writes[0].box is None and all(r.box is None for r in reads):
                whole.append(uses)
                if forward:
                    writer = writes[0].position
                    for r in reads:
                        if r.position < writer:
                            forward = False
                continue
            read = set()
            for w, r in overlapping(writes, reads):
                read.add(id(r))
                if w.position != r.position:
                    boxed.append((w.position, r.position))
                    if r.position < w.position:
                        forward = False
            unwritten += [r for r in reads if id(r) not in read and r.obj.virtual]
        if forward:
            order = list(nodes)
        else:
            order = self._sorted(nodes, whole, boxed)
        if len(order) != len(nodes):
            done = {id(n) for n in order}
            stuck = ", ".join(n.describe() for n in nodes if id(n) not in done)
            self.error(Status.VX_ERROR_INVALID_GRAPH, f"{self.graph.describe()} has a cycle among {stuck}")
            return order
        for r in sorted(unwritten, key=lambda a: (a.position, a.index)):
            self.error(Status.VX_ERROR_INVALID_GRAPH,
                       f"{nodes[r.position].describe()} parameter {r.index}: virtual {r.obj.describe()} is read "
                       f"but no node writes it", nodes[r.position])
        return order

    @staticmethod
    def _sorted(nodes: list[Node], whole: list[Uses], boxed: list[tuple[int, int]]) -> list[Node]:
        """Kahn's algorithm; ties go to the node added first.  Edges may repeat (a node reading one
        object twice): each is counted and released once, which keeps the counts balanced."""
        after: list[list[int]] = [[] for _ in nodes]
        for uses in whole:
            writer = uses.writes[0].position
            after[writer] += [r.position for r in uses.reads if r.position != writer]
        for writer, reader in boxed:
            after[writer].append(reader)
        pending = [0] * len(nodes)
        for targets in after:
            for t in targets:
                pending[t] += 1
        ready = [k for k in range(len(nodes)) if pending[k] == 0]
        heapq.heapify(ready)
        order: list[Node] = []
        while ready:
            k = heapq.heappop(ready)
            order.append(nodes[k])
            for t in after[k]:
                pending[t] -= 1
                if pending[t] == 0:
                    heapq.heappush(ready, t)
        return order
