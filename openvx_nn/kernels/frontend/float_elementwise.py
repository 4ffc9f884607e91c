"""Fast float32 ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM and PRELU with NNAPI's broadcast and the fused activation
in one pass.

Both operands are seen as 4-D broadcast views of the output's shape (a stretched dimension has stride
0), so one loop nest serves every broadcast; the innermost loop runs over the last dimension, which
LLVM vectorizes (it speculates unit strides). A float32 sum, difference, product or quotient of two float32
values is correctly rounded, and so is the float64 one rounded to float32 (53 bits are more than twice 24 plus
2: the double rounding is innocuous), so the results equal the float64 reference's (``elementwise_real``) bit
for bit. Division follows IEEE (NumPy's error model): a zero divisor gives an infinity or NaN. MAXIMUM and
MINIMUM pass a NaN of either operand on (as NumPy's ``maximum``); PRELU is ``x`` where ``x >= 0``, else
``alpha * x`` (one float32 product: the float64 one rounded, the same bits).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import types

from ..support import jit, native
from ..support.vector_width import wide_vectors
from .asymmetric import real_range
from .float_sharing import F32, at, compiled, finish, output_target

ADD, MUL, SUB, DIV, MAX, MIN, PRELU = 0, 1, 2, 3, 4, 5, 6


@jit.jitable
def prelu32(x, alpha):
    """NNAPI's PRELU of one value: ``x`` where ``x >= 0``, else ``alpha * x`` (a NaN ``x`` gives ``alpha * x``)."""
    return x if x >= 0 else alpha * x


@jit.kernel
def _apply(op, x, y):
    # MAXIMUM, MINIMUM and PRELU (ADD, SUB, MUL and DIV keep their own loops)
    if op == MAX:
        return x if (x >= y or math.isnan(x)) else y
    if op == MIN:
        return x if (x <= y or math.isnan(x)) else y
    if op == PRELU:
        return prelu32(x, y)
    return x


@jit.kernel(error_model="numpy")
def _binary(a, b, out, op, lo, hi):
    n0, n1, n2, n3 = out.shape
    low, high = np.float32(lo), np.float32(hi)
    for i in range(n0):
        for j in range(n1):
            for k in range(n2):
                for m in range(n3):
                    x, y = a[i, j, k, m], b[i, j, k, m]
                    if op == MUL:
                        v = x * y
                    elif op == SUB:
                        v = x - y
                    elif op == DIV:
                        v = x / y
                    elif op >= MAX:
                        v = _apply(op, x, y)
                    else:
                        v = x + y
                    v = max(v, low)
                    v = min(v, high)
                    out[i, j, k, m] = v


@jit.kernel(error_model="numpy")
def _binary_flat(a, b, out, op, lo, hi):
    # Operands of the output's shape, all contiguous (a residual ADD): one loop per operation, which LLVM
    # vectorizes.
    wide_vectors()
    low, high = np.float32(lo), np.float32(hi)
    if op == MUL:
        for i in range(out.size):
            out[i] = min(max(a[i] * b[i], low), high)
    elif op == SUB:
        for i in range(out.size):
            out[i] = min(max(a[i] - b[i], low), high)
    elif op == DIV:
        for i in range(out.size):
            out[i] = min(max(a[i] / b[i], low), high)
    elif op != ADD:
        for i in range(out.size):
            out[i] = _apply(op, a[i], b[i])
    else:
        for i in range(out.size):
            out[i] = min(max(a[i] + b[i], low), high)


_OPERAND = types.Array(types.float32, 4, "A", readonly=True)  # a broadcast view: any strides
_BINARY_TYPES = (_OPERAND, _OPERAND, F32[4, True], jit.INT, jit.FLOAT, jit.FLOAT)
_FLAT_TYPES = (F32[1, False], F32[1, False], F32[1, True], jit.INT, jit.FLOAT, jit.FLOAT)


def _as_4d(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    # Views only (leading 1s, then a broadcast), never a copy: the bound call reads the current values.
    padded = array.reshape((1,) * (4 - array.ndim) + array.shape)
    return np.broadcast_to(padded, (1,) * (4 - len(shape)) + shape)


def bind_binary(op: int, a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int) -> Callable[[], None]:
    """A no-argument call computing ``out = act(a + b)`` (``op`` ADD), ``act(a - b)`` (SUB), ``act(a * b)``
    (MUL), ``act(a / b)`` (DIV), ``max(a, b)`` (MAX), ``min(a, b)`` (MIN) or PRELU of ``a`` by ``b`` from the
    arrays' current values, broadcasting; float32, rank at most 4."""
    lo, hi = real_range(activation)
    shape = tuple(out.shape)
    if len(shape) > 4:
        raise ValueError(f"out has rank {len(shape)}, expected at most 4")
    if a.dtype != np.float32 or b.dtype != np.float32:
        raise ValueError(f"a and b are {a.dtype} and {b.dtype}, expected float32")
    target = output_target(out)
    if a.shape == b.shape == shape and a.flags.c_contiguous and b.flags.c_contiguous:
        flat = compiled(_binary_flat, _FLAT_TYPES)
        vectors = (a.reshape(-1), b.reshape(-1), target.reshape(-1), int(op), float(lo), float(hi))
        return finish(lambda: flat(*vectors), [], target, out)
    kernel = compiled(_binary, _BINARY_TYPES)
    args = (_as_4d(a, shape), _as_4d(b, shape), target.reshape((1,) * (4 - len(shape)) + shape), int(op), float(lo),
            float(hi))
    return finish(lambda: kernel(*args), [], target, out)


@native.factory
def _binary_entry() -> int:
    first, second, third, base = at(0), at(1), at(2), at(3)

    def entry(block):
        _binary(native.array(block, first, np.float32)[0, 0], native.array(block, second, np.float32)[0, 0],
                native.c_array(block, third, np.float32)[0, 0], block[base], native.real(block, base + 1),
                native.real(block, base + 2))
        return 0
    return jit.native(entry)


def native_binary(op: int, a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int) -> native.Entry | None:
    """:func:`bind_binary` as a native entry on the broadcast loop (the operands as stride-0 views); None unless
    all three are float32 of rank at most 4 and ``out`` is C-contiguous."""
    shape = tuple(out.shape)
    if len(shape) > 4 or not out.flags.c_contiguous or not a.dtype == b.dtype == out.dtype == np.float32:
        return None
    lo, hi = real_range(activation)
    lead = (1,) * (native.RANK - 4)
    words, keep = native.pack(_as_4d(a, shape).reshape(lead + _four(shape)),
                              _as_4d(b, shape).reshape(lead + _four(shape)), out.reshape(lead + _four(shape)),
                              int(op), float(lo), float(hi))
    return native.Entry(_binary_entry(), words, keep)


def _four(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (1,) * (4 - len(shape)) + tuple(shape)


def binary(op: int, a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int) -> None:
    """``bind_binary(...)()``: one call."""
    bind_binary(op, a, b, out, activation)()
