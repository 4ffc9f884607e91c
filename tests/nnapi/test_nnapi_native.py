"""NNAPI operations run from C (native entries, ``core/native_plan.py``): the same bits as the Python path's
runners and the NumPy references, over random shapes, paddings, strides, multipliers, zero points and fused
activations; a filter written after binding (a model input, or through the OpenVX API) is packed again; a
filter some node computes keeps the graph on the Python path."""
import math
import time

import numpy as np
import pytest
from nnapi_harness import B8, F32T, Q8, Out, Tensor, boolean, build, collect_garbage, i32  # noqa: F401 - an autouse fixture
from nnapi_reference import activation, conv2d, depthwise

from openvx_nn import nnapi
from openvx_nn.kernels.engine import gang, isa
from openvx_nn.kernels.frontend import nhwc_convolution as reference
from openvx_nn.kernels.frontend import nhwc_pooling

OP = nnapi.OperationType
DTYPES = {F32T: np.float32, Q8: np.uint8, B8: np.bool_}


def _quant(rng):
    """A (scale, zero point) with the scale exact in float32, as the graph's FLOAT32 scalars hold it."""
    return float(np.float32(rng.uniform(0.002, 0.1))), int(rng.integers(0, 256))


def _case(op: int, kind: int, seed: int):
    """(operation inputs, output spec, the reference's result, float tolerance) for a random layer."""
    rng = np.random.default_rng(seed)
    n, h, w, c = int(rng.integers(1, 3)), int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.integers(1, 20))
    quantized = kind == Q8
    qx, qw, qo = (_quant(rng) for _ in range(3)) if quantized else ((0.0, 0),) * 3
    x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8) if quantized else rng.standard_normal(
        (n, h, w, c)).astype(np.float32)
    act = int(rng.integers(0, 4))
    kh, kw = int(rng.integers(1, min(h, 4) + 1)), int(rng.integers(1, min(w, 4) + 1))
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))  # left, right, top, bottom
    strides = tuple(int(s) for s in rng.integers(1, 4, 2))  # width, height
    oh = (h + pads[2] + pads[3] - kh) // strides[1] + 1
    ow = (w + pads[0] + pads[1] - kw) // strides[0] + 1
    window = [i32(p) for p in pads] + [i32(s) for s in strides]
    if op in (OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D):
        out = Out(kind, (n, oh, ow, c), *qo)
        inputs = [Tensor(x, *qx)] + window + [i32(kw), i32(kh), i32(act)]
        mode = nhwc_pooling.MAX if op == OP.MAX_POOL_2D else nhwc_pooling.AVERAGE

        def want():
            result = np.zeros(out.dims, DTYPES[kind])
            nhwc_pooling.pool2d(x, result, mode, pads, strides, (kw, kh), act, *((qx, qo) if quantized else (None,
                                                                                                              None)))
            return result
        return inputs, out, want(), 1e-6
    if op == OP.LOGISTIC:
        out = Out(kind, x.shape, 1 / 256, 0) if quantized else Out(kind, x.shape)
        real = (x.astype(np.float64) - qx[1]) * qx[0] if quantized else x.astype(np.float64)
        probs = 1 / (1 + np.exp(-real))
        want = np.clip(np.rint(probs * 256), 0, 255).astype(np.uint8) if quantized else probs.astype(np.float32)
        return [Tensor(x, *qx)], out, want, 2.0 ** -23
    depthwise_op = op == OP.DEPTHWISE_CONV_2D
    multiplier = int(rng.integers(1, 3)) if depthwise_op else 1
    k = c * multiplier if depthwise_op else int(rng.integers(1, 40))
    shape = (1, kh, kw, k) if depthwise_op else (k, kh, kw, c)
    if quantized:
        filt = rng.integers(0, 256, shape, dtype=np.uint8)
        bias = rng.integers(-3000, 3000, k).astype(np.int32)
        edge = rng.integers(0, 3)  # edge values: the extremes of the input's range
        if edge == 1:
            x[...] = np.where(rng.random(x.shape) < 0.5, 0, 255).astype(np.uint8)
    else:
        filt = rng.standard_normal(shape).astype(np.float32)
        bias = rng.standard_normal(k).astype(np.float32)
    out = Out(kind, (n, oh, ow, k), *qo)
    extra = [i32(multiplier)] if depthwise_op else []
    inputs = [Tensor(x, *qx), Tensor(filt, *qw, const=True),
              Tensor(bias, qx[0] * qw[0], 0, const=True)] + window + extra + [i32(act)]
    if quantized:
        result = np.zeros(out.dims, np.uint8)
        if depthwise_op:
            reference.depthwise_conv2d(x, filt, bias, result, pads, strides, multiplier, act, qx, qw, qo)
        else:
            reference.conv2d(x, filt, bias, result, pads, strides, act, qx, qw, qo)
        return inputs, out, result, 0.0
    x64 = x.astype(np.float64)
    if depthwise_op:
        want = activation(depthwise(x64, filt, bias, pads, strides, multiplier), act)
    else:
        want = activation(conv2d(x64, filt, bias, pads, strides), act)
    return inputs, out, want, 1e-4


def _executable(model, feeds, out, native: bool = True):
    """(compilation, execution with ``feeds`` set, the output array it writes) of a finished ``model``."""
    compilation = nnapi.Compilation(model)
    compilation.finish()
    compilation.prepared.graph.native_allowed = native
    execution = nnapi.Execution(compilation)
    for k, value in enumerate(feeds):
        execution.set_input(k, value)
    result = np.zeros(out.dims, DTYPES[out.kind])
    execution.set_output(0, result)
    return compilation, execution, result


def _compiled(op, inputs, out, native: bool):
    model, feeds, _ = build(op, inputs, [out])
    return _executable(model, feeds, out, native)


def _native_result(compilation, execution, result) -> np.ndarray:
    """The output of a run that must go through the graph's native plan (C counts its runs)."""
    execution.compute()  # binds and publishes the plan
    graph = compilation.prepared.graph
    assert graph.plan.native is not None, "the graph has no native plan"
    runs = graph.native_runs
    result[...] = 0
    execution.compute()
    assert graph.native_runs == runs + 1, "Execution.compute did not run the native plan"
    return result.copy()


OPS = [OP.CONV_2D, OP.DEPTHWISE_CONV_2D, OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D, OP.LOGISTIC]


@pytest.mark.parametrize("kind", [F32T, Q8], ids=["float32", "uint8"])
@pytest.mark.parametrize("op", OPS, ids=lambda o: nnapi.OperationType(o).name)
def test_native_entries_give_the_python_paths_bits_and_the_references_values(op, kind):
    for seed in range(6):
        inputs, out, want, tolerance = _case(op, kind, 100 * int(op) + seed)
        native = _native_result(*_compiled(op, inputs, out, True))
        compilation, execution, python = _compiled(op, inputs, out, False)
        execution.compute()
        assert compilation.prepared.graph.plan.native is None
        assert np.array_equal(native, python, equal_nan=True), f"seed {seed}: native and Python paths differ"
        if kind == Q8 and op != OP.LOGISTIC:
            assert np.array_equal(native, want), f"seed {seed}: the uint8 result differs from the reference"
        elif kind == Q8:  # LOGISTIC: NNAPI's output scale 1/256, zero point 0; the table is the reference's
            assert np.abs(native.astype(int) - want.astype(int)).max() <= 1
        else:
            np.testing.assert_allclose(native, want, rtol=tolerance, atol=tolerance)


def test_a_filter_that_is_a_model_input_is_packed_again_before_each_native_run():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 6, 5, 4)).astype(np.float32)
    filters = [rng.standard_normal((3, 3, 3, 4)).astype(np.float32) for _ in range(3)]
    bias = rng.standard_normal(3).astype(np.float32)
    inputs = [Tensor(x), Tensor(filters[0]), Tensor(bias, const=True)] + [i32(v) for v in (1, 1, 1, 1, 1, 1, 0)]
    compilation, execution, out = _compiled(OP.CONV_2D, inputs, Out(F32T, (1, 6, 5, 3)), True)
    for filt in filters + filters[:1]:
        execution.set_input(1, filt)
        execution.compute()
        want = conv2d(x.astype(np.float64), filt, bias, (1, 1, 1, 1), (1, 1))
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    assert compilation.prepared.graph.plan.native is not None


def test_a_filter_written_through_openvx_after_binding_is_seen_by_the_native_plan():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 256, (1, 5, 5, 3), dtype=np.uint8)
    filt = rng.integers(0, 256, (4, 1, 1, 3), dtype=np.uint8)
    bias = rng.integers(-500, 500, 4).astype(np.int32)
    q = (0.05, 100), (0.02, 128), (0.1, 20)
    inputs = [Tensor(x, *q[0]), Tensor(filt, *q[1], const=True), Tensor(bias, q[0][0] * q[1][0], 0, const=True)]
    inputs += [i32(v) for v in (0, 0, 0, 0, 1, 1, 0)]
    compilation, execution, out = _compiled(OP.CONV_2D, inputs, Out(Q8, (1, 5, 5, 4), *q[2]), True)
    _native_result(compilation, execution, out)
    tensor = compilation.prepared.lowered.builder.tensors[1]  # operand 1: the filter
    new = rng.integers(0, 256, filt.shape, dtype=np.uint8)
    tensor.array.T[...] = new  # as vxCopyTensorPatch does: new values, and the write counted
    tensor.root.writes += 1
    got = _native_result(compilation, execution, out)
    want = np.zeros_like(out)
    reference.conv2d(x, new, bias, want, (0, 0, 0, 0), (1, 1), 0, *q)
    assert np.array_equal(got, want)


def test_a_filter_computed_by_the_graph_keeps_it_on_the_python_path():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 4, 4, 2)).astype(np.float32)
    raw = rng.standard_normal((3, 1, 1, 2)).astype(np.float32)
    m = nnapi.Model()
    operand = m.add_operand
    k_x, k_raw, k_filter = (operand(F32T, dimensions=list(s)) for s in (x.shape, raw.shape, raw.shape))
    m.set_operand_value(k_raw, raw)
    k_bias = operand(F32T, dimensions=[3])
    m.set_operand_value(k_bias, np.zeros(3, np.float32))
    scalars = []
    for v in (0, 0, 0, 0, 1, 1, 0):
        scalars.append(operand(nnapi.OperandType.INT32))
        m.set_operand_value(scalars[-1], np.int32(v))
    k_out = operand(F32T, dimensions=[1, 4, 4, 3])
    m.add_operation(OP.RELU, [k_raw], [k_filter])  # the filter: relu(raw), computed per run
    m.add_operation(OP.CONV_2D, [k_x, k_filter, k_bias] + scalars, [k_out])
    m.identify_inputs_and_outputs([k_x], [k_out])
    m.finish()
    compilation, execution, out = _executable(m, [x], Out(F32T, (1, 4, 4, 3)))
    execution.compute()
    assert compilation.prepared.graph.plan.native is None
    want = conv2d(x.astype(np.float64), np.maximum(raw, 0), np.zeros(3), (0, 0, 0, 0), (1, 1))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


SHARED = [  # layers large enough to share their chunks with the helper threads (float32 and uint8), strides
    (OP.CONV_2D, F32T, (1, 40, 40, 24), (32, 3, 3, 24), 1),
    (OP.CONV_2D, Q8, (1, 40, 40, 24), (32, 3, 3, 24), 1),
    (OP.DEPTHWISE_CONV_2D, F32T, (1, 64, 64, 16), (1, 3, 3, 16), 1),
    (OP.DEPTHWISE_CONV_2D, Q8, (1, 64, 64, 16), (1, 3, 3, 16), 1),
    (OP.DEPTHWISE_CONV_2D, Q8, (1, 90, 90, 16), (1, 3, 3, 16), 2),  # the input packed by phase, in shares
]


@pytest.mark.parametrize("op,kind,x_shape,w_shape,stride", SHARED, ids=lambda v: str(v))
def test_layers_shared_with_helper_threads_natively_give_the_python_paths_bits(op, kind, x_shape, w_shape, stride):
    if isa.threads() < 2:
        pytest.skip("one thread: no helpers")
    rng = np.random.default_rng(11)
    quantized = kind == Q8
    qx, qw, qo = ((0.03, 117), (0.01, 140), (0.2, 9)) if quantized else ((0.0, 0),) * 3
    if quantized:
        x = rng.integers(0, 256, x_shape, dtype=np.uint8)
        filt = rng.integers(0, 256, w_shape, dtype=np.uint8)
        bias = rng.integers(-3000, 3000, w_shape[-1] if op == OP.DEPTHWISE_CONV_2D else w_shape[0]).astype(np.int32)
    else:
        x = rng.standard_normal(x_shape).astype(np.float32)
        filt = rng.standard_normal(w_shape).astype(np.float32)
        bias = rng.standard_normal(w_shape[-1] if op == OP.DEPTHWISE_CONV_2D else w_shape[0]).astype(np.float32)
    k = bias.shape[0]
    extra = [i32(1)] if op == OP.DEPTHWISE_CONV_2D else []
    inputs = [Tensor(x, *qx), Tensor(filt, *qw, const=True), Tensor(bias, qx[0] * qw[0], 0, const=True)]
    inputs += [i32(v) for v in (1, 1, 1, 1, stride, stride)] + extra + [i32(3)]
    side = (x_shape[1] + 2 - 3) // stride + 1
    out = Out(kind, (1, side, side, k), *qo)
    compilation, execution, result = _compiled(op, inputs, out, True)
    first = _native_result(compilation, execution, result)
    calls = compilation.prepared.graph.plan.calls
    assert all(gang.lends(call.native) for call in calls), "the layer does not share its chunks natively"
    _kept, python_execution, python = _compiled(op, inputs, out, False)
    python_execution.compute()
    assert np.array_equal(first, python)
    joins, runs, deadline = gang.native_joins(), 0, time.monotonic() + 60  # a cold cache: the helper compiles first
    while runs < 20 or (gang.native_joins() == joins and time.monotonic() < deadline):  # which runs it joins: the OS's say
        result[...] = 0
        execution.compute()
        assert np.array_equal(result, python), f"run {runs}"
        runs += 1
    assert gang.native_joins() > joins, "no helper joined a native run"


def test_a_long_chain_of_layers_compiles_in_linear_time_and_runs():
    # A hang guard, not a timing test: finding each node's weight writers once scanned every node per node
    # (2,000 layers: ~17 s idle), now an index made once per verify.
    n = 2000
    m = nnapi.Model()
    operand = m.add_operand
    scalars = []
    for v in (0, 0, 0, 0, 1, 1, 0):
        scalars.append(operand(nnapi.OperandType.INT32))
        m.set_operand_value(scalars[-1], np.int32(v))
    k_filter, k_bias = operand(F32T, dimensions=[1, 1, 1, 1]), operand(F32T, dimensions=[1])
    m.set_operand_value(k_filter, np.ones((1, 1, 1, 1), np.float32))
    m.set_operand_value(k_bias, np.full(1, 0.5, np.float32))
    first = last = operand(F32T, dimensions=[1, 2, 2, 1])
    for _ in range(n):
        k_next = operand(F32T, dimensions=[1, 2, 2, 1])
        m.add_operation(OP.CONV_2D, [last, k_filter, k_bias] + scalars, [k_next])
        last = k_next
    m.identify_inputs_and_outputs([first], [last])
    m.finish()
    x = np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1)
    start = time.monotonic()
    _compilation, execution, out = _executable(m, [x], Out(F32T, (1, 2, 2, 1)))
    assert time.monotonic() - start < 120, "compiling 2,000 layers took minutes"
    execution.compute()
    assert np.array_equal(out, x + 0.5 * n)


def _broadcast_shapes(rng):
    """Two shapes NNAPI broadcasts (trailing dimensions equal or 1, ranks 1 to 4) and their result."""
    rank = int(rng.integers(1, 5))
    out = tuple(int(d) for d in rng.integers(1, 6, rank))
    a = tuple(d if rng.random() < 0.7 else 1 for d in out)
    b = tuple(d if rng.random() < 0.7 else 1 for d in out)[int(rng.integers(0, rank)):] or (1,)
    return a, b, tuple(max(x, y) for x, y in zip(a, (1,) * (len(a) - len(b)) + b))


ARITHMETIC = {OP.ADD: np.add, OP.SUB: np.subtract, OP.MUL: np.multiply, OP.DIV: np.divide}


@pytest.mark.parametrize("op", list(ARITHMETIC), ids=lambda o: nnapi.OperationType(o).name)
def test_float32_arithmetic_runs_natively_with_broadcast_and_fused_activations(op):
    for seed in range(8):
        rng = np.random.default_rng(1000 * int(op) + seed)
        a_shape, b_shape, shape = _broadcast_shapes(rng)
        a = rng.standard_normal(a_shape).astype(np.float32)
        b = rng.uniform(0.5, 2, b_shape).astype(np.float32) * rng.choice([-1, 1], b_shape).astype(np.float32)
        act = int(rng.integers(0, 4))
        inputs, out = [Tensor(a), Tensor(b, const=bool(seed % 2)), i32(act)], Out(F32T, shape)
        native = _native_result(*_compiled(op, inputs, out, True))
        _, execution, python = _compiled(op, inputs, out, False)
        execution.compute()
        assert np.array_equal(native, python), f"seed {seed}: native and Python paths differ"
        lo, hi = {0: (-np.inf, np.inf), 1: (0, np.inf), 2: (-1, 1), 3: (0, 6)}[act]
        want = np.clip(ARITHMETIC[op](a, b), lo, hi).astype(np.float32)
        np.testing.assert_allclose(native, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", [F32T, Q8], ids=["float32", "uint8"])
def test_pad_runs_natively_writing_zero_or_the_zero_point(kind):
    for seed in range(6):
        rng = np.random.default_rng(2000 + seed)
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 5, rank))
        paddings = rng.integers(0, 3, (rank, 2)).astype(np.int32)
        q = (0.1, int(rng.integers(1, 255))) if kind == Q8 else (0.0, 0)
        x = rng.integers(0, 256, shape).astype(np.uint8) if kind == Q8 else rng.standard_normal(shape).astype(
            np.float32)
        out = Out(kind, tuple(int(d) for d in np.add(shape, paddings.sum(1))), *q)
        got = _native_result(*_compiled(OP.PAD, [Tensor(x, *q), Tensor(paddings, const=True)], out, True))
        want = np.full(out.dims, q[1], x.dtype)
        want[tuple(slice(p, p + n) for p, n in zip(paddings[:, 0], shape))] = x
        assert np.array_equal(got, want), f"seed {seed}"


def test_reshape_concatenation_and_strided_slice_run_natively_as_copies():
    rng = np.random.default_rng(3000)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = _native_result(*_compiled(OP.RESHAPE, [Tensor(x), Tensor(np.array([6, 20], np.int32), const=True)],
                                    Out(F32T, (6, 20)), True))
    assert np.array_equal(got, x.reshape(6, 20))
    for axis in range(4):
        y = rng.standard_normal(tuple(3 if k == axis else d for k, d in enumerate(x.shape))).astype(np.float32)
        shape = np.concatenate([x, y], axis).shape
        got = _native_result(*_compiled(OP.CONCATENATION, [Tensor(x), Tensor(y), i32(axis)], Out(F32T, shape), True))
        assert np.array_equal(got, np.concatenate([x, y], axis)), f"axis {axis}"
    begin, end, strides = [1, 2, 0, 1], [2, 0, 4, 5], [1, -1, 2, 2]  # a negative stride, a shrunk axis
    want = x[1:2, 2:0:-1, 0:4:2, 1:5:2][0]
    got = _native_result(*_compiled(OP.STRIDED_SLICE, [Tensor(x)] + [Tensor(np.array(v, np.int32), const=True)
                                                                      for v in (begin, end, strides)]
                                    + [i32(0), i32(0), i32(1)], Out(F32T, want.shape), True))
    assert np.array_equal(got, want)


def _fold_reference(x: np.ndarray, axes: set[int], keep: bool, name: str) -> np.ndarray:
    """The header's reduction, element by element: each output element folds the input elements whose indices
    agree with it on the axes not reduced (sum, product, maximum, minimum, mean; ANY and ALL as max and min of
    booleans); every axis reduced without keep-dims gives shape [1]."""
    groups: dict[tuple, list] = {}
    for index in np.ndindex(*x.shape):
        key = tuple(0 if i in axes else k for i, k in enumerate(index))
        groups.setdefault(key, []).append(float(x[index]))
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    out = np.empty(out_shape, np.float64)
    for key, values in groups.items():
        total = math.fsum(values) if all(map(math.isfinite, values)) else sum(values)  # fsum refuses inf - inf
        if name == "sum":
            out[key] = total
        elif name == "mean":
            out[key] = total / len(values)
        elif name == "prod":
            out[key] = math.prod(values)
        elif any(math.isnan(v) for v in values):  # "max"/"min" of a slice holding NaN: NaN
            out[key] = math.nan
        else:
            out[key] = (max if name == "max" else min)(values)
    if not keep:
        out = out.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes) or (1,))
    return out


REDUCTIONS = {OP.REDUCE_SUM: ("sum", F32T), OP.REDUCE_PROD: ("prod", F32T), OP.REDUCE_MAX: ("max", F32T),
              OP.REDUCE_MIN: ("min", F32T), OP.REDUCE_ANY: ("max", B8), OP.REDUCE_ALL: ("min", B8),
              OP.MEAN: ("mean", F32T)}


@pytest.mark.parametrize("op", list(REDUCTIONS) + ["uint8 max", "uint8 min"],
                         ids=lambda o: o if isinstance(o, str) else nnapi.OperationType(o).name)
def test_reductions_run_natively_with_the_python_paths_bits_and_the_headers_values(op):
    name, kind = REDUCTIONS[op] if not isinstance(op, str) else (op.split()[1], Q8)
    if isinstance(op, str):
        op = OP.REDUCE_MAX if name == "max" else OP.REDUCE_MIN
    for seed in range(6):
        rng = np.random.default_rng(4000 + 100 * int(op) + seed + (50 if kind == Q8 else 0))
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 5, rank))
        if kind == B8:
            x = rng.random(shape) < (0.9 if name == "min" else 0.1)
        elif kind == Q8:
            x = rng.integers(0, 256, shape).astype(np.uint8)
        else:
            x = rng.uniform(0.5, 1.5, shape).astype(np.float32) * rng.choice([-1, 1], shape).astype(np.float32)
            if seed == 5:  # edge values: a NaN and infinities
                x.flat[rng.integers(0, x.size, 3)] = [np.nan, np.inf, -np.inf]
        count = int(rng.integers(1, rank + 1))
        axes = [int(a) for a in rng.choice(rank, count, replace=False)]
        listed = [a - rank if rng.random() < 0.5 else a for a in axes]  # negative axes count from the end
        keep = bool(rng.integers(0, 2))
        want = _fold_reference(x, set(axes), keep, name)
        q = (0.5, 3) if kind == Q8 else (0.0, 0)
        tail = [i32(int(keep))] if op == OP.MEAN else [boolean(keep)]
        inputs = [Tensor(x, *q), Tensor(np.array(listed, np.int32), const=True), *tail]
        out = Out(kind, want.shape, *q)
        native = _native_result(*_compiled(op, inputs, out, True))
        compilation, execution, python = _compiled(op, inputs, out, False)
        execution.compute()
        assert compilation.prepared.graph.plan.native is None
        assert np.array_equal(native, python, equal_nan=True), f"seed {seed}: native and Python paths differ"
        if kind == F32T:
            with np.errstate(invalid="ignore"):
                np.testing.assert_allclose(native, want.astype(np.float32), rtol=1e-6, atol=1e-6)
        else:
            assert np.array_equal(native, want.astype(DTYPES[kind])), f"seed {seed}"
