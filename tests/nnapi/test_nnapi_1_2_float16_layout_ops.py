"""The TENSOR_FLOAT16 forms API level 29 gives the pools (AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D),
RESIZE_BILINEAR, DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND, in both layouts, against
plain loops written from the Android 10 ``NeuralNetworks.h`` in float64: MAX_POOL_2D and the moves are exact; the
averages, L2 norms and interpolations are computed in float32 or float64 and each output rounded once to float16 (so
within one float16 step of the float64 result's rounding, where it lies near a tie)."""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import F16T, Out, Tensor, boolean, collect_garbage, i32, run  # noqa: F401
from nnapi_reference import pool, same_padding
from test_nnapi_1_1_ops import batch_to_space_reference, space_to_batch_reference
from test_nnapi_1_2_float16 import assert_half, half, ints

from openvx_nn import nnapi

OP = nnapi.OperationType
POOLS = {OP.AVERAGE_POOL_2D: "avg", OP.MAX_POOL_2D: "max", OP.L2_POOL_2D: "l2"}
LAYOUTS = pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])


def to_layout(a, nchw):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2)) if nchw else a


def layout_tail(nchw, flag):
    """The trailing layout flag: always with NCHW, sometimes left out with NHWC (the API level 27 form)."""
    return [boolean(nchw)] if nchw or flag else []


@LAYOUTS
@pytest.mark.parametrize("op", list(POOLS), ids=lambda op: OP(op).name)
def test_float16_pools_round_each_window_once(op, nchw):
    rng = np.random.default_rng(int(op) + 7 * nchw)
    for trial in range(3):
        n, h, w, c = int(rng.integers(1, 3)), int(rng.integers(2, 8)), int(rng.integers(2, 8)), int(rng.integers(1, 5))
        fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        x = half(rng, (n, h, w, c))
        left, right = (int(p) for p in rng.integers(0, fw, 2))  # every window holds an input position
        top, bottom = (int(p) for p in rng.integers(0, fh, 2))
        pads = (left, right, top, bottom)
        if trial == 2:  # implicit SAME
            top, bottom = same_padding(h, fh, sh)
            left, right = same_padding(w, fw, sw)
            pads, head = (left, right, top, bottom), [i32(1)]
        else:
            head = [i32(p) for p in pads]
        want = pool(x.astype(np.float64), POOLS[op], pads, (sw, sh), (fw, fh))
        got = run(op, [Tensor(to_layout(x, nchw)), *head, i32(sw), i32(sh), i32(fw), i32(fh), i32(0),
                       *layout_tail(nchw, trial)], [Out(F16T, to_layout(want, nchw).shape)])[0]
        assert_half(got, to_layout(want, nchw), steps=0 if op == OP.MAX_POOL_2D else 1)


def bilinear_reference(x, out_h, out_w):
    """Output (y, x) reads source (y * height / out_h, x * width / out_w), interpolated between its four
    neighbours, those past the last row or column clamped to it."""
    n, h, w, c = x.shape
    out = np.zeros((n, out_h, out_w, c))
    for b, y, xx, k in np.ndindex(out.shape):
        sy, sx = y * h / out_h, xx * w / out_w
        y0, x0 = int(sy), int(sx)
        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
        dy, dx = sy - y0, sx - x0
        out[b, y, xx, k] = ((1 - dy) * ((1 - dx) * x[b, y0, x0, k] + dx * x[b, y0, x1, k])
                            + dy * ((1 - dx) * x[b, y1, x0, k] + dx * x[b, y1, x1, k]))
    return out


@LAYOUTS
def test_float16_resize_bilinear_rounds_each_output_once(nchw):
    rng = np.random.default_rng(11 + nchw)
    for flag in (False, True):
        x = half(rng, (int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6)), 3))
        oh, ow = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        want = bilinear_reference(x.astype(np.float64), oh, ow)
        got = run(OP.RESIZE_BILINEAR, [Tensor(to_layout(x, nchw)), i32(ow), i32(oh), *layout_tail(nchw, flag)],
                  [Out(F16T, to_layout(want, nchw).shape)])[0]
        assert_half(got, to_layout(want, nchw), steps=1)


def depth_to_space_reference(x, block):
    """"output[b, h*bs + i, w*bs + j, c] = input[b, h, w, (i*bs + j) * depth_out + c]"."""
    n, h, w, c = x.shape
    depth = c // (block * block)
    out = np.empty((n, h * block, w * block, depth), x.dtype)
    for b, y, xx, i, j, k in np.ndindex(n, h, w, block, block, depth):
        out[b, y * block + i, xx * block + j, k] = x[b, y, xx, (i * block + j) * depth + k]
    return out


@LAYOUTS
def test_float16_depth_and_space_moves_copy_values_exactly(nchw):
    rng = np.random.default_rng(13 + nchw)
    block = int(rng.integers(2, 4))
    deep = half(rng, (2, 2, 3, block * block * 2))
    want = depth_to_space_reference(deep, block)
    got = run(OP.DEPTH_TO_SPACE, [Tensor(to_layout(deep, nchw)), i32(block), *layout_tail(nchw, False)],
              [Out(F16T, to_layout(want, nchw).shape)])[0]
    np.testing.assert_array_equal(got, to_layout(want, nchw))
    got = run(OP.SPACE_TO_DEPTH, [Tensor(to_layout(want, nchw)), i32(block), *layout_tail(nchw, True)],
              [Out(F16T, to_layout(deep, nchw).shape)])[0]
    np.testing.assert_array_equal(got, to_layout(deep, nchw))  # the inverse
    x = half(rng, (2, 5, 4, 3))
    block_hw, paddings = (2, 3), ((1, 0), (0, 2))
    want = space_to_batch_reference(x, block_hw, paddings, np.float16(0))
    got = run(OP.SPACE_TO_BATCH_ND, [Tensor(to_layout(x, nchw)), ints(block_hw), ints(paddings),
                                     *layout_tail(nchw, False)], [Out(F16T, to_layout(want, nchw).shape)])[0]
    np.testing.assert_array_equal(got, to_layout(want, nchw))
    back = batch_to_space_reference(want, block_hw)
    got = run(OP.BATCH_TO_SPACE_ND, [Tensor(to_layout(want, nchw)), ints(block_hw), *layout_tail(nchw, True)],
              [Out(F16T, to_layout(back, nchw).shape)])[0]
    np.testing.assert_array_equal(got, to_layout(back, nchw))
