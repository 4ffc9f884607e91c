"""Deconvolution layer (OpenVX NN vxDeconvolutionLayer), computed as one plain correlation per output phase.

The seed's definition: upsample the input by inserting ``upscale - 1`` zeros
between samples, pad it with ``p' = K - pad - 1`` zeros on each side
(negative ``p'`` crops) and ``a`` more at the far end, then correlate with
stride 1 and no kernel flip::

    out[ox] = sum_m U[ox + m] * w[m],   U[t] = x[(t - p') / upscale]
              when t - p' >= 0, divisible by upscale and the index < W, else 0

(shown along x; y is the same). Most of ``U`` is zeros, so no ``U`` is
built. For the outputs of one phase ``ox = phase + upscale * q`` only the
taps ``m = m0 + upscale * i`` with ``m0 = (p' - phase) mod upscale`` meet
samples, and they read ``x[q + i + offset]`` with
``offset = (phase + m0 - p') / upscale`` (an exact division). Each phase is
therefore a stride-1 correlation of ``x`` with the sub-kernel
``w[m0::upscale]`` written to ``out[phase::upscale]``: ``correlation.py``
computes it, with the same exact integer arithmetic and bounds. A phase
whose sub-kernel is empty (``K < upscale``) holds the bias alone.

Two supersets of the text: the bias may be per output location
``(OW, OH, K)`` as in convolution (each phase reads its own slice of it); and
``bound_x``/``bound_y`` (default: the whole input) limit the samples read to
the first ``bound`` along that axis (the Khronos sample implementation counts
only samples whose zero-inserted position ``i * upscale`` is below ``W``; its
compatibility mode passes that count). The output size does not change.

float32 sums run over the taps that meet a real sample, in the order ``c``,
then ``my``, then ``mx`` ascending (the sub-kernel keeps the order of the
kernel's own indices); taps on inserted zeros or padding add nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import prepared
from ..engine.correlation import (
    Arithmetic,
    Route,
    Window,
    check_bias,
    check_dtypes,
    check_method,
    check_operands,
    detach_inputs,
    execute,
    prepare,
)
from ..support import native


def output_size(size: int, kernel: int, pad: int, upscale: int, extra: int) -> int:
    """The seed's ``(size - 1) * upscale - 2 * pad + kernel + extra``."""
    return (size - 1) * upscale - 2 * pad + kernel + extra


def _check(x, w, bias, out, pads, upscales, extras) -> None:
    check_operands(x, w)
    for name, value, least in (("pad_x", pads[0], 0), ("pad_y", pads[1], 0), ("upscale_x", upscales[0], 1),
                               ("upscale_y", upscales[1], 1), ("a_x", extras[0], 0), ("a_y", extras[1], 0)):
        if value < least:
            raise ValueError(f"{name} is {value}; expected at least {least}")
    expected = tuple(output_size(x.shape[i], w.shape[i], pads[i], upscales[i], extras[i]) for i in range(2))
    if out.ndim != x.ndim or out.shape != expected + (w.shape[3],) + x.shape[3:]:
        raise ValueError(f"output shape {out.shape} does not fit input {x.shape}, weights {w.shape}, pads {pads}, "
                         f"upscales {upscales} and a {extras}: expected {expected + (w.shape[3],) + x.shape[3:]}")
    check_bias(bias, w, out)


def phase_split(kernel: int, pad: int, upscale: int, size_out: int):
    """``(phase, m0, offset)`` of every output phase that has outputs (see the module doc)."""
    p = kernel - pad - 1
    for phase in range(min(upscale, size_out)):
        m0 = (p - phase) % upscale
        offset, remainder = divmod(phase + m0 - p, upscale)
        assert remainder == 0
        yield phase, m0, offset


@dataclass(frozen=True)
class DeconvolutionRoute:
    """One correlation route per output phase: ``(x slice start, y slice start, kernel, route)``."""

    upscales: tuple[int, int]
    phases: tuple[tuple[int, int, Route], ...]
    bounds: tuple[int | None, int | None] = (None, None)  # samples read along x and y (None: all)


def prepare_deconvolution(w: np.ndarray, has_bias: bool, x_shape: tuple[int, ...], out_shape: tuple[int, ...],
                          pads: tuple[int, int], upscales: tuple[int, int], arithmetic: Arithmetic,
                          method: str | None = None, isa: str | None = None,
                          bounds: tuple[int | None, int | None] = (None, None)) -> DeconvolutionRoute:
    """Split the layer into its phases (module doc) and decide each one's route once."""
    kx, ky = w.shape[0], w.shape[1]
    phases = []
    for phase_x, m0_x, offset_x in phase_split(kx, pads[0], upscales[0], out_shape[0]):
        for phase_y, m0_y, offset_y in phase_split(ky, pads[1], upscales[1], out_shape[1]):
            sub = w[m0_x::upscales[0], m0_y::upscales[1]]
            size = (len(range(phase_x, out_shape[0], upscales[0])), len(range(phase_y, out_shape[1], upscales[1])))
            route = prepare(sub, has_bias, x_shape, size + tuple(out_shape[2:]), Window(1, 1, 1, 1, offset_x, offset_y),
                            arithmetic, method, isa)
            phases.append((phase_x, phase_y, route))
    return DeconvolutionRoute(upscales, tuple(phases), bounds)


def _phase_operands(route: DeconvolutionRoute, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray):
    """``(phase route, x, bias, out)`` of every phase: the bounded input, the phase's slices of bias and out."""
    ux, uy = route.upscales
    x = x[:route.bounds[0], :route.bounds[1]]  # samples beyond the bound read as zeros, like padding
    for phase_x, phase_y, phase in route.phases:
        at = (slice(phase_x, None, ux), slice(phase_y, None, uy))
        yield phase, x, bias if bias is None or bias.ndim == 1 else bias[at], out[at]


def execute_deconvolution(route: DeconvolutionRoute, x: np.ndarray, bias: np.ndarray | None,
                          out: np.ndarray) -> None:
    """Run every phase of ``route`` into its slice of ``out`` (inputs must not overlap ``out``)."""
    for operands in _phase_operands(route, x, bias, out):
        execute(*operands)


def bind_deconvolution(route: DeconvolutionRoute, x: np.ndarray, bias: np.ndarray | None,
                       out: np.ndarray) -> prepared.Bound | None:
    """Every phase of ``route`` bound once (``prepared.bind``) as one native entry; None when a phase has
    none (the GEMM route) or there is nothing to compute. The inputs must not overlap ``out``."""
    bound = [prepared.bind(*operands) for operands in _phase_operands(route, x, bias, out)]
    if not bound or None in bound:
        return None
    return prepared.Bound(native.sequence([b.entry for b in bound]), any(b.shared for b in bound))


def deconvolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, pad_x: int, pad_y: int,
                  upscale_x: int, upscale_y: int, a_x: int, a_y: int, saturate: bool, nearest_even: bool, *,
                  fpp_x: int = 0, fpp_w: int = 0, fpp_b: int = 0, fpp_out: int = 0,
                  bound_x: int | None = None, bound_y: int | None = None, method: str | None = None,
                  isa: str | None = None) -> None:
    """The deconvolution layer into the preallocated ``out``, in place.

    Shapes in OpenVX order: ``x`` (W, H, C, *batch) with 0 to 3 batch dims,
    ``w`` (KX, KY, C, K), ``bias`` None, (K,) or (OW, OH, K), ``out`` (OW, OH, K, *batch)
    with ``OW = (W - 1) * upscale_x - 2 * pad_x + KX + a_x`` (same for y).
    One dtype for all; integers follow the same exact contract as
    ``convolution`` (exact sums, aligned bias, one rounding, saturate or
    wrap; ValueError beyond the 64-bit accumulator). ``method`` and ``isa`` as in
    ``convolution``.
    """
    check_dtypes(x, w, bias, out)
    pads, upscales, extras = (int(pad_x), int(pad_y)), (int(upscale_x), int(upscale_y)), (int(a_x), int(a_y))
    _check(x, w, bias, out, pads, upscales, extras)
    check_method(method)
    for name, bound in (("bound_x", bound_x), ("bound_y", bound_y)):
        if bound is not None and bound < 1:
            raise ValueError(f"{name} is {bound}; expected at least 1 (or None: the whole input)")
    x, w, bias = detach_inputs(out, x, w, bias)
    arithmetic = Arithmetic(bool(saturate), bool(nearest_even), int(fpp_x), int(fpp_w), int(fpp_b), int(fpp_out))
    if out.size == 0:
        return
    route = prepare_deconvolution(w, bias is not None, x.shape, out.shape, pads, upscales, arithmetic, method, isa,
                                  bounds=(bound_x, bound_y))
    execute_deconvolution(route, x, bias, out)
