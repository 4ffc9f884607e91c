"""Convolution layer (OpenVX NN vxConvolutionLayer): a strided, dilated 2-D correlation over channels.

``out[ox, oy, k, *b] = bias + sum over c, my, mx of
x[ox*stride_x - pad_x + mx*(dilation_x + 1), oy*stride_y - pad_y + my*(dilation_y + 1), c, *b] * w[mx, my, c, k]``
with zeros outside the input. No kernel flip (the seed's formula is a
correlation). ``origin_x``/``origin_y`` (default 0) move every tap that many
inputs further: the Khronos sample implementation's dilated taps sit at
``mx*(dilation_x + 1) + dilation_x`` (its compatibility mode passes
``origin = dilation``). The arithmetic, exactness bounds and float32 summation order
are ``correlation.py``'s; the fast integer route is ``im2col.py``'s. A float32 layer with its taps
at origin 0 (any dilation) and a bias per map or none runs instead on the float engine the NNAPI and CoreML
layers share (``float_layers``: float32 sums in the order stated there) when ``method`` is not given,
unless ``$OPENVX_NN_F32_SUMS`` is ``float64``.
"""
from __future__ import annotations

import numpy as np

from ..engine.correlation import (
    Arithmetic,
    check_bias,
    check_dtypes,
    check_method,
    check_operands,
    convolution_window,
    correlate,
    detach_inputs,
)
from . import float_layers


def _check_shapes(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    check_operands(x, w)
    if out.ndim != x.ndim or out.shape[3:] != x.shape[3:] or out.shape[2] != w.shape[3]:
        raise ValueError(f"output shape {out.shape} does not fit input {x.shape} and weights {w.shape}: "
                         f"expected (OW, OH, {w.shape[3]}, *{x.shape[3:]})")
    check_bias(bias, w, out)


def convolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, pad_x: int, pad_y: int,
                stride_x: int, stride_y: int, dilation_x: int, dilation_y: int, saturate: bool,
                nearest_even: bool, *, fpp_x: int = 0, fpp_w: int = 0, fpp_b: int = 0, fpp_out: int = 0,
                origin_x: int = 0, origin_y: int = 0, method: str | None = None, isa: str | None = None) -> None:
    """The convolution layer into the preallocated ``out``, in place.

    Shapes in OpenVX order: ``x`` (W, H, C, *batch) with 0 to 3 batch dims,
    ``w`` (KX, KY, C, K), ``bias`` None, (K,) shared or (OW, OH, K) per
    location, ``out`` (OW, OH, K, *batch). Any output size is accepted:
    positions whose taps fall outside the padded input read zeros. One dtype
    for all (uint8, int8, int16 or float32); fixed point positions apply to
    integers. Integers: the exact sum plus the bias aligned to the finer
    scale, one rounding shift (``nearest_even``, else toward zero) to
    ``fpp_out``, then saturate (else wrap). ValueError when the worst case
    exceeds the exact 64-bit accumulator (see ``correlation.py``).
    ``method``: None picks the route; ``"simd"``, ``"gemm"`` or ``"direct"`` forces it, and
    ``isa`` an instruction set of ``isa.ISAS`` (for tests and benchmarks: results are identical).
    A graph node instead plans once (``correlation.prepare``) and runs ``correlation.execute``.
    """
    check_dtypes(x, w, bias, out)
    _check_shapes(x, w, bias, out)
    check_method(method)
    for name, value, least in (("pad_x", pad_x, 0), ("pad_y", pad_y, 0), ("stride_x", stride_x, 1),
                               ("stride_y", stride_y, 1), ("dilation_x", dilation_x, 0),
                               ("dilation_y", dilation_y, 0)):
        if value < least:
            raise ValueError(f"{name} is {value}; expected at least {least}")
    x, w, bias = detach_inputs(out, x, w, bias)
    if method is None and isa is None and float_layers.convolution_fits(
            x, w, None if bias is None else bias.shape, out.shape, (dilation_x, dilation_y), (origin_x, origin_y),
            out.dtype):
        float_layers.Convolution(w, (pad_x, pad_y), (stride_x, stride_y), (dilation_x, dilation_y)).bind(x, bias,
                                                                                                      out)()
        return
    window = convolution_window(pad_x, pad_y, stride_x, stride_y, dilation_x, dilation_y, origin_x, origin_y)
    arithmetic = Arithmetic(bool(saturate), bool(nearest_even), int(fpp_x), int(fpp_w), int(fpp_b), int(fpp_out))
    correlate(x, w, bias, out, window, arithmetic, method, isa)
