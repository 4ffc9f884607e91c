"""Integer max pooling on contiguous planes (``kernels/openvx/integer_pooling.py``) against the plain reference:
strides 1 to 3 (2 has its own loop), paddings reaching the edges, ceiling-rounded outputs whose last windows lie
partly or wholly past the input, extreme values; serial, spread over the thread pool, and the native entry."""
from __future__ import annotations

import numpy as np
import pytest
from kernel_testing import Q78, S8, U8, random_values
from layer_references import pooling_ref

from openvx_nn.kernels.openvx import pooling
from openvx_nn.kernels.support import native


def _case(rng, fmt):
    width, height = (int(d) for d in rng.integers(1, 40, 2))
    size = tuple(int(s) for s in rng.integers(1, 5, 2))
    pad = tuple(int(rng.integers(0, s)) for s in size)
    stride = tuple(int(s) for s in rng.integers(1, 4, 2))
    # ceiling rounding: one more output than floor where the stride leaves a remainder (a window past the input)
    outs = tuple(max(1, -(-(extent + 2 * p - s) // st) + 1)
                 for extent, p, s, st in zip((width, height), pad, size, stride))
    dims = (width, height) + tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(1, 3))))
    x = random_values(rng, fmt, dims)
    x.flat[rng.integers(0, x.size, 3)] = np.iinfo(fmt.dtype).min  # extreme values: lowest and highest
    x.flat[rng.integers(0, x.size, 3)] = np.iinfo(fmt.dtype).max
    return x, outs + dims[2:], size, pad, stride


@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
@pytest.mark.parametrize("seed", range(12))
def test_max_on_planes_matches_the_reference(seed, fmt):
    rng = np.random.default_rng([77, seed, [U8, S8, Q78].index(fmt)])
    x, out_shape, size, pad, stride = _case(rng, fmt)
    x = np.asfortranarray(x)
    assert pooling._operands(x, np.empty(out_shape, x.dtype, order="F"), True, x, (*size, *pad, *stride))[0] == \
        "max_planes"
    expected = pooling_ref(x, out_shape, fmt, True, *size, *pad, *stride)
    for parallel in (False, True):
        out = np.full(out_shape, 7, x.dtype, order="F")
        pooling.pooling(x, out, True, *size, *pad, *stride, parallel=parallel)
        np.testing.assert_array_equal(out, expected, err_msg=f"parallel={parallel}")
    out = np.full(out_shape, 7, x.dtype, order="F")
    entry = pooling.native_entry(x, out, True, *size, *pad, *stride)
    assert native.run(entry) == 0
    np.testing.assert_array_equal(out, expected, err_msg="native entry")
