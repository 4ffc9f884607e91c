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
from numpy.lib.stride_tricks import as_strided

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

