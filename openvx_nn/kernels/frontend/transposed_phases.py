"""A float32 transposed convolution on the float engine, as stride-1 convolutions of its output phases.

The layer scatters: input pixel ``(y, x)`` adds ``x * w[o, ky, kx, c]`` to output ``(y * sy - top + ky,
x * sx - left + kx)`` (NNAPI's TRANSPOSE_CONV_2D; OpenVX's deconvolution is the same with its kernel flipped).
Output row ``oy = p + sy * q`` of phase ``p < sy`` is reached only by the taps ``ky = m0 + sy * i`` with ``m0 =
(p + top) mod sy``, from input row ``q + base - i`` (``base = (p + top - m0) / sy``, exact): a stride-1
correlation of the input with those taps in descending order, its first window starting at input row ``base -
(taps - 1)`` (negative: zeros before the input; positive: the input cropped). Columns alike. Phases of one geometry
(taps, start and output extent on both axes) run as one engine convolution whose output channels are the phases'
maps one after the other (sub-kernels packed once, at plan); ``phase_scatter`` then places them at their strided
places, in a planar or a channels-last output. A phase that no tap reaches (a kernel smaller than the stride, or
padding that leaves it no input) holds the bias alone.

Arithmetic: per output, float32 products of the taps that meet an input sample, summed with fused multiply-adds
from +0.0 in the order input row, column, channel (ascending), then ``+ bias`` once and the clamp; taps over the
zeros the engine pads a phase's window with add ``w * 0``.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import float_convolution as engine
from . import phase_scatter

Clamp = tuple[float, float]
NO_CLAMP = (-np.inf, np.inf)


def axis_phases(kernel: int, pad: int, stride: int, size_out: int) -> list[tuple[int, tuple[int, ...], int, int]]:
    """``(phase, taps in correlation order, first input read, outputs)`` along one axis, for every phase that has
    outputs (module doc)."""
    phases = []
    for p in range(min(stride, size_out)):
        m0 = (p + pad) % stride
        taps = tuple(range(m0, kernel, stride))[::-1]
        base = (p + pad - m0) // stride
        phases.append((p, taps, base - (len(taps) - 1), len(range(p, size_out, stride))))
    return phases


class TransposedPhases:
    """A transposed convolution planned on the engine. ``w`` ``[O, kh, kw, C]`` in the scattering orientation
    (module doc), ``pads`` ``(top, left)``, ``strides`` ``(sy, sx)``, ``in_hw`` and ``out_hw`` the extents. The
    planned groups are ``(packed sub-kernels, (crop top, crop left), (pad top, pad left), (nh, nw), phases [P, 2]
    of (py, px))``; ``bias_only`` the ``(py, px)`` of the phases no tap reaches."""

    def __init__(self, w: np.ndarray, pads: tuple[int, int], strides: tuple[int, int], in_hw: tuple[int, int],
                 out_hw: tuple[int, int]):
        if w.ndim != 4 or min(strides) < 1 or min(pads) < 0 or min(out_hw) < 1:
            raise ValueError(f"filter {list(w.shape)}, paddings {pads}, strides {strides} and output {out_hw} do not "
                             "make a transposed convolution")
        self.maps, self.channels = w.shape[0], w.shape[3]
        self.strides = (int(strides[0]), int(strides[1]))
        self.out_hw = (int(out_hw[0]), int(out_hw[1]))
        groups: dict[tuple, list] = {}
        self.bias_only: list[tuple[int, int]] = []
        for py, ty, sy, ny in axis_phases(w.shape[1], pads[0], strides[0], out_hw[0]):
            for px, tx, sx, nx in axis_phases(w.shape[2], pads[1], strides[1], out_hw[1]):
                if not ty or not tx or sy >= in_hw[0] or sx >= in_hw[1]:
                    self.bias_only.append((py, px))
                    continue
                groups.setdefault((len(ty), len(tx), sy, sx, ny, nx), []).append((py, px, w[:, list(ty)][:, :, list(tx)]))
        self.groups = []
        for (_, _, sy, sx, ny, nx), members in groups.items():
            subs = np.concatenate([sub for _, _, sub in members])  # [P * O, taps y, taps x, C]
            packed = engine.pack_conv(np.ascontiguousarray(subs, np.float32))
            self.groups.append((packed, (max(sy, 0), max(sx, 0)), (max(-sy, 0), max(-sx, 0)), (ny, nx),
                                np.array([(py, px) for py, px, _ in members], np.int64)))

    @property
    def natively(self) -> bool:
        """Whether :meth:`native_steps` can run it: every phase reached by taps, none reading a cropped input."""
        return not self.bias_only and all(crop == (0, 0) for _, crop, _, _, _ in self.groups)

    def _bias(self, bias: np.ndarray | None, phases: np.ndarray) -> np.ndarray:
        return np.tile(engine.bias_or_zeros(bias, self.maps), len(phases))

    def scratch(self, n: int) -> list[np.ndarray]:
        """Each group's channels-last output, ``[n, nh, nw, P * O]``."""
        return [np.empty((n, nh, nw, len(phases) * self.maps), np.float32) for _, _, _, (nh, nw), phases in self.groups]

    def bind(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray, channels_last: bool,
             clamp: Clamp = NO_CLAMP) -> Callable[[], None]:
        """A no-argument call computing ``out`` (C-contiguous float32, ``[N, OH, OW, O]`` when ``channels_last``,
        else ``[N, O, OH, OW]``) from ``x`` ``[N, H, W, C]`` (any strides: the engine copies what it must; read at each call) and
        ``bias`` (read now: bind again after it changes)."""
        steps = []
        for (packed, crop, pads, _, phases), yn in zip(self.groups, self.scratch(x.shape[0])):
            part = x[:, crop[0]:, crop[1]:]
            steps.append(engine.bind_conv2d(part, packed, self._bias(bias, phases), yn, (pads[1], 0, pads[0], 0),
                                            (1, 1), clamp))
            steps.append(phase_scatter.bind(yn, out, phases, self.strides, channels_last))
        if self.bias_only:
            steps.append(self._fill(bias, out, channels_last, clamp))

        def call() -> None:
            for step in steps:
                step()
        return call

    def _fill(self, bias: np.ndarray | None, out: np.ndarray, channels_last: bool, clamp: Clamp):
        """The phases no tap reaches: the bias, clamped."""
        sy, sx = self.strides

        def fill() -> None:
            value = np.clip(engine.bias_or_zeros(bias, self.maps), clamp[0], clamp[1])
            for py, px in self.bias_only:
                if channels_last:
                    out[:, py::sy, px::sx, :] = value
                else:
                    out[:, :, py::sy, px::sx] = value[:, None, None]
        return fill

    def native_steps(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray, channels_last: bool,
                     clamp: Clamp = NO_CLAMP) -> list | None:
        """:meth:`bind`'s steps as native entries (C-contiguous ``x`` and ``out``), None where one is missing or
        the plan is not :attr:`natively` run."""
        if not self.natively:
            return None
        parts = []
        for (packed, _, pads, _, phases), yn in zip(self.groups, self.scratch(x.shape[0])):
            parts.append(engine.native_conv2d(x, packed, self._bias(bias, phases), yn, (pads[1], 0, pads[0], 0),
                                              (1, 1), clamp))
            parts.append(None if channels_last else phase_scatter.native_scatter(yn, out, phases, self.strides))
        return None if any(p is None for p in parts) else parts
