"""The 8x8 block transpose intrinsic against NumPy's transpose, for every element size, on strided rows."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from openvx_nn.kernels.engine.block_transpose import transpose8x8


def _compiled(size: int):
    @numba.njit
    def run(a, b):
        transpose8x8(size, a.ctypes.data, a.strides[0], b.ctypes.data, b.strides[0])
    return run


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64])
def test_block_transpose_moves_each_element_and_touches_nothing_else(dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    source = rng.integers(info.min, info.max, (11, 21), dtype=dtype, endpoint=True)
    block = source[2:10, 5:13]  # rows 21 elements apart, starting mid-row
    target = np.full((10, 17), 7, dtype)
    _compiled(np.dtype(dtype).itemsize)(block, target[1:9, 4:12])
    expected = np.full((10, 17), 7, dtype)
    expected[1:9, 4:12] = block.T
    assert (target == expected).all()
