"""Checks of the Pythonic API's arguments: each bad value raises ``TypeError``
or ``ValueError`` naming the argument before anything reaches the C API
(where a negative size would be an ``OverflowError`` of cffi and a float
shape would be silently truncated)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

if TYPE_CHECKING:
    from .tensor import Tensor

MAX_DIMS = 6
MAX_SIZE = 2**64 - 1

Constant = Union["Tensor", np.ndarray, Sequence]
"""A tensor argument that may also be given as raw values (an array or nested lists)."""


def _is_integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def integer(value: Any, name: str, minimum: int | None = None) -> int:
    """``value`` as an int; ``minimum`` (if given) is the smallest allowed."""
    if not _is_integer(value):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def pair(value: Any, name: str, minimum: int = 0) -> tuple[int, int]:
    """An integer or an (x, y) pair of integers, each at least ``minimum``."""
    if _is_integer(value):
        return (integer(value, name, minimum),) * 2
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) != 2:
        raise TypeError(f"{name} must be an integer or a pair of integers (x, y), got {value!r}")
    return integer(value[0], f"{name}[0]", minimum), integer(value[1], f"{name}[1]", minimum)


def real(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def shape(value: Any, name: str = "shape", minimum: int = 1) -> tuple[int, ...]:
    """A tensor shape: 1 to 6 integer dims, each at least ``minimum`` (0 = unknown, for virtual tensors)."""
    if _is_integer(value):
        value = (value,)
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of integers, got {value!r}")
    if not 1 <= len(value) <= MAX_DIMS:
        raise ValueError(f"{name} must have 1 to {MAX_DIMS} dims, got {len(value)}")
    dims = tuple(integer(d, f"{name}[{i}]", minimum) for i, d in enumerate(value))
    for i, d in enumerate(dims):
        if d > MAX_SIZE:  # cffi would say only "int too big to convert"
            raise ValueError(f"{name}[{i}] = {d} does not fit vx_size (at most 2**64 - 1)")
    return dims


def instance(value: Any, kind: type, name: str, optional: bool = False):
    """``value`` itself when it is a ``kind`` (or None and ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}{' or None' if optional else ''}, "
                        f"got {type(value).__name__}")
    return value


def constant_array(values: Any, name: str, dtype: np.dtype | None) -> np.ndarray:
    """An array or nested list as the raw values of a constant tensor of ``dtype``
    (None: the array's own).  Integers must fit the type; real numbers go into
    a float32 tensor only (a Qm.n tensor needs :func:`quantize` first)."""
    try:
        array = np.asarray(values)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"{name} is not a rectangular array: {err}") from None
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold numbers, got an array of {array.dtype}")
    if array.ndim == 0 or array.size == 0:
        raise ValueError(f"{name} must have at least one element in 1 to {MAX_DIMS} dims, got shape {array.shape}")
    target = np.dtype(dtype) if dtype is not None else array.dtype
    if array.dtype.kind == "f" and target.kind != "f":
        raise TypeError(f"{name} holds real numbers but the layer's tensors are {target}: quantize it first "
                        f"(openvx_nn.api.quantize({name}, np.{target}, fixed_point_position))")
    if target.kind in "iu" and array.dtype != target:
        info = np.iinfo(target)
        if array.min() < info.min or array.max() > info.max:
            raise ValueError(f"{name} has values outside {target}'s range {info.min}..{info.max}")
    return array.astype(target, copy=False)
