"""The compiled plan of a verified graph: one flat array of prepared calls, in execution order.

Everything a run needs that depends only on the graph, its parameters and the
tensors' storage is resolved once: each node's runner is bound by its kernel's
``bind`` (arrays, compiled kernel, tables, packed weights) or, without one,
is ``execute`` over the node's parameters; the tensors whose write counters a
call moves are listed beside it.  ``process`` is then a loop over the array
that calls each runner, with no per-node lookups.  The plan is rebound when
any tensor's storage moves (``Tensor.storage_epoch``: a swapped handle, a new
allocation or a memory plan), since bound runners hold arrays.

A ``Call`` also carries its native entry (the kernel description's
``native`` hook: a C function's address and its packed arguments), bound in
the same step; when every call has one, ``native_plan`` publishes them to C
and ``vxProcessGraph`` walks them there without the GIL.  A call with a
native entry binds its Python runner on its first run from Python (rare:
a graph with some node lacking an entry, or a busy cell).

A rebind keeps every call whose node reads what it read when it was bound
(:func:`_binding_key`: the same kernel description and verified state, the
same storage, meta-data and, for [static] parameters, write count of each
tensor, the same value of each scalar): binding costs hundreds of
microseconds a node, and a swapped handle, a written scalar or a changed
setting concerns few of them.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from . import (
    activation_epilogue,
    bordered_tensors,
    channel_chains,
    epilogue_fusion,
    gated_products,
    map_groups,
    reshape_views,
    rewrites,
    side_by_side,
)
from .enums import Direction, Type
from .errors import VXError
from .memory import EMPTY, MemoryPlan
from .node import Node
from .tensor import Tensor

Runner = Callable[[], None]


class Call(NamedTuple):
    """One prepared call: the node, its bound runner, the root tensors whose write counters it moves, and
    its native entry (None: it runs only from Python).

    Only non-virtual roots are counted: the counters tell [static] parameters'
    planners (convolution weights) that values changed, and a virtual tensor is
    never a [static] parameter.
    """

    node: Node
    run: Runner
    writes: tuple[Tensor, ...]
    native: object = None


class Binding(NamedTuple):
    """What binding a call read (:func:`_binding_key`), and the objects whose ids the key holds (kept
    alive, so that no other object takes one of those ids meanwhile)."""

    key: tuple
    held: tuple


class Calls(tuple):
    """A plan's calls (a plain tuple to the loops that run them) and, by node, the :class:`Binding` of each
    call that a rebind may keep."""

    bindings: dict[int, tuple[Call, Binding]]


@dataclass
class Plan:
    """The calls of one verified graph, the storage epoch they were bound at, its memory plan, the
    native plan published for it (``native_plan.NativePlan``; None when some call needs Python), and the
    generation (``cells.py``) that decided whether it has one (None: the generation plays no part, since
    some call has no native entry at all)."""

    calls: tuple[Call, ...] = ()
    epoch: int = -1
    memory: MemoryPlan = EMPTY
    native: object = None
    generation: int | None = -1


def _binding_key(node: Node) -> Binding | None:
    """What binding ``node`` reads, as ids and values, and the objects those ids name; None when a parameter
    is not a tensor or a scalar (other objects are not followed: such a node is always bound afresh)."""
    description, state = node.description, node.state
    key: list = [id(description), id(state)]
    held: list = [description, state]
    packed = state.get("packed", ()) if isinstance(state, dict) else ()  # bound from these: as [static] ones
    fused = state.get(rewrites.EPILOGUE) if isinstance(state, dict) else None
    params = list(zip(description.params, node.params))
    if fused is not None:  # a convolution binds its fused activation's output and scalars too
        params += [(s, p) for s, p in zip(fused.description.params, fused.params)]
    for member in epilogue_fusion.bound_with(state) if isinstance(state, dict) else ():  # and a residual chain's
        params += [(s, p) for s, p in zip(member.description.params, member.params)]
    for member in activation_epilogue.bound_with(state) if isinstance(state, dict) else ():  # an activation chain's
        params += [(s, p) for s, p in zip(member.description.params, member.params)]
    for member in channel_chains.bound_with(state) if isinstance(state, dict) else ():  # a channel chain's steps
        params += [(s, p) for s, p in zip(member.description.params, member.params)]
    gated = state.get(gated_products.GATE) if isinstance(state, dict) else None
    if gated is not None:  # a product binds its gate activation's input and scalars too
        params += [(s, p) for s, p in zip(gated[0].description.params, gated[0].params)]
    for member in state.get(map_groups.GROUP, ()) if isinstance(state, dict) else ():  # and a group's its members'
        params += [(s, p) for s, p in zip(member.description.params, member.params)]
    for i, (spec, p) in enumerate(params):
        if p is None:
            key.append(None)
        elif isinstance(p, Tensor):
            root = p.root
            try:
                storage = root.array  # a root's array is its storage object itself: new memory, new object
            except VXError:
                return None
            key.append((id(p), id(storage), p.dims, p.data_type, p.fpp, root.writes if spec.static or i in packed else None))
            held += (p, storage)
        elif getattr(p, "vx_type", None) == Type.VX_TYPE_SCALAR:
            key.append((id(p), p.bytes))
            held.append(p)
        else:
            return None
    return Binding(tuple(key), tuple(held))


def _python_runner(description, params: list, state: dict) -> Runner:
    """The runner bound by the kernel's ``bind`` when it has one (else the executor over the parameters)."""
    if description.bind is not None:
        try:
            runner = description.bind(params, state)
        except Exception:  # noqa: BLE001 - the unbound executor reports the same failure per run
            runner = None
        if runner is not None:
            return runner
    return functools.partial(description.execute, params, state)


class _Deferred:
    """A call's Python runner, bound on its first run: a call with a native entry runs from Python only
    when its graph cannot run natively (a busy cell, a node without an entry), and binding both for every
    node doubled the cost of a graph's first process."""

    __slots__ = ("description", "params", "runner", "state")

    def __init__(self, description, params: list, state: dict) -> None:
        self.description, self.params, self.state = description, params, state
        self.runner: Runner | None = None

    def __call__(self) -> None:
        runner = self.runner
        if runner is None:
            runner = self.runner = _python_runner(self.description, self.params, self.state)
        runner()


def _native_entry(description, params: list, state: dict):
    if description.native is None:
        return None
    try:
        return description.native(params, state)
    except Exception:  # noqa: BLE001 - no native entry for this binding: the graph runs from Python
        return None


_OUTPUT = Direction.VX_OUTPUT


def _writes(specs, params: list) -> tuple[Tensor, ...]:
    """The non-virtual roots of the tensors a node writes, each once, in parameter order: a loop, not a
    generator over every parameter (binding a long graph asks it of each node)."""
    roots: list = []
    for spec, p in zip(specs, params):
        if spec.direction == _OUTPUT and isinstance(p, Tensor):
            root = p.root
            if not root.virtual and root not in roots:
                roots.append(root)
    return tuple(roots)


def bind(node: Node) -> Call:
    """``node``'s call: its native entry (the kernel description's ``native``, if any) and its Python
    runner (bound now when there is no native entry, else on its first run). A node the plan's rewrites
    fused into another does nothing; one they gave planar stand-ins runs between its conversions
    (``rewrites``)."""
    description, params, state = node.description, node.params, node.state
    writes = _writes(description.params, params)
    if (rewrites.fused(node) or map_groups.merged(node) or gated_products.absorbed(node)
            or activation_epilogue.absorbed(node) or channel_chains.absorbed(node) or reshape_views.viewed(node)):
        return Call(node, rewrites.nothing, writes, rewrites.no_entry())
    if state.get(bordered_tensors.STAND_INS):  # a fused node running itself on a bordered tensor
        runner, native = bordered_tensors.wrapped(node, lambda ps: (_python_runner(description, ps, state), None))
        return Call(node, runner, writes, native)
    if map_groups.leads(node):
        runner, native = map_groups.bind_group(node, lambda: (_python_runner(description, params, state),
                                                              _native_entry(description, params, state)))
        return Call(node, runner, writes, native)
    if state.get(rewrites.CONVERT):
        runner, native = rewrites.converted(node, lambda ps: (_python_runner(description, ps, state),
                                                              _native_entry(description, ps, state)))
        return Call(node, runner, writes, native)
    native = _native_entry(description, params, state)
    runner = _python_runner(description, params, state) if native is None else _Deferred(description, params, state)
    return Call(node, runner, writes, native)


def compile_calls(order: list[Node], previous: tuple[Call, ...] = ()) -> Calls:
    """The calls of ``order``, keeping each call of ``previous`` (the last binding) whose node still reads
    what it read then."""
    kept = getattr(previous, "bindings", {})
    calls, bindings = [], {}
    for node in order:
        binding = _binding_key(node)  # read before binding: a change meanwhile only makes it differ next time
        old = kept.get(id(node))
        call = old[0] if old is not None and binding is not None and old[1].key == binding.key else bind(node)
        calls.append(call)
        if binding is not None:
            bindings[id(node)] = (call, binding)
    found = Calls(side_by_side.pair_calls(calls, rewrites.nothing, rewrites.no_entry()) if rewrites.enabled()
                  else calls)  # the bindings keep the calls unpaired: a rebind pairs what it keeps afresh
    found.bindings = bindings
    return found
