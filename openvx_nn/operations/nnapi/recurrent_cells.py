"""NNAPI's recurrent operands onto the recurrent engine (``kernels/frontend/recurrent_layer``).

An operation's directions are bound once (weights stacked in the engine's gate order and packed, scratch
allocated) and bound again only when a weight tensor has been written since (its write count moves). Float32
sequences, states and outputs are read and written in place (a batch-major tensor through its transposed view);
float16 ones and an auxiliary input (beside the input, with its weights beside the input weights) go through
float32 buffers copied per run.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...kernels.frontend import recurrent_layer
from ...kernels.frontend.recurrent_layer import Cell
from ...kernels.support import native
from .common import Args

ACTIVATION_NAMES = {0: "identity", 1: "relu", 2: "relu1", 3: "relu6", 4: "tanh", 6: "sigmoid"}
"""NNAPI's activation codes by the engine's names."""
GATES = "ifco"
F32 = np.dtype(np.float32)


def _f32(a) -> np.ndarray | None:
    return None if a is None else np.asarray(a, np.float32)


def lstm_cell(args: Args, p: str, aux: bool) -> Cell:
    """The LSTM cell of prefix ``p`` (NNAPI's operand names); ``aux``: its auxiliary weights go beside the input
    weights (the engine reads ``[input | aux_input]``)."""
    cifg = args.get(p + "input_to_i") is None
    names = GATES[1:] if cifg else GATES

    def gate_x(g):
        w = _f32(args[p + f"input_to_{g}"])
        return np.concatenate([w, _f32(args[p + f"aux_to_{g}"])], axis=1) if aux else w
    units = args[p + "input_to_f"].shape[0]
    peephole = None
    if args.get(p + "cell_to_f") is not None:
        peephole = np.stack([np.zeros(units, np.float32) if cifg else _f32(args[p + "cell_to_i"]),
                             _f32(args[p + "cell_to_f"]), _f32(args[p + "cell_to_o"])])
    norm = None
    if args.get(p + "norm_f") is not None:
        norm = np.stack([np.zeros(units, np.float32) if cifg else _f32(args[p + "norm_i"])]
                        + [_f32(args[p + f"norm_{g}"]) for g in GATES[1:]])
    act = ACTIVATION_NAMES[int(args["activation"])]
    return Cell("lstm", np.concatenate([gate_x(g) for g in names]),
                np.concatenate([_f32(args[p + f"recurrent_to_{g}"]) for g in names]),
                np.concatenate([_f32(args[p + f"bias_{g}"]) for g in names]),
                (("sigmoid", 0.0, 0.0), (act, 0.0, 0.0), (act, 0.0, 0.0)), cifg, peephole, norm,
                _f32(args.get(p + "projection_weights")), _f32(args.get(p + "projection_bias")),
                float(args["cell_clip"]), float(args["proj_clip"]))


def rnn_cell(args: Args, p: str, aux: bool, weights: str = "weights") -> Cell:
    """The basic RNN cell of prefix ``p``."""
    w = _f32(args[p + weights])
    if aux:
        w = np.concatenate([w, _f32(args[p + "aux_weights"])], axis=1)
    return Cell("rnn", w, _f32(args[p + "recurrent_weights"]), _f32(args[p + "bias"]),
                ((ACTIVATION_NAMES[int(args["activation"])], 0.0, 0.0),))


def _in_place(a: np.ndarray) -> bool:
    return a.dtype == F32


@dataclass
class Plan:
    """The bound entries of a call and the float32 buffers around them: ``before`` copies (source, buffer) run
    first, ``after`` copies (buffer, target) last."""

    before: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    after: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    entries: list[native.Entry] = field(default_factory=list)
    runs: list[Callable[[], None]] = field(default_factory=list)

    def entry(self) -> native.Entry | None:
        """The plan as one native entry, where it has no copies around its entries."""
        return None if self.before or self.after else native.sequence(self.entries)

    def read(self, a: np.ndarray | None, contiguous: bool = False) -> np.ndarray | None:
        """``a`` as the engine reads it: itself when float32 (and C-contiguous if asked), else a buffer."""
        if a is None or (_in_place(a) and (a.flags.c_contiguous or not contiguous)):
            return a
        buffer = np.empty(a.shape, np.float32)
        self.before.append((a, buffer))
        return buffer

    def write(self, a: np.ndarray) -> np.ndarray:
        """``a`` as the engine writes it: itself when float32, else a buffer stored into it after the run."""
        if _in_place(a):
            return a
        buffer = np.empty(a.shape, np.float32)
        self.after.append((buffer, a))
        return buffer

    def joined(self, x: np.ndarray, aux: np.ndarray) -> np.ndarray:
        """``[x | aux]`` along the last axis, copied per run."""
        buffer = np.empty(x.shape[:-1] + (x.shape[-1] + aux.shape[-1],), np.float32)
        self.before += [(x, buffer[..., :x.shape[-1]]), (aux, buffer[..., x.shape[-1]:])]
        return buffer

    def __call__(self) -> None:
        for source, target in self.before:
            target[...] = source
        for run in self.runs:
            run()
        for source, target in self.after:
            target[...] = source


def sequence(plan: Plan, args: Args) -> np.ndarray:
    """The sequence input (NNAPI's shape) as the engine reads it, the auxiliary input joined to it."""
    x, aux = args["input"], args.get("aux_input")
    return plan.read(x, contiguous=True) if aux is None else plan.joined(x, aux)


def direction(plan: Plan, cell: Cell, x: np.ndarray, time_major: bool, out: np.ndarray, h0, c0=None,
              reverse: bool = False, h_out=None, c_out=None, gates=None) -> None:
    """One bound direction: ``out`` (already the engine's float32 array) in NNAPI's order, seen time-major."""
    view = out if time_major else out.transpose(1, 0, 2)
    entry = recurrent_layer.bind(cell, x, view, plan.read(h0), plan.read(c0), h_out, c_out, reverse, not time_major,
                                 gates)
    plan.entries.append(entry)
    plan.runs.append(recurrent_layer.runner(entry))


def guarded(args: Args, weights: list[str], make: Callable[[], Plan]) -> Callable[[], None]:
    """``make()``'s plan, made again when one of the ``weights`` tensors has been written since."""
    names = [n for n in weights if args.get(n) is not None]
    state = {"stamp": [args.writes(n) for n in names], "plan": make()}

    def run() -> None:
        stamp = [args.writes(n) for n in names]
        if stamp != state["stamp"]:
            state["stamp"], state["plan"] = stamp, make()
        state["plan"]()
    return run


def kernel_calls(make: Callable[[Args], Plan], weights: tuple[str, ...]):
    """(run, prepare, native) of an operation whose call is the plan ``make(args)``: ``prepare`` binds it once
    (again after a write to one of the ``weights``), ``native`` gives it as one entry where it has no copies
    (float16, an auxiliary input, a scratch output need Python around the entries)."""
    def prepare(args: Args) -> Callable[[], None]:
        return guarded(args, list(weights), lambda: make(args))

    def run(args: Args) -> None:
        prepare(args)()

    def entry(args: Args) -> native.Entry | None:
        return make(args).entry()
    return run, prepare, entry
