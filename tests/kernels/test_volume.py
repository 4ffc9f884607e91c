"""The 3-D convolution kernel (``kernels/frontend/volume.py``) against a plain loop, with the patch matrix cut into
depth chunks (a small ``PATCH_BYTES``) and whole, grouped and dilated."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from openvx_nn.kernels.frontend import volume


def _loops(x, w, b, stride, dilation, before, after, groups):
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(before, after)))
    o_total, per = w.shape[:2]
    sizes = [volume.extent(x.shape[2 + i], w.shape[2 + i], stride[i], dilation[i], before[i], after[i])
             for i in range(3)]
    y = np.zeros((x.shape[0], o_total, *sizes))
    for n, o, z, r, q in np.ndindex(y.shape):
        g = o // (o_total // groups)
        total = b[o]
        for c, a, h, v in itertools.product(range(per), *(range(k) for k in w.shape[2:])):
            total += w[o, c, a, h, v] * xp[n, g * per + c, z * stride[0] + a * dilation[0],
                                           r * stride[1] + h * dilation[1], q * stride[2] + v * dilation[2]]
        y[n, o, z, r, q] = total
    return y


@pytest.mark.parametrize("patch_bytes", [volume.PATCH_BYTES, 1])
@pytest.mark.parametrize("groups,stride,dilation", [(1, (1, 1, 1), (1, 1, 1)), (2, (2, 1, 2), (1, 2, 1))])
def test_convolution3d_matches_loops(monkeypatch, patch_bytes, groups, stride, dilation):
    monkeypatch.setattr(volume, "PATCH_BYTES", patch_bytes)  # 1: one output depth slice per chunk
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 4, 6, 5, 7))
    w = rng.standard_normal((6, 4 // groups, 2, 3, 2))
    b = rng.standard_normal(6)
    before, after = (1, 0, 1), (0, 2, 1)
    expected = _loops(x, w, b, stride, dilation, before, after, groups)
    out = np.empty(expected.shape)
    volume.convolution3d(x, w, b, out, groups, stride, dilation, before, after)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
