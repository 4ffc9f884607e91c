"""NNAPI's float32 AVERAGE_POOL_2D, L2_POOL_2D and MAX_POOL_2D have one arithmetic: a node run unbound (the
executor's ``run``) and a bound one (``prepare``) give the same bits, both within float32 rounding of a plain
NumPy reference written from the Android 10 ``NeuralNetworks.h`` (padded positions take no part: the average and
the L2 mean divide by the count of input positions inside the window; the fused activation clamps)."""
from __future__ import annotations

import numpy as np
import pytest

import openvx_nn.operations  # noqa: F401 -- fills the kernel table
from openvx_nn.operations.nnapi.common import NNAPI_KERNELS, Args

CLAMP = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}


def pool_reference(x, mode, pads, strides, size, activation):
    """out[b, i, j, c] over the window rows i*sh - top .. + fh - 1 and columns j*sw - left .. + fw - 1 that lie
    inside the input: their mean, the square root of the mean of their squares, or their maximum."""
    left, right, top, bottom = pads
    sw, sh = strides
    fw, fh = size
    n, h, w, c = x.shape
    out_h, out_w = (h + top + bottom - fh) // sh + 1, (w + left + right - fw) // sw + 1
    out = np.zeros((n, out_h, out_w, c))
    for b in range(n):
        for i in range(out_h):
            for j in range(out_w):
                rows = [y for y in range(i * sh - top, i * sh - top + fh) if 0 <= y < h]
                cols = [z for z in range(j * sw - left, j * sw - left + fw) if 0 <= z < w]
                window = np.array([x[b, y, z] for y in rows for z in cols], np.float64)
                if mode == "average_pool_2d":
                    out[b, i, j] = window.sum(axis=0) / len(window)
                elif mode == "l2_pool_2d":
                    out[b, i, j] = np.sqrt((window ** 2).sum(axis=0) / len(window))
                else:
                    out[b, i, j] = window.max(axis=0)
    low, high = CLAMP[activation]
    return np.minimum(np.maximum(out, low), high)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("op", ["average_pool_2d", "l2_pool_2d", "max_pool_2d"])
def test_unbound_and_bound_float32_pools_agree_bit_for_bit(op, seed):
    rng = np.random.default_rng(700 + seed)
    n, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(1, 12)), int(rng.integers(1, 12)),
                  int(rng.integers(1, 40)))
    fw, fh = int(rng.integers(1, w + 1)), int(rng.integers(1, h + 1))
    left, right = (int(rng.integers(0, fw)) for _ in range(2))
    top, bottom = (int(rng.integers(0, fh)) for _ in range(2))
    sw, sh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    act = int(rng.integers(0, 4))
    x = (rng.standard_normal((n, h, w, c)) * 3).astype(np.float32)
    want = pool_reference(x, op, (left, right, top, bottom), (sw, sh), (fw, fh), act)
    scalars = {"pad_left": left, "pad_right": right, "pad_top": top, "pad_bottom": bottom, "stride_w": sw,
               "stride_h": sh, "filter_w": fw, "filter_h": fh, "activation": act}
    kernel = NNAPI_KERNELS[op]
    unbound, bound = (np.full(want.shape, np.nan, np.float32) for _ in range(2))
    kernel.run(Args({"input": x, "output": unbound}, scalars))
    kernel.prepare(Args({"input": x, "output": bound}, scalars))()
    np.testing.assert_array_equal(unbound.view(np.uint32), bound.view(np.uint32))
    np.testing.assert_allclose(bound, want, rtol=1e-5, atol=1e-6)
