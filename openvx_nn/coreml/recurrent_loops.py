"""PyTorch's GRU as coremltools writes it, recognized and run as one recurrent node.

CoreML's ``gru`` layer multiplies the reset gate into the state before the output gate's recurrent product;
PyTorch's GRU multiplies it into that product (bias included), so coremltools writes ``torch.nn.GRU`` as a
``loop`` of per-step layers over a history blob ``H [T + 1, B, U]`` (row 0 the initial state):

    cond:  c < T                                      (c counts from 0; T a constant)
    body:  x = squeeze(gather(X, c)), h = squeeze(gather(H, c))
           r = sigmoid(W_ir x + b_ir + W_hr h + b_hr);  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
           n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h' = (1 - z) * n + z * h
           H = scatter_add(H, c + 1, expand_dims(h'));  c = c + 1

Run as written, that is a program of segments stepped from Python. :func:`fuse` finds a loop that is exactly
this (every layer of its body accounted for, the counter starting at a constant 0, the rows of ``H`` after the
first constant zeros, nothing after the loop reading a blob of the body but ``H``) and puts a :class:`GRULoop`
in its place, which the lowering (``lowering/recurrent.gru_loop``) turns into one ``coreml.gru`` node in its
reset-after form. Any other loop is left as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import CoreMLError
from .weights import load_weights

SCATTER_ADD = 1
"""``ScatterMode.SCATTER_ADD`` (the history's rows after the first are zeros: adding the state writes it)."""


@dataclass(frozen=True)
class GRUWeights:
    """The loop's cell in PyTorch's gate order (r, z, n): ``w_ih [3U, F]``, ``w_hh [3U, U]``, biases ``[3U]``;
    ``h0 [B, U]`` the history's first row; ``steps`` the loop's count; ``sequence``: the blob the body gathers
    its input rows from."""

    w_ih: np.ndarray
    w_hh: np.ndarray
    b_ih: np.ndarray
    b_hh: np.ndarray
    h0: np.ndarray
    steps: int
    sequence: str
    history: str


@dataclass(eq=False)
class GRULoop:
    """Stands for a recognized loop among the network's layers: reads the sequence and the history blob,
    writes the history blob (``H``'s rows 1..T the states)."""

    name: str
    input: tuple[str, ...]
    output: tuple[str, ...]
    gru_loop: GRUWeights
    fused = "gru_loop"

    def WhichOneof(self, _field: str) -> str:
        """A type no CoreML layer has: control flow, fusion and validation pass it by."""
        return "gruLoop"


def fuse(layers) -> list | None:
    """``layers`` with each top-level loop that is PyTorch's GRU replaced by a :class:`GRULoop`; None when there is
    none."""
    layers = list(layers)
    changed = False
    for index, layer in enumerate(layers):
        if layer.WhichOneof("layer") == "loop":
            try:
                found = _match(layers, index)
            except (CoreMLError, ValueError, IndexError, KeyError, StopIteration):
                found = None
            if found is not None:
                layers[index] = GRULoop(layer.name, (found.sequence, found.history), (found.history,), found)
                changed = True
    return layers if changed else None


def _kind(layer) -> str | None:
    return layer.WhichOneof("layer")


def _reads(layers) -> set[str]:
    names: set[str] = set()
    for layer in layers:
        names.update(layer.input)
        kind = _kind(layer)
        if kind == "loop":
            names.update(_reads(layer.loop.conditionNetwork.layers) | _reads(layer.loop.bodyNetwork.layers))
            if layer.loop.conditionVar:
                names.add(layer.loop.conditionVar)
        elif kind == "branch":
            names.update(_reads(layer.branch.ifBranch.layers) | _reads(layer.branch.elseBranch.layers))
    return names


def _constant(layers, name: str, before: int) -> np.ndarray | None:
    """The value of ``name`` at position ``before``: a ``copy`` of a blob a single ``loadConstantND`` writes."""
    writers = [layer for layer in layers[:before] if name in layer.output]
    if not writers or _kind(writers[-1]) != "copy":
        return None
    source = writers[-1].input[0]
    makers = [layer for layer in layers if source in layer.output]
    if len(makers) != 1 or _kind(makers[0]) != "loadConstantND":
        return None
    p = makers[0].loadConstantND
    shape = tuple(int(d) for d in p.shape)
    return load_weights(p.data, shape, "constant")


class _Body:
    """The body's layers by the blob they write; each one the match uses is ticked off."""

    def __init__(self, layers):
        self.by_output = {}
        for layer in layers:
            if len(layer.output) != 1 or layer.output[0] in self.by_output:
                raise ValueError("a body layer writes several blobs")
            self.by_output[layer.output[0]] = layer
        self.used: set[str] = set()

    def get(self, name: str, kind: str, inputs: int):
        layer = self.by_output[name]
        if _kind(layer) != kind or len(layer.input) != inputs:
            raise ValueError(f"'{name}' is not a {kind} of {inputs} inputs")
        self.used.add(name)
        return layer


def _product(body: _Body, name: str, source: str):
    layer = body.get(name, "innerProduct", 1)
    p = layer.innerProduct
    if layer.input[0] != source or p.int8DynamicQuantize:
        raise ValueError("not a product of the step's row")
    rows, cols = int(p.outputChannels), int(p.inputChannels)
    w = load_weights(p.weights, (rows, cols), "weights")
    b = load_weights(p.bias, (rows,), "bias") if p.hasBias else np.zeros(rows, np.float32)
    return w, b


def _is(body: _Body, name: str, kind: str) -> bool:
    layer = body.by_output.get(name)
    return layer is not None and _kind(layer) == kind


def _gate(body: _Body, name: str, function: str, h: str):
    """``function(W x + b + W' h + b')``: ((W, b), (W', b'), the name of x)."""
    act = body.get(name, "activation", 1)
    if act.activation.WhichOneof("NonlinearityType") != function:
        raise ValueError("another activation")
    total = body.get(act.input[0], "add", 2)
    first, second = (body.by_output[n] for n in total.input)
    if first.input[0] == h:
        first, second = second, first
    x = first.input[0]
    return _product(body, first.output[0], x), _product(body, second.output[0], h), x


def _row(body: _Body, name: str, counter: str) -> str:
    """The blob ``squeeze(gather(blob, counter), axis 0)`` reads: the step's row of it."""
    squeeze = body.get(name, "squeeze", 1)
    gather = body.get(squeeze.input[0], "gather", 2)
    if list(squeeze.squeeze.axes) != [0] or squeeze.squeeze.squeezeAll or gather.gather.axis != 0 or \
            gather.input[1] != counter:
        raise ValueError("not the step's row")
    return gather.input[0]


def _match(layers, index: int) -> GRUWeights | None:
    loop = layers[index].loop
    if layers[index].input or not loop.conditionVar:
        return None
    cond = list(loop.conditionNetwork.layers)
    if len(cond) != 2 or _kind(cond[0]) != "loadConstantND" or _kind(cond[1]) != "lessThan":
        return None
    less = cond[1]
    if list(less.output) != [loop.conditionVar] or len(less.input) != 2 or less.input[1] != cond[0].output[0]:
        return None
    steps = float(load_weights(cond[0].loadConstantND.data, (1,), "count")[0])
    counter = less.input[0]
    if steps != int(steps) or steps < 1 or (loop.maxLoopIterations and loop.maxLoopIterations < steps):
        return None
    steps = int(steps)
    body = _Body(loop.bodyNetwork.layers)
    copies = [layer for layer in loop.bodyNetwork.layers if _kind(layer) == "copy"]
    carried = {layer.output[0]: layer.input[0] for layer in copies}
    if len(copies) != 2 or len(carried) != 2 or counter not in carried:
        return None
    history = next(name for name in carried if name != counter)
    body.used.update(carried)
    # H = scatter_add(H, c + 1, expand_dims(h')); c = c + 1
    scatter = body.get(carried[history], "scatter", 3)
    if scatter.scatter.axis != 0 or int(scatter.scatter.mode) != SCATTER_ADD or \
            scatter.input[0] != history:
        return None
    step = body.get(carried[counter], "add", 1)
    if step.input[0] != counter or step.add.alpha != 1.0 or scatter.input[1] != step.output[0]:
        return None
    expand = body.get(scatter.input[2], "expandDims", 1)
    if list(expand.expandDims.axes) != [0]:
        return None
    # h' = (1 - z) * n + z * h, the terms and factors in either order
    total = body.get(expand.input[0], "add", 2)
    left, right = (body.get(name, "multiply", 2) for name in total.input)
    for kept, fresh in ((left, right), (right, left)):
        states = [n for n in kept.input if _is(body, n, "squeeze")]
        if len(states) == 1 and _is(body, next(n for n in kept.input if n != states[0]), "activation"):
            break
    else:
        return None
    h_name = states[0]
    z_name = next(n for n in kept.input if n != h_name)
    if _row(body, h_name, counter) != history:
        return None
    rest = [n for n in fresh.input if _is(body, n, "add")]
    if len(rest) != 1:
        return None
    n_name = next(n for n in fresh.input if n != rest[0])
    minus = body.get(rest[0], "add", 2)
    neg_name = next((n for n in minus.input if _is(body, n, "activation")), None)
    one_name = next((n for n in minus.input if n != neg_name), None)
    if neg_name is None or one_name is None:
        return None
    neg, one = body.get(neg_name, "activation", 1), body.get(one_name, "loadConstantND", 0)
    linear = neg.activation.linear
    if neg.input[0] != z_name or neg.activation.WhichOneof("NonlinearityType") != "linear" or \
            linear.alpha != -1.0 or linear.beta != 0.0:
        return None
    if list(load_weights(one.loadConstantND.data, (1,), "one")) != [1.0]:
        return None
    z_x, z_h, x_name = _gate(body, z_name, "sigmoid", h_name)
    sequence = _row(body, x_name, counter)
    if sequence in body.by_output or sequence in (history, counter):
        return None
    # n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    tanh = body.get(n_name, "activation", 1)
    if tanh.activation.WhichOneof("NonlinearityType") != "tanh":
        return None
    n_sum = body.get(tanh.input[0], "add", 2)
    n_x_name = next((n for n in n_sum.input if _is(body, n, "innerProduct")), None)
    if n_x_name is None:
        return None
    scaled = body.get(next(n for n in n_sum.input if n != n_x_name), "multiply", 2)
    r_name = next((n for n in scaled.input if _is(body, n, "activation")), None)
    if r_name is None:
        return None
    n_h_name = next(n for n in scaled.input if n != r_name)
    r_x, r_h, r_source = _gate(body, r_name, "sigmoid", h_name)
    n_x, n_h = _product(body, n_x_name, x_name), _product(body, n_h_name, h_name)
    if r_source != x_name or body.used != set(body.by_output):
        return None  # another input, or a layer the pattern does not account for
    w_ih = np.concatenate([r_x[0], z_x[0], n_x[0]])
    w_hh = np.concatenate([r_h[0], z_h[0], n_h[0]])
    units = w_hh.shape[1]
    if w_ih.shape[0] != 3 * units or w_hh.shape[0] != 3 * units:
        return None
    start = _constant(layers, counter, index)
    initial = _constant(layers, history, index)
    if start is None or start.size != 1 or start.reshape(-1)[0] != 0.0 or initial is None:
        return None
    if initial.ndim != 3 or initial.shape[0] != steps + 1 or initial.shape[2] != units or np.any(initial[1:]):
        return None
    later = _reads(layers[index + 1:])
    if (later & (set(body.by_output) | {less.output[0], cond[0].output[0]})) - {history} or counter in later:
        return None
    return GRUWeights(w_ih, w_hh, np.concatenate([r_x[1], z_x[1], n_x[1]]),
                      np.concatenate([r_h[1], z_h[1], n_h[1]]), initial[0], steps, sequence, history)
