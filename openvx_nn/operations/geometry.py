"""Output sizes of sliding-window layers, and the stride the seed infers from them.

The NN extension has no stride parameter: the application chooses the output
size and the stride is the smallest positive integer that reproduces it,
``out = round((in + 2*pad - k_eff) / stride) + 1`` with ``round`` the node's
down-scale rounding (floor or ceiling).

:class:`Conventions` holds the geometric differences between the standard's
text and the Khronos sample implementation (tap positions, input bounds),
decided once per node when its graph is verified.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.compat import sample_conventions
from ..core.enums import Status
from ..core.errors import VXError
from ..core.validation import Validation


def effective_kernel(size: int, dilation: int = 0) -> int:
    """A kernel of ``size`` taps with ``dilation`` zeros between taps spans this many inputs."""
    return size + (size - 1) * dilation


def output_size(extent: int, pad: int, kernel: int, stride: int, ceiling: bool) -> int:
    span = extent + 2 * pad - kernel
    return (-(-span // stride) if ceiling else span // stride) + 1


def infer_stride(extent: int, pad: int, kernel: int, out: int, ceiling: bool) -> int | None:
    """The smallest stride giving ``out`` outputs, or None when none does.

    Closed form, so that no padding or size an application passes can make verification slow: with
    ``span = extent + 2*pad - kernel`` and ``q = out - 1`` the stride ``s`` must satisfy
    ``floor(span / s) == q`` (``q <= span/s < q+1``: ``s`` in ``(span/(q+1), span/q]``) or
    ``ceil(span / s) == q`` (``q-1 < span/s <= q``: ``s`` in ``[span/q, span/(q-1))``).
    """
    span = extent + 2 * pad - kernel
    q = out - 1
    if span < 0 or q < 0:
        return None
    if ceiling:
        if q == 0:  # ceil(span/s) == 0 only for an empty span, with any stride
            return 1 if span == 0 else None
        stride = max(1, -(-span // q))
        return stride if -(-span // stride) == q else None
    if q == 0:  # floor(span/s) == 0 once the stride passes the span
        return span + 1
    stride = span // (q + 1) + 1
    return stride if span // stride == q else None


MAX_EXTENT = 2**31 - 1
"""The largest padded extent, kernel span and stride a windowed layer accepts: tensors this library
can hold are far smaller, and a bound keeps every position a kernel computes well inside int64."""


def fit_stride(v: Validation, index: int, axis: int, declared: int, extent: int, pad: int, span: int,
               ceiling: bool, window: str) -> tuple[int | None, int]:
    """(stride, output extent) of a window layer's ``axis``: the extent the application ``declared`` for output
    ``index`` (0: unknown, then stride 1's), and the stride that gives it from ``extent`` inputs padded by ``pad``
    on each side with windows ``span`` inputs wide (``window`` names them), or a failure of ``v`` when none does."""
    want = declared or output_size(extent, pad, span, 1, ceiling)
    stride = infer_stride(extent, pad, span, want, ceiling)
    if stride is None:
        v.fail(index, Status.VX_ERROR_INVALID_DIMENSION,
               f"no stride gives an output {'width' if axis == 0 else 'height'} of {want} from "
               f"{extent} inputs, padding {pad}, {window} (stride 1 gives "
               f"{output_size(extent, pad, span, 1, ceiling)})")
    return stride, want


def window_problem(extent: int, pad: int, kernel: int, stride: int = 1) -> str | None:
    """Why a window of ``kernel`` inputs at ``stride`` over ``extent`` inputs padded by ``pad`` on each side
    is out of range (a sentence naming the value), or None when it is fine."""
    for name, value in (("padding", pad), ("padded extent", extent + 2 * pad), ("kernel span", kernel),
                        ("stride", stride)):
        if value > MAX_EXTENT:
            return f"{name} {value} exceeds the largest supported extent {MAX_EXTENT} (2^31-1)"
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


@dataclass(frozen=True)
class Conventions:
    """Which convention a node follows where the standard's text and the Khronos sample implementation
    disagree on geometry; fixed when its graph is verified (``core/compat.py``, ``docs/decisions.md``)."""

    sample: bool = False

    @classmethod
    def at_verify(cls, v: Validation) -> Conventions:
        """The context's mode now (its attribute, else ``OPENVX_NN_COMPAT``)."""
        try:
            return cls(sample_conventions(v.node.context))
        except VXError as err:
            raise VXError(err.status, f"{v.node.describe()}: {err.message}", v.node) from None

    def tap_origin(self, dilation: int) -> int:
        """Where tap 0 of a dilated kernel sits past the window's start: the text puts tap ``m`` at
        ``m*(d+1)``, the sample at ``m*(d+1) + d``."""
        return dilation if self.sample else 0

    def deconvolution_bound(self, extent: int, upscale: int) -> int:
        """How many input samples (from the first) a deconvolution reads along one axis: all of them by the
        text; by the sample only those whose zero-inserted position ``i*upscale`` is below ``extent``."""
        return (extent - 1) // upscale + 1 if self.sample else extent
