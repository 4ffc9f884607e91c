"""Qm.n conversions between real numbers and the raw integers tensors store."""
from __future__ import annotations

import numpy as np

_ROUNDERS = {
    "nearest_even": np.rint,
    "to_zero": np.trunc,
    "floor": np.floor,
}


def quantize(real: np.ndarray, dtype=np.int16, fpp: int = 8, rounding: str = "nearest_even",
             saturate: bool = True) -> np.ndarray:
    """Real values → raw Qm.n integers of ``dtype`` with ``fpp`` fraction bits.

    ``quantize(x, np.int16, 8)`` gives Q7.8; values beyond the type saturate
    (or wrap when ``saturate`` is False).  Float dtypes are a plain cast.
    NaN has no fixed-point value: it is a ``ValueError`` (casting it would give
    an arbitrary integer, and a model would answer as if the input were real).
    """
    dt = np.dtype(dtype)
    values = np.asarray(real, dtype=np.float64)
    if dt.kind == "f":
        return values.astype(dt)
    nan = np.isnan(values)
    if nan.any():
        raise ValueError(f"real holds {int(nan.sum())} NaN value(s), the first at index "
                         f"{tuple(int(i) for i in np.argwhere(nan)[0])}: NaN has no {dt} fixed-point value")
    if rounding not in _ROUNDERS:
        raise ValueError(f"rounding {rounding!r} is not one of {', '.join(repr(k) for k in _ROUNDERS)}")
    bits = dt.itemsize * 8
    if not (0 <= fpp <= bits - (1 if dt.kind == "i" else 0)):
        raise ValueError(f"fixed point position {fpp} is out of range for {dt}")
    scaled = _ROUNDERS[rounding](values * float(2 ** fpp))
    info = np.iinfo(dt)
    if saturate:
        return np.clip(scaled, info.min, info.max).astype(dt)
    return scaled.astype(np.int64).astype(dt)


def dequantize(raw: np.ndarray, fpp: int = 8) -> np.ndarray:
    """Raw Qm.n integers → float64 real values (``raw / 2**fpp``)."""
    return np.asarray(raw, dtype=np.float64) / float(2 ** fpp)
