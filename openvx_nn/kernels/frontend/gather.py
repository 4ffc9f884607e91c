"""Data movement by index: concatenation, row lookups (plain and hashed), gathers along one axis and
flat copies (reshape).  Raw values are copied unchanged; a concatenated input
whose quantization differs from the output's is rescaled once.

A gather along one axis is a compiled loop (``gather_axis``, with a native entry): the data seen as
``[outer, n, inner]``, the indices flattened, the output as ``[outer, indices, inner]``; an index outside
``0 .. n-1`` stops it before anything is written.
"""
from __future__ import annotations

import numpy as np

from ..support import jit, native
from . import indexing
from .asymmetric import dequantize, store

COMPILED = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8))
"""Element types the gather loop takes (float16 has no numba type)."""


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


@jit.kernel
def _gather_axis(x, indices, out):
    """-1 when ``out[o, j, i] = x[o, indices[j], i]`` is written, else the position of the first index outside
    ``0 .. n-1`` (nothing written)."""
    outer, n, inner = x.shape
    for j in range(indices.shape[0]):
        if indices[j] < 0 or indices[j] >= n:
            return j
    for o in range(outer):
        for j in range(indices.shape[0]):
            source = indices[j]
            for i in range(inner):
                out[o, j, i] = x[o, source, i]
    return -1


def _views(x: np.ndarray, indices: np.ndarray, out: np.ndarray, axis: int):
    """``x`` as ``[outer, n, inner]``, the indices as a vector, ``out`` as ``[outer, indices, inner]``: views, or
    None when one needs a copy or an operand is empty."""
    if not (x.size and indices.size and out.size):
        return None
    outer, inner = int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    shapes = ((x, (outer, x.shape[axis], inner)), (indices, (indices.size,)), (out, (outer, indices.size, inner)))
    views = []
    for array, shape in shapes:
        view = array.view()
        try:
            view.shape = shape  # raises instead of copying
        except (AttributeError, ValueError):
            return None
        views.append(view)
    return views


def gather_axis(x: np.ndarray, indices: np.ndarray, out: np.ndarray, axis: int) -> None:
    """``out`` = ``x`` indexed along ``axis`` by every index (int32, any shape: its dimensions replace the axis's);
    an index outside ``0 .. n-1`` raises ``IndexError`` naming it, nothing written."""
    views = _views(x, indices, out, axis) if np.dtype(x.dtype) in COMPILED else None
    if views is None:
        bad = (indices < 0) | (indices >= x.shape[axis])
        if bad.any():
            raise IndexError(f"index {int(indices[bad].reshape(-1)[0])} is outside 0..{x.shape[axis] - 1} "
                             f"(axis {axis} of the input)")
        indexing.gather(x, indices, out, "axis", axis)
        return
    xs, flat, os = views
    kernel = jit.entry(_gather_axis, jit.array_in(xs), jit.array_in(flat), jit.array_out(os))
    bad = kernel(xs, flat, os)
    if bad >= 0:
        raise IndexError(f"index {int(flat[bad])} is outside 0..{x.shape[axis] - 1} (axis {axis} of the input)")


@native.factory
def _native_gather(dtype: type) -> int:
    at = native.ARRAY_WORDS

    def entry(block):
        bad = _gather_axis(native.array(block, 0, dtype)[0, 0, 0], native.array(block, at, np.int32)[0, 0, 0, 0, 0],
                           native.array(block, 2 * at, dtype)[0, 0, 0])
        return 0 if bad < 0 else block[3 * at]
    return jit.native(entry)


def native_gather_axis(x: np.ndarray, indices: np.ndarray, out: np.ndarray, axis: int,
                       failure: int) -> native.Entry | None:
    """:func:`gather_axis` as a native entry returning ``failure`` (a negative status) at an index out of range,
    or None (an element type the loop does not take, an operand not viewable so, or an empty one)."""
    if np.dtype(x.dtype) not in COMPILED or indices.dtype != np.int32:
        return None
    views = _views(x, indices, out, axis)
    if views is None:
        return None
    xs, flat, os = views
    lead = (1, 1, 1)
    return native.Entry(_native_gather(x.dtype.type), *native.pack(xs.reshape(lead + xs.shape),
                                                                   flat.reshape((1,) * 5 + flat.shape),
                                                                   os.reshape(lead + os.shape), int(failure)))
