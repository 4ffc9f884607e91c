"""The operand types of API level 29 (BOOL, TENSOR_BOOL8, FLOAT16, TENSOR_FLOAT16, TENSOR_QUANT16_SYMM,
TENSOR_QUANT16_ASYMM, TENSOR_QUANT8_SYMM, TENSOR_QUANT8_SYMM_PER_CHANNEL) in the Python builder, the model
checks, the HAL model and the ``.nnapi`` file: the scale and zero point rules the header's OperandCode text
gives each type, value ranges, and the per-channel scales."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from openvx_nn import nnapi
from openvx_nn.nnapi import hal
from openvx_nn.nnapi.enums import as_bool

T = nnapi.OperandType
OP = nnapi.OperationType
NNAPIError = nnapi.NNAPIError
F16, BOOL8, Q16S, Q16A, Q8S, PC = (T.TENSOR_FLOAT16, T.TENSOR_BOOL8, T.TENSOR_QUANT16_SYMM, T.TENSOR_QUANT16_ASYMM,
                                   T.TENSOR_QUANT8_SYMM, T.TENSOR_QUANT8_SYMM_PER_CHANNEL)

NEW_TYPES = {  # type: (NumPy dtype per the header's text, a valid (scale, zero point))
    T.BOOL: (np.bool_, (0.0, 0)), T.FLOAT16: (np.float16, (0.0, 0)),
    BOOL8: (np.bool_, (0.0, 0)), F16: (np.float16, (0.0, 0)),
    Q16S: (np.int16, (0.125, 0)), Q16A: (np.uint16, (0.5, 40000)),
    Q8S: (np.int8, (0.25, 0)), PC: (np.int8, (0.0, 0)),
}


def _value(kind: T, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(NEW_TYPES[kind][0])
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        return rng.uniform(-60000, 60000, shape).astype(np.float16)
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def _host_model(extra) -> nnapi.Model:
    """A RELU model (float32) holding operands of other types beside it, added by ``extra(model)``."""
    m = nnapi.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [2, 3])
    y = m.add_operand(T.TENSOR_FLOAT32, [2, 3])
    m.add_operation(OP.RELU, [x], [y])
    inputs = extra(m) or []
    m.identify_inputs_and_outputs([x, *inputs], [y])
    return m


@pytest.mark.parametrize("kind", list(NEW_TYPES), ids=lambda k: k.name)
def test_each_new_type_takes_a_constant_that_reaches_the_hal_model_and_the_file_unchanged(kind, tmp_path):
    rng = np.random.default_rng(int(kind))
    scalar = kind in (T.BOOL, T.FLOAT16)
    shape = () if scalar else tuple(int(d) for d in rng.integers(1, 5, 3))
    value = _value(kind, shape, rng)
    scale, zero = NEW_TYPES[kind][1]
    scales = list(rng.uniform(0.01, 2.0, shape[1]).astype(np.float32)) if kind == PC else None

    def extra(m):
        k = m.add_operand(kind, list(shape), scale, zero)
        if scales is not None:
            m.set_operand_symm_per_channel_quant_params(k, scales, 1)
        m.set_operand_value(k, value)
    m = _host_model(extra)
    m.finish()
    model = m.to_hal()
    operand = model.operands[2]
    assert operand.type == kind and (operand.scale, operand.zeroPoint) == (scale, zero)
    got = np.frombuffer(hal.constant_bytes(model, operand), NEW_TYPES[kind][0]).reshape(shape)
    np.testing.assert_array_equal(got, value)
    if kind == PC:
        assert operand.extraParams == hal.SymmPerChannelQuantParams([float(s) for s in scales], 1)
    else:
        assert operand.extraParams is None
    path = tmp_path / "m.nnapi"
    m.save(path)
    loaded = hal.load_model(path)
    assert loaded.operands == model.operands
    np.testing.assert_array_equal(
        np.frombuffer(hal.constant_bytes(loaded, loaded.operands[2]), NEW_TYPES[kind][0]).reshape(shape), value)


QUANT_REFUSALS = [  # (type, scale, zero point, words of the message), from the header's OperandCode text
    (Q16S, 0.0, 0, "finite positive scale"), (Q16S, -1.0, 0, "finite positive scale"),
    (Q16S, 1.0, 1, "must be 0"), (Q16S, float("inf"), 0, "finite positive scale"),
    (Q16A, 0.0, 0, "finite positive scale"), (Q16A, 1.0, -1, "outside 0..65535"),
    (Q16A, 1.0, 65536, "outside 0..65535"),
    (Q8S, 0.0, 0, "finite positive scale"), (Q8S, float("nan"), 0, "finite positive scale"),
    (Q8S, 0.5, -3, "must be 0"),
    (PC, 0.5, 0, "per channel"), (PC, 0.0, 1, "per channel"),
    (F16, 1.0, 0, "not quantized"), (BOOL8, 0.0, 1, "not quantized"), (T.BOOL, 2.0, 0, "not quantized"),
    (T.FLOAT16, 0.0, 3, "not quantized"),
]


@pytest.mark.parametrize("kind,scale,zero,words", QUANT_REFUSALS)
def test_add_operand_refuses_quantization_the_header_does_not_allow(kind, scale, zero, words):
    m = nnapi.Model()
    dims = [] if kind in (T.BOOL, T.FLOAT16) else [2]
    with pytest.raises(NNAPIError, match=words) as err:
        m.add_operand(kind, dims, scale, zero)
    assert err.value.status == nnapi.ErrorStatus.INVALID_ARGUMENT and kind.name in str(err.value)
    assert m.add_operand(T.TENSOR_FLOAT32, [1]) == 0  # nothing was added


@pytest.mark.parametrize("kind,zero", [(Q16A, 0), (Q16A, 65535), (Q16S, 0), (Q8S, 0)])
def test_add_operand_takes_the_edges_of_the_allowed_zero_points(kind, zero):
    assert nnapi.Model().add_operand(kind, [3], 1e-3, zero) == 0


@pytest.mark.parametrize("kind", [T.BOOL, T.FLOAT16])
def test_new_scalar_types_take_no_dimensions(kind):
    with pytest.raises(NNAPIError, match="must have no dimensions"):
        nnapi.Model().add_operand(kind, [1])


@pytest.mark.parametrize("kind,value,words", [
    (Q8S, np.array([127, 128]), r"do not fit int8 \(-128..127\)"),
    (Q8S, np.array([-129, 0]), "do not fit int8"),
    (PC, np.array([-200, 0]), "do not fit int8"),
    (Q16S, np.array([0, 32768]), "do not fit int16"),
    (Q16A, np.array([-1, 3]), "do not fit uint16"),
    (Q16A, np.array([0, 65536]), "do not fit uint16"),
    (F16, np.array([65520.0, 0.0]), "beyond float16's range"),
    (F16, np.array([1.0, -1e6], np.float32), "beyond float16's range"),
    (Q16S, np.array([0.5, 1.0]), "does not fit"),
])
def test_set_operand_value_refuses_values_outside_the_type(kind, value, words):
    m = nnapi.Model()
    k = m.add_operand(kind, [2], *NEW_TYPES[kind][1])
    if kind == PC:
        m.set_operand_symm_per_channel_quant_params(k, [1.0, 1.0], 0)
    with pytest.raises(NNAPIError, match=words):
        m.set_operand_value(k, value)


def test_float16_values_round_once_and_keep_infinities_and_nan():
    m = nnapi.Model()
    k = m.add_operand(F16, [5])
    value = np.array([65504.0, 65519.0, 1 / 3, np.inf, np.nan])  # 65519 rounds to the largest finite value
    m.set_operand_value(k, value)
    got = np.frombuffer(m._values[k], np.float16)
    np.testing.assert_array_equal(got[:4], np.array([65504, 65504, np.float16(1 / 3), np.inf], np.float16))
    assert np.isnan(got[4])


def test_boolean_values_read_any_non_zero_as_true():
    m = nnapi.Model()
    k = m.add_operand(BOOL8, [4])
    m.set_operand_value(k, np.array([0, 2, -1, 255]))
    assert list(np.frombuffer(m._values[k], np.uint8)) == [0, 1, 1, 1]
    s = m.add_operand(T.BOOL)
    m.set_operand_value(s, 7)
    assert m._values[s] == b"\x01"
    raw = np.frombuffer(bytes([0, 2, 128, 1]), np.bool_)  # bytes as C gives them
    assert list(as_bool(raw)) == [False, True, True, True]


# -- per-channel quantization ------------------------------------------------------------------------------------
def _per_channel(dims=(4, 2, 2, 3)):
    m = nnapi.Model()
    return m, m.add_operand(PC, list(dims))


@pytest.mark.parametrize("scales,channel,words", [
    ([1.0, 1.0, 1.0], 0, "3 scales for channel dimension 0 of size 4"),
    ([1.0] * 4, 4, "channel dimension 4 is not an axis"),
    ([1.0] * 4, -1, "channel dimension -1 is not an axis"),
    ([1.0, 0.0, 1.0, 1.0], 0, "scale 0.0 of channel 1 must be finite and greater than zero"),
    ([1.0, 1.0, -2.0, 1.0], 0, "channel 2"),
    ([1.0, 1.0, 1.0, float("nan")], 0, "channel 3"),
    ([1.0, 1.0, 1.0, float("inf")], 0, "channel 3"),
    ([1e-46] * 4, 0, "channel 0"),  # a float32 scale of 0
    ([[1.0, 1.0]] * 2, 0, "must be a list of numbers"),
    ([1.0] * 4, 0.0, "is not an integer"),
])
def test_per_channel_params_are_checked_against_the_operand(scales, channel, words):
    m, k = _per_channel()
    with pytest.raises(NNAPIError, match=words):
        m.set_operand_symm_per_channel_quant_params(k, scales, channel)


def test_per_channel_params_need_a_known_channel_dimension_and_the_per_channel_type():
    m, k = _per_channel((0, 3))
    with pytest.raises(NNAPIError, match="must be known"):
        m.set_operand_symm_per_channel_quant_params(k, [], 0)
    m.set_operand_symm_per_channel_quant_params(k, [0.5, 1.0, 2.0], 1)  # the unknown axis is not the channel
    other = m.add_operand(Q8S, [3], 0.5, 0)
    with pytest.raises(NNAPIError, match="TENSOR_QUANT8_SYMM; channel quantization parameters are for"):
        m.set_operand_symm_per_channel_quant_params(other, [1.0, 1.0, 1.0], 0)
    with pytest.raises(NNAPIError, match="is not an operand index"):
        m.set_operand_symm_per_channel_quant_params(7, [1.0], 0)


def test_a_per_channel_operand_without_its_params_fails_finish():
    def extra(m):
        k = m.add_operand(PC, [3, 2])
        m.set_operand_value(k, np.zeros((3, 2), np.int8))
    m = _host_model(extra)
    with pytest.raises(NNAPIError, match="operand 2: TENSOR_QUANT8_SYMM_PER_CHANNEL needs its channel quantization"):
        m.finish()
    assert not m.finished
    m.set_operand_symm_per_channel_quant_params(2, [1.0, 2.0, 3.0], 0)
    m.finish()
    with pytest.raises(NNAPIError, match="finished"):
        m.set_operand_symm_per_channel_quant_params(2, [1.0, 2.0, 3.0], 0)


def test_the_last_per_channel_params_given_are_kept():
    m, k = _per_channel((2, 3))
    m.set_operand_symm_per_channel_quant_params(k, [1.0, 2.0], 0)
    m.set_operand_symm_per_channel_quant_params(k, [0.1, 0.2, 0.3], 1)
    assert m._operands[k].extraParams == hal.SymmPerChannelQuantParams(
        [float(np.float32(x)) for x in (0.1, 0.2, 0.3)], 1)


def _with_per_channel_constant(m: nnapi.Model) -> None:
    """A per-channel constant beside the host model's RELU: operand 2, scales [1, 2] along axis 0."""
    k = m.add_operand(PC, [2])
    m.set_operand_symm_per_channel_quant_params(k, [1.0, 2.0], 0)
    m.set_operand_value(k, np.array([1, -1], np.int8))


def test_hal_models_are_checked_for_channel_params_and_stray_ones():
    m = _host_model(_with_per_channel_constant)
    m.finish()
    model = m.to_hal()
    device = hal.Device()
    bad = [dataclasses.replace(model.operands[2], extraParams=None),
           dataclasses.replace(model.operands[2], extraParams=hal.SymmPerChannelQuantParams([1.0], 0)),
           dataclasses.replace(model.operands[2], extraParams=hal.SymmPerChannelQuantParams([1.0, 2.0], 1))]
    stray = dataclasses.replace(model.operands[0], extraParams=hal.SymmPerChannelQuantParams([1.0], 0))
    for operand, k, words in [(bad[0], 2, "needs its channel"), (bad[1], 2, "1 scales"), (bad[2], 2, "not an axis"),
                              (stray, 0, "takes no channel quantization")]:
        operands = list(model.operands)
        operands[k] = operand
        with pytest.raises(NNAPIError, match=words):
            device.prepare_model(dataclasses.replace(model, operands=operands))
    device.prepare_model(model).release()


def test_the_file_refuses_malformed_channel_params(tmp_path):
    import io
    import json
    import zipfile
    m = _host_model(_with_per_channel_constant)
    m.finish()
    path = tmp_path / "m.nnapi"
    m.save(path)
    with np.load(path) as archive:
        members = {name: archive[name] for name in archive.files}
    description = json.loads(members["model.json"].tobytes())
    assert description["operands"][2]["extraParams"] == {"channelDim": 0, "scales": [1.0, 2.0]}
    assert "extraParams" not in description["operands"][0]
    for extra_params, words in [({"channelDim": 0, "scales": ["a", 1.0]}, "are not all numbers"),
                                ({"channelDim": 0.5, "scales": [1.0, 2.0]}, "is not an integer"),
                                ([1.0, 2.0], "is not"), ({"channelDim": 0, "scales": [1.0, -2.0]}, "channel 1")]:
        description["operands"][2]["extraParams"] = extra_params
        members["model.json"] = np.frombuffer(json.dumps(description).encode(), np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **members)
        assert zipfile.is_zipfile(io.BytesIO(buffer.getvalue()))
        (tmp_path / "bad.nnapi").write_bytes(buffer.getvalue())
        with pytest.raises(NNAPIError, match=words):
            hal.load_model(tmp_path / "bad.nnapi")


# -- executions ---------------------------------------------------------------------------------------------------
def test_execution_inputs_of_the_new_types_take_arrays_of_their_dtypes():
    """Model inputs of each new type (read by no operation: no operation of API level 27/28 takes them) are set
    and copied into their tensors; arrays that do not convert, or overflow float16, are refused."""
    kinds = [BOOL8, F16, Q16S, Q16A, Q8S]

    def extra(m):
        return [m.add_operand(k, [3], *NEW_TYPES[k][1]) for k in kinds]
    m = _host_model(extra)
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    e.set_input(0, x)
    for position, kind in enumerate(kinds, 1):
        e.set_input(position, _value(kind, (3,), rng))
    with pytest.raises(NNAPIError, match="beyond float16's range"):
        e.set_input(2, np.array([1.0, 7e4, 0.0], np.float32))
    with pytest.raises(NNAPIError, match="does not convert"):
        e.set_input(2, np.array([1, 2, 3], np.complex64))
    with pytest.raises(NNAPIError, match="do not fit int16"):
        e.set_input(3, np.array([1, 40000, 3]))
    with pytest.raises(NNAPIError, match="is bool; an array of int64 does not convert"):
        e.set_input(1, np.array([1, 0, 1]))
    e.set_input(2, np.array([1.0, 2.5, -3.0], np.float32))
    e.set_input(1, np.frombuffer(bytes([0, 5, 1]), np.bool_))  # bytes as C gives them: non-zero is true
    e.set_input(4, np.array([0, 40000, 65535], np.uint16))
    y = np.zeros((2, 3), np.float32)
    e.set_output(0, y)
    e.compute()
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    lowered = c.prepared.lowered
    f16 = lowered.builder.tensors[m.to_hal().inputIndexes[2]]
    np.testing.assert_array_equal(f16.array.T, np.array([1.0, 2.5, -3.0], np.float16))
    bool8 = lowered.builder.tensors[m.to_hal().inputIndexes[1]]
    assert bool8.array.dtype == np.uint8 and list(bool8.array.T) == [0, 1, 1]  # OpenVX has no bool element
    q16a = lowered.builder.tensors[m.to_hal().inputIndexes[4]]
    assert list(q16a.array.T.view(np.uint16)) == [0, 40000, 65535]  # uint16 bits in an INT16 tensor
    c.release()


@pytest.mark.parametrize("kind,axis,bias_scale,words", [
    (OP.CONV_2D, 0, 0.0, None), (OP.DEPTHWISE_CONV_2D, 3, 0.0, None), (OP.GROUPED_CONV_2D, 0, 0.0, None),
    (OP.TRANSPOSE_CONV_2D, 0, 0.0, None),
    (OP.CONV_2D, 3, 0.0, "along dimension 3; NNAPI fixes dimension 0"),
    (OP.DEPTHWISE_CONV_2D, 0, 0.0, "NNAPI fixes dimension 3"),
    (OP.CONV_2D, 0, 0.125, "per-channel filter NNAPI fixes scale 0 and zero point 0"),
])
def test_the_bias_and_channel_axis_of_a_per_channel_filter_follow_the_header(kind, axis, bias_scale, words):
    """The rule ``model_rules`` applies to a convolution whose filter is quantized per channel (reached once the
    operations' signatures take such filters): bias scale and zero point 0, the channel axis the header names."""
    from openvx_nn.nnapi.model_rules import _check_bias
    dims = [4, 3, 3, 4]
    filt = hal.Operand(PC, dims, extraParams=hal.SymmPerChannelQuantParams([0.5] * dims[axis], axis))
    operands = [hal.Operand(T.TENSOR_QUANT8_ASYMM, [1, 5, 5, 4], scale=0.5, zeroPoint=3), filt,
                hal.Operand(T.TENSOR_INT32, [4], scale=bias_scale)]
    messages = []

    def fail(message):
        messages.append(message)
        raise NNAPIError(message)
    if words is None:
        _check_bias(operands, hal.Operation(kind, [0, 1, 2], [3]), fail)
        assert not messages
    else:
        with pytest.raises(NNAPIError, match=words):
            _check_bias(operands, hal.Operation(kind, [0, 1, 2], [3]), fail)
