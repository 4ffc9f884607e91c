"""Array plumbing for dispatchers: fixed-rank loop views and protection against overlapping outputs.

Kernels loop over six nested axes with the last one innermost. :func:`loop_views`
turns tensors of any rank (1 to 6), shape and strides into such views without
copying: inputs are broadcast to the output's shape, axes are ordered so the
output's smallest stride is innermost, axes that are contiguous with each
other in every array are merged, and the result is padded with leading
length-1 axes.
"""
from __future__ import annotations

import numpy as np
from numba.extending import overload
from numpy.lib.stride_tricks import as_strided

from . import jit
from .jit import kernel

RANK = 6


def loop_views(out: np.ndarray, *inputs: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """``(out6, *inputs6)``: 6-D views for element-wise loops, or None when ``out`` is empty."""
    if out.ndim > RANK:
        raise ValueError(f"tensor of rank {out.ndim} is not supported; expected at most {RANK}")
    if out.size == 0:
        return None
    arrays = [out, *(x if x.shape == out.shape else np.broadcast_to(x, out.shape) for x in inputs)]
    axes = sorted((i for i in range(out.ndim) if out.shape[i] != 1), key=lambda i: -abs(out.strides[i]))
    shape: list[int] = []
    strides: list[list[int]] = [[] for _ in arrays]
    for axis in axes:
        n = out.shape[axis]
        if shape and all(s[-1] == a.strides[axis] * n for s, a in zip(strides, arrays)):
            shape[-1] *= n
            for s, a in zip(strides, arrays):
                s[-1] = a.strides[axis]
        else:
            shape.append(n)
            for s, a in zip(strides, arrays):
                s.append(a.strides[axis])
    pad = RANK - len(shape)
    shape = [1] * pad + shape
    return tuple(as_strided(a, shape, [0] * pad + s, writeable=(k == 0))
                 for k, (a, s) in enumerate(zip(arrays, strides)))


def same_view(a: np.ndarray, b: np.ndarray) -> bool:
    """True when ``a`` and ``b`` address exactly the same elements in the same order."""
    return (a.shape == b.shape and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def detach(out: np.ndarray, x: np.ndarray, same_ok: bool = False) -> np.ndarray:
    """``x``, or a copy of it when writing ``out`` could change it before it is read.

    ``same_ok``: element-wise kernels read each element before writing it, so
    an input that is exactly the output view is safe.
    """
    if not np.may_share_memory(out, x):
        return x
    if same_ok and same_view(out, np.broadcast_to(x, out.shape)) and x.shape == out.shape:
        return x
    return x.copy()


@kernel
def row_index(t, n1, n2, n3, n4):
    """Indices (i0..i4) of row ``t`` of a 6-D loop whose innermost axis 5 is
    walked by the caller: how parallel kernels split rows across threads."""
    i4 = t % n4
    r = t // n4
    i3 = r % n3
    r //= n3
    i2 = r % n2
    r //= n2
    i1 = r % n1
    return r // n1, i1, i2, i3, i4



def read_at(inputs: tuple, at: tuple) -> tuple:
    """``(inputs[0][at], inputs[1][at], ...)``: the elements at index ``at`` of one to three arrays."""
    return tuple(a[at] for a in inputs)


@overload(read_at)
def _read_at(inputs, at):
    n = len(inputs)
    if n == 1:
        return lambda inputs, at: (inputs[0][at],)
    if n == 2:
        return lambda inputs, at: (inputs[0][at], inputs[1][at])
    if n == 3:
        return lambda inputs, at: (inputs[0][at], inputs[1][at], inputs[2][at])
    return None


def each_element(value):
    """A jit-callable ``run(out, inputs, params)``: ``out[at] = value(*inputs at at, *params)`` at every index ``at`` of
    the 6-D loop view ``out`` (``inputs``: a tuple of one to three views of its shape), axis 5 innermost: the
    element-wise kernels' loop, written once. ``value`` is bound by closure, so the kernel calling ``run`` calls it
    directly and stays cacheable (as ``engine.chunk_loop``). It takes the elements, not the arrays: handed arrays
    per element, numba counted references to them around each call (measured up to 70 times slower)."""

    @jit.jitable
    def run(out, inputs, params):
        n0, n1, n2, n3, n4, n5 = out.shape
        for i0 in range(n0):
            for i1 in range(n1):
                for i2 in range(n2):
                    for i3 in range(n3):
                        for i4 in range(n4):
                            for i5 in range(n5):
                                at = (i0, i1, i2, i3, i4, i5)
                                out[at] = value(*(read_at(inputs, at) + params))
    return run
