"""The schedule/wait/process state machine under several threads at once, and
graphs released while they run."""
from __future__ import annotations

import threading
import time

import numpy as np
from vxhelp import empty, read, release, tensor

U8 = np.uint8


def _refs(vx, ctx) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def _add_graph(vx, ctx, a, out):
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    release(vx, node)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    return graph


def _run_threads(*targets) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(target):
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_schedule_wait_and_process_from_three_threads_lose_no_status(vx, ctx, capfd):
    a = tensor(vx, ctx, np.array([1, 2, 3], U8))
    out = empty(vx, ctx, (3,), U8)
    graph = _add_graph(vx, ctx, a, out)
    runs = 150
    done = threading.Event()
    seen = {"scheduled": 0, "collected": 0, "processed": 0}

    def scheduler():
        for _ in range(runs):
            while (s := vx.vxScheduleGraph(graph)) == vx.VX_ERROR_GRAPH_SCHEDULED:
                time.sleep(0)
            assert s == vx.VX_SUCCESS, s
            seen["scheduled"] += 1

    def waiter():
        while seen["collected"] < runs:
            s = vx.vxWaitGraph(graph)
            if s == vx.VX_SUCCESS:
                seen["collected"] += 1
            else:
                assert s == vx.VX_FAILURE, s  # nothing scheduled at this moment
                time.sleep(0)
        done.set()

    def processor():
        while not done.is_set():
            s = vx.vxProcessGraph(graph)
            assert s in (vx.VX_SUCCESS, vx.VX_ERROR_GRAPH_SCHEDULED), s
            seen["processed"] += s == vx.VX_SUCCESS

    assert _run_threads(scheduler, waiter, processor) == []
    assert seen["scheduled"] == seen["collected"] == runs
    assert vx.vxWaitGraph(graph) == vx.VX_FAILURE
    assert read(vx, out, (3,), U8).tolist() == [2, 4, 6]
    captured = capfd.readouterr()
    assert "internal error" not in captured.err, captured.err
    release(vx, graph, a, out)


def test_two_waiters_of_one_run_both_get_its_status(vx, ctx):
    a = tensor(vx, ctx, np.array([7], U8))
    out = empty(vx, ctx, (1,), U8)
    graph = _add_graph(vx, ctx, a, out)
    for _ in range(20):
        results: list[int] = []
        gate = threading.Barrier(2)

        def wait_once(gate=gate, results=results):
            gate.wait()
            results.append(vx.vxWaitGraph(graph))

        assert vx.vxScheduleGraph(graph) == vx.VX_SUCCESS
        assert _run_threads(wait_once, wait_once) == []
        # each waiter either collected the run or found it already collected
        assert vx.VX_SUCCESS in results and set(results) <= {vx.VX_SUCCESS, vx.VX_FAILURE}
    release(vx, graph, a, out)


def test_graphs_released_while_scheduled_finish_and_free_everything(vx, ctx):
    baseline = _refs(vx, ctx)
    a = tensor(vx, ctx, np.array([5, 6], U8))
    outs = [empty(vx, ctx, (2,), U8) for _ in range(12)]
    for out in outs:
        graph = _add_graph(vx, ctx, a, out)
        assert vx.vxScheduleGraph(graph) == vx.VX_SUCCESS
        release(vx, graph)  # the run goes on; the graph goes when it ends
    deadline = time.monotonic() + 60
    while _refs(vx, ctx) != baseline + 1 + len(outs) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _refs(vx, ctx) == baseline + 1 + len(outs)  # only a and the outputs are left
    for out in outs:
        assert read(vx, out, (2,), U8).tolist() == [10, 12]
    release(vx, a, *outs)


def test_processing_a_graph_from_its_own_node_callback_fails_instead_of_hanging(vx, ctx, log):
    a = tensor(vx, ctx, np.array([1], U8))
    out = empty(vx, ctx, (1,), U8)
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    inner: list[int] = []

    @vx.ffi.callback("vx_nodecomplete_f")
    def again(n):
        inner.append(vx.vxProcessGraph(graph))
        return vx.VX_ACTION_CONTINUE

    assert vx.vxAssignNodeCallback(node, again) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert inner == [vx.VX_FAILURE]
    assert log.has(vx.VX_FAILURE, "already running on this thread")
    release(vx, node, graph, a, out)


def test_a_graph_runs_while_another_is_inside_a_node(vx, ctx):
    """No lock is held while a node runs: graph B completes while graph A is parked in its node callback."""
    a = tensor(vx, ctx, np.array([1], U8))
    out_a, out_b = empty(vx, ctx, (1,), U8), empty(vx, ctx, (1,), U8)
    graph_a = vx.vxCreateGraph(ctx)
    node = vx.vxTensorAddNode(graph_a, a, a, vx.VX_CONVERT_POLICY_SATURATE, out_a)
    graph_b = _add_graph(vx, ctx, a, out_b)
    parked, b_done = threading.Event(), threading.Event()

    @vx.ffi.callback("vx_nodecomplete_f")
    def park(n):
        parked.set()
        return vx.VX_ACTION_CONTINUE if b_done.wait(30) else vx.VX_ACTION_ABANDON

    assert vx.vxAssignNodeCallback(node, park) == vx.VX_SUCCESS
    assert vx.vxScheduleGraph(graph_a) == vx.VX_SUCCESS
    assert parked.wait(30)
    assert vx.vxProcessGraph(graph_b) == vx.VX_SUCCESS
    b_done.set()
    assert vx.vxWaitGraph(graph_a) == vx.VX_SUCCESS
    release(vx, node, graph_a, graph_b, a, out_a, out_b)
