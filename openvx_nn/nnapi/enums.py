"""The NNAPI HAL enumerations, with the seed's names and values (1.0, and what 1.1 and 1.2 add)."""
from __future__ import annotations

import enum

import numpy as np


class OperandType(enum.IntEnum):
    FLOAT32 = 0
    INT32 = 1
    UINT32 = 2
    TENSOR_FLOAT32 = 3
    TENSOR_INT32 = 4
    TENSOR_QUANT8_ASYMM = 5
    BOOL = 6  # 6-13: API level 29 (NNAPI 1.2)
    TENSOR_QUANT16_SYMM = 7
    TENSOR_FLOAT16 = 8
    TENSOR_BOOL8 = 9
    FLOAT16 = 10
    TENSOR_QUANT8_SYMM_PER_CHANNEL = 11
    TENSOR_QUANT16_ASYMM = 12
    TENSOR_QUANT8_SYMM = 13
    OEM = 10000
    TENSOR_OEM_BYTE = 10001


class OperationType(enum.IntEnum):
    ADD = 0
    AVERAGE_POOL_2D = 1
    CONCATENATION = 2
    CONV_2D = 3
    DEPTHWISE_CONV_2D = 4
    DEPTH_TO_SPACE = 5
    DEQUANTIZE = 6
    EMBEDDING_LOOKUP = 7
    FLOOR = 8
    FULLY_CONNECTED = 9
    HASHTABLE_LOOKUP = 10
    L2_NORMALIZATION = 11
    L2_POOL_2D = 12
    LOCAL_RESPONSE_NORMALIZATION = 13
    LOGISTIC = 14
    LSH_PROJECTION = 15
    LSTM = 16
    MAX_POOL_2D = 17
    MUL = 18
    RELU = 19
    RELU1 = 20
    RELU6 = 21
    RESHAPE = 22
    RESIZE_BILINEAR = 23
    RNN = 24
    SOFTMAX = 25
    SPACE_TO_DEPTH = 26
    SVDF = 27
    TANH = 28
    BATCH_TO_SPACE_ND = 29  # 29-37: API level 28 (NNAPI 1.1)
    DIV = 30
    MEAN = 31
    PAD = 32
    SPACE_TO_BATCH_ND = 33
    SQUEEZE = 34
    STRIDED_SLICE = 35
    SUB = 36
    TRANSPOSE = 37
    ABS = 38  # 38-94: API level 29 (NNAPI 1.2)
    ARGMAX = 39
    ARGMIN = 40
    AXIS_ALIGNED_BBOX_TRANSFORM = 41
    BIDIRECTIONAL_SEQUENCE_LSTM = 42
    BIDIRECTIONAL_SEQUENCE_RNN = 43
    BOX_WITH_NMS_LIMIT = 44
    CAST = 45
    CHANNEL_SHUFFLE = 46
    DETECTION_POSTPROCESSING = 47
    EQUAL = 48
    EXP = 49
    EXPAND_DIMS = 50
    GATHER = 51
    GENERATE_PROPOSALS = 52
    GREATER = 53
    GREATER_EQUAL = 54
    GROUPED_CONV_2D = 55
    HEATMAP_MAX_KEYPOINT = 56
    INSTANCE_NORMALIZATION = 57
    LESS = 58
    LESS_EQUAL = 59
    LOG = 60
    LOGICAL_AND = 61
    LOGICAL_NOT = 62
    LOGICAL_OR = 63
    LOG_SOFTMAX = 64
    MAXIMUM = 65
    MINIMUM = 66
    NEG = 67
    NOT_EQUAL = 68
    PAD_V2 = 69
    POW = 70
    PRELU = 71
    QUANTIZE = 72
    QUANTIZED_16BIT_LSTM = 73
    RANDOM_MULTINOMIAL = 74
    REDUCE_ALL = 75
    REDUCE_ANY = 76
    REDUCE_MAX = 77
    REDUCE_MIN = 78
    REDUCE_PROD = 79
    REDUCE_SUM = 80
    ROI_ALIGN = 81
    ROI_POOLING = 82
    RSQRT = 83
    SELECT = 84
    SIN = 85
    SLICE = 86
    SPLIT = 87
    SQRT = 88
    TILE = 89
    TOPK_V2 = 90
    TRANSPOSE_CONV_2D = 91
    UNIDIRECTIONAL_SEQUENCE_LSTM = 92
    UNIDIRECTIONAL_SEQUENCE_RNN = 93
    RESIZE_NEAREST_NEIGHBOR = 94
    OEM_OPERATION = 10000


class FusedActivationFunc(enum.IntEnum):
    NONE = 0
    RELU = 1
    RELU1 = 2
    RELU6 = 3


class OperandLifeTime(enum.IntEnum):
    TEMPORARY_VARIABLE = 0
    MODEL_INPUT = 1
    MODEL_OUTPUT = 2
    CONSTANT_COPY = 3
    CONSTANT_REFERENCE = 4
    NO_VALUE = 5


class DeviceStatus(enum.IntEnum):
    AVAILABLE = 0
    BUSY = 1
    OFFLINE = 2
    UNKNOWN = 3


class ErrorStatus(enum.IntEnum):
    NONE = 0
    DEVICE_UNAVAILABLE = 1
    GENERAL_FAILURE = 2
    OUTPUT_INSUFFICIENT_SIZE = 3
    INVALID_ARGUMENT = 4


class PaddingScheme(enum.IntEnum):
    """The implicit padding codes of CONV_2D, DEPTHWISE_CONV_2D and the pools."""

    SAME = 1
    VALID = 2


DTYPES: dict[int, np.dtype] = {
    OperandType.FLOAT32: np.dtype(np.float32), OperandType.TENSOR_FLOAT32: np.dtype(np.float32),
    OperandType.INT32: np.dtype(np.int32), OperandType.TENSOR_INT32: np.dtype(np.int32),
    OperandType.UINT32: np.dtype(np.uint32), OperandType.TENSOR_QUANT8_ASYMM: np.dtype(np.uint8),
    OperandType.BOOL: np.dtype(np.bool_), OperandType.TENSOR_BOOL8: np.dtype(np.bool_),
    OperandType.FLOAT16: np.dtype(np.float16), OperandType.TENSOR_FLOAT16: np.dtype(np.float16),
    OperandType.TENSOR_QUANT16_SYMM: np.dtype(np.int16), OperandType.TENSOR_QUANT16_ASYMM: np.dtype(np.uint16),
    OperandType.TENSOR_QUANT8_SYMM: np.dtype(np.int8), OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL: np.dtype(np.int8),
}
"""The NumPy dtype of each operand type we run (OEM types are refused). A boolean is one byte; NNAPI reads any
non-zero byte as true, so bytes from C are read through ``as_bool`` before they become ``np.bool_``."""

SCALAR_TYPES = (OperandType.FLOAT32, OperandType.INT32, OperandType.UINT32, OperandType.BOOL, OperandType.FLOAT16)
TENSOR_TYPES = (OperandType.TENSOR_FLOAT32, OperandType.TENSOR_INT32, OperandType.TENSOR_QUANT8_ASYMM,
                OperandType.TENSOR_BOOL8, OperandType.TENSOR_FLOAT16, OperandType.TENSOR_QUANT16_SYMM,
                OperandType.TENSOR_QUANT16_ASYMM, OperandType.TENSOR_QUANT8_SYMM,
                OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL)

QUANTIZATION: dict[int, tuple[int, int] | None] = {
    OperandType.TENSOR_QUANT8_ASYMM: (0, 255), OperandType.TENSOR_QUANT16_ASYMM: (0, 65535),
    OperandType.TENSOR_QUANT8_SYMM: (0, 0), OperandType.TENSOR_QUANT16_SYMM: (0, 0),
    OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL: None,
}
"""Quantized tensor types: the zero points each allows (a scale greater than zero is required); None: the
scales are per channel (``SymmPerChannelQuantParams``), the operand's own scale and zero point are 0."""

UNQUANTIZED_SINCE_29 = (OperandType.BOOL, OperandType.TENSOR_BOOL8, OperandType.FLOAT16, OperandType.TENSOR_FLOAT16)
"""API level 29 types whose scale and zero point must be 0 (the header: "only used for quantized tensors")."""


def as_bool(array: np.ndarray) -> np.ndarray:
    """Bytes of a BOOL or TENSOR_BOOL8 value as ``np.bool_`` 0/1: any non-zero byte is true."""
    return array.view(np.uint8) != 0 if array.dtype == np.bool_ else array != 0


class ResultCode(enum.IntEnum):
    """What NNAPI's C API functions return (``NeuralNetworks.h``)."""

    NO_ERROR = 0
    OUT_OF_MEMORY = 1
    INCOMPLETE = 2
    UNEXPECTED_NULL = 3
    BAD_DATA = 4
    OP_FAILED = 5
    BAD_STATE = 6
    UNMAPPABLE = 7
    OUTPUT_INSUFFICIENT_SIZE = 8  # 8-9: API level 29
    UNAVAILABLE_DEVICE = 9


class DeviceTypeCode(enum.IntEnum):
    """``ANeuralNetworksDevice_getType``'s values (API level 29)."""

    UNKNOWN = 0
    OTHER = 1
    CPU = 2
    GPU = 3
    ACCELERATOR = 4


class DurationCode(enum.IntEnum):
    """``ANeuralNetworksExecution_getDuration``'s measurements (API level 29), in nanoseconds."""

    ON_HARDWARE = 0
    IN_DRIVER = 1


class PreferenceCode(enum.IntEnum):
    """``ANeuralNetworksCompilation_setPreference``'s values (a hint; this driver has one way to run)."""

    PREFER_LOW_POWER = 0
    PREFER_FAST_SINGLE_ANSWER = 1
    PREFER_SUSTAINED_SPEED = 2
