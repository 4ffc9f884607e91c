"""Whole models: a quantized CNN, an LSTM over a sequence; the lowered graph's
node count, performance counters, repeatability and reference accounting."""
import gc

import numpy as np
from nnapi_harness import (
    collect_garbage,  # noqa: F401 - an autouse fixture
    dequantize,
    quantize,
)
from nnapi_reference import conv2d, depthwise, lstm, pool, softmax

from openvx_nn import nnapi, vx
from openvx_nn.core import kernels
from openvx_nn.nnapi.lowering import LOWERINGS

T, OP = nnapi.OperandType, nnapi.OperationType
Q = T.TENSOR_QUANT8_ASYMM


def _scalar(m, v):
    k = m.add_operand(T.INT32)
    m.set_operand_value(k, v)
    return k


def quantized_cnn(rng):
    """conv 3x3 (SAME, RELU) -> depthwise 3x3 x2 -> average pool 2x2 -> FC -> softmax; every stage an output."""
    m = nnapi.Model()
    x = m.add_operand(Q, [1, 6, 6, 2], 0.02, 128)
    w1 = m.add_operand(Q, [3, 3, 3, 2], 0.01, 120)
    b1 = m.add_operand(T.TENSOR_INT32, [3], 0.0002, 0)
    c1 = m.add_operand(Q, [1, 6, 6, 3], 0.01, 0)
    w2 = m.add_operand(Q, [1, 3, 3, 6], 0.02, 130)
    b2 = m.add_operand(T.TENSOR_INT32, [6], 0.0002, 0)
    c2 = m.add_operand(Q, [1, 4, 4, 6], 0.02, 100)
    p = m.add_operand(Q, [1, 2, 2, 6], 0.02, 100)
    w3 = m.add_operand(Q, [4, 24], 0.01, 128)
    b3 = m.add_operand(T.TENSOR_INT32, [4], 0.0002, 0)
    f = m.add_operand(Q, [1, 4], 0.05, 128)
    beta = m.add_operand(T.FLOAT32)
    m.set_operand_value(beta, 1.0)
    s = m.add_operand(Q, [1, 4], 1 / 256, 0)
    weights = {w1: (3, 3, 3, 2), w2: (1, 3, 3, 6), w3: (4, 24)}
    for k, shape in weights.items():
        m.set_operand_value(k, rng.integers(0, 256, shape, dtype=np.uint8))
    for k, n in ((b1, 3), (b2, 6), (b3, 4)):
        m.set_operand_value(k, rng.integers(-500, 500, n).astype(np.int32))
    m.add_operation(OP.CONV_2D, [x, w1, b1, _scalar(m, 1), _scalar(m, 1), _scalar(m, 1), _scalar(m, 1)], [c1])
    m.add_operation(OP.DEPTHWISE_CONV_2D, [c1, w2, b2, _scalar(m, 2), _scalar(m, 1), _scalar(m, 1),
                                           _scalar(m, 2), _scalar(m, 0)], [c2])
    m.add_operation(OP.AVERAGE_POOL_2D, [c2, _scalar(m, 2), _scalar(m, 2), _scalar(m, 2), _scalar(m, 2),
                                         _scalar(m, 2), _scalar(m, 0)], [p])
    m.add_operation(OP.FULLY_CONNECTED, [p, w3, b3, _scalar(m, 0)], [f])
    m.add_operation(OP.SOFTMAX, [f, beta], [s])
    m.identify_inputs_and_outputs([x], [c1, c2, p, f, s])
    m.finish()
    return m


def _value(m, k):
    hal = m.to_hal()
    op = hal.operands[k]
    loc = op.location
    raw = hal.operandValues if op.lifetime == nnapi.OperandLifeTime.CONSTANT_COPY else hal.pools[loc.poolIndex]
    dtype = np.uint8 if op.type == Q else np.int32
    return np.frombuffer(bytes(raw)[loc.offset:loc.offset + loc.length], dtype).reshape(op.dimensions), op


def _real(m, k):
    v, op = _value(m, k)
    return dequantize(v, op.scale, op.zeroPoint) if op.type == Q else v * op.scale


def test_quantized_cnn_every_stage_within_one():
    rng = np.random.default_rng(0)
    m = quantized_cnn(rng)
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    x = rng.integers(0, 256, (1, 6, 6, 2), dtype=np.uint8)
    outs = [np.zeros(d, np.uint8) for d in ((1, 6, 6, 3), (1, 4, 4, 6), (1, 2, 2, 6), (1, 4), (1, 4))]
    e.set_input(0, x)
    for k, o in enumerate(outs):
        e.set_output(k, o)
    e.compute()
    c1, c2, p, f, s = outs
    # each stage's reference starts from the library's previous stage, so one rounding is compared at a time
    r1 = np.maximum(conv2d(dequantize(x, 0.02, 128), _real(m, 1), _real(m, 2), (1, 1, 1, 1), (1, 1)), 0)
    r2 = depthwise(dequantize(c1, 0.01, 0), _real(m, 4), _real(m, 5), (0, 0, 0, 0), (1, 1), 2)
    r3 = pool(dequantize(c2, 0.02, 100), "avg", (0, 0, 0, 0), (2, 2), (2, 2))
    r4 = dequantize(p, 0.02, 100).reshape(1, 24) @ _real(m, 8).T + _real(m, 9)
    r5 = softmax(dequantize(f, 0.05, 128), 1.0)
    for got, real, (scale, zp) in ((c1, r1, (0.01, 0)), (c2, r2, (0.02, 100)), (p, r3, (0.02, 100)),
                                   (f, r4, (0.05, 128)), (s, r5, (1 / 256, 0))):
        assert np.abs(got.astype(int) - quantize(real, scale, zp).astype(int)).max() <= 1
    assert len(set(c1.reshape(-1))) > 5  # not a degenerate, saturated model


def _ctx_refs(ctx):
    """VX_CONTEXT_REFERENCES after collecting garbage (earlier tests' compilations caught in reference
    cycles, e.g. by pytest.raises tracebacks, would otherwise be released at a random later moment)."""
    gc.collect()
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def test_lowered_graph_counts_nodes_times_them_repeats_and_leaks_nothing():
    ctx = vx.vxCreateContext()
    before = _ctx_refs(ctx)
    assert vx.vxDirective(vx.ffi.cast("vx_reference", ctx), vx.VX_DIRECTIVE_ENABLE_PERFORMANCE) == vx.VX_SUCCESS
    rng = np.random.default_rng(1)
    m = quantized_cnn(rng)
    c = nnapi.Compilation(m)
    c.finish()
    graph = vx.ffi.cast("vx_graph", c.prepared.graph.handle)
    n = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryGraph(graph, vx.VX_GRAPH_NUMNODES, n, 4) == vx.VX_SUCCESS
    assert n[0] == 5
    assert vx.vxIsGraphVerified(graph)
    x = rng.integers(0, 256, (1, 6, 6, 2), dtype=np.uint8)
    results = []
    for _ in range(2):
        e = nnapi.Execution(c)
        e.set_input(0, x)
        outs = [np.zeros(d, np.uint8) for d in ((1, 6, 6, 3), (1, 4, 4, 6), (1, 2, 2, 6), (1, 4), (1, 4))]
        for k, o in enumerate(outs):
            e.set_output(k, o)
        e.compute()
        results.append(outs)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    perf = vx.ffi.new("vx_perf_t *")
    assert vx.vxQueryGraph(graph, vx.VX_GRAPH_PERFORMANCE, perf, vx.ffi.sizeof("vx_perf_t")) == vx.VX_SUCCESS
    assert perf.num == 2 and perf.sum > 0
    timings = c.prepared.operation_timings()
    assert [j for j, _, _ in timings] == [0, 1, 2, 3, 4] and all(ms > 0 for _, _, ms in timings)
    assert _ctx_refs(ctx) > before
    c.release()
    del e, c
    assert _ctx_refs(ctx) == before
    vx.vxDirective(vx.ffi.cast("vx_reference", ctx), vx.VX_DIRECTIVE_DISABLE_PERFORMANCE)
    vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx))


def lstm_model(rng, units=3, size=2):
    """The seed's LSTM form: no state inputs, so the prepared model carries the state."""
    m = nnapi.Model()
    F = T.TENSOR_FLOAT32
    x = m.add_operand(F, [1, size])
    weights = {}
    ins = [x]
    for name, shape in [(f"W{g}", (units, size)) for g in "ifco"] + [(f"R{g}", (units, units)) for g in "ifco"]:
        k = m.add_operand(F, list(shape))
        weights[name] = (rng.standard_normal(shape) * 0.6).astype(np.float32)
        m.set_operand_value(k, weights[name])
        ins.append(k)
    for _ in range(3):  # no peepholes
        k = m.add_operand(F, [0])
        m.set_operand_value(k, None)
        ins.append(k)
    for g in "ifco":
        k = m.add_operand(F, [units])
        weights[f"B{g}"] = rng.standard_normal(units).astype(np.float32)
        m.set_operand_value(k, weights[f"B{g}"])
        ins.append(k)
    for _ in range(2):  # no projection
        k = m.add_operand(F, [0])
        m.set_operand_value(k, None)
        ins.append(k)
    ins.append(_scalar(m, 4))
    for _ in range(2):
        k = m.add_operand(T.FLOAT32)
        m.set_operand_value(k, 0.0)
        ins.append(k)
    outs = [m.add_operand(F, [1, units * 4]), m.add_operand(F, [1, units]), m.add_operand(F, [1, units]),
            m.add_operand(F, [1, units])]
    m.add_operation(OP.LSTM, ins, outs)
    m.identify_inputs_and_outputs([x], [outs[3]])
    m.finish()
    return m, weights


def test_lstm_carries_its_state_between_executions():
    rng = np.random.default_rng(2)
    m, wts = lstm_model(rng)
    c = nnapi.Compilation(m)
    c.finish()
    W = {g: wts[f"W{g}"].astype(np.float64) for g in "ifco"}
    R = {g: wts[f"R{g}"].astype(np.float64) for g in "ifco"}
    B = {g: wts[f"B{g}"].astype(np.float64) for g in "ifco"}
    h, cell = np.zeros((1, 3)), np.zeros((1, 3))
    for step in range(5):
        x = rng.standard_normal((1, 2)).astype(np.float32)
        e = nnapi.Execution(c)
        e.set_input(0, x)
        out = np.zeros((1, 3), np.float32)
        e.set_output(0, out)
        e.compute()
        h, cell = lstm(x.astype(np.float64), W, R, {}, B, None, None, h, cell, np.tanh, 0.0, 0.0)
        np.testing.assert_allclose(out, h, atol=1e-5, rtol=0)
    c.release()


def test_every_nnapi_1_0_operation_has_a_lowering():
    assert {t for t in LOWERINGS if t <= OP.TANH} == {t for t in OP if t <= OP.TANH}
    assert OP.TANH == 28


def test_every_nnapi_1_0_and_1_1_operation_has_a_lowering():
    codes = set(range(38))  # ADD 0 ... TANH 28 (API level 27), BATCH_TO_SPACE_ND 29 ... TRANSPOSE 37 (API level 28)
    assert {int(t) for t in OP if t <= OP.TRANSPOSE} == codes
    assert codes <= {int(t) for t in LOWERINGS}


def test_the_operation_codes_are_those_of_api_level_29():
    assert {int(t) for t in OP if t != OP.OEM_OPERATION} == set(range(95))
    assert OP.RESIZE_NEAREST_NEIGHBOR == 94 and OP.ABS == 38


def test_every_operation_code_0_to_94_has_a_lowering_and_a_signature():
    from openvx_nn.nnapi.signatures import SIGNATURES
    codes = set(range(95))  # API levels 27, 28 and 29 (NNAPI 1.0, 1.1 and 1.2)
    assert codes - {int(t) for t in LOWERINGS} == set()
    assert codes - {int(t) for t in SIGNATURES} == set()


def test_nnapi_kernels_are_reachable_by_name_from_the_c_api():
    ctx = vx.vxCreateContext()
    kernel = vx.vxGetKernelByName(ctx, b"org.openvx_nn.nnapi.conv_2d")
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", kernel)) == vx.VX_SUCCESS
    count = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryKernel(kernel, vx.VX_KERNEL_PARAMETERS, count, 4) == vx.VX_SUCCESS
    assert count[0] == 4 + 7 + 6  # input, filter, bias, output; window and activation; three quantizations
    enum = vx.ffi.new("vx_enum *")
    assert vx.vxQueryKernel(kernel, vx.VX_KERNEL_ENUM, enum, 4) == vx.VX_SUCCESS
    assert enum[0] & 0xFFFFFFFF == (0xFFE << 20) | (1 << 12) | 3  # VX_KERNEL_BASE(VX_ID_USER, 1) + 3 as an int32
    assert kernels.by_enum(enum[0]).name == "org.openvx_nn.nnapi.conv_2d"
    vx.vxReleaseKernel(vx.ffi.new("vx_kernel *", kernel))
    vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx))


def test_dropping_a_compilation_without_release_frees_its_objects():
    ctx = vx.vxCreateContext()
    before = _ctx_refs(ctx)
    c = nnapi.Compilation(quantized_cnn(np.random.default_rng(3)))
    c.finish()
    e = nnapi.Execution(c)
    assert _ctx_refs(ctx) > before
    del c, e
    assert _ctx_refs(ctx) == before
    vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx))


def test_an_nnapi_kernel_runs_as_a_generic_node_from_the_c_api():
    from vxhelp import as_ref, read, release, scalar, status, tensor

    ctx = vx.vxCreateContext()
    q = np.arange(0, 240, 20, dtype=np.uint8).reshape(4, 3)  # OpenVX order: NNAPI [3, 4]
    x, y = tensor(vx, ctx, q), tensor(vx, ctx, np.zeros_like(q))
    enum = (0xFFE << 20) | (1 << 12) | int(OP.RELU6)
    kernel = vx.vxGetKernelByEnum(ctx, enum - (1 << 32))  # the int32 a C vx_enum holds
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxCreateGenericNode(graph, kernel)
    params = [x, y, scalar(vx, ctx, "vx_float32", 0.1, "VX_TYPE_FLOAT32"),
              scalar(vx, ctx, "vx_int32", 100, "VX_TYPE_INT32"),
              scalar(vx, ctx, "vx_float32", 0.05, "VX_TYPE_FLOAT32"), scalar(vx, ctx, "vx_int32", 10, "VX_TYPE_INT32")]
    for i, p in enumerate(params):
        assert vx.vxSetParameterByIndex(node, i, as_ref(vx, p)) == vx.VX_SUCCESS
    assert status(vx, node) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    got = read(vx, y, q.shape, np.uint8)
    want = quantize(np.clip(dequantize(q, 0.1, 100), 0, 6), 0.05, 10)
    np.testing.assert_array_equal(got, want)
    release(vx, node, graph, kernel, *params)
    vx.vxReleaseContext(vx.ffi.new("vx_context *", ctx))
