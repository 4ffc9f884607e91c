"""NNAPI's TENSOR_QUANT8_ASYMM CONV_2D and FULLY_CONNECTED on the integer engine (``engine/nhwc.py``).

A layer is planned once (:func:`prepare_conv`, :func:`prepare_fully_connected`): the weights' offsets
packed, the requantization multiplier split into NNAPI's 31-bit ``m`` and ``shift``
(``asymmetric.quantized_multiplier``) and the fused activation turned into a raw ``[lo, hi]``
(``asymmetric.quantized_range``). The returned ``run(x, out)`` then packs the input and runs the
micro-kernels, writing NHWC directly. The results are bit for bit those of ``nhwc_convolution``'s
NumPy loops (exact int64 sums, then ``asymmetric.requantize``), which stay as the reference and as
the route where the CPU has no SIMD engine (``isa`` ``generic``). A filter with a scale per output
channel (:func:`prepare_conv_per_channel`) runs on the same engine with a multiplier and shift per
channel, bit for bit ``nhwc_convolution.conv2d_per_channel``.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import isa as isa_module
from ..engine import nhwc
from ..support.native import Entry
from . import nhwc_convolution as reference
from .asymmetric import quantized_multiplier, quantized_range

Quant = tuple[float, int]


def _epilogue(quant_in: Quant, quant_w: Quant, quant_out: Quant, activation: int) -> tuple[int, int, int, int, int]:
    """(m, shift, zero point, lo, hi): the same multiplier, computed the same way, as ``output_stage``."""
    m, shift = quantized_multiplier(float(quant_in[0]) * float(quant_w[0]) / float(quant_out[0]))
    lo, hi = quantized_range(activation, *quant_out)
    return m, shift, int(quant_out[1]), lo, hi


def channel_multipliers(quant_in: Quant, scales: np.ndarray, quant_out: Quant) -> tuple[np.ndarray, np.ndarray]:
    """Each output channel's (m, shift) of ``s_in * scales[o] / s_out``, computed as ``conv2d_per_channel`` does."""
    pairs = [quantized_multiplier(float(quant_in[0]) * float(s) / float(quant_out[0])) for s in np.asarray(scales)]
    rule = np.array(pairs, np.int64).reshape(-1, 2)
    return rule[:, 0].copy(), rule[:, 1].copy()


def _engine(w: np.ndarray, bias: np.ndarray | None, out_shape: tuple[int, ...],
            pads: tuple[int, int, int, int], strides: tuple[int, int], activation: int, quant_in: Quant,
            quant_w: Quant, quant_out: Quant, isa: str, scales: np.ndarray | None = None) -> Prepared:
    """The engine's runner into NHWC ``out_shape`` with filter ``w`` [K, KY, KX, C]; ``scales``: the filter's
    per-channel scales (its zero point then 0, ``quant_w`` unused)."""
    w_offsets = w.astype(np.int16) - np.int16(0 if scales is not None else quant_w[1])
    zx = int(quant_in[1])
    per_channel = None if scales is None else channel_multipliers(quant_in, scales, quant_out)
    plan = nhwc.prepare(w_offsets, None if bias is None else np.asarray(bias, np.int64), max(zx, 255 - zx),
                        tuple(out_shape[1:3]), (pads[0], pads[2]), strides, out_shape[0], isa, per_channel)
    if per_channel is None:
        epilogue = _epilogue(quant_in, quant_w, quant_out, activation)
    else:
        epilogue = (0, 0, int(quant_out[1]), *quantized_range(activation, *quant_out))
    call = nhwc.bind(plan, tuple(out_shape), zx, *epilogue)
    return Prepared(call, call.attach, call.native_entry)


class Prepared:
    """A planned layer: ``run(x, out)`` (any ``out``: a strided view through a C-ordered copy), and
    :meth:`attach` (x, out) -> a runner bound to those arrays once, where both are C-ordered (the NNAPI
    operations bind a node's arrays at verify; per run then only the kernels are called), and
    :meth:`native` (x, out) -> the same as a native entry (``support/native.py``), or None."""

    __slots__ = ("_attach", "_call", "_native")

    def __init__(self, call: Callable[[np.ndarray, np.ndarray], None],
                 attach: Callable[[np.ndarray, np.ndarray], Callable[[], None]] | None = None,
                 native: Callable[[np.ndarray, np.ndarray], Entry | None] | None = None):
        self._call, self._attach, self._native = call, attach, native

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        contiguous(out, lambda target: self._call(x, target))

    def attach(self, x: np.ndarray, out: np.ndarray) -> Callable[[], None]:
        if self._attach is not None and x.dtype == np.uint8 and x.flags.c_contiguous and out.flags.c_contiguous:
            return self._attach(x, out)
        return lambda: self(x, out)

    def native(self, x: np.ndarray, out: np.ndarray) -> Entry | None:
        """The layer on ``x`` and ``out`` as a native entry; None where it has none (the NumPy route), or where
        ``x`` or ``out`` is not C-ordered uint8 or they overlap (the runner copies those per run)."""
        if self._native is None or not (_bytes_in_place(x) and _bytes_in_place(out)) or np.may_share_memory(x, out):
            return None
        return self._native(x, out)


def _bytes_in_place(a: np.ndarray) -> bool:
    return a.dtype == np.uint8 and a.flags.c_contiguous


def contiguous(out: np.ndarray, fill: Callable[[np.ndarray], None]) -> None:
    """``fill`` ``out``, through a C-ordered copy when ``out`` is a strided view (the engine writes flat)."""
    if out.flags.c_contiguous:
        fill(out)
        return
    target = np.empty(out.shape, out.dtype)
    fill(target)
    out[...] = target


def _engine_isa(isa: str | None, k_out: int) -> str | None:
    """The instruction set the engine runs a layer of ``k_out`` output channels on, or None for the NumPy route."""
    chosen = isa_module.for_layer(isa, k_out)
    return None if chosen == "generic" else chosen


def prepare_conv(w: np.ndarray, bias: np.ndarray | None, x_shape: tuple[int, ...], out_shape: tuple[int, ...],
                 pads: tuple[int, int, int, int], strides: tuple[int, int], activation: int, quant_in: Quant,
                 quant_w: Quant, quant_out: Quant, isa: str | None = None) -> Prepared:
    """``run(x, out)`` for a uint8 CONV_2D: ``x`` [N, H, W, C], ``w`` [K, KY, KX, C], ``out`` [N, OH, OW, K];
    ``pads`` (left, right, top, bottom), ``strides`` (width, height); ``isa`` forces an instruction set."""
    chosen = _engine_isa(isa, w.shape[0])
    if chosen is None or 0 in out_shape:
        w, bias = np.array(w), None if bias is None else np.array(bias)

        def numpy_route(x: np.ndarray, out: np.ndarray) -> None:
            reference.conv2d(x, w, bias, out, pads, strides, activation, quant_in, quant_w, quant_out)
        return Prepared(numpy_route)
    if tuple(x_shape[:1]) + tuple(x_shape[3:]) != (out_shape[0], w.shape[3]):
        raise ValueError(f"input shape {list(x_shape)} does not fit the filter {list(w.shape)} and the output "
                         f"{list(out_shape)}")
    return _engine(w, bias, out_shape, pads, strides, activation, quant_in, quant_w, quant_out, chosen)


def prepare_conv_per_channel(w: np.ndarray, bias: np.ndarray | None, x_shape: tuple[int, ...],
                             out_shape: tuple[int, ...], pads: tuple[int, int, int, int], strides: tuple[int, int],
                             activation: int, quant_in: Quant, scales: np.ndarray, quant_out: Quant,
                             isa: str | None = None) -> Prepared:
    """:func:`prepare_conv` with an int8 filter ``w`` of zero point 0 and a scale per output channel
    (``scales``, K of them): NNAPI's TENSOR_QUANT8_SYMM_PER_CHANNEL filter."""
    chosen = _engine_isa(isa, w.shape[0])
    if chosen is None or 0 in out_shape:
        w, bias, scales = np.array(w), None if bias is None else np.array(bias), np.array(scales)

        def numpy_route(x: np.ndarray, out: np.ndarray) -> None:
            reference.conv2d_per_channel(x, w, bias, out, pads, strides, 0, activation, quant_in, scales, quant_out)
        return Prepared(numpy_route)
    if tuple(x_shape[:1]) + tuple(x_shape[3:]) != (out_shape[0], w.shape[3]):
        raise ValueError(f"input shape {list(x_shape)} does not fit the filter {list(w.shape)} and the output "
                         f"{list(out_shape)}")
    return _engine(w, bias, out_shape, pads, strides, activation, quant_in, None, quant_out, chosen, scales)


def prepare_fully_connected(w: np.ndarray, bias: np.ndarray | None, batch: int, activation: int, quant_in: Quant,
                            quant_w: Quant, quant_out: Quant, isa: str | None = None) -> Prepared:
    """``run(x, out)`` for a uint8 FULLY_CONNECTED: ``x`` of ``batch * input_size`` values, ``w`` [units,
    input_size], ``out`` [batch, units]: a 1x1 convolution of ``batch`` 1x1 images."""
    units, size = w.shape
    chosen = _engine_isa(isa, units)
    if chosen is None or batch * units == 0:
        w, bias = np.array(w), None if bias is None else np.array(bias)

        def numpy_route(x: np.ndarray, out: np.ndarray) -> None:
            reference.fully_connected(x, w, bias, out, activation, quant_in, quant_w, quant_out)
        return Prepared(numpy_route)
    conv = _engine(w.reshape(units, 1, 1, size), bias, (batch, 1, 1, units), (0, 0, 0, 0),
                   (1, 1), activation, quant_in, quant_w, quant_out, chosen)

    def run(x: np.ndarray, out: np.ndarray) -> None:
        conv(x.reshape(batch, 1, 1, size), out.reshape(batch, 1, 1, units))

    def native(x: np.ndarray, out: np.ndarray) -> Entry | None:
        return conv.native(x.reshape(batch, 1, 1, size), out.reshape(batch, 1, 1, units))
    return Prepared(run, None, native)
