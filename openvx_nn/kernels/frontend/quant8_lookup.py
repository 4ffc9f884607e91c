"""NNAPI's element-wise functions on TENSOR_QUANT8_ASYMM as a 256-entry table, built once from the reference.

A uint8 input takes 256 values, so ``out = f(in)`` (LOGISTIC, TANH, RELU, RELU1, RELU6: dequantize, the
function in float64, requantize, ``elementwise_real.unary``) is a table the reference itself fills when the
layer is bound: the lookup gives the reference's bits for every input by construction, whatever the
function, and costs one load per value.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import types

from ..support import jit, native
from . import elementwise_real


def table(function: str, quant_in: tuple[float, int], quant_out: tuple[float, int]) -> np.ndarray:
    """``f`` of every raw uint8 input, as the reference computes it (uint8, 256 entries)."""
    out = np.empty(256, np.uint8)
    elementwise_real.unary(function, np.arange(256, dtype=np.uint8), out, quant_in, quant_out)
    return out


@jit.kernel
def _look_up(x, out, values):
    for i in range(x.size):
        out[i] = values[x[i]]


@functools.cache
def _compiled():
    u8 = types.Array(types.uint8, 1, "C")
    return jit.entry(_look_up, u8.copy(readonly=True), u8, u8.copy(readonly=True))


def bind_lookup(values: np.ndarray, x: np.ndarray, out: np.ndarray) -> Callable[[], None]:
    """A no-argument call ``out[...] = values[x]`` (``x`` and ``out`` of one shape, uint8)."""
    if x.flags.c_contiguous and out.flags.c_contiguous:
        flat_x, flat_out, kernel = x.reshape(-1), out.reshape(-1), _compiled()
        return lambda: kernel(flat_x, flat_out, values)

    def run() -> None:
        out[...] = values[x]
    return run


_X, _OUT, _VALUES = (native.ARRAY_WORDS * k for k in range(3))


@native.factory
def _lookup_entry() -> int:
    def entry(block):
        _look_up(native.c_array(block, _X, np.uint8)[0, 0, 0, 0, 0], native.c_array(block, _OUT, np.uint8)[0, 0, 0, 0, 0],
                 native.c_array(block, _VALUES, np.uint8)[0, 0, 0, 0, 0])
        return 0
    return jit.native(entry)


def native_lookup(values: np.ndarray, x: np.ndarray, out: np.ndarray) -> native.Entry | None:
    """:func:`bind_lookup` as a native entry; None unless ``x`` and ``out`` are C-ordered and apart."""
    if not (x.flags.c_contiguous and out.flags.c_contiguous) or np.may_share_memory(x, out):
        return None
    words, keep = native.pack(*(native.as6(a.reshape(-1)) for a in (x, out, values)))
    return native.Entry(_lookup_entry(), words, keep)
