"""The graph state machine under concurrency (docs/threads.md):
different graphs of one context run at the same time, one graph processed
from two threads is serialized, releasing the context under a running graph
is refused, and a node callback may call back into the API.  Graphs are held
inside a node callback, so each overlap is certain rather than likely; every
wait is bounded, so a deadlock fails the test instead of hanging it."""
from __future__ import annotations

import threading

import numpy as np
from vxhelp import empty, read, release, tensor

U8 = np.uint8
WAIT = 60  # seconds: far beyond any run here; only a deadlock reaches it


def _add_graph(vx, ctx, a, out):
    """out = a + a, verified, with its node (for a callback)."""
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    return graph, node


class Held:
    """A node callback that parks the graph's thread until released."""

    def __init__(self, vx):
        self.entered, self.go = threading.Event(), threading.Event()
        self.calls = self.inside = self.most_inside = 0
        self._lock = threading.Lock()

        @vx.ffi.callback("vx_nodecomplete_f")
        def callback(node):
            with self._lock:
                self.calls += 1
                self.inside += 1
                self.most_inside = max(self.most_inside, self.inside)
            self.entered.set()
            released = self.go.wait(WAIT)
            with self._lock:
                self.inside -= 1
            return vx.VX_ACTION_CONTINUE if released else vx.VX_ACTION_ABANDON

        self.callback = callback


def _in_thread(call):
    """Start ``call`` on a thread; returns the thread and the list its result lands in."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    return thread, result


def test_different_graphs_of_one_context_run_at_the_same_time(vx, ctx):
    a = tensor(vx, ctx, np.array([1, 2], U8))
    out_a, out_b = empty(vx, ctx, (2,), U8), empty(vx, ctx, (2,), U8)
    graph_a, node = _add_graph(vx, ctx, a, out_a)
    graph_b, node_b = _add_graph(vx, ctx, a, out_b)
    held = Held(vx)
    assert vx.vxAssignNodeCallback(node, held.callback) == vx.VX_SUCCESS
    thread, result = _in_thread(lambda: vx.vxProcessGraph(graph_a))
    assert held.entered.wait(WAIT)
    # graph A is inside vxProcessGraph on the other thread; B runs to the end meanwhile
    state = vx.ffi.new("vx_enum *")
    assert vx.vxQueryGraph(graph_a, vx.VX_GRAPH_STATE, state, vx.ffi.sizeof("vx_enum")) == vx.VX_SUCCESS
    assert state[0] == vx.VX_GRAPH_STATE_RUNNING
    assert vx.vxProcessGraph(graph_b) == vx.VX_SUCCESS
    assert read(vx, out_b, (2,), U8).tolist() == [2, 4]
    held.go.set()
    thread.join(WAIT)
    assert result == [vx.VX_SUCCESS] and read(vx, out_a, (2,), U8).tolist() == [2, 4]
    release(vx, node, node_b, graph_a, graph_b, a, out_a, out_b)


def test_one_graph_processed_from_two_threads_is_serialized(vx, ctx):
    """The second vxProcessGraph waits for the first to end, then runs the graph itself."""
    a = tensor(vx, ctx, np.array([3], U8))
    out = empty(vx, ctx, (1,), U8)
    graph, node = _add_graph(vx, ctx, a, out)
    held = Held(vx)
    assert vx.vxAssignNodeCallback(node, held.callback) == vx.VX_SUCCESS
    first, first_result = _in_thread(lambda: vx.vxProcessGraph(graph))
    assert held.entered.wait(WAIT)
    second, second_result = _in_thread(lambda: vx.vxProcessGraph(graph))
    second.join(0.3)
    assert second.is_alive() and held.calls == 1  # waiting, not running beside the first
    held.go.set()
    first.join(WAIT)
    second.join(WAIT)
    assert first_result == second_result == [vx.VX_SUCCESS]
    assert held.calls == 2 and held.most_inside == 1
    assert read(vx, out, (1,), U8).tolist() == [6]
    release(vx, node, graph, a, out)


def test_processing_a_scheduled_graph_from_another_thread_is_refused(vx, ctx, log):
    """vxScheduleGraph's run belongs to the vxWaitGraph that collects it: vxProcessGraph says so."""
    a = tensor(vx, ctx, np.array([3], U8))
    out = empty(vx, ctx, (1,), U8)
    graph, node = _add_graph(vx, ctx, a, out)
    held = Held(vx)
    assert vx.vxAssignNodeCallback(node, held.callback) == vx.VX_SUCCESS
    assert vx.vxScheduleGraph(graph) == vx.VX_SUCCESS
    assert held.entered.wait(WAIT)
    thread, result = _in_thread(lambda: vx.vxProcessGraph(graph))
    thread.join(WAIT)
    assert result == [vx.VX_ERROR_GRAPH_SCHEDULED] and log.has(vx.VX_ERROR_GRAPH_SCHEDULED, "vxWaitGraph")
    held.go.set()
    assert vx.vxWaitGraph(graph) == vx.VX_SUCCESS and held.calls == 1
    release(vx, node, graph, a, out)


def _release_context(vx, ctx) -> tuple[int, object]:
    holder = vx.ffi.new("vx_context *", ctx)
    return vx.vxReleaseContext(holder), holder[0]


def test_releasing_the_context_under_a_running_graph_is_an_error(vx):
    """Not through the ``ctx`` fixture: this test's reference is the context's last one."""
    ctx = vx.vxCreateContext()
    entries: list[tuple[int, str]] = []

    @vx.ffi.callback("vx_log_callback_f")
    def on_log(context, ref, status, text):
        entries.append((status, vx.ffi.string(text).decode()))

    vx.vxRegisterLogCallback(ctx, on_log, vx.vx_true_e)
    a = tensor(vx, ctx, np.array([4, 5], U8))
    out = empty(vx, ctx, (2,), U8)
    graph, node = _add_graph(vx, ctx, a, out)
    held = Held(vx)
    from_callback: list = []
    callback = held.callback

    @vx.ffi.callback("vx_nodecomplete_f")
    def release_inside(n):  # the processing thread itself tries it too
        from_callback.append(_release_context(vx, ctx))
        return callback(n)

    assert vx.vxAssignNodeCallback(node, release_inside) == vx.VX_SUCCESS
    for start in (lambda: _in_thread(lambda: vx.vxProcessGraph(graph)),
                  lambda: (vx.vxScheduleGraph(graph), None)):
        held.entered.clear()
        held.go.clear()
        thread, result = start()
        assert held.entered.wait(WAIT)
        status, left = _release_context(vx, ctx)
        assert status == vx.VX_FAILURE and left == ctx  # the application's reference is still held
        assert any(s == vx.VX_FAILURE and "vxReleaseContext" in t and "executing" in t for s, t in entries)
        assert vx.vxGetStatus(vx.ffi.cast("vx_reference", graph)) == vx.VX_SUCCESS
        held.go.set()
        if result is None:
            assert vx.vxWaitGraph(graph) == vx.VX_SUCCESS
        else:
            thread.join(WAIT)
            assert result == [vx.VX_SUCCESS]
        assert read(vx, out, (2,), U8).tolist() == [8, 10]
    assert [s for s, _ in from_callback] == [vx.VX_FAILURE] * 2
    vx.vxRegisterLogCallback(ctx, vx.ffi.NULL, vx.vx_false_e)
    release(vx, node, graph, a, out)
    assert _release_context(vx, ctx) == (vx.VX_SUCCESS, vx.ffi.NULL)


def test_a_node_callback_that_calls_back_into_the_api_does_not_deadlock(vx, ctx, log):
    """Inside a node callback: queries, copies, object creation, another graph processed,
    scheduled and waited, the context's log; the outer graph then finishes normally."""
    a = tensor(vx, ctx, np.array([1, 2, 3], U8))
    out, out_b, out_c = (empty(vx, ctx, (3,), U8) for _ in range(3))
    graph, node = _add_graph(vx, ctx, a, out)
    graph_b, node_b = _add_graph(vx, ctx, out, out_b)
    graph_c, node_c = _add_graph(vx, ctx, out_b, out_c)
    statuses: list[int] = []

    @vx.ffi.callback("vx_nodecomplete_f")
    def reenter(n):
        state = vx.ffi.new("vx_enum *")
        statuses.append(vx.vxQueryGraph(graph, vx.VX_GRAPH_STATE, state, vx.ffi.sizeof("vx_enum")))
        statuses.append(vx.VX_SUCCESS if state[0] == vx.VX_GRAPH_STATE_RUNNING else vx.VX_FAILURE)
        statuses.append(vx.VX_SUCCESS if read(vx, out, (3,), U8).tolist() == [2, 4, 6] else vx.VX_FAILURE)
        statuses.append(vx.vxProcessGraph(graph_b))
        statuses.append(vx.vxScheduleGraph(graph_c))
        statuses.append(vx.vxWaitGraph(graph_c))
        extra = vx.vxCreateGraph(ctx)
        statuses.append(vx.vxGetStatus(vx.ffi.cast("vx_reference", extra)))
        statuses.append(vx.vxReleaseGraph(vx.ffi.new("vx_graph *", extra)))
        vx.vxAddLogEntry(vx.ffi.cast("vx_reference", graph), vx.VX_FAILURE, b"logged from a node callback")
        return vx.VX_ACTION_CONTINUE

    assert vx.vxAssignNodeCallback(node, reenter) == vx.VX_SUCCESS
    thread, result = _in_thread(lambda: vx.vxProcessGraph(graph))
    thread.join(WAIT)
    assert not thread.is_alive(), "vxProcessGraph deadlocked inside its node callback"
    assert result == [vx.VX_SUCCESS] and statuses == [vx.VX_SUCCESS] * 8
    assert read(vx, out_c, (3,), U8).tolist() == [8, 16, 24]
    assert log.has(vx.VX_FAILURE, "logged from a node callback")
    release(vx, node, node_b, node_c, graph, graph_b, graph_c, a, out, out_b, out_c)
