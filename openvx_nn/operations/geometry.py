"""Output sizes of sliding-window layers, and the stride the seed infers from them.

The NN extension has no stride parameter: the application chooses the output
size and the stride is the smallest positive integer that reproduces it,
``out = round((in + 2*pad - k_eff) / stride) + 1`` with ``round`` the node's
down-scale rounding (floor or ceiling).
"""
from __future__ import annotations


def effective_kernel(size: int, dilation: int = 0) -> int:
    """A kernel of ``size`` taps with ``dilation`` zeros between taps spans this many inputs."""
    return size + (size - 1) * dilation


def output_size(extent: int, pad: int, kernel: int, stride: int, ceiling: bool) -> int:
    span = extent + 2 * pad - kernel
    return (-(-span // stride) if ceiling else span // stride) + 1


def infer_stride(extent: int, pad: int, kernel: int, out: int, ceiling: bool) -> int | None:
    """The smallest stride giving ``out`` outputs, or None when none does."""
    span = extent + 2 * pad - kernel
    if span < 0 or out < 1:
        return None
    for stride in range(1, span + 2):  # beyond span + 1 nothing changes
        if output_size(extent, pad, kernel, stride, ceiling) == out:
            return stride
    return None


def deconvolution_upscale(extent: int, pad: int, kernel: int, a: int, out: int) -> int | None:
    """The smallest upscale > a with ``out = (extent-1)*upscale - 2*pad + kernel + a``."""
    if extent == 1:
        return a + 1 if out == kernel - 2 * pad + a else None
    top = out + 2 * pad - kernel - a
    if top <= 0 or top % (extent - 1):
        return None
    upscale = top // (extent - 1)
    return upscale if upscale > a else None
