"""Fully connected layer (OpenVX NN vxFullyConnectedLayer).

Layout. ``x`` has dims ``[IFM, B]`` (the integrator flattens the seed's
``[W, H, C, *batch]`` layout to ``IFM = x + W * (y + H * c)`` and all batch
dims into ``B``), ``w`` has dims ``[IFM, OFM]``, ``bias`` ``[OFM]`` and
``out`` ``[OFM, B]``::

    out[i, b] = sum_j x[j, b] * w[j, i] + bias[i]

Each output is a dot product along ``j``. The kernels read both operands
along rows that are contiguous in ``j``: ``w`` in OpenVX order (dim 0
fastest) already is, as ``w.T``; any other weight layout is copied once per
call into that order, and so is ``x`` (it is small next to the weights).

Integers. Products of raw values are exact (at most ``2**30`` for 16-bit
data) and summed exactly in int64 at the scale ``2**-(p_x + p_w)``; the bias
is aligned to ``P = max(p_x + p_w, p_b)`` by an exact left shift (so is the
sum when ``p_b > p_x + p_w``); then one rounding right shift by
``P - p_out`` (to nearest with ties to even, or toward zero; a negative shift
is an exact left shift) and saturation (or wrap).

Why int64 is exact, and where it stops: the dispatcher takes the worst case
``IFM * max|x| * max|w| * 2**(P - p_x - p_w) + max|bias| * 2**(P - p_b)``
from the data types and refuses (ValueError) when it is not below ``2**62``,
the domain of the fixed-point helpers. For int16 data with ``p_b <= p_x + p_w``
that allows ``IFM`` up to ``2**32 - 1`` (``2**32 * 2**30 = 2**62``); a bias
at a finer position than the products lowers the limit by its shift (int16
inputs at position 0 with a Q0.15 bias: ``IFM < 2**17``). A 64-bit
accumulator is not unbounded: beyond that limit this kernel refuses rather
than wrap.

float32. Products formed in float64 (exact: 24 + 24 bits), summed in
float64 in order ``j = 0 .. IFM-1`` starting from 0.0, the bias added last
(not at all when there is none), and the result cast to float32 once, when
``$OPENVX_NN_F32_SUMS=float64`` (or ``parallel`` or ``isa`` is given); else
the layer runs on the float engine the NNAPI and CoreML layers share
(``float_layers``): float32 fused multiply-adds in the same order from +0.0,
the bias last. Either order is part of the contract so results are
reproducible bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..engine import isa as isa_module
from ..engine import prepared
from ..engine.correlation import Arithmetic, Route, Window, execute, prepare
from ..support import jit, native
from ..support.fixed_point import int_range, requantize
from ..support.jit import kernel
from ..support.layout import detach
from . import float_layers
from .matmul import PARALLEL_WORK

DTYPES = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.float32))


def _dot_int(xt, wt, bias, out, sum_shift, bias_shift, shift, nearest_even, saturate, lo, hi):
    n_out, n_in = wt.shape
    n_batch = xt.shape[0]
    for i in prange(n_out):
        row = wt[i]
        aligned_bias = np.int64(bias[i]) << bias_shift
        for b in range(n_batch):
            column = xt[b]
            acc = np.int64(0)
            for j in range(n_in):  # each product is exact in int32 (|x|, |w| <= 2**15): 8 multiplies a vector
                acc += np.int64(np.int32(column[j]) * np.int32(row[j]))
            out[i, b] = requantize((acc << sum_shift) + aligned_bias, shift, nearest_even, saturate, lo, hi)


def _dot_float(xt, wt, bias, out, has_bias):
    # Four rows at a time: four independent float64 chains, each still summed in order j = 0, 1, ...
    # (the last block repeats the last row where rows run out, and writes only the real ones).
    n_out, n_in = wt.shape
    n_batch = xt.shape[0]
    for block in prange((n_out + 3) // 4):
        i0 = block * 4
        last = n_out - 1
        row0, row1, row2, row3 = wt[i0], wt[min(i0 + 1, last)], wt[min(i0 + 2, last)], wt[min(i0 + 3, last)]
        for b in range(n_batch):
            column = xt[b]
            acc0 = acc1 = acc2 = acc3 = 0.0
            for j in range(n_in):
                v = np.float64(column[j])
                acc0 += v * np.float64(row0[j])
                acc1 += v * np.float64(row1[j])
                acc2 += v * np.float64(row2[j])
                acc3 += v * np.float64(row3[j])
            for k, acc in enumerate((acc0, acc1, acc2, acc3)):
                i = i0 + k
                if i <= last:
                    if has_bias:
                        acc += np.float64(bias[i])
                    out[i, b] = np.float32(acc)


_KERNELS = {(kind, parallel): kernel(function, parallel=parallel)
            for kind, function in (("int", _dot_int), ("float", _dot_float))
            for parallel in (False, True)}


def _max_abs(dtype: np.dtype) -> int:
    lo, hi = int_range(dtype)
    return max(-lo, hi)


def accumulator_bound(n_in: int, dtype: np.dtype, fpp_x: int, fpp_w: int, fpp_b: int) -> int:
    """The largest magnitude the int64 sum can reach before rounding (bias included, aligned)."""
    scale = max(fpp_x + fpp_w, fpp_b)
    m = _max_abs(dtype)
    return (n_in * m * m << (scale - fpp_x - fpp_w)) + (m << (scale - fpp_b))


def prepare_fully_connected(w: np.ndarray, has_bias: bool, n_batch: int, arithmetic: Arithmetic,
                            isa: str | None = None) -> Route | None:
    """The SIMD engine's route for integer weights ``w`` [IFM, OFM] (a 1x1 correlation of a 1x1 image
    with ``n_batch`` images), or None where the dot-product kernels here serve (float32, ``generic``, or, unless
    ``isa`` is given, a layer the SIMD tiles would mostly pad: :data:`PADDING_LIMIT`)."""
    chosen = isa_module.for_layer(isa, w.shape[1])
    if w.dtype.kind == "f" or chosen == "generic" or w.size == 0 or n_batch == 0:
        return None
    n_in, n_out = w.shape
    route = prepare(w.reshape(1, 1, n_in, n_out), has_bias, (1, 1, n_in, n_batch), (1, 1, n_out, n_batch),
                    Window(1, 1, 1, 1, 0, 0), arithmetic, "simd", chosen)
    return None if isa is None and _mostly_padding(route.simd, n_out, n_batch) else route


PADDING_LIMIT = 2
"""A SIMD tile computing this many times the layer's sums or more loses to the dot-product kernels (a classifier of
10 outputs on one image: 128 lanes of which 10 are used, the padded weights read every call; 1024 -> 10 in Q7.8
took 2.3 us on the tile, 0.5 on the dot products)."""


def _mostly_padding(plan, n_out: int, n_batch: int) -> bool:
    """Whether ``plan``'s tiles (rows of images by blocks of lanes) pad the ``n_out x n_batch`` outputs to
    :data:`PADDING_LIMIT` times their number or more."""
    block = plan.vecs * plan.lanes
    padded = -(-n_batch // plan.rows) * plan.rows * (-(-n_out // block)) * block
    return padded >= PADDING_LIMIT * n_out * n_batch


def execute_fully_connected(route: Route, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """Run a :func:`prepare_fully_connected` route: ``x`` [IFM, B], ``out`` [OFM, B] (shapes checked before)."""
    execute(route, detach(out, x)[None, None], None if bias is None else detach(out, bias), out[None, None])


def fully_connected(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, saturate: bool,
                    nearest_even: bool, *, fpp_x: int = 0, fpp_w: int = 0, fpp_b: int = 0, fpp_out: int = 0,
                    parallel: bool | None = None, isa: str | None = None) -> None:
    """``out[i, b] = sum_j x[j, b] * w[j, i] + bias[i]`` in place (layout and arithmetic: the module doc).

    ``x`` ``[IFM, B]``, ``w`` ``[IFM, OFM]``, ``bias`` ``[OFM]`` or None,
    ``out`` ``[OFM, B]``; one dtype for all (uint8, int8, int16, float32).
    Integers are exact up to one rounding (``nearest_even``, else toward
    zero) and one saturation (else wrap); float32 ignores the policies and
    positions. ``parallel``: None uses the thread pool from ``PARALLEL_WORK``
    multiply-adds on (when another thread's parallel kernel holds it, the
    serial kernel runs); the result is the same either way. ``isa``: the instruction set of
    integer layers (``isa.ISAS``; default ``isa.selected()``, whose SIMD engine ignores
    ``parallel`` and splits its work by ``OPENVX_NN_THREADS``). Raises ValueError
    for mismatched shapes or dtypes, and for an ``IFM`` whose exact sum could
    leave the int64 domain (``accumulator_bound >= 2**62``).
    """
    arrays = [x, w, out] + ([] if bias is None else [bias])
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1 or out.dtype not in DTYPES:
        raise ValueError(f"fully connected needs one dtype among {[str(d) for d in DTYPES]} for all tensors, "
                         f"got {[str(a.dtype) for a in arrays]}")
    if x.ndim != 2 or w.ndim != 2 or out.ndim != 2 or (bias is not None and bias.ndim != 1):
        raise ValueError(f"fully connected needs 2-D x, w and out and a 1-D bias, got ranks {[a.ndim for a in arrays]}")
    n_in, n_batch = x.shape
    n_out = w.shape[1]
    if w.shape[0] != n_in or out.shape != (n_out, n_batch) or (bias is not None and bias.shape != (n_out,)):
        raise ValueError(f"fully connected of x {x.shape} by w {w.shape} with bias "
                         f"{None if bias is None else bias.shape} cannot fill out {out.shape}; expected w "
                         f"({n_in}, OFM), bias (OFM,) and out (OFM, {n_batch})")
    if out.size == 0:
        return
    if isa is None and parallel is None and float_layers.fully_connected_fits(x, w, bias, out):
        x, w = detach(out, x), detach(out, w)
        float_layers.FullyConnected(w, n_batch).bind(x, None if bias is None else detach(out, bias), out)()
        return
    route = prepare_fully_connected(detach(out, w), bias is not None, n_batch,
                                    Arithmetic(bool(saturate), bool(nearest_even), fpp_x, fpp_w, fpp_b, fpp_out), isa)
    if route is not None:
        execute_fully_connected(route, x, bias, out)
        return
    # Rows contiguous along j for the dot products; copies only when the layout is not already so.
    xt = np.ascontiguousarray(detach(out, x).T)
    wt = np.ascontiguousarray(detach(out, w).T)
    has_bias = bias is not None
    if has_bias:
        b = detach(out, bias)
    else:
        b = np.broadcast_to(np.zeros((), out.dtype), (n_out,))
        fpp_b = fpp_x + fpp_w
    if parallel is None:
        parallel = n_out > 1 and n_out * n_in * n_batch >= PARALLEL_WORK
    arrays_t = (jit.array_in(xt, "C"), jit.array_in(wt, "C"), jit.array_in(b), jit.array_out(out))
    if out.dtype.kind == "f":
        with jit.thread_pool() as pool:
            jit.entry(_KERNELS["float", bool(parallel and pool)], *arrays_t, jit.BOOL)(xt, wt, b, out, has_bias)
        return
    bound = accumulator_bound(n_in, out.dtype, fpp_x, fpp_w, fpp_b)
    if bound >= 1 << 62:
        raise ValueError(f"fully connected with IFM={n_in} and these formats can exceed the exact int64 "
                         f"accumulator (worst case {bound} >= 2**62)")
    lo, hi = int_range(out.dtype)
    scale = max(fpp_x + fpp_w, fpp_b)
    with jit.thread_pool() as pool:
        function = jit.entry(_KERNELS["int", bool(parallel and pool)], *arrays_t,
                             jit.INT, jit.INT, jit.INT, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
        function(xt, wt, b, out, scale - fpp_x - fpp_w, scale - fpp_b, scale - fpp_out,
                 bool(nearest_even), bool(saturate), lo, hi)


# -- bound once (a native entry; see engine/prepared.py) --------------------------------------------------
def bind_fully_connected(route: Route | None, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                         out: np.ndarray, arithmetic: Arithmetic) -> prepared.Bound | None:
    """The layer bound once to its arrays (shapes as :func:`fully_connected`, checked before): the SIMD
    ``route`` through ``prepared.bind``, else (``route`` None) the dot-product kernels, serially. None when
    an input overlaps ``out`` or there is nothing to compute; ValueError beyond the exact accumulator."""
    if out.size == 0 or any(a is not None and np.may_share_memory(out, a) for a in (x, w, bias)):
        return None
    if route is not None:
        return prepared.bind(route, x[None, None], bias, out[None, None])
    n_in, n_batch = x.shape
    n_out = w.shape[1]
    xt = np.empty((n_batch, n_in), out.dtype)  # the rows the kernels read, copied from x per call
    wt = np.ascontiguousarray(w.T)
    b = np.broadcast_to(np.zeros((), out.dtype), (n_out,)) if bias is None else bias
    fpp_b = arithmetic.fpp_x + arithmetic.fpp_w if bias is None else arithmetic.fpp_b
    if out.dtype.kind == "f":
        scalars: tuple = (int(bias is not None),)
    else:
        bound = accumulator_bound(n_in, out.dtype, arithmetic.fpp_x, arithmetic.fpp_w, fpp_b)
        if bound >= 1 << 62:
            raise ValueError(f"fully connected with IFM={n_in} and these formats can exceed the exact int64 "
                             f"accumulator (worst case {bound} >= 2**62)")
        scale = max(arithmetic.fpp_x + arithmetic.fpp_w, fpp_b)
        scalars = (scale - arithmetic.fpp_x - arithmetic.fpp_w, scale - fpp_b, scale - arithmetic.fpp_out,
                   int(arithmetic.nearest_even), int(arithmetic.saturate), *int_range(out.dtype))
    six = (None,) * 4
    arrays = (x[six], xt[six], wt[six], b[(None,) * 5], out[six])
    shared = n_out > 1 and n_out * n_in * n_batch >= PARALLEL_WORK
    return prepared.Bound(native.Entry(_native_dot(out.dtype.kind == "f", out.dtype.type),
                                       *native.pack(*arrays, *scalars)), shared)


@jit.kernel
def _rows_of(x, xt):
    # xt[b, j] = x[j, b]: the layout the dot kernels read (np.ascontiguousarray(x.T) on the Python path)
    for b in range(xt.shape[0]):
        for j in range(xt.shape[1]):
            xt[b, j] = x[j, b]


@native.factory
def _native_dot(is_float: bool, dtype) -> int:
    dot = _KERNELS["float" if is_float else "int", False]
    if is_float:
        def entry(block):
            xt = native.c_array(block, 13, dtype)[0, 0, 0, 0]
            _rows_of(native.array(block, 0, dtype)[0, 0, 0, 0], xt)
            dot(xt, native.c_array(block, 26, dtype)[0, 0, 0, 0], native.array(block, 39, dtype)[0, 0, 0, 0, 0],
                native.array(block, 52, dtype)[0, 0, 0, 0], block[65] != 0)
            return 0
    else:
        def entry(block):
            xt = native.c_array(block, 13, dtype)[0, 0, 0, 0]
            _rows_of(native.array(block, 0, dtype)[0, 0, 0, 0], xt)
            dot(xt, native.c_array(block, 26, dtype)[0, 0, 0, 0], native.array(block, 39, dtype)[0, 0, 0, 0, 0],
                native.array(block, 52, dtype)[0, 0, 0, 0], block[65], block[66], block[67], block[68] != 0,
                block[69] != 0, block[70], block[71])
            return 0
    return jit.native(entry)
