"""The engine under convolution and deconvolution: a strided, dilated, shifted 2-D correlation, exact for integers.

Geometry. Output position ``(ox, oy)`` with tap ``(mx, my)`` reads::

    x[ox * stride_x + offset_x + mx * step_x,  oy * stride_y + offset_y + my * step_y,  c, *batch]

and a position outside ``x`` contributes no term (zero padding).
Convolution is ``offset = -pad``, ``step = dilation + 1``; deconvolution
runs one such correlation per output phase (``deconvolution.py``).

Integers (the contract's steps 1 to 5). With ``Mx``, ``Mw``, ``Mb`` the
largest magnitudes of the input, weight and bias types (255 for uint8, 128
for int8, 32768 for int16) and ``taps = KX * KY * C``:

- every product is exact and ``|sum| <= S = taps * Mx * Mw``;
- the sum and the bias are aligned to ``P = max(fpp_x + fpp_w, fpp_b)`` by
  exact left shifts, so ``|total| <= S * 2**(P - fpp_x - fpp_w) + Mb * 2**(P - fpp_b)``;
- ``fixed_point.requantize`` then rounds once and saturates or wraps. Its
  domain is ``|v| < 2**62``, so :func:`plan` refuses (ValueError) any call
  whose worst case reaches ``2**62``. That is the real limit of the 64-bit
  accumulator: for int16 data in one format it allows ``taps < 2**32``;
  with the bias 15 bits finer than the products, ``taps < 2**17``.

Two routes compute the same exact sums:

- ``"gemm"`` (``im2col.py``): float64 BLAS, exact while ``S <= 2**53``
  (int16: ``taps <= 2**23``; uint8: ``taps <= 2**53 / 65025``, about 1.4e11).
- ``"direct"``: numba loops with an int64 accumulator, exact under the
  ``2**62`` bound above; also the only route for float32.

float32. Each product is formed in float64 (exact: 24 + 24 significant
bits) and summed in float64 starting from +0.0 in the fixed order ``c``
ascending, then ``my``, then ``mx`` (``mx`` innermost), over the taps that
meet an input sample; then the bias (float64 of the float32 value) is added
and the sum cast to float32 once. A tap that meets padding adds nothing
(adding ``0 * w`` would change nothing for finite ``w`` anyway, since the
sum never holds -0.0, but would turn an infinite weight into NaN).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange, types

from ..support import jit
from ..support.fixed_point import int_range, requantize
from ..support.jit import kernel
from ..support.layout import detach
from . import blas_product
from . import isa as isa_module
from . import simd as engine
from .im2col import gemm_correlate

FLOAT_EXACT = 1 << 53  # integers up to here are exact in float64
INT_LIMIT = 1 << 62  # the domain of fixed_point.requantize
# Below this many multiply-adds the direct loops beat im2col + BLAS (and the thread pool is not woken).
GEMM_WORK = 1 << 16
PARALLEL_WORK = 1 << 20
METHODS = (None, "simd", "gemm", "direct")


@dataclass(frozen=True)
class Window:
    """Where tap ``(mx, my)`` of output ``(ox, oy)`` reads (see the module doc)."""

    stride_x: int
    stride_y: int
    step_x: int
    step_y: int
    offset_x: int
    offset_y: int

    def as_tuple(self) -> tuple[int, ...]:
        return (self.stride_x, self.stride_y, self.step_x, self.step_y, self.offset_x, self.offset_y)


@dataclass(frozen=True)
class Arithmetic:
    """Fixed point positions and the rounding (``nearest_even``, else to zero) and overflow policies."""

    saturate: bool
    nearest_even: bool
    fpp_x: int = 0
    fpp_w: int = 0
    fpp_b: int = 0
    fpp_out: int = 0


@dataclass(frozen=True)
class Plan:
    """The shifts of the contract's steps 3 and 4, and whether the float64 GEMM route is exact."""

    sum_shift: int
    bias_shift: int
    shift: int
    gemm_exact: bool


def max_abs(dtype: np.dtype) -> int:
    lo, hi = int_range(dtype)
    return max(-lo, hi)


def plan(dtype: np.dtype, taps: int, has_bias: bool, arithmetic: Arithmetic) -> Plan:
    """Shifts and routes for integer ``dtype``; ValueError when int64 cannot hold the worst case exactly."""
    products = arithmetic.fpp_x + arithmetic.fpp_w
    fpp_b = arithmetic.fpp_b if has_bias else products  # no bias: a zero at the products' scale
    scale = max(products, fpp_b)
    sum_shift, bias_shift = scale - products, scale - fpp_b
    largest = max_abs(dtype)
    raw_sum = taps * largest * largest
    worst = (raw_sum << sum_shift) + ((largest if has_bias else 0) << bias_shift)
    if worst >= INT_LIMIT:
        raise ValueError(f"{taps} products of {np.dtype(dtype)} values with fixed point positions "
                         f"x={arithmetic.fpp_x}, w={arithmetic.fpp_w}, bias={arithmetic.fpp_b} can reach {worst}, "
                         f"beyond the exact int64 accumulator (2**62)")
    return Plan(sum_shift, bias_shift, scale - arithmetic.fpp_out, raw_sum <= FLOAT_EXACT)


# ---- the direct route ---------------------------------------------------------------------------

def _direct_int(x, wt, bias, out, kx, ky, stride_x, stride_y, step_x, step_y, offset_x, offset_y,
                sum_shift, bias_shift, shift, nearest_even, saturate, lo, hi):
    width, height, channels = x.shape[0], x.shape[1], x.shape[2]
    ow, oh, k_out = out.shape[0], out.shape[1], out.shape[2]
    n1, n2, n3 = out.shape[3], out.shape[4], out.shape[5]
    for line in prange(oh * n1 * n2 * n3):
        oy = line % oh
        b = line // oh
        b1 = b % n1
        b2 = (b // n1) % n2
        b3 = b // (n1 * n2)
        acc = np.empty(k_out, np.int64)
        for ox in range(ow):
            acc[:] = 0
            for c in range(channels):
                for my in range(ky):
                    iy = oy * stride_y + offset_y + my * step_y
                    if iy < 0 or iy >= height:
                        continue
                    for mx in range(kx):
                        ix = ox * stride_x + offset_x + mx * step_x
                        if ix < 0 or ix >= width:
                            continue
                        v = np.int64(x[ix, iy, c, b1, b2, b3])
                        if v == 0:
                            continue
                        row = wt[mx + kx * (my + ky * c)]
                        for k in range(k_out):
                            acc[k] += v * row[k]
            for k in range(k_out):
                total = (acc[k] << sum_shift) + (np.int64(bias[ox, oy, k]) << bias_shift)
                out[ox, oy, k, b1, b2, b3] = requantize(total, shift, nearest_even, saturate, lo, hi)


def _direct_float(x, wt, bias, out, kx, ky, stride_x, stride_y, step_x, step_y, offset_x, offset_y):
    width, height, channels = x.shape[0], x.shape[1], x.shape[2]
    ow, oh, k_out = out.shape[0], out.shape[1], out.shape[2]
    n1, n2, n3 = out.shape[3], out.shape[4], out.shape[5]
    for line in prange(oh * n1 * n2 * n3):
        oy = line % oh
        b = line // oh
        b1 = b % n1
        b2 = (b // n1) % n2
        b3 = b // (n1 * n2)
        acc = np.empty(k_out, np.float64)
        for ox in range(ow):
            acc[:] = 0.0
            for c in range(channels):  # the documented order: c, then my, then mx
                for my in range(ky):
                    iy = oy * stride_y + offset_y + my * step_y
                    if iy < 0 or iy >= height:
                        continue
                    for mx in range(kx):
                        ix = ox * stride_x + offset_x + mx * step_x
                        if ix < 0 or ix >= width:
                            continue
                        v = np.float64(x[ix, iy, c, b1, b2, b3])
                        row = wt[mx + kx * (my + ky * c)]
                        for k in range(k_out):
                            acc[k] += v * row[k]
            for k in range(k_out):
                out[ox, oy, k, b1, b2, b3] = np.float32(acc[k] + np.float64(bias[ox, oy, k]))


_DIRECT = {(kind, parallel): kernel(function, parallel=parallel)
           for kind, function in (("int", _direct_int), ("float", _direct_float))
           for parallel in (False, True)}


def _tap_major(w: np.ndarray, dtype) -> np.ndarray:
    """``wt[j, k] = w[mx, my, c, k]`` with ``j = mx + KX * (my + KY * c)``, C-ordered."""
    kx, ky, channels, k_out = w.shape
    wt = np.empty((kx * ky * channels, k_out), dtype)
    wt.reshape(channels, ky, kx, k_out)[...] = w.transpose(2, 1, 0, 3)
    return wt


@functools.cache
def _compiled_direct(integer: bool, parallel: bool, x_dtype: np.dtype, bias_dtype: np.dtype, out_dtype: np.dtype):
    """The direct kernel for these dtypes (arrays 6-D/3-D of any layout, packed weights C-ordered)."""
    arrays = (types.Array(numba.from_dtype(x_dtype), 6, "A", readonly=True),
              types.Array(types.int64 if integer else types.float64, 2, "C", readonly=True),
              types.Array(numba.from_dtype(bias_dtype), 3, "A", readonly=True),
              types.Array(numba.from_dtype(out_dtype), 6, "A"))
    if integer:
        return jit.entry(_DIRECT["int", parallel], *arrays, *(jit.INT,) * 11, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
    return jit.entry(_DIRECT["float", parallel], *arrays, *(jit.INT,) * 8)


def _direct(x6, w, bias3, out6, window: Window, arithmetic: Arithmetic, steps: Plan | None) -> None:
    kx, ky = w.shape[0], w.shape[1]
    work = out6.size * kx * ky * w.shape[2]
    lines = out6.size // (out6.shape[0] * out6.shape[2])
    wanted = lines > 1 and work >= PARALLEL_WORK
    geometry = window.as_tuple()
    integer = steps is not None
    wt = _tap_major(w, np.int64 if integer else np.float64)
    with jit.thread_pool() as pool:
        function = _compiled_direct(integer, bool(wanted and pool), x6.dtype, bias3.dtype, out6.dtype)
        if not integer:
            function(x6, wt, bias3, out6, kx, ky, *geometry)
            return
        lo, hi = int_range(out6.dtype)
        function(x6, wt, bias3, out6, kx, ky, *geometry, steps.sum_shift, steps.bias_shift, steps.shift,
                 bool(arithmetic.nearest_even), bool(arithmetic.saturate), lo, hi)


# ---- entry ------------------------------------------------------------------------------------------

def as6(a: np.ndarray) -> np.ndarray:
    """``a`` with trailing length-1 axes up to rank 6 (a view)."""
    return a[(...,) + (None,) * (6 - a.ndim)]


def check_dtypes(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """All tensors share one dtype: uint8, int8, int16 or float32."""
    dtype = out.dtype
    if dtype not in (np.uint8, np.int8, np.int16, np.float32):
        raise ValueError(f"tensor dtype {dtype} is not supported; expected uint8, int8, int16 or float32")
    for name, a in (("input", x), ("weights", w), ("bias", bias)):
        if a is not None and a.dtype != dtype:
            raise ValueError(f"{name} dtype {a.dtype} differs from the output dtype {dtype}")


def check_operands(x: np.ndarray, w: np.ndarray) -> None:
    """An input (W, H, C, *batch) of 3 to 6 dims and weights (KX, KY, C, K) over its channels."""
    if not 3 <= x.ndim <= 6:
        raise ValueError(f"input of rank {x.ndim} is not supported; expected 3 to 6 dims (W, H, C, *batch)")
    if w.ndim != 4:
        raise ValueError(f"weights of rank {w.ndim}; expected 4 dims (KX, KY, C, K)")
    if w.shape[2] != x.shape[2]:
        raise ValueError(f"weights have {w.shape[2]} input channels (dim 2), the input has {x.shape[2]}")


def check_bias(bias: np.ndarray | None, w: np.ndarray, out: np.ndarray) -> None:
    """A bias shared by every location (K,) or one a location (OW, OH, K), or none."""
    if bias is not None and bias.shape not in ((w.shape[3],), out.shape[:3]):
        raise ValueError(f"bias shape {bias.shape}; expected ({w.shape[3]},) or {out.shape[:3]}")


def check_method(method: str | None) -> None:
    if method not in METHODS:
        raise ValueError(f"method {method!r} is not one of {METHODS}")


def detach_inputs(out, x, w, bias):
    """The inputs, copied where they share memory with ``out`` (which is written before they are all read)."""
    return detach(out, x), detach(out, w), (None if bias is None else detach(out, bias))


def convolution_window(pad_x: int, pad_y: int, stride_x: int, stride_y: int, dilation_x: int,
                       dilation_y: int, origin_x: int = 0, origin_y: int = 0) -> Window:
    """Where a convolution's taps read: the one place the layer's tap geometry is defined.

    Tap ``m`` of output ``o`` reads input ``o * stride - pad + origin + m * (dilation + 1)``. The
    standard's convention is ``origin = 0``; the Khronos sample implementation's compatibility mode
    passes ``origin = dilation`` (``operations/geometry.py`` decides which).
    """
    return Window(int(stride_x), int(stride_y), int(dilation_x) + 1, int(dilation_y) + 1,
                  int(origin_x) - int(pad_x), int(origin_y) - int(pad_y))


@dataclass(frozen=True)
class Route:
    """A correlation decided once (engine, instruction set, blocking, packed weights); see :func:`prepare`."""

    engine: str  # "simd", "gemm" or "direct"
    window: Window
    arithmetic: Arithmetic
    steps: Plan | None  # None for float32
    w: np.ndarray  # the weights as given (the direct route and the simd fallback read them)
    simd: engine.SimdPlan | None = None
    wm: np.ndarray | None = None  # float64 (K, taps) for the gemm route


def prepare(w: np.ndarray, has_bias: bool, x_shape: tuple[int, ...], out_shape: tuple[int, ...], window: Window,
            arithmetic: Arithmetic, method: str | None = None, isa: str | None = None) -> Route:
    """Choose the route of correlations of ``w`` from inputs ``x_shape`` into outputs ``out_shape``.

    ``method``: None picks (the SIMD engine when ``isa``, default ``isa.selected()``, is not
    ``"generic"``; else float64 GEMM for large exact cases; else the int64 loops); ``"simd"``,
    ``"gemm"`` or ``"direct"`` force one (ValueError when it does not apply). ValueError when the
    worst case exceeds the exact 64-bit accumulator.
    """
    check_method(method)
    w = np.ascontiguousarray(w) if w.size else w
    taps = w.shape[0] * w.shape[1] * w.shape[2]
    if w.dtype.kind == "f":
        if method in ("gemm", "simd"):
            raise ValueError(f"the {method} route is for integer tensors; float32 sums in a fixed order (direct)")
        return Route("direct", window, arithmetic, None, w)
    steps = plan(w.dtype, taps, has_bias, arithmetic)
    chosen = isa_module.for_layer(isa, w.shape[3])
    if method == "simd" and chosen == "generic":
        raise ValueError("the simd route needs an instruction set other than 'generic'")
    if method == "gemm" and not steps.gemm_exact:
        raise ValueError(f"{taps} products of {w.dtype} can exceed 2**53: the float64 GEMM route is not exact")
    outputs = int(np.prod(out_shape))
    if taps > 0 and outputs > 0 and (method == "simd" or (method is None and chosen != "generic")):
        return Route("simd", window, arithmetic, steps, w, simd=engine.prepare(w, window, x_shape, out_shape, chosen))
    if taps > 0 and (method == "gemm" or (method is None and steps.gemm_exact and outputs * taps >= GEMM_WORK)):
        return Route("gemm", window, arithmetic, steps, w, wm=blas_product.pack_weights(w))
    return Route("direct", window, arithmetic, steps, w)


def execute(route: Route, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """Fill ``out`` (OW, OH, K, *batch) from ``x`` (W, H, C, *batch) along ``route``, in place.

    ``bias``: None, ``(K,)`` or ``(OW, OH, K)``. Inputs must not overlap ``out``
    (:func:`detach_inputs`); shapes and dtypes are the caller's to check.
    """
    if out.size == 0:
        return
    x6, out6 = as6(x), as6(out)
    arithmetic, steps = route.arithmetic, route.steps
    if route.engine == "simd":
        per_image = bias  # None and (K,) as they are; (OW, OH, K) repeated for every image
        if bias is not None and bias.ndim == 3:
            per_image = np.broadcast_to(bias[..., None], bias.shape + (math.prod(out.shape[3:]),))
        if engine.correlate(route.simd, x6, per_image, out6, steps, arithmetic.saturate, arithmetic.nearest_even):
            return
    ow, oh, k_out = out.shape[:3]
    zero = np.zeros((), out.dtype)
    bias3 = np.broadcast_to(zero if bias is None else bias, (ow, oh, k_out))  # (K,) is shared: stride 0
    if route.engine == "simd":
        _direct(x6, route.w, bias3, out6, route.window, arithmetic, steps)  # this input allows no int32 block
    elif route.engine == "gemm":
        lo, hi = int_range(out.dtype)
        gemm_correlate(x6, route.w, bias3, out6, route.window.as_tuple(), steps.sum_shift, steps.bias_shift,
                       steps.shift, bool(arithmetic.nearest_even), bool(arithmetic.saturate), lo, hi, wm=route.wm)
    else:
        _direct(x6, route.w, bias3, out6, route.window, arithmetic, steps)


def correlate(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, window: Window,
              arithmetic: Arithmetic, method: str | None = None, isa: str | None = None) -> None:
    """:func:`prepare` then :func:`execute`, for one call."""
    if out.size == 0:
        return
    execute(prepare(w, bias is not None, x.shape, out.shape, window, arithmetic, method, isa), x, bias, out)
