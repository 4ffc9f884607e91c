"""``vx_graph``: nodes, verification state, execution, graph parameters, timing.

A graph verifies once (``plan.Verifier``, then ``rewrites.run``: fusion and
the layout of virtual tensors, then ``memory.plan_graph``: its virtual tensors' arena) and then runs its compiled plan (``compiled``: the
nodes' bound calls in the dependency order found there) as often as asked,
without re-validating or re-allocating.  Anything that changes its structure sends it back to
VX_GRAPH_STATE_UNVERIFIED.  Execution holds no model-wide lock, so graphs
run in parallel from several threads (the kernels release the GIL).  Each
node's runner is bound once (``KernelDescription.bind``) and rebound only when
the graph verifies again or some tensor's storage changes, so a call costs a
few microseconds plus the kernels, and a call on a ready graph takes no
model-wide lock at all (see the state machine).  When every bound call also
has a native entry, the plan is published to C (``native_plan``) and a
process runs there without the GIL; the graph's busy flag and state then live
in C-visible cells that both paths use.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from . import bordered_tensors, cells, collector, execution, native_plan, reshape_views, rewrites, side_by_side
from .compiled import Call, Plan, compile_calls
from .context import Context
from .enums import Action, GraphState, Status, Type, status_name
from .errors import VXError
from .memory import plan_graph
from .node import Node
from .perf import Perf
from .plan import Uses, Verifier
from .reference import Reference
from .regions import Access, boxes_overlap, region
from .tensor import Tensor

NodeCallback = Callable[[Node], int]


class _Run:
    """One scheduled execution: done once its worker has finished, with the graph's status."""

    __slots__ = ("done", "status")

    def __init__(self) -> None:
        self.done = False
        self.status: int = Status.VX_FAILURE


class Graph(Reference):
    vx_type = Type.VX_TYPE_GRAPH
    call_node_callback: Callable[[int, Node], int] | None = None
    """Set by the C layer: calls a vx_nodecomplete_f address with a node."""
    memory_plan = True
    """Whether verify shares an arena among virtual tensors by lifetime (``memory.py``); False: each its own."""
    python_helpers = False
    """Whether its owner summons Python's gang helpers before each run (the NNAPI and CoreML front ends): then
    the C side's helper threads (``csrc/plan_helpers.c``) stay out of its native runs."""

    def __init__(self, context: Context):
        super().__init__(context)
        self._cells = native_plan.graph_cells()  # busy flag and state, shared with C (native_plan.py)
        self._cells_address = cells.address(self._cells)
        self._holds_cells = False  # the Python path holds the busy cell (once a native plan was published)
        self._published = False  # a native plan was published at some time: the Python path claims the cell
        self._native_allowed = True
        self.nodes: dict[Node, None] = {}  # in the order added (a dict: removal by key, not by scan)
        self.parameters: list[tuple[Node, int]] = []
        self.perf = Perf()
        self.order: list[Node] = []
        self._uses: dict[int, Uses] = {}  # the last verify's accesses by root (graph parameter checks)
        self._verified_nodes: list[Node] = []  # the nodes as that verify saw them (access positions)
        self._positions: dict[Node, int] = {}  # node -> its position there
        self.verify_count = 0
        self._busy = threading.Lock()  # held while the nodes run (see the state machine below)
        self._executor: int | None = None  # thread running the nodes
        self._run: _Run | None = None  # the scheduled run vxWaitGraph has not collected yet
        self.plan = Plan()  # the compiled plan: bound calls (when its epoch is current) and memory plan
        self.rewrites = rewrites.Report()  # what the last verify's rewrites did (fusion, layouts)

    # -- structure ---------------------------------------------------------
    def add_node(self, node: Node) -> None:
        node.hold()
        self.nodes[node] = None
        self.invalidate()

    def remove_node(self, node: Node) -> None:
        if node.graph is not self or node not in self.nodes:
            raise VXError(Status.VX_ERROR_INVALID_NODE, f"{node.describe()} is not in {self.describe()}", node)
        del self.nodes[node]
        self.parameters = [(n, i) for n, i in self.parameters if n is not node]
        node.detach()
        self.invalidate()
        node.unhold()

    def invalidate(self) -> None:
        self.state = GraphState.VX_GRAPH_STATE_UNVERIFIED
        self._set_plan(Plan(memory=self.plan.memory))  # unbound; the memory plan is kept for the next verify

    @property
    def state(self) -> int:
        """The vx_graph_state_e (a native run sets it from C)."""
        return int(self._cells[native_plan.STATE])

    @state.setter
    def state(self, value: int) -> None:
        self._cells[native_plan.STATE] = value

    def _set_plan(self, plan: Plan) -> None:
        """Replace the compiled plan; its native plan is withdrawn from C first (a run in flight finishes)."""
        old = self.plan.native
        self.plan = plan
        if old is not None and old is not plan.native:
            native_plan.retire(self.handle, old)

    @property
    def native_runs(self) -> int:
        """Runs of this graph completed in C without entering Python (vxProcessGraph, vxScheduleGraph)."""
        return int(self._cells[native_plan.RUNS])

    @property
    def native_allowed(self) -> bool:
        """Whether this graph may get a native plan (benchmarks compare both paths on one graph)."""
        return self._native_allowed

    @native_allowed.setter
    def native_allowed(self, value: bool) -> None:
        self._native_allowed = bool(value)
        self.settings_changed()

    def settings_changed(self) -> None:
        """A setting of this graph decides anew whether it runs natively (a node callback, ``native_allowed``):
        its plan is rebuilt before its next run; other graphs keep theirs."""
        self._cells[native_plan.SETTINGS] += 1

    def _generation(self) -> int:
        """The context-wide generation plus this graph's settings counter: a held-back plan is rebuilt
        when either moves."""
        return int(cells.GLOBAL[cells.GENERATION]) + int(self._cells[native_plan.SETTINGS])

    @property
    def executing(self) -> bool:
        cells_ = self._cells
        return (self._busy.locked() or self._run is not None or bool(cells_[native_plan.BUSY])
                or bool(cells_[native_plan.SCHEDULED]))

    @property
    def verified(self) -> bool:
        return self.state != GraphState.VX_GRAPH_STATE_UNVERIFIED

    def on_destroy(self) -> None:
        nodes, self.nodes, self.parameters = list(self.nodes), {}, []
        self._uses, self._positions, self._verified_nodes, self.order = {}, {}, [], []
        self.rewrites = rewrites.Report()
        self._set_plan(Plan())
        for node in nodes:
            node.detach()
            node.unhold()

    # -- graph parameters ----------------------------------------------------
    def add_parameter(self, node: Node | None, index: int) -> None:
        if node is None or node.graph is not self or node not in self.nodes:
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
        node, param = self.graph_parameter(index)
        old = node.params[param]
        state = self.state
        node.set_parameter(param, value)
        if state == GraphState.VX_GRAPH_STATE_UNVERIFIED or old is None or value is None:
            return
        if _same_meta(old, value) and not getattr(value, "virtual", False) and not self._overlaps_others(value):
            self.state = state  # still verified; invalidate() already dropped the bound runners
            root, box = region(value)
            uses = self._uses.get(id(root))
            if uses is None:
                uses = self._uses[id(root)] = Uses(root)
            uses.others.append(Access(self._positions[node], param, value, box))

    def _overlaps_others(self, value: Reference) -> bool:
        """Whether another object a node of the verified graph uses covers memory of ``value``.

        Looks only at the accesses of ``value``'s root recorded at verify (and by
        earlier replacements); an entry whose node has since been given another
        object is stale and skipped.
        """
        root, box = region(value)
        uses = self._uses.get(id(root))
        if uses is None:
            return False
        nodes = self._verified_nodes
        return any(a.obj is not value and nodes[a.position].params[a.index] is a.obj and boxes_overlap(a.box, box)
                   for a in (*uses.reads, *uses.writes, *uses.others))

    # -- verification and execution ------------------------------------------
    def verify(self) -> None:
        with collector.paused():  # bulk creation of kept objects: see collector.py
            self._verify()

    def _verify(self) -> None:
        self.invalidate()
        verifier = Verifier(self)
        self._uses, self._positions = {}, {}
        self.order = verifier.run()
        self._verified_nodes = list(self.nodes)
        self._uses, self._positions = verifier.uses, {n: k for k, n in enumerate(self._verified_nodes)}
        self.rewrites = rewrites.run(self.order, self._verified_nodes, self._uses, self.parameters)
        bordered_tensors.assign(self.order, self.parameters, self.rewrites)
        views = reshape_views.find(self.order, self._uses, self.parameters)
        memory = plan_graph(self.order, self._verified_nodes, self._uses.values(), self.parameters,
                            self.plan.memory, self.memory_plan, views)
        self._set_plan(Plan(memory=memory))
        self.verify_count += 1
        self.state = GraphState.VX_GRAPH_STATE_VERIFIED

    # -- execution: the state machine --------------------------------------------
    # A graph is *executing* while a vxProcessGraph call or its scheduled worker
    # runs its nodes (it holds ``_busy``), and *scheduled* from vxScheduleGraph
    # until the vxWaitGraph that collects the run's status (``_run`` is set, only
    # by a holder of ``_busy``).  A process of a free, verified, bound graph takes
    # ``_busy`` and counts itself in without the model lock (:meth:`_claim`);
    # anything else (verification, a busy or scheduled graph, scheduling,
    # waiting) goes under ``execution.changed`` (the model lock).  Kernels run
    # without either.  A graph released while it executes is destroyed when the
    # execution ends (:meth:`_collect`, :meth:`_finish`).
    def _claim(self) -> tuple[Call, ...] | None:
        """Take ``_busy`` and the bound steps without the model lock, if the graph is free and ready."""
        if not self._busy.acquire(blocking=False):
            return None
        plan = self.plan
        if self._run is not None or self._cells[native_plan.SCHEDULED] or self._stale(plan) or not self.verified:
            self._busy.release()
            execution.notify()
            return None
        self._claim_cells()
        self.state = GraphState.VX_GRAPH_STATE_RUNNING
        return plan.calls

    def _stale(self, plan: Plan) -> bool:
        generation = plan.generation
        return (plan.epoch != Tensor.storage_epoch
                or (generation is not None and generation != self._generation())
                or (plan.native is not None and not plan.native.current()))

    def _claim_cells(self) -> None:
        """Take the C-visible busy cell too (waits for a native run of this graph), once C may run it."""
        if self._published and not self._holds_cells:
            native_plan.hooks.claim(self._cells_address)
            self._holds_cells = True

    def _begin(self, run: _Run | None) -> tuple[Call, ...]:
        """:meth:`_claim` under the model lock: waits for another thread's execution, verifies."""
        if self._executor == threading.get_ident():
            raise VXError(Status.VX_FAILURE, f"{self.describe()} is already running on this thread "
                                             "(called from its own node callback)", self)

        def settled() -> bool:  # claimed, or scheduled by another thread
            return self._run is not None or self._busy.acquire(blocking=False)

        execution.wait_until(settled)
        if self._run is not None:
            raise VXError(Status.VX_ERROR_GRAPH_SCHEDULED,
                          f"{self.describe()} is scheduled; vxWaitGraph it first", self)
        try:
            self._claim_cells()
            if self._cells[native_plan.SCHEDULED]:  # scheduled natively (csrc/plan.c), not collected yet
                raise VXError(Status.VX_ERROR_GRAPH_SCHEDULED,
                              f"{self.describe()} is scheduled; vxWaitGraph it first", self)
            if not self.verified:
                self.verify()
            steps = self._bound_calls()  # claims the busy cell if it publishes the graph's first native plan
        except BaseException:
            self._release_cells()
            self._busy.release()
            execution.wake()
            raise
        self._run = run
        self.state = GraphState.VX_GRAPH_STATE_RUNNING
        return steps

    def _finish(self, keep_cells: bool = False) -> None:
        """Let go of ``_busy`` (and, unless ``keep_cells``, of the C busy cell); destroy the graph if it
        was released meanwhile."""
        self._executor = None
        if not keep_cells:
            self._release_cells()
        self._busy.release()
        execution.notify()
        if self.alive and not self.external and not self.internal:
            with execution.changed:
                self._collect()

    def _release_cells(self) -> None:
        if self._holds_cells:
            self._holds_cells = False
            native_plan.hooks.unclaim(self._cells_address)

    def _collect(self) -> None:
        if not self._busy.locked():
            super()._collect()

    def process_native(self) -> int:
        """Run the compiled plan in C (a large one without the GIL); its status, or ``native_plan.NOT_NATIVE``
        (nothing run) where the graph has no current native plan or is busy."""
        native = self.plan.native
        if native is None:
            return native_plan.NOT_NATIVE
        hooks = native_plan.hooks
        return (hooks.run_holding_gil if native.small else hooks.run)(self.handle)

    def process(self) -> int:
        """Verify if needed and run every node; returns the graph's status."""
        status = self.process_native()  # C runs it, unless busy or no longer current
        if status != native_plan.NOT_NATIVE:
            return status
        key = threading.get_ident()
        if not execution.ready():
            with execution.running(key):  # counted: the JIT may load while the process exits
                execution.prepare_runtime()
        execution.enter(key)
        try:
            steps = self._claim()
            if steps is None:
                with execution.changed:
                    steps = self._begin(None)
        except BaseException:
            execution.leave(key)
            raise
        self._executor = key
        status = Status.VX_FAILURE
        try:
            status = self._execute(steps)
        finally:
            self._finish()
            execution.leave(key)
        return status

    def schedule(self) -> None:
        """Start the graph on a worker thread; vxWaitGraph collects its status."""
        if self.plan.native is not None and native_plan.hooks.schedule(self.handle) == Status.VX_SUCCESS:
            return  # a pthread runs the native plan
        run = _Run()
        with execution.running(run):
            execution.prepare_runtime()
            with execution.changed:
                steps = self._begin(run)
                worker = threading.Thread(target=self._work, args=(run, steps), daemon=True,
                                          name=f"openvx-nn graph {self.handle:#x}")
                execution.count_in(run, check=False)  # the worker's own count, ended by the worker
                try:
                    worker.start()  # under the lock: a waiter never sees a run without its thread
                except RuntimeError as exc:
                    self._run = None
                    self._end(Status.VX_ERROR_NO_RESOURCES, run)
                    raise VXError(Status.VX_ERROR_NO_RESOURCES,
                                  f"cannot start a thread for {self.describe()}: {exc}", self) from None

    def _work(self, run: _Run, steps: tuple[Call, ...]) -> None:
        self._executor = threading.get_ident()
        status = Status.VX_FAILURE
        try:
            status = self._execute(steps)
        finally:
            self._end(status, run)

    def _end(self, status: int, run: _Run) -> None:
        """A scheduled run is over: publish its status, then let go of the graph."""
        with execution.changed:
            run.status, run.done = status, True
            self._finish(keep_cells=True)  # until vxWaitGraph collects the run, C must not run or schedule it
            execution.count_out(run)  # wakes waiters

    def wait(self) -> int:
        """Block until the scheduled run ends; its status (VX_FAILURE if none is scheduled)."""
        if self._cells[native_plan.SCHEDULED]:
            status = native_plan.hooks.wait(self._cells_address)  # without the GIL or the model lock
            if status != native_plan.NOT_NATIVE:
                return status
        with execution.changed:
            run = self._run
            if run is None:
                raise VXError(Status.VX_FAILURE, f"{self.describe()} was not scheduled", self)
            execution.wait_until(lambda: run.done)
            if self._run is run:
                self._run = None
                self._release_cells()
            return run.status

    def _bound_calls(self) -> tuple[Call, ...]:
        """The plan's calls, bound once per verification and storage change."""
        plan = self.plan
        if self._stale(plan):
            with collector.paused():  # binding creates and keeps objects in bulk, as verify does
                self._bind(plan)
            plan = self.plan
        return plan.calls

    def _bind(self, plan: Plan) -> None:
        """Bind the calls of ``plan`` anew (keeping those that still hold) and publish its native plan."""
        epoch = Tensor.storage_epoch  # read first: a storage change while binding rebinds next time
        guards = native_plan.watch(self.order, epoch, int(cells.GLOBAL[cells.GENERATION]), self._cells)
        generation = guards[1][2] + guards[2][2]  # as _generation() was before binding
        calls = compile_calls(self.order, plan.calls)  # the calls that still hold are kept
        native = native_plan.build(calls, guards, self, self._cells)
        if native is not None and not self._published:
            self._published = True  # from now on every run holds the busy cell, native or not
            self._claim_cells()
        if native is None and not native_plan.held_back(calls, self):
            generation = None  # a setting changed elsewhere does not rebind this graph
        self._set_plan(Plan(calls, epoch, plan.memory, native, generation))
        if native is not None:
            native_plan.publish(self.handle, native)

    def _execute(self, calls: tuple[Call, ...]) -> int:
        """Run the calls in order; the loop does per node only what a node needs (timing when enabled)."""
        timing = self.context.performance_enabled
        native = self.plan.native
        if native is not None and not timing and calls is self.plan.calls:
            status, failed = native_plan.hooks.execute(native.address)  # the kernels without the GIL
            if status != native_plan.NOT_NATIVE:
                return self._ran_natively(calls, status, native.call_at(failed))
        if timing:
            self.perf.start()
        status = success = Status.VX_SUCCESS
        closing = execution.closing
        for node, run, writes, _ in calls:
            if closing():
                status = Status.VX_ERROR_GRAPH_ABANDONED
                self.context.log(node, status, f"{self.describe()} abandoned before {node.describe()}: "
                                               "the process is exiting")
                break
            if timing:
                node.perf.start()
            try:
                run()
            except Exception as exc:  # noqa: BLE001 - a kernel bug must not escape into C
                status = self._failed(node, exc)
            else:
                node.status = success
            if timing:
                node.perf.stop()
            if writes:
                for tensor in writes:
                    tensor.writes += 1
            if status != success:
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

    def _ran_natively(self, calls: tuple[Call, ...], status: int, failed: int) -> int:
        """Node statuses after the native plan ran from the Python path (C set the graph's state)."""
        for call in calls[:failed]:
            call.node.status = Status.VX_SUCCESS
        if status == Status.VX_ERROR_GRAPH_ABANDONED:  # the process is exiting: C stopped between nodes
            self.context.log(calls[failed].node, status, f"{self.describe()} abandoned before "
                                                         f"{calls[failed].node.describe()}: the process is exiting")
        elif status != Status.VX_SUCCESS:
            self.native_failed(calls[failed].node, status)
        return status

    def native_failed(self, node: Node | None, status: int) -> None:
        """A native kernel of this graph failed: record and log it, and withdraw the native plan (the next run
        takes the Python path and publishes a new one)."""
        if node is not None:
            node.status = status
            raised = " (it raised an exception, e.g. memory ran out)" if status == Status.VX_FAILURE else ""
            beside = next((side_by_side.partner(call) for call in self.plan.calls if call.node is node), None)
            also = f" (run side by side with {beside.describe()}, in one native call)" if beside is not None else ""
            self.context.log(node, status, f"{node.describe()}{also} failed: its native kernel returned "
                                           f"{status_name(status)}{raised}")
        self._set_plan(Plan(memory=self.plan.memory))

    @staticmethod
    def _callback_abandons(node: Node) -> bool:
        caller = Graph.call_node_callback
        return caller is not None and caller(node.callback, node) == Action.VX_ACTION_ABANDON

    def _failed(self, node: Node, exc: Exception) -> int:
        """Record and log a node's failure; returns its status."""
        if isinstance(exc, VXError):
            node.status = exc.status
            self.context.log(node, exc.status, f"{node.describe()} failed: {exc.message}")
        else:
            node.status = Status.VX_FAILURE
            self.context.log(node, Status.VX_FAILURE,
                             f"{node.describe()} failed: internal error {type(exc).__name__}: {exc}")
        return node.status


def _same_meta(a: Reference, b: Reference) -> bool:
    if a.vx_type != b.vx_type:
        return False
    keys = ("dims", "data_type", "fpp", "count", "size")
    return all(getattr(a, k, None) == getattr(b, k, None) for k in keys)
