"""The compiled plan of a verified graph: one flat array of prepared calls, in execution order.

Everything a run needs that depends only on the graph, its parameters and the
tensors' storage is resolved once: each node's runner is bound by its kernel's
``bind`` (arrays, compiled kernel, tables, packed weights) or, without one,
is ``execute`` over the node's parameters; the tensors whose write counters a
call moves are listed beside it.  ``process`` is then a loop over the array
that calls each runner, with no per-node lookups.  The plan is rebound when
any tensor's storage moves (``Tensor.storage_epoch``: a swapped handle, a new
allocation or a memory plan), since bound runners hold arrays.

The array is the unit issue 25 builds on: a ``Call`` will also carry a native
entry point and its packed arguments (buffer pointers, strides, scalars,
scratch), so a C loop can walk the same array without the GIL and come back
to Python only for the calls that have no native entry.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from .enums import Direction
from .memory import EMPTY, MemoryPlan
from .node import Node
from .tensor import Tensor

Runner = Callable[[], None]


class Call(NamedTuple):
    """One prepared call: the node, its bound runner, and the root tensors whose write counters it moves.

    Only non-virtual roots are counted: the counters tell [static] parameters'
    planners (convolution weights) that values changed, and a virtual tensor is
    never a [static] parameter.
    """

    node: Node
    run: Runner
    writes: tuple[Tensor, ...]


@dataclass
class Plan:
    """The calls of one verified graph, the storage epoch they were bound at, and its memory plan."""

    calls: tuple[Call, ...] = ()
    epoch: int = -1
    memory: MemoryPlan = EMPTY


def bind(node: Node) -> Call:
    """``node``'s call, its runner bound by its kernel's ``bind`` when it has one (else the executor)."""
    description, params, state = node.description, node.params, node.state
    runner: Runner | None = None
    if description.bind is not None:
        try:
            runner = description.bind(params, state)
        except Exception:  # noqa: BLE001 - the unbound executor reports the same failure per run
            runner = None
    if runner is None:
        runner = functools.partial(description.execute, params, state)
    writes = tuple(dict.fromkeys(
        p.root for spec, p in zip(description.params, params)
        if p is not None and spec.direction == Direction.VX_OUTPUT and isinstance(p, Tensor) and not p.root.virtual))
    return Call(node, runner, writes)


def compile_calls(order: list[Node]) -> tuple[Call, ...]:
    return tuple(bind(node) for node in order)
