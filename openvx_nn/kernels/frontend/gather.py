"""Data movement by index: concatenation, row lookups (plain and hashed) and
flat copies (reshape).  Raw values are copied unchanged; a concatenated input
whose quantization differs from the output's is rescaled once."""
from __future__ import annotations

import numpy as np

from .asymmetric import dequantize, store


def concatenate(inputs: list[np.ndarray], out: np.ndarray, axis: int, quants=None, quant_out=None) -> None:
    """``out`` = the inputs joined along ``axis``."""
    start = 0
    for k, x in enumerate(inputs):
        index = [slice(None)] * out.ndim
        index[axis] = slice(start, start + x.shape[axis])
        q = None if quants is None else quants[k]
        if q == quant_out:
            out[tuple(index)] = x
        else:
            store(dequantize(x, q), out[tuple(index)], quant_out)
        start += x.shape[axis]


def embedding_lookup(values: np.ndarray, lookups: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = values[lookups[i]]``; an index out of range raises ``IndexError``."""
    bad = (lookups < 0) | (lookups >= values.shape[0])
    if bad.any():
        i = int(np.argmax(bad))
        raise IndexError(f"lookup {i} is {int(lookups[i])}, outside the {values.shape[0]} rows of the values")
    out[...] = values[lookups]


def hashtable_lookup(lookups: np.ndarray, keys: np.ndarray, values: np.ndarray, out: np.ndarray,
                     hits: np.ndarray) -> None:
    """``out[i] = values[j]`` where ``keys[j] == lookups[i]`` (``hits[i] = 1``), else zeros and ``hits[i] = 0``."""
    position = np.searchsorted(keys, lookups)
    found = (position < keys.shape[0]) & (keys[np.minimum(position, keys.shape[0] - 1)] == lookups)
    out[...] = 0
    out[found] = values[position[found]]
    hits[...] = found.astype(hits.dtype)


def flat_copy(x: np.ndarray, out: np.ndarray) -> None:
    """``out`` takes ``x``'s elements in row-major order (a reshape)."""
    out[...] = np.reshape(x, out.shape)
