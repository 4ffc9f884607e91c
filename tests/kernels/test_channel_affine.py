"""``channel_affine``: ``y = max(x * s[c] + b[c], 0)`` (or without the clamp) per channel, on OpenVX's order
(channel planes) and channels-last, bound and as a native entry, gives the bits of a plain float64 loop written
from the pointwise layer's definition (``y = f(alpha[c] * (1 * x + 0) + beta[c])`` rounded once to float32) over
random shapes, axes and edge values; what it cannot take is refused with a reason."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import channel_affine as k
from openvx_nn.kernels.frontend import pointwise
from openvx_nn.kernels.support import native

EDGES = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38], np.float32)


def _reference(x: np.ndarray, s: np.ndarray, b: np.ndarray, relu: bool, axis: int) -> np.ndarray:
    """Element by element: v = s[c] * (x + 0) + b[c] in float64 (c the index along ``axis``), NaN kept, below zero
    made +0 when ``relu``, then one rounding to float32."""
    out = np.empty(x.shape, np.float32)
    s = np.broadcast_to(s, x.shape[axis])
    b = np.broadcast_to(b, x.shape[axis])
    for index in np.ndindex(*x.shape):
        c = index[axis]
        v = float(s[c]) * (float(x[index]) + 0.0) + float(b[c])
        if relu and v < 0.0:
            v = 0.0
        out[index] = np.float32(v)
    return out


def _case(rng):
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 7, rank))
    axis = int(rng.integers(0, rank))
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    flat = x.reshape(-1)
    n = min(flat.size, EDGES.size)
    flat[rng.permutation(flat.size)[:n]] = EDGES[:n]
    count = 1 if rng.integers(4) == 0 else shape[axis]
    s = (rng.standard_normal(count) * 2).astype(np.float32)
    b = rng.standard_normal(count).astype(np.float32)
    if count > 1:
        s[0] = -s[0] if s[0] > 0 else s[0]  # a negative scale: -0 and the infinities change sign
    order = "F" if rng.integers(2) else "C"
    return np.asarray(x, order=order), s, b, axis


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("relu", [True, False], ids=["relu", "affine"])
@pytest.mark.parametrize("seed", range(12))
def test_bound_call_and_native_entry_give_the_reference_bits(seed, relu):
    rng = np.random.default_rng([4600, seed, relu])
    x, s, b, axis = _case(rng)
    want = _reference(x, s, b, relu, axis)
    out = np.full_like(x, 7.0)
    k.bind(x, out, s, b, relu, axis)()
    np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))
    out[...] = 7.0
    entry = k.native_entry(x, out, s, b, relu, axis)
    assert entry is not None and native.run(entry) == 0
    np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))


@pytest.mark.parametrize("axis", [0, 2], ids=["channels-last", "planes"])
def test_large_tensors_shared_with_the_helpers_give_the_same_bits(axis):
    """A DenseNet-sized pass (256 channels of 28 x 28: shared with the engine's helpers) in both layouts."""
    rng = np.random.default_rng(4601 + axis)
    dims = (256, 28, 28, 1) if axis == 0 else (28, 28, 256, 1)
    x = np.asfortranarray(rng.standard_normal(dims).astype(np.float32))
    s, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    shape = [1] * 4
    shape[axis] = 256
    want = np.maximum(s.astype(np.float64).reshape(shape) * x + b.astype(np.float64).reshape(shape), 0.0)
    want = want.astype(np.float32)
    out = np.asfortranarray(np.full(dims, 7.0, np.float32))
    k.bind(x, out, s, b, True, axis)()
    np.testing.assert_array_equal(out, want)
    out[...] = 7.0
    entry = k.native_entry(x, out, s, b, True, axis)
    assert entry is not None and native.run(entry) == 0
    np.testing.assert_array_equal(out, want)


def _prefix_case(rng, order: str):
    """A channel slice ``[c0, c0 + c)`` of a wider channels-last tensor (OpenVX's ``[C, W, H, N]`` in F order, or
    ``[N, H, W, C]`` in C order) with edge values, and its channel axis: pixels ``wide`` channels apart."""
    wide = int(rng.integers(2, 40))
    c = int(rng.integers(1, wide))
    c0 = int(rng.integers(0, wide - c + 1))
    w, h, n = (int(d) for d in rng.integers(1, 6, 3))
    base = (rng.standard_normal((wide, w, h, n)) * 3).astype(np.float32)
    flat = base.reshape(-1)
    flat[rng.permutation(flat.size)[:EDGES.size]] = EDGES[:min(EDGES.size, flat.size)]
    if order == "F":
        base = np.asfortranarray(base)
        return base, (slice(c0, c0 + c),), 0
    base = np.ascontiguousarray(base.transpose(3, 2, 1, 0))
    return base, (Ellipsis, slice(c0, c0 + c)), 3


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("seed", range(8))
def test_channel_slices_of_wider_pixels_give_the_reference_bits(seed, order):
    """A channel-prefix (or any channel slice) view of a concatenation held channels-last, read and written in
    place, bound and native: the reference's bits in the slice, every other channel of the wider buffers left."""
    rng = np.random.default_rng([4604, seed, order == "F"])
    base, where, axis = _prefix_case(rng, order)
    x = base[where]
    c = x.shape[axis]
    s, b = (rng.standard_normal(c) * 2).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    relu = bool(seed % 2)
    want = _reference(np.ascontiguousarray(x), s, b, relu, axis)
    for out_wide in (False, True):  # into a plain tensor, then into a slice of another wide buffer
        for run in ("bound", "native"):
            target = np.full_like(base, 7.0) if out_wide else np.full(x.shape, 7.0, np.float32, order=order)
            out = target[where] if out_wide else target
            if run == "bound":
                k.bind(x, out, s, b, relu, axis)()
            else:
                entry = k.native_entry(x, out, s, b, relu, axis)
                assert entry is not None and native.run(entry) == 0
            np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))
            if out_wide:
                rest = np.ones(base.shape, bool)
                rest[where] = False
                assert (target[rest] == 7.0).all(), "a channel outside the slice was written"


def test_a_large_channel_prefix_is_shared_with_the_helpers():
    """DenseNet's case: the first 224 of 256 channels of 28 x 28 pixels, large enough to share, native."""
    rng = np.random.default_rng(4605)
    base = np.asfortranarray(rng.standard_normal((256, 28, 28, 1)).astype(np.float32))
    x = base[:224]
    s, b = rng.standard_normal(224).astype(np.float32), rng.standard_normal(224).astype(np.float32)
    want = np.maximum(s.astype(np.float64).reshape(-1, 1, 1, 1) * x + b.astype(np.float64).reshape(-1, 1, 1, 1), 0)
    out = np.asfortranarray(np.full(x.shape, 7.0, np.float32))
    entry = k.native_entry(x, out, s, b, True, 0)
    assert entry is not None and native.run(entry) == 0
    np.testing.assert_array_equal(out, want.astype(np.float32))


def test_in_place():
    rng = np.random.default_rng(4602)
    x = np.asfortranarray(rng.standard_normal((5, 4, 3)).astype(np.float32))
    s, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    want = _reference(x, s, b, True, 2)
    k.bind(x, x, s, b, True, 2)()
    np.testing.assert_array_equal(x.view(np.int32), want.view(np.int32))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("function", ["affine", "affine_relu"])
def test_pointwise_per_channel_affine_is_this_kernel_with_its_numpy_bits(function, monkeypatch):
    """``pointwise``'s per-channel affine of float32 runs here (bound and native) with the bits of its own NumPy
    expression for float64 (the path it keeps for other dtypes)."""
    rng = np.random.default_rng(4603)
    x = np.asfortranarray(np.concatenate([rng.standard_normal(57), EDGES]).astype(np.float32).reshape(11, 6))
    a, c = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    wide = np.empty(x.shape, np.float64)
    pointwise.prepare(x.astype(np.float64), wide, function, alpha_c=a, beta_c=c, channel_axis=1)()
    want = wide.astype(np.float32)
    called, bind = [], k.bind
    monkeypatch.setattr(k, "bind", lambda *args: called.append(args) or bind(*args))
    got = np.full_like(x, 7.0)
    pointwise.prepare(x, got, function, alpha_c=a, beta_c=c, channel_axis=1)()
    assert called, "the float32 per-channel affine did not run on channel_affine"
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    got[...] = 7.0
    entry = pointwise.native_pointwise(x, got, function, alpha_c=a, beta_c=c, channel_axis=1)
    assert entry is not None and native.run(entry) == 0
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_what_it_cannot_take_is_refused():
    x = np.zeros((4, 5, 3), np.float32, order="F")
    s = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="expected 1 or 3"):
        k.bind(x, x.copy(order="F"), np.ones(2, np.float32), s, True, 2)
    with pytest.raises(ValueError, match="expected float32"):
        k.bind(x.astype(np.float64), x, s, s, True, 2)
    with pytest.raises(ValueError, match="one shape"):
        k.bind(x, np.zeros((4, 5, 2), np.float32), s, s, True, 2)
    with pytest.raises(ValueError, match="outside"):
        k.bind(x, x.copy(order="F"), s, s, True, 3)
    with pytest.raises(ValueError, match="contiguous"):
        k.bind(x, np.zeros((4, 5, 3), np.float32, order="C"), s, s, True, 2)
    with pytest.raises(ValueError, match="overlaps"):
        y = np.zeros(20, np.float32)
        k.bind(y[:10], y[1:11], s[:1], s[:1], True, 0)
    assert k.native_entry(x[:, ::2], np.zeros((4, 3, 3), np.float32), s, s, True, 2) is None
    wide = np.zeros((6, 5, 4), np.float32, order="F")  # pixels of no one pitch: a row of each plane left out
    assert k.native_entry(wide[:3, :4], np.zeros((3, 4, 4), np.float32, order="F"), s, s, True, 0) is None
    with pytest.raises(ValueError, match="one pitch"):
        k.bind(wide[:3, :4], np.zeros((3, 4, 4), np.float32, order="F"), s, s, True, 0)
    assert k.native_entry(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), s, s, True, 1) is None
    # another per-channel function of pointwise has no native entry
    assert pointwise.native_pointwise(x, x.copy(order="F"), "leaky_relu", alpha_c=s) is None
