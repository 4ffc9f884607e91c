"""Table look-ups on float tensors in OpenVX axis order (batched products: ``batched_product``)."""
from __future__ import annotations

import numpy as np


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
