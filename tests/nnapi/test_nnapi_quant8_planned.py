"""uint8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the average and max pools through NNAPI run on the
kernels planned at bind
(tests/kernels/test_quant8_nnapi.py holds them to the NumPy route bit for bit), and are planned again
when the filter changes between executions (a filter that is a model input)."""
import numpy as np
import pytest
from nnapi_harness import Q8, Out, Tensor, build, collect_garbage, i32  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi
from openvx_nn.kernels.frontend import nhwc_convolution as reference
from openvx_nn.kernels.frontend import quant8_convolution, quant8_depthwise

OP = nnapi.OperationType
# Scales exact in float32, as the graph's FLOAT32 scalars hold them (the reference then sees the same values).
QIN, QW, QOUT = ((float(np.float32(s)), z) for s, z in ((0.05, 120), (0.01, 131), (0.08, 7)))


def _case(op, rng, const: bool):
    """(inputs, output spec, the reference's output for given (x, filter, bias))."""
    x = rng.integers(0, 256, (1, 6, 7, 5), dtype=np.uint8)
    if op == OP.FULLY_CONNECTED:
        filt = rng.integers(0, 256, (9, 6 * 7 * 5), dtype=np.uint8)
        bias = rng.integers(-4000, 4000, 9).astype(np.int32)
        out = Out(Q8, (1, 9), QOUT[0], QOUT[1])
        scalars = [i32(1)]

        def want(x, filt, bias):
            result = np.zeros(out.dims, np.uint8)
            reference.fully_connected(x, filt, bias, result, 1, QIN, QW, QOUT)
            return result
    else:
        depthwise = op == OP.DEPTHWISE_CONV_2D
        filt = rng.integers(0, 256, (1, 3, 3, 10) if depthwise else (4, 3, 3, 5), dtype=np.uint8)
        k = filt.shape[3] if depthwise else filt.shape[0]
        bias = rng.integers(-4000, 4000, k).astype(np.int32)
        out = Out(Q8, (1, 3, 3, k), QOUT[0], QOUT[1])
        # pads left 1, right 0, top 0, bottom 1; strides 2, 2; (depth multiplier 2); RELU6
        scalars = [i32(1), i32(0), i32(0), i32(1), i32(2), i32(2)] + ([i32(2)] if depthwise else []) + [i32(3)]

        def want(x, filt, bias):
            result = np.zeros(out.dims, np.uint8)
            if depthwise:
                reference.depthwise_conv2d(x, filt, bias, result, (1, 0, 0, 1), (2, 2), 2, 3, QIN, QW, QOUT)
            else:
                reference.conv2d(x, filt, bias, result, (1, 0, 0, 1), (2, 2), 3, QIN, QW, QOUT)
            return result
    inputs = [Tensor(x, *QIN), Tensor(filt, *QW, const=const), Tensor(bias, QIN[0] * QW[0], 0, const=True)]
    return inputs + scalars, out, want


def _compute(compilation, feeds, out):
    e = nnapi.Execution(compilation)
    for k, value in enumerate(feeds):
        e.set_input(k, value)
    result = np.zeros(out.dims, np.uint8)
    e.set_output(0, result)
    e.compute()
    return result


OPS = [OP.CONV_2D, OP.DEPTHWISE_CONV_2D, OP.FULLY_CONNECTED]


@pytest.mark.parametrize("op", OPS, ids=lambda o: nnapi.OperationType(o).name)
def test_uint8_layers_run_the_planned_kernels(op, monkeypatch):
    planned = []
    for module, name in ((quant8_convolution, "prepare_conv"), (quant8_convolution, "prepare_fully_connected"),
                         (quant8_depthwise, "prepare_depthwise")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, _n=name, **k: planned.append(_n) or _f(*a, **k))
    inputs, out, want = _case(op, np.random.default_rng(op), const=True)
    model, feeds, _ = build(op, inputs, [out])
    compilation = nnapi.Compilation(model)
    compilation.finish()
    for _ in range(2):
        got = _compute(compilation, feeds, out)
        assert np.array_equal(got, want(inputs[0].value, inputs[1].value, inputs[2].value))
    compilation.release()
    assert len(planned) == 1  # once, at bind: not per execution


@pytest.mark.parametrize("op", OPS, ids=lambda o: nnapi.OperationType(o).name)
def test_a_filter_written_between_executions_is_planned_again(op):
    rng = np.random.default_rng(100 + op)
    inputs, out, want = _case(op, rng, const=False)
    model, _, _ = build(op, inputs, [out])
    compilation = nnapi.Compilation(model)
    compilation.finish()
    x, filt, bias = inputs[0].value, inputs[1].value, inputs[2].value
    assert np.array_equal(_compute(compilation, [x, filt], out), want(x, filt, bias))
    other = rng.integers(0, 256, filt.shape, dtype=np.uint8)
    assert np.array_equal(_compute(compilation, [x, other], out), want(x, other, bias))
    compilation.release()


@pytest.mark.parametrize("op", [OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D], ids=lambda o: nnapi.OperationType(o).name)
def test_uint8_pools_run_the_planned_kernel(op, monkeypatch):
    from nnapi_harness import run

    from openvx_nn.kernels.frontend import nhwc_pooling, quant8_pooling
    planned = []  # the planned kernel runs natively (an entry was made) or from Python (a runner was prepared)
    prepare, native = quant8_pooling.prepare_pool, quant8_pooling.native_pool
    monkeypatch.setattr(quant8_pooling, "prepare_pool", lambda *a, **k: planned.append("python") or prepare(*a, **k))

    def native_pool(*a, **k):
        entry = native(*a, **k)
        if entry is not None:
            planned.append("native")
        return entry

    monkeypatch.setattr(quant8_pooling, "native_pool", native_pool)
    x = np.random.default_rng(op).integers(0, 256, (1, 6, 7, 5), dtype=np.uint8)
    # pads left 1, right 0, top 0, bottom 1; strides 2, 2; a 3x2 window; RELU
    scalars = [i32(v) for v in (1, 0, 0, 1, 2, 2, 3, 2, 1)]
    (got,) = run(op, [Tensor(x, *QIN)] + scalars, [Out(Q8, (1, 3, 3, 5), *QOUT)])
    want = np.zeros((1, 3, 3, 5), np.uint8)
    mode = nhwc_pooling.MAX if op == OP.MAX_POOL_2D else nhwc_pooling.AVERAGE
    nhwc_pooling.pool2d(x, want, mode, (1, 0, 0, 1), (2, 2), (3, 2), 1, QIN, QOUT)
    assert np.array_equal(got, want) and planned in (["native"], ["python"]), planned
