"""CoreML's tiled BLAS route (``chw_gemm``: one-thread sgemm calls on tiles, shared by both cores) matches the
NumPy matmul route it replaces (kept as the reference) and a plainly written float64 convolution, over random
geometry, groups, fused clips and residuals, for each way a layer is cut; concurrent layers stay correct."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from test_chw_convolution import CLIPS, _expected, reference

from openvx_nn.kernels.frontend import chw_convolution, chw_gemm
from openvx_nn.kernels.frontend.float_sharing import PARALLEL_WORK
from openvx_nn.kernels.frontend.grouped_convolution import Geometry, prepare

pytestmark = pytest.mark.skipif(not chw_gemm.available(), reason="numpy's BLAS has no sgemm this route can call")


def _layer(rng, c_in, c_out, groups, n_items, hw, k, stride, dilation, pads):
    x = rng.standard_normal((n_items, c_in) + hw).astype(np.float32)
    x.flat[rng.integers(0, x.size, 3)] = [0.0, -1e4, 1e4]  # edge values among the normal ones
    w = rng.standard_normal((c_out, c_in // groups) + k).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    return x, w, b


def _run(monkeypatch, route, x, w, b, groups, stride, dilation, pads, clip, residual):
    """The layer through ``prepare`` (OpenVX-order views, as a graph binds it) on ``route``; the output NCHW."""
    monkeypatch.setenv(chw_convolution.ROUTE_ENV, route)
    shape = reference(x[:, :1], w[:1, :1], b[:1], stride, dilation, pads).shape
    out = np.full((x.shape[0], w.shape[0]) + shape[2:], np.nan, np.float32)
    geo = Geometry(groups, stride, dilation, (pads[0], pads[2]))
    run = prepare(x.T, w.T, b, out.T, geo, clip, None if residual is None else residual.T)
    run()
    run()  # a second call on the bound arrays: the same numbers
    return out


@pytest.mark.parametrize("trial", range(12))
def test_the_tiled_route_matches_the_matmul_route_and_the_reference(trial, monkeypatch):
    rng = np.random.default_rng(2000 + trial)
    pointwise = trial % 4 == 0
    k = (1, 1) if pointwise else tuple(int(v) for v in rng.integers(1, 5, 2))
    stride = (1, 1) if pointwise else tuple(int(v) for v in rng.integers(1, 4, 2))
    dilation = (1, 1) if pointwise else tuple(int(v) for v in rng.integers(1, 3, 2))
    pads = (0, 0, 0, 0) if pointwise else tuple(int(v) for v in rng.integers(0, 4, 4))
    groups = int(rng.choice([1, 1, 2, 3]))
    c_in = groups * int(rng.integers(1, 24))
    c_out = groups * int(rng.integers(1, 40))
    big = trial % 2 == 1  # enough work to be cut and shared
    hw = tuple(int(v) for v in rng.integers(24, 60 if big else 30, 2)) if big else \
        tuple(int(v) for v in rng.integers(3, 20, 2))
    hw = tuple(max(n, (kk - 1) * d + 1) for n, kk, d in zip(hw, k, dilation))
    x, w, b = _layer(rng, c_in, c_out, groups, int(rng.integers(1, 3)), hw, k, stride, dilation, pads)
    clip = CLIPS[trial % len(CLIPS)]
    shape = reference(x[:, :1], w[:1, :1], b[:1], stride, dilation, pads).shape
    residual = rng.standard_normal((x.shape[0], c_out) + shape[2:]).astype(np.float32) if trial % 3 else None
    tiled = _run(monkeypatch, "", x, w, b, groups, stride, dilation, pads, clip, residual)
    matmul = _run(monkeypatch, "numpy", x, w, b, groups, stride, dilation, pads, clip, residual)
    expected, bound = _expected(x, w, b, stride, dilation, pads, clip, residual, groups)
    assert np.all(np.abs(tiled - expected) <= bound), np.max(np.abs(tiled - expected) - bound)
    assert np.all(np.abs(tiled - matmul) <= 2 * bound)


# (c_in, c_out, size, kernel, stride, groups, items): the cut each takes is asserted first
CUTS = {
    "pixels, input planes (1x1)": ((16, 48, 40, 1, 1, 1, 1), "pixels"),
    "pixels, patches built per unit": ((24, 32, 48, 3, 1, 1, 1), "pixels"),
    "pixels, a 7x7/2 stem": ((3, 16, 96, 7, 2, 1, 1), "pixels"),
    "rows, patches built first": ((64, 192, 9, 3, 1, 1, 1), "rows"),
    "a unit per group, two groups": ((64, 256, 7, 3, 1, 2, 1), "one"),
    "rows, input planes (1x1)": ((256, 320, 7, 1, 1, 1, 1), "rows"),
}


@pytest.mark.parametrize("name", list(CUTS))
def test_each_way_of_cutting_a_layer_matches_the_reference(name, monkeypatch):
    (c_in, c_out, size, kernel, stride, groups, items), expected_cut = CUTS[name]
    pad = kernel // 2
    out_size = (size + 2 * pad - kernel) // stride + 1
    k = c_in // groups * kernel * kernel
    assert items * c_out * out_size ** 2 * k >= PARALLEL_WORK  # shared with the helpers
    rows, pixels = chw_gemm.cut(items, groups, c_out // groups, out_size ** 2, k, kernel > 1 or stride > 1, 2)
    assert (rows > 1, pixels > 1) == {"rows": (True, False), "pixels": (False, True), "one": (False, False)}[expected_cut]
    rng = np.random.default_rng(len(name))
    x, w, b = _layer(rng, c_in, c_out, groups, items, (size, size), (kernel, kernel), (stride, stride), (1, 1),
                     (pad,) * 4)
    residual = rng.standard_normal((items, c_out, out_size, out_size)).astype(np.float32)
    out = _run(monkeypatch, "", x, w, b, groups, (stride, stride), (1, 1), (pad,) * 4, (0.0, 6.0), residual)
    expected, bound = _expected(x, w, b, (stride, stride), (1, 1), (pad,) * 4, (0.0, 6.0), residual, groups)
    assert np.all(np.abs(out - expected) <= bound)


def test_a_small_layer_is_one_unit_and_a_large_one_is_cut_for_every_thread():
    assert chw_gemm.cut(1, 1, 8, 49, 9, True, 2) == (1, 1)
    assert chw_gemm.cut(1, 1, 512, 49, 4608, True, 2) == (2, 1)  # rows: one block per thread
    assert chw_gemm.cut(1, 1, 512, 49, 4608, True, 1) == (1, 1)
    assert chw_gemm.cut(1, 1, 96, 12544, 16, False, 2)[1] >= 4  # pixels: two blocks per thread at least
    rows, pixels = chw_gemm.cut(1, 1, 64, 3136, 576, True, 1)
    assert rows == 1 and pixels * (chw_gemm.SCRATCH_FLOATS // (64 + 576)) >= 3136  # small tiles on one thread too
    assert chw_gemm.cut(8, 1, 8, 1024, 512, False, 2) == (1, 1)  # eight items: a unit each already, and small tiles


def test_layers_run_from_several_threads_at_once_give_the_numbers_of_one_thread():
    rng = np.random.default_rng(7)
    layers = []
    for c_in, c_out, size, kernel in ((32, 64, 30, 3), (128, 256, 7, 3), (24, 96, 40, 1)):
        pad = kernel // 2
        x, w, b = _layer(rng, c_in, c_out, 1, 1, (size, size), (kernel, kernel), (1, 1), (1, 1), (pad,) * 4)
        out = np.zeros((1, c_out, size, size), np.float32)
        run = prepare(x.T, w.T, b, out.T, Geometry(1, (1, 1), (1, 1), (pad, pad)), (0.0, 6.0))
        run()
        layers.append((run, out, out.copy()))
    failures = []

    def worker(run, out, first):
        for _ in range(15):
            run()
            if not np.array_equal(out, first):
                failures.append(np.max(np.abs(out - first)))

    threads = [threading.Thread(target=worker, args=layer) for layer in layers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads) and not failures


def test_the_matmul_route_is_kept_where_chosen(monkeypatch):
    monkeypatch.setenv(chw_convolution.ROUTE_ENV, "numpy")
    assert not chw_gemm.available()
    monkeypatch.delenv(chw_convolution.ROUTE_ENV)
    assert chw_gemm.available()
