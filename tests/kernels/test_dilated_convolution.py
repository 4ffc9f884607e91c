"""Dilated (atrous) convolutions on the float32 engine (``float_convolution``) against a plain float64 reference.

The reference is written from the definition, not from any kernel of the package: output ``(b, oy, ox, o)`` is
``bias[o] + sum over ky, kx, c of x[b, oy*sh - top + ky*dh, ox*sw - left + kx*dw, c] * w[o, ky, kx, c]``, zeros
outside the input, summed in float64. The engine sums in float32 with fused multiply-adds; the tolerance is
docs/nnapi.md's: ``(n + 3) * 2**-24`` times the same sum over absolute values, ``n`` the products per output.
"""
import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.frontend import float_sharing
from openvx_nn.kernels.support import native

U = 2.0 ** -24
BLOCKS = (None, (2, 8), (1, 8), (2, 16), (1, 16))
"""Packings: the CPU's choice, then every tile shape (vectors, lanes)."""
CLAMPS = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}
"""NNAPI's fused activation codes as the (low, high) they clamp to."""


def dilated_reference(x, w, bias, pads, strides, dilations, out_hw):
    """float64 ``[N, OH, OW, O]`` of NHWC ``x`` and ``w`` ``[O, kh, kw, C]``; ``pads`` (left, right, top,
    bottom), ``strides`` and ``dilations`` (width, height)."""
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    left, _, top, _ = pads
    (sw, sh), (dw, dh), (oh, ow) = strides, dilations, out_hw
    big_h = top + max(h, (oh - 1) * sh + (kh - 1) * dh + 1)
    big_w = left + max(wd, (ow - 1) * sw + (kw - 1) * dw + 1)
    padded = np.zeros((n, big_h, big_w, c))
    padded[:, top:top + h, left:left + wd] = x
    out = np.zeros((n, oh, ow, o)) + (0.0 if bias is None else np.asarray(bias, np.float64))
    for ky in range(kh):
        for kx in range(kw):
            rows = padded[:, ky * dh: ky * dh + (oh - 1) * sh + 1: sh, kx * dw: kx * dw + (ow - 1) * sw + 1: sw]
            out += rows @ np.asarray(w[:, ky, kx, :], np.float64).T
    return out


def _geometry(rng):
    """A random dilated window that yields at least one output: input extent, kernel, strides, dilations (width,
    height), pads (left, right, top, bottom), output extent."""
    while True:
        h, w = int(rng.integers(1, 16)), int(rng.integers(1, 16))
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        dw, dh = int(rng.choice([1, 2, 3, 5])), int(rng.choice([1, 2, 3, 6]))
        pads = tuple(int(p) for p in rng.integers(0, 7, 4))
        span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        oh, ow = (h + pads[2] + pads[3] - span_h) // sh + 1, (w + pads[0] + pads[1] - span_w) // sw + 1
        if oh >= 1 and ow >= 1 and h + pads[2] + pads[3] >= span_h and w + pads[0] + pads[1] >= span_w:
            return (h, w), (kh, kw), (sw, sh), (dw, dh), pads, (oh, ow)


def _values(rng, shape, edge=False):
    x = rng.standard_normal(shape).astype(np.float32)
    if edge:  # zeros, tiny and large magnitudes in one tensor
        x.flat[rng.integers(0, x.size, max(1, x.size // 5))] = 0.0
        x *= np.float32(2.0) ** rng.integers(-20, 20, shape).astype(np.float32)
    return x


def _case(seed):
    rng = np.random.default_rng(seed)
    (h, w), (kh, kw), strides, dilations, pads, (oh, ow) = _geometry(rng)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 20))
    o = int(rng.choice([1, 5, 8, 16, 17, 33, int(rng.integers(1, 70))]))
    act = seed % 4
    x, wt = _values(rng, (n, h, w, c), edge=seed % 3 == 0), _values(rng, (o, kh, kw, c))
    bias = _values(rng, (o,)) if seed % 5 else None
    low, high = CLAMPS[act]
    want = np.clip(dilated_reference(x, wt, bias, pads, strides, dilations, (oh, ow)), low, high)
    span = dilated_reference(np.abs(x), np.abs(wt), None if bias is None else np.abs(bias), pads, strides, dilations,
                             (oh, ow))
    return x, wt, bias, pads, strides, dilations, act, want, (kh * kw * c + 3) * U * span


def _assert_within(got, want, bound):
    err = np.abs(got.astype(np.float64) - want)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), f"error {err[worst]} above the bound {bound[worst]} at {worst}"


@pytest.mark.parametrize("seed", range(30))
def test_dilated_conv2d_matches_the_float64_definition_on_every_tile_shape(seed):
    x, wt, bias, pads, strides, dilations, act, want, bound = _case(1000 + seed)
    first = None
    for block in BLOCKS:
        got = np.full(want.shape, np.nan, np.float32)
        fconv.conv2d(x, fconv.pack_conv(wt, block), fconv.bias_or_zeros(bias, wt.shape[0]), got, pads, strides, act,
                     dilations=dilations)
        _assert_within(got, want, bound)
        if first is None:
            first = got
        np.testing.assert_array_equal(got, first)  # each lane sums in one order whatever the tile


def _bound_call(seed):
    """A random case, its packed weights and bias, and the bound call's output on them."""
    case = _case(seed)
    x, wt, bias, pads, strides, dilations, act, want, _ = case
    packed, b = fconv.pack_conv(wt), fconv.bias_or_zeros(bias, wt.shape[0])
    out = np.full(want.shape, np.nan, np.float32)
    fconv.conv2d(x, packed, b, out, pads, strides, act, dilations=dilations)
    return case, packed, b, out


@pytest.mark.parametrize("seed", range(12))
def test_the_native_entry_of_a_dilated_layer_gives_the_bound_calls_bits(seed, monkeypatch):
    # serially and shared with a helper thread (every layer large enough to share)
    (x, _, _, pads, strides, dilations, act, want, bound), packed, b, bound_out = _bound_call(2000 + seed)
    for helpers, work in ((0, float_sharing.NATIVE_PARALLEL_WORK), (1, 0)):
        monkeypatch.setattr(float_sharing.workers, "helpers", lambda n=helpers: n)
        monkeypatch.setattr(float_sharing, "NATIVE_PARALLEL_WORK", work)
        got = np.full(want.shape, np.nan, np.float32)
        entry = fconv.native_conv2d(x, packed, b, got, pads, strides, act, dilations=dilations)
        assert native.run(entry) == 0
        _assert_within(got, want, bound)
        np.testing.assert_array_equal(got, bound_out)


def test_atrous_pyramid_rates_on_a_feature_map_smaller_than_the_padding():
    # DeepLab's rates 6, 12, 18 on a 9x9 map with "same" padding: most taps of the outer rates read padding
    rng = np.random.default_rng(7)
    x, wt, bias = _values(rng, (1, 9, 9, 24)), _values(rng, (40, 3, 3, 24)), _values(rng, (40,))
    for rate in (6, 12, 18):
        pads, dilations = (rate,) * 4, (rate, rate)
        want = dilated_reference(x, wt, bias, pads, (1, 1), dilations, (9, 9))
        span = dilated_reference(np.abs(x), np.abs(wt), np.abs(bias), pads, (1, 1), dilations, (9, 9))
        got = np.full((1, 9, 9, 40), np.nan, np.float32)
        fconv.conv2d(x, fconv.pack_conv(wt), bias, got, pads, (1, 1), 0, dilations=dilations)
        _assert_within(got, want, (9 * 24 + 3) * U * span)


def test_a_dilation_of_one_is_the_undilated_layer_bit_for_bit():
    rng = np.random.default_rng(8)
    x, wt, bias = _values(rng, (1, 11, 13, 7)), _values(rng, (19, 3, 2, 7)), _values(rng, (19,))
    plain, dilated = np.empty((1, 11, 13, 19), np.float32), np.empty((1, 11, 13, 19), np.float32)
    fconv.conv2d(x, fconv.pack_conv(wt), bias, plain, (1, 0, 1, 1), (1, 1), 0)
    fconv.conv2d(x, fconv.pack_conv(wt), bias, dilated, (1, 0, 1, 1), (1, 1), 0, dilations=(1, 1))
    np.testing.assert_array_equal(dilated, plain)
    rows_only = np.empty((1, 9, 13, 19), np.float32)  # rows dilated alone keep each filter row's one run
    fconv.conv2d(x, fconv.pack_conv(wt), bias, rows_only, (1, 0, 1, 1), (1, 1), 0, dilations=(1, 2))
    want = dilated_reference(x, wt, bias, (1, 0, 1, 1), (1, 1), (1, 2), (9, 13))
    np.testing.assert_allclose(rows_only, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dilations", [(0, 1), (1, 0), (-2, 3)])
def test_a_dilation_below_one_is_refused(dilations):
    x, wt = np.zeros((1, 5, 5, 2), np.float32), np.zeros((3, 3, 3, 2), np.float32)
    with pytest.raises(ValueError, match="dilations"):
        fconv.bind_conv2d(x, fconv.pack_conv(wt), np.zeros(3, np.float32), np.zeros((1, 3, 3, 3), np.float32),
                          (0, 0, 0, 0), (1, 1), 0, dilations=dilations)


def test_the_taps_a_tile_keeps_are_every_tap_that_reads_inside_the_input():
    # a dilated layer's tile skips the taps that read only padding for all its outputs: the range it keeps (a
    # register_jitable helper, plain Python here) holds every tap that reads inside for some output, and is the
    # exact range in the common case of outputs one stride apart and windows of stride 1
    rng = np.random.default_rng(9)
    for _ in range(3000):
        first = int(rng.integers(0, 30))
        final = first + int(rng.integers(0, 8))
        stride, step, taps = int(rng.integers(1, 4)), int(rng.integers(1, 20)), int(rng.integers(1, 6))
        low, extent = int(rng.integers(0, 40)), int(rng.integers(1, 30))
        inside = [k for k in range(taps) if any(low <= o * stride + k * step < low + extent
                                                for o in range(first, final + 1))]
        k_lo, k_hi = fconv._inside(first, final, stride, step, taps, low, extent)
        case = (first, final, stride, step, taps, low, extent)
        assert 0 <= k_lo <= k_hi < taps, case
        if inside:
            assert k_lo <= min(inside) and max(inside) <= k_hi, case
            if stride == 1:
                assert (k_lo, k_hi) == (min(inside), max(inside)), case
        else:
            assert k_lo == k_hi, case


@pytest.mark.parametrize("seed", range(60))
def test_the_filter_kept_is_every_row_and_column_some_output_reads_inside(seed):
    # ``reached_filter`` drops the filter rows and columns that read only padding for every output; checked, for
    # windows one input apart, against an enumeration of the taps the outputs read, from the window's definition
    rng = np.random.default_rng(3000 + seed)
    (h, w), (kh, kw), _, (dw, dh), pads, _ = _geometry(rng)
    oh, ow = h + pads[2] + pads[3] - (kh - 1) * dh, w + pads[0] + pads[1] - (kw - 1) * dw
    c = int(rng.integers(1, 5))
    wt = rng.standard_normal((16, kh, kw, c)).astype(np.float32)
    packed = fconv.pack_conv(wt, (1, 16))
    kept, kept_pads, kept_dil = fconv.reached_filter((1, h, w, c), packed, pads, (1, 1), (dw, dh), (oh, ow))
    left, _, top, _ = pads
    rows = [ky for ky in range(kh) if any(0 <= oy - top + ky * dh < h for oy in range(oh))]
    cols = [kx for kx in range(kw) if any(0 <= ox - left + kx * dw < w for ox in range(ow))]
    if not rows or not cols:  # no tap reads the input: one is kept (the outputs are the bias)
        assert kept.shape[1] * kept.shape[2] // c in (1, kh * kw)
        return
    if (dw, dh) == (1, 1) or (len(rows), len(cols)) == (kh, kw) or top < rows[0] * dh or left < cols[0] * dw:
        assert kept is packed and kept_pads == pads and kept_dil == (dw, dh)
        return
    want = fconv.pack_conv(wt[:, rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1], (1, 16))
    np.testing.assert_array_equal(kept, want)
    assert kept_pads[0] == left - cols[0] * dw and kept_pads[2] == top - rows[0] * dh
    assert kept_dil == (dw if len(cols) > 1 else 1, dh if len(rows) > 1 else 1)


@pytest.mark.parametrize("seed", range(24))
def test_a_dilated_layer_on_its_kept_filter_gives_the_whole_filters_bits(seed, monkeypatch):
    # the old route (every filter row and column, the tiles skipping padding) against the kept filter, bound and
    # native; both against the float64 definition
    (x, _, _, pads, strides, dilations, act, want, bound), packed, b, kept = _bound_call(4000 + seed)
    native_kept = np.full(want.shape, np.nan, np.float32)
    assert native.run(fconv.native_conv2d(x, packed, b, native_kept, pads, strides, act, dilations=dilations)) == 0
    monkeypatch.setattr(fconv, "reached_filter", lambda x_shape, wp, pads, strides, dilations, out_hw:
                        (wp, pads, dilations))
    whole = np.full(want.shape, np.nan, np.float32)
    fconv.conv2d(x, packed, b, whole, pads, strides, act, dilations=dilations)
    _assert_within(kept, want, bound)
    np.testing.assert_array_equal(kept.view(np.int32), whole.view(np.int32))
    np.testing.assert_array_equal(native_kept.view(np.int32), whole.view(np.int32))


@pytest.mark.parametrize("rate", [6, 12, 18, 28, 40])
def test_deeplab_rates_on_a_28x28_map_match_the_float64_definition(rate):
    # tiles of 12 pixels over rows of 28 keep two or three filter rows and some of the columns of each: the taps
    # from the first kept (row, column) to the last; a rate of 28 or more leaves the centre tap alone (a 1x1 layer)
    rng = np.random.default_rng(rate)
    x, wt, bias = _values(rng, (1, 28, 28, 40), edge=True), _values(rng, (20, 3, 3, 40)), _values(rng, (20,))
    pads, dilations = (rate,) * 4, (rate, rate)
    want = np.maximum(dilated_reference(x, wt, bias, pads, (1, 1), dilations, (28, 28)), 0.0)
    span = dilated_reference(np.abs(x), np.abs(wt), np.abs(bias), pads, (1, 1), dilations, (28, 28))
    for block in BLOCKS:
        got = np.full((1, 28, 28, 20), np.nan, np.float32)
        fconv.conv2d(x, fconv.pack_conv(wt, block), bias, got, pads, (1, 1), 1, dilations=dilations)
        _assert_within(got, want, (9 * 40 + 3) * U * span)
    kept, kept_pads, kept_dil = fconv.reached_filter(x.shape, fconv.pack_conv(wt), pads, (1, 1), dilations, (28, 28))
    if rate >= 28:
        assert kept.shape[1:3] == (1, 40) and kept_pads == (0, 0, 0, 0) and kept_dil == (1, 1)


def _region_case(seed):
    """A random dilated layer for region order: maps up to 30, dilations 1..24 (some at or above the map's side),
    asymmetric pads, strides 1..2, 1 or 2 images, a residual on some, NNAPI's clamps."""
    rng = np.random.default_rng(seed)
    while True:
        h, w = int(rng.integers(3, 31)), int(rng.integers(3, 31))
        dw, dh = int(rng.choice([1, 2, 3, 6, 12, 18, 24])), int(rng.choice([2, 4, 6, 12, 18, 24]))
        kh, kw = int(rng.choice([3, 3, 2, 1])), int(rng.choice([3, 3, 2]))
        sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        pads = tuple(int(v) for v in rng.integers(0, 2 * max(dw, dh) + 1, 4))
        oh = (h + pads[2] + pads[3] - (kh - 1) * dh - 1) // sh + 1
        ow = (w + pads[0] + pads[1] - (kw - 1) * dw - 1) // sw + 1
        if oh >= 1 and ow >= 1:
            break
    n, c, o = int(rng.integers(1, 3)), int(rng.integers(1, 24)), int(rng.choice([8, 16, 20, 32, 40, 64, 70]))
    x, wt, bias = _values(rng, (n, h, w, c), edge=seed % 3 == 0), _values(rng, (o, kh, kw, c)), _values(rng, (o,))
    res = _values(rng, (n, oh, ow, o)) if seed % 2 else None
    act = seed % 4
    want = dilated_reference(x, wt, bias, pads, (sw, sh), (dw, dh), (oh, ow))
    span = dilated_reference(np.abs(x), np.abs(wt), np.abs(bias), pads, (sw, sh), (dw, dh), (oh, ow))
    if res is not None:
        want, span = want + res, span + np.abs(res)
    low, high = CLAMPS[act]
    return x, wt, bias, res, pads, (sw, sh), (dw, dh), act, np.clip(want, low, high), (kh * kw * c + 4) * U * span


@pytest.mark.parametrize("seed", range(40))
def test_region_order_gives_the_row_walks_bits_and_the_float64_definition(seed, monkeypatch):
    # the tiles in region order (``region_tiles``) against the row walk (``OPENVX_NN_DILATED_REGIONS=0``), bound
    # and native, each tile shape; both against the float64 definition (residual and clamp included)
    x, wt, bias, res, pads, strides, dilations, act, want, bound = _region_case(5000 + seed)
    for block in BLOCKS:
        packed = fconv.pack_conv(wt, block)
        outs = []
        for regions in ("1", "0"):
            monkeypatch.setenv("OPENVX_NN_DILATED_REGIONS", regions)
            got = np.full(want.shape, np.nan, np.float32)
            fconv.conv2d(x, packed, bias, got, pads, strides, act, res, dilations=dilations)
            _assert_within(got, want, bound)
            outs.append(got)
        got = np.full(want.shape, np.nan, np.float32)
        assert native.run(fconv.native_conv2d(x, packed, bias, got, pads, strides, act, res, dilations=dilations)) == 0
        np.testing.assert_array_equal(outs[0].view(np.int32), outs[1].view(np.int32))
        np.testing.assert_array_equal(got.view(np.int32), outs[0].view(np.int32))


@pytest.mark.parametrize("seed", range(200))
def test_the_regions_cover_the_output_once_and_keep_every_tap_that_reads_inside(seed):
    # ``region_tiles``' runs, from the window's definition: each output row (column) lies in one run, and a run's
    # taps are every filter row (column) that reads inside the input for some output of the run, all of them for
    # windows one input apart (stride 1); the tiles counted are each rectangle's pixels in tiles of ``rows``
    rng = np.random.default_rng(6000 + seed)
    out_h, out_w, rows = int(rng.integers(1, 40)), int(rng.integers(1, 40)), int(rng.choice([6, 7, 8, 10, 12]))
    stride_h, stride_w = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dil_h, dil_w = int(rng.integers(1, 25)), int(rng.integers(1, 25))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    top, left, in_h, in_w = (int(v) for v in rng.integers(0, 30, 4))
    in_h, in_w = in_h + 1, in_w + 1
    ys, xs = np.zeros((out_h, 4), np.int64), np.zeros((out_w, 4), np.int64)
    tiles, n_y, n_x = fconv.region_tiles(out_h, out_w, rows, stride_h, stride_w, dil_h, dil_w, kh, kw, top, left,
                                         in_h, in_w, ys, xs)
    for runs, n, stride, step, taps, low, extent in ((ys[:n_y], out_h, stride_h, dil_h, kh, top, in_h),
                                                     (xs[:n_x], out_w, stride_w, dil_w, kw, left, in_w)):
        assert runs[0, 0] == 0 and runs[:, 1].sum() == n and np.all(runs[1:, 0] == runs[:-1, 0] + runs[:-1, 1])
        for first, count, k_lo, k_hi in runs:
            inside = [k for k in range(taps) if any(low <= o * stride + k * step < low + extent
                                                    for o in range(first, first + count))]
            assert 0 <= k_lo <= k_hi < taps
            if inside:
                assert k_lo <= min(inside) and max(inside) <= k_hi
                if stride == 1:
                    assert (k_lo, k_hi) == (min(inside), max(inside))
    if tiles:
        assert tiles == sum(-(-(ys[i, 1] * xs[j, 1]) // rows) for i in range(n_y) for j in range(n_x))


def test_deeplabs_atrous_branches_take_region_order():
    # the rates 6, 12 and 18 on 28x28 (12-row tiles): fewer taps x pixels in region order than on the row walk
    for rate in (6, 12, 18):
        ys, xs = np.zeros((28, 4), np.int64), np.zeros((28, 4), np.int64)
        tiles, n_y, n_x = fconv.region_tiles(28, 28, 12, 1, 1, rate, rate, 3, 3, rate, rate, 28, 28, ys, xs)
        assert (n_y, n_x) == (3, 3) and tiles >= -(-784 // 12)
