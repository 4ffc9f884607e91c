"""Bad models, compilations and executions: an ErrorStatus and a message naming the
operation index, its type and the problem; get_supported_operations never raises."""
import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    I32T,
    Out,
    Tensor,
    build,
    collect_garbage,  # noqa: F401 - an autouse fixture
    i32,
)

from openvx_nn import nnapi

OP, ES = nnapi.OperationType, nnapi.ErrorStatus


def _compile(op, inputs, outputs):
    m, _, _ = build(op, inputs, outputs)
    c = nnapi.Compilation(m)
    c.finish()
    return m, c


def _rejects(op, inputs, outputs, *words):
    m, _, _ = build(op, inputs, outputs)
    assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [False]
    with pytest.raises(nnapi.NNAPIError) as err:
        nnapi.Compilation(m).finish()
    assert err.value.status == ES.INVALID_ARGUMENT
    text = str(err.value)
    assert f"operation 0 ({OP(op).name})" in text
    for word in words:
        assert word in text
    return err.value


X = np.zeros((1, 4, 4, 2), np.float32)
W = np.zeros((3, 3, 3, 2), np.float32)
B = np.zeros(3, np.float32)


def _refused_when_added(op, inputs, outputs, *words):
    """``add_operation`` refuses the operation (as Android's ``addOperation`` does), naming it and ``words``."""
    with pytest.raises(nnapi.NNAPIError) as err:
        build(op, inputs, outputs)
    assert err.value.status == ES.INVALID_ARGUMENT and err.value.operation == 0
    text = str(err.value)
    assert text.startswith(f"operation 0 ({OP(op).name}): ")
    for word in words:
        assert word in text


def test_wrong_operand_count():
    _refused_when_added(OP.CONV_2D, [Tensor(X), Tensor(W, const=True), Tensor(B, const=True), i32(1), i32(1)],
                        [Out(F32T, (1, 4, 4, 3))], "has 5 inputs", "10 or 11 or 13 or 7 or 8 inputs")


def test_wrong_operand_type():
    _refused_when_added(OP.ADD, [Tensor(X), Tensor(X.astype(np.int32)), i32(0)], [Out(F32T, X.shape)],
                        "input 1 (input2) is TENSOR_INT32")


def test_bad_dimensions_and_a_failed_compilation_leaves_nothing_behind():
    import gc

    from openvx_nn import vx
    gc.collect()  # earlier tests' compilations held in reference cycles go now, not during the count
    ctx = vx.vxCreateContext()
    count = vx.ffi.new("vx_uint32 *")
    vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, count, 4)
    before = count[0]
    _rejects(OP.CONV_2D, [Tensor(X), Tensor(np.zeros((3, 3, 3, 5), np.float32), const=True),
                          Tensor(B, const=True), i32(1), i32(1), i32(1), i32(0)],
             [Out(F32T, (1, 4, 4, 3))], "filter depth 5")
    m = nnapi.Model()  # the second operation fails after the first one's objects exist (only lowering sees it)
    a, t, out = (m.add_operand(F32T, [2]) for _ in range(3))
    three = m.add_operand(F32T, [3])
    m.set_operand_value(three, np.ones(3, np.float32))
    act = m.add_operand(nnapi.OperandType.INT32)
    m.set_operand_value(act, 0)
    m.add_operation(OP.FLOOR, [a], [t])
    m.add_operation(OP.ADD, [t, three, act], [out])
    m.identify_inputs_and_outputs([a], [out])
    m.finish()
    with pytest.raises(nnapi.NNAPIError, match=r"operation 1 \(ADD\): input2: shapes \[2\] and \[3\]"):
        nnapi.Compilation(m).finish()
    gc.collect()
    vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, count, 4)
    assert count[0] == before
    vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx))


def test_declared_output_shape_that_disagrees():
    _rejects(OP.RELU1, [Tensor(X)], [Out(F32T, (1, 4, 4, 3))], "declared [1, 4, 4, 3]")


def test_unsupported_activation():
    with pytest.raises(nnapi.NNAPIError, match="fused activation") as err:  # refused when the model is finished
        build(OP.ADD, [Tensor(X), Tensor(X), i32(7)], [Out(F32T, X.shape)])
    assert "7" in str(err.value) and "operation 0 (ADD)" in str(err.value)


def _two_ops(first_out, second_out, second_in=None):
    m = nnapi.Model()
    a = m.add_operand(F32T, [2])
    t = m.add_operand(F32T, [2])
    out = m.add_operand(F32T, [2])
    ops = {"a": a, "t": t, "out": out}
    m.add_operation(OP.RELU, [ops[second_in] if second_in else a], [ops[first_out]])
    m.add_operation(OP.RELU6, [t], [ops[second_out]])
    m.identify_inputs_and_outputs([a], [out])
    return m


def test_operand_written_twice():
    m = _two_ops("out", "out")
    with pytest.raises(nnapi.NNAPIError, match=r"operation 1 \(RELU6\): operand 2 is already written by operation 0"):
        m.finish()


def test_cycle():
    m = _two_ops("t", "out")
    m._operations[0].inputs = [2]  # RELU reads RELU6's output, which reads RELU's
    with pytest.raises(nnapi.NNAPIError, match="cycle"):
        m.finish()
    hal = nnapi.hal.Model(m._operands, m._operations, [0], [2])
    answers = nnapi.hal.Device().get_supported_operations(hal)
    assert answers[0] is False and len(answers) == 2  # the operation named by the check; RELU6 alone is fine


def test_missing_input_at_compute():
    _m, c = _compile(OP.RELU, [Tensor(X)], [Out(F32T, X.shape)])
    e = nnapi.Execution(c)
    e.set_output(0, np.zeros(X.shape, np.float32))
    with pytest.raises(nnapi.NNAPIError, match="input 0 .* was not set") as err:
        e.compute()
    assert err.value.status == ES.INVALID_ARGUMENT


def test_output_buffer_too_small_is_output_insufficient_size():
    _m, c = _compile(OP.RELU, [Tensor(X)], [Out(F32T, X.shape)])
    prepared = c.prepared
    x = np.ones(X.shape, np.float32)
    small = np.zeros(8, np.float32)
    request = nnapi.hal.Request(
        [nnapi.hal.RequestArgument(False, nnapi.hal.DataLocation(0, 0, x.nbytes))],
        [nnapi.hal.RequestArgument(False, nnapi.hal.DataLocation(1, 0, small.nbytes))],
        [x.view(np.uint8).reshape(-1), small.view(np.uint8)])
    assert prepared.execute(request) == ES.OUTPUT_INSUFFICIENT_SIZE
    assert "needs 128" in prepared.last_error
    e = nnapi.Execution(c)
    e.set_input(0, x)
    with pytest.raises(nnapi.NNAPIError):
        e.set_output(0, np.zeros((1, 4, 4, 2), np.int32))


def test_lookup_out_of_range_fails_the_execution():
    values = np.zeros((3, 2), np.float32)
    _m, c = _compile(OP.EMBEDDING_LOOKUP, [Tensor(np.array([0, 5], np.int32)), Tensor(values)],
                    [Out(F32T, (2, 2))])
    e = nnapi.Execution(c)
    e.set_input(0, np.array([0, 5], np.int32))
    e.set_input(1, values)
    e.set_output(0, np.zeros((2, 2), np.float32))
    with pytest.raises(nnapi.NNAPIError, match=r"operation 0 \(EMBEDDING_LOOKUP\): .*embedding_lookup failed: "
                       r"lookup 1 is 5, outside the 3 rows") as err:
        e.compute()
    assert err.value.status == ES.GENERAL_FAILURE


def test_builder_rejects_bad_operands_at_once():
    m = nnapi.Model()
    with pytest.raises(nnapi.NNAPIError, match="scale"):
        m.add_operand(nnapi.OperandType.TENSOR_QUANT8_ASYMM, [2], scale=0.0)
    with pytest.raises(nnapi.NNAPIError, match="scalar"):
        m.add_operand(nnapi.OperandType.INT32, [2])
    k = m.add_operand(I32T, [2])
    with pytest.raises(nnapi.NNAPIError, match="dimensions"):
        m.set_operand_value(k, np.zeros(3, np.int32))
    with pytest.raises(nnapi.NNAPIError, match="not an operand index"):
        m.add_operation(OP.RELU, [k], [9])
    with pytest.raises(nnapi.NNAPIError, match="not an OperationType"):
        m.add_operation(99, [k], [k])


def test_get_supported_operations_never_raises():
    device = nnapi.hal.Device()
    assert device.get_supported_operations(nnapi.hal.Model()) == []
    broken = nnapi.hal.Model([nnapi.hal.Operand(nnapi.OperandType.TENSOR_FLOAT32, [2])],
                             [nnapi.hal.Operation(OP.RELU, [0], [5]), nnapi.hal.Operation(77, [], [])], [0], [])
    assert device.get_supported_operations(broken) == [False, False]
    assert device.get_supported_operations("not a model") == []


def test_a_request_must_give_the_dimensions_the_model_leaves_unknown():
    m = nnapi.Model()
    a = m.add_operand(F32T, [0, 3])
    out = m.add_operand(F32T, [0, 3])
    m.add_operation(OP.RELU, [a], [out])
    m.identify_inputs_and_outputs([a], [out])
    m.finish()
    prepared = nnapi.hal.Device().prepare_model(m.to_hal())  # compiles: the execution gives the dimensions
    pools = [bytearray(24), bytearray(24)]
    argument = [nnapi.hal.RequestArgument(False, nnapi.hal.DataLocation(k, 0, 24), []) for k in range(2)]
    status = prepared.execute(nnapi.hal.Request([argument[0]], [argument[1]], pools))
    assert status == ES.INVALID_ARGUMENT
    assert "input 0 (operand 0) has unknown dimensions [0, 3]; the execution must give them" in prepared.last_error
    argument[0].dimensions = [2, 3]
    assert prepared.execute(nnapi.hal.Request([argument[0]], [argument[1]], pools)) == ES.NONE


def test_values_that_do_not_fit_are_refused_not_wrapped():
    m = nnapi.Model()
    k = m.add_operand(nnapi.OperandType.TENSOR_QUANT8_ASYMM, [2], scale=1.0)
    with pytest.raises(nnapi.NNAPIError, match="do not fit uint8"):
        m.set_operand_value(k, np.array([-1, 3]))
    _, c = _compile(OP.RELU, [Tensor(X)], [Out(F32T, X.shape)])
    e = nnapi.Execution(c)
    with pytest.raises(nnapi.NNAPIError, match="does not convert"):
        e.set_input(0, X.astype(np.complex64))
    e.set_input(0, np.zeros(5, np.float32))  # the wrong size is found when the request is checked
    e.set_output(0, np.zeros(X.shape, np.float32))
    with pytest.raises(nnapi.NNAPIError, match="has 20 bytes, it needs 128") as err:
        e.compute()
    assert err.value.status == ES.INVALID_ARGUMENT
