"""``WeightParams`` to float32 arrays: float, float16 and raw storage, and the
quantized forms (1 to 8 bit linear with per-channel scale/bias, or a lookup
table), dequantized once at import.

Quantized values are packed most significant bit first, each value's bits
most significant first, back to back across byte boundaries.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .errors import CoreMLError


def unpack_bits(raw: bytes, count: int, bits: int) -> np.ndarray:
    """``count`` unsigned ``bits``-bit integers packed MSB first in ``raw``."""
    stream = np.unpackbits(np.frombuffer(raw, np.uint8))
    if stream.size < count * bits:
        raise CoreMLError(f"quantized weights hold {stream.size // bits} values of {bits} bits, "
                          f"{count} are needed")
    groups = stream[: count * bits].reshape(count, bits).astype(np.int64)
    return groups @ (1 << np.arange(bits - 1, -1, -1, dtype=np.int64))


def _quantized(wp, count: int, shape: Sequence[int], channel_axis: int) -> np.ndarray:
    q = wp.quantization
    bits = int(q.numberOfBits)
    if not 1 <= bits <= 8:
        raise CoreMLError(f"quantization with {bits} bits is not supported (1 to 8)")
    codes = unpack_bits(wp.rawValue, count, bits)
    kind = q.WhichOneof("QuantizationType")
    if kind == "lookupTableQuantization":
        table = np.asarray(q.lookupTableQuantization.floatValue, np.float64)
        if table.size != 1 << bits:
            raise CoreMLError(f"lookup table has {table.size} entries, {1 << bits}-bit codes need {1 << bits}")
        return table[codes].reshape(shape)
    if kind == "linearQuantization":
        scale = np.asarray(q.linearQuantization.scale, np.float64)
        bias = np.asarray(q.linearQuantization.bias, np.float64)
        channels = shape[channel_axis] if len(shape) > channel_axis else 1
        for name, vec in (("scale", scale), ("bias", bias)):
            if vec.size not in (1, channels):
                raise CoreMLError(f"linear quantization {name} has {vec.size} values, expected 1 or {channels}")
        values = codes.reshape(shape).astype(np.float64)
        along = [1] * len(shape)
        if len(shape):
            along[channel_axis] = -1
        return values * scale.reshape(along if scale.size > 1 else ()) + bias.reshape(along if bias.size > 1 else ())
    raise CoreMLError("quantized weights name no quantization type")


def _whole(data: bytes, size: int, what: str, field: str) -> bytes:
    """``data`` when it holds whole values of ``size`` bytes."""
    if len(data) % size:
        raise CoreMLError(f"{what} {field} has {len(data)} bytes, not a whole number of {size}-byte values")
    return data


def load_weights(wp, shape: Sequence[int], what: str, channel_axis: int = 0) -> np.ndarray:
    """The float32 array of ``shape`` (CoreML row-major order) held by ``wp``."""
    shape = tuple(int(s) for s in shape)
    count = math.prod(shape)
    if wp.HasField("quantization"):
        values = _quantized(wp, count, shape, channel_axis)
    elif len(wp.floatValue):
        values = np.asarray(wp.floatValue, np.float32)
    elif len(wp.float16Value):
        values = np.frombuffer(_whole(wp.float16Value, 2, what, "float16Value"), np.float16)
    elif len(wp.rawValue):
        values = np.frombuffer(_whole(wp.rawValue, 4, what, "rawValue"), np.float32)
    else:
        values = np.zeros(0, np.float32)
    values = np.asarray(values, np.float32).reshape(-1)
    if values.size != count:
        raise CoreMLError(f"{what} holds {values.size} values, shape {list(shape)} needs {count}")
    return values.reshape(shape)
