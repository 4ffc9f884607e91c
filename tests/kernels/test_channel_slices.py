"""The float engine writing a layer's output into a channel slice of wider pixels (``float_convolution``'s
``channel_slice``: a concatenation's slice, the pixel stride wider than the layer's channels). Each layer runs into
the slice of a buffer filled with a sentinel bit pattern and into a plain array of its own: the slice gets the plain
array's bytes, every other byte of the buffer keeps the sentinel (no tile, short last tile, last block of fewer
channels or epilogue writes past the layer's channels), and the values are a float64 reference's."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import epilogue_activation as ea
from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.support import native

SENTINEL = np.uint32(0x7FC0BEEF)  # a NaN with a payload no arithmetic of the layer produces


def _reference(x, w, bias, pads, strides, dilations, res, low, high, function, alpha):
    """The layer from its definition in float64: zero padding, taps ``dilation`` apart, windows ``stride`` apart."""
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    left, right, top, bottom = pads
    (sw, sh), (dw, dh) = strides, dilations
    xp = np.zeros((n, h + top + bottom, wd + left + right, c))
    xp[:, top:top + h, left:left + wd] = x
    oh = (xp.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[2] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, oh, ow, o)) + bias.astype(np.float64)
    for ky in range(kh):
        for kx in range(kw):
            patch = xp[:, ky * dh:ky * dh + (oh - 1) * sh + 1:sh, kx * dw:kx * dw + (ow - 1) * sw + 1:sw]
            out += np.einsum("nhwc,oc->nhwo", patch, w[:, ky, kx].astype(np.float64))
    if res is not None:
        out += res
    out = np.minimum(np.maximum(out, low), high)
    if function == "prelu":
        return np.where(out >= 0, out, alpha.astype(np.float64) * out)
    return np.tanh(out) if function == "tanh" else out


def _layer(rng, units):
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 40))
    h, wd = (int(v) for v in rng.integers(1, 12, 2))
    k = int(rng.choice([1, 3]))
    dil = (1, 1) if k == 1 or rng.integers(3) else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    strides = (1, 1) if dil != (1, 1) or rng.integers(2) else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    pads = tuple(int(v) for v in rng.integers(0, k, 4)) if k > 1 else (0, 0, 0, 0)
    x = rng.standard_normal((n, h, wd, c)).astype(np.float32)
    w = (rng.standard_normal((units, k, k, c)) * 0.4).astype(np.float32)
    bias = rng.standard_normal(units).astype(np.float32)
    return x, w, bias, pads, strides, dil


def _out_shape(x, w, pads, strides, dil):
    n, h, wd, _ = x.shape
    left, right, top, bottom = pads
    oh = (h + top + bottom - (w.shape[1] - 1) * dil[1] - 1) // strides[1] + 1
    ow = (wd + left + right - (w.shape[2] - 1) * dil[0] - 1) // strides[0] + 1
    return n, oh, ow, w.shape[0]


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("units", [5, 17, 24, 32, 50])
def test_a_layer_writes_its_channel_slice_alone_with_the_bytes_of_a_plain_output(seed, units):
    rng = np.random.default_rng([7413, seed, units])
    x, w, bias, pads, strides, dil = _layer(rng, units)
    n, oh, ow, _ = _out_shape(x, w, pads, strides, dil)
    if min(oh, ow) < 1:
        pytest.skip("no output pixel")
    before, after = int(rng.integers(0, 20)), int(rng.integers(0, 20))
    if before + after == 0:
        after = 3
    residual, clamp, function = seed % 2 == 1, seed % 3 == 0, ("prelu", "tanh", None)[seed % 3]
    border = 1 if seed % 4 == 3 and dil == (1, 1) else 0
    if border:  # a bordered output takes no activation epilogue
        function = None
    low, high = (0.0, 6.0) if clamp else (-np.inf, np.inf)
    res = (rng.standard_normal((n, oh, ow, units)) * 2).astype(np.float32) if residual else None
    alpha = rng.uniform(-1, 1, units).astype(np.float32)
    epilogue = ea.epilogue_of(function, units, alpha) if function else None
    wp = fconv.pack_conv(w, pixels=n * oh * ow)
    args = (pads, strides, (low, high) if clamp else 0, res, epilogue, dil, (0, border, 0))
    shape = (n, oh + 2 * border, ow + 2 * border)
    plain = np.zeros((*shape, units), np.float32)
    assert native.run(fconv.native_conv2d(x, wp, bias, plain, *args)) == 0
    for route in ("native", "bound"):
        buffer = np.full((*shape, before + units + after), SENTINEL, np.uint32).view(np.float32)
        if border:
            buffer[:, 0], buffer[:, -1], buffer[:, :, 0], buffer[:, :, -1] = 0.0, 0.0, 0.0, 0.0
        view = buffer[..., before:before + units]
        kept = buffer.copy()
        if route == "native":
            entry = fconv.native_conv2d(x, wp, bias, view, *args)
            assert entry is not None, "a channel slice took the copying route"
            assert native.run(entry) == 0
        else:
            fconv.bind_conv2d(x, wp, bias, view, *args)()
        assert np.array_equal(view.view(np.uint32), plain.view(np.uint32)), route
        kept[..., before:before + units] = plain
        assert np.array_equal(buffer.view(np.uint32), kept.view(np.uint32)), f"{route}: a neighbour's byte written"
    inside = plain[:, border:border + oh, border:border + ow]
    want = _reference(x, w, bias, pads, strides, dil, res, low, high, function, alpha)
    scale = np.abs(want).max() + 1.0
    np.testing.assert_allclose(inside, want, rtol=1e-4, atol=1e-5 * scale * x.shape[3] * w.shape[1] * w.shape[2])


def test_a_slice_of_a_buffer_inside_a_larger_owner_is_found_and_other_layouts_are_not():
    """``channel_slice`` gives an array over the view's memory whose channels ``[first, first + C)`` are the view,
    inside the owner's memory (a slice at the end of an arena included); a C-contiguous output is itself; a slice
    along another axis or a wrong dtype take the copying route (None)."""
    arena = np.zeros(10_000, np.float32)
    buffer = arena[1000:1000 + 2 * 3 * 4 * 20].reshape(2, 3, 4, 20)
    for c0, c in ((0, 5), (7, 8), (15, 5), (19, 1)):
        view = buffer[..., c0:c0 + c]
        whole, first = fconv.channel_slice(view)
        assert whole.flags.c_contiguous and whole.shape == (2, 3, 4, 20) and 0 <= first <= 20 - c
        assert np.shares_memory(whole, arena)
        assert np.array_equal(whole[..., first:first + c], view)
        whole[..., first:first + c] = c0 + 1.0
        assert (view == c0 + 1.0).all()
    tail = arena[-(3 * 4 * 20):].reshape(1, 3, 4, 20)[..., 2:9]  # a slice ending the owner's memory
    whole, first = fconv.channel_slice(tail)
    assert np.array_equal(whole[..., first:first + 7], tail) and whole.size * 4 <= arena.nbytes
    storage = np.zeros((20, 4, 3, 2), np.float32, order="F")  # an OpenVX tensor's [C, W, H, N], NHWC seen as .T
    view = storage[6:11].T
    whole, first = fconv.channel_slice(view)
    assert np.shares_memory(whole, storage) and np.array_equal(whole[..., first:first + 5], view)
    whole[..., first:first + 5] = 2.0
    assert (storage[6:11] == 2.0).all() and not storage[:6].any() and not storage[11:].any()
    plain = np.zeros((1, 2, 3, 4), np.float32)
    assert fconv.channel_slice(plain)[0] is plain
    assert fconv.channel_slice(buffer[:, :, 1:3]) is None
    assert fconv.channel_slice(buffer[..., 2:5].astype(np.float64)) is None
    column = buffer[:, :, :1, 2:5]  # one pixel a row: the pixel stride told by the rows
    whole, first = fconv.channel_slice(column)
    assert np.array_equal(whole[..., first:first + 3], column)
