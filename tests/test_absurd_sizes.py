"""No padding, stride, dilation or size can make verification slow: the stride a windowed layer infers is
computed in closed form, and values past the supported extent are a clear error, from Python, from C and
from a ``.nnapi`` file (each must return within a second)."""
from __future__ import annotations

import random
import time

import numpy as np
import pytest
from conftest import compile_c, run_c

from openvx_nn.api import Context, VXError
from openvx_nn.operations.geometry import MAX_EXTENT, infer_stride

HUGE = 2**40
LIMIT_S = 1.0


def reference_stride(extent: int, pad: int, kernel: int, out: int, ceiling: bool) -> int | None:
    """The seed's rule read literally: the smallest positive stride whose output size is ``out``."""
    span = extent + 2 * pad - kernel
    if span < 0:
        return None
    for stride in range(1, span + 2):  # a stride past the span gives one output, as span + 1 does
        steps = span / stride
        size = (int(np.ceil(steps)) if ceiling else int(np.floor(steps))) + 1
        if size == out:
            return stride
    return None


def test_the_inferred_stride_is_the_smallest_that_gives_the_output_size():
    rng = random.Random(22)
    for _ in range(3000):
        extent, pad, kernel = rng.randint(0, 40), rng.randint(0, 5), rng.randint(1, 9)
        out, ceiling = rng.randint(-1, 45), rng.random() < 0.5
        assert infer_stride(extent, pad, kernel, out, ceiling) == reference_stride(extent, pad, kernel, out, ceiling)


@pytest.mark.parametrize("ceiling", [False, True])
def test_inferring_a_stride_over_an_enormous_span_is_immediate(ceiling):
    begin = time.perf_counter()
    for out in (1, 2, 13, 1000, 2**20):
        stride = infer_stride(13, HUGE, 3, out, ceiling)
        if ceiling and out == 1:  # no stride rounds a non-empty span up to zero steps
            assert stride is None
            continue
        span = 13 + 2 * HUGE - 3
        got = (-(-span // stride) if ceiling else span // stride) + 1
        assert got == out and (stride == 1 or ((-(-span // (stride - 1)) if ceiling else span // (stride - 1)) + 1) != out)
    assert time.perf_counter() - begin < LIMIT_S


def _verify_within_a_second(build) -> VXError | None:
    """Build a one-layer graph with ``build(ctx, g)``, verify it, and return the error (None if it verified)."""
    begin = time.perf_counter()
    error = None
    with Context() as ctx, ctx.graph() as g:
        try:
            build(ctx, g)
            g.verify()
        except VXError as err:
            error = err
    assert time.perf_counter() - begin < LIMIT_S
    return error


def _u8(ctx, *shape):
    return ctx.tensor(shape=shape, dtype=np.uint8)


W = np.ones((3, 3, 4, 8), np.uint8)
ABSURD = [
    ("convolution padding", lambda c, g: g.convolution(_u8(c, 13, 13, 4), W, None, _u8(c, 13, 13, 8), padding=HUGE)),
    ("convolution padding, one output", lambda c, g: g.convolution(_u8(c, 13, 13, 4), W, None, _u8(c, 1, 1, 8),
                                                                   padding=(HUGE, 1))),
    ("convolution dilation", lambda c, g: g.convolution(_u8(c, 13, 13, 4), W, None, _u8(c, 13, 13, 8),
                                                        dilation=(0, HUGE))),
    ("convolution padding at the limit", lambda c, g: g.convolution(_u8(c, 13, 13, 4), W, None, _u8(c, 7, 7, 8),
                                                                    padding=MAX_EXTENT // 2)),
    ("convolution ceiling", lambda c, g: g.convolution(_u8(c, 13, 13, 4), W, None, _u8(c, 5, 5, 8), padding=2**29,
                                                       ds_rounding="ceiling")),
    ("deconvolution a", lambda c, g: g.deconvolution(_u8(c, 1, 1, 4), W, None, _u8(c, 3, 3, 8), a=HUGE)),
    ("deconvolution padding", lambda c, g: g.deconvolution(_u8(c, 5, 5, 4), W, None, _u8(c, 13, 13, 8),
                                                           padding=HUGE)),
    ("max pooling window", lambda c, g: g.max_pool(_u8(c, 13, 13, 4), size=HUGE, out=_u8(c, 1, 1, 4),
                                                   padding=HUGE - 1)),
    ("average pooling padding", lambda c, g: g.avg_pool(_u8(c, 13, 13, 4), size=(3, 3), out=_u8(c, 6, 6, 4),
                                                        padding=(HUGE, 1))),
]


@pytest.mark.parametrize("build", [b for _, b in ABSURD], ids=[name for name, _ in ABSURD])
def test_a_layer_with_absurd_geometry_is_decided_within_a_second(build):
    error = _verify_within_a_second(build)
    if error is not None:  # the message names the parameter and the value
        assert "exceeds the largest supported extent" in str(error) or "no stride" in str(error) \
            or "too large" in str(error) or "must be smaller" in str(error) or "no upscale" in str(error), str(error)


def test_padding_past_the_supported_extent_is_an_invalid_value_naming_it():
    error = _verify_within_a_second(ABSURD[0][1])
    assert error is not None and error.status_name == "VX_ERROR_INVALID_VALUE"
    assert "padding 1099511627776" in str(error)


C_REPRODUCER = r"""
#define _POSIX_C_SOURCE 199309L
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <stdio.h>
#include <time.h>
int main(void) {
    vx_context ctx = vxCreateContext();
    vx_graph g = vxCreateGraph(ctx);
    vx_size in[3] = {13, 13, 4}, w[4] = {3, 3, 4, 8}, out[3] = {13, 13, 8};
    vx_tensor x = vxCreateTensor(ctx, 3, in, VX_TYPE_UINT8, 0);
    vx_tensor k = vxCreateTensor(ctx, 4, w, VX_TYPE_UINT8, 0);
    vx_tensor y = vxCreateTensor(ctx, 3, out, VX_TYPE_UINT8, 0);
    vx_nn_convolution_params_t p = {(vx_size)1 << 40, (vx_size)1 << 40, VX_CONVERT_POLICY_SATURATE,
                                    VX_ROUND_POLICY_TO_ZERO, VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0};
    struct timespec a, b;
    vx_status s;
    vxConvolutionLayer(g, x, k, NULL, &p, sizeof p, y);
    clock_gettime(CLOCK_MONOTONIC, &a);
    s = vxVerifyGraph(g);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%d %.3f\n", (int)s, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    vxReleaseContext(&ctx);
    return 0;
}
"""


def test_the_c_reproducer_gets_an_error_status_within_a_second(vx):
    result = run_c(compile_c(C_REPRODUCER, "absurd_padding"), timeout=60)
    assert result.returncode == 0, result.stderr
    status, seconds = result.stdout.split()
    assert int(status) == vx.VX_ERROR_INVALID_VALUE
    assert float(seconds) < LIMIT_S


def _nnapi_conv(pad: int, stride: int, out: int, path):
    from openvx_nn import nnapi
    from openvx_nn.nnapi.model_file import load_model
    T = nnapi.OperandType
    m = nnapi.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [1, 6, 6, 2])
    w = m.add_operand(T.TENSOR_FLOAT32, [8, 3, 3, 2])
    m.set_operand_value(w, np.ones((8, 3, 3, 2), np.float32))
    b = m.add_operand(T.TENSOR_FLOAT32, [8])
    m.set_operand_value(b, np.zeros(8, np.float32))
    scalars = [m.add_operand(T.INT32) for _ in range(7)]
    for k, value in zip(scalars, (pad, pad, pad, pad, stride, stride, 0)):
        m.set_operand_value(k, value)
    y = m.add_operand(T.TENSOR_FLOAT32, [1, out, out, 8])
    m.add_operation(nnapi.OperationType.CONV_2D, [x, w, b] + scalars, [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    m.save(path)
    return load_model(path)


def test_a_nnapi_file_with_enormous_padding_compiles_within_a_second(tmp_path):
    from openvx_nn.nnapi import hal
    hal.Device().prepare_model(_nnapi_conv(1, 1, 6, tmp_path / "small.nnapi"))  # kernels compiled once
    model = _nnapi_conv(2**30, 2**30, 3, tmp_path / "huge.nnapi")  # the largest padding int32 holds
    begin = time.perf_counter()
    hal.Device().prepare_model(model)
    assert time.perf_counter() - begin < LIMIT_S
