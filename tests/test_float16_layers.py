"""``VX_TYPE_FLOAT16`` NN layers and tensor operations: float32 arithmetic, one rounding to binary16 per output.

Each layer and operation runs on float16 tensors through the Pythonic API (and one graph from C), on the Python
path and on the native plan (the same bits), and is compared with a plain float64 NumPy reference written here from
the NN extension's text, rounded once to float16 (``astype``, nearest-even).

Tolerance, in float16 units in the last place (the distance between adjacent binary16 values counted on the
ordered bit patterns, so 65504 and infinity are one apart and both zeros are one point):
- 1 ulp everywhere: the kernel's float32 result is rounded to float16 once; the float32 value is within a few
  float32 ulps of the exact one (2^-13 of a float16 ulp), so its rounding can land on the neighbour of the exact
  value's rounding only when the exact value lies that close to a half-way point.
- the layers that sum (convolution, deconvolution, fully connected, matrix multiply) add to that the float32
  sum's own bound, ``1e-5`` of the sum of the terms' magnitudes (the float32 layers' documented tolerance): a sum
  that cancels can be small next to its terms.
- max pooling, ROI pooling, transpose and ReLU select an input: exact (0 ulp).
Infinities must match exactly (or be the 65504 neighbour of an overflow), NaN must be NaN.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import compile_c, run_c
from layer_references import roi_pooling_ref
from native_testing import model, python_then_native

from openvx_nn.api import Context
from openvx_nn.api.errors import VXError
from openvx_nn.kernels.openvx import float16

F16 = np.float16


# -- the conversions ------------------------------------------------------------------------------------------
def test_every_float16_widens_to_its_float32_value():
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(F16)
    got = np.empty(halves.shape, np.float32)
    float16.convert(halves, got, widen=True)
    assert got.view(np.uint32).tolist() == halves.astype(np.float32).view(np.uint32).tolist()


def test_float32_narrows_to_the_nearest_float16_ties_to_even_like_numpy():
    # every sign, exponent and top 10 significand bits, with the 13 bits that decide the rounding set to each
    # pattern around the half-way point: ties, just below and above, and a sticky bit shifted out of subnormals
    high = np.arange(1 << 19, dtype=np.uint32) << 13
    low = np.array([0, 1, 0x7FF, 0x800, 0xFFF, 0x1000, 0x1001, 0x17FF, 0x1800, 0x1FFF], np.uint32)
    values = (high[:, None] | low[None, :]).ravel().view(np.float32)
    got = np.empty(values.shape, F16)
    float16.convert(values, got, widen=False)
    with np.errstate(over="ignore"):
        want = values.astype(F16)
    mismatch = np.flatnonzero(got.view(np.uint16) != want.view(np.uint16))
    assert mismatch.size == 0, [(hex(int(values.view(np.uint32)[i])), got[i], want[i]) for i in mismatch[:5]]


def test_conversions_follow_strided_views():
    rng = np.random.default_rng(1600)
    base = rng.standard_normal((6, 5, 4)).astype(F16)
    src = base[::2, :, 1:]
    wide = np.zeros((3, 5, 3), np.float32, order="F")
    float16.convert(src, wide, widen=True)
    assert np.array_equal(wide, src.astype(np.float32))
    narrow = np.zeros((8, 5, 3), F16)[::3]
    float16.convert(wide * 3, narrow, widen=False)
    assert narrow.view(np.uint16).tolist() == (wide * 3).astype(F16).view(np.uint16).tolist()


# -- comparison ----------------------------------------------------------------------------------------------------
def _ordered(a: np.ndarray) -> np.ndarray:
    """float16 bit patterns as integers in value order (both zeros 0; 65504 and inf adjacent)."""
    bits = a.astype(F16).view(np.uint16).astype(np.int64)
    return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)


def _assert_f16(got: np.ndarray, exact: np.ndarray, ulps: int = 1, magnitude: np.ndarray | None = None):
    """``got`` (float16) within ``ulps`` of ``exact`` (float64) rounded to float16, or (sums) within the float32
    sum's bound ``1e-5 * magnitude`` plus a float16 ulp of ``exact``."""
    assert got.dtype == F16
    with np.errstate(over="ignore", invalid="ignore"):
        want = exact.astype(F16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), np.argwhere(np.isnan(got) != nan)[:5]
    distance = np.abs(_ordered(got) - _ordered(want))
    ok = nan | (distance <= ulps)
    if magnitude is not None:
        with np.errstate(invalid="ignore", over="ignore"):
            room = 1e-5 * magnitude + np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
            ok |= np.isfinite(exact) & (np.abs(got.astype(np.float64) - exact) <= room)
    bad = np.argwhere(~ok)
    assert bad.size == 0, [(tuple(i), got[tuple(i)], exact[tuple(i)]) for i in bad[:5]]


def _values(rng, shape, edges: bool = True, scale: float = 1.0) -> np.ndarray:
    """float16 values of mixed magnitudes; ``edges``: some inf, -inf, NaN, subnormals, signed zeros and values
    near 65504 (whose sums and squares overflow float16)."""
    v = rng.standard_normal(shape) * scale * 2.0 ** rng.integers(-3, 4, shape)
    if edges:
        pick = rng.random(shape)
        v[pick < 0.01] = np.inf
        v[(pick >= 0.01) & (pick < 0.02)] = -np.inf
        v[(pick >= 0.02) & (pick < 0.03)] = np.nan
        v[(pick >= 0.03) & (pick < 0.06)] = rng.integers(-1023, 1024, int(((pick >= 0.03) & (pick < 0.06)).sum())) \
            * 2.0 ** -24  # subnormals
        v[(pick >= 0.06) & (pick < 0.08)] = -0.0
        v[(pick >= 0.08) & (pick < 0.10)] = rng.choice([-1, 1], int(((pick >= 0.08) & (pick < 0.10)).sum())) \
            * rng.uniform(30000, 65504, int(((pick >= 0.08) & (pick < 0.10)).sum()))
    return v.astype(F16)


def _run(ctx, g, out) -> np.ndarray:
    """The output after a Python-path run and a native run, which must give the same bits."""
    python, native = python_then_native(ctx, g, out)
    assert python.dtype == F16
    assert python.view(np.uint16).tobytes() == native.view(np.uint16).tobytes()
    return native


def _f64(a):
    return np.asarray(a, np.float64)


# -- convolution, deconvolution, fully connected: sums -------------------------------------------------------------
def _conv_ref(x, w, b, out_wh, pad, stride):
    """``out[ox, oy, k] = b[k] + sum x[ox*sx - px + kx, oy*sy - py + ky, c] w[kx, ky, c, k]``, zeros outside."""
    x, w = _f64(x), _f64(w)
    kx_n, ky_n, _, maps = w.shape
    padded = np.zeros((x.shape[0] + 2 * pad[0] + kx_n + stride[0] * out_wh[0], x.shape[1] + 2 * pad[1] + ky_n
                       + stride[1] * out_wh[1]) + x.shape[2:])
    padded[pad[0]:pad[0] + x.shape[0], pad[1]:pad[1] + x.shape[1]] = x
    value = np.zeros(out_wh + (maps,) + x.shape[3:])
    size = np.zeros_like(value)
    for kx in range(kx_n):
        for ky in range(ky_n):
            taps = padded[kx:kx + stride[0] * out_wh[0]:stride[0], ky:ky + stride[1] * out_wh[1]:stride[1]]
            with np.errstate(invalid="ignore", over="ignore"):
                value += np.einsum("xyc...,ck->xyk...", taps, w[kx, ky])
                size += np.einsum("xyc...,ck->xyk...", np.abs(taps), np.abs(w[kx, ky]))
    if b is not None:
        bb = _f64(b).reshape((1, 1, maps) + (1,) * (x.ndim - 3))
        value, size = value + bb, size + np.abs(bb)
    return value, size


@pytest.mark.parametrize("seed", range(3))
def test_a_float16_convolution_is_the_float64_one_rounded_once(seed):
    rng = np.random.default_rng([1601, seed])
    channels, maps = int(rng.integers(1, 9)), int(rng.integers(1, 12))
    kx, ky = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    pad = (int(rng.integers(0, kx)), int(rng.integers(0, ky)))
    stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    batch = (2,) if seed == 2 else ()
    shape = (int(rng.integers(kx, 14)), int(rng.integers(ky, 14)), channels) + batch
    out_wh = tuple((shape[a] + 2 * pad[a] - (kx, ky)[a]) // stride[a] + 1 for a in (0, 1))
    x16, w16, b16 = _values(rng, shape), _values(rng, (kx, ky, channels, maps), edges=False), \
        _values(rng, (maps,), edges=False)
    with Context() as ctx, ctx.graph() as g:
        x, out = ctx.tensor(x16), ctx.tensor(shape=out_wh + (maps,) + batch, dtype=F16)
        g.convolution(x, w16, b16, out=out, padding=pad, stride=stride)
        got = _run(ctx, g, out)
        assert model(g.handle).order[0].state["half"].state["float"], "not on the float engine"
    value, size = _conv_ref(x16, w16, b16, out_wh, pad, stride)
    _assert_f16(got, value, magnitude=size)


@pytest.mark.parametrize("seed", range(2))
def test_a_float16_deconvolution_is_the_float64_one_rounded_once(seed):
    from conv_reference import upsampled_padded
    rng = np.random.default_rng([1602, seed])
    channels, maps, k = int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
    pad, a = (int(rng.integers(0, k)),) * 2, (int(rng.integers(0, 2)),) * 2
    x16 = _values(rng, (int(rng.integers(2, 7)), int(rng.integers(2, 7)), channels))
    w16, b16 = _values(rng, (k, k, channels, maps), edges=False), _values(rng, (maps,), edges=False)
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        out = g.deconvolution(x, w16, b16, out=None, padding=pad, a=a)
        result = ctx.tensor(shape=out.shape, dtype=F16)
        g.activation(out, "abs", out=result)  # a virtual float16 tensor between two float16 nodes
        got = _run(ctx, g, result)
    u, real = upsampled_padded(x16.astype(np.float64), (a[0] + 1, a[1] + 1), pad, (k, k), a)
    u = np.where(real, u, 0.0)
    ow, oh = got.shape[:2]
    value, size = np.zeros((ow, oh, maps)), np.zeros((ow, oh, maps))
    for mx in range(k):
        for my in range(k):
            with np.errstate(invalid="ignore"):
                value += np.einsum("xyc,ck->xyk", u[mx:mx + ow, my:my + oh], _f64(w16[mx, my]))
                size += np.einsum("xyc,ck->xyk", np.abs(u[mx:mx + ow, my:my + oh]), np.abs(_f64(w16[mx, my])))
    value, size = value + _f64(b16), size + np.abs(_f64(b16))
    _assert_f16(got, np.abs(value), magnitude=size)


@pytest.mark.parametrize("seed", range(3))
def test_a_float16_fully_connected_layer_is_the_float64_one_rounded_once(seed):
    rng = np.random.default_rng([1603, seed])
    n_in, n_out, batch = int(rng.integers(1, 200)), int(rng.integers(1, 40)), int(rng.integers(1, 4))
    x16, w16 = _values(rng, (n_in, batch)), _values(rng, (n_in, n_out), edges=False, scale=0.1)
    b16 = _values(rng, (n_out,), edges=False) if seed != 1 else None
    with Context() as ctx, ctx.graph() as g:
        x, out = ctx.tensor(x16), ctx.tensor(shape=(n_out, batch), dtype=F16)
        g.fully_connected(x, w16, b16, out=out)
        got = _run(ctx, g, out)
        assert model(g.handle).order[0].state["half"].state["float"], "not on the float engine"
    with np.errstate(invalid="ignore", over="ignore"):
        value = np.einsum("ib,io->ob", _f64(x16), _f64(w16))
        size = np.einsum("ib,io->ob", np.abs(_f64(x16)), np.abs(_f64(w16)))
    if b16 is not None:
        value, size = value + _f64(b16)[:, None], size + np.abs(_f64(b16))[:, None]
    _assert_f16(got, value, magnitude=size)


# -- pooling, ROI pooling ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "seed"), [("max", 0), ("max", 1), ("avg", 0), ("avg", 1)])
def test_float16_pooling_is_the_float64_window_rounded_once(kind, seed):
    rng = np.random.default_rng([1604, seed, kind == "max"])
    size = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    pad = (int(rng.integers(0, size[0])), int(rng.integers(0, size[1])))
    x16 = _values(rng, (int(rng.integers(size[0], 15)), int(rng.integers(size[1], 15)), int(rng.integers(1, 5))))
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        out = g.pooling(x, kind=kind, size=size, padding=pad, stride=size)
        result = ctx.tensor(shape=out.shape, dtype=F16)
        g.activation(out, "relu" if kind == "max" else "abs", out=result)
        got = _run(ctx, g, result)
    ow, oh = got.shape[:2]
    x64 = _f64(x16)
    want = np.zeros(got.shape)
    for ox in range(ow):
        for oy in range(oh):
            x0, y0 = ox * size[0] - pad[0], oy * size[1] - pad[1]
            window = x64[max(x0, 0):x0 + size[0], max(y0, 0):y0 + size[1]].reshape(-1, x16.shape[2])
            if kind == "max":  # over the inside positions; NaN if any is NaN
                want[ox, oy] = np.where(np.isnan(window).any(0), np.nan, window.max(0, initial=-np.inf))
            else:  # padding counts as zeros in the full window
                with np.errstate(invalid="ignore"):
                    want[ox, oy] = window.sum(0) / (size[0] * size[1])
    with np.errstate(invalid="ignore"):
        want = np.where(np.isnan(want), np.nan, np.where(want > 0, want, 0.0)) if kind == "max" else np.abs(want)
    _assert_f16(got, want, ulps=0 if kind == "max" else 1)


def test_float16_roi_pooling_takes_the_largest_of_each_bin():
    from kernel_testing import F32
    rng = np.random.default_rng(1605)
    x16 = _values(rng, (12, 10, 3))
    x16[np.isnan(x16)] = 1.0  # NaN in a bin is float32 ROI pooling's own business; here: selection and -inf
    rois = np.array([[0, 0, 11, 9], [2, 3, 7, 5], [5, 5, 5, 5], [10, 1, 11, 8]], np.int32).T
    with Context() as ctx, ctx.graph() as g:
        x, out = ctx.tensor(x16), ctx.tensor(shape=(3, 2, 3, 4), dtype=F16)
        g.roi_pooling(x, rois, out=out)
        got = _run(ctx, g, out)
    want = roi_pooling_ref(x16.astype(np.float32), rois, (3, 2, 3, 4), F32)
    _assert_f16(got, _f64(want), ulps=0)


# -- softmax, LRN, activation ------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_float16_softmax_is_the_float64_one_rounded_once(rank):
    rng = np.random.default_rng([1606, rank])
    shape = tuple(int(n) for n in rng.integers(1, 7, rank))
    x16 = _values(rng, shape, edges=False, scale=3.0)
    x16.flat[0] = -np.inf  # an impossible class: 0
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        out = ctx.tensor(shape=shape, dtype=F16)
        g.softmax(x, out=out)
        got = _run(ctx, g, out)
    axis = 0 if rank <= 2 else 2
    x64 = _f64(x16)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    _assert_f16(got, e / e.sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("kind", ["across_maps", "same_map"])
def test_float16_local_response_normalization_is_the_float64_one_rounded_once(kind):
    rng = np.random.default_rng([1607, kind == "same_map"])
    shape = (int(rng.integers(1, 8)), int(rng.integers(1, 8)), int(rng.integers(1, 8)), 2)
    x16 = _values(rng, shape, edges=False, scale=4.0)
    size, alpha, beta, bias = 5, 0.02, 0.75, 1.5
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        out = ctx.tensor(shape=shape, dtype=F16)
        g.local_response_normalization(x, out=out, kind=kind, size=size, alpha=alpha, beta=beta, bias=bias)
        got = _run(ctx, g, out)
    x64, h = _f64(x16), size // 2
    squares = np.zeros_like(x64)
    padded = np.zeros((shape[0] + 2 * h, shape[1] + 2 * h, shape[2] + 2 * h, 2))
    padded[h:h + shape[0], h:h + shape[1], h:h + shape[2]] = x64 ** 2
    if kind == "across_maps":
        for k in range(size):
            squares += padded[h:h + shape[0], h:h + shape[1], k:k + shape[2]]
        n = size
    else:
        for i in range(size):
            for j in range(size):
                squares += padded[i:i + shape[0], j:j + shape[1], h:h + shape[2]]
        n = size * size
    a, b, c = (float(np.float32(v)) for v in (alpha, beta, bias))  # the scalars are float32
    _assert_f16(got, x64 / (c + a / n * squares) ** b)


ACTIVATIONS = {
    "logistic": (0.0, 0.0, lambda v, a, b: 1 / (1 + np.exp(-v))),
    "tanh": (1.5, 0.5, lambda v, a, b: a * np.tanh(b * v)),
    "relu": (0.0, 0.0, lambda v, a, b: np.where(v <= 0, 0.0, v)),  # the text's max(0, x); NaN stays NaN
    "brelu": (6.0, 0.0, lambda v, a, b: np.where(v > a, a, np.where(v <= 0, 0.0, v))),
    "softrelu": (0.0, 0.0, lambda v, a, b: np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))),
    "abs": (0.0, 0.0, lambda v, a, b: np.abs(v)),
    "square": (0.0, 0.0, lambda v, a, b: v * v),
    "sqrt": (0.0, 0.0, lambda v, a, b: np.sqrt(v)),
    "linear": (300.0, 0.25, lambda v, a, b: a * v + b),
}


@pytest.mark.parametrize("function", ACTIVATIONS)
def test_each_float16_activation_is_the_float64_function_rounded_once(function):
    rng = np.random.default_rng([1608, len(function)])
    a, b, f = ACTIVATIONS[function]
    x16 = _values(rng, (int(rng.integers(1, 30)), int(rng.integers(1, 9)), 3), scale=20.0)
    x16[0, 0, :] = [300.0, -300.0, 1e-7]  # squares past 65504 (inf), a linear beyond range, a subnormal
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        out = ctx.tensor(shape=x16.shape, dtype=F16)
        g.activation(x, function, a, b, out=out)
        got = _run(ctx, g, out)
    with np.errstate(all="ignore"):
        want = f(_f64(x16), float(np.float32(a)), float(np.float32(b)))
    _assert_f16(got, want, ulps=0 if function in ("relu", "abs") else 1)


# -- tensor operations ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("operation", ["add", "subtract", "multiply"])
def test_float16_element_wise_operations_are_the_float64_ones_rounded_once(operation):
    rng = np.random.default_rng([1609, len(operation)])
    shape = tuple(int(n) for n in rng.integers(1, 8, 3))
    other = tuple(n if rng.random() < 0.5 else 1 for n in shape)  # input2 broadcasts
    a16, b16 = _values(rng, shape), _values(rng, other)
    a16.flat[0], b16.flat[0] = 2.0 ** -14, 2.0 ** -20  # subnormal results
    with Context() as ctx, ctx.graph() as g:
        a, b = ctx.tensor(a16), ctx.tensor(b16)
        out = ctx.tensor(shape=shape, dtype=F16)
        scale = 2.0 ** -9
        if operation == "multiply":
            g.multiply(a, b, out=out, scale=scale)
        else:
            getattr(g, operation)(a, b, out=out)
        got = _run(ctx, g, out)
    x, y = _f64(a16), _f64(b16)
    with np.errstate(all="ignore"):
        want = {"add": x + y, "subtract": x - y, "multiply": x * y * scale}[operation]
    _assert_f16(got, want)


def test_a_float16_transpose_moves_every_bit_pattern():
    rng = np.random.default_rng(1610)
    bits = rng.integers(0, 1 << 16, (5, 4, 3)).astype(np.uint16)  # NaN payloads and subnormals included
    with Context() as ctx, ctx.graph() as g:
        a = ctx.tensor(bits.view(F16))
        out = ctx.tensor(shape=(3, 4, 5), dtype=F16)
        g.transpose(a, 0, 2, out=out)
        got = _run(ctx, g, out)
    assert got.view(np.uint16).tolist() == bits.transpose(2, 1, 0).tolist()


@pytest.mark.parametrize("seed", range(2))
def test_a_float16_matrix_multiply_is_the_float64_one_rounded_once(seed):
    rng = np.random.default_rng([1611, seed])
    m, k, n = (int(v) for v in rng.integers(1, 30, 3))
    a16, b16, c16 = _values(rng, (k, m)), _values(rng, (n, k), edges=False), _values(rng, (n, m), edges=False)
    with Context() as ctx, ctx.graph() as g:
        a = ctx.tensor(a16)
        out = ctx.tensor(shape=(n, m), dtype=F16)
        g.matrix_multiply(a, b16, c16, out=out)
        got = _run(ctx, g, out)
    # dims are [columns, rows]: the NumPy arrays are the transposed matrices
    with np.errstate(all="ignore"):
        value = (_f64(a16).T @ _f64(b16).T).T + _f64(c16)
        size = (np.abs(_f64(a16)).T @ np.abs(_f64(b16)).T).T + np.abs(_f64(c16))
    _assert_f16(got, value, magnitude=size)


def test_convert_depth_takes_float16_on_either_side():
    rng = np.random.default_rng(1612)
    x16 = _values(rng, (7, 5))
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        wide = ctx.tensor(shape=(7, 5), dtype=np.float32)
        g.convert_depth(x, out=wide, norm=0.5, offset=1.0)
        back = ctx.tensor(shape=(7, 5), dtype=F16)
        g.convert_depth(wide, out=back)
        g.process()
        with np.errstate(all="ignore"):
            want = (_f64(x16) - 1.0) / 0.5
        assert np.array_equal(wide.numpy(), want.astype(np.float32), equal_nan=True)  # exact in float32
        _assert_f16(back.numpy(), want)


# -- formats the standard does not allow -----------------------------------------------------------------------------
def _refused(build) -> VXError:
    with Context() as ctx, ctx.graph() as g:
        build(ctx, g)
        with pytest.raises(VXError) as caught:
            g.verify()
    return caught.value


@pytest.mark.parametrize("case", ["weights", "biases", "output", "add", "matmul", "input"])
def test_verify_refuses_float16_beside_another_data_type(case):
    rng = np.random.default_rng(1613)
    x16, x32 = _values(rng, (6, 6, 2), edges=False), np.ones((6, 6, 2), np.float32)

    def build(ctx, g):
        if case == "weights":
            g.convolution(ctx.tensor(x16), ctx.tensor(np.ones((3, 3, 2, 4), np.float32)),
                          out=ctx.tensor(shape=(4, 4, 4), dtype=F16))
        elif case == "biases":
            g.convolution(ctx.tensor(x16), np.ones((3, 3, 2, 4), F16), ctx.tensor(np.ones(4, np.float32)),
                          out=ctx.tensor(shape=(4, 4, 4), dtype=F16))
        elif case == "output":
            g.activation(ctx.tensor(x16), "relu", out=ctx.tensor(shape=(6, 6, 2), dtype=np.float32))
        elif case == "input":
            g.softmax(ctx.tensor(x32), out=ctx.tensor(shape=(6, 6, 2), dtype=F16))
        elif case == "add":
            g.add(ctx.tensor(x16), ctx.tensor(x32), out=ctx.tensor(shape=(6, 6, 2), dtype=F16))
        else:
            g.matrix_multiply(ctx.tensor(x16[:, :, 0]), ctx.tensor(np.ones((6, 6), np.int16)),
                              out=ctx.tensor(shape=(6, 6), dtype=F16))
    error = _refused(build)
    assert error.status_name == "VX_ERROR_INVALID_TYPE"
    assert "VX_TYPE_FLOAT16" in str(error) and "one data type" in str(error), str(error)


def test_table_lookup_still_refuses_float16():
    def build(ctx, g):
        g.table_lookup(ctx.tensor(np.zeros((4,), F16)), ctx.lut(np.arange(256, dtype=np.uint8)),
                       out=ctx.tensor(shape=(4,), dtype=F16))
    error = _refused(build)
    assert error.status_name == "VX_ERROR_INVALID_TYPE"


def test_weights_written_after_verify_are_widened_again():
    rng = np.random.default_rng(1614)
    x16, w16 = _values(rng, (5, 5, 2), edges=False), _values(rng, (3, 3, 2, 3), edges=False)
    with Context() as ctx, ctx.graph() as g:
        x, w = ctx.tensor(x16), ctx.tensor(w16)
        out = ctx.tensor(shape=(3, 3, 3), dtype=F16)
        g.convolution(x, w, out=out)
        g.process()
        w.write(-w16)
        g.process()
        value, size = _conv_ref(x16, -w16, None, (3, 3), (0, 0), (1, 1))
        _assert_f16(out.numpy(), value, magnitude=size)


# -- from C ------------------------------------------------------------------------------------------------------------
C_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

static char last_log[VX_MAX_LOG_MESSAGE_LEN];
static void on_log(vx_context c, vx_reference r, vx_status s, const vx_char text[])
{ (void)c; (void)r; (void)s; strncpy(last_log, text, sizeof last_log - 1); }

static const vx_uint16 input_bits[6 * 6 * 2] = { INPUT };
static const vx_uint16 weight_bits[3 * 3 * 2 * 4] = { WEIGHTS };

static vx_tensor filled(vx_context context, vx_size n, const vx_size *dims, vx_enum type, const void *data)
{
    vx_tensor t = vxCreateTensor(context, n, dims, type, 0);
    vx_size start[4] = {0, 0, 0, 0}, stride[4];
    vx_size size = type == VX_TYPE_FLOAT16 ? 2 : 4;
    stride[0] = size;
    for (vx_size i = 1; i < n; i++) stride[i] = stride[i - 1] * dims[i - 1];
    vxCopyTensorPatch(t, n, start, dims, stride, (void *)data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
    return t;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vxRegisterLogCallback(context, on_log, vx_false_e);
    vx_size in_dims[3] = {6, 6, 2}, w_dims[4] = {3, 3, 2, 4}, mid_dims[3] = {4, 4, 4}, out_dims[3] = {2, 2, 4};
    vx_tensor input = filled(context, 3, in_dims, VX_TYPE_FLOAT16, input_bits);
    vx_tensor weights = filled(context, 4, w_dims, VX_TYPE_FLOAT16, weight_bits);
    vx_tensor output = vxCreateTensor(context, 3, out_dims, VX_TYPE_FLOAT16, 0);
    vx_graph graph = vxCreateGraph(context);
    vx_tensor conv = vxCreateVirtualTensor(graph, 3, mid_dims, VX_TYPE_FLOAT16, 0);
    vx_tensor act = vxCreateVirtualTensor(graph, 3, mid_dims, VX_TYPE_FLOAT16, 0);
    vx_nn_convolution_params_t params = {0, 0, VX_CONVERT_POLICY_SATURATE, VX_ROUND_POLICY_TO_NEAREST_EVEN,
                                         VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0};
    vxConvolutionLayer(graph, input, weights, NULL, &params, sizeof params, conv);
    vxActivationLayer(graph, conv, VX_NN_ACTIVATION_RELU, 0, 0, act);
    vxPoolingLayer(graph, act, VX_NN_POOLING_MAX, 2, 2, 0, 0, VX_NN_DS_SIZE_ROUNDING_FLOOR, output);
    if (vxVerifyGraph(graph) != VX_SUCCESS || vxProcessGraph(graph) != VX_SUCCESS) {
        fprintf(stderr, "float16 graph failed: %s\n", last_log);
        return 1;
    }
    vx_uint16 result[16];
    vx_size start[3] = {0, 0, 0}, stride[3] = {2, 4, 8};
    vxCopyTensorPatch(output, 3, start, out_dims, stride, result, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
    for (int i = 0; i < 16; i++) printf("%04x\n", result[i]);

    /* float32 weights under a float16 input: refused at verify */
    vx_float32 ones[72];
    for (int i = 0; i < 72; i++) ones[i] = 1.0f;
    vx_tensor wide = filled(context, 4, w_dims, VX_TYPE_FLOAT32, ones);
    vx_tensor plain = vxCreateTensor(context, 3, mid_dims, VX_TYPE_FLOAT16, 0);
    vx_graph mixed = vxCreateGraph(context);
    vxConvolutionLayer(mixed, input, wide, NULL, &params, sizeof params, plain);
    vx_status status = vxVerifyGraph(mixed);
    printf("mixed %d %s\n", status, last_log);
    vxReleaseContext(&context);
    return 0;
}
"""


def test_a_float16_network_from_c_matches_the_reference_and_refuses_mixed_types():
    rng = np.random.default_rng(1615)
    x16, w16 = _values(rng, (6, 6, 2), edges=False), _values(rng, (3, 3, 2, 4), edges=False)
    as_c = lambda a: ", ".join(str(int(v)) for v in a.ravel(order="F").view(np.uint16))
    exe = compile_c(C_PROGRAM.replace("INPUT", as_c(x16)).replace("WEIGHTS", as_c(w16)), "float16_network")
    result = run_c(exe)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    got = np.array([int(v, 16) for v in lines[:16]], np.uint16).view(F16).reshape((2, 2, 4), order="F")
    value, _ = _conv_ref(x16, w16, None, (4, 4), (0, 0), (1, 1))
    layer = np.maximum(value.astype(np.float32).astype(F16).astype(np.float64), 0)  # each node rounds to float16
    want = layer.reshape(2, 2, 2, 2, 4).max(axis=(1, 3))
    _assert_f16(got, want)
    status, log = lines[16].split(" ", 2)[1:]
    assert int(status) == -17 and "VX_TYPE_FLOAT16" in log, lines[16]  # VX_ERROR_INVALID_TYPE
    assert not math.isnan(float(got.astype(np.float32).sum()))


def test_a_float16_convolution_then_relu_on_a_virtual_tensor_verifies_and_gives_the_two_layers_bytes():
    """The plan asks an activation after a convolution for the clamp it could fuse; a float16 relu is neither the
    float32 clamp nor an integer table's, and once failed verify with an internal error."""
    rng = np.random.default_rng(1607)
    x16 = _values(rng, (9, 7, 3))
    w16, b16 = _values(rng, (3, 3, 3, 5), edges=False), _values(rng, (5,), edges=False)
    with Context() as ctx:
        with ctx.graph() as g:
            x, conv = ctx.tensor(x16), ctx.tensor(shape=(9, 7, 5), dtype=F16)
            g.convolution(x, w16, b16, out=conv, padding=(1, 1))
            middle = _run(ctx, g, conv)
        with ctx.graph() as g:
            y = ctx.tensor(shape=(9, 7, 5), dtype=F16)
            g.relu(ctx.tensor(middle), out=y)
            expected = _run(ctx, g, y)
        with ctx.graph() as g:
            out = ctx.tensor(shape=(9, 7, 5), dtype=F16)
            g.relu(g.convolution(ctx.tensor(x16), w16, b16, padding=(1, 1)), out=out)
            got = _run(ctx, g, out)
    assert got.view(np.uint16).tobytes() == expected.view(np.uint16).tobytes()
