"""Simple recurrent, GRU, uni- and bidirectional LSTM layers onto the recurrent kernels.
Weights are stacked per gate at import ([gates, H, I] in CoreML order); a
bidirectional LSTM is a forward and a reverse LSTM node writing the two halves
of the output's channels. PyTorch's GRU loop (``coreml.recurrent_loops``) is one
GRU node in its reset-after form."""
from __future__ import annotations

import numpy as np

from ...operations.coreml.elementwise import POINTWISE_FUNCTIONS
from ..blob import dims_of
from ..builder import GraphBuilder
from ..weights import load_weights
from .activation import scalar_activation
from .registry import fuses, lowers

UNSET = {"sigmoid_hard": (0.2, 0.5), "linear": (1.0, 0.0)}
"""Gate activations written without parameters (coremltools' builder writes empty
messages) take these, the builder's own defaults: all-zero ones would be constant."""
DEFAULTS = {"simple": [("sigmoid", 0.0, 0.0)], "gru": [("sigmoid", 0.0, 0.0), ("tanh", 0.0, 0.0)],
            "lstm": [("sigmoid", 0.0, 0.0), ("tanh", 0.0, 0.0), ("tanh", 0.0, 0.0)]}


def _activations(g: GraphBuilder, params_list, default) -> list[float]:
    chosen = []
    for params in params_list:
        act = scalar_activation(params)
        if act is None:
            raise g.fail("recurrent gates take activations without per-channel parameters")
        if act[0] in UNSET and act[1:] == (0.0, 0.0):
            act = (act[0], *UNSET[act[0]])
        chosen.append(act)
    if not chosen:
        chosen = default
    if len(chosen) != len(default):
        raise g.fail(f"expected {len(default)} activations, got {len(chosen)}")
    return [v for name, a, b in chosen for v in (POINTWISE_FUNCTIONS.index(name), a, b)]


def _input(g: GraphBuilder, layer, size: int):
    x = g.blob(layer.input[0])
    if x.rank != 5 or x.shape[2:] != (size, 1, 1):
        raise g.fail(f"input must be [Seq, Batch, {size}, 1, 1], got {list(x.shape)}")
    return x


def _state(g: GraphBuilder, layer, index: int, batch: int, hidden: int):
    if len(layer.input) <= index or not layer.input[index]:
        return None
    blob = g.blob(layer.input[index])
    want = (1, batch, hidden, 1, 1)
    if blob.shape != want:
        raise g.fail(f"initial state '{layer.input[index]}' must be {list(want)}, got {list(blob.shape)}")
    return blob.tensor


def _state_out(g: GraphBuilder, layer, index: int, batch: int, hidden: int):
    if len(layer.output) <= index or not layer.output[index]:
        return None
    return g.output(layer.output[index], (1, batch, hidden, 1, 1))


def _stack(g: GraphBuilder, wps, shape, what):
    return g.constant(np.stack([load_weights(wp, shape, f"{what} {i}") for i, wp in enumerate(wps)]))


def _flags(g: GraphBuilder, sequence: bool, reverse: bool, coupled: bool = False):
    return g.ints([int(sequence), int(reverse), int(coupled)])


@lowers("simpleRecurrent")
def simple_recurrent(g: GraphBuilder, layer, p) -> str:
    i, h = int(p.inputVectorSize), int(p.outputVectorSize)
    x = _input(g, layer, i)
    acts = _activations(g, [p.activation] if p.HasField("activation") else [], DEFAULTS["simple"])
    b = _stack(g, [p.biasVector], (h,), "bias") if p.hasBiasVector else None
    y = g.output(layer.output[0], ((x.shape[0] if p.sequenceOutput else 1), x.shape[1], h, 1, 1))
    g.coreml("simple_recurrent", (x.tensor, _stack(g, [p.weightMatrix], (h, i), "weights"),
                                  _stack(g, [p.recursionMatrix], (h, h), "recursion"), b,
                                  _state(g, layer, 1, x.shape[1], h), g.floats(acts),
                                  _flags(g, p.sequenceOutput, p.reverseInput), y,
                                  _state_out(g, layer, 1, x.shape[1], h)))
    return "coreml.simple_recurrent"


@lowers("gru")
def gru(g: GraphBuilder, layer, p) -> str:
    i, h = int(p.inputVectorSize), int(p.outputVectorSize)
    x = _input(g, layer, i)
    acts = _activations(g, p.activations, DEFAULTS["gru"])
    w = _stack(g, [p.updateGateWeightMatrix, p.resetGateWeightMatrix, p.outputGateWeightMatrix], (h, i), "weights")
    r = _stack(g, [p.updateGateRecursionMatrix, p.resetGateRecursionMatrix, p.outputGateRecursionMatrix], (h, h),
               "recursion")
    b = _stack(g, [p.updateGateBiasVector, p.resetGateBiasVector, p.outputGateBiasVector], (h,),
               "bias") if p.hasBiasVectors else None
    y = g.output(layer.output[0], ((x.shape[0] if p.sequenceOutput else 1), x.shape[1], h, 1, 1))
    g.coreml("gru", (x.tensor, w, r, b, _state(g, layer, 1, x.shape[1], h), g.floats(acts),
                     _flags(g, p.sequenceOutput, p.reverseInput), y, _state_out(g, layer, 1, x.shape[1], h)))
    return "coreml.gru"


def _lstm_node(g: GraphBuilder, layer, params, wp, acts, x, h, reverse, y, states_in, states_out) -> None:
    i = x.shape[2]
    w = _stack(g, [wp.inputGateWeightMatrix, wp.forgetGateWeightMatrix, wp.blockInputWeightMatrix,
                   wp.outputGateWeightMatrix], (h, i), "weights")
    r = _stack(g, [wp.inputGateRecursionMatrix, wp.forgetGateRecursionMatrix, wp.blockInputRecursionMatrix,
                   wp.outputGateRecursionMatrix], (h, h), "recursion")
    if params.hasBiasVectors:
        bias = np.stack([load_weights(v, (h,), "bias") for v in (
            wp.inputGateBiasVector, wp.forgetGateBiasVector, wp.blockInputBiasVector, wp.outputGateBiasVector)])
    else:
        bias = np.zeros((4, h), np.float32)
    if params.forgetBias:
        bias[1] += 1.0
    b = g.constant(bias) if params.hasBiasVectors or params.forgetBias else None
    peep = _stack(g, [wp.inputGatePeepholeVector, wp.forgetGatePeepholeVector, wp.outputGatePeepholeVector],
                  (h,), "peephole") if params.hasPeepholeVectors else None
    g.coreml("lstm", (x.tensor, w, r, b, peep, states_in[0], states_in[1], g.floats(acts),
                      _flags(g, params.sequenceOutput, reverse, params.coupledInputAndForgetGate),
                      g.f32(params.cellClipThreshold), y, states_out[0], states_out[1]))


@lowers("uniDirectionalLSTM")
def uni_lstm(g: GraphBuilder, layer, p) -> str:
    i, h = int(p.inputVectorSize), int(p.outputVectorSize)
    x = _input(g, layer, i)
    acts = _activations(g, p.activations, DEFAULTS["lstm"])
    batch = x.shape[1]
    y = g.output(layer.output[0], ((x.shape[0] if p.params.sequenceOutput else 1), batch, h, 1, 1))
    _lstm_node(g, layer, p.params, p.weightParams, acts, x, h, p.reverseInput, y,
               (_state(g, layer, 1, batch, h), _state(g, layer, 2, batch, h)),
               (_state_out(g, layer, 1, batch, h), _state_out(g, layer, 2, batch, h)))
    return "coreml.lstm"


@lowers("biDirectionalLSTM")
def bi_lstm(g: GraphBuilder, layer, p) -> str:
    i, h = int(p.inputVectorSize), int(p.outputVectorSize)
    x = _input(g, layer, i)
    if len(p.weightParams) != 2:
        raise g.fail(f"a bidirectional LSTM needs 2 weight sets, got {len(p.weightParams)}")
    batch = x.shape[1]
    shape = ((x.shape[0] if p.params.sequenceOutput else 1), batch, 2 * h, 1, 1)
    y = g.output(layer.output[0], shape)
    dims = dims_of(shape)
    for direction, (acts_list, wp) in enumerate(((p.activationsForwardLSTM, p.weightParams[0]),
                                                 (p.activationsBackwardLSTM, p.weightParams[1]))):
        half = g.view(y, [0, 0, direction * h, 0, 0], [1, 1, (direction + 1) * h, dims[3], dims[4]])
        base = 1 + 2 * direction
        _lstm_node(g, layer, p.params, wp, _activations(g, acts_list, DEFAULTS["lstm"]), x, h, bool(direction),
                   half, (_state(g, layer, base, batch, h), _state(g, layer, base + 1, batch, h)),
                   (_state_out(g, layer, base, batch, h), _state_out(g, layer, base + 1, batch, h)))
    return "2 x coreml.lstm (forward, reverse) into channel views"


@fuses("gru_loop")
def gru_loop(g: GraphBuilder, layer, p) -> str:
    """The loop's history ``H [T + 1, B, U]``: row 0 the initial state, rows 1..T the states the GRU node writes
    (PyTorch's gate order (r, z, n) stacked in the engine's (z, r, n))."""
    units, size = p.w_hh.shape[1], p.w_ih.shape[1]
    x = g.blob(p.sequence)
    batch = p.h0.shape[0]
    if x.rank != 3 or x.shape[0] < p.steps or x.shape[1:] != (batch, size):
        raise g.fail(f"the loop's sequence must be [{p.steps} or more, {batch}, {size}], got {list(x.shape)}")
    order = [1, 0, 2]
    stack = lambda a, shape: g.constant(np.ascontiguousarray(a.reshape(3, *shape)[order]))
    steps = p.steps
    rows = g.view(x.tensor, [0, 0, 0], [size, batch, steps]) if x.shape[0] > steps else x.tensor
    seq = g.temp((steps, batch, size, 1, 1))
    g.coreml("reshape", (rows, seq))
    y = g.temp((steps, batch, units, 1, 1))
    h0 = g.constant(p.h0.reshape(1, batch, units, 1, 1))
    acts = [POINTWISE_FUNCTIONS.index("sigmoid"), 0.0, 0.0, POINTWISE_FUNCTIONS.index("tanh"), 0.0, 0.0]
    g.coreml("gru", (seq, stack(p.w_ih, (units, size)), stack(p.w_hh, (units, units)), stack(p.b_ih, (units,)), h0,
                     g.floats(acts), g.ints([1, 0, 0, 1]), y, None, stack(p.b_hh, (units,))))
    history = g.output(layer.output[0], (steps + 1, batch, units))
    g.coreml("reshape", (g.constant(p.h0.reshape(1, batch, units)), g.view(history, [0, 0, 0], [units, batch, 1])))
    g.coreml("reshape", (y, g.view(history, [0, 0, 1], [units, batch, steps + 1])))
    return "coreml.gru (PyTorch's GRU loop, reset gate after the recurrent product)"
