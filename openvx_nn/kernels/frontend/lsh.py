"""Locality-sensitive hashing projection (NNAPI LSH_PROJECTION), as Android's
and TensorFlow Lite's reference kernels compute it.

For hash function ``i`` and seed ``j`` the bit is the sign of
``sum_k weight[k] * h(seed_ij, row_k)`` (float64, weight 1 when absent), 1
when positive, where ``row_k`` is the bytes of the input's ``k``-th row along
dimension 0 and ``h`` is farmhash ``Fingerprint64`` of the float32 seed's 4
bytes followed by the row's bytes, read as a signed 64-bit integer.
"""
from __future__ import annotations

import numpy as np

from .farmhash import fingerprint64


def _signed(h: int) -> int:
    return h - (1 << 64) if h >> 63 else h


def _sign_bit(seed: np.float32, rows: list[bytes], weight: np.ndarray | None) -> int:
    key = np.float32(seed).tobytes()
    score = 0.0
    for k, row in enumerate(rows):
        value = float(_signed(fingerprint64(key + row)))
        score += value if weight is None else float(weight[k]) * value
    return 1 if score > 0 else 0


def lsh_projection(hashes: np.ndarray, x: np.ndarray, weight: np.ndarray | None, out: np.ndarray,
                   sparse: bool) -> None:
    """Sparse: ``out[i]`` packs the bits of hash function ``i`` (seed 0 most significant);
    dense: ``out[i * n_seeds + j]`` is the bit itself."""
    rows = [np.ascontiguousarray(x[k]).tobytes() for k in range(x.shape[0])]
    n_hash, n_seed = hashes.shape
    bits = np.array([[_sign_bit(hashes[i, j], rows, weight) for j in range(n_seed)] for i in range(n_hash)],
                    np.int64).reshape(n_hash, n_seed)
    if sparse:
        packed = np.zeros(n_hash, np.int64)
        for j in range(n_seed):
            packed = (packed << 1) | bits[:, j]
        out[...] = packed.astype(np.uint32).view(np.int32) if n_seed == 32 else packed.astype(np.int32)
    else:
        out[...] = bits.reshape(-1).astype(out.dtype)
