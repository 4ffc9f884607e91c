"""A rewrite at verify: a chain of element-wise nodes, each by one constant value per channel, run as one pass.

TFLite's NNAPI mapping writes MediaPipe's 1x1 depthwise convolutions (a scale and a shift per channel, between
PRELUs) as ``MUL -> ADD``, so a block reads and writes the same tensor five times in a row
(``MUL -> ADD -> PRELU -> MUL -> ADD``). A node whose description has ``channel_step`` (an NNAPI MUL or ADD with no
fused activation, a PRELU: float32, its data input of the output's dims, the other input one value per channel)
is a step. Consecutive steps are computed by the first one's call (``kernels/frontend/channel_chain``: every step
on a block of pixels while it is in cache, each rounded as its own node rounds it, so the bytes are the same) when
each tensor between them is whole, virtual, float32, not laid out channels-last, written by one step and read by
the next alone; and each vector is an application's tensor (not virtual) that no node of the graph writes. The
other steps' calls do nothing; the first writes the last one's output (the memory plan is told: its lifetime
starts there). Whether each node still is such a step is asked again at each binding; when one is not, every node
runs apart.
"""
from __future__ import annotations

from ..kernels.frontend.channel_chain import MAX_STEPS
from .enums import Direction, Type
from .regions import Access, region

CHAIN = "channel_chain"
"""``node.state`` key on the first step: the list of the chain's nodes, in order."""
MEMBER = "channel_member"
"""``node.state`` key on a later step: the first step, whose call does its work."""

_F32 = int(Type.VX_TYPE_FLOAT32)
_IN, _OUT = int(Direction.VX_INPUT), int(Direction.VX_OUTPUT)


def step_of(node):
    """(step name, data input index, vector input index, output index) of ``node`` now, or None."""
    hook = node.description.channel_step
    return None if hook is None else hook(node.params, node.state)


def chain(state: dict) -> list | None:
    """The nodes whose steps a first step with ``state`` computes, while every one still is that step; else None."""
    nodes = state.get(CHAIN)
    if nodes is None or any(step_of(n) is None for n in nodes):
        return None
    return nodes


def absorbed(node) -> bool:
    """Whether ``node``'s work is done by the first step of its chain."""
    first = node.state.get(MEMBER)
    return first is not None and chain(first.state) is not None


def bound_with(state: dict) -> list:
    """The nodes whose parameters a first step with ``state`` binds besides its own."""
    return state.get(CHAIN, [])[1:]


def _link(node, accesses: dict, shown: set[int], last: set[int]):
    """The step that alone reads ``node``'s output at its data input, when that output may stay unwritten."""
    out = node.params[step_of(node)[3]]
    root = out.root
    if (out is not root or not root.virtual or id(root) in shown or id(root) in last or root.data_type != _F32):
        return None
    touching = accesses.get(id(root), [])
    readers = [(n, i) for n, i, _ in touching if n.description.params[i].direction == _IN]
    if len(touching) != 2 or len(readers) != 1:
        return None
    reader, index = readers[0]
    step = step_of(reader)
    if step is None or step[1] != index or tuple(reader.params[step[3]].dims) != tuple(out.dims):
        return None
    return reader


def _vector_ok(node, accesses: dict) -> bool:
    """Whether the step's vector is an application's tensor that no node of the graph writes."""
    v = node.params[step_of(node)[2]]
    if v.root.virtual:
        return False
    return not any(n.description.params[i].direction != _IN for n, i, _ in accesses.get(id(v.root), []))


def _claimed(node, claims: tuple[str, ...]) -> bool:
    return any(key in node.state for key in claims)


def fuse(order: list, nodes: list, uses: dict, shown: set[int], accesses: dict, claims: tuple[str, ...],
         report) -> None:
    """Each chain the module doc allows, after the other rewrites (``claims``: their ``node.state`` keys; a node
    one of them holds stays apart); ``report.channel_chains`` gets each chain's nodes."""
    positions = {id(n): k for k, n in enumerate(nodes)}
    last = {id(t) for t in report.channels_last}
    taken: set[int] = set()
    for first in order:
        if id(first) in taken or step_of(first) is None or _claimed(first, claims) or not _vector_ok(first, accesses):
            continue
        members = [first]
        while len(members) < MAX_STEPS:
            following = _link(members[-1], accesses, shown, last)
            if (following is None or id(following) in taken or _claimed(following, claims)
                    or not _vector_ok(following, accesses)):
                break
            members.append(following)
        if len(members) < 2:
            continue
        taken.update(id(n) for n in members)
        first.state[CHAIN] = members
        for member in members[1:]:
            member.state[MEMBER] = first
        out = members[-1].params[step_of(members[-1])[3]]
        root, box = region(out)  # the first step writes it now: its lifetime in the arena starts there
        entry = uses.get(id(root))
        if entry is not None:
            entry.writes.append(Access(positions[id(first)], step_of(first)[3], out, box))
        report.channel_chains.append(members)
