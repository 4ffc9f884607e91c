"""The fast float32 NHWC kernels of the NNAPI layers against the float64 NumPy kernels they replace.

The references are ``nhwc_convolution``, ``nhwc_pooling`` and ``elementwise_real`` (float64 sums, one
rounding to float32), which uint8 still uses and which ``tests/nnapi`` checks against plain loops. The
tolerance is docs/nnapi.md's: a sum of ``n`` products may differ by ``(n + 2) * 2**-24 * S``, ``S`` the
same sum over absolute values (bias included); maxima, ADD and MUL are exact.
"""
import numpy as np
import pytest

from openvx_nn.kernels.frontend import elementwise_real, nhwc_convolution, nhwc_pooling
from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.frontend import float_depthwise as fdepthwise
from openvx_nn.kernels.frontend import float_elementwise as felementwise
from openvx_nn.kernels.frontend import float_pooling as fpooling
from openvx_nn.kernels.frontend.float_microkernel import ROW_VECTORS

U = 2.0 ** -24
CASES = 24
BLOCKS = (None, (2, 8), (1, 8), (2, 16), (1, 16), (3, 16), (ROW_VECTORS, 8), (ROW_VECTORS, 16), (3, 8))
"""Packings of convolution filters: the CPU's choice, then every tile shape by (vectors, lanes)."""
ROWS = {(2, 8): 6, (1, 8): 12, (2, 16): 8, (1, 16): 12, (3, 16): 8, (ROW_VECTORS, 8): 1, (ROW_VECTORS, 16): 1,
        (3, 8): 8}
"""Pixels of a tile by (vectors, lanes)."""


def _window(rng, max_kernel=4):
    """A random layer geometry: input extent, kernel, strides (w, h), asymmetric pads (l, r, t, b), output."""
    while True:
        h, w = int(rng.integers(1, 13)), int(rng.integers(1, 13))
        kh, kw = int(rng.integers(1, max_kernel + 1)), int(rng.integers(1, max_kernel + 1))
        sw, sh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        pads = tuple(int(p) for p in rng.integers(0, 4, 4))
        oh, ow = (h + pads[2] + pads[3] - kh) // sh + 1, (w + pads[0] + pads[1] - kw) // sw + 1
        if oh >= 1 and ow >= 1 and h + pads[2] + pads[3] >= kh and w + pads[0] + pads[1] >= kw:
            return (h, w), (kh, kw), (sw, sh), pads, (oh, ow)


def _values(rng, shape, edge=False):
    x = rng.standard_normal(shape).astype(np.float32)
    if edge:  # large, tiny and exactly-zero values in one tensor
        x.flat[rng.integers(0, x.size, max(1, x.size // 5))] = 0.0
        x *= np.float32(2.0) ** rng.integers(-20, 20, shape).astype(np.float32)
    return x


def _assert_within(got, want, bound):
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), f"error {err[worst]} above the bound {bound[worst]} at {worst}"


@pytest.mark.parametrize("case", range(CASES))
def test_conv2d_matches_the_float64_kernel(case):
    rng = np.random.default_rng(100 + case)
    (h, w), (kh, kw), strides, pads, (oh, ow) = _window(rng)
    n, c = int(rng.integers(1, 4)), int(rng.integers(1, 20))
    o = int(rng.choice([1, 3, 8, 9, 16, 17, 33, int(rng.integers(1, 70))]))
    act = case % 4
    x, wt = _values(rng, (n, h, w, c), edge=case % 3 == 0), _values(rng, (o, kh, kw, c))
    bias = _values(rng, (o,)) if case % 5 else None
    want, span = np.empty((n, oh, ow, o), np.float32), np.empty((n, oh, ow, o), np.float32)
    nhwc_convolution.conv2d(x, wt, bias, want, pads, strides, act)
    nhwc_convolution.conv2d(np.abs(x), np.abs(wt), None if bias is None else np.abs(bias), span, pads, strides, 0)
    first = None
    for block in BLOCKS:  # the CPU's choice, then every tile shape (16-lane ones run as two halves without AVX-512)
        got = np.full((n, oh, ow, o), np.nan, np.float32)
        fconv.conv2d(x, fconv.pack_conv(wt, block), fconv.bias_or_zeros(bias, o), got, pads, strides, act)
        _assert_within(got, want, (kh * kw * c + 3) * U * span.astype(np.float64))
        if first is None:
            first = got
        np.testing.assert_array_equal(got, first)  # each lane sums in one order whatever the tile: the same bits


@pytest.mark.parametrize(("n", "size", "wide", "k", "o", "rows"), [
    (1, 7, 7, 3, 160, 10), (1, 14, 14, 1, 40, 10), (1, 14, 14, 3, 40, 12), (2, 7, 7, 3, 64, 10),
    (2, 7, 7, 1, 64, 10), (1, 21, 21, 1, 33, 10), (1, 5, 7, 1, 48, 7), (1, 3, 7, 3, 40, 7), (1, 7, 11, 3, 33, 10)])
def test_maps_of_sevens_take_ten_or_seven_row_tiles_with_the_same_bits(n, size, wide, k, o, rows):
    # maps of a multiple of 7 pixels but not of 8 on two 16-lane vectors: 10-row tiles where they pad a twentieth
    # or less (7x7, 14x14: the short last tile repeats a pixel), else 7-row ones (5x7, 3x7: none), unless several
    # filter rows take 12-row ones (14x14 3x3); with and without a residual: within the float64 bound, and the
    # same bits as the other tile shapes
    rng = np.random.default_rng(size * o + k)
    assert fconv.tile_rows(2, 16, n * size * wide, k) == rows
    assert fconv.tile_rows(2, 16, n * 8 * 8) == 8 and fconv.tile_rows(1, 16, n * size * wide) == 12
    c = 24
    x, wt = _values(rng, (n, size + k - 1, wide + k - 1, c)), _values(rng, (o, k, k, c))
    bias, residual = _values(rng, (o,)), _values(rng, (n, size, wide, o))
    plain, span = np.empty((n, size, wide, o), np.float32), np.empty((n, size, wide, o), np.float32)
    nhwc_convolution.conv2d(x, wt, bias, plain, (0, 0, 0, 0), (1, 1), 0)
    nhwc_convolution.conv2d(np.abs(x), np.abs(wt), np.abs(bias), span, (0, 0, 0, 0), (1, 1), 0)
    for res in (None, residual):
        want = plain.astype(np.float64) + (0 if res is None else res)
        results = []
        for block in ((2, 16), (1, 16), (2, 8), (3, 8)):
            got = np.full(plain.shape, np.nan, np.float32)
            fconv.conv2d(x, fconv.pack_conv(wt, block), bias, got, (0, 0, 0, 0), (1, 1), 0, res)
            _assert_within(got, want, (k * k * c + 4) * U * (span.astype(np.float64) + (0 if res is None else
                                                                                      np.abs(res))))
            results.append(got)
        for got in results[1:]:
            np.testing.assert_array_equal(got, results[0])


@pytest.mark.parametrize(("n", "size", "k", "stride", "pad", "o"), [
    (1, 10, 3, 1, 1, 40), (2, 10, 3, 1, 0, 64), (1, 14, 3, 1, 1, 32), (1, 23, 5, 2, 2, 33), (1, 29, 11, 4, 0, 96)])
def test_layers_of_several_filter_rows_take_twelve_row_tiles_with_the_same_bits(n, size, k, stride, pad, o):
    # two 16-lane vectors and more than one filter row: 12-row tiles (short last tiles, padding, strides, a last
    # block of fewer channels, a residual), within the float64 bound and the same bits as the other tile shapes;
    # 7x7 maps take 10-row tiles, one filter row its 8-row ones
    rng = np.random.default_rng(31 * size + o)
    oh = (size + 2 * pad - k) // stride + 1
    pixels = n * oh * oh
    assert fconv.tile_rows(2, 16, pixels, k) == 12
    assert fconv.tile_rows(2, 16, 49, 3) == 10 and fconv.tile_rows(2, 16, 3136, 1) == 8
    assert fconv.tile_rows(2, 8, pixels, k) == 6 and fconv.tile_rows(1, 16, pixels, k) == 12
    c = 5
    x, wt, bias = _values(rng, (n, size, size, c)), _values(rng, (o, k, k, c)), _values(rng, (o,))
    residual = _values(rng, (n, oh, oh, o))
    pads = (pad,) * 4
    plain, span = np.empty((n, oh, oh, o), np.float32), np.empty((n, oh, oh, o), np.float32)
    nhwc_convolution.conv2d(x, wt, bias, plain, pads, (stride, stride), 0)
    nhwc_convolution.conv2d(np.abs(x), np.abs(wt), np.abs(bias), span, pads, (stride, stride), 0)
    for res in (None, residual):
        want = plain.astype(np.float64) + (0 if res is None else res)
        results = []
        for block in ((2, 16), (1, 16), (2, 8), (3, 8)):
            got = np.full(plain.shape, np.nan, np.float32)
            fconv.conv2d(x, fconv.pack_conv(wt, block), bias, got, pads, (stride, stride), 0, res)
            _assert_within(got, want, (k * k * c + 4) * U * (span.astype(np.float64) + (0 if res is None else
                                                                                      np.abs(res))))
            results.append(got)
        for got in results[1:]:
            np.testing.assert_array_equal(got, results[0])


@pytest.mark.parametrize("case", range(12))
def test_conv2d_with_a_residual_and_any_panel_width_matches_the_float64_kernel(case, monkeypatch):
    # conv -> add -> clip in one epilogue; panels of 1-3 blocks of output channels (PANEL_BYTES small) or all
    # blocks in one; a residual that is not contiguous, or is the output itself (read before written), is copied.
    rng = np.random.default_rng(700 + case)
    (h, w), (kh, kw), strides, pads, (oh, ow) = _window(rng)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 24))
    o = int(rng.choice([5, 8, 16, 24, 33, 48, int(rng.integers(1, 70))]))
    act = case % 4
    vecs, lanes = BLOCKS[1 + case % 4] if case % 3 == 1 else fconv.block_shape(o)
    block_bytes = kh * kw * c * vecs * lanes * 4
    monkeypatch.setattr(fconv, "PANEL_BYTES", block_bytes * int(rng.integers(1, 4)) if case % 3 else 1 << 30)
    monkeypatch.setattr(fconv, "PANELS_ABOVE", 0)
    x, wt = _values(rng, (n, h, w, c), edge=case % 5 == 0), _values(rng, (o, kh, kw, c))
    bias = _values(rng, (o,))
    residual = (4 * _values(rng, (n, oh, ow, o + 3), edge=case % 4 == 1))[..., :o] if case % 4 == 2 else \
        4 * _values(rng, (n, oh, ow, o), edge=case % 4 == 1)
    plain, span = np.empty((n, oh, ow, o), np.float32), np.empty((n, oh, ow, o), np.float32)
    nhwc_convolution.conv2d(x, wt, bias, plain, pads, strides, 0)
    nhwc_convolution.conv2d(np.abs(x), np.abs(wt), np.abs(bias), span, pads, strides, 0)
    low, high = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[act]
    want = np.clip(plain.astype(np.float64) + residual, low, high)
    bound = (kh * kw * c + 4) * U * (span.astype(np.float64) + np.abs(residual))
    got = np.full((n, oh, ow, o), np.nan, np.float32)
    if case == 3:  # the residual is the output array itself
        got[...] = residual
        residual = got
    packed = fconv.pack_conv(wt, (vecs, lanes))
    fconv.conv2d(x, packed, bias, got, pads, strides, act, residual)
    _assert_within(got, want, bound)
    rows = fconv.tile_rows(vecs, lanes, n * oh * ow, kh) if vecs * lanes == 32 else ROWS[vecs, lanes]
    assert rows in (ROWS[vecs, lanes], 7, 10, 12)
    assert fconv.work_units(packed, n * oh * ow)[1] >= -(-n * oh * ow // rows)


@pytest.mark.parametrize(("channels", "narrow", "wide"), [
    (1, (1, 8), (1, 8)), (8, (1, 8), (1, 8)), (9, (2, 8), (2, 8)), (15, (2, 8), (2, 8)), (16, (2, 8), (1, 16)),
    (17, (1, 8), (2, 16)), (20, (1, 8), (2, 16)), (24, (1, 8), (2, 16)), (25, (2, 8), (2, 16)), (32, (2, 8), (2, 16)),
    (33, (1, 8), (3, 16)), (40, (1, 8), (3, 16)), (48, (2, 8), (3, 16)), (64, (2, 8), (2, 16)), (72, (1, 8), (2, 16)),
    (80, (2, 8), (2, 16)), (112, (2, 8), (2, 16)), (144, (2, 8), (3, 16)), (192, (2, 8), (2, 16)),
    (240, (2, 8), (3, 16)), (1000, (1, 8), (3, 16))])
def test_filters_are_packed_in_blocks_of_the_cpus_vectors(channels, narrow, wide):
    # (vectors, lanes) of a block with AVX2's 8 lanes and with AVX-512's 16 (16 for more than 16 channels, or 16).
    # 8 lanes: two vectors unless one vector's worth or less is left over a multiple of two. 16 lanes: three
    # vectors where they pad fewer channels than two, else two (one only for 16 channels)
    assert fconv.block_shape(channels, 8) == narrow
    assert fconv.block_shape(channels, 16) == wide
    w = np.arange(1, channels * 3 + 1, dtype=np.float32).reshape(channels, 1, 1, 3)
    for vecs, lanes in (narrow, wide):
        packed = fconv.pack_conv(w, (vecs, lanes))
        block = vecs * lanes
        assert packed.shape == (-(-channels // block), 1, 3, vecs, lanes)
        # output channel j of block b at [b, 0, i, j // lanes, j % lanes]; the padding channels zero
        flat = packed.reshape(-1, 3, block).transpose(0, 2, 1).reshape(-1, 3)
        np.testing.assert_array_equal(flat[:channels], w.reshape(channels, 3))
        assert not flat[channels:].any()
    for lanes in (8, 16):  # a batch of one row fills a tile of 6 or 8 rows better than one of 12
        vecs_fc, lanes_fc = fconv.pack_fc(w.reshape(channels, 3), lanes).shape[3:]
        assert vecs_fc == (2 if channels > lanes_fc else 1) and lanes_fc == fconv.block_shape(channels, lanes)[1]
        # one input row: the one-row tiles of ROW_VECTORS vectors, unless one vector holds every unit
        vecs_row = fconv.pack_fc(w.reshape(channels, 3), lanes, rows=1).shape[3]
        assert vecs_row == (ROW_VECTORS if channels > lanes_fc else 1)


@pytest.mark.parametrize("split", [False, True])
def test_a_cpu_of_halved_wide_multiply_adds_packs_multiples_of_24_channels_in_three_narrow_vectors(split,
                                                                                                    monkeypatch):
    # where a 512-bit FMA costs two 256-bit ones (Zen 4), 24 or 72 channels take blocks of 3 x 8 lanes (no padded
    # lane); multiples of 16 and other counts keep block_shape's choice; elsewhere nothing changes
    monkeypatch.setattr(fconv.isa, "split_wide_fma", lambda: split)
    monkeypatch.setattr(fconv.isa, "float_lanes", lambda: 16)
    for channels in (8, 16, 24, 40, 48, 72, 96, 120, 144):
        want = (3, 8) if split and channels % 24 == 0 and channels % 16 else fconv.block_shape(channels)
        assert fconv.conv_block_shape(channels) == want
        w = np.ones((channels, 1, 1, 3), np.float32)
        assert fconv.pack_conv(w, pixels=64).shape[3:] == want


@pytest.mark.parametrize(("value", "want"), [("0", False), ("1", True)])
def test_the_split_fma_variable_overrides_the_cpu_check(value, want, monkeypatch):
    from openvx_nn.kernels.engine import isa
    monkeypatch.setenv(isa.ENV_SPLIT_FMA, value)
    isa.split_wide_fma.cache_clear()
    try:
        assert isa.split_wide_fma() is want
    finally:
        monkeypatch.delenv(isa.ENV_SPLIT_FMA)
        isa.split_wide_fma.cache_clear()


@pytest.mark.parametrize(("pixels", "units"), [(1, 1000), (49, 960), (49, 16), (3136, 64)])
def test_a_layer_of_few_pixel_tiles_is_cut_into_enough_units_to_share(pixels, units):
    # a fully connected row or a 7x7 map: its blocks are split into panels, to MIN_UNITS units or one block each
    wp = fconv.pack_conv(np.zeros((units, 1, 1, 8), np.float32))
    n_blocks, rows = wp.shape[0], fconv.tile_rows(*wp.shape[3:], pixels)
    panel, n_units = fconv.work_units(wp, pixels)
    tiles = -(-pixels // rows)
    assert n_units == -(-n_blocks // panel) * tiles
    assert n_units >= min(fconv.MIN_UNITS, n_blocks * tiles)
    if tiles >= fconv.MIN_UNITS:
        assert panel == n_blocks  # enough tiles: every block in one panel (the input rows stay in L1 across them)


def test_a_residual_of_another_shape_is_refused():
    x, wt = np.zeros((1, 4, 4, 3), np.float32), np.zeros((5, 1, 1, 3), np.float32)
    out = np.empty((1, 4, 4, 5), np.float32)
    with pytest.raises(ValueError, match="residual has shape"):
        fconv.conv2d(x, fconv.pack_conv(wt), np.zeros(5, np.float32), out, (0, 0, 0, 0), (1, 1), 0,
                     np.zeros((1, 4, 4, 4), np.float32))


@pytest.mark.parametrize("case", range(CASES))
def test_depthwise_matches_the_float64_kernel(case):
    rng = np.random.default_rng(200 + case)
    if case % 3 == 0:  # the micro-kernel's case: 3x3, multiplier 1, channels in whole vectors of 8
        (h, w), strides = (int(rng.integers(3, 14)), int(rng.integers(3, 14))), (1 + case % 2, 1 + case % 2)
        pads, (kh, kw), m, c = tuple(int(p) for p in rng.integers(0, 2, 4)), (3, 3), 1, 8 * int(rng.integers(1, 5))
        oh, ow = (h + pads[2] + pads[3] - 3) // strides[1] + 1, (w + pads[0] + pads[1] - 3) // strides[0] + 1
    else:
        (h, w), (kh, kw), strides, pads, (oh, ow) = _window(rng)
        m, c = int(rng.integers(1, 4)), int(rng.integers(1, 20))
    n, act = int(rng.integers(1, 3)), case % 4
    x, wt = _values(rng, (n, h, w, c), edge=case % 4 == 1), _values(rng, (1, kh, kw, c * m))
    bias = _values(rng, (c * m,)) if case % 5 else None
    want, span = np.empty((n, oh, ow, c * m), np.float32), np.empty((n, oh, ow, c * m), np.float32)
    nhwc_convolution.depthwise_conv2d(x, wt, bias, want, pads, strides, m, act)
    nhwc_convolution.depthwise_conv2d(np.abs(x), np.abs(wt), None if bias is None else np.abs(bias), span, pads,
                                      strides, m, 0)
    results = []
    for lanes in (None, 8, 16):  # the CPU's widest vectors, then each width (16 also ends on a vector of 8)
        got = np.full(want.shape, np.nan, np.float32)
        fdepthwise.depthwise_conv2d(x, fdepthwise.pack_depthwise(wt), fconv.bias_or_zeros(bias, c * m), got, pads,
                                    strides, m, act, lanes)
        _assert_within(got, want, (kh * kw + 3) * U * span.astype(np.float64))
        results.append(got)
    for got in results[1:]:
        np.testing.assert_array_equal(got, results[0])  # a channel's sum has one order whatever the width


@pytest.mark.parametrize("case", range(8))
def test_depthwise_in_whole_vectors_matches_the_float64_kernel_at_every_edge(case):
    # Multiplier 1 and channels in vectors of 8: interior 3x3 windows and every other window (edges, pads
    # wider than the window, other sizes) on the micro-kernels.
    rng = np.random.default_rng(250 + case)
    kh, kw = (3, 3) if case % 2 == 0 else (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    h, w = int(rng.integers(1, 12)), int(rng.integers(1, 12))
    pads = tuple(int(p) for p in rng.integers(0, 5, 4))
    strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    oh, ow = (h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1
    if oh < 1 or ow < 1:
        pads, oh, ow = (kw, kw, kh, kh), (h + 2 * kh - kh) // strides[1] + 1, (w + 2 * kw - kw) // strides[0] + 1
    n, c, act = int(rng.integers(1, 3)), 8 * int(rng.integers(1, 6)), case % 4  # 16-lane vectors and a last 8
    x, wt = _values(rng, (n, h, w, c), edge=case % 3 == 1), _values(rng, (1, kh, kw, c))
    x.flat[0] = np.nan if case == 5 else x.flat[0]  # NaN stays NaN through the clamp
    bias = _values(rng, (c,))
    want, span = np.empty((n, oh, ow, c), np.float32), np.empty((n, oh, ow, c), np.float32)
    nhwc_convolution.depthwise_conv2d(x, wt, bias, want, pads, strides, 1, act)
    nhwc_convolution.depthwise_conv2d(np.abs(x), np.abs(wt), np.abs(bias), span, pads, strides, 1, 0)
    finite = ~np.isnan(want)
    for lanes in (8, 16):
        got = np.full(want.shape, -7.0, np.float32)
        fdepthwise.depthwise_conv2d(x, fdepthwise.pack_depthwise(wt), bias, got, pads, strides, 1, act, lanes)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        _assert_within(got[finite], want[finite], (kh * kw + 3) * U * span[finite].astype(np.float64))


@pytest.mark.parametrize("width", [1, 3, 4, 5, 8, 9, 12, 13, 17, 30])
def test_depthwise_3x3_in_runs_of_pixels_matches_the_float64_kernel(width):
    # The 3x3 kernel takes an output row's inner pixels in runs (8 of 16 lanes, 4 of 8) and the rest one by one:
    # every run length and remainder, strides 1 to 3, agrees with the reference, and both widths give one bits.
    rng = np.random.default_rng(700 + width)
    for stride in (1, 2, 3):
        h, c = int(rng.integers(3, 7)), 8 * int(rng.integers(1, 4))
        x, wt, bias = _values(rng, (1, h, width + 2, c)), _values(rng, (1, 3, 3, c)), _values(rng, (c,))
        pads = (1, 1, 1, 1)
        oh, ow = (h + 2 - 3) // stride + 1, (width + 4 - 3) // stride + 1
        want, span = np.empty((1, oh, ow, c), np.float32), np.empty((1, oh, ow, c), np.float32)
        nhwc_convolution.depthwise_conv2d(x, wt, bias, want, pads, (stride, stride), 1, 3)
        nhwc_convolution.depthwise_conv2d(np.abs(x), np.abs(wt), np.abs(bias), span, pads, (stride, stride), 1, 0)
        results = []
        for lanes in (8, 16):
            got = np.full(want.shape, -7.0, np.float32)
            fdepthwise.depthwise_conv2d(x, fdepthwise.pack_depthwise(wt), bias, got, pads, (stride, stride), 1, 3,
                                        lanes)
            _assert_within(got, want, 12 * U * span.astype(np.float64))
            results.append(got)
        np.testing.assert_array_equal(results[1], results[0])


def test_depthwise_refuses_a_vector_width_it_has_no_kernel_for():
    x, wt = np.zeros((1, 4, 4, 8), np.float32), np.zeros((1, 3, 3, 8), np.float32)
    with pytest.raises(ValueError, match="lanes is 4"):
        fdepthwise.depthwise_conv2d(x, fdepthwise.pack_depthwise(wt), np.zeros(8, np.float32),
                                    np.empty((1, 2, 2, 8), np.float32), (0, 0, 0, 0), (1, 1), 1, 0, 4)


@pytest.mark.parametrize("case", range(8))
def test_fully_connected_matches_the_float64_kernel(case):
    rng = np.random.default_rng(300 + case)
    batch, size, units = int(rng.integers(1, 9)), int(rng.integers(1, 300)), int(rng.integers(1, 40))
    shape = (batch, size) if case % 2 else (batch, 1, 1, size)
    x, wt, bias, act = _values(rng, shape), _values(rng, (units, size)), _values(rng, (units,)), case % 4
    want, span = np.empty((batch, units), np.float32), np.empty((batch, units), np.float32)
    nhwc_convolution.fully_connected(x, wt, bias, want, act)
    nhwc_convolution.fully_connected(np.abs(x), np.abs(wt), np.abs(bias), span, 0)
    first = None
    for lanes, rows in ((None, batch), (None, 0), (8, 1), (16, 1), (16, 0)):  # one-row tiles and the others
        got = np.full((batch, units), np.nan, np.float32)
        fconv.fully_connected(x, fconv.pack_fc(wt, lanes, rows), bias, got, act)
        _assert_within(got, want, (size + 3) * U * span.astype(np.float64))
        if first is None:
            first = got
        np.testing.assert_array_equal(got, first)  # each unit sums in one order whatever the tile


def _plain_conv(x, wt, bias, residual, low, high):
    """An unpadded 1x1 stride-1 convolution written from its definition: per pixel, bias plus the dot product
    of its channels with each filter, plus the residual, clamped (float64)."""
    n, h, w, c = x.shape
    o = wt.shape[0]
    want = np.empty((n, h, w, o))
    for b in range(n):
        for y in range(h):
            for z in range(w):
                for k in range(o):
                    value = float(bias[k]) + sum(float(x[b, y, z, i]) * float(wt[k, 0, 0, i]) for i in range(c))
                    if residual is not None:
                        value += float(residual[b, y, z, k])
                    want[b, y, z, k] = min(max(value, low), high)
    return want


@pytest.mark.parametrize("case", range(10))
def test_pointwise_layers_on_every_tile_match_a_plain_loop(case):
    # 1x1 stride-1 unpadded layers (read as a product of [pixels, channels] by the filters) of output channels
    # that leave partial blocks (40, 72, 144: three-vector blocks and masks), pixels not a multiple of any tile's
    # rows, one output pixel (squeeze-and-excitation: pack_conv(pixels=1) packs one-row tiles), with a residual
    # and a clamp or not: within the float32 bound of a sum written out plainly, the same bits on every tile
    rng = np.random.default_rng(900 + case)
    n = int(rng.integers(1, 3))
    h, w = (1, 1) if case % 3 == 0 else (int(rng.integers(1, 9)), int(rng.integers(1, 9)))
    c = int(rng.choice([3, 16, 24, int(rng.integers(1, 60))]))
    o = int(rng.choice([17, 40, 48, 72, 144, int(rng.integers(1, 100))]))
    low, high = ((-np.inf, np.inf), (0.0, np.inf), (0.0, 6.0), (-1.0, 1.0))[case % 4]
    x, wt = _values(rng, (n, h, w, c), edge=case % 2 == 1), _values(rng, (o, 1, 1, c))
    bias = _values(rng, (o,))
    residual = 4 * _values(rng, (n, h, w, o), edge=case % 4 == 1) if case % 2 else None
    want = _plain_conv(x, wt, bias, residual, low, high)
    span = _plain_conv(np.abs(x), np.abs(wt), np.abs(bias), None if residual is None else np.abs(residual), 0.0,
                       np.inf)
    if n * h * w == 1:
        assert fconv.pack_conv(wt, pixels=1).shape[3] == (ROW_VECTORS if o > fconv.block_shape(o)[1] else 1)
    first = None
    for block in (*BLOCKS[1:], "pixels"):
        packed = fconv.pack_conv(wt, pixels=n * h * w) if block == "pixels" else fconv.pack_conv(wt, block)
        got = np.full(want.shape, np.nan, np.float32)
        fconv.conv2d(x, packed, bias, got, (0, 0, 0, 0), (1, 1), (low, high), residual)
        _assert_within(got, want, (c + 4) * U * span)
        if first is None:
            first = got
        np.testing.assert_array_equal(got, first)


@pytest.mark.parametrize("case", range(6))
def test_one_row_tiles_write_a_channel_slice_of_a_wider_output(case):
    # a matrix-vector product on the one-row tiles (pack_conv(pixels=1), pack_fc(rows=1)) into channels
    # [first, first + o) of a wider output (a concatenation's slice): those channels equal a plain sum, clamped,
    # within the float32 bound, and the channels around them are not touched
    rng = np.random.default_rng(950 + case)
    c, o = int(rng.integers(1, 200)), int(rng.choice([16, 40, 64, 65, 100, int(rng.integers(17, 140))]))
    first, after = int(rng.integers(0, 20)), int(rng.integers(0, 20))
    low, high = ((-np.inf, np.inf), (0.0, 6.0))[case % 2]
    x, wt, bias = _values(rng, (1, 1, 1, c), edge=case % 3 == 2), _values(rng, (o, 1, 1, c)), _values(rng, (o,))
    want = _plain_conv(x, wt, bias, None, low, high)
    span = _plain_conv(np.abs(x), np.abs(wt), np.abs(bias), None, 0.0, np.inf)
    wp = fconv.pack_conv(wt, pixels=1)
    assert wp.shape[3] == ROW_VECTORS
    whole = np.full((1, 1, 1, first + o + after), np.nan, np.float32)
    fconv.conv2d(x, wp, bias, whole[..., first:first + o], (0, 0, 0, 0), (1, 1), (low, high))
    _assert_within(whole[..., first:first + o], want, (c + 3) * U * span)
    assert np.isnan(whole[..., :first]).all() and np.isnan(whole[..., first + o:]).all()
    alone = np.full((1, 1, 1, o), np.nan, np.float32)
    fconv.conv2d(x, wp, bias, alone, (0, 0, 0, 0), (1, 1), (low, high))
    np.testing.assert_array_equal(whole[..., first:first + o], alone)


def test_one_row_weights_take_a_residual_and_an_activation_epilogue():
    # pack_conv(pixels=1) gives a squeeze-and-excitation layer the one-row tiles; the layer's residual and the
    # activation after its clamp (hard sigmoid: max(0, min(1, x / 6 + 1 / 2))) are computed as on the other tiles
    from openvx_nn.kernels.frontend import epilogue_activation as ea
    rng = np.random.default_rng(5)
    wt, bias = _values(rng, (40, 1, 1, 8)), _values(rng, (40,))
    wp = fconv.pack_conv(wt, pixels=1)
    assert wp.shape[3] == ROW_VECTORS
    x, residual = _values(rng, (1, 1, 1, 8)), _values(rng, (1, 1, 1, 40))
    plain = _plain_conv(x, wt, bias, residual, -np.inf, np.inf)
    out = np.full((1, 1, 1, 40), np.nan, np.float32)
    fconv.conv2d(x, wp, bias, out, (0, 0, 0, 0), (1, 1), 0, residual)
    _assert_within(out, plain, 12 * U * _plain_conv(np.abs(x), np.abs(wt), np.abs(bias), np.abs(residual), 0, np.inf))
    gate = np.full((1, 1, 1, 40), np.nan, np.float32)
    fconv.conv2d(x, wp, bias, gate, (0, 0, 0, 0), (1, 1), 0, residual, ea.epilogue_of("hard_sigmoid", 40, a=1 / 6,
                                                                                       b=0.5))
    np.testing.assert_allclose(gate, np.clip(plain / 6 + 0.5, 0, 1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", [fpooling.AVERAGE, fpooling.MAX, fpooling.L2])
@pytest.mark.parametrize("case", range(6))
def test_pooling_matches_the_float64_kernel(mode, case):
    rng = np.random.default_rng(400 + 10 * mode + case)
    (h, w), (kh, kw), strides, pads, (oh, ow) = _window(rng, max_kernel=5)
    n, c, act = int(rng.integers(1, 3)), int(rng.integers(1, 40)), case % 4
    x = _values(rng, (n, h, w, c), edge=case % 2 == 0)
    want = np.empty((n, oh, ow, c), np.float32)
    nhwc_pooling.pool2d(x, want, mode, pads, strides, (kw, kh), act)
    got = np.full(want.shape, np.nan, np.float32)
    fpooling.pool2d(x, got, mode, pads, strides, (kw, kh), act)
    if mode == fpooling.MAX:
        np.testing.assert_array_equal(got, want)
        return
    # A mean of the window: the bound scales with the mean of |x| (of x*x for L2, whose root halves it).
    mean_abs = np.empty(want.shape, np.float32)
    nhwc_pooling.pool2d(np.abs(x), mean_abs, fpooling.AVERAGE, pads, strides, (kw, kh), 0)
    scale = mean_abs.astype(np.float64) if mode == fpooling.AVERAGE else np.abs(want.astype(np.float64))
    _assert_within(got, want, (kh * kw + 4) * U * scale + 1e-45)


@pytest.mark.parametrize("mode", [fpooling.AVERAGE, fpooling.L2, fpooling.MAX])
def test_pooled_vectors_of_channels_equal_the_channel_loop_bit_for_bit(mode):
    # 16 and 8 channels at a time on the tap kernels (sum in a register, then / count), a channel alone on the loop
    rng = np.random.default_rng(40 + mode)
    x = _values(rng, (2, 9, 8, 27), edge=True)
    for pads, strides, size in [((1, 1, 1, 1), (1, 1), (3, 3)), ((0, 0, 0, 0), (8, 9), (8, 9)), ((2, 0, 1, 3), (2, 3),
                                                                                                 (4, 2))]:
        oh, ow = (9 + pads[2] + pads[3] - size[1]) // strides[1] + 1, (8 + pads[0] + pads[1] - size[0]) // strides[0] + 1
        got = np.full((2, oh, ow, 27), np.nan, np.float32)
        fpooling.pool2d(x, got, mode, pads, strides, size, 3)
        for c in range(27):
            alone = np.full((2, oh, ow, 1), np.nan, np.float32)
            fpooling.pool2d(np.ascontiguousarray(x[..., c:c + 1]), alone, mode, pads, strides, size, 3)
            np.testing.assert_array_equal(got[..., c:c + 1], alone)


@pytest.mark.parametrize("mode", [fpooling.AVERAGE, fpooling.L2, fpooling.MAX])
@pytest.mark.parametrize("channels", [9, 23, 28, 42])
def test_channels_past_the_last_whole_vector_pool_as_each_channel_alone(mode, channels):
    """Channels past the last whole vector of 8 (BlazeFace's 28 and 42) are pooled by one more vector that ends at
    the last channel, over channels pooled already: through the native entry and the bound call, every channel
    holds the bits of that channel pooled alone (the scalar loop), and the float64 reference's max exactly."""
    from openvx_nn.kernels.support import native
    rng = np.random.default_rng(70 + 3 * mode + channels)
    x = _values(rng, (1, 10, 12, channels), edge=True)
    for pads, strides, size in [((0, 0, 0, 0), (2, 2), (2, 2)), ((1, 1, 1, 1), (1, 1), (3, 3))]:
        oh, ow = (10 + pads[2] + pads[3] - size[1]) // strides[1] + 1, (12 + pads[0] + pads[1] - size[0]) // strides[0] + 1
        bound = np.full((1, oh, ow, channels), np.nan, np.float32)
        fpooling.pool2d(x, bound, mode, pads, strides, size, 0)
        entered = np.full_like(bound, np.nan)
        assert native.run(fpooling.native_pool2d(x, entered, mode, pads, strides, size, 0)) == 0
        for c in range(channels):
            alone = np.full((1, oh, ow, 1), np.nan, np.float32)
            fpooling.pool2d(np.ascontiguousarray(x[..., c:c + 1]), alone, mode, pads, strides, size, 0)
            np.testing.assert_array_equal(bound[..., c:c + 1], alone)
            np.testing.assert_array_equal(entered[..., c:c + 1], alone)
        if mode == fpooling.MAX:
            want = np.empty_like(bound)
            nhwc_pooling.pool2d(x, want, mode, pads, strides, size, 0)
            np.testing.assert_array_equal(entered, want)


SHAPES = [((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (5,)), ((4, 5), (2, 3, 4, 5)), ((2, 1, 4, 1), (3, 1, 5)),
          ((1,), (3, 2)), ((7,), (7,)), ((2, 3, 1, 5), (1, 3, 4, 1))]


REFERENCES = {felementwise.ADD: elementwise_real.add, felementwise.SUB: elementwise_real.subtract,
              felementwise.MUL: elementwise_real.multiply, felementwise.DIV: elementwise_real.divide}


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("op", list(REFERENCES))
def test_add_sub_mul_and_div_broadcast_equal_the_float64_kernel_bit_for_bit(shapes, op):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]) + op)
    a, b = _values(rng, shapes[0], edge=True), _values(rng, shapes[1], edge=True)
    shape = np.broadcast_shapes(a.shape, b.shape)
    for act in range(4):
        want = np.empty(shape, np.float32)
        REFERENCES[op](a, b, want, act)
        got = np.full(shape, 7.0, np.float32)
        felementwise.binary(op, a, b, got, act)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("flat", [True, False])
def test_division_by_zero_gives_ieee_infinities_and_nan(flat):
    a = np.array([1.0, -2.0, 0.0, np.inf, -0.0, 3.0], np.float32)
    b = np.array([0.0, 0.0, 0.0, -0.0, -0.0, -0.0], np.float32)
    want = np.array([np.inf, -np.inf, np.nan, -np.inf, np.nan, -np.inf], np.float32)
    if not flat:  # the broadcast loop: b's rows are [0, 0, 0] and [-0, -0, -0]
        a, b, want = a.reshape(2, 3), b.reshape(2, 3)[:, :1], want.reshape(2, 3)
    got = np.empty(a.shape, np.float32)
    felementwise.binary(felementwise.DIV, a, b, got, 0)
    np.testing.assert_array_equal(got, want)
    relu = np.empty(a.shape, np.float32)
    felementwise.binary(felementwise.DIV, a, b, relu, 1)
    np.testing.assert_array_equal(relu, np.where(np.isnan(want), want, np.maximum(want, 0)))


def test_outputs_that_are_strided_views_are_written_in_place():
    rng = np.random.default_rng(7)
    x, wt = _values(rng, (1, 6, 6, 4)), _values(rng, (5, 3, 3, 4))
    want = np.empty((1, 4, 4, 5), np.float32)
    nhwc_convolution.conv2d(x, wt, None, want, (0, 0, 0, 0), (1, 1), 0)
    whole = np.zeros((1, 4, 4, 10), np.float32)
    fconv.conv2d(x, fconv.pack_conv(wt), fconv.bias_or_zeros(None, 5), whole[..., ::2], (0, 0, 0, 0), (1, 1), 0)
    np.testing.assert_allclose(whole[..., ::2], want, rtol=1e-5, atol=1e-5)
    assert not whole[..., 1::2].any()
    pooled = np.zeros((1, 3, 3, 8), np.float32)
    fpooling.pool2d(x, pooled[:, :, :, ::2], fpooling.MAX, (0, 0, 0, 0), (2, 2), (2, 2), 0)
    reference = np.empty((1, 3, 3, 4), np.float32)
    nhwc_pooling.pool2d(x, reference, fpooling.MAX, (0, 0, 0, 0), (2, 2), (2, 2), 0)
    np.testing.assert_array_equal(pooled[..., ::2], reference)


@pytest.mark.parametrize("act,want", [(0, [np.nan, np.inf, -np.inf]), (1, [np.nan, np.inf, 0.0]),
                                      (3, [np.nan, 6.0, 0.0])])
def test_nan_and_infinities_pass_through_the_epilogue_like_the_reference(act, want):
    x = np.array([np.nan, np.inf, -np.inf], np.float32).reshape(1, 1, 3, 1)
    one = np.ones((1, 1, 1, 1), np.float32)
    got = np.empty((1, 1, 3, 1), np.float32)
    fconv.conv2d(x, fconv.pack_conv(one), np.zeros(1, np.float32), got, (0, 0, 0, 0), (1, 1), act)
    np.testing.assert_array_equal(got.ravel(), np.array(want, np.float32))
    reference = np.empty((1, 1, 3, 1), np.float32)
    nhwc_convolution.conv2d(x, one, None, reference, (0, 0, 0, 0), (1, 1), act)
    np.testing.assert_array_equal(got, reference)


def test_a_large_layer_shared_between_threads_equals_the_calling_thread_alone(monkeypatch):
    from openvx_nn.kernels.frontend import float_sharing
    rng = np.random.default_rng(11)
    x, wt = _values(rng, (1, 40, 40, 32)), _values(rng, (48, 3, 3, 32))
    packed, bias = fconv.pack_conv(wt), _values(rng, (48,))
    alone, shared = np.empty((1, 40, 40, 48), np.float32), np.empty((1, 40, 40, 48), np.float32)
    monkeypatch.setattr(float_sharing.workers, "helpers", lambda: 0)
    fconv.conv2d(x, packed, bias, alone, (1, 1, 1, 1), (1, 1), 3)
    monkeypatch.setattr(float_sharing.workers, "helpers", lambda: 1)
    fconv.conv2d(x, packed, bias, shared, (1, 1, 1, 1), (1, 1), 3)
    np.testing.assert_array_equal(shared, alone)  # the same tiles, whoever computes them


def test_layers_in_a_row_handed_to_the_helper_gang_equal_the_calling_thread_alone(monkeypatch):
    # Every layer shared (a helper stays in the gang between them, or is queued again when it left); a task
    # run again after its layer is done (a stale post) claims nothing and writes nothing.
    from openvx_nn.kernels.engine import gang
    from openvx_nn.kernels.frontend import float_sharing
    rng = np.random.default_rng(12)
    layers = []
    for _ in range(4):
        x, c, o = _values(rng, (1, 12, 10, 8)), 8, int(rng.integers(9, 40))
        conv = (x, fconv.pack_conv(_values(rng, (o, 1, 1, c))), _values(rng, (o,)), np.empty((1, 12, 10, o), np.float32))
        dw = (x, fdepthwise.pack_depthwise(_values(rng, (1, 3, 3, c))), _values(rng, (c,)),
              np.empty((1, 12, 10, c), np.float32))
        layers.append((conv, dw))

    def run_all():
        results = []
        for (x, wp, b, out), (xd, wd, bd, out_dw) in layers:
            fconv.conv2d(x, wp, b, out, (0, 0, 0, 0), (1, 1), 3)
            fdepthwise.depthwise_conv2d(xd, wd, bd, out_dw, (1, 1, 1, 1), (1, 1), 1, 1)
            results += [out.copy(), out_dw.copy()]
        return results
    monkeypatch.setattr(float_sharing.workers, "helpers", lambda: 0)
    alone = run_all()
    monkeypatch.setattr(float_sharing.workers, "helpers", lambda: 1)
    monkeypatch.setattr(float_sharing, "PARALLEL_WORK", 0)
    for _ in range(20):
        for got, want in zip(run_all(), alone):
            np.testing.assert_array_equal(got, want)  # the same tiles, whoever computes them
    out = layers[-1][1][3]
    out[...] = np.nan
    gang._posted[0]()  # the last layer's task, its chunks all taken
    assert np.isnan(out).all()


@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 2, 2, 1)])
def test_a_bound_call_reads_the_arrays_current_values(pads):
    rng = np.random.default_rng(sum(pads))
    whole = _values(rng, (1, 7, 7, 10))
    x = whole[..., :6]  # not contiguous: staged into a buffer before each call
    wt, dw, bias = _values(rng, (9, 3, 3, 6)), _values(rng, (1, 3, 3, 6)), _values(rng, (9,))
    oh, ow = 7 + pads[2] + pads[3] - 2, 7 + pads[0] + pads[1] - 2
    out, out_dw = np.empty((1, oh, ow, 9), np.float32), np.empty((1, oh, ow, 6), np.float32)
    calls = [fconv.bind_conv2d(x, fconv.pack_conv(wt), bias, out, pads, (1, 1), 3),
             fdepthwise.bind_depthwise_conv2d(x, fdepthwise.pack_depthwise(dw), bias[:6].copy(), out_dw, pads,
                                              (1, 1), 1, 3)]
    for _ in range(2):
        whole[...] = _values(rng, whole.shape)
        for call in calls:
            call()
        want, want_dw = np.empty_like(out), np.empty_like(out_dw)
        nhwc_convolution.conv2d(x, wt, bias, want, pads, (1, 1), 3)
        nhwc_convolution.depthwise_conv2d(x, dw, bias[:6], want_dw, pads, (1, 1), 1, 3)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out_dw, want_dw, rtol=1e-5, atol=1e-5)
