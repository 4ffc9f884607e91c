"""The memory plan: virtual tensors share an arena by lifetime, and no output changes by a bit.

Random graphs (chains, diamonds, values read long after they were made, a view
of a virtual tensor, a virtual tensor written through two views, a graph
parameter replaced between runs) run with and without the plan; both must
equal a plain NumPy evaluation of the same operations (int16 add and subtract
saturating, relu: the standard's text).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.core import reference
from openvx_nn.core.graph import Graph as ModelGraph
from openvx_nn.core.memory import ALIGNMENT, assign_offsets

I16 = np.int16
LOW, HIGH = int(np.iinfo(I16).min), int(np.iinfo(I16).max)


def _model(graph):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", graph.handle)), reference.Reference)


def _values(rng, shape) -> np.ndarray:
    values = rng.integers(-400, 400, size=shape).astype(I16)
    edges = rng.random(shape) < 0.15  # saturating sums at both ends
    values[edges] = rng.choice([LOW, HIGH, -1, 0], size=int(edges.sum()))
    return values


def _case(seed: int) -> dict:
    """A random graph: op k makes value k + 1 from earlier values (value 0 is the input)."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 6, size=3))
    ops = [("relu", 0, 0)]  # only the first node reads the input: it is the graph parameter
    for k in range(int(rng.integers(5, 14))):
        ops.append((str(rng.choice(["relu", "add", "subtract"])), int(rng.integers(1, k + 2)),
                    int(rng.integers(1, k + 2))))
    pick = lambda: int(rng.integers(1, len(ops) + 1))
    return {"shape": shape, "inputs": (_values(rng, shape), _values(rng, shape)), "ops": ops,
            "last": pick(), "view": pick(), "cut": int(rng.integers(0, shape[0])), "left": pick(), "right": pick()}


def _expected(case: dict, x: np.ndarray) -> dict[str, np.ndarray]:
    def saturate(v):
        return np.clip(v, LOW, HIGH)
    values = [x.astype(np.int64)]
    for kind, a, b in case["ops"]:
        if kind == "relu":
            values.append(np.maximum(values[a], 0))
        elif kind == "add":
            values.append(saturate(values[a] + values[b]))
        else:
            values.append(saturate(values[a] - values[b]))
    joined = np.concatenate([np.maximum(values[case["left"]], 0), np.maximum(values[case["right"]], 0)], axis=0)
    return {"last": saturate(values[-1] + values[case["last"]]).astype(I16),
            "view": np.maximum(values[case["view"]][case["cut"]:], 0).astype(I16),
            "joined": saturate(joined - np.maximum(joined, 0)).astype(I16)}


def _run(case: dict, memory_plan: bool, monkeypatch) -> tuple[list[dict[str, np.ndarray]], tuple[int, int]]:
    """The outputs of two runs (the second with the other input, set as graph parameter 0)."""
    monkeypatch.setattr(ModelGraph, "memory_plan", memory_plan)
    shape, (first, second) = case["shape"], case["inputs"]
    s0 = shape[0]
    with Context() as ctx, ctx.graph() as g:
        made = [ctx.tensor(first)]
        for kind, a, b in case["ops"]:
            made.append(g.relu(made[a]) if kind == "relu" else getattr(g, kind)(made[a], made[b]))
        outs = {"last": g.add(made[-1], made[case["last"]], out=ctx.tensor(shape=shape, dtype=I16))}
        view_shape = (s0 - case["cut"],) + shape[1:]
        outs["view"] = g.relu(made[case["view"]].view((case["cut"],), (s0,)),
                              out=ctx.tensor(shape=view_shape, dtype=I16))
        joined = g.virtual((2 * s0,) + shape[1:], I16)
        g.relu(made[case["left"]], out=joined.view((0,), (s0,)))
        g.relu(made[case["right"]], out=joined.view((s0,), (2 * s0,)))
        outs["joined"] = g.subtract(joined, g.relu(joined), out=ctx.tensor(shape=(2 * s0,) + shape[1:], dtype=I16))
        assert g.add_parameter(made[0]) == 0
        runs = []
        g.process()
        runs.append({k: t.numpy() for k, t in outs.items()})
        g.set_parameter(0, ctx.tensor(second))
        g.process()
        g.process()  # a run over what the last one left in the arena
        runs.append({k: t.numpy() for k, t in outs.items()})
        memory = _model(g).plan.memory
        aligned = sum(-(-life.nbytes // ALIGNMENT) * ALIGNMENT for life in memory.lifetimes)
        return runs, (memory.arena_bytes, aligned)


@pytest.mark.parametrize("seed", range(6))
def test_outputs_are_bit_identical_with_and_without_the_memory_plan(seed, monkeypatch):
    case = _case(seed)
    planned, (arena, aligned) = _run(case, True, monkeypatch)
    unplanned, (no_arena, _) = _run(case, False, monkeypatch)
    for run, x in enumerate(case["inputs"]):
        expected = _expected(case, x)
        for name, want in expected.items():
            assert np.array_equal(unplanned[run][name], want), (seed, run, name)
            assert np.array_equal(planned[run][name], want), (seed, run, name)
    assert 0 < arena <= aligned and no_arena == 0


def test_a_chain_takes_two_buffers_not_one_per_node(monkeypatch):
    monkeypatch.setattr(ModelGraph, "memory_plan", True)
    x = np.arange(-128, 128, dtype=I16).reshape(8, 8, 4)
    with Context() as ctx, ctx.graph() as g:
        y = ctx.tensor(x)
        for _ in range(11):
            y = g.subtract(g.relu(y), np.ones((1, 1, 1), I16))
        out = g.relu(y, out=ctx.tensor(shape=x.shape, dtype=I16))
        g.process()
        want = x.astype(np.int64)
        for _ in range(11):
            want = np.maximum(want, 0) - 1
        assert np.array_equal(out.numpy(), np.maximum(want, 0))
        memory = _model(g).plan.memory
    one = x.nbytes
    assert memory.virtual_bytes == 22 * one
    assert memory.arena_bytes == 2 * one, memory.arena_bytes  # each value lives from its writer to its reader


def test_reverifying_an_unchanged_graph_keeps_its_arena(monkeypatch):
    monkeypatch.setattr(ModelGraph, "memory_plan", True)
    with Context() as ctx, ctx.graph() as g:
        out = g.relu(g.relu(ctx.tensor(np.array([-1, 2], I16))), out=ctx.tensor(shape=(2,), dtype=I16))
        g.verify()
        arena = _model(g).plan.memory.arena
        g.verify()
        assert _model(g).plan.memory.arena is arena
        g.process()
        assert out.numpy().tolist() == [0, 2]


@pytest.mark.parametrize("seed", range(20))
def test_offsets_never_share_bytes_between_tensors_alive_at_once(seed):
    rng = np.random.default_rng(seed)
    intervals = []
    for _ in range(int(rng.integers(1, 40))):
        first = int(rng.integers(0, 30))
        intervals.append((first, first + int(rng.integers(0, 8)), int(rng.integers(1, 5000))))
    offsets, size = assign_offsets(intervals)
    assert all(o % ALIGNMENT == 0 for o in offsets)
    for (i, (f1, l1, n1)), (j, (f2, l2, n2)) in itertools.combinations(enumerate(intervals), 2):
        if f1 <= l2 and f2 <= l1:  # alive at a common step
            assert offsets[i] + n1 <= offsets[j] or offsets[j] + n2 <= offsets[i], (intervals, offsets)
    assert all(o + n <= size for o, (_, _, n) in zip(offsets, intervals))
    busiest = max(sum(n for f, last, n in intervals if f <= step <= last) for step in range(40))
    assert busiest <= size <= sum(-(-n // ALIGNMENT) * ALIGNMENT for _, _, n in intervals)
