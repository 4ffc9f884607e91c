"""NNEF's quantization (``graph.quant``): what a quantized tensor's values are.

A quantized activation holds its float value rounded to the tensor's grid, as the specification's
``min_max_linear_quantize`` / ``linear_quantize`` and ``zero_point_linear_quantize`` fragments define it: the
graph runs in float32 with each quantized tensor passed through those fragments (clip, scale, round, scale
back: pointwise nodes). A quantized variable's ``.dat`` file holds the integers, read back to the values they
stand for. Per-tensor parameters only for activations; a variable's may be per channel (its first axis).
"""
from __future__ import annotations

import numpy as np

from ..operations.coreml.elementwise import POINTWISE_FUNCTIONS
from .builder import Blob, NNEFBuilder
from .errors import NNEFError

MIN_MAX = ("linear_quantize", "min_max_linear_quantize")
ZERO_POINT = ("zero_point_linear_quantize", "tflite_quantize")


def _signed(quant) -> tuple[bool, bool]:
    return bool(quant.get("signed", False)), bool(quant.get("symmetric", False))


def _kind(name: str, quant) -> str:
    kind = quant.get("op-name")
    if kind not in MIN_MAX + ZERO_POINT:
        raise NNEFError(f"tensor '{name}' is quantized by '{kind}', which is not supported (supported: "
                        f"{', '.join(MIN_MAX + ZERO_POINT)})")
    return kind


def _per_tensor(name: str, quant, keys) -> list[float]:
    values = []
    for key in keys:
        array = np.asarray(quant[key], np.float64).reshape(-1)
        if array.size != 1:
            raise NNEFError(f"tensor '{name}': per-channel '{key}' ({array.size} values) is supported for variables "
                            "only")
        values.append(float(array[0]))
    return values


def dequantized(name: str, data: np.ndarray, quant) -> np.ndarray:
    """The values a quantized variable's integers stand for (parameters per tensor or per first-axis channel)."""
    kind = _kind(name, quant)

    def channel(key):
        array = np.asarray(quant[key], np.float64).reshape(-1)
        return array.reshape((-1,) + (1,) * (data.ndim - 1)) if array.size > 1 else array.reshape(())

    q = np.asarray(data, np.float64)
    if kind in ZERO_POINT:
        return ((q - channel("zero_point")) * channel("scale")).astype(np.float32)
    signed, symmetric = _signed(quant)
    bits = int(quant["bits"])
    if signed:
        q = q + (2 ** (bits - 1) - int(symmetric))
    r = 2 ** bits - 1 - int(signed and symmetric)
    low, high = channel("min"), channel("max")
    return (q * ((high - low) / r) + low).astype(np.float32)


def _pointwise(g: NNEFBuilder, x: Blob, function: str, alpha: float = 0.0, beta: float = 0.0) -> Blob:
    out = g.temp(x.shape)
    g.coreml("pointwise", (x.tensor, g.enum(POINTWISE_FUNCTIONS.index(function)), g.floats([1, 0, alpha, beta, 0]),
                           None, None, out))
    return Blob(out, x.shape)


def fake_quantize(g: NNEFBuilder, name: str, quant) -> str:
    """Blob ``name`` rounded to its grid (nodes after the operation that made it); returns how."""
    kind = _kind(name, quant)
    x = g.blob(name)
    bits = int(quant["bits"])
    signed, symmetric = _signed(quant)
    if kind in MIN_MAX:
        low, high = _per_tensor(name, quant, ("min", "max"))
        if not high > low:
            raise NNEFError(f"tensor '{name}': quantization range [{low}, {high}] is empty")
        r = 2 ** bits - 1 - int(signed and symmetric)
        clipped = _pointwise(g, x, "clip", low, high)
        steps = _pointwise(g, clipped, "linear", r / (high - low), -low * r / (high - low))
        last, scale, shift = _pointwise(g, steps, "round"), (high - low) / r, low
    else:
        scale_value, zero = _per_tensor(name, quant, ("scale", "zero_point"))
        r = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
        lowest = 0.0 if not signed else -r if symmetric else -r - 1.0
        steps = _pointwise(g, _pointwise(g, x, "linear", 1.0 / scale_value, 0.0), "round")
        last, scale, shift = _pointwise(g, steps, "clip", lowest - zero, r - zero), scale_value, 0.0
    out = g.output(name, x.shape)
    g.coreml("pointwise", (last.tensor, g.enum(POINTWISE_FUNCTIONS.index("linear")), g.floats([1, 0, scale, shift, 0]),
                           None, None, out))
    return f"{kind}: coreml.pointwise nodes onto its grid"
