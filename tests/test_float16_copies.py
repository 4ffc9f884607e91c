"""Float16 convolution and deconvolution layers that convert in the float engine's layout copies.

The float32 layer copies a planar input into channels-last and its output back (``chw_layout``; the deconvolution's
phases are placed by ``phase_scatter``); on float16 tensors those copies widen binary16 and narrow back themselves,
no whole-tensor conversion pass (the copies' own tests: ``tests/kernels/test_chw_layout``, ``test_phase_scatter``).
Each layer is checked against the documented float16 semantics, bit for bit: the float32 graph's output on the
widened inputs, rounded once to binary16 (NumPy's ``astype``, nearest-even), on inputs dense in edge patterns
(signed zeros, subnormals, the largest half, infinities, signaling and quiet NaNs, sums past 65504); also with the
8-wide squares of an AVX2 machine (``OPENVX_NN_ISA=avx2``) and with the plain loops.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import python_run, python_then_native
from test_chw_layout import EDGE_BITS, copy_route  # noqa: F401 - the fixture, by name

from openvx_nn.api import Context
from openvx_nn.kernels.openvx import float16

F16 = np.float16


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint16).tobytes()


def _bytes(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


# -- the layers ---------------------------------------------------------------------------------------------------
def _layer_values(rng, shape) -> np.ndarray:
    """Values of mixed magnitudes with every edge pattern sprinkled in (some near 65504: sums overflow)."""
    v = (rng.standard_normal(shape) * 2.0 ** rng.integers(-3, 4, shape)).astype(F16)
    flat = v.reshape(-1).view(np.uint16)
    picks = rng.random(flat.size) < 0.04
    flat[picks] = rng.choice(EDGE_BITS, int(picks.sum()))
    big = rng.random(flat.size) < 0.03
    flat[big] = (rng.choice([-1, 1], int(big.sum())) * rng.uniform(30000, 65504, int(big.sum()))).astype(F16) \
        .view(np.uint16)
    return v


class _Conversions:
    """The shapes of the float16 arrays the edges convert whole (a layer's [static] weights and biases, widened at
    verify; on the copies' route never its input or output)."""

    def __init__(self, monkeypatch):
        self.shapes = []
        for name in ("bind", "native_entry"):
            original = getattr(float16, name)

            def counted(src, dst, widen, *args, _original=original, **kwargs):
                self.shapes.append(tuple((src if widen else dst).shape))
                return _original(src, dst, widen, *args, **kwargs)
            monkeypatch.setattr(float16, name, counted)

    def of(self, *shapes) -> list:
        return [s for s in self.shapes if s in shapes]


def _both(build, x16, w16, b16, out_shape):
    """(float16 output, float32 output on the widened values rounded once): each from a Python run and a native
    run of its graph, which agree bit for bit."""
    outs = []
    for dtype in (F16, np.float32):
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(x16.astype(dtype))
            out = ctx.tensor(shape=out_shape, dtype=dtype)
            build(g, x, w16.astype(dtype), None if b16 is None else b16.astype(dtype), out)
            python, native = python_then_native(ctx, g, out)
        assert _bytes(python) == _bytes(native)
        outs.append(native)
    with np.errstate(all="ignore"):
        return outs[0], outs[1].astype(F16)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.usefixtures("copy_route")
def test_a_float16_convolution_is_the_float32_one_rounded_once_converting_in_its_copies(seed, monkeypatch):
    rng = np.random.default_rng([1642, seed])
    channels, maps = int(rng.integers(1, 41)), int(rng.integers(1, 37))
    kx, ky = (1, 1) if seed < 3 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    pad = (int(rng.integers(0, kx)), int(rng.integers(0, ky)))
    stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    batch = (2,) if seed % 4 == 1 else ()
    shape = (int(rng.integers(kx, 40)), int(rng.integers(ky, 30)), channels) + batch
    out_wh = tuple((shape[a] + 2 * pad[a] - (kx, ky)[a]) // stride[a] + 1 for a in (0, 1))
    x16, w16 = _layer_values(rng, shape), _layer_values(rng, (kx, ky, channels, maps))
    b16 = None if seed == 4 else _layer_values(rng, (maps,))
    conversions = _Conversions(monkeypatch)

    def build(g, x, w, b, out):
        g.convolution(x, w, b, out=out, padding=pad, stride=stride)
    got, want = _both(build, x16, w16, b16, out_wh + (maps,) + batch)
    assert _bits(got) == _bits(want)
    if channels > 1:
        assert not conversions.of(shape, out_wh + (maps,) + batch), "the layer converted its input or output whole"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.usefixtures("copy_route")
def test_a_float16_deconvolution_is_the_float32_one_rounded_once_converting_in_its_copies(seed, monkeypatch):
    rng = np.random.default_rng([1643, seed])
    channels, maps = int(rng.integers(1, 41)), int(rng.integers(1, 37))
    k = 2 if seed < 3 else int(rng.integers(1, 4))
    a = (k - 1,) * 2 if seed < 3 else (int(rng.integers(0, k)),) * 2  # 2x2 stride 2 first, then others
    pad = (0, 0) if seed < 3 else (int(rng.integers(0, k)),) * 2
    batch = (2,) if seed == 1 else ()
    shape = (int(rng.integers(2, 30)), int(rng.integers(2, 20)), channels) + batch
    x16, w16 = _layer_values(rng, shape), _layer_values(rng, (k, k, channels, maps))
    b16 = None if seed == 2 else _layer_values(rng, (maps,))
    out_wh = tuple((shape[i] - 1) * (a[i] + 1) - 2 * pad[i] + k + a[i] for i in (0, 1))
    conversions = _Conversions(monkeypatch)

    def build(g, x, w, b, out):
        g.deconvolution(x, w, b, out=out, padding=pad, a=a)
    got, want = _both(build, x16, w16, b16, out_wh + (maps,) + batch)
    assert _bits(got) == _bits(want)
    if seed < 3:
        assert not conversions.of(shape, out_wh + (maps,) + batch), "the layer converted its input or output whole"


def test_a_float16_convolution_on_a_strided_view_keeps_the_edges(monkeypatch):
    """A view of a wider tensor is not packed: the layer converts at its edges, the same bits."""
    rng = np.random.default_rng(1644)
    whole = _layer_values(rng, (12, 9, 5))
    w16, b16 = _layer_values(rng, (1, 1, 5, 7)), _layer_values(rng, (7,))
    conversions = _Conversions(monkeypatch)
    outs = []
    for dtype in (F16, np.float32):
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(whole.astype(dtype)).view((2, 0, 0), (10, 9, 5))  # columns 2..9: rows apart
            out = ctx.tensor(shape=(8, 9, 7), dtype=dtype)
            g.convolution(x, w16.astype(dtype), b16.astype(dtype), out=out)
            (python,) = python_run(ctx, g, [out])  # a strided view has no native plan
            outs.append(python)
    with np.errstate(all="ignore"):
        assert _bits(outs[0]) == _bits(outs[1].astype(F16))
    assert conversions.of((8, 9, 5)) and conversions.of((8, 9, 7))
