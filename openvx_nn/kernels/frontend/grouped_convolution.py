"""Float32 grouped convolution and transposed convolution (CoreML's ``nGroups``) as one kernel.

Layout. Tensors are in OpenVX order, ``x`` ``[W, H, C, *batch]`` (W contiguous); the kernels
work on the reversed view ``[batch, C, H, W]`` (NumPy NCHW). Weights come in CoreML order
reversed: convolution ``w`` ``[kw, kh, C/groups, O]`` (CoreML ``[O, C/groups, kh, kw]``),
transposed convolution ``[kw, kh, O/groups, C]`` (CoreML ``[C, O/groups, kh, kw]``).

Geometry. Convolution: ``out[n, o, oy, ox] = bias[o] + sum over c in o's group, ky, kx of
w[o, c, ky, kx] * x[n, c, oy*sy - top + ky*dy, ox*sx - left + kx*dx]``, zeros outside the input.
Transposed convolution: every input pixel ``(iy, ix)`` of channel ``c`` adds ``x * w[c, j]`` to
the output window at ``(iy*sy - top, ix*sx - left)`` of channel ``j`` of its group; outputs the
window never reaches hold the bias alone (CoreML's ``outputShape`` may ask for them).

Arithmetic. float32 products summed in float32 (CoreML computes in float32 or less), so results
agree with a float64 reference to about ``sqrt(taps) * 2**-24`` relative, not bit for bit.

Routes, chosen once by :func:`prepare` (the runner it returns then runs straight through; the numba
loops are in ``grouped_convolution_loops``):
- ``depthwise`` (one input channel per group, any channel multiplier): direct. Each input channel
  is copied once into row-phase planes of its padded self (a few KB, in cache), after which every
  tap is one contiguous multiply-add over the whole output plane (three taps per pass), vectorized
  along W whatever the plane's size; the padding costs nothing inside the loops.
- ``tiled`` (any other grouping, groups = 1 included, where numpy's BLAS is an OpenBLAS whose sgemm can be
  called from numba): ``chw_gemm``, one-thread sgemm calls on tiles of the product shared by both cores,
  the epilogue fused per tile;
- ``gemm`` (the same layers elsewhere, and the reference of ``tiled`` in the tests): per item and group, the
  packed weights ``[O/groups, C/groups*kh*kw]`` times the input's columns by NumPy's matmul; for a 1x1
  stride-1 unpadded window the columns are the input itself, else an im2col scratch made once.
- ``transposed``: per item and group, ``w^T [O/groups*kh*kw, C/groups]`` times the input by BLAS,
  then scattered into the output (col2im) on top of the bias.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..support import blas_threads, jit
from . import chw_convolution, chw_depthwise, chw_gemm
from .grouped_convolution_loops import ENTRY


@dataclass(frozen=True)
class Geometry:
    """Groups, (y, x) stride and dilation, and the (top, left) offset of the first window."""

    groups: int
    stride: tuple[int, int]
    dilation: tuple[int, int]
    offset: tuple[int, int]
    transposed: bool = False


PARALLEL_WORK = 1 << 22
"""Multiply-adds from which a call spreads over the thread pool (a launch costs tens of microseconds,
far more on a busy machine)."""


def _readonly(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


# -- shapes --------------------------------------------------------------------------------------
def _items(a: np.ndarray) -> tuple[int, ...]:
    """``a``'s NCHW shape with every batch dim folded into N."""
    return (int(np.prod(a.shape[3:], dtype=np.int64)),) + tuple(a.shape[2::-1])


def _nchw(a: np.ndarray) -> np.ndarray | None:
    """A C-contiguous NCHW view of OpenVX-order ``a``, or None when its memory is not laid out so."""
    t = a.T
    if not t.flags.c_contiguous:
        return None
    return t.reshape(_items(a))


def out_size(extent: int, kernel: int, stride: int, dilation: int, before: int, after: int,
             transposed: bool) -> int:
    """Output extent of one axis: ``after`` pads (convolution) or crops (transposed) that end."""
    if transposed:
        return (extent - 1) * stride + kernel - before - after
    return (extent + before + after - ((kernel - 1) * dilation + 1)) // stride + 1


def _check(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, geo: Geometry) -> None:
    arrays = {"x": x, "w": w, "out": out} | ({} if bias is None else {"bias": bias})
    for name, a in arrays.items():
        if a.dtype != np.float32:
            raise ValueError(f"{name} has dtype {a.dtype}; grouped convolution takes float32")
    if x.ndim < 3 or out.ndim != x.ndim or out.shape[3:] != x.shape[3:] or w.ndim != 4:
        raise ValueError(f"x {x.shape}, w {w.shape} and out {out.shape} must be [W, H, C, *batch], "
                         "[kw, kh, channels, count] and an output with the same batch dims")
    groups, c_in, c_out = geo.groups, x.shape[2], out.shape[2]
    if groups < 1 or c_in % groups or c_out % groups:
        raise ValueError(f"groups {groups} does not divide {c_in} input and {c_out} output channels")
    expected = (c_out // groups, c_in) if geo.transposed else (c_in // groups, c_out)
    if w.shape[2:] != expected:
        raise ValueError(f"weights {w.shape} do not fit {c_in} inputs, {c_out} outputs and {groups} groups: "
                         f"expected [kw, kh, {expected[0]}, {expected[1]}]")
    if bias is not None and bias.shape != (c_out,):
        raise ValueError(f"bias {bias.shape}; expected ({c_out},)")
    if min(geo.stride + geo.dilation) < 1 or min(geo.offset) < 0:
        raise ValueError(f"strides {geo.stride} and dilations {geo.dilation} must be at least 1, "
                         f"offsets {geo.offset} at least 0")
    if geo.transposed and geo.dilation != (1, 1):
        raise ValueError(f"transposed convolution with dilation {geo.dilation} is not supported")


# -- planning --------------------------------------------------------------------------------------
def prepare(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, geo: Geometry,
            clip: tuple[float, float] | None = None, residual: np.ndarray | None = None) -> Callable[[], None]:
    """A runner computing ``out`` from ``x`` (read at each call) with everything else resolved now.

    ``residual`` (the output's shape, read at each call) is added to every output and ``clip`` (low,
    high) then bounds it: a folded residual add and ReLU or ReLU6 (neither for a transposed
    convolution). The weights and bias are packed here (later changes to them are not seen); raises
    ValueError for dtypes other than float32 and for shapes or geometry that do not fit together.
    """
    _check(x, w, bias, out, geo)
    if (clip is not None or residual is not None) and geo.transposed:
        raise ValueError("clip and residual are not supported for a transposed convolution")
    if residual is not None and (residual.shape != out.shape or residual.dtype != np.float32):
        raise ValueError(f"residual {residual.shape} {residual.dtype} must be float32 of the output's shape {out.shape}")
    low, high = (float(np.float32(v)) for v in (clip or (-np.inf, np.inf)))
    n_items, c_in, height, width = _items(x)
    _, c_out, out_h, out_w = _items(out)
    b = _readonly(np.zeros(c_out, np.float32) if bias is None else np.ascontiguousarray(bias, np.float32))
    if out.size == 0:
        return lambda: None
    wt = w.T  # [O, C/g, kh, kw] (convolution) or [C, O/g, kh, kw] (transposed)
    if geo.transposed:
        run = _transposed_plan(wt, b, geo, n_items, c_in, height, width, c_out, out_h, out_w)
    elif wt.shape[1] == 1 and geo.groups > 1:
        run = _depthwise_plan(wt, b, geo, low, high)
    elif chw_convolution.fits(n_items, c_in, c_out, wt.shape[2:], (out_h, out_w), geo.groups):
        run = _chw_plan(wt, b, geo, low, high)
    elif chw_gemm.available():
        run = _tiled_plan(wt, b, geo, low, high)
    else:
        run = _gemm_plan(wt, b, geo, n_items, c_in, height, width, c_out, out_h, out_w, low, high)
    return _bound(run, x, out, residual)


_NO_RESIDUAL = _readonly(np.zeros((1, 1, 1, 1), np.float32))


def _bound(run: Callable, x: np.ndarray, out: np.ndarray, residual: np.ndarray | None) -> Callable[[], None]:
    """``run(x4, out4, residual4, add)`` on C-contiguous NCHW views; a copy in or a scratch out where the
    tensors are strided."""
    x4, out4 = _nchw(x), _nchw(out)
    x4 = None if x4 is None else _readonly(x4)
    r4 = _NO_RESIDUAL if residual is None else _nchw(residual)
    r4 = None if r4 is None else _readonly(r4)
    scratch = np.empty(_items(out), np.float32) if out4 is None else None

    def call() -> None:
        src = x4 if x4 is not None else _readonly(np.ascontiguousarray(x.T).reshape(_items(x)))
        res = r4 if r4 is not None else _readonly(np.ascontiguousarray(residual.T).reshape(_items(residual)))
        run(src, out4 if out4 is not None else scratch, res, residual is not None)
        if out4 is None:
            out.T[...] = scratch.reshape(out.T.shape)

    return call


def _depthwise_plan(wt, b, geo, low, high):
    kh, kw = wt.shape[2], wt.shape[3]
    w2 = _readonly(np.ascontiguousarray(wt[:, 0].reshape(wt.shape[0], kh * kw)))  # [O, taps]
    geometry = (kh, kw) + geo.stride + geo.dilation + geo.offset
    return _bind_once(lambda x4, out4, r4: chw_depthwise.bind(x4, w2, b, out4, r4, geometry, (low, high)))


def _bind_once(bind: Callable) -> Callable:
    """``run(x4, out4, r4, add)`` calling ``bind(x4, out4, r4 or None)()``, bound once to the layer's arrays
    (again only where ``_bound`` copies strided tensors, each call)."""
    bound = {}

    def run(x4, out4, r4, add):
        key = (id(x4), id(out4), id(r4))
        call = bound.get(key)
        if call is None:
            bound.clear()
            call = bound[key] = bind(x4, out4, r4 if add else None)
        call()

    return run


def _chw_plan(wt, b, geo, low, high):
    a = chw_convolution.pack(np.ascontiguousarray(wt), b)
    geometry = (wt.shape[2], wt.shape[3]) + geo.stride + geo.dilation + geo.offset
    return _bind_once(lambda x4, out4, r4: chw_convolution.bind(x4, a, out4, r4, geometry, (low, high)))


def _tiled_plan(wt, b, geo, low, high):
    packed = chw_gemm.pack(wt, geo.groups)
    geometry = (wt.shape[2], wt.shape[3]) + geo.stride + geo.dilation + geo.offset
    return _bind_once(lambda x4, out4, r4: chw_gemm.bind(x4, packed, b, out4, r4, geometry, (low, high)))


def _gemm_plan(wt, b, geo, n_items, c_in, height, width, c_out, out_h, out_w, low, high):
    groups = geo.groups
    cg, og = c_in // groups, c_out // groups
    kh, kw = wt.shape[2], wt.shape[3]
    packed = [np.ascontiguousarray(wt[g * og:(g + 1) * og].reshape(og, cg * kh * kw)) for g in range(groups)]
    (sy, sx), (dy, dx), (top, left) = geo.stride, geo.dilation, geo.offset
    direct = kh == kw == 1 and geo.stride == (1, 1) and top == left == 0 and (out_h, out_w) == (height, width)
    cols = None if direct else np.empty((cg * kh * kw, out_h * out_w), np.float32)
    parallel = cg * kh * kw * out_h * out_w >= PARALLEL_WORK

    def run(x4, out4, r4, add):
        flat_out = out4.reshape(n_items, c_out, out_h * out_w)
        flat_in = x4.reshape(n_items, c_in, height * width)
        with jit.thread_pool() as pool, blas_threads.single():
            im2col, epilogue = ENTRY["im2col"](parallel and pool), ENTRY["epilogue"](parallel and pool)
            for n in range(n_items):
                for g in range(groups):
                    if direct:
                        source = flat_in[n, g * cg:(g + 1) * cg]
                    else:
                        im2col(x4, n, g * cg, cols, kh, kw, sy, sx, dy, dx, top, left, out_h, out_w)
                        source = cols
                    np.matmul(packed[g], source, out=flat_out[n, g * og:(g + 1) * og])
                epilogue(out4, n, b, low, high, r4, add)

    return run


def _transposed_plan(wt, b, geo, n_items, c_in, height, width, c_out, out_h, out_w):
    groups = geo.groups
    cg, og = c_in // groups, c_out // groups
    kh, kw = wt.shape[2], wt.shape[3]
    # per group: [(j, ky, kx), c] = w[c, j, ky, kx]
    packed = [np.ascontiguousarray(wt[g * cg:(g + 1) * cg].reshape(cg, og * kh * kw).T) for g in range(groups)]
    cols = np.empty((og * kh * kw, height * width), np.float32)
    cols_in = _readonly(cols)
    (sy, sx), (top, left) = geo.stride, geo.offset
    parallel = og * kh * kw * height * width >= PARALLEL_WORK

    def run(x4, out4, r4, add):
        flat_in = x4.reshape(n_items, c_in, height * width)
        with jit.thread_pool() as pool, blas_threads.single():
            col2im = ENTRY["col2im"](parallel and pool)
            for n in range(n_items):
                for g in range(groups):
                    np.matmul(packed[g], flat_in[n, g * cg:(g + 1) * cg], out=cols)
                    col2im(cols_in, out4, n, g * og, b, kh, kw, sy, sx, top, left, height, width)

    return run


def grouped_convolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, geo: Geometry,
                        clip: tuple[float, float] | None = None, residual: np.ndarray | None = None) -> None:
    """One call of :func:`prepare`'s runner (the unbound path)."""
    prepare(x, w, bias, out, geo, clip, residual)()
