"""The layout conversions at the edges of an NHWC region (``kernels/frontend/chw_layout.py``) against NumPy's
transpose, over random shapes (one-pixel planes, one channel, several items), and their round trip."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.engine import isa
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
    from openvx_nn.kernels.engine.block_transpose import COPY, transpose_region32
    rng = np.random.default_rng(square)
    for rows, cols in [(8, 8), (16, 16), (9, 23), (31, 16), (17, 64), (40, 8)]:
        src = np.zeros((rows, cols + 3), np.float32)  # rows wider than the region: strides of their own
        src[:, :cols] = rng.standard_normal((rows, cols))
        dst = np.full((cols, rows + 5), 9.0, np.float32)
        transpose_region32(src.ctypes.data, src.strides[0], dst.ctypes.data, dst.strides[0], rows, cols, square,
                           COPY)
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


# -- binary16 planes: widened into the pixels, narrowed back -------------------------------------------------------
F16 = np.float16
EDGE_BITS = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7C01, 0xFD55,
                      0x7DFF, 0x7E00, 0xFE01, 0x7FFF, 0x3C00], np.uint16)
"""Signed zeros, subnormals, the smallest normal, the largest half, infinities, signaling and quiet NaNs, one."""


@pytest.fixture(params=["host", "avx2", "plain"])
def copy_route(request, monkeypatch):
    """The copies' squares as this CPU runs them, as an AVX2 machine runs them (8 a side), or the plain loops."""
    cached = [f for f in vars(isa).values() if hasattr(f, "cache_clear")]
    if request.param == "avx2":
        monkeypatch.setenv(isa.ENV_ISA, "avx2")
    if request.param == "plain":
        monkeypatch.setenv(chw_layout.BLOCKS_ENV, "0")
    for f in cached:
        f.cache_clear()
    assert chw_layout.side() == {"host": isa.float_lanes(), "avx2": 8, "plain": 0}[request.param]
    yield request.param
    monkeypatch.undo()
    for f in cached:
        f.cache_clear()


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint16).tobytes()


def _bits32(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint32).tobytes()


def _run_entry(entry) -> None:
    from test_float16_direct import _run_entry as run
    run(entry)


def _halves(rng, shape) -> np.ndarray:
    """Random binary16 patterns, every edge pattern among them."""
    bits = rng.integers(0, 1 << 16, shape, dtype=np.int64).astype(np.uint16)
    flat = bits.reshape(-1)
    flat[rng.permutation(flat.size)[:min(flat.size, EDGE_BITS.size)]] = EDGE_BITS[:min(flat.size, EDGE_BITS.size)]
    return bits.view(F16)


def _singles(rng, shape) -> np.ndarray:
    """float32 values that round every way to binary16: ties, overflow, underflow, NaN classes and infinities."""
    v = (rng.standard_normal(shape) * 2.0 ** rng.integers(-28, 18, shape)).astype(np.float32)
    special = np.array([65519.99, 65520.0, -65504.0, 2.0 ** -25, -2.0 ** -25, 2.0 ** -24 * 1.5, np.inf, -np.inf],
                       np.float32).view(np.uint32)
    nans = np.array([0x7F800001, 0xFF800001, 0x7F801FFF, 0x7F802000, 0x7FC00000, 0xFFFFFFFF], np.uint32)
    flat = v.reshape(-1).view(np.uint32)
    picks = np.concatenate([special, nans])
    flat[rng.permutation(flat.size)[:min(flat.size, picks.size)]] = picks[:min(flat.size, picks.size)]
    return v


@pytest.mark.parametrize("seed", range(6))
def test_layout_copies_widen_and_narrow_binary16_planes_as_numpy(seed, copy_route):
    rng = np.random.default_rng([1640, seed])
    n, c, h, w = (int(rng.integers(1, 3)), int(rng.integers(1, 41)), int(rng.integers(1, 12)),
                  int(rng.integers(1, 41)))
    border = int(rng.integers(0, 3))
    x = _halves(rng, (n, c, h, w))
    want = np.ascontiguousarray(x.astype(np.float32).transpose(0, 2, 3, 1))
    y = _singles(rng, (n, h, w, c))
    with np.errstate(all="ignore"):
        narrowed = np.ascontiguousarray(y.transpose(0, 3, 1, 2)).astype(F16)
    for native_call in (False, True):
        pixels = np.full((n, h + 2 * border, w + 2 * border, c), np.nan, np.float32)
        pixels[:, border:border + h, border:border + w] = -1.0
        planes = np.zeros((n, c, h, w), F16)
        if native_call:
            _run_entry(chw_layout.native_layout(True, x, pixels, border))
            _run_entry(chw_layout.native_layout(False, y, planes))
        else:
            chw_layout.bind(True, x, pixels, border)()
            chw_layout.bind(False, y, planes)()
        assert _bits32(pixels[:, border:border + h, border:border + w]) == _bits32(want)
        ring = np.ones(pixels.shape, bool)
        ring[:, border:border + h, border:border + w] = False
        assert np.isnan(pixels[ring]).all(), "the copy wrote outside the interior"
        assert _bits(planes) == _bits(narrowed)


@pytest.mark.parametrize("half", [False, True])
@pytest.mark.parametrize("border", [0, 1, 3])
def test_three_channel_images_copy_as_numpy_transposes_both_ways(half, border):
    # RGB inputs take a loop of their own (the three channels' rows in step): every value, NaN and -0.0 kept
    rng = np.random.default_rng([3, border, half])
    n, h, w = 2, int(rng.integers(1, 9)), int(rng.choice([1, 7, 16, 33]))
    x = _halves(rng, (n, 3, h, w)) if half else rng.standard_normal((n, 3, h, w)).astype(np.float32)
    if not half:
        x.flat[int(rng.integers(x.size))] = -0.0
        x.flat[int(rng.integers(x.size))] = np.nan
    pixels = np.full((n, h + 2 * border, w + 2 * border, 3), np.nan, np.float32)
    chw_layout.bind(True, x, pixels, border)()
    inner = pixels[:, border:border + h, border:border + w]
    assert _bits32(inner) == _bits32(np.ascontiguousarray(x.astype(np.float32).transpose(0, 2, 3, 1)))
    ring = np.ones(pixels.shape, bool)
    ring[:, border:border + h, border:border + w] = False
    assert np.isnan(pixels[ring]).all(), "the copy wrote outside the interior"
    y = _singles(rng, (n, h, w, 3))
    back = np.zeros((n, 3, h, w), F16 if half else np.float32)
    chw_layout.bind(False, y, back)()
    with np.errstate(all="ignore"):
        want = np.ascontiguousarray(y.transpose(0, 3, 1, 2)).astype(back.dtype)
    assert back.tobytes() == want.tobytes()


def test_layout_copies_refuse_binary16_pixels_and_strided_planes():
    planes = np.zeros((1, 8, 8, 8), F16)
    with pytest.raises(ValueError, match="float32 pixels"):
        chw_layout.bind(True, planes, np.zeros((1, 8, 8, 8), F16))
    assert chw_layout.native_layout(True, np.zeros((1, 8, 8, 16), F16)[..., ::2], np.zeros((1, 8, 8, 8),
                                                                                          np.float32)) is None




@pytest.mark.parametrize("square", (16, 8))
def test_converting_block_transposes_are_numpy_transposes_and_astype(square):
    from openvx_nn.kernels.engine.block_transpose import NARROW, WIDEN, transpose_region32
    rng = np.random.default_rng([1645, square])
    for rows, cols in [(8, 8), (16, 16), (9, 23), (31, 16), (17, 64), (40, 8)]:
        src = np.zeros((rows, cols + 3), F16)
        src[:, :cols] = _halves(rng, (rows, cols))
        dst = np.full((cols, rows + 5), 9.0, np.float32)
        transpose_region32(src.ctypes.data, src.strides[0], dst.ctypes.data, dst.strides[0], rows, cols, square,
                           WIDEN)
        assert _bits32(dst[:, :rows]) == _bits32(src[:, :cols].T.astype(np.float32))
        assert np.all(dst[:, rows:] == 9.0)
        wide = np.zeros((rows, cols + 3), np.float32)
        wide[:, :cols] = _singles(rng, (rows, cols))
        half = np.full((cols, rows + 5), 9.0, F16)
        transpose_region32(wide.ctypes.data, wide.strides[0], half.ctypes.data, half.strides[0], rows, cols, square,
                           NARROW)
        with np.errstate(all="ignore"):
            assert _bits(half[:, :rows]) == _bits(wide[:, :cols].T.astype(F16))
        assert np.all(half[:, rows:] == 9.0)
