"""A rebind keeps the calls whose nodes read what they read when bound (``core/compiled.py``) and
binds afresh exactly the others; either way every run computes from the current memory and values."""
from __future__ import annotations

import numpy as np
from test_tensor_support import HOST, pointer, sizes

from openvx_nn import vx
from openvx_nn.core import reference


def _model(handle):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", handle)), reference.Reference)


def _expected(a, b, scale):
    """relu(a) * relu(b) * scale, int16, saturated, truncated toward zero (a plain reference)."""
    product = np.maximum(a.astype(np.int64), 0) * np.maximum(b.astype(np.int64), 0) * scale
    return np.clip(np.trunc(product), -32768, 32767).astype(np.int16)


def test_a_rebind_keeps_the_calls_that_still_hold_and_rebinds_the_others(ctx):
    rng = np.random.default_rng(21)
    shape = tuple(int(n) for n in rng.integers(1, 6, size=3))
    a, b, other = (rng.integers(-200, 200, size=shape).astype(np.int16) for _ in range(3))
    result = np.zeros(shape, np.int16)
    dims, strides = sizes(shape[::-1]), sizes(np.array(a.strides[::-1]))

    def from_handle(array):
        return vx.vxCreateTensorFromHandle(ctx, 3, dims, vx.VX_TYPE_INT16, 0, strides, pointer(array), HOST)

    x, y, out = from_handle(a), from_handle(b), from_handle(result)
    ra, rb = (vx.vxCreateTensor(ctx, 3, dims, vx.VX_TYPE_INT16, 0) for _ in range(2))
    value = vx.ffi.new("vx_float32 *", 1.0)
    scale = vx.vxCreateScalar(ctx, vx.VX_TYPE_FLOAT32, value)
    g = vx.vxCreateGraph(ctx)
    nodes = [vx.vxActivationLayer(g, x, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, ra),
             vx.vxActivationLayer(g, y, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, rb),
             vx.vxTensorMultiplyNode(g, ra, rb, scale, vx.VX_CONVERT_POLICY_SATURATE,
                                     vx.VX_ROUND_POLICY_TO_ZERO, out)]
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS
    assert np.array_equal(result, _expected(a, b, 1.0))
    graph = _model(g)
    relu_x, relu_y, multiply = graph.plan.calls

    graph.settings_changed()  # rebinds; nothing any node reads moved
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS
    assert all(new is old for new, old in zip(graph.plan.calls, (relu_x, relu_y, multiply)))

    value[0] = 2.5
    assert vx.vxCopyScalar(scale, value, vx.VX_WRITE_ONLY, HOST) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS
    assert np.array_equal(result, _expected(a, b, 2.5))
    calls = graph.plan.calls
    assert calls[0] is relu_x and calls[1] is relu_y and calls[2] is not multiply
    multiply = calls[2]

    previous = vx.ffi.new("void **")
    assert vx.vxSwapTensorHandle(x, pointer(other), previous) == vx.VX_SUCCESS  # x's memory moved
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS
    assert np.array_equal(result, _expected(other, b, 2.5))
    calls = graph.plan.calls
    assert calls[0] is not relu_x and calls[1] is relu_y and calls[2] is multiply
    b[...] = rng.integers(-200, 200, size=shape)  # new contents, same memory: no rebind needed
    assert vx.vxSwapTensorHandle(x, pointer(a), previous) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(g) == vx.VX_SUCCESS
    assert np.array_equal(result, _expected(a, b, 2.5))
    assert vx.vxSwapTensorHandle(x, vx.ffi.NULL, previous) == vx.VX_SUCCESS  # no memory: not reused
    assert vx.vxProcessGraph(g) == vx.VX_ERROR_NO_MEMORY
    for handle in (*nodes, g, x, y, out, ra, rb, scale):
        assert vx.vxReleaseReference(vx.ffi.new("vx_reference *", vx.ffi.cast("vx_reference", handle))) == 0
