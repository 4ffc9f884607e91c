"""The plan's fusion of an activation into the product that alone reads it: ``x * f(g)`` as one pass.

Squeeze-and-excitation ends with a gate of one value per channel, squashed by a logistic or hard sigmoid and
multiplied into every pixel of its channel. Every front end writes it as two nodes: the activation (the OpenVX
activation layer, CoreML's pointwise function) and a broadcasting multiply. When the activation's output is a
whole virtual float32 tensor that only it writes and only the multiply reads, the multiply computes ``f`` itself
on the activation's input (``kernels/frontend/channel_gate``: ``f`` on the gate's few values, then one
vectorized product) and the activation's call does nothing. ``f`` runs on the same float32 kernel as the
activation's own node, so the bytes are those of the two nodes run apart.

A description says what it takes: ``gate_function`` (an activation: the float32 function it computes now) and
``takes_gate`` (a product: the inputs at which it can read a gate). Whether the activation still computes such a
function is asked again at each binding (its scalars may be written after verify); when it does not, both nodes
run apart on the tensors verify gave them. The activation's input is read by the multiply now: the memory plan
is told (a read at the multiply's position), so the arena keeps it alive until then.
"""
from __future__ import annotations

from .enums import Direction, Type
from .regions import Access, region

GATE = "gate"
"""``node.state`` key on a product: (the activation node it computes, the input index of its output, the
product node itself)."""
GATED = "gated_into"
"""``node.state`` key on an activation: the product that computes it."""

_F32, _TENSOR = int(Type.VX_TYPE_FLOAT32), int(Type.VX_TYPE_TENSOR)
_IN, _OUT = int(Direction.VX_INPUT), int(Direction.VX_OUTPUT)


def function_of(activation) -> tuple[str, float, float] | None:
    """The (function, a, b) an activation node computes now, or None."""
    hook = activation.description.gate_function
    return None if hook is None else hook(activation.params, activation.state)


def gate(state: dict) -> tuple[int, object, str, float, float] | None:
    """(input index, the activation's input tensor, function, a, b) of the gate fused into a product with
    ``state``, while it is fused (the activation's ``gate_function`` and the product's ``takes_gate`` are asked
    again), else None."""
    found = state.get(GATE)
    if found is None:
        return None
    activation, index, product = found
    function = function_of(activation)
    if function is None or index not in product.description.takes_gate(product.params, product.state):
        return None
    return index, activation.params[0], *function


def absorbed(node) -> bool:
    """Whether ``node``'s work is done by the product it feeds (:func:`gate`)."""
    product = node.state.get(GATED)
    return product is not None and gate(product.state) is not None


def _output_index(node) -> int:
    return next(i for i, s in enumerate(node.description.params) if s.direction == _OUT)


def fuse(order: list, accesses: dict[int, list], shown: set[int], positions: dict, uses: dict, report) -> None:
    """Each gate activation into the product that alone reads its output (module doc), after the layouts were
    chosen (a source made channels-last is left apart); ``accesses`` are the tensor parameters by root
    (``rewrites._accesses``), ``shown`` the ids of roots an application can see, ``uses`` the verifier's accesses
    (a fused product's read of the activation's input is added), ``report`` the rewrites' report (``fused``
    gets the (product, activation) pairs)."""
    last = {id(t) for t in report.channels_last}
    for node in order:
        takes = node.description.takes_gate
        indices = () if takes is None else takes(node.params, node.state)
        for k in indices:
            if node.state.get(GATE) is not None:
                break
            g = node.params[k]
            root = g.root
            if g is not root or not root.virtual or id(root) in shown or root.data_type != _F32 or id(root) in last:
                continue
            touching = accesses.get(id(root), [])
            writers = [(n, i) for n, i, _ in touching if n.description.params[i].direction == _OUT]
            readers = [(n, i) for n, i, _ in touching if n.description.params[i].direction == _IN]
            if len(writers) != 1 or readers != [(node, k)] or len(touching) != 2:
                continue
            activation, i = writers[0]
            if i != _output_index(activation) or activation.state.get(GATED) is not None or \
                    function_of(activation) is None:
                continue
            source = activation.params[0]
            written = {id(p.root) for j, p in enumerate(node.params)
                       if p is not None and node.description.params[j].direction == _OUT}
            if source.data_type != _F32 or tuple(source.dims) != tuple(root.dims) or id(source.root) in last or \
                    id(source.root) in written:
                continue
            node.state[GATE] = (activation, k, node)
            activation.state[GATED] = node
            source_root, box = region(source)
            entry = uses.get(id(source_root))
            if entry is not None:  # the product reads the source now: its lifetime in the arena lasts until then
                entry.reads.append(Access(positions[node], k, source, box))
            report.fused.append((node, activation))
