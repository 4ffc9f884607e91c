"""A rewrite at verify: the activation after a convolution -- PRELU, swish, hard swish, logistic, hard sigmoid --
and the residual sum before it, done in the convolution's epilogue.

MediaPipe's networks end each block in ``convolution -> add(skip) -> PRELU``, MobileNet v3 and EfficientNet theirs
in ``convolution -> hard swish`` or ``swish``: each node a pass over the whole tensor. The float engine's epilogue
computes the bias, adds a residual (``float_microkernel``) and then applies such an activation to each value
while it is in cache (``kernels/frontend/epilogue_activation``), with the activation node's own scalar function,
so the bytes are those of the nodes run apart. The chain is fused when

- a node whose description has ``takes_activation`` (a float32 convolution with no fused activation: it names the
  output and whether it adds a residual too) alone writes a whole virtual float32 tensor ``T`` that one node alone
  reads;
- optionally, where the convolution adds residuals, that node is a residual sum (``residual_sum``: an add with no activation, of ``T`` and a skip ``S`` of
  ``T``'s dims written wholly before the convolution runs (its one writer moved
  before the convolution where it runs after it and nothing between depends on it: ``epilogue_fusion.hoist``), never
  by it), whose output ``U`` again is a whole
  virtual float32 tensor one node alone reads;
- the node reading ``T`` (or ``U``) at its input 0 is an activation the epilogue computes (``activation_epilogue``:
  a function and its parameters, an alpha tensor for PRELU; or ``gate_function``: a function of
  ``float_activation`` from input 0 into the one output), writing a float32 tensor ``R`` of the same dims that
  the convolution does not read.

Then the convolution writes ``R`` (adding ``S``), and the add's and the activation's calls do nothing. Where the
add is there but no such activation follows it -- ``U`` has several readers (MediaPipe's blocks feed the sum to
the next block's PRELU and to its skip branch, a MAX_POOL_2D or PAD), or the add clamps the sum itself (its fused
RELU, RELU1 or RELU6: BlazeFace's ``convolution -> add(skip) + RELU``) -- the convolution writes ``U``: the sum,
clamped as the add clamps it (the engine's tiles clamp after the residual, as the add does after its sum), and the
add's call does nothing. NaN: a NaN
value of the convolution stays itself through the sum (``float_microkernel``), so where both the value and the
skip are NaN the result is a NaN that may carry the other's payload. Whether the activation still computes such a
function is asked at each binding; when it does not, every node runs apart.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import epilogue_fusion, gated_products
from .enums import Direction, Type
from .regions import Access, region

CHAIN = "activation_chain"
"""``node.state`` key on a convolution: the :class:`Chain` its epilogue computes."""
MEMBER = "activation_member"
"""``node.state`` key on a fused add or activation: the convolution whose call does its work."""

_F32 = int(Type.VX_TYPE_FLOAT32)
_IN, _OUT = int(Direction.VX_INPUT), int(Direction.VX_OUTPUT)


@dataclass
class Chain:
    """The activation a convolution's epilogue computes, and the residual sum before it (``add``, its skip input
    at ``skip_index``), if any."""

    activation: object | None
    add: object | None = None
    skip_index: int = 0
    clamp: int = 0
    """The add's own fused activation (NNAPI's code: 0 none, 1 RELU, 2 RELU1, 3 RELU6), when no activation node
    follows it."""

    def nodes(self) -> list:
        return [n for n in (self.add, self.activation) if n is not None]


COMPUTABLE = ("logistic", "swish", "hard_sigmoid", "hard_swish", "tanh", "softplus")
"""The functions of ``float_activation`` an epilogue can compute (``kernels/frontend/epilogue_activation.CODES``)."""

FUNCTIONS: tuple[str, ...] = ()
"""Those of :data:`COMPUTABLE` the plan folds into a convolution: none. The epilogue computes them in place on the
tile's values at the speed of their own pass, and these functions are bound by their arithmetic, not by memory at
these sizes, so folding saves nothing measurable: converted MobileNet v3 small with its hard swishes folded 1.457 ms
against 1.461 apart (one thread, CPU time), 1.59 against 1.55 on two (in turns, load 11 on a 2-core AMD EPYC);
a 1x1 convolution of 28x28x24 to 96 channels with a float32 hard swish 33.4 us folded against 32.2 with its pass.
(Before the epilogue worked in place, folding cost a quarter more.) PRELU, which the epilogue computes inline, is
always folded."""


def function_of(node):
    """(function, alpha tensor or None, a, b) of an activation node as an epilogue computes it now, or None: its
    ``activation_epilogue`` hook's answer, else a :data:`FUNCTIONS` function its ``gate_function`` names."""
    hook = node.description.activation_epilogue
    if hook is not None:
        return hook(node.params, node.state)
    gate = node.description.gate_function
    found = None if gate is None else gate(node.params, node.state)
    if found is None or found[0] not in FUNCTIONS:
        return None
    return found[0], None, found[1], found[2]


def epilogue(state: dict):
    """(output tensor, skip tensor or None, function, alpha tensor or None, a, b, clamp) of the chain fused into a
    convolution with ``state`` (function None: the add's sum alone, clamped by ``clamp``), while the activation
    still is one an epilogue computes and the add still the same residual sum; else None."""
    chain = state.get(CHAIN)
    if chain is None:
        return None
    if chain.add is not None:
        sums = chain.add.description.residual_sum
        if sums is None or sums(chain.add.params, chain.add.state) != chain.clamp:
            return None
    skip = None if chain.add is None else chain.add.params[chain.skip_index]
    if chain.activation is None:
        return (_output(chain.add), skip, None, None, 1.0, 1.0, chain.clamp)
    function = function_of(chain.activation)
    if function is None:
        return None
    return (_output(chain.activation), skip, *function, 0)


def absorbed(node) -> bool:
    """Whether ``node``'s work is done by the convolution it feeds (:func:`epilogue`)."""
    producer = node.state.get(MEMBER)
    return producer is not None and epilogue(producer.state) is not None


def bound_with(state: dict) -> list:
    """The nodes whose parameters a convolution with ``state`` binds besides its own."""
    chain = state.get(CHAIN)
    return [] if chain is None else chain.nodes()


def _output_index(node) -> int:
    return next(i for i, s in enumerate(node.description.params) if s.direction == _OUT)


def _output(node):
    return node.params[_output_index(node)]


CLAIMS = (CHAIN, MEMBER, gated_products.GATE, gated_products.GATED, epilogue_fusion.CHAIN, epilogue_fusion.MEMBER,
           "epilogue", "fused_into")
"""``node.state`` keys of the plan's other fusions (``rewrites``' own too): a node one of them holds stays apart."""


def _claimed(node) -> bool:
    """Whether another fusion of the plan already holds ``node`` (a gate activation a product computes from its
    input, which must then still be written)."""
    return any(key in node.state for key in CLAIMS)


def _whole(root, accesses: dict, shown: set[int], last: set[int]) -> bool:
    """Whether ``root`` is a whole virtual float32 tensor that one node writes, not a graph parameter nor laid out
    channels-last."""
    writers = [n for n, i, _ in accesses.get(id(root), []) if n.description.params[i].direction == _OUT]
    return (root.virtual and root.parent is None and id(root) not in shown and id(root) not in last
            and root.data_type == _F32 and len(writers) == 1)


def _sole_reader(root, accesses: dict, shown: set[int], last: set[int]):
    """(the node reading ``root``, the index) when ``root`` is whole, virtual, float32, not a graph parameter nor
    laid out channels-last, written by one node and read once by another; else None."""
    if (not root.virtual or root.parent is not None or id(root) in shown or id(root) in last
            or root.data_type != _F32):
        return None
    touching = accesses.get(id(root), [])
    readers = [(n, i, p) for n, i, p in touching if n.description.params[i].direction == _IN]
    if len(touching) != 2 or len(readers) != 1 or readers[0][2] is not root:
        return None
    return readers[0][0], readers[0][1]


def fuse(order: list, nodes: list, uses: dict, shown: set[int], accesses: dict, report) -> None:
    """Each chain the module doc allows, after the other rewrites (``accesses`` by root as ``rewrites`` gathers
    them, ``shown`` the roots an application can see, ``uses`` the verifier's accesses: the convolution's write of
    ``R`` and read of ``S`` are added, so the arena keeps them alive from there); ``report.activations`` gets the
    (convolution, add or None, activation) triples."""
    steps: dict[int, float] = {id(n): s for s, n in enumerate(order)}
    positions = {id(n): k for k, n in enumerate(nodes)}
    moved: set[int] = set()
    last = {id(t) for t in report.channels_last}
    for conv in order:
        takes = conv.description.takes_activation
        found = None if takes is None else takes(conv.params, conv.state)
        if found is None or _claimed(conv):
            continue
        k, adds = found
        t = conv.params[k]
        found = _sole_reader(t, accesses, shown, last)
        if found is None:
            continue
        reads = {id(p.root) for i, p in enumerate(conv.params)
                 if i != k and p is not None and getattr(p, "root", None) is not None}
        add, skip_index, source, clamp = None, 0, t, None
        sums = found[0].description.residual_sum
        if adds and sums is not None and not _claimed(found[0]):
            clamp = sums(found[0].params, found[0].state)
        if clamp is not None:
            add, skip_index = found[0], 1 - found[1]
            skip, source = add.params[skip_index], _output(add)
            if (skip.data_type != _F32 or tuple(skip.dims) != tuple(t.dims) or tuple(source.dims) != tuple(t.dims)
                    or skip.root is t or id(skip.root) in last or id(source.root) in reads | {id(skip.root)}
                    or not (epilogue_fusion.written_before(skip.root, steps[id(conv)], uses, nodes, steps)
                            or epilogue_fusion.hoist(skip.root, conv, uses, nodes, steps, moved))):
                continue
            reads.add(id(skip.root))
            found = None if clamp else _sole_reader(source, accesses, shown, last)
        activation, index = (None, 0) if found is None else found
        if activation is None or index != 0 or function_of(activation) is None or _claimed(activation):
            if add is None or not _whole(source.root, accesses, shown, last):
                continue
            activation = None  # the sum alone, clamped as the add clamps it
        r = source if activation is None else _output(activation)
        if (r.data_type != _F32 or tuple(r.dims) != tuple(t.dims) or id(r.root) in reads | last or r.root is t
                or (activation is not None and r.root is source.root)):
            continue
        chain = Chain(activation, add, skip_index, clamp or 0)
        conv.state[CHAIN] = chain
        for member in chain.nodes():
            member.state[MEMBER] = conv
        root, box = region(r)  # the convolution writes it now: its lifetime in the arena starts there
        entry = uses.get(id(root))
        if entry is not None:
            entry.writes.append(Access(positions[id(conv)], k, r, box))
        if add is not None:
            skip_root, skip_box = region(add.params[skip_index])
            entry = uses.get(id(skip_root))
            if entry is not None:
                entry.reads.append(Access(positions[id(conv)], k, add.params[skip_index], skip_box))
        report.activations.append((conv, add, activation))
    if moved:  # the skips' writers hoisted before their convolutions (``epilogue_fusion.hoist``) now run there
        order.sort(key=lambda n: steps[id(n)])
