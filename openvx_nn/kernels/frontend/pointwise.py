"""Element-wise functions of one float tensor, with optional per-channel parameters.

The CoreML front end lowers every activation and unary function the NN
extension's activation layer does not compute exactly onto this one kernel:
``y = f(scale * x + shift)`` evaluated in float64 and stored as float32 once;
the transcendental activations of float32 tensors (:data:`FAST`) run on
``float_activation`` instead, the float32 kernel every front end shares.
``alpha``/``beta`` are scalars; ``alpha_c``/``beta_c`` (when given) are
per-channel vectors of length C or 1 along ``channel_axis`` (OpenVX axis 2,
the C of ``[W, H, C, batch, seq]``) and replace the scalars.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..support import jit, native
from ..support.bit_casts import float_of_bits
from . import channel_affine, float_activation

_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-v))


def _softplus(v: np.ndarray) -> np.ndarray:
    return np.maximum(v, 0.0) + np.log1p(np.exp(-np.abs(v)))


FUNCTIONS = {
    "identity": lambda v, a, b, e: v,
    "relu": lambda v, a, b, e: np.maximum(v, 0.0),
    "leaky_relu": lambda v, a, b, e: np.where(v >= 0.0, v, a * v),
    "thresholded_relu": lambda v, a, b, e: np.where(v >= a, v, 0.0),
    "tanh": lambda v, a, b, e: np.tanh(v),
    "scaled_tanh": lambda v, a, b, e: a * np.tanh(b * v),
    "sigmoid": lambda v, a, b, e: _sigmoid(v),
    "linear": lambda v, a, b, e: a * v + b,
    "sigmoid_hard": lambda v, a, b, e: np.minimum(np.maximum(a * v + b, 0.0), 1.0),
    "elu": lambda v, a, b, e: np.where(v >= 0.0, v, a * np.expm1(np.minimum(v, 0.0))),
    "softsign": lambda v, a, b, e: v / (1.0 + np.abs(v)),
    "softplus": lambda v, a, b, e: _softplus(v),
    "parametric_softplus": lambda v, a, b, e: a * _softplus(b * v),
    "affine": lambda v, a, b, e: a * v + b,
    "sqrt": lambda v, a, b, e: np.sqrt(v),
    "rsqrt": lambda v, a, b, e: 1.0 / np.sqrt(v + e),
    "inverse": lambda v, a, b, e: 1.0 / (v + e),
    "power": lambda v, a, b, e: np.power(v, a),
    "exp": lambda v, a, b, e: np.exp(v),
    "exp2": lambda v, a, b, e: np.exp2(v),
    "log": lambda v, a, b, e: np.log(v),
    "abs": lambda v, a, b, e: np.abs(v),
    "negative": lambda v, a, b, e: np.negative(v),
    "threshold": lambda v, a, b, e: np.maximum(v, a),
    "clip": lambda v, a, b, e: np.minimum(np.maximum(v, a), b),
    "erf": lambda v, a, b, e: _ERF(v),
    "gelu_exact": lambda v, a, b, e: 0.5 * v * (1.0 + _ERF(v / math.sqrt(2.0))),
    "gelu_tanh": lambda v, a, b, e: 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3))),
    "gelu_sigmoid": lambda v, a, b, e: v * _sigmoid(1.702 * v),
    "clamped_relu": lambda v, a, b, e: np.where(v >= 0.0, np.minimum(b, v), np.minimum(b, a * v)),
    "floor": lambda v, a, b, e: np.floor(v),
    "ceil": lambda v, a, b, e: np.ceil(v),
    "sign": lambda v, a, b, e: np.sign(v),
    "round": lambda v, a, b, e: np.round(v),
    "sin": lambda v, a, b, e: np.sin(v),
    "cos": lambda v, a, b, e: np.cos(v),
    "tan": lambda v, a, b, e: np.tan(v),
    "sinh": lambda v, a, b, e: np.sinh(v),
    "cosh": lambda v, a, b, e: np.cosh(v),
    "asin": lambda v, a, b, e: np.arcsin(v),
    "acos": lambda v, a, b, e: np.arccos(v),
    "atan": lambda v, a, b, e: np.arctan(v),
    "asinh": lambda v, a, b, e: np.arcsinh(v),
    "acosh": lambda v, a, b, e: np.arccosh(v),
    "atanh": lambda v, a, b, e: np.arctanh(v),
    "logical_not": lambda v, a, b, e: (v == 0.0).astype(np.float64),
    "swish": lambda v, a, b, e: v * _sigmoid(v),
    "hard_swish": lambda v, a, b, e: v * np.minimum(np.maximum(a * v + b, 0.0), 1.0),
    "affine_relu": lambda v, a, b, e: np.maximum(a * v + b, 0.0),
    "thresholded_hard_swish": lambda v, a, b, e: np.where(v >= e, v * np.minimum(np.maximum(a * v + b, 0.0), 1.0),
                                                          0.0),
}
"""Each function of ``v`` (the shifted and scaled input) and the parameters alpha, beta, epsilon
(``thresholded_hard_swish`` reads its threshold there: CoreML's thresholded ReLU and the hard swish after it)."""


def _channel(vector: np.ndarray | None, scalar: float, ndim: int, axis: int):
    if vector is None:
        return scalar
    values = np.asarray(vector, np.float64).reshape(-1)
    shape = [1] * ndim
    shape[axis] = values.size
    return values.reshape(shape)


def evaluate(function: str, v: np.ndarray, alpha=0.0, beta=0.0, epsilon=0.0) -> np.ndarray:
    """``function`` of float64 ``v`` (shared with the recurrent kernels' gate activations)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return FUNCTIONS[function](v, alpha, beta, epsilon)


def prepare(x: np.ndarray, out: np.ndarray, function: str, scale: float = 1.0, shift: float = 0.0,
            alpha: float = 0.0, beta: float = 0.0, epsilon: float = 0.0,
            alpha_c: np.ndarray | None = None, beta_c: np.ndarray | None = None,
            channel_axis: int = 2) -> Callable[[], None]:
    """A runner of :func:`pointwise` with the function and the per-channel vectors resolved now
    (``x`` is read at each call; later changes to ``alpha_c``/``beta_c`` are not seen)."""
    fast = _fast(x, out, function, scale, shift, alpha, beta, epsilon, alpha_c, beta_c)
    if fast is not None:
        return float_activation.bind(x, out, *fast)
    if _per_channel_affine(x, out, function, scale, shift, alpha_c, beta_c):
        try:
            return channel_affine.bind(x, out, *_affine_vectors(alpha, beta, alpha_c, beta_c),
                                       function == "affine_relu", channel_axis)
        except ValueError:
            pass  # not contiguous in one order: the NumPy expression below
    a = _channel(alpha_c, alpha, x.ndim, channel_axis)
    b = _channel(beta_c, beta, x.ndim, channel_axis)
    f = FUNCTIONS[function]

    def run() -> None:
        v = np.asarray(x, np.float64) * scale + shift
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out[...] = f(v, a, b, epsilon)

    return run


def pointwise(x: np.ndarray, out: np.ndarray, function: str, scale: float = 1.0, shift: float = 0.0,
              alpha: float = 0.0, beta: float = 0.0, epsilon: float = 0.0,
              alpha_c: np.ndarray | None = None, beta_c: np.ndarray | None = None, channel_axis: int = 2) -> None:
    """out = function(scale * x + shift) with scalar or per-channel alpha/beta."""
    prepare(x, out, function, scale, shift, alpha, beta, epsilon, alpha_c, beta_c, channel_axis)()


FAST = {"sigmoid": "logistic", "tanh": "tanh", "scaled_tanh": "tanh", "sigmoid_hard": "hard_sigmoid",
        "softplus": "softplus", "exp": "exp", "swish": "swish", "hard_swish": "hard_swish",
        "thresholded_hard_swish": "thresholded_hard_swish"}
"""The functions float32 tensors compute on ``float_activation`` (its names), when ``scale`` is 1, ``shift`` 0 and
the parameters scalars: within its stated ulps of the float64 expressions above."""
_PARAMETERS = ("scaled_tanh", "sigmoid_hard", "hard_swish")


def _fast(x: np.ndarray, out: np.ndarray, function: str, scale: float, shift: float, alpha: float, beta: float,
          epsilon: float, alpha_c, beta_c) -> tuple[str, float, float, float] | None:
    """``float_activation``'s (function, a, b, c) for this call, or None when it does not compute it."""
    if alpha_c is not None or beta_c is not None or x.dtype != np.float32 or out.dtype != np.float32:
        return None
    if function == "thresholded_hard_swish":
        return (function, alpha, beta, epsilon) if scale == 1.0 and shift == 0.0 else None
    fast = fast_function(function, scale, shift, alpha, beta)
    return None if fast is None else (*fast, 0.0)


def fast_function(function: str, scale: float, shift: float, alpha: float,
                  beta: float) -> tuple[str, float, float] | None:
    """``float_activation``'s (function, a, b) that float32 tensors compute ``function`` of scalar parameters with,
    or None (the plan fuses the former into a product that reads it; a thresholded hard swish, of three
    parameters, is never such a gate)."""
    if function not in FAST or function == "thresholded_hard_swish" or scale != 1.0 or shift != 0.0:
        return None
    return (FAST[function], *((alpha, beta) if function in _PARAMETERS else (1.0, 1.0)))


def _per_channel_affine(x: np.ndarray, out: np.ndarray, function: str, scale: float, shift: float,
                        alpha_c, beta_c) -> bool:
    """Whether this call is ``channel_affine``'s: a float32 affine map (clamped or not) of per-channel parameters."""
    return function in ("affine", "affine_relu") and (alpha_c is not None or beta_c is not None) and \
        scale == 1.0 and shift == 0.0 and x.dtype == np.float32 and out.dtype == np.float32


def _affine_vectors(alpha: float, beta: float, alpha_c, beta_c) -> tuple[np.ndarray, np.ndarray]:
    """The per-channel (or single) scale and shift, as float32 values (the parameters' tensors are float32)."""
    return (np.asarray([alpha] if alpha_c is None else alpha_c, np.float32),
            np.asarray([beta] if beta_c is None else beta_c, np.float32))


# -- the piecewise-linear functions as a native entry (a graph of them runs from C) ---------------------------
PIECEWISE = ("identity", "relu", "leaky_relu", "thresholded_relu", "linear", "sigmoid_hard", "clip", "clamped_relu",
             "threshold", "abs")
"""The functions :func:`native_pointwise` computes: comparisons, products and sums in float64, so its results are
the bits of :func:`prepare`'s (NumPy's maximum and minimum propagate NaN, as the helpers below do)."""
NATIVE = PIECEWISE + ("log",)
"""Every function :func:`native_pointwise` computes of scalar parameters, by code: :data:`PIECEWISE`, and ``log``
(libm's float64 log of the float64 value, rounded to float32 once, a negative value's NaN NumPy's, with the sign
bit set: NumPy's float64 log and libm's are each within an
ulp of float64, and their float32 roundings agreed on 20 million values spread over float32's exponents; they
could differ only where a float64 result lies within an ulp of a float32 rounding boundary). A CoreML
``log_softmax`` is a softmax and this log: with it native, such a graph runs its native plan."""


@jit.kernel
def _maximum(p, q):
    return p if (math.isnan(p) or p >= q) else q  # a NaN ``q`` fails the comparison: returned


@jit.kernel
def _minimum(p, q):
    return p if (math.isnan(p) or p <= q) else q


@jit.kernel(error_model="numpy")
def _piecewise(x, out, code, scale, shift, a, b):
    # One loop per function, each without a branch on ``code`` inside it, so LLVM vectorizes it (a loop that
    # chose the function per element ran element by element: 1 ns each, a pass MobileNet v3 makes 19 times).
    # Slices indexed from 0: LLVM then knows no index wraps.
    xs, ys = x[:x.size], out[:x.size]
    if code == 0:
        for i in range(xs.size):
            ys[i] = np.float32(np.float64(xs[i]) * scale + shift)
    elif code == 1:
        for i in range(xs.size):
            ys[i] = np.float32(_maximum(np.float64(xs[i]) * scale + shift, 0.0))
    elif code == 2:
        for i in range(xs.size):
            v = np.float64(xs[i]) * scale + shift
            ys[i] = np.float32(v if v >= 0.0 else a * v)
    elif code == 3:
        for i in range(xs.size):
            v = np.float64(xs[i]) * scale + shift
            ys[i] = np.float32(v if v >= a else 0.0)
    elif code == 4:
        for i in range(xs.size):
            ys[i] = np.float32(a * (np.float64(xs[i]) * scale + shift) + b)
    elif code == 5:
        for i in range(xs.size):
            ys[i] = np.float32(_minimum(_maximum(a * (np.float64(xs[i]) * scale + shift) + b, 0.0), 1.0))
    elif code == 6:
        for i in range(xs.size):
            ys[i] = np.float32(_minimum(_maximum(np.float64(xs[i]) * scale + shift, a), b))
    elif code == 7:
        for i in range(xs.size):
            v = np.float64(xs[i]) * scale + shift
            ys[i] = np.float32(_minimum(b, v) if v >= 0.0 else _minimum(b, a * v))
    elif code == 8:
        for i in range(xs.size):
            ys[i] = np.float32(_maximum(np.float64(xs[i]) * scale + shift, a))
    elif code == 9:
        for i in range(xs.size):
            ys[i] = np.float32(abs(np.float64(xs[i]) * scale + shift))
    else:
        invalid = float_of_bits(np.uint32(0xFFC00000))  # x86's default NaN, NumPy's log of a negative value
        for i in range(xs.size):
            v = np.float64(xs[i]) * scale + shift
            ys[i] = invalid if v < 0.0 else np.float32(math.log(v))


@native.factory
def _piecewise_entry() -> int:
    def entry(block):
        _piecewise(native.c_array(block, 0, np.float32)[0, 0, 0, 0, 0],
                   native.c_array(block, native.ARRAY_WORDS, np.float32)[0, 0, 0, 0, 0],
                   block[2 * native.ARRAY_WORDS], native.real(block, 2 * native.ARRAY_WORDS + 1),
                   native.real(block, 2 * native.ARRAY_WORDS + 2), native.real(block, 2 * native.ARRAY_WORDS + 3),
                   native.real(block, 2 * native.ARRAY_WORDS + 4))
        return 0
    return jit.native(entry)


def native_pointwise(x: np.ndarray, out: np.ndarray, function: str, scale: float = 1.0, shift: float = 0.0,
                     alpha: float = 0.0, beta: float = 0.0, alpha_c: np.ndarray | None = None,
                     beta_c: np.ndarray | None = None, channel_axis: int = 2,
                     epsilon: float = 0.0) -> native.Entry | None:
    """:func:`pointwise` as a native entry: of scalar parameters for the functions of :data:`NATIVE` and
    :data:`FAST` (``float_activation``'s entry), of per-channel ones for ``affine`` and ``affine_relu``
    (``channel_affine``'s); None for another function or unless ``x`` and ``out`` are float32 of one shape, both
    contiguous in one order (C, or Fortran: an OpenVX tensor's array); they may be the same array."""
    if alpha_c is not None or beta_c is not None:
        if not _per_channel_affine(x, out, function, scale, shift, alpha_c, beta_c):
            return None
        return channel_affine.native_entry(x, out, *_affine_vectors(alpha, beta, alpha_c, beta_c),
                                           function == "affine_relu", channel_axis)
    fast = _fast(x, out, function, scale, shift, alpha, beta, epsilon, None, None)
    if fast is not None and x.shape == out.shape:
        return float_activation.native_entry(x, out, *fast)
    if function not in NATIVE or x.shape != out.shape or x.dtype != np.float32 or out.dtype != np.float32:
        return None
    order = "C" if x.flags.c_contiguous and out.flags.c_contiguous else \
        "F" if x.flags.f_contiguous and out.flags.f_contiguous else None
    if order is None:
        return None
    words, keep = native.pack(native.as6(x.reshape(-1, order=order)), native.as6(out.reshape(-1, order=order)),
                              NATIVE.index(function), float(scale), float(shift), float(alpha), float(beta))
    return native.Entry(_piecewise_entry(), words, keep)
