"""vxDeconvolutionLayer in float32 and float16 on the float engine (``kernels/openvx/float_deconvolution.py``):
its output phases as the engine's convolutions, through the Pythonic API, against a plain float64 NumPy transposed
convolution written from the NN extension's text; each graph runs in the native plan and gives the Python path's
bits. Float32 sums are held to ``1e-5`` of the sum of their terms' magnitudes (``_assert_close``); float16 must
be the float32 layer's output rounded once to float16, bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model as _model
from native_testing import native_run as _native_run
from native_testing import python_then_native as _python_then_native
from test_standard_float_layers import _assert_close, _values

from openvx_nn.api import Context


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)  # the default: float32 sums on the engine


def reference_deconvolution(x, w, bias, pad, upscale, a):
    """(value, magnitude) in float64, from the text: insert ``upscale - 1`` zeros between the input's samples,
    pad ``kernel - padding - 1`` zeros on each side (negative: crop) and ``a`` more at the far end, then
    ``out[j, k, i] = sum over l, m, n of up[j + m, k + n, l] * weights[m, n, l, i] + bias[i]`` (no flip)."""
    kx, ky, _, maps = w.shape
    batch = x.shape[3:]
    up_shape = [(x.shape[d] - 1) * upscale[d] + 1 for d in (0, 1)]
    upsampled = np.zeros(tuple(up_shape) + x.shape[2:])
    upsampled[::upscale[0], ::upscale[1]] = x.astype(np.float64)
    border = [(kx, ky)[d] - pad[d] - 1 for d in (0, 1)]
    big = 2 * max(kx, ky) + 2  # room for negative borders
    canvas = np.zeros((up_shape[0] + 2 * big + a[0], up_shape[1] + 2 * big + a[1]) + x.shape[2:])
    canvas[big:big + up_shape[0], big:big + up_shape[1]] = upsampled
    start = [big - border[d] for d in (0, 1)]
    out_size = [(x.shape[d] - 1) * upscale[d] - 2 * pad[d] + (kx, ky)[d] + a[d] for d in (0, 1)]
    value = np.zeros((out_size[0], out_size[1], maps) + batch)
    size = np.zeros_like(value)
    w64 = w.astype(np.float64)
    for j in range(out_size[0]):
        for k in range(out_size[1]):
            for m in range(kx):
                for n in range(ky):
                    column = canvas[start[0] + j + m, start[1] + k + n]  # [C, *batch]
                    value[j, k] += np.einsum("l...,li->i...", column, w64[m, n])
                    size[j, k] += np.einsum("l...,li->i...", np.abs(column), np.abs(w64[m, n]))
    if bias is not None:
        b = bias.astype(np.float64).reshape((1, 1, maps) + (1,) * len(batch))
        value, size = value + b, size + np.abs(b)
    return value, size


def _case(rng):
    """A random layer: kernels of 1 to 6 (often not multiples of the upscale), upscales 1 to 4, any padding the
    layer allows, channel counts off the vector width, batches of 0 to 2 dims."""
    upscale = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    kernel = tuple(int(rng.integers(u, 7)) for u in upscale)
    # mostly padding the engine takes (at most kernel - upscale), sometimes more (the exact route's)
    pad = tuple(int(rng.integers(0, max(k - u, 0) + 1)) if rng.random() < 0.8 else int(rng.integers(0, k))
                for k, u in zip(kernel, upscale))
    a = tuple(int(rng.integers(0, u)) for u in upscale)
    shape = tuple(int(rng.integers(1, 12)) for _ in range(2))
    channels, maps = int(rng.integers(1, 21)), int(rng.integers(1, 37))
    batch = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 3))))
    outs = [(shape[d] - 1) * upscale[d] - 2 * pad[d] + kernel[d] + a[d] for d in (0, 1)]
    if min(outs) < 1 or any(shape[d] == 1 and upscale[d] != a[d] + 1 for d in (0, 1)):
        pad = (0, 0)
        upscale = tuple(u if shape[d] > 1 else a[d] + 1 for d, u in enumerate(upscale))
    return shape + (channels,) + batch, kernel + (channels, maps), pad, upscale, a


def _graph(ctx, g, x_values, w, b, case, dtype):
    shape, w_shape, pad, upscale, a = case
    x = ctx.tensor(x_values.astype(dtype))
    out_wh = tuple((shape[d] - 1) * upscale[d] - 2 * pad[d] + w_shape[d] + a[d] for d in (0, 1))
    out = ctx.tensor(shape=out_wh + (w_shape[3],) + shape[3:], dtype=dtype)
    g.deconvolution(x, w.astype(dtype), None if b is None else b.astype(dtype), out=out, padding=pad, a=a,
                    upscale=upscale)
    return out


def _engine_takes(case) -> bool:
    """Whether the float engine must take the layer: along each axis at least ``upscale`` outputs and padding
    at most ``kernel - upscale`` (more, and a phase would start past the input's first sample, or have no tap)."""
    shape, w_shape, pad, upscale, a = case
    outs = [(shape[d] - 1) * upscale[d] - 2 * pad[d] + w_shape[d] + a[d] for d in (0, 1)]
    return all(outs[d] >= upscale[d] and pad[d] <= w_shape[d] - upscale[d] for d in (0, 1))


def _on_engine(g) -> bool:
    return bool(_model(g.handle).order[0].state.get("float"))


@pytest.mark.parametrize("seed", range(6))
def test_a_float32_deconvolution_on_the_float_engine_matches_the_float64_transposed_convolution(seed):
    rng = np.random.default_rng([4100, seed])
    for index in range(4):
        case = _case(rng)
        x, w = _values(rng, case[0]), _values(rng, case[1])
        b = _values(rng, (case[1][3],)) if index % 2 == 0 else None
        with Context() as ctx, ctx.graph() as g:
            out = _graph(ctx, g, x, w, b, case, np.float32)
            python, native = _python_then_native(ctx, g, out)
            if _engine_takes(case):
                assert _on_engine(g), case
            assert python.tobytes() == native.tobytes(), case
        value, size = reference_deconvolution(x, w, b, case[2], case[3], case[4])
        assert native.shape == value.shape
        _assert_close(native, value, size)


@pytest.mark.parametrize("case", [((56, 56, 64), (2, 2, 64, 32), (0, 0), (2, 2), (0, 0)),
                                  ((14, 14, 24), (4, 4, 24, 17), (1, 1), (2, 2), (0, 0)),
                                  ((9, 7, 5, 2), (3, 5, 5, 9), (1, 2), (2, 3), (1, 2))],
                         ids=["2x2-s2-depth-to-space", "4x4-s2-pad1", "3x5-s2x3-a"])
def test_the_layers_of_the_benchmark_and_odd_geometries_match_the_reference(case):
    rng = np.random.default_rng(4101)
    x, w, b = _values(rng, case[0]), _values(rng, case[1]), _values(rng, (case[1][3],))
    with Context() as ctx, ctx.graph() as g:
        out = _graph(ctx, g, x, w, b, case, np.float32)
        got = _native_run(g, out)
        assert _on_engine(g)
    _assert_close(got, *reference_deconvolution(x, w, b, case[2], case[3], case[4]))


def test_a_kernel_smaller_than_the_upscale_keeps_the_correlation_route():
    # phases with no tap hold the bias alone: not the engine's, the exact float64 route computes them
    rng = np.random.default_rng(4102)
    case = ((5, 4, 3), (1, 2, 3, 4), (0, 0), (2, 2), (0, 0))
    x, w, b = _values(rng, case[0]), _values(rng, case[1]), _values(rng, (4,))
    with Context() as ctx, ctx.graph() as g:
        out = _graph(ctx, g, x, w, b, case, np.float32)
        got = _native_run(g, out)
        assert not _on_engine(g)
    _assert_close(got, *reference_deconvolution(x, w, b, case[2], case[3], case[4]))


@pytest.mark.parametrize("seed", range(4))
def test_a_float16_deconvolution_is_the_float32_one_rounded_once(seed):
    rng = np.random.default_rng([4103, seed])
    for index in range(3):
        case = _case(rng)
        x = _values(rng, case[0]).astype(np.float16).astype(np.float32)
        w = _values(rng, case[1]).astype(np.float16).astype(np.float32)
        b = _values(rng, (case[1][3],)).astype(np.float16).astype(np.float32) if index != 1 else None
        got = {}
        for dtype in (np.float32, np.float16):
            with Context() as ctx, ctx.graph() as g:
                out = _graph(ctx, g, x, w, b, case, dtype)
                python, got[dtype] = _python_then_native(ctx, g, out)
                assert python.tobytes() == got[dtype].tobytes(), case
        assert got[np.float16].tobytes() == got[np.float32].astype(np.float16).tobytes(), case
