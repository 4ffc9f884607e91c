"""``vx_graph``: nodes, verification state, execution, graph parameters, timing.

A graph verifies once (``plan.Verifier``) and then runs its nodes in the
dependency order found there, as often as asked, without re-validating or
re-allocating.  Anything that changes its structure sends it back to
VX_GRAPH_STATE_UNVERIFIED.  Execution holds no model-wide lock, so graphs
run in parallel from several threads (the kernels release the GIL).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import reference
from .context import Context
from .enums import Action, GraphState, Status, Type
from .errors import VXError
from .perf import Perf
from .reference import Reference

if TYPE_CHECKING:
    from .node import Node

NodeCallback = Callable[["Node"], int]


class Graph(Reference):
    vx_type = Type.VX_TYPE_GRAPH
    call_node_callback: Callable[[int, Node], int] | None = None
    """Set by the C layer: calls a vx_nodecomplete_f address with a node."""

    def __init__(self, context: Context):
        super().__init__(context)
        self.nodes: list[Node] = []
        self.parameters: list[tuple[Node, int]] = []
        self.state = GraphState.VX_GRAPH_STATE_UNVERIFIED
        self.perf = Perf()
        self.order: list[Node] = []
        self.verify_count = 0
        self._worker: threading.Thread | None = None
        self._scheduled_status = Status.VX_SUCCESS
        self._run_lock = threading.Lock()

    # -- structure ---------------------------------------------------------
    def add_node(self, node: Node) -> None:
        node.hold()
        self.nodes.append(node)
        self.invalidate()

    def remove_node(self, node: Node) -> None:
        if node not in self.nodes:
            raise VXError(Status.VX_ERROR_INVALID_NODE, f"{node.describe()} is not in {self.describe()}", node)
        self.nodes.remove(node)
        self.parameters = [(n, i) for n, i in self.parameters if n is not node]
        node.detach()
        self.invalidate()
        node.unhold()

    def invalidate(self) -> None:
        self.state = GraphState.VX_GRAPH_STATE_UNVERIFIED

    @property
    def verified(self) -> bool:
        return self.state != GraphState.VX_GRAPH_STATE_UNVERIFIED

    def on_destroy(self) -> None:
        nodes, self.nodes, self.parameters = self.nodes, [], []
        for node in nodes:
            node.detach()
            node.unhold()

    # -- graph parameters ----------------------------------------------------
    def add_parameter(self, node: Node | None, index: int) -> None:
        if node is None or node not in self.nodes:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"the parameter does not belong to a node of {self.describe()}", self)
        self.parameters.append((node, index))

    def graph_parameter(self, index: int) -> tuple[Node, int]:
        if not 0 <= index < len(self.parameters):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"graph parameter index {index} is out of range ({self.describe()} has "
                          f"{len(self.parameters)})", self)
        return self.parameters[index]

    def set_graph_parameter(self, index: int, value: Reference | None) -> None:
        """Replace a graph parameter; a like-for-like object keeps the graph verified."""
        from .plan import overlap, region
        node, param = self.graph_parameter(index)
        old = node.params[param]
        state = self.state
        node.set_parameter(param, value)
        if state == GraphState.VX_GRAPH_STATE_UNVERIFIED or old is None or value is None:
            return
        others = [region(p) for n in self.nodes for p in n.params if p is not None and p is not value]
        if (_same_meta(old, value) and not getattr(value, "virtual", False)
                and not any(overlap(region(value), r) for r in others)):
            self.state = state

    # -- verification and execution ------------------------------------------
    def verify(self) -> None:
        from .plan import Verifier
        self.invalidate()
        self.order = Verifier(self).run()
        self.verify_count += 1
        self.state = GraphState.VX_GRAPH_STATE_VERIFIED

    def _prepare(self) -> list[Node]:
        with reference.lock:
            if self._worker is not None:
                raise VXError(Status.VX_ERROR_GRAPH_SCHEDULED, f"{self.describe()} is scheduled", self)
            if not self.verified:
                self.verify()
            self.state = GraphState.VX_GRAPH_STATE_RUNNING
            return list(self.order)

    def process(self) -> int:
        """Verify if needed and run every node; returns the graph's status."""
        with self._run_lock:
            return self._execute(self._prepare())

    def schedule(self) -> None:
        with reference.lock:
            order = self._prepare()
            self._scheduled_status = Status.VX_SUCCESS
            worker = threading.Thread(target=self._run_scheduled, args=(order,), daemon=True,
                                      name=f"openvx-nn graph {self.handle:#x}")
            self._worker = worker
        worker.start()

    def _run_scheduled(self, order: list[Node]) -> None:
        with self._run_lock:
            self._scheduled_status = self._execute(order)

    def wait(self) -> int:
        worker = self._worker
        if worker is None:
            raise VXError(Status.VX_FAILURE, f"{self.describe()} was not scheduled", self)
        worker.join()
        with reference.lock:
            if self._worker is worker:
                self._worker = None
        return self._scheduled_status

    def _execute(self, order: list[Node]) -> int:
        timing = self.context.performance_enabled
        if timing:
            self.perf.start()
        status = Status.VX_SUCCESS
        for node in order:
            status = self._run_node(node, timing)
            if status != Status.VX_SUCCESS:
                break
            if node.callback and self._callback_abandons(node):
                status = Status.VX_ERROR_GRAPH_ABANDONED
                self.context.log(node, status, f"{self.describe()} abandoned by the callback of "
                                               f"{node.describe()}")
                break
        if timing:
            self.perf.stop()
        self.state = (GraphState.VX_GRAPH_STATE_ABANDONED if status != Status.VX_SUCCESS
                      else GraphState.VX_GRAPH_STATE_COMPLETED)
        return status

    @staticmethod
    def _callback_abandons(node: Node) -> bool:
        caller = Graph.call_node_callback
        return caller is not None and caller(node.callback, node) == Action.VX_ACTION_ABANDON

    def _run_node(self, node: Node, timing: bool) -> int:
        if timing:
            node.perf.start()
        try:
            node.description.execute(node.params, node.state)
            node.status = Status.VX_SUCCESS
        except VXError as err:
            node.status = err.status
            self.context.log(node, err.status, f"{node.describe()} failed: {err.message}")
        except Exception as exc:  # noqa: BLE001 - a kernel bug must not escape into C
            node.status = Status.VX_FAILURE
            self.context.log(node, Status.VX_FAILURE,
                             f"{node.describe()} failed: internal error {type(exc).__name__}: {exc}")
        if timing:
            node.perf.stop()
        return node.status


def _same_meta(a: Reference, b: Reference) -> bool:
    if a.vx_type != b.vx_type:
        return False
    keys = ("dims", "data_type", "fpp", "count", "size")
    return all(getattr(a, k, None) == getattr(b, k, None) for k in keys)
