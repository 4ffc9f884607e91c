"""Float32 batched matrix products ``C = A @ B (+ bias)`` on the float engine's GEMM (``float_convolution``).

Each product of the batch is a fully connected layer of ``M`` rows: its ``A`` copied into a contiguous
``[M, K]`` scratch, its ``B`` packed into the engine's blocks of output columns (``pack_conv``'s layout:
``[blocks, 1, K, vectors, lanes]``, the last block padded with zeros), then the engine's tiles
(``float_convolution.fc_rows``) compute the rows with the bias in their epilogue. No BLAS runs, so no
BLAS thread pool competes with the engine's helpers; the products of a batch are shared with the helpers
(``float_sharing.Rows`` on the Python path, ``gang.shared_entry`` from a native plan).

Operands are 5-D views ``[B1, B2, B3, rows, columns]`` of any strides (stride 0 where a batch axis broadcasts,
the two last axes swapped where the layer transposes), so one loop serves every broadcast and transposition.
Sums are the engine's: float32 with fused multiply-adds in a fixed order (the fully connected layer's bound).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from .float_convolution import bias_or_zeros, block_shape, fc_loop, fc_rows, work_units
from .float_sharing import F32, NATIVE_PARALLEL_WORK, Rows

BATCH_AXES = 3
"""Batch axes one call takes; more are looped over in Python (no native entry)."""

_IN5 = types.Array(types.float32, 5, "A", readonly=True)
_PACKED = types.Array(types.float32, 6, "C")


@jit.kernel
def _products(a, b, bias, out, rows, packed, loop, panel, n_units, i0, i1):
    """Products ``[i0, i1)`` of the batch (item ``t`` at batch index ``(t // (n2 n3), t // n3 % n2, t % n3)``),
    each in its own scratch (``rows[t]``, ``packed[t]``), so threads can share the items."""
    _, n2, n3, m, n = out.shape
    k = a.shape[4]
    size = packed.shape[4] * packed.shape[5]
    for t in range(i0, i1):
        p, q, r = t // (n2 * n3), (t // n3) % n2, t % n3
        x = rows[t]
        source = a[p, q, r]
        if x.ctypes.data != source.ctypes.data:  # else ``rows`` is ``a`` itself (``Operands``): read in place
            for i in range(m):
                for j in range(k):
                    x[i, j] = source[i, j]
        w = packed[t]
        _pack(b[p, q, r], w, n, size)
        fc_rows(loop, x.reshape(1, 1, m, k), w, bias, out[p, q, r].reshape(1, 1, m, n), panel, n_units)


@jit.jitable
def _pack(right, w, n, size):
    """``right`` ``[K, N]`` (any strides) into the engine's blocks ``w`` ``[blocks, 1, K, vectors, lanes]``, each
    block's ``K`` rows of ``size`` columns flat. The loop runs along ``right``'s shorter stride (its rows when the
    product reads it plain, its columns when transposed, as ``Kᵀ`` in ``Q Kᵀ``), over plain 1-D slices; the
    padding of the last block is never written (zeros from ``Operands``)."""
    k = right.shape[0]
    flat = w.reshape(w.shape[0], k, size)
    along_rows = abs(right.strides[1]) <= abs(right.strides[0])
    for blk in range(w.shape[0]):
        c0 = blk * size
        width = min(size, n - c0)
        block = flat[blk]
        if along_rows:
            for kk in range(k):
                line, src = block[kk], right[kk, c0:c0 + width]
                for j in range(width):
                    line[j] = src[j]
        else:
            for j in range(width):
                src = right[:, c0 + j]
                for kk in range(k):
                    block[kk, j] = src[kk]


_RUN_CHUNKS = chunk_driver(_products)


@jit.kernel
def _products_shared(a, b, bias, out, rows, packed, loop, panel, n_units, n_items, n_chunks, counters, wait):
    _RUN_CHUNKS((a, b, bias, out, rows, packed, loop, panel, n_units), n_items, n_chunks, counters, wait)


_TYPES = (_IN5, _IN5, F32[1, False], F32[5, True], F32[3, True], _PACKED, jit.INT, jit.INT, jit.INT)


class Operands:
    """The views and scratch of one call: built once (at bind), read by the bound call and the native entry."""

    def __init__(self, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, out: np.ndarray):
        m, k = a.shape[-2:]
        n = b.shape[-1]
        shape = (1,) * (BATCH_AXES - (out.ndim - 2)) + out.shape[:-2]
        self.a = _readonly(spread(a, out.shape[:-2]).reshape(shape + (m, k)))
        self.b = _readonly(spread(b, out.shape[:-2]).reshape(shape + (k, n)))
        self.out = out.reshape(shape + (m, n))
        items = int(np.prod(shape))
        vecs, lanes = block_shape(n)
        blocks = -(-n // (vecs * lanes))
        # A left operand already [items, M, K] contiguous (no broadcast batch axis) is read in place: the kernel
        # copies nothing into it (it does when ``rows`` is a scratch of its own).
        in_place = a.size == items * m * k and a.flags.c_contiguous and a.flags.writeable and \
            not np.may_share_memory(a, out)
        self.rows = a.reshape(items, m, k) if in_place else np.zeros((items, m, k), np.float32)
        self.packed = np.zeros((items, blocks, 1, k, vecs, lanes), np.float32)
        self.bias = bias_or_zeros(None if bias is None else np.asarray(bias).reshape(-1), n)
        self.panel, self.units = work_units(self.packed[0], m)
        self.loop = fc_loop(self.packed[0], m)
        self.items, self.work = items, items * m * n * k

    def args(self) -> tuple:
        return (self.a, self.b, self.bias, self.out, self.rows, self.packed, self.loop, self.panel, self.units)


def spread(matrices: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``matrices`` ``[..., r, c]`` broadcast to ``batch + (r, c)`` (a view: stride 0 on broadcast axes)."""
    padded = matrices.reshape((1,) * (len(batch) + 2 - matrices.ndim) + matrices.shape)
    return np.broadcast_to(padded, tuple(batch) + matrices.shape[-2:])


def _readonly(view: np.ndarray) -> np.ndarray:
    view = view.view()
    view.flags.writeable = False
    return view


def _matrices(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_a: bool, transpose_b: bool):
    """CoreML-order views of OpenVX-order tensors: ``[..., M, K]``, ``[..., K, N]``, ``[..., M, N]``."""
    ma, mb = a.T, b.T
    if transpose_a:
        ma = np.swapaxes(ma, -1, -2)
    if transpose_b:
        mb = np.swapaxes(mb, -1, -2)
    return ma, mb, out.T


def _check(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    if not a.dtype == b.dtype == out.dtype == np.float32:
        raise ValueError(f"operands are {a.dtype}, {b.dtype} and {out.dtype}; expected float32")
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"cannot multiply [{list(a.shape)}] by [{list(b.shape)}]")
    if out.shape[-2:] != (a.shape[-2], b.shape[-1]):
        raise ValueError(f"output {list(out.shape)} does not hold the product of {list(a.shape)} and {list(b.shape)}")


def bind(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_a: bool, transpose_b: bool,
         bias: np.ndarray | None = None) -> Callable[[], None]:
    """A no-argument call computing, in CoreML order (``[..., M, K]`` held in OpenVX order as ``[K, M, ...]``),
    ``out = a @ b (+ bias along the last axis)`` from the arrays' current values, batch axes broadcasting."""
    ma, mb, mo = _matrices(a, b, out, transpose_a, transpose_b)
    _check(ma, mb, mo)
    target = mo if mo.flags.c_contiguous else np.empty(mo.shape, np.float32)
    batch = mo.shape[:-2]
    if len(batch) > BATCH_AXES:  # the leading axes in Python, each index's products in one call
        outer = batch[:len(batch) - BATCH_AXES]
        sa, sb = spread(ma, batch), spread(mb, batch)
        calls = [_bound(Operands(sa[i], sb[i], bias, target[i])) for i in np.ndindex(*outer)]

        def run() -> None:
            for one in calls:
                one()
    else:
        run = _bound(Operands(ma, mb, bias, target))
    if target is mo:
        return run

    def call() -> None:
        run()
        mo[...] = target
    return call


def _bound(operands: Operands) -> Callable[[], None]:
    return Rows(_products, _products_shared, operands.args(), _TYPES, operands.items, operands.work)


def batched_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_a: bool, transpose_b: bool,
                   bias: np.ndarray | None = None) -> None:
    """``bind(...)()``: one call."""
    bind(a, b, out, transpose_a, transpose_b, bias)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_A, _B, _BIAS, _OUT, _ROWS, _PACK, _COUNTERS = (k * native.ARRAY_WORDS for k in range(7))
_PANEL, _UNITS, _MAILBOX, _TASK, _CHUNKS, _LOOP = range(7 * native.ARRAY_WORDS, 7 * native.ARRAY_WORDS + 6)


@jit.kernel
def _block_items(code, block, chunks, wait):
    """Every product of the call packed in ``block``: serially (``chunks`` 0), or in ``chunks`` chunks of the
    batch claimed with the gang's helpers (``wait``: until every claimed one is done)."""
    out = native.c_array(block, _OUT, np.float32)[0]
    args = (native.array(block, _A, np.float32)[0], native.array(block, _B, np.float32)[0],
            native.c_array(block, _BIAS, np.float32)[0, 0, 0, 0, 0], out,
            native.c_array(block, _ROWS, np.float32)[0, 0, 0], native.c_array(block, _PACK, np.float32),
            block[_LOOP], block[_PANEL], block[_UNITS])
    n_items = out.shape[0] * out.shape[1] * out.shape[2]
    if chunks == 0:
        _products(*args, 0, n_items)
    else:
        _products_shared(*args, n_items, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(_block_items, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_entry, _helper = gang.makers(_BODIES, __name__)


def native_entry(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_a: bool, transpose_b: bool,
                 bias: np.ndarray | None = None) -> native.Entry | None:
    """:func:`bind` as a native entry (the products of a large batch shared with the gang's helpers); None where
    the output is not contiguous in CoreML order or the batch has more than ``BATCH_AXES`` axes."""
    ma, mb, mo = _matrices(a, b, out, transpose_a, transpose_b)
    _check(ma, mb, mo)
    if not mo.flags.c_contiguous or mo.ndim - 2 > BATCH_AXES or mo.size == 0:
        return None
    o = Operands(ma, mb, bias, mo)
    task = gang.NativeTask(o.items, o.work >= NATIVE_PARALLEL_WORK)
    words, keep = native.pack(o.a[None], o.b[None], _six(o.bias), o.out[None], _six(o.rows), o.packed,
                              _six(task.counters), o.panel, o.units, *task.words(), o.loop)
    return native.Entry(_entry(), words, keep + (o,) + task.finish(_helper(), words))


def _six(a: np.ndarray) -> np.ndarray:
    return a.reshape((1,) * (native.RANK - a.ndim) + a.shape)
