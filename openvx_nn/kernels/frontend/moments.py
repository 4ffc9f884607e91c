"""Normalisations of float tensors by statistics over chosen axes: mean-variance
normalisation (MVN, instance norm, layer norm), L2 normalisation and log-softmax.

Axes are OpenVX axes; statistics are float64 means over exactly those axes,
the variance is the mean squared deviation (biased), the result is stored as
float32 once. ``gamma``/``beta`` (optional) broadcast OpenVX-order against the input.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numba
import numpy as np

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from ..support.lane_reduction import lane_reduction, plus, squared_deviation
from ..support.vector_width import wide_vectors
from . import float_sharing
from .float_sharing import Rows
from .float_softmax import row_sum

_MODES = {"center": 0, "standardize": 1, "l2": 2}


_squares8 = lane_reduction(squared_deviation, plus, "squares")


@jit.inlined
def _row_squares(row, n, mean):
    """The float64 sum of ``(row[i] - mean)**2`` over ``row[:n]`` in 32 partial sums (as ``row_sum``)."""
    return _squares8(row, n, 0.0, mean)


@jit.kernel(error_model="numpy")
def _normalize_rows(x, out, gamma, beta, mode, epsilon, scaled, shifted, r0, r1):
    """Rows ``[r0, r1)`` of ``[rows, n]`` views (``gamma`` and ``beta`` may be one row, every row's): float64 mean (and mean squared deviation, or sum of squares) over
    each row, each sum in 32 partial sums (vectorized); then ``(x - mean) * inv`` (``mean`` 0 for L2, ``inv``
    1 for centring: both exact), scaled, shifted and stored as float32 once."""
    wide_vectors()
    n = x.shape[1]
    for r in range(r0, r1):
        row, o = native.row_of(x, r), native.row_of(out, r)
        if mode == 2:
            mean, inv = 0.0, 1.0 / np.sqrt(_row_squares(row, n, 0.0) + epsilon)
        else:
            mean = row_sum(row, n) / n
            inv = 1.0 / np.sqrt(_row_squares(row, n, mean) / n + epsilon) if mode == 1 else 1.0
        g, b = native.row_of(gamma, min(r, gamma.shape[0] - 1)), native.row_of(beta, min(r, beta.shape[0] - 1))
        if scaled and shifted:
            for i in range(n):
                o[i] = ((np.float64(row[i]) - mean) * inv) * np.float64(g[i]) + np.float64(b[i])
        elif scaled:
            for i in range(n):
                o[i] = ((np.float64(row[i]) - mean) * inv) * np.float64(g[i])
        elif shifted:
            for i in range(n):
                o[i] = (np.float64(row[i]) - mean) * inv + np.float64(b[i])
        else:
            for i in range(n):
                o[i] = (np.float64(row[i]) - mean) * inv


_RUN_CHUNKS = chunk_driver(_normalize_rows)


@jit.kernel(error_model="numpy")
def _normalize_shared(x, out, gamma, beta, mode, epsilon, scaled, shifted, n_rows, n_chunks, counters, wait):
    _RUN_CHUNKS((x, out, gamma, beta, mode, epsilon, scaled, shifted), n_rows, n_chunks, counters, wait)


def _as_rows(a: np.ndarray, order: list[int], rows: int, n: int) -> np.ndarray | None:
    """``a`` with axes in ``order`` as a ``[rows, n]`` view, or None when that needs a copy."""
    view = a.transpose(order).view()
    try:
        view.shape = (rows, n)
    except AttributeError:
        return None
    return view


_KERNEL_TYPES = (np.float32, np.float64)
"""What the kernel reads and writes; other operands (float16) go through float64 buffers (exact widening, and
one rounding from float64 for an output)."""


def _rows_of(a: np.ndarray, order: list[int], rows: int, n: int) -> tuple[np.ndarray, Callable | None]:
    """(a ``[rows, n]`` array holding ``a``'s values, the copy that refreshes it per call or None)."""
    view = _as_rows(a, order, rows, n) if a.dtype in _KERNEL_TYPES else None
    if view is not None:
        return view, None
    buffer = np.empty(a.transpose(order).shape, a.dtype if a.dtype in _KERNEL_TYPES else np.float64)

    def copy() -> None:
        buffer[...] = a.transpose(order)
    return buffer.reshape(rows, n), copy


_TYPES: dict[tuple, tuple] = {}


def _types_of(args: tuple) -> tuple:
    """The numba types of ``args``, one tuple object per distinct signature (``float_sharing.compiled`` finds
    compiled functions by the tuple's identity)."""
    found = tuple(numba.typeof(a) for a in args)
    return _TYPES.setdefault(found, found)


class _Bound:
    """A normalization's operands as ``[rows, n]`` arrays, the copies some of them need, and the row sharing."""

    def __init__(self, x, out, axes, mode, epsilon, gamma, beta):
        axes = sorted({int(a) % x.ndim for a in axes})
        # the other axes by decreasing stride (rows in memory order), the normalized ones in order: for a tensor
        # normalized over its fastest axes, both merge into one axis each without a copy
        others = sorted((i for i in range(x.ndim) if i not in axes), key=lambda i: -abs(x.strides[i]))
        order = others + sorted(axes, key=lambda i: -abs(x.strides[i]))
        n = int(np.prod([x.shape[a] for a in axes]))
        rows = x.size // n if n else 0
        xr, x_copy = _rows_of(x, order, rows, n)
        outr = _as_rows(out, order, rows, n) if out.dtype in _KERNEL_TYPES else None
        self.out_copy = None
        if outr is None:
            buffer = np.empty(out.transpose(order).shape, out.dtype if out.dtype in _KERNEL_TYPES else np.float64)
            outr = buffer.reshape(rows, n)
            self.out_copy = lambda: out.transpose(order).__setitem__(Ellipsis, buffer)
        if x_copy is None and np.may_share_memory(xr, outr) and xr.__array_interface__ != outr.__array_interface__:
            apart = np.empty(xr.shape, xr.dtype)  # an output overlapping the input otherwise than in place
            x_copy, source = (lambda: apart.__setitem__(Ellipsis, source)), xr
            xr = apart
        extras, self.copies = [], [x_copy]
        for meta in (gamma, beta):
            if meta is None:
                extras.append(np.ones((1, n), np.float32))  # not read
                continue
            full = np.broadcast_to(widen_view(meta, x.ndim), x.shape)
            found, copy = _rows_of(full, order, rows, n)
            if copy is None and found.strides[0] == 0:
                found = found[:1]  # the same values for every row (a layer normalization's): one row, contiguous
            extras.append(found)
            self.copies.append(copy)
        self.copies = [c for c in self.copies if c is not None]
        self.args = (xr, outr, extras[0], extras[1], _MODES[mode], float(epsilon), gamma is not None,
                     beta is not None)
        self.rows = Rows(_normalize_rows, _normalize_shared, self.args, _types_of(self.args), rows,
                         x.size * 8) if rows else None

    def __call__(self) -> None:
        for copy in self.copies:
            copy()
        if self.rows is not None:
            self.rows()
        if self.out_copy is not None:
            self.out_copy()


def widen_view(a, ndim: int) -> np.ndarray:
    """``a`` (array or scalar) with trailing length-1 axes up to ``ndim``, its dtype kept (a view)."""
    a = np.asarray(a)
    return a.reshape(a.shape + (1,) * (ndim - a.ndim))


def bind_normalize(x: np.ndarray, out: np.ndarray, axes: Sequence[int], mode: str, epsilon: float,
                   gamma: np.ndarray | None = None, beta: np.ndarray | None = None) -> Callable[[], None]:
    """A no-argument :func:`normalize` of the arrays' current values, rows shared with the engine's helpers."""
    if mode not in _MODES:
        raise ValueError(f"mode {mode!r} is not one of {list(_MODES)}")
    return _Bound(x, out, axes, mode, epsilon, gamma, beta)


def normalize(x: np.ndarray, out: np.ndarray, axes: Sequence[int], mode: str, epsilon: float,
              gamma: np.ndarray | None = None, beta: np.ndarray | None = None) -> None:
    """mode 'center': x - mean; 'standardize': (x - mean) / sqrt(var + eps);
    'l2': x / sqrt(sum(x^2) + eps); then y = gamma * y + beta when given."""
    bind_normalize(x, out, axes, mode, epsilon, gamma, beta)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT, _GAMMA, _BETA, _COUNTERS = (native.ARRAY_WORDS * k for k in range(5))
_MODE, _EPSILON, _SCALED, _SHIFTED, _CONTIGUOUS, _MAILBOX, _TASK, _CHUNKS = range(
    _COUNTERS + native.ARRAY_WORDS, _COUNTERS + native.ARRAY_WORDS + 8)
COST_PER_VALUE = 8
"""A value's time in a convolution multiply-add's (the native entry shares rows above
``float_sharing.NATIVE_PARALLEL_WORK``): three vectorized passes over it."""


@jit.jitable
def _rows_of_block(x, out, gamma, beta, block, chunks, wait):
    """The rows of the normalization packed in ``block``: serially (``chunks`` 0), or in chunks claimed with the
    helpers."""
    mode, epsilon = block[_MODE], native.real(block, _EPSILON)
    scaled, shifted = block[_SCALED] != 0, block[_SHIFTED] != 0
    if chunks == 0:
        _normalize_rows(x, out, gamma, beta, mode, epsilon, scaled, shifted, 0, x.shape[0])
    else:
        counters = native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0]
        _normalize_shared(x, out, gamma, beta, mode, epsilon, scaled, shifted, x.shape[0], chunks, counters,
                          wait)


@functools.cache
def _bodies(x_type: type, gamma_type: type, beta_type: type) -> tuple[Callable, Callable]:
    """(entry, helper) bodies of the native entry for these operand types (``gang.shared_entry``)."""
    def lines(code, block, chunks, wait):
        if block[_CONTIGUOUS] != 0:  # contiguous rows: numba knows the layout, and the loops vectorize
            _rows_of_block(native.c_array(block, _X, x_type)[0, 0, 0, 0],
                           native.c_array(block, _OUT, np.float32)[0, 0, 0, 0],
                           native.c_array(block, _GAMMA, gamma_type)[0, 0, 0, 0],
                           native.c_array(block, _BETA, beta_type)[0, 0, 0, 0], block, chunks, wait)
        else:
            _rows_of_block(native.array(block, _X, x_type)[0, 0, 0, 0],
                           native.array(block, _OUT, np.float32)[0, 0, 0, 0],
                           native.array(block, _GAMMA, gamma_type)[0, 0, 0, 0],
                           native.array(block, _BETA, beta_type)[0, 0, 0, 0], block, chunks, wait)
    return gang.shared_entry(jit.kernel(lines, error_model="numpy"), gang.nothing_first,
                             (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _normalize_entry(x_type: type, gamma_type: type, beta_type: type) -> int:
    return jit.native(_bodies(x_type, gamma_type, beta_type)[0])


@native.factory
def _normalize_helper(x_type: type, gamma_type: type, beta_type: type) -> int:
    return jit.native(_bodies(x_type, gamma_type, beta_type)[1])


def native_normalize(x: np.ndarray, out: np.ndarray, axes: Sequence[int], mode: str, epsilon: float,
                     gamma: np.ndarray | None = None, beta: np.ndarray | None = None) -> native.Entry | None:
    """:func:`bind_normalize` as a native entry (rows shared with the gang's helpers when large); None where an
    operand needs a copy per call (its normalized axes not one run of constant stride after the others) or the
    output overlaps the input other than in place."""
    bound = bind_normalize(x, out, axes, mode, epsilon, gamma, beta)
    if bound.copies or bound.out_copy is not None or bound.rows is None or out.dtype != np.float32:
        return None
    xr, outr, g, b = bound.args[:4]
    lead = (1,) * (native.RANK - 2)
    task = gang.NativeTask(xr.shape[0], x.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = native.pack(*(a.reshape(lead + a.shape) for a in (xr, outr, g, b)),
                              task.counters.reshape((1,) * (native.RANK - 1) + (2,)), *bound.args[4:],
                              all(a.flags.c_contiguous for a in (xr, outr, g, b)), *task.words())
    types_ = (xr.dtype.type, g.dtype.type, b.dtype.type)
    return native.Entry(_normalize_entry(*types_), words,
                        keep + (bound,) + task.finish(_normalize_helper(*types_), words))


def log_softmax(x: np.ndarray, out: np.ndarray, axis: int, beta: float = 1.0) -> None:
    """out = beta * x - log(sum(exp(beta * x))) along ``axis`` (the maximum taken out of the sum first)."""
    v = np.asarray(x, np.float64) * np.float64(beta)
    top = np.max(v, axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[...] = v - (top + np.log(np.sum(np.exp(v - top), axis=axis, keepdims=True)))
