"""A rewrite at verify: a residual sum, and the clamp after it, done in the convolution's epilogue.

A residual block ends in ``convolution -> tensor add (the skip) -> relu``. The float engine's epilogue adds a
residual after the bias and before the clamp (``float_convolution``: ``clamp((sum + bias) + residual)``, two
float32 additions and the clamp's two compares): the very operations the add node and the activation node do one
after the other, on the same float32 values, so the bytes are those of the three nodes run apart. The chain is
fused when

- a convolution on the engine, with no activation fused into it yet, alone writes a whole virtual float32 tensor
  ``T`` that a tensor add alone reads, as its first input (the add keeps a NaN first input, and so does the
  epilogue a NaN value of the convolution: with ``T`` second, two NaN would give the other);
- the add's other input ``S`` is another root of ``T``'s dims (no broadcasting), fully written before the
  convolution runs (every write of it earlier in the execution order) and never written by the convolution;
  when one node writes ``S`` after the convolution and nothing between them depends on it (a projection
  shortcut a model compiler creates after the block's second convolution), that node is moved to run just
  before the convolution (:func:`_hoist`), so the add keeps ``T`` first and the NaN it keeps stays the same;
- ``T``, ``S`` and the add's output ``U`` are channels-last (``rewrites``' layouts, chosen before this pass):
  the engine reads ``S``'s bytes as they are and writes ``U`` in its own order.

Then the convolution writes ``U``, and the add's call does nothing. When, further, a clamp activation (``relu``,
``brelu``: :func:`clamp_of`) alone reads ``U``, whole, and writes a channels-last float32 tensor ``R`` of
the same dims, the convolution writes ``R`` through the clamp and the activation does nothing too (``U`` is then
never written). Whether the activation is still a clamp is asked at each binding (its scalars may be written
after verify); when it is not, the convolution writes ``U`` and the activation runs on it. No value of the
convolution is ``-0.0`` (its sums start at +0.0), so neither is the sum, and the clamp's compares treat it as
the activation does. NaN: a NaN value of the convolution is the sum whatever ``S`` is, else a NaN ``S`` passes
(``elementwise.add``'s rule, which the epilogue follows), and the clamp stores a NaN as ``0x7FC00000``, as the
activation layer does.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .enums import Direction, Type
from .regions import Access, region

CHAIN = "residual_chain"
"""``node.state`` key on a convolution: the :class:`Chain` fused into its epilogue."""
MEMBER = "residual_member"
"""``node.state`` key on a fused add or activation: the convolution whose call does its work."""

_ADD = "org.khronos.openvx.tensor_add"
_SKIP_INDEX, _ADD_OUT = 1, 3
_F32, _TENSOR = int(Type.VX_TYPE_FLOAT32), int(Type.VX_TYPE_TENSOR)
_IN, _OUT = int(Direction.VX_INPUT), int(Direction.VX_OUTPUT)


def clamp_of(activation) -> tuple[float, float] | None:
    """The (low, high) clamp an activation node computes now, or None when it is no clamp."""
    hook = activation.description.epilogue
    return None if hook is None else hook(activation.params, activation.state)


def _output_index(node) -> int:
    return next(i for i, s in enumerate(node.description.params) if s.direction == _OUT)


def _output(node):
    return node.params[_output_index(node)]


@dataclass
class Chain:
    """What a convolution's epilogue computes besides its own layer: the add (the skip tensor at index 1) and
    the clamp activation after it, if any."""

    add: object
    activation: object | None

    def nodes(self) -> list:
        return [self.add] + ([] if self.activation is None else [self.activation])


def _clamped(chain: Chain) -> tuple[float, float] | None:
    return None if chain.activation is None else clamp_of(chain.activation)


def epilogue(state: dict) -> tuple[object, float, float] | None:
    """(output tensor, low, high) of the chain fused into a convolution with ``state``: the activation's output
    through its clamp while it is one, else the add's output unclamped; None when no chain is fused."""
    chain = state.get(CHAIN)
    if chain is None:
        return None
    clamp = _clamped(chain)
    if clamp is None:
        return chain.add.params[_ADD_OUT], -math.inf, math.inf
    return _output(chain.activation), *clamp


def residual(state: dict):
    """The skip tensor a convolution with ``state`` adds in its epilogue, or None."""
    chain = state.get(CHAIN)
    return None if chain is None else chain.add.params[_SKIP_INDEX]


def fused(node) -> bool:
    """Whether a chain member's work is done by its convolution's call (the add always; the activation while it
    is a clamp)."""
    producer = node.state[MEMBER]
    chain = producer.state[CHAIN]
    return node is chain.add or _clamped(chain) is not None


def bound_with(state: dict) -> list:
    """The nodes whose parameters a convolution with ``state`` binds besides its own (their tensors and
    scalars: a change rebinds it)."""
    chain = state.get(CHAIN)
    return [] if chain is None else chain.nodes()


def _sole_reader(root, accesses: dict, shown: set[int]) -> tuple | None:
    """(the one node reading ``root``, the index it reads it at) when ``root`` is whole, virtual, float32 and
    not a graph parameter, one node reads it once and nothing else touches it but its writers; else None."""
    if not root.virtual or root.parent is not None or id(root) in shown or root.data_type != _F32:
        return None
    readers = [(n, i, p) for n, i, p in accesses.get(id(root), []) if n.description.params[i].direction == _IN]
    if len(readers) != 1 or readers[0][2] is not root:
        return None
    return readers[0][0], readers[0][1]


def written_before(root, step: int, uses: dict, nodes: list, steps: dict) -> bool:
    """Whether every write of ``root`` comes before execution step ``step``."""
    entry = uses.get(id(root))
    if entry is None or entry.others:
        return False
    return all(steps[id(nodes[a.position])] < step for a in entry.writes)


def run(order: list, nodes: list, uses: dict, shown: set[int], accesses: dict,
        channels_last: Callable[[object, tuple[int, ...]], bool], report) -> None:
    """Fuse each chain the module doc allows, after ``rewrites``' own fusion and layouts: ``accesses`` are the
    tensor parameters of ``order``'s nodes by root (``rewrites``), ``channels_last(node, indices)`` whether the
    layouts gave those parameters of ``node`` channels-last (no planar stand-ins), ``shown`` the ids of the roots
    of graph parameters; ``report.residual`` gets the (convolution, add, activation or None) triples."""
    steps: dict[int, float] = {id(n): s for s, n in enumerate(order)}
    positions = {id(n): k for k, n in enumerate(nodes)}
    moved: set[int] = set()
    for conv in list(order):
        takes = conv.description.takes_epilogue
        k = None if takes is None else takes(conv.params, conv.state)
        if k is None or conv.state.get(CHAIN) or not channels_last(conv, (k,)):
            continue
        t = conv.params[k]
        found = _sole_reader(t, accesses, shown)
        if found is None or found[0].description.name != _ADD or found[1] != 0:
            continue
        add = found[0]
        skip, out = add.params[_SKIP_INDEX], add.params[_ADD_OUT]
        if [n for n, _, _ in accesses[id(t)]] != [conv, add] or not channels_last(add, (0, _SKIP_INDEX, _ADD_OUT)):
            continue
        if not (tuple(skip.dims) == tuple(t.dims) == tuple(out.dims)) or skip.data_type != _F32:
            continue
        reads = {id(p.root) for i, p in enumerate(conv.params) if getattr(p, "vx_type", None) == _TENSOR and i != k}
        if skip.root is t or id(out.root) in reads | {id(skip.root)} or out.root is not out:
            continue
        if not written_before(skip.root, steps[id(conv)], uses, nodes, steps) and not hoist(
                skip.root, conv, uses, nodes, steps, moved):
            continue
        activation = _activation(out, accesses, shown, reads | {id(skip.root)}, channels_last)
        chain = Chain(add, activation)
        conv.state[CHAIN] = chain
        for member in chain.nodes():
            member.state[MEMBER] = conv
        for tensor in [out] + ([] if activation is None else [_output(activation)]):
            root, box = region(tensor)  # the convolution writes it now: its lifetime in the arena starts there
            entry = uses.get(id(root))
            if entry is not None:
                entry.writes.append(Access(positions[id(conv)], k, tensor, box))
        report.residual.append((conv, add, activation))
    if moved:  # the hoisted writers now run just before their convolutions (stable: the others keep their order)
        order.sort(key=lambda n: steps[id(n)])


def hoist(root, conv, uses: dict, nodes: list, steps: dict, moved: set[int]) -> bool:
    """Move the one node writing ``root`` (after ``conv`` in the order) to just before ``conv``, when nothing in
    between depends on it: every root it reads is fully written before ``conv``, and no other node touches a
    root it writes from ``conv`` on until its own step. Linear in the accesses of the roots it touches; a node
    moved once stays, and nothing is moved before a moved node (its step is no longer whole)."""
    entry = uses.get(id(root))
    if entry is None or entry.others or len(entry.writes) != 1 or id(conv) in moved:
        return False
    writer = nodes[entry.writes[0].position]
    start, end = steps[id(conv)], steps[id(writer)]
    if end <= start or id(writer) in moved:
        return False
    for i, p in enumerate(writer.params):
        if p is None or id(region(p)[0]) not in uses:
            continue  # a static scalar or an application's data nobody writes
        other = uses[id(region(p)[0])]
        if writer.description.params[i].direction == _IN:
            if other.others or any(steps[id(nodes[a.position])] >= start for a in other.writes):
                return False
        elif any(nodes[a.position] is not writer and start <= steps[id(nodes[a.position])] < end
                 for a in (*other.reads, *other.writes, *other.others)):
            return False
    steps[id(writer)] = start - 0.5
    moved.add(id(writer))
    return True


def _activation(u, accesses: dict, shown: set[int], reads: set[int], channels_last: Callable):
    """The clamp activation that alone reads the add's output ``u`` and may be fused with it, or None."""
    found = _sole_reader(u, accesses, shown)
    if found is None or len(accesses[id(u)]) != 2:  # the add writes it, the activation reads it
        return None
    node = found[0]
    if clamp_of(node) is None:
        return None
    r = _output(node)
    if (r.root is not r or r.data_type != _F32 or tuple(r.dims) != tuple(u.dims) or id(r.root) in reads
            or r.root is u or not channels_last(node, (found[1], _output_index(node)))):
        return None
    return node
