"""Names the Pythonic API accepts for data types and policies, and their OpenVX enums."""
from __future__ import annotations

import numpy as np

from .. import vx

DTYPES: dict[np.dtype, int] = {
    np.dtype(np.uint8): vx.VX_TYPE_UINT8, np.dtype(np.int8): vx.VX_TYPE_INT8,
    np.dtype(np.int16): vx.VX_TYPE_INT16, np.dtype(np.uint16): vx.VX_TYPE_UINT16,
    np.dtype(np.int32): vx.VX_TYPE_INT32, np.dtype(np.uint32): vx.VX_TYPE_UINT32,
    np.dtype(np.float16): vx.VX_TYPE_FLOAT16, np.dtype(np.float32): vx.VX_TYPE_FLOAT32,
}
NUMPY_OF: dict[int, np.dtype] = {v: k for k, v in DTYPES.items()}

OVERFLOW = {"saturate": vx.VX_CONVERT_POLICY_SATURATE, "wrap": vx.VX_CONVERT_POLICY_WRAP}
ROUNDING = {"nearest_even": vx.VX_ROUND_POLICY_TO_NEAREST_EVEN, "to_zero": vx.VX_ROUND_POLICY_TO_ZERO}
DS_ROUNDING = {"floor": vx.VX_NN_DS_SIZE_ROUNDING_FLOOR, "ceiling": vx.VX_NN_DS_SIZE_ROUNDING_CEILING}
POOLING = {"max": vx.VX_NN_POOLING_MAX, "avg": vx.VX_NN_POOLING_AVG}
NORMALIZATION = {"same_map": vx.VX_NN_NORMALIZATION_SAME_MAP, "across_maps": vx.VX_NN_NORMALIZATION_ACROSS_MAPS}
ACTIVATION = {"logistic": vx.VX_NN_ACTIVATION_LOGISTIC, "tanh": vx.VX_NN_ACTIVATION_HYPERBOLIC_TAN,
              "relu": vx.VX_NN_ACTIVATION_RELU, "brelu": vx.VX_NN_ACTIVATION_BRELU,
              "softrelu": vx.VX_NN_ACTIVATION_SOFTRELU, "abs": vx.VX_NN_ACTIVATION_ABS,
              "square": vx.VX_NN_ACTIVATION_SQUARE, "sqrt": vx.VX_NN_ACTIVATION_SQRT,
              "linear": vx.VX_NN_ACTIVATION_LINEAR}


def vx_type(dtype) -> int:
    """The ``VX_TYPE_*`` of a NumPy dtype (np.int16 → VX_TYPE_INT16)."""
    dt = np.dtype(dtype)
    if dt not in DTYPES:
        names = ", ".join(str(d) for d in DTYPES)
        raise TypeError(f"dtype {dt} has no OpenVX tensor type (expected one of {names})")
    return DTYPES[dt]


def numpy_dtype(data_type: int) -> np.dtype:
    if data_type not in NUMPY_OF:
        raise TypeError(f"OpenVX data type {data_type:#x} has no NumPy dtype")
    return NUMPY_OF[data_type]


def choose(table: dict[str, int], value: str | int, what: str) -> int:
    """The enum named ``value`` in ``table`` (an int passes through unchanged)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if value not in table:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(repr(k) for k in table)}")
    return table[value]
