"""Issue 25's stress test: eight threads x 2,000 vxProcessGraph calls on
different graphs of one context, and one graph processed from two threads at
once; every status VX_SUCCESS, every output bit-identical to the graph's
single-threaded run, no hang (bounded joins, a watchdog in C)."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from conftest import compile_c, run_c
from vxhelp import empty, read, release, scalar, tensor, virtual, write

C_DIR = Path(__file__).resolve().parent / "c"
THREADS, CALLS, FPP = 8, 2000, 8
I16 = np.int16


def test_thread_stress_from_c():
    exe = compile_c(C_DIR / "thread_stress.c", "thread_stress", extra=["-pthread"])
    result = run_c(exe, str(CALLS), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "thread stress passed" in result.stdout


def _q(rng, shape):
    return rng.integers(-512, 512, size=shape).astype(I16)  # -2.0 .. 2.0 in Q7.8


def _conv_relu(vx, ctx, rng):
    """conv 3x3 (pad 1) -> relu, the conv's output virtual."""
    graph = vx.vxCreateGraph(ctx)
    x, w = tensor(vx, ctx, _q(rng, (6, 6, 2)), FPP), tensor(vx, ctx, _q(rng, (3, 3, 2, 4)), FPP)
    out, v = empty(vx, ctx, (6, 6, 4), I16, FPP), virtual(vx, graph, (6, 6, 4), I16, FPP)
    params = vx.ffi.new("vx_nn_convolution_params_t *", {
        "padding_x": 1, "padding_y": 1, "overflow_policy": vx.VX_CONVERT_POLICY_SATURATE,
        "rounding_policy": vx.VX_ROUND_POLICY_TO_ZERO, "down_scale_size_rounding": vx.VX_NN_DS_SIZE_ROUNDING_FLOOR})
    nodes = [vx.vxConvolutionLayer(graph, x, w, vx.ffi.NULL, params, vx.ffi.sizeof(params[0]), v),
             vx.vxActivationLayer(graph, v, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, out)]
    release(vx, *nodes, x, w, v)
    return graph, out, (6, 6, 4)


def _chain(vx, ctx, rng):
    """((a + b) - c) * a + b, saturating, the three intermediates virtual."""
    graph = vx.vxCreateGraph(ctx)
    arrays = [_q(rng, (5, 7)) for _ in range(3)]
    a, b, c = (tensor(vx, ctx, arr, FPP) for arr in arrays)
    out = empty(vx, ctx, (5, 7), I16, FPP)
    v = [virtual(vx, graph, (5, 7), I16, FPP) for _ in range(3)]
    one = scalar(vx, ctx, "vx_float32", 1.0, "VX_TYPE_FLOAT32")
    sat = vx.VX_CONVERT_POLICY_SATURATE
    nodes = [vx.vxTensorAddNode(graph, a, b, sat, v[0]),
             vx.vxTensorSubtractNode(graph, v[0], c, sat, v[1]),
             vx.vxTensorMultiplyNode(graph, v[1], a, one, sat, vx.VX_ROUND_POLICY_TO_ZERO, v[2]),
             vx.vxTensorAddNode(graph, v[2], b, sat, out)]
    release(vx, *nodes, *v, one, a, b, c)

    return graph, out, (5, 7)


def test_thread_stress_from_python(vx, ctx):
    rng = np.random.default_rng(25)
    jobs = [(_conv_relu if k % 2 == 0 else _chain)(vx, ctx, rng) for k in range(THREADS + 1)]
    expected = []
    for graph, out, shape in jobs:
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        expected.append(read(vx, out, shape, I16))
        write(vx, out, np.zeros(shape, I16))  # the threaded runs must write it again
    failures: list[str] = []

    def own(k):
        graph, out, shape = jobs[k]
        for call in range(CALLS):
            status = vx.vxProcessGraph(graph)
            if status != vx.VX_SUCCESS:
                failures.append(f"graph {k}, call {call}: status {status}")
                return
            if not np.array_equal(read(vx, out, shape, I16), expected[k]):
                failures.append(f"graph {k}, call {call}: output differs from the single-threaded run")
                return

    def shared():
        for call in range(CALLS):
            status = vx.vxProcessGraph(jobs[THREADS][0])
            if status != vx.VX_SUCCESS:
                failures.append(f"shared graph, call {call}: status {status}")
                return

    threads = [threading.Thread(target=own, args=(k,)) for k in range(THREADS)]
    threads += [threading.Thread(target=shared) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert failures == []
    graph, out, shape = jobs[THREADS]
    assert np.array_equal(read(vx, out, shape, I16), expected[THREADS])
    for graph, out, _ in jobs:
        release(vx, graph, out)
