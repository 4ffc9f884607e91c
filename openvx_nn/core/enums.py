"""The standard enumerations as ``IntEnum`` classes, read from our own headers.

Each class is named for its C enum type and its members carry the standard
names (``Status.VX_ERROR_INVALID_REFERENCE``), so no number is written twice.
"""
from __future__ import annotations

from enum import IntEnum

from ..headers import enumerations, integer_macros

_E = enumerations()


def _make(ctype: str) -> type[IntEnum]:
    # Aliases (two names, one value) are kept as IntEnum aliases.
    return IntEnum(ctype, _E[ctype])  # type: ignore[return-value]


Status = _make("vx_status_e")
Type = _make("vx_type_e")
Vendor = _make("vx_vendor_id_e")
ContextAttr = _make("vx_context_attribute_e")
ReferenceAttr = _make("vx_reference_attribute_e")
ScalarAttr = _make("vx_scalar_attribute_e")
LutAttr = _make("vx_lut_attribute_e")
TensorAttr = _make("vx_tensor_attribute_e")
GraphAttr = _make("vx_graph_attribute_e")
NodeAttr = _make("vx_node_attribute_e")
KernelAttr = _make("vx_kernel_attribute_e")
ParameterAttr = _make("vx_parameter_attribute_e")
GraphState = _make("vx_graph_state_e")
Directive = _make("vx_directive_e")
Hint = _make("vx_hint_e")
Accessor = _make("vx_accessor_e")
MemoryType = _make("vx_memory_type_e")
MapFlag = _make("vx_map_flag_e")
Target = _make("vx_target_e")
Border = _make("vx_border_e")
BorderPolicy = _make("vx_border_policy_e")
ConvertPolicy = _make("vx_convert_policy_e")
RoundPolicy = _make("vx_round_policy_e")
Direction = _make("vx_direction_e")
ParameterState = _make("vx_parameter_state_e")
Action = _make("vx_action_e")
Kernel = _make("vx_kernel_e")
NNKernel = _make("vx_kernel_nn_ext_e")
NNType = _make("vx_nn_type_e")
NNRounding = _make("vx_nn_rounding_type_e")
NNPooling = _make("vx_nn_pooling_type_e")
NNNorm = _make("vx_nn_norm_type_e")
NNActivation = _make("vx_nn_activation_function_e")
DFImage = _make("vx_df_image_e")
ImageAttr = _make("vx_image_attribute_e")
ColorSpace = _make("vx_color_space_e")
ChannelRange = _make("vx_channel_range_e")
ArrayAttr = _make("vx_array_attribute_e")
ObjectArrayAttr = _make("vx_object_array_attribute_e")

LIMITS = integer_macros()
MAX_IMPLEMENTATION_NAME = LIMITS["VX_MAX_IMPLEMENTATION_NAME"]
MAX_KERNEL_NAME = LIMITS["VX_MAX_KERNEL_NAME"]
MAX_LOG_MESSAGE_LEN = LIMITS["VX_MAX_LOG_MESSAGE_LEN"]
MAX_REFERENCE_NAME = LIMITS["VX_MAX_REFERENCE_NAME"]
VERSION = LIMITS["VX_VERSION_1_3"]


def status_name(value: int) -> str:
    """``-12`` → ``'VX_ERROR_INVALID_REFERENCE'``; unknown values print as numbers."""
    try:
        return Status(value).name
    except ValueError:
        return str(value)


def type_name(value: int) -> str:
    """``0x815`` → ``'VX_TYPE_TENSOR'``; knows the NN extension's struct types too."""
    for enum in (Type, NNType):
        try:
            return enum(value).name
        except ValueError:
            continue
    return f"type {value:#x}"


_BY_VALUE: dict[int, str] = {}
for _etype, _members in _E.items():
    if _etype.endswith("attribute_e"):
        for _name, _value in _members.items():
            _BY_VALUE.setdefault(_value, _name)


def enumerations_name(value: int) -> str:
    """The standard name of an attribute value (for messages), or its hex."""
    return _BY_VALUE.get(value, f"attribute {value:#x}")
