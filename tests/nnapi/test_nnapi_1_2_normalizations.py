"""SOFTMAX, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION in API level 29's forms: ranks 1 to 4, an optional
trailing axis (negative ones from the end; default the last), float32, float16 (computed in float64 from the exact
inputs, rounded once) and uint8 where the header lists it, against plain loops written from the header's text."""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import F16T, F32T, Q8, Out, Tensor, collect_garbage, f16, f32, i32, refused, run  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType


def _lines(x, axis):
    """Every 1-D line of ``x`` along ``axis``, as (index tuple of the line, values)."""
    moved = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    for index in np.ndindex(moved.shape[:-1]):
        yield index, moved[index]


def _apply(x, axis, line_function):
    out = np.moveaxis(np.zeros(np.shape(x)), axis, -1).copy()
    for index, line in _lines(x, axis):
        out[index] = line_function(line)
    return np.moveaxis(out, -1, axis)


def softmax_reference(x, beta, axis):
    def line(v):
        e = [np.exp((a - max(v)) * beta) for a in v]
        return [a / sum(e) for a in e]
    return _apply(x, axis, line)


def l2_reference(x, axis):
    def line(v):
        norm = np.sqrt(sum(a * a for a in v))
        return [a / norm if norm > 0 else 0.0 for a in v]
    return _apply(x, axis, line)


def lrn_reference(x, radius, bias, alpha, beta, axis):
    def line(v):
        d = len(v)
        return [v[i] / (bias + alpha * sum(v[j] ** 2 for j in range(max(0, i - radius), min(d, i + radius + 1))))
                ** beta for i in range(d)]
    return _apply(x, axis, line)


CASES = [(seed, kind) for seed in range(6) for kind in ("float32", "float16", "uint8")]


def _data(rng, kind):
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    real = rng.standard_normal(shape) * 2
    if kind == "uint8":
        q = np.clip(np.round(real / 0.05) + 128, 0, 255).astype(np.uint8)
        return Tensor(q, scale=0.05, zero_point=128), (q.astype(np.float64) - 128) * 0.05
    value = real.astype(np.float32 if kind == "float32" else np.float16)
    return Tensor(value), value.astype(np.float64)


def _axis(rng, rank, explicit):
    axis = int(rng.integers(-rank, rank))
    return (axis, [i32(axis)]) if explicit else (-1, [])


def _check(got, want, kind, out_scale=None, out_zero=None):
    if kind == "uint8":
        expected = np.clip(np.round(want / out_scale) + out_zero, 0, 255)
        assert np.abs(got.astype(np.int64) - expected).max(initial=0) <= 1
    elif kind == "float16":
        assert got.dtype == np.float16
        rounded = np.asarray(want).astype(np.float16).astype(np.float64)
        step = np.spacing(np.abs(rounded).astype(np.float16)).astype(np.float64)
        assert (np.abs(got.astype(np.float64) - rounded) <= step).all()  # float64 sums: one step at most
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _scalar(kind, value):
    return f16(value) if kind == "float16" else f32(value)


KIND = {"float32": F32T, "float16": F16T, "uint8": Q8}


@pytest.mark.parametrize("explicit", [False, True], ids=["last-axis", "axis"])
@pytest.mark.parametrize("seed, kind", CASES, ids=[f"{k}-{s}" for s, k in CASES])
def test_softmax(seed, kind, explicit):
    rng = np.random.default_rng(seed)
    data, real = _data(rng, kind)
    axis, tail = _axis(rng, real.ndim, explicit)
    beta = float(rng.choice([1.0, 0.5, 2.0]))
    want = softmax_reference(real, beta, axis)
    out = Out(KIND[kind], real.shape, *((1 / 256, 0) if kind == "uint8" else ()))
    got, = run(OP.SOFTMAX, [data, _scalar(kind, beta), *tail], [out])
    _check(got, want, kind, 1 / 256, 0)


@pytest.mark.parametrize("explicit", [False, True], ids=["last-axis", "axis"])
@pytest.mark.parametrize("seed, kind", CASES, ids=[f"{k}-{s}" for s, k in CASES])
def test_l2_normalization(seed, kind, explicit):
    rng = np.random.default_rng(100 + seed)
    data, real = _data(rng, kind)
    axis, tail = _axis(rng, real.ndim, explicit)
    want = l2_reference(real, axis)
    out = Out(KIND[kind], real.shape, *((1 / 128, 128) if kind == "uint8" else ()))
    got, = run(OP.L2_NORMALIZATION, [data, *tail], [out])
    _check(got, want, kind, 1 / 128, 128)


@pytest.mark.parametrize("explicit", [False, True], ids=["last-axis", "axis"])
@pytest.mark.parametrize("seed, kind", [c for c in CASES if c[1] != "uint8"],
                         ids=[f"{k}-{s}" for s, k in CASES if k != "uint8"])
def test_local_response_normalization(seed, kind, explicit):
    rng = np.random.default_rng(200 + seed)
    data, real = _data(rng, kind)
    axis, tail = _axis(rng, real.ndim, explicit)
    radius, bias, alpha, beta = int(rng.integers(0, 3)), 1.0, 0.5, 0.75
    want = lrn_reference(real, radius, bias, alpha, beta, axis)
    got, = run(OP.LOCAL_RESPONSE_NORMALIZATION, [data, i32(radius), *(_scalar(kind, v) for v in (bias, alpha, beta)),
                                                 *tail], [Out(KIND[kind], real.shape)])
    _check(got, want, kind)


def test_an_axis_outside_the_rank_is_refused_naming_it():
    message = refused(OP.SOFTMAX, [Tensor(np.zeros((2, 3), np.float32)), f32(1.0), i32(2)], [Out(F32T, (2, 3))])
    assert "axis 2 is outside [-2, 2)" in message
