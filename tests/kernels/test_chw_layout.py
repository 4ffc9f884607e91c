"""The layout conversions at the edges of an NHWC region (``kernels/frontend/chw_layout.py``) against NumPy's
transpose, over random shapes (one-pixel planes, one channel, several items), and their round trip."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import chw_layout


@pytest.mark.parametrize("shape", [(1, 3, 7, 5), (2, 1, 4, 9), (3, 17, 1, 1), (1, 64, 2, 3), (2, 5, 6, 1)])
def test_layout_conversions_are_numpy_transposes_and_invert_each_other(shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[0], x.flat[-1] = -0.0, np.nan
    n, c, h, w = shape
    nhwc = np.full((n, h, w, c), 7.0, np.float32)
    chw_layout.bind(True, x, nhwc)()
    np.testing.assert_array_equal(nhwc, x.transpose(0, 2, 3, 1))
    back = np.full(shape, 7.0, np.float32)
    chw_layout.bind(False, nhwc, back)()
    np.testing.assert_array_equal(back, x)
    assert np.signbit(back.flat[0])


def test_a_strided_array_is_refused_rather_than_misread():
    x = np.zeros((1, 3, 4, 10), np.float32)[..., ::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        chw_layout.bind(True, x, np.zeros((1, 4, 5, 3), np.float32))


@pytest.mark.parametrize("to_nhwc", [True, False])
def test_the_native_entry_shared_with_the_helpers_equals_the_transpose(to_nhwc):
    import ctypes

    from openvx_nn.kernels.engine import gang, isa, workers
    rng = np.random.default_rng(3)
    planes = rng.standard_normal((2, 3, 96, 80)).astype(np.float32)  # large enough to be shared
    pixels = np.ascontiguousarray(planes.transpose(0, 2, 3, 1))
    source, want = (planes, pixels) if to_nhwc else (pixels, planes)
    out = np.full(want.shape, np.nan, np.float32)
    entry = chw_layout.native_layout(to_nhwc, source, out)
    assert gang.lends(entry) == (isa.threads() > 1)
    run = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(entry.address)
    for _ in range(20):
        out[...] = np.nan
        gang.summon(workers.helpers())
        with gang.held():
            assert run(entry.block.ctypes.data) == 0
        np.testing.assert_array_equal(out, want)
