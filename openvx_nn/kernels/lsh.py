"""Locality-sensitive hashing projection (NNAPI LSH_PROJECTION).

For hash function ``i`` and seed ``j`` the bit is the sign of
``sum_k weight[k] * h(seed_ij, row_k)`` where ``row_k`` is the bytes of the
input's ``k``-th row along dimension 0 and ``h`` a 64-bit hash read as a
signed integer; the bit is 1 when the sum is positive.  ``h`` is FNV-1a 64
over the 4 bytes of the float32 seed followed by the row's bytes (the model
text names no hash function; see docs/nnapi.md).
"""
from __future__ import annotations

import numpy as np

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    """FNV-1a 64-bit hash of ``data`` as a signed 64-bit integer."""
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h - (1 << 64) if h >> 63 else h


def _sign_bit(seed: np.float32, rows: list[bytes], weight: np.ndarray | None) -> int:
    key = np.float32(seed).tobytes()
    score = 0.0
    for k, row in enumerate(rows):
        value = float(fnv1a64(key + row))
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
        out[...] = packed.astype(np.int32)
    else:
        out[...] = bits.reshape(-1).astype(out.dtype)
