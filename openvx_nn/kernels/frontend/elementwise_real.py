"""Element-wise arithmetic on float32 or asymmetric uint8 tensors with NumPy
broadcasting (trailing dimensions aligned, a dimension of 1 stretches):
add, multiply, subtract and divide (these two on floats), and the unary
functions (floor, clamps, logistic, tanh, dequantize).  uint8 products are exact integers requantized by
``asymmetric.requantize``; the rest is float64 on exact real values, stored
once by ``asymmetric.store``."""
from __future__ import annotations

import numpy as np

from . import combine, indexing, pointwise
from .asymmetric import dequantize, quantized_range, requantize, store

UNARY = {
    "floor": np.floor,
    "relu": lambda v: np.maximum(v, 0.0),
    "relu1": lambda v: np.clip(v, -1.0, 1.0),
    "relu6": lambda v: np.clip(v, 0.0, 6.0),
    "logistic": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "tanh": np.tanh,
    "identity": lambda v: v,
}


def add(a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int, qa=None, qb=None, qout=None) -> None:
    """``out = act(a + b)``: real values summed in float64, stored once."""
    store(dequantize(a, qa) + dequantize(b, qb), out, qout, activation)


def subtract(a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int) -> None:
    """``out = act(a - b)`` on floats: the float64 difference, stored once."""
    store(dequantize(a, None) - dequantize(b, None), out, None, activation)


def divide(a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int) -> None:
    """``out = act(a / b)`` on floats: IEEE division (a zero divisor gives an infinity or NaN)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        store(dequantize(a, None) / dequantize(b, None), out, None, activation)


def multiply(a: np.ndarray, b: np.ndarray, out: np.ndarray, activation: int, qa=None, qb=None, qout=None) -> None:
    """``out = act(a * b)``; uint8: the exact product of offsets requantized by ``s_a * s_b / s_out``."""
    if qout is None:
        store(dequantize(a, qa) * dequantize(b, qb), out, None, activation)
        return
    product = (a.astype(np.int64) - qa[1]) * (b.astype(np.int64) - qb[1])
    low, high = quantized_range(activation, *qout)
    out[...] = requantize(product, qa[0] * qb[0] / qout[0], qout[1], low, high).astype(out.dtype)


def unary(function: str, x: np.ndarray, out: np.ndarray, quant_in=None, quant_out=None) -> None:
    """``out = f(x)`` for ``f`` in UNARY (``identity`` dequantizes or rescales)."""
    with np.errstate(over="ignore"):
        store(UNARY[function](dequantize(x, quant_in)), out, quant_out)


def function(name: str, x: np.ndarray, out: np.ndarray) -> None:
    """``out = f(x)`` for ``f`` in ``pointwise.FUNCTIONS``, in float64 stored once; an int32 negation stays in
    int32 (two's complement: the negation of -2**31 is itself)."""
    if name == "negative" and x.dtype == np.int32:
        out[...] = np.negative(x)
        return
    with np.errstate(over="ignore"):  # a float64 result beyond float32's range is stored as an infinity
        store(pointwise.evaluate(name, dequantize(x, None)), out, None)


def binary(rule: str, a: np.ndarray, b: np.ndarray, out: np.ndarray, qa=None, qb=None, qout=None) -> None:
    """``out = rule(a, b)`` for a rule of ``combine.OPERATIONS`` on real values (uint8 dequantized exactly),
    broadcasting (trailing dimensions aligned); float64, stored once (uint8: half to even)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        real = combine.OPERATIONS[rule](dequantize(a, qa), dequantize(b, qb))
    store(real, out, qout)


def select(condition: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray, qa=None, qb=None,
           qout=None) -> None:
    """``out = a`` where ``condition`` is non-zero, else ``b``: raw values when the three share a quantization,
    else the real value stored once (uint8: half to even)."""
    if qa == qb == qout:
        indexing.select(condition, a, b, out)
        return
    real = np.empty(out.shape, np.float64)
    indexing.select(condition, dequantize(a, qa), dequantize(b, qb), real)
    store(real, out, qout)


def convert(x: np.ndarray, out: np.ndarray) -> None:
    """``out`` = the values of ``x`` in ``out``'s type, quantization ignored: a float to an integer type is
    truncated toward zero and saturated to the type's range (NaN gives 0); integers are saturated."""
    if out.dtype.kind == "f":
        with np.errstate(over="ignore"):  # beyond float16's range: an infinity, as IEEE rounds it
            out[...] = x
        return
    info = np.iinfo(out.dtype)
    v = np.trunc(np.nan_to_num(np.asarray(x, np.float64), nan=0.0))
    out[...] = np.clip(v, info.min, info.max).astype(out.dtype)
