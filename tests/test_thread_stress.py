"""The native plan's stress test: eight threads x 2,000 vxProcessGraph calls on
different graphs of one context, and one graph processed from two threads at
once; every status VX_SUCCESS, every output bit-identical to the graph's
single-threaded run, no hang (bounded joins, a watchdog in C).  The C version
goes through libopenvx.so; the Python one through openvx_nn.api (the
library's entry bodies called in-process)."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from conftest import compile_c, run_c

from openvx_nn.api import Context

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


def _conv_relu(ctx, rng):
    """conv 3x3 (pad 1) -> relu, the conv's output virtual."""
    g = ctx.graph()
    x = ctx.tensor(_q(rng, (6, 6, 2)), fixed_point_position=FPP)
    out = ctx.tensor(shape=(6, 6, 4), dtype=I16, fixed_point_position=FPP)
    w = ctx.tensor(_q(rng, (3, 3, 2, 4)), fixed_point_position=FPP)
    g.relu(g.convolution(x, w, padding=(1, 1), rounding="to_zero"), out=out)
    return g, out


def _chain(ctx, rng):
    """(a + b - c) * a, saturating, the two intermediates virtual."""
    g = ctx.graph()
    a, b, c = (ctx.tensor(_q(rng, (5, 7)), fixed_point_position=FPP) for _ in range(3))
    out = ctx.tensor(shape=(5, 7), dtype=I16, fixed_point_position=FPP)
    g.multiply(g.subtract(g.add(a, b), c, overflow="wrap"), a, out=out)
    return g, out


def test_thread_stress_from_python():
    rng = np.random.default_rng(25)
    with Context() as ctx:
        jobs = [(_conv_relu if k % 2 == 0 else _chain)(ctx, rng) for k in range(THREADS + 1)]
        expected = []
        for g, out in jobs:
            g.process()
            expected.append(out.numpy())
            assert expected[-1].any()
            out.write(np.zeros_like(expected[-1]))  # the threaded runs must write it again
        failures: list[str] = []

        def own(k):
            g, out = jobs[k]
            for call in range(CALLS):
                try:
                    g.process()
                except Exception as exc:  # noqa: BLE001 - reported below
                    failures.append(f"graph {k}, call {call}: {exc}")
                    return
                if not np.array_equal(out.numpy(), expected[k]):
                    failures.append(f"graph {k}, call {call}: output differs from the single-threaded run")
                    return

        def shared():
            for call in range(CALLS):
                try:
                    jobs[THREADS][0].process()
                except Exception as exc:  # noqa: BLE001 - reported below
                    failures.append(f"shared graph, call {call}: {exc}")
                    return

        threads = [threading.Thread(target=own, args=(k,)) for k in range(THREADS)]
        threads += [threading.Thread(target=shared) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
        assert not any(t.is_alive() for t in threads), "a thread hung"
        assert failures == []
        assert np.array_equal(jobs[THREADS][1].numpy(), expected[THREADS])
        for g, _ in jobs:
            g.close()


def test_python_user_kernels_and_a_failing_kernel_among_threads():
    """Four threads run graphs with a Python user kernel between built-in layers while a fifth
    runs one whose user kernel fails every other call: the failures are that graph's status
    (VX_FAILURE, naming the kernel), the other graphs' outputs stay exact."""
    from openvx_nn.api import VXError, tensor_input, tensor_output

    calls = 200

    def double(x, y):
        y[...] = x * 2

    def flaky(x, y, state={"n": 0}):  # noqa: B006 - a call counter shared by the calls
        state["n"] += 1
        if state["n"] % 2 == 0:
            raise ValueError("flaky kernel: even call")
        y[...] = x

    rng = np.random.default_rng(7)
    with Context() as ctx:
        params = [tensor_input(), tensor_output()]
        kernels = {name: ctx.add_kernel(f"com.example.{name}", run, params, lambda x: [x])
                   for name, run in (("double", double), ("flaky", flaky))}
        inputs = [rng.integers(-100, 100, size=(4, 3)).astype(I16) for _ in range(5)]
        graphs, outs = [], []
        for k, x in enumerate(inputs):
            g = ctx.graph()
            out = ctx.tensor(shape=x.shape, dtype=I16)
            v = g.virtual()
            g.node(kernels["double" if k < 4 else "flaky"], ctx.tensor(x), v)
            g.relu(v, out=out)
            graphs.append(g)
            outs.append(out)
        failures: list[str] = []
        failed_calls = [0]

        def run(k):
            for call in range(calls):
                try:
                    graphs[k].process()
                except VXError as exc:
                    if k == 4 and exc.status == -1 and "flaky" in str(exc):
                        failed_calls[0] += 1
                        continue
                    failures.append(f"graph {k}, call {call}: {exc}")
                    return
                want = np.maximum(inputs[k] * (2 if k < 4 else 1), 0)
                if not np.array_equal(outs[k].numpy(), want):
                    failures.append(f"graph {k}, call {call}: wrong output")
                    return

        threads = [threading.Thread(target=run, args=(k,)) for k in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "a thread hung"
        assert failures == [] and failed_calls[0] == calls // 2
        for g in graphs:
            g.close()
