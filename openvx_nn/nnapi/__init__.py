"""Android NNAPI (1.0 to 1.2) models on OpenVX graphs: the model builder, the HAL structs and a driver.

>>> from openvx_nn import nnapi
>>> m = nnapi.Model()
>>> a = m.add_operand(nnapi.OperandType.TENSOR_FLOAT32, dimensions=[2])
>>> act = m.add_operand(nnapi.OperandType.INT32); m.set_operand_value(act, 0)
>>> out = m.add_operand(nnapi.OperandType.TENSOR_FLOAT32, dimensions=[2])
>>> m.add_operation(nnapi.OperationType.ADD, inputs=[a, a, act], outputs=[out])
"""
from . import hal
from .batched import build_batched, run_options
from .builder import Compilation, Execution, Model
from .enums import (
    DeviceStatus,
    DurationCode,
    ErrorStatus,
    FusedActivationFunc,
    OperandLifeTime,
    OperandType,
    OperationType,
    PaddingScheme,
)
from .errors import NNAPIError

__all__ = ["Compilation", "DeviceStatus", "DurationCode", "ErrorStatus", "Execution", "FusedActivationFunc", "Model", "NNAPIError",
           "OperandLifeTime", "OperandType", "OperationType", "PaddingScheme", "build_batched", "hal",
           "run_options"]
