"""Data movement by index values read at run time: gather, scatter (with a combining mode), a slice whose begin
is data, sequence reversal by lengths, and selection by a condition.

Arrays are row-major in meaning (the caller passes OpenVX tensors transposed) and axes count from the first.
Indices arrive as floats (CoreML blobs are float32): each must hold an integer, a negative one counts from the
end of its axis, and one outside ``-n .. n-1`` raises ``IndexError`` naming it (never a wrapped or clamped read).
A gather reads the data in place; a scatter addresses its copy of the container by the flat position of every
element the indices address (``positions``, sized like the updates).
"""
from __future__ import annotations

import numpy as np

FORMS = ("axis", "nd", "along_axis")
"""How indices address the data: ``axis`` numpy.take along an axis; ``nd`` the last index axis holds a point of
the data's leading axes; ``along_axis`` numpy.take_along_axis."""
MODES = ("update", "add", "sub", "mul", "div", "max", "min")
"""How a scatter combines an update with what the container holds (CoreML's ScatterMode, in its order)."""


def integers(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` (floats) as int64, each required to be an integer."""
    v = np.asarray(values, np.float64)
    whole = np.isfinite(v) & (np.rint(v) == v)
    if not whole.all():
        bad = v.reshape(-1)[np.argmin(whole.reshape(-1))]
        raise ValueError(f"{what} {bad!r} is not an integer")
    return v.astype(np.int64)


def wrapped(values: np.ndarray, n: int, what: str = "index") -> np.ndarray:
    """Integer ``values`` indexing an axis of ``n``: negative ones count from the end; outside -n..n-1 raises."""
    idx = integers(values, what)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"{what} {int(idx.reshape(-1)[np.argmax(bad.reshape(-1))])} is outside -{n}..{n - 1}")
    return np.where(idx < 0, idx + n, idx)


def _points(shape: tuple[int, ...], indices: np.ndarray) -> list[np.ndarray]:
    """The coordinates of the N-D form's points (the last index axis), each wrapped against its axis."""
    return [wrapped(indices[..., j], shape[j]) for j in range(indices.shape[-1])]


def positions(shape: tuple[int, ...], indices: np.ndarray, form: str, axis: int = 0) -> np.ndarray:
    """The flat row-major position in data of ``shape`` of each element the gather of ``indices`` yields,
    shaped like that gather's output (memory in proportion to that output, not to the data)."""
    if form == "axis":
        k = wrapped(indices, shape[axis])
        outer, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
        lead = np.arange(outer).reshape((outer,) + (1,) * k.ndim + (1,))
        tail = np.arange(inner).reshape((1,) + (1,) * k.ndim + (inner,))
        flat = (lead * shape[axis] + k.reshape((1,) + k.shape + (1,))) * inner + tail
        return flat.reshape(shape[:axis] + k.shape + shape[axis + 1:])
    if form == "along_axis":
        coords = list(np.indices(indices.shape, sparse=True))
        coords[axis] = wrapped(indices, shape[axis])
        return np.ravel_multi_index(np.broadcast_arrays(*coords), shape)
    if form == "nd":
        k = indices.shape[-1]
        block = np.ravel_multi_index(_points(shape, indices), shape[:k]) if k else np.zeros(indices.shape[:-1], int)
        rest = int(np.prod(shape[k:]))
        flat = block.reshape(block.shape + (1,)) * rest + np.arange(rest)
        return flat.reshape(indices.shape[:-1] + tuple(shape[k:]))
    raise ValueError(f"unknown index form {form!r} (expected one of {', '.join(FORMS)})")


def gather(data: np.ndarray, indices: np.ndarray, out: np.ndarray, form: str, axis: int = 0) -> None:
    """``out`` = the elements of ``data`` that ``indices`` address in ``form`` (read in place: no copy of the
    data, which may be a large table)."""
    if form == "axis":
        out[...] = np.take(data, wrapped(indices, data.shape[axis]), axis=axis)
    elif form == "along_axis":
        out[...] = np.take_along_axis(data, wrapped(indices, data.shape[axis]), axis=axis)
    elif form == "nd":
        k = indices.shape[-1]
        picked = data[tuple(_points(data.shape, indices))] if k else np.broadcast_to(
            data, indices.shape[:-1] + data.shape)
        out[...] = picked.reshape(out.shape)
    else:
        raise ValueError(f"unknown index form {form!r} (expected one of {', '.join(FORMS)})")


def scatter(container: np.ndarray, indices: np.ndarray, updates: np.ndarray, out: np.ndarray, form: str,
            mode: str, axis: int = 0) -> None:
    """``out`` = ``container`` with each element the gather of ``indices`` would read combined with its update
    (``mode``); updates apply in row-major order, so with ``update`` the last one to an element wins and the
    other modes apply every update in turn. Computed in float64, stored once."""
    where = positions(container.shape, indices, form, axis).reshape(-1)
    values = np.asarray(updates, np.float64).reshape(-1)
    if where.shape != values.shape:
        raise ValueError(f"{values.size} updates for {where.size} addressed elements")
    result = np.array(container, np.float64).reshape(-1)
    if mode == "update":
        # the last update to each element: its first occurrence in the reversed order
        _, first = np.unique(where[::-1], return_index=True)
        last = where.size - 1 - first
        result[where[last]] = values[last]
    else:
        ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                 "max": np.maximum, "min": np.minimum}.get(mode)
        if ufunc is None:
            raise ValueError(f"unknown scatter mode {mode!r} (expected one of {', '.join(MODES)})")
        with np.errstate(divide="ignore", invalid="ignore"):
            ufunc.at(result, where, values)
    out[...] = result.reshape(out.shape)


def slice_by_size(x: np.ndarray, begin: np.ndarray, out: np.ndarray, axis: int, size: int) -> None:
    """``out`` = ``size`` elements of ``x`` along ``axis`` from the run-time ``begin`` (its one value; negative
    counts from the end); a window leaving the axis raises ``IndexError``."""
    n = x.shape[axis]
    b = int(wrapped(np.asarray(begin).reshape(-1)[:1], n, "begin")[0])
    if b + size > n:
        raise IndexError(f"begin {b} with size {size} leaves the axis of {n}")
    index = [slice(None)] * x.ndim
    index[axis] = slice(b, b + size)
    out[...] = x[tuple(index)]


def reverse_sequences(x: np.ndarray, lengths: np.ndarray, out: np.ndarray, batch_axis: int, seq_axis: int) -> None:
    """``out`` = ``x`` with, for each position ``b`` along ``batch_axis``, the first ``lengths[b]`` elements along
    ``seq_axis`` reversed (the rest kept). A length outside 0..n raises ``ValueError``."""
    n = x.shape[seq_axis]
    counts = integers(np.asarray(lengths).reshape(-1), "sequence length")
    if counts.size != x.shape[batch_axis]:
        raise ValueError(f"{counts.size} sequence lengths for a batch of {x.shape[batch_axis]}")
    if ((counts < 0) | (counts > n)).any():
        raise ValueError(f"sequence lengths {counts.tolist()} must lie in 0..{n}")
    moved = np.moveaxis(x, (batch_axis, seq_axis), (0, 1))
    result = moved.copy()
    for b, length in enumerate(counts):
        result[b, :length] = moved[b, :length][::-1]
    out[...] = np.moveaxis(result, (0, 1), (batch_axis, seq_axis))


def select(condition: np.ndarray, x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """``out`` = ``x`` where ``condition`` is non-zero, else ``y`` (all three broadcast to ``out``)."""
    out[...] = np.where(np.asarray(condition) != 0, x, y)


def where_nonzero(x: np.ndarray, out: np.ndarray, count: np.ndarray) -> None:
    """The multi-indices of ``x``'s non-zero elements in row-major order, one row each, into the first rows of
    ``out`` (``[x.size, x.ndim]``; the rest zero); ``count[0]`` = how many rows (NaN counts as non-zero)."""
    found = np.argwhere(x != 0)
    out[...] = 0
    out[:len(found)] = found
    count[0] = len(found)
