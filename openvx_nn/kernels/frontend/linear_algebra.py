"""Batched matrix products and table look-ups on float tensors in OpenVX axis order.

A matrix of CoreML shape [..., M, K] is held in OpenVX order as [K, M, ...]
(its transpose of every axis); the functions work on the reversed views.
"""
from __future__ import annotations

import numpy as np


def batched_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, transpose_a: bool, transpose_b: bool,
                   bias: np.ndarray | None = None) -> None:
    """CoreML order: out = a @ b (+ bias along the last axis), batch axes broadcasting."""
    ma = np.asarray(a, np.float64).T
    mb = np.asarray(b, np.float64).T
    if transpose_a:
        ma = np.swapaxes(ma, -1, -2)
    if transpose_b:
        mb = np.swapaxes(mb, -1, -2)
    if ma.ndim == 1:
        ma = ma[None, :]
    # contiguous operands: NumPy's matmul hands those to BLAS per matrix, and strided ones (a transposed view,
    # the reversed axes) to its own loop, 100x slower on a Transformer's [heads, 128, 64] products
    result = np.matmul(np.ascontiguousarray(ma), np.ascontiguousarray(mb))
    if bias is not None:
        result = result + np.asarray(bias, np.float64).reshape(-1)
    out.T[...] = result.reshape(out.T.shape)


def gather_rows(indices: np.ndarray, table: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> None:
    """Embedding: CoreML order out[..., c] = table[c, indices[...]] (+ bias[c]); ``table`` is
    [inputDim, outputChannels] in OpenVX order, ``out`` is [outputChannels, ...] flattened like
    ``indices``. Indices outside the table raise IndexError."""
    idx = np.asarray(indices).reshape(-1, order="F").astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= table.shape[0]):
        raise IndexError(f"embedding index out of range 0..{table.shape[0] - 1}")
    rows = np.asarray(table, np.float64)[idx, :].T  # [channels, positions]
    if bias is not None:
        rows = rows + np.asarray(bias, np.float64).reshape(-1, 1)
    out[...] = rows.reshape(out.shape, order="F")
