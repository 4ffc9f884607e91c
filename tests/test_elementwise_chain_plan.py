"""Long chains of small element-wise nodes (the shape whose verify and first run the plan keeps cheap per
node): their output against a NumPy reference written from the operations' definitions, and again after the
graph changed once verified (a node added, a graph parameter replaced), which must verify anew."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.api import Context

SHAPE = (4, 3, 2)
LOW, HIGH = -32768, 32767


def _reference(x: np.ndarray, other: np.ndarray, ops: list[str]) -> np.ndarray:
    """Q7.8 operands of one format: an add or subtract is the raw sum or difference saturated to int16;
    relu is max(raw, 0) (0 is 0 in any format); brelu with bound 1.0 is min(max(raw, 0), 256)."""
    y = x.astype(np.int64)
    b = other.astype(np.int64)
    for op in ops:
        if op == "add":
            y = np.clip(y + b, LOW, HIGH)
        elif op == "subtract":
            y = np.clip(y - b, LOW, HIGH)
        elif op == "relu":
            y = np.maximum(y, 0)
        else:
            y = np.minimum(np.maximum(y, 0), 256)
    return y.astype(np.int16)


def _chain(g, x, other, ops, out):
    y = x
    for k, op in enumerate(ops):
        last = out if k == len(ops) - 1 else None
        if op in ("add", "subtract"):
            y = getattr(g, op)(y, other, out=last)
        elif op == "relu":
            y = g.relu(y, out=last)
        else:
            y = g.activation(y, "brelu", a=1.0, out=last)
    return y


def _random_ops(rng, n: int) -> list[str]:
    return [str(op) for op in rng.choice(["add", "subtract", "relu", "brelu"], size=n)]


@pytest.mark.parametrize("seed", range(4))
def test_a_long_mixed_chain_matches_the_reference_and_reverifies_after_a_node_is_added(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 400))
    ops = _random_ops(rng, n)
    data = rng.integers(-3000, 3000, size=SHAPE).astype(np.int16)
    delta = rng.integers(-900, 900, size=SHAPE).astype(np.int16)
    data.flat[:3] = (LOW, HIGH, 0)  # the saturating edges
    with Context() as ctx:
        x = ctx.tensor(np.asfortranarray(data), fixed_point_position=8)
        other = ctx.tensor(np.asfortranarray(delta), fixed_point_position=8)
        middle = ctx.tensor(shape=SHAPE, dtype=np.int16, fixed_point_position=8)
        g = ctx.graph()
        _chain(g, x, other, ops, middle)
        g.verify()
        g.process()
        assert np.array_equal(middle.numpy(), _reference(data, delta, ops))

        more = _random_ops(rng, int(rng.integers(20, 60)))  # nodes added after verify: the graph verifies again
        out = ctx.tensor(shape=SHAPE, dtype=np.int16, fixed_point_position=8)
        _chain(g, middle, other, more, out)
        g.process()
        assert np.array_equal(middle.numpy(), _reference(data, delta, ops))
        assert np.array_equal(out.numpy(), _reference(data, delta, ops + more))
        g.close()


def test_a_replaced_graph_parameter_is_read_by_the_next_run():
    rng = np.random.default_rng(7)
    ops = _random_ops(rng, 300)
    first, second = (rng.integers(-3000, 3000, size=SHAPE).astype(np.int16) for _ in range(2))
    delta = rng.integers(-900, 900, size=SHAPE).astype(np.int16)
    with Context() as ctx:
        x = ctx.tensor(np.asfortranarray(first), fixed_point_position=8)
        y = ctx.tensor(np.asfortranarray(second), fixed_point_position=8)
        other = ctx.tensor(np.asfortranarray(delta), fixed_point_position=8)
        out = ctx.tensor(shape=SHAPE, dtype=np.int16, fixed_point_position=8)
        g = ctx.graph()
        _chain(g, x, other, ops, out)
        index = g.add_parameter(x)
        g.verify()
        g.process()
        assert np.array_equal(out.numpy(), _reference(first, delta, ops))
        g.set_parameter(index, y)
        g.process()
        assert np.array_equal(out.numpy(), _reference(second, delta, ops))
        g.close()
