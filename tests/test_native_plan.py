"""A verified graph whose nodes all have native entries runs in C without the GIL
(``csrc/plan.c``); its outputs are bit-identical to the Python path's, every change that
invalidates the plan is seen, and whatever needs Python still gets it."""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
from native_testing import model as _model
from native_testing import python_then_native as _python_then_native
from native_testing import values as _values

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.kernels.support import jit, native

DTYPES = (np.uint8, np.int8, np.int16, np.float32)
FUNCTIONS = ("logistic", "tanh", "relu", "brelu", "softrelu", "abs", "square", "sqrt", "linear")


def _runs(graph) -> int:
    """Runs of ``graph`` completed in C without entering Python."""
    return _model(graph).native_runs


def _shape(rng, rank=None):
    return tuple(int(n) for n in rng.integers(1, 6, size=rank or int(rng.integers(1, 5))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_native_activation_is_bit_identical_to_the_python_path(dtype):
    rng = np.random.default_rng(25)
    with Context() as ctx:
        for function in FUNCTIONS:
            shape = _shape(rng)
            fpp_in, fpp_out = (int(rng.integers(0, 9)), int(rng.integers(0, 9))) if dtype == np.int16 else (0, 0)
            a, b = float(rng.uniform(0.1, 3)), float(rng.uniform(0.1, 3))
            with ctx.graph() as g:
                x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp_in)
                out = g.activation(x, function, a, b, out=ctx.tensor(shape=shape, dtype=dtype,
                                                                     fixed_point_position=fpp_out))
                python, ours = _python_then_native(ctx, g, out)
                assert python.tobytes() == ours.tobytes(), (function, dtype, shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("operation", ["add", "subtract", "multiply"])
def test_native_tensor_arithmetic_is_bit_identical_to_the_python_path(operation, dtype):
    rng = np.random.default_rng(1225)
    fpp = 8 if dtype == np.int16 else 0
    for overflow, rounding, scale in (("saturate", "to_zero", 1.0), ("wrap", "nearest_even", 1 / 255),
                                      ("saturate", "nearest_even", 0.37), ("wrap", "to_zero", 3.0)):
        shape = _shape(rng, 3)
        other = tuple(n if rng.random() < 0.5 else 1 for n in shape)  # broadcasting the second input
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp)
            y = ctx.tensor(_values(rng, other, dtype), fixed_point_position=fpp)
            options = {"overflow": overflow}
            if operation == "multiply":
                options.update(scale=scale, rounding=rounding)
            out = getattr(g, operation)(x, y, ctx.tensor(shape=shape, dtype=dtype, fixed_point_position=fpp),
                                        **options)
            python, ours = _python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (operation, dtype, overflow, rounding, scale)


@pytest.mark.parametrize("dtype", [np.int16, np.float32])  # the 8-bit types share the int16 kernels' code
def test_native_pooling_and_softmax_are_bit_identical_to_the_python_path(dtype):
    from openvx_nn.operations.geometry import output_size
    rng = np.random.default_rng(5)
    fpp = 8 if dtype == np.int16 else 0
    for kind, size, pad, stride in (("max", (2, 2), (0, 0), (2, 2)), ("avg", (3, 3), (1, 1), (1, 1)),
                                    ("avg", (3, 2), (1, 0), (2, 1)), ("max", (3, 3), (1, 1), (2, 2))):
        shape = (int(rng.integers(3, 9)), int(rng.integers(3, 9)), int(rng.integers(1, 4)))
        out_shape = tuple(output_size(shape[i], pad[i], size[i], stride[i], False) for i in (0, 1)) + shape[2:]
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp)
            out = g.pooling(x, ctx.tensor(shape=out_shape, dtype=dtype, fixed_point_position=fpp), kind=kind,
                            size=size, padding=pad)
            python, ours = _python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (kind, size, pad, stride, dtype)
    for rank in (1, 2, 3, 4):
        shape = _shape(rng, rank)
        fpp_out = int(rng.integers(0, 9)) if dtype == np.int16 else 0
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp)
            out = g.softmax(x, ctx.tensor(shape=shape, dtype=dtype, fixed_point_position=fpp_out))
            python, ours = _python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (shape, dtype)


def _relu_graph(ctx, data):
    g = ctx.graph()
    x = ctx.tensor(data)
    out = g.relu(x, out=ctx.tensor(shape=data.shape, dtype=data.dtype))
    g.process()
    return g, x, out


def test_native_runs_see_new_contents_a_changed_graph_and_a_written_scalar():
    rng = np.random.default_rng(7)
    data = rng.integers(-100, 100, size=(4, 3)).astype(np.int16)
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(data)
        mid = g.relu(x, out=ctx.tensor(shape=(4, 3), dtype=np.int16))
        runs = _runs(g.handle)
        g.process()
        assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert np.array_equal(mid.numpy(), np.maximum(data, 0))
        x.write(-data)  # new contents, same memory: the plan stays current
        assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert np.array_equal(mid.numpy(), np.maximum(-data, 0))
        assert _runs(g.handle) == runs + 2
        out = g.multiply(mid, np.full((4, 3), 3, np.int16), ctx.tensor(shape=(4, 3), dtype=np.int16), scale=1.0)  # the graph changed: verified again
        assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert np.array_equal(out.numpy(), np.maximum(-data, 0) * 3)
        scale = _model(g.handle).order[-1].params[2]
        scale.value = 2.0  # a written scalar (what vxCopyScalar does): the native plan is rebuilt
        assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert np.array_equal(out.numpy(), np.maximum(-data, 0) * 6)
        runs = _runs(g.handle)
        assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert _runs(g.handle) == runs + 1


def test_a_node_callback_keeps_the_graph_on_the_python_path():
    calls = []

    @vx.ffi.callback("vx_nodecomplete_f")
    def on_complete(node):
        calls.append(1)
        return vx.VX_ACTION_CONTINUE

    with Context() as ctx:
        g, _x, out = _relu_graph(ctx, np.array([-1.0, 2.0], np.float32))
        assert _model(g.handle).plan.native is not None
        node = _model(g.handle).order[0]
        assert vx.vxAssignNodeCallback(vx.ffi.cast("vx_node", node.handle), on_complete) == vx.VX_SUCCESS
        runs = _runs(g.handle)
        for _ in range(3):
            assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert len(calls) == 3 and _runs(g.handle) == runs
        assert out.numpy().tolist() == [0.0, 2.0]
        g.close()


def test_a_python_user_kernel_keeps_the_graph_on_the_python_path():
    from openvx_nn.api import tensor_input, tensor_output
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(np.array([-3, 4], np.int16))
        kernel = ctx.add_kernel("test.native.double", lambda a, out: np.multiply(a, 2, out=out),
                                [tensor_input(), tensor_output()], lambda a: [a])
        mid = ctx.tensor(shape=(2,), dtype=np.int16)
        g.node(kernel, x, mid)
        out = g.relu(mid, out=ctx.tensor(shape=(2,), dtype=np.int16))
        runs = _runs(g.handle)
        g.process()
        assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
        assert _model(g.handle).plan.native is None and _runs(g.handle) == runs
        assert out.numpy().tolist() == [0, 8]


def _fails_from_the_second_run(block):
    block[0] += 1
    return 0 if block[0] < 2 else -10  # VX_ERROR_INVALID_PARAMETERS


def _raises_from_the_second_run(block):
    block[0] += 1
    if block[0] >= 2:
        np.empty(block[1], np.float64)  # far more than any machine: numba raises MemoryError
    return 0


# A kernel's own error status; and an exception, which numba's C callbacks cannot raise: unguarded, the
# MemoryError became "return 0", success with the output never written.
@pytest.mark.parametrize("body, status, words", [
    (_fails_from_the_second_run, vx.VX_ERROR_INVALID_PARAMETERS, ()),
    (_raises_from_the_second_run, vx.VX_FAILURE, ("raised",))], ids=["status", "exception"])
def test_a_native_kernel_that_fails_is_a_status_and_a_log_line(ctx, log, body, status, words):
    entry = jit.native(body)
    g = vx.vxCreateGraph(ctx)
    dims = vx.ffi.new("vx_size[]", [2])
    x = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_FLOAT32, 0)
    out = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_FLOAT32, 0)
    node = vx.vxActivationLayer(g, x, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, out)
    model = _model(node)
    block, keep = native.pack(0, 1 << 60)
    model.description = dataclasses.replace(model.description,
                                            native=lambda p, s: native.Entry(entry, block, keep))
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS  # the Python path binds, publishes, runs the plan once
    assert _model(g).plan.native is not None
    runs = _runs(g)
    assert vx.vxProcessGraph(g) == status  # in C; the failure reported through Python
    assert _runs(g) == runs and _model(g).plan.native is None  # withdrawn: the next run rebinds
    assert log.has(status, "native kernel", hex(model.handle), *words)
    node_status = vx.ffi.new("vx_status *")
    assert vx.vxQueryNode(node, vx.VX_NODE_STATUS, node_status, 4) == vx.VX_SUCCESS
    assert node_status[0] == status
    state = vx.ffi.new("vx_enum *")
    assert vx.vxQueryGraph(g, vx.VX_GRAPH_STATE, state, 4) == vx.VX_SUCCESS
    assert state[0] == vx.VX_GRAPH_STATE_ABANDONED
    for handle, kind in ((node, "vx_node *"), (g, "vx_graph *"), (x, "vx_tensor *"), (out, "vx_tensor *")):
        assert vx.vxReleaseReference(vx.ffi.cast("vx_reference *", vx.ffi.new(kind, handle))) == vx.VX_SUCCESS


def test_a_written_scalar_rebinds_no_graph_that_cannot_run_natively():
    from openvx_nn.api import tensor_input, tensor_output
    with Context() as ctx, ctx.graph() as g, ctx.graph() as other:
        x = ctx.tensor(np.ones((2, 2, 2), np.int16))
        kernel = ctx.add_kernel("test.native.copy", lambda a, out: np.copyto(out, a),
                                [tensor_input(), tensor_output()], lambda a: [a])
        g.node(kernel, x, ctx.tensor(shape=(2, 2, 2), dtype=np.int16))
        mid = other.multiply(x, x, ctx.tensor(shape=(2, 2, 2), dtype=np.int16))
        g.process()
        other.process()
        plan = _model(g.handle).plan
        assert plan.native is None  # a Python user kernel has no native entry
        _model(other.handle).order[0].params[2].value = 3.0
        g.process()
        other.process()
        assert _model(g.handle).plan is plan
        assert mid.numpy().tolist() == np.full((2, 2, 2), 3).tolist()


def test_schedule_and_wait_run_the_native_plan_on_a_pthread(ctx, log):
    g = vx.vxCreateGraph(ctx)
    dims = vx.ffi.new("vx_size[]", [3])
    x = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_INT16, 0)
    out = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_INT16, 0)
    node = vx.vxActivationLayer(g, x, vx.VX_NN_ACTIVATION_ABS, 0.0, 0.0, out)
    data = np.array([-7, 0, 5], np.int16)
    _model(x).array[...] = data
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS  # binds and publishes
    runs = _runs(g)
    for _ in range(3):
        assert vx.vxScheduleGraph(g) == vx.VX_SUCCESS
        assert vx.vxScheduleGraph(g) == vx.VX_ERROR_GRAPH_SCHEDULED  # not collected yet
        assert vx.vxProcessGraph(g) == vx.VX_ERROR_GRAPH_SCHEDULED
        assert vx.vxWaitGraph(g) == vx.VX_SUCCESS
    assert vx.vxWaitGraph(g) == vx.VX_FAILURE  # nothing scheduled any more
    assert _runs(g) == runs + 3, "vxScheduleGraph did not run the native plan"
    assert _model(out).array.tolist() == [7, 0, 5]
    for handle, kind in ((node, "vx_node *"), (g, "vx_graph *"), (x, "vx_tensor *"), (out, "vx_tensor *")):
        assert vx.vxReleaseReference(vx.ffi.cast("vx_reference *", vx.ffi.new(kind, handle))) == vx.VX_SUCCESS


def test_a_graph_scheduled_on_the_python_path_stays_scheduled_for_c_until_collected(ctx):
    # The first vxScheduleGraph binds on the Python path and publishes the native plan as it goes; once
    # its worker has finished, C must still see the graph as scheduled until vxWaitGraph collects it.
    g = vx.vxCreateGraph(ctx)
    dims = vx.ffi.new("vx_size[]", [3])
    x = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_INT16, 0)
    out = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_INT16, 0)
    node = vx.vxActivationLayer(g, x, vx.VX_NN_ACTIVATION_ABS, 0.0, 0.0, out)
    assert vx.vxScheduleGraph(g) == vx.VX_SUCCESS
    model = _model(g)
    for _ in range(500):  # until the worker has let go of the graph
        if not model._busy.locked():
            break
        time.sleep(0.01)
    assert model.plan.native is not None  # published: C could take it
    assert vx.vxScheduleGraph(g) == vx.VX_ERROR_GRAPH_SCHEDULED
    assert vx.vxProcessGraph(g) == vx.VX_ERROR_GRAPH_SCHEDULED
    assert vx.vxWaitGraph(g) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS
    for handle, kind in ((node, "vx_node *"), (g, "vx_graph *"), (x, "vx_tensor *"), (out, "vx_tensor *")):
        assert vx.vxReleaseReference(vx.ffi.cast("vx_reference *", vx.ffi.new(kind, handle))) == vx.VX_SUCCESS
