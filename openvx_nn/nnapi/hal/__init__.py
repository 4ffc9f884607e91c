"""The NNAPI HAL (1.0 to 1.2) on OpenVX: its structs (``structs``), the driver that prepares and runs a model
(``driver``) and the ``.nnapi`` file of a model (``model_file``), under the HAL's names."""
from ..model_file import load_model, save_model
from .driver import Device, PreparedModel
from .structs import (
    NO_TIME,
    Capabilities,
    DataLocation,
    Model,
    Operand,
    Operation,
    OutputShape,
    PerformanceInfo,
    Request,
    RequestArgument,
    SymmPerChannelQuantParams,
    Timing,
    constant_bytes,
    element_count,
    pool_bytes,
)

__all__ = ["NO_TIME", "Capabilities", "DataLocation", "Device", "Model", "Operand", "Operation", "OutputShape",
           "PerformanceInfo", "PreparedModel", "Request", "RequestArgument", "SymmPerChannelQuantParams", "Timing",
           "constant_bytes", "element_count", "load_model",
           "pool_bytes", "save_model"]
