"""A direction of a recurrent layer bound once onto the recurrent engine (``recurrence``): weights packed for the
fully connected tiles, scratch allocated, settings written, all into one native entry. The Python path runs
the same entry (``native.run``), so a front end's bound call and a graph's native plan share every bit.

Weights arrive as the front ends hold them, stacked per gate in the engine's order (``recurrence``'s module
doc): ``w_x [gates * U, K]``, ``w_h [gates * U, O]``, ``bias [gates * U]`` (the gates the cell has: the input
gate's rows left out with CIFG), and ``recurrent_bias [gates * U]`` when the cell has biases on its recurrent
products too (PyTorch's and ONNX's): added to the input products' bias, except a GRU's output gate's with
``reset_after``, which the recurrent product adds before the reset gate scales it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..engine import side_by_side
from ..support import native
from . import recurrence as r
from .float_convolution import fc_loop, pack_fc, work_units

GATES = {"lstm": 4, "gru": 3, "rnn": 1}


@dataclass(frozen=True)
class Cell:
    """One direction's weights and settings. ``activations``: (name, a, b) triples of ``recurrence.ACTIVATIONS``
    names: the gates' (LSTM: input, forget, output; GRU: update, reset; RNN: the state's), then the block input's
    (LSTM) or output gate's (GRU), then the cell output's (LSTM). ``norm [4, U]``: NNAPI's layer normalization
    weights (the input gate's row unused with CIFG). ``reset_after`` (GRU): the reset gate scales the output gate's
    recurrent product, ``o = g(Wo x + bo + r * (Ro h + recurrent_bias_o))`` (PyTorch's GRU, ONNX's
    ``linear_before_reset``), not the state before it (CoreML's)."""

    kind: str
    w_x: np.ndarray
    w_h: np.ndarray
    bias: np.ndarray | None = None
    activations: Sequence[tuple[str, float, float]] = ()
    cifg: bool = False
    peephole: np.ndarray | None = None
    norm: np.ndarray | None = None
    projection: np.ndarray | None = None
    projection_bias: np.ndarray | None = None
    cell_clip: float = 0.0
    projection_clip: float = 0.0
    pre_clip: float = 0.0
    recurrent_bias: np.ndarray | None = None
    reset_after: bool = False

    @property
    def units(self) -> int:
        gates = GATES[self.kind] - (1 if self.cifg else 0)
        return self.w_x.shape[0] // gates

    @property
    def outputs(self) -> int:
        return self.units if self.projection is None else self.projection.shape[0]


def _f32(a, shape) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, np.float32).reshape(shape))


def _six(a: np.ndarray) -> np.ndarray:
    return a.reshape((1,) * (native.RANK - a.ndim) + a.shape)


def _packed(w: np.ndarray, rows: int, runs: bool = True) -> tuple[np.ndarray, int, int, int]:
    """(packed weights, panel, units, the tile loop's address) of a product; the loop 0 for a product the cell
    never runs (its placeholder weights would compile a tile loop of their own on a cold cache)."""
    wp = pack_fc(np.asarray(w, np.float32), rows=rows)
    panel, units = work_units(wp, rows)
    return wp, panel, units, fc_loop(wp, rows) if runs else 0


def _empty(shape=(0, 0)) -> np.ndarray:
    return np.zeros(shape, np.float32)


def bind(cell: Cell, x: np.ndarray, out: np.ndarray, h0: np.ndarray | None = None, c0: np.ndarray | None = None,
         h_out: np.ndarray | None = None, c_out: np.ndarray | None = None, reverse: bool = False,
         batch_major: bool = False, gates: np.ndarray | None = None) -> native.Entry:
    """The entry running ``cell`` over ``x`` (float32, C-contiguous ``[T, B, K]``, or ``[B, T, K]`` when
    ``batch_major``) into ``out`` (float32 ``[T, B, O]`` or ``[1, B, O]`` (the last state), any strides). States
    ``h0``/``h_out [B, O]``, ``c0``/``c_out [B, U]`` (float32, any strides; None: zeros, not written); ``gates``
    (float32 ``[4, B, U]``, C-contiguous) receives the last step's gates. Arrays are read and written in place at
    every run of the entry."""
    if x.dtype != np.float32 or not x.flags.c_contiguous or x.ndim != 3:
        raise ValueError("the sequence must be a C-contiguous float32 [T, B, K] array")
    steps, batch = (x.shape[1], x.shape[0]) if batch_major else x.shape[:2]
    kind = r.CELLS.index(cell.kind)
    units, outs = cell.units, cell.outputs
    n_gates = cell.w_x.shape[0] // units
    size = x.shape[2]
    if cell.w_x.shape != (n_gates * units, size) or cell.w_h.shape != (n_gates * units, outs if kind != r.GRU else units):
        raise ValueError(f"weights {list(cell.w_x.shape)}, {list(cell.w_h.shape)} do not fit the input's {size} "
                         f"columns and {units} units")
    if out.shape[1:] != (batch, outs) or out.shape[0] not in (steps, 1):
        raise ValueError(f"output {list(out.shape)} does not fit [{steps}, {batch}, {outs}]")
    bias = np.zeros(n_gates * units, np.float32) if cell.bias is None else _f32(cell.bias, (n_gates * units,))
    after = kind == r.GRU and cell.reset_after
    if cell.reset_after and kind != r.GRU:
        raise ValueError("only a GRU applies its reset gate after the recurrent product")
    rec_bias = np.zeros(max(n_gates * units, outs), np.float32)
    if cell.recurrent_bias is not None:
        if cell.norm is not None:
            raise ValueError("a recurrent bias and layer normalization do not go together")
        extra = _f32(cell.recurrent_bias, (n_gates * units,))
        if after:  # the output gate's goes into its recurrent product, which the reset gate scales
            rec_bias[2 * units:3 * units] = extra[2 * units:]
            extra = np.concatenate([extra[:2 * units], np.zeros(units, np.float32)])
        bias = bias + extra
    norm = np.zeros((4, units), np.float32) if cell.norm is None else _f32(cell.norm, (4, units))
    full_bias = np.zeros((4, units), np.float32)
    if kind == r.LSTM:
        full_bias[4 - n_gates:] = bias.reshape(n_gates, units)
    bx = np.zeros_like(bias) if cell.norm is not None else bias
    wx, panel_x, units_x, loop_x = _packed(cell.w_x, steps * batch)
    w_h = np.asarray(cell.w_h, np.float32)
    recurrent = w_h[:2 * units] if kind == r.GRU and not after else w_h
    wh, panel_h, units_h, loop_h = _packed(recurrent, batch)
    on_reset = kind == r.GRU and not after  # the output gate's product of the reset state, a step's second
    wh2, panel_h2, units_h2, loop_h2 = _packed(w_h[2 * units:] if on_reset else np.zeros((1, 1), np.float32), batch,
                                               on_reset)
    has_proj = cell.projection is not None
    proj, panel_p, units_p, loop_p = _packed(cell.projection if has_proj else np.zeros((1, 1), np.float32), batch,
                                             has_proj)
    proj_bias = np.zeros(outs, np.float32) if cell.projection_bias is None else _f32(cell.projection_bias, (outs,))
    peep = np.zeros((3, units), np.float32) if cell.peephole is None else _f32(cell.peephole, (3, units))
    acts = list(cell.activations) + [("identity", 0.0, 0.0)] * (3 - len(cell.activations))
    codes = [r.ACTIVATIONS.index(name) for name, _, _ in acts]
    ints = np.array([kind, steps, batch, int(reverse), int(cell.cifg), int(cell.peephole is not None),
                     int(cell.norm is not None), int(has_proj), int(batch_major), panel_x, units_x, panel_h, units_h,
                     panel_h2, units_h2, panel_p, units_p, *codes, int(after), loop_x, loop_h, loop_h2, loop_p], np.int64)
    reals = np.array([cell.cell_clip, cell.projection_clip, cell.pre_clip] + [v for _, a, b in acts for v in (a, b)],
                     np.float64)
    rows = x.reshape(1, 1, steps * batch, size)
    pre = np.empty((1, 1, steps * batch, n_gates * units), np.float32)
    rec = np.empty((1, 1, batch, (2 if kind == r.GRU and not after else n_gates) * units), np.float32)
    rec2 = np.empty((1, 1, batch, units), np.float32)
    hs = np.zeros((1, 1, batch, outs), np.float32)
    cell_state = np.zeros((batch, units), np.float32)
    hid = np.zeros((1, 1, batch, units), np.float32)
    gates = np.zeros((4, batch, units), np.float32) if gates is None else gates
    for name, a, want in (("h0", h0, outs), ("h_out", h_out, outs), ("c0", c0, units), ("c_out", c_out, units)):
        if a is not None and (a.shape != (batch, want) or a.dtype != np.float32):
            raise ValueError(f"{name} must be float32 [{batch}, {want}], got {a.dtype} {list(a.shape)}")
    arrays = (rows, wx, bx, pre, wh, rec_bias, rec, wh2, rec2, hs, cell_state, hid, proj, proj_bias, peep, norm,
              full_bias, _empty() if h0 is None else h0, _empty() if c0 is None else c0, out,
              _empty() if h_out is None else h_out, _empty() if c_out is None else c_out, gates)
    words, keep = native.pack(_six(ints), _six(reals), *(_six(a) for a in arrays))
    # a chain of small dependent steps that lends no work: another layer's entry may run it on a helper at once
    return native.Entry(r.entry(), words, keep + (side_by_side.BESIDE,))


def runner(entry: native.Entry):
    """A no-argument call running ``entry`` from Python (the GIL let go meanwhile)."""
    def run() -> None:
        status = native.run(entry)
        if status != 0:
            raise RuntimeError(f"the recurrent engine failed (status {status})")
    return run
