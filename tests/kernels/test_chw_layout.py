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


SQUARES = (16, 8, 0)
"""The squares the copies move: AVX-512's, AVX2's (tested on any CPU: LLVM splits wider vectors), the plain loop."""


@pytest.mark.parametrize("square", SQUARES)
@pytest.mark.parametrize("seed", range(6))
def test_copies_into_and_out_of_a_bordered_buffer_are_numpy_transposes(square, seed, monkeypatch):
    # random shapes around the squares' sides: channels and widths below 8, between, not multiples of 16; batches
    from openvx_nn.kernels.engine import isa
    monkeypatch.setattr(isa, "float_lanes", lambda: square or 16)
    monkeypatch.setenv(chw_layout.BLOCKS_ENV, "1" if square else "0")
    rng = np.random.default_rng([77, seed, square])
    n, c, h, w = (int(rng.integers(1, 4)), int(rng.choice([1, 3, 8, 13, 16, 24, 37, 64])),
                  int(rng.integers(1, 9)), int(rng.choice([2, 7, 8, 15, 16, 17, 33, 56])))
    border = int(rng.integers(0, 4))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    x.flat[int(rng.integers(x.size))] = -0.0
    x.flat[int(rng.integers(x.size))] = np.nan
    want = np.zeros((n, h + 2 * border, w + 2 * border, c), np.float32)
    want[:, border:border + h, border:border + w] = x.transpose(0, 2, 3, 1)
    pixels = np.zeros_like(want)
    chw_layout.bind(True, x, pixels, border)()
    assert pixels.tobytes() == want.tobytes()
    pixels[:, :border] = pixels[:, :, :border] = 5.0  # the border is never read back
    pixels[:, h + border:] = pixels[:, :, w + border:] = 5.0
    back = np.full(x.shape, 7.0, np.float32)
    chw_layout.bind(False, pixels, back, border)()
    assert back.tobytes() == x.tobytes()


@pytest.mark.parametrize("square", (16, 8))
def test_block_transposes_of_any_region_of_eight_or_more_are_numpy_transposes(square):
    from openvx_nn.kernels.engine.block_transpose import transpose_region32
    rng = np.random.default_rng(square)
    for rows, cols in [(8, 8), (16, 16), (9, 23), (31, 16), (17, 64), (40, 8)]:
        src = np.zeros((rows, cols + 3), np.float32)  # rows wider than the region: strides of their own
        src[:, :cols] = rng.standard_normal((rows, cols))
        dst = np.full((cols, rows + 5), 9.0, np.float32)
        transpose_region32(src.ctypes.data, src.strides[0], dst.ctypes.data, dst.strides[0], rows, cols, square)
        assert dst[:, :rows].tobytes() == np.ascontiguousarray(src[:, :cols].T).tobytes()
        assert np.all(dst[:, rows:] == 9.0)


def test_pixels_not_the_planes_shape_inside_the_border_are_refused():
    with pytest.raises(ValueError, match="border of 1"):
        chw_layout.bind(True, np.zeros((1, 3, 4, 5), np.float32), np.zeros((1, 6, 6, 3), np.float32), 1)


@pytest.mark.parametrize("to_nhwc", [True, False])
def test_the_native_entry_with_a_border_shared_with_the_helpers_equals_the_transpose(to_nhwc):
    import ctypes

    from openvx_nn.kernels.engine import gang, workers
    rng = np.random.default_rng(5)
    planes = rng.standard_normal((2, 37, 40, 53)).astype(np.float32)
    pixels = np.zeros((2, 44, 57, 37), np.float32)
    pixels[:, 2:42, 2:55] = planes.transpose(0, 2, 3, 1)
    source, want = (planes, pixels) if to_nhwc else (pixels, planes)
    out = np.zeros(want.shape, np.float32)
    entry = chw_layout.native_layout(to_nhwc, source, out, 2)
    run = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(entry.address)
    for _ in range(5):
        gang.summon(workers.helpers())
        with gang.held():
            assert run(entry.block.ctypes.data) == 0
        assert out.tobytes() == want.tobytes()
