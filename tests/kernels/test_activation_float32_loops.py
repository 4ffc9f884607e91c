"""The activation layer's exact float32 functions (relu, brelu, abs, square, sqrt, linear) run on the shared
float32 kernel (``frontend/float_activation``: one vectorized loop per function, shared with the engine's helpers
when large), bound and native, with the bits of the layer's float64 expression rounded once: against a plain
float64 NumPy reference written from the layer's definitions, and against the per-value expression route the
layer took before (still its route for strided tensors), over randomized shapes and edge values."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend.float_sharing import Rows
from openvx_nn.kernels.openvx import activation as act
from openvx_nn.kernels.openvx.quantize import plan
from openvx_nn.kernels.support import native

EXACT = ("relu", "brelu", "abs", "square", "sqrt", "linear")
CANONICAL_NAN = 0x7FC00000
PARAMETERS = [(6.0, 0.0), (0.1, -0.3), (-2.5, 1e30), (1e-30, 3.0)]


def _edges() -> np.ndarray:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 6.0, 6.0000005, 5.9999995,
                  3.4028235e38, -3.4028235e38, 1.8446744e19, -1.8446744e19, 1.0842022e-19, 1e-45, -1e-45,
                  1.1754942e-38, -1.1754942e-38, 1.1754944e-38, 2.0, 0.5, 1e-20, -1e-20], np.float32)
    bits = x.view(np.uint32).copy()
    extra = np.array([0x7F800001, 0xFF800001, 0x7FC12345, 0xFFC00001, 0x00000001, 0x807FFFFF, 0x007FFFFF],
                     np.uint32)  # signalling and payload NaNs of both signs, subnormals
    return np.concatenate([bits, extra]).view(np.float32)


def _sample(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    values = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    edges = _edges()
    at = rng.integers(0, n, min(n, 4 * edges.size))
    values[at] = edges[rng.integers(0, edges.size, at.size)]
    return values.reshape(shape)


def reference(function: str, x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The layer's function of float32 ``x`` in float64 (``a``, ``b`` taken as float32 values), rounded once,
    every NaN stored as the canonical quiet NaN: the bits the layer must store."""
    with np.errstate(invalid="ignore"):
        v = x.astype(np.float64)
    a, b = float(np.float32(a)), float(np.float32(b))
    with np.errstate(all="ignore"):
        if function in ("relu", "brelu"):
            r = np.where(np.isnan(v), np.nan, np.where(v > 0.0, v, 0.0))  # NaN stays NaN; -0 gives +0
            if function == "brelu":
                r = np.where(r > a, a, r)
        elif function == "abs":
            r = np.abs(v)
        elif function == "square":
            r = v * v
        elif function == "sqrt":
            r = np.sqrt(v)
        else:
            r = a * v + b
        bits = r.astype(np.float32).view(np.uint32)
    return np.where(np.isnan(r), np.uint32(CANONICAL_NAN), bits)


def expression_route(function: str, x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The bits of the per-value float64 expression kernel (``activation._evaluate``), serially."""
    out = np.empty_like(x)
    a, b = act._parameters(function, a, b)
    x6, out6 = x.reshape((1,) * (6 - x.ndim) + x.shape), out.reshape((1,) * (6 - x.ndim) + x.shape)
    act._run_evaluate(x6, out6, act._CODES[function], a, b, plan(np.dtype(np.float32), 0, 0), False)
    return out.view(np.uint32)


@pytest.mark.parametrize("function", EXACT)
@pytest.mark.parametrize("seed", range(3))
def test_bound_and_native_give_the_reference_and_the_expression_bits(asked, function, seed):
    rng = np.random.default_rng(100 * seed + EXACT.index(function))
    shape = tuple(int(d) for d in rng.integers(1, 9, rng.integers(1, 5)))
    x = _sample(rng, shape)
    for a, b in PARAMETERS:
        want = reference(function, x, a, b)
        assert np.array_equal(expression_route(function, x, a, b), want), (function, a, b)
        got = np.full_like(x, 7.0)
        act.prepare(x, got, function, a, b)()
        assert np.array_equal(got.view(np.uint32), want), (function, a, b)
        got = np.full_like(x, 7.0)
        entry = act.native_entry(x, got, function, a, b)
        assert native.run(entry) == 0 and np.array_equal(got.view(np.uint32), want), (function, a, b)
    assert ("bind", function) in asked and ("native", function) in asked


@pytest.mark.parametrize("function", EXACT)
def test_large_tensors_are_shared_with_the_helpers_with_the_same_bits(function):
    rng = np.random.default_rng(7 + EXACT.index(function))
    x = _sample(rng, (64, 56, 56))  # 200704 values: above the sharing threshold
    want = reference(function, x, 0.1, -0.3)
    got = np.full_like(x, 7.0)
    run = act.prepare(x, got, function, 0.1, -0.3)
    assert isinstance(run, Rows) and run.lend
    run()
    assert np.array_equal(got.view(np.uint32), want)
    got = np.full_like(x, 7.0)
    entry = act.native_entry(x, got, function, 0.1, -0.3)
    assert native.run(entry) == 0 and np.array_equal(got.view(np.uint32), want)
    same = x.copy()
    act.activation(same, same, function, 0.1, -0.3)  # in place
    assert np.array_equal(same.view(np.uint32), want)
    fortran, out = np.asfortranarray(x), np.empty(x.shape, np.float32, order="F")
    act.activation(fortran, out, function, 0.1, -0.3)
    assert np.array_equal(out.view(np.uint32), want)


@pytest.mark.parametrize("function", EXACT)
def test_strided_tensors_keep_the_expression_route_with_the_same_bits(asked, function):
    x = _sample(np.random.default_rng(11), (5, 6, 14))
    out = np.full((5, 6, 28), 7.0, np.float32)[:, :, ::2]
    act.activation(x[:, ::-1, :], out, function, 6.0, 0.5)
    assert np.array_equal(out[:, ::-1, :].view(np.uint32), reference(function, x, 6.0, 0.5))
    assert act.native_entry(x[:, ::-1, :], out, function, 6.0, 0.5) is not None
    assert not asked or all(entry == "native" for entry, _ in asked)  # only the refused native attempt
