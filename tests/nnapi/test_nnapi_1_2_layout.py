"""API level 29's trailing layout flag on the pools, RESIZE_BILINEAR, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND: with the flag true, input and output are NCHW and the result is the NHWC
result (whose arithmetic the 1.0 and 1.1 tests check against their references) transposed, value for value; with
the flag false it is the NHWC result itself. Randomized shapes, float32 and uint8."""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import F32T, Q8, Out, Tensor, boolean, collect_garbage, i32, run  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType


def nchw(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 3, 1, 2))


def ints(values):
    return Tensor(np.asarray(values, np.int32), const=True)


def _pool(op, rng, explicit):
    size = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if explicit:
        return [i32(int(p)) for p in rng.integers(0, 2, 4)] + [i32(1), i32(2), i32(size[0]), i32(size[1]), i32(1)]
    return [i32(1), i32(2), i32(1), i32(size[0]), i32(size[1]), i32(0)]


CASES = {
    "average-explicit": (OP.AVERAGE_POOL_2D, lambda rng: _pool(OP.AVERAGE_POOL_2D, rng, True), (1, 2)),
    "average-implicit": (OP.AVERAGE_POOL_2D, lambda rng: _pool(OP.AVERAGE_POOL_2D, rng, False), (1, 2)),
    "max-explicit": (OP.MAX_POOL_2D, lambda rng: _pool(OP.MAX_POOL_2D, rng, True), (1, 2)),
    "max-implicit": (OP.MAX_POOL_2D, lambda rng: _pool(OP.MAX_POOL_2D, rng, False), (1, 2)),
    "l2-implicit": (OP.L2_POOL_2D, lambda rng: _pool(OP.L2_POOL_2D, rng, False), (1,)),
    "resize": (OP.RESIZE_BILINEAR, lambda rng: [i32(int(rng.integers(1, 9))), i32(int(rng.integers(1, 9)))], (1,)),
    "depth-to-space": (OP.DEPTH_TO_SPACE, lambda rng: [i32(2)], (1, 2)),
    "space-to-depth": (OP.SPACE_TO_DEPTH, lambda rng: [i32(2)], (1, 2)),
    "batch-to-space": (OP.BATCH_TO_SPACE_ND, lambda rng: [ints([2, 1])], (1, 2)),
    "space-to-batch": (OP.SPACE_TO_BATCH_ND, lambda rng: [ints([2, 2]), ints([[0, 2], [2, 0]])], (1, 2)),
}


def _input(op, rng, q8):
    n, h, w, c = int(rng.integers(1, 3)), 2 * int(rng.integers(1, 4)), 2 * int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if op == OP.DEPTH_TO_SPACE:
        c *= 4
    if op == OP.BATCH_TO_SPACE_ND:
        n *= 2
    if q8:
        return Tensor(rng.integers(0, 256, (n, h, w, c), dtype=np.uint8), scale=0.25, zero_point=100)
    return Tensor(rng.standard_normal((n, h, w, c)).astype(np.float32))


def _value(p):
    return p.value if isinstance(p, Tensor) else p[1]


def _output_shape(op, shape, params):
    """The NHWC result's shape, from the header's formulas."""
    n, h, w, c = shape
    v = [_value(p) for p in params]
    if op in (OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D, OP.L2_POOL_2D):
        if len(v) == 9:
            left, right, top, bottom, sw, sh, fw, fh = v[:8]
            return n, (h + top + bottom - fh) // sh + 1, (w + left + right - fw) // sw + 1, c
        _, sw, sh = v[:3]
        return n, -(-h // sh), -(-w // sw), c
    if op == OP.RESIZE_BILINEAR:
        return n, v[1], v[0], c
    if op == OP.DEPTH_TO_SPACE:
        return n, 2 * h, 2 * w, c // 4
    if op == OP.SPACE_TO_DEPTH:
        return n, h // 2, w // 2, 4 * c
    if op == OP.BATCH_TO_SPACE_ND:
        return n // 2, 2 * h, w, c
    return 4 * n, (h + 2) // 2, (w + 2) // 2, c


def _nhwc_result(op, data, params):
    shape = _output_shape(op, data.value.shape, params)
    kind = Q8 if data.value.dtype == np.uint8 else F32T
    return run(op, [data, *params], [Out(kind, shape, scale=data.scale, zero_point=data.zero_point)])[0]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("case", list(CASES))
def test_the_nchw_flag_gives_the_nhwc_result_transposed(case, seed):
    op, make, kinds = CASES[case]
    for q8 in (False, True)[:len(kinds)]:
        rng = np.random.default_rng(seed)
        data, params = _input(op, rng, q8), make(rng)
        want = _nhwc_result(op, data, params)
        kind = Q8 if q8 else F32T
        out = Out(kind, nchw(want).shape, scale=data.scale, zero_point=data.zero_point)
        as_nchw = Tensor(nchw(data.value), scale=data.scale, zero_point=data.zero_point)
        got, = run(op, [as_nchw, *params, boolean(True)], [out])
        np.testing.assert_array_equal(got, nchw(want))
        out = Out(kind, want.shape, scale=data.scale, zero_point=data.zero_point)
        got, = run(op, [data, *params, boolean(False)], [out])
        np.testing.assert_array_equal(got, want)


def test_a_layout_flag_on_an_input_of_another_rank_is_refused():
    with pytest.raises(nnapi.NNAPIError, match="input 0 .* rank 3"):
        m = nnapi.Model()
        x = m.add_operand(F32T, [2, 2, 2])
        k = m.add_operand(nnapi.OperandType.INT32)
        b = m.add_operand(nnapi.OperandType.BOOL)
        y = m.add_operand(F32T, [2, 2, 2])
        m.add_operation(OP.DEPTH_TO_SPACE, [x, k, b], [y])
