"""The resampling kernel (bilinear on a grid, nearest upsampling) against plain loops written from the layers'
definitions, over random shapes, grids and edge values; its native entry gives the same bits, on whole tensors
and on views (a concatenation's slice)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from openvx_nn.kernels.engine import gang, isa, workers
from openvx_nn.kernels.frontend import resample as k
from openvx_nn.kernels.support import native

EDGES = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38, 1.0], np.float32)


def positions(extent: int, count: int, method: str) -> list[float]:
    """Each output's input coordinate, from the modes' definitions, kept inside [0, extent - 1]."""
    out = []
    for i in range(count):
        if method == "align_corners_false":  # pixel centres: (i + 1/2) * in / out - 1/2
            p = (i + 0.5) * extent / count - 0.5
        elif method == "align_corners_true":
            p = i * (extent - 1) / (count - 1) if count > 1 else 0.0
        elif method == "upsample_default":
            p = i * (extent - extent / count) / (count - 1) if count > 1 else 0.0
        elif method == "upsample":
            p = i * extent / count
        elif method == "align_endpoints":
            p = i * (extent - 1) / (count - 1) if count > 1 else 0.0
        elif method == "strict_align_endpoints":
            p = i * (extent - 1) / (count - 1) if count > 1 else (extent - 1) / 2
        else:  # roi_align
            first, last = extent / (2 * count) - 0.5, extent - extent / (2 * count) - 0.5
            p = first + i * (last - first) / (count - 1) if count > 1 else (extent - 1) / 2
        out.append(min(max(p, 0.0), extent - 1))
    return out


def reference(x: np.ndarray, out_w: int, out_h: int, xs: list[float], ys: list[float]) -> np.ndarray:
    """[W, H, planes]: along W between the two neighbouring columns, then along H between the two rows, in
    float64, rounded once."""
    w, h, planes = x.shape
    out = np.empty((out_w, out_h, planes), np.float32)
    for p in range(planes):
        for oy in range(out_h):
            y0 = math.floor(ys[oy])
            y1, fy = min(y0 + 1, h - 1), ys[oy] - y0
            for ox in range(out_w):
                x0 = math.floor(xs[ox])
                x1, fx = min(x0 + 1, w - 1), xs[ox] - x0
                top = float(x[x0, y0, p]) * (1.0 - fx) + float(x[x1, y0, p]) * fx
                bottom = float(x[x0, y1, p]) * (1.0 - fx) + float(x[x1, y1, p]) * fx
                out[ox, oy, p] = np.float32(top * (1.0 - fy) + bottom * fy)
    return out


def sample(rng, shape, edges: bool = True) -> np.ndarray:
    x = (5 * rng.standard_normal(shape)).astype(np.float32)
    if edges and rng.integers(2):
        flat = x.reshape(-1)
        spots = rng.integers(0, flat.size, min(flat.size, 4))
        flat[spots] = rng.choice(EDGES, spots.size)
    return np.asfortranarray(x)


METHODS = ["align_corners_false", "align_corners_true", "upsample_default", "upsample", "align_endpoints",
           "strict_align_endpoints", "roi_align"]


@pytest.mark.parametrize("method", METHODS)
def test_bilinear_resampling_gives_the_numbers_of_the_definition(method):
    # the positions here are computed in another order than the kernel's grid (an ulp apart at times), so
    # finite inputs and a float32 tolerance; the arithmetic's bits are held below, at given positions
    rng = np.random.default_rng(sum(map(ord, method)))
    for _ in range(6):
        w, h, planes = (int(v) for v in rng.integers(1, 9, 3))
        out_w, out_h = (int(v) for v in rng.integers(1, 20, 2))
        x = sample(rng, (w, h, planes), edges=False)
        out = np.full((out_w, out_h, planes), 7.0, np.float32, order="F")
        k.bilinear(x, out, method)
        want = reference(x, out_w, out_h, positions(w, out_w, method), positions(h, out_h, method))
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-5)


def test_nearest_upsampling_repeats_each_input():
    rng = np.random.default_rng(5)
    for _ in range(6):
        w, h, c, n = (int(v) for v in rng.integers(1, 6, 4))
        sx, sy = (int(v) for v in rng.integers(1, 5, 2))
        x = sample(rng, (w, h, c, n))
        out = np.zeros((w * sx, h * sy, c, n), np.float32, order="F")
        k.nearest_upsample(x, out)
        for ox in range(w * sx):
            for oy in range(h * sy):
                np.testing.assert_array_equal(out[ox, oy], x[ox // sx, oy // sy])


def test_the_arithmetic_at_given_positions_has_the_bits_of_the_definition_and_clamps_to_the_input():
    rng = np.random.default_rng(9)
    for _ in range(6):
        w, h, planes = (int(v) for v in rng.integers(1, 7, 3))
        xs, ys = rng.uniform(-2, w + 2, int(rng.integers(1, 9))), rng.uniform(-2, h + 2, int(rng.integers(1, 9)))
        x = sample(rng, (w, h, planes))
        out = np.empty((xs.size, ys.size, planes), np.float32, order="F")
        k.Plan(x, out, xs, ys).run()
        want = reference(x, xs.size, ys.size, list(np.clip(xs, 0, w - 1)), list(np.clip(ys, 0, h - 1)))
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("method", ["align_corners_false", "upsample_default", "nearest"])
def test_the_native_entry_gives_the_bits_of_the_runner_on_tensors_and_views(method):
    rng = np.random.default_rng(sum(map(ord, method)) + 1)
    for case in range(6):
        w, h, c, n = (int(v) for v in rng.integers(1, 7, 4))
        n = 1 if case % 3 else n  # a slice of the channels of one image is a view of [W, H, planes]
        sx, sy = (int(v) for v in rng.integers(1, 5, 2))
        whole = sample(rng, (w, h, c + 2, n))
        x = whole[:, :, 1:c + 1] if case % 3 else whole[:, :, :c] if n == 1 else np.asfortranarray(whole[:, :, :c])
        want = np.zeros((w * sx, h * sy, c, n), np.float32, order="F")
        k.prepare(x, want, method).run()
        target = np.full((w * sx, h * sy, c + 3 if n == 1 else c, n), 7.0, np.float32, order="F")
        got = target[:, :, 2:c + 2] if n == 1 else target  # the output a slice of a concatenation
        entry = k.prepare(x, got, method).entry()
        assert entry is not None
        assert native.run(entry) == 0
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
        if n == 1:
            assert (target[:, :, :2] == 7.0).all() and (target[:, :, c + 2:] == 7.0).all()  # nothing else written


def test_a_tensor_that_is_not_a_view_of_planes_has_no_native_entry_but_runs():
    x = np.asfortranarray(np.random.default_rng(2).standard_normal((4, 3, 2, 4)).astype(np.float32))
    strided = x[:, :, :, ::2]  # every other batch: the planes do not merge into one axis
    out = np.zeros((8, 6, 2, 2), np.float32, order="F")
    plan = k.prepare(strided, out, "align_corners_true")
    assert plan.entry() is None
    plan.run()
    want = reference(np.asfortranarray(strided).reshape(4, 3, 4, order="F"), 8, 6,
                     positions(4, 8, "align_corners_true"), positions(3, 6, "align_corners_true"))
    np.testing.assert_allclose(out.reshape(8, 6, 4, order="F"), want, rtol=1e-6, atol=1e-6)


def _run_shared(entry) -> bool:
    """One call of a native entry as a graph's run makes it, its helpers summoned; whether a helper joined."""
    joins = gang.native_joins()
    gang.summon(workers.helpers())
    with gang.held():
        assert native.run(entry) == 0
    return gang.native_joins() > joins


@pytest.mark.parametrize("method", ["align_corners_false", "align_corners_true", "nearest"])
def test_a_large_upsampling_is_shared_with_the_helpers_and_gives_the_reference(method):
    """DeepLab's last layer (21 planes, 28x28 -> 224x224) and a plane count that does not divide the units: the
    entry cuts each plane into bands of output rows that the calling thread and the helpers claim; every output
    is the plain loops' whoever computed it (the runs the OS gives a helper to are its say, so several runs)."""
    rng = np.random.default_rng(31)
    for (w, h, planes, factor) in [(28, 28, 21, 8), (13, 9, 5, 16)]:
        x = sample(rng, (w, h, planes), edges=False)
        out = np.full((w * factor, h * factor, planes), 7.0, np.float32, order="F")
        entry = k.prepare(x, out, method).entry()
        assert gang.lends(entry) == (isa.threads() > 1)
        if method == "nearest":
            want = x.repeat(factor, 0).repeat(factor, 1)
        else:
            want = reference(x, w * factor, h * factor, list(k.grid(w, w * factor, method)),
                             list(k.grid(h, h * factor, method)))  # the grids themselves: tested above
        for _ in range(5):
            out[...] = 7.0
            _run_shared(entry)
            np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))


def test_the_bands_of_a_box_grid_running_backwards_read_the_rows_they_blend():
    """A band's input rows are the least and greatest of its outputs' neighbours: a grid that runs backwards (a
    box from bottom to top) still finds them."""
    rng = np.random.default_rng(32)
    x = sample(rng, (6, 7, 3), edges=False)
    xs, ys = np.linspace(5, 0, 40), np.linspace(6, 0, 50)
    out = np.empty((40, 50, 3), np.float32, order="F")
    plan = k.Plan(x, out, xs, ys)
    entry = plan.entry()
    assert entry is not None
    _run_shared(entry)
    np.testing.assert_array_equal(out, reference(x, 40, 50, list(xs), list(ys)))
