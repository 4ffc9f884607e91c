"""Local response normalization, ROI pooling, table lookup, transpose, convert depth and matrix
multiply run in a native plan (C, no GIL), bit-identical to the Python path (each kernel's own dispatcher),
over randomized shapes, formats and policies."""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, python_then_native, values

from openvx_nn.api import Context

FORMATS = [(np.uint8, 0, 0), (np.int8, 0, 0), (np.int16, 8, 8), (np.int16, 3, 11), (np.float32, 0, 0)]


@pytest.mark.parametrize("dtype, fpp_in, fpp_out", FORMATS)
def test_native_lrn_is_bit_identical_to_the_python_path(dtype, fpp_in, fpp_out):
    rng = np.random.default_rng(2510 + fpp_out)
    for kind, size in (("across_maps", 5), ("same_map", 3), ("across_maps", 3), ("same_map", 7)):
        shape = tuple(int(n) for n in rng.integers(1, 7, size=int(rng.integers(3, 5))))
        alpha, beta, bias = float(rng.uniform(1e-4, 0.5)), float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.5, 2))
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(values(rng, shape, dtype), fixed_point_position=fpp_in)
            out = g.lrn(x, ctx.tensor(shape=shape, dtype=dtype, fixed_point_position=fpp_out), kind=kind, size=size,
                        alpha=alpha, beta=beta, bias=bias)
            python, ours = python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (kind, size, shape)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_native_roi_pooling_is_bit_identical_to_the_python_path(dtype):
    rng = np.random.default_rng(2511)
    for batch in ((), (2,)):
        shape = (int(rng.integers(4, 12)), int(rng.integers(4, 12)), int(rng.integers(1, 4))) + batch
        n_rois = int(rng.integers(1, 5))
        corners = np.sort(rng.integers(-2, max(shape[:2]) + 2, size=(2, 2, n_rois) + batch), axis=0)
        rois = np.stack([corners[0, 0], corners[0, 1], corners[1, 0], corners[1, 1]]).astype(np.int32)
        rois[:, 0] = rois[[2, 3, 0, 1], 0]  # one malformed ROI (x1 < x0): empty bins
        pooled = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(values(rng, shape, dtype), fixed_point_position=8 if dtype == np.int16 else 0)
            out = g.roi_pooling(x, rois, out=ctx.tensor(shape=pooled + (shape[2], n_rois) + batch, dtype=dtype,
                                                        fixed_point_position=8 if dtype == np.int16 else 0))
            python, ours = python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (shape, rois.tolist(), pooled)
            rois_tensor = model(g.handle).order[0].params[1]
            rois_tensor.array[...] = np.roll(rois_tensor.array, 1, axis=1)  # new ROIs, same memory: read per run
            python, ours = python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
def test_native_table_lookup_reads_the_lut_as_it_is_now(dtype):
    rng = np.random.default_rng(2512)
    count = 256 if dtype == np.uint8 else int(rng.integers(10, 3000))
    shape = tuple(int(n) for n in rng.integers(1, 9, size=3))
    with Context() as ctx, ctx.graph() as g:
        lut = ctx.lut(values(rng, (count,), dtype))
        data = values(rng, shape, dtype)
        if dtype == np.int16:
            data = (data % 4000 - 2000).astype(dtype)  # some indices outside a short LUT: zeros
        x = ctx.tensor(data)
        out = g.table_lookup(x, lut, ctx.tensor(shape=shape, dtype=dtype))
        python, ours = python_then_native(ctx, g, out)
        assert python.tobytes() == ours.tobytes()
        table = model(lut.handle).array
        table[...] = table[::-1].copy()  # vxCopyLUT writes the same memory: the native plan reads it per run
        python, ours = python_then_native(ctx, g, out)
        assert python.tobytes() == ours.tobytes()


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.float32])
def test_native_transpose_is_bit_identical_to_the_python_path(dtype):
    rng = np.random.default_rng(2513)
    for rank in (2, 3, 4, 6):
        shape = tuple(int(n) for n in rng.integers(1, 5, size=rank))
        d1, d2 = (int(d) for d in rng.choice(rank, 2, replace=rank < 2))
        swapped = list(shape)
        swapped[d1], swapped[d2] = swapped[d2], swapped[d1]
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(values(rng, shape, dtype))
            out = g.transpose(x, d1, d2, ctx.tensor(shape=tuple(swapped), dtype=dtype))
            python, ours = python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (shape, d1, d2)
            assert np.array_equal(ours, np.swapaxes(x.numpy(), d1, d2))


CONVERSIONS = [(np.int16, 8, np.uint8, 0), (np.uint8, 0, np.int16, 8), (np.int16, 4, np.int8, 0),
               (np.float32, 0, np.int16, 7), (np.int16, 8, np.float32, 0), (np.int8, 0, np.float32, 0)]


@pytest.mark.parametrize("source, fpp_in, target, fpp_out", CONVERSIONS)
def test_native_convert_depth_is_bit_identical_to_the_python_path(source, fpp_in, target, fpp_out):
    rng = np.random.default_rng(2514)
    for overflow, norm, offset in (("saturate", 1.0, 0.0), ("wrap", 0.37, -3.5), ("saturate", -2.5, 11.0)):
        shape = tuple(int(n) for n in rng.integers(1, 7, size=int(rng.integers(1, 5))))
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(values(rng, shape, source), fixed_point_position=fpp_in)
            out = g.convert_depth(x, out=ctx.tensor(shape=shape, dtype=target, fixed_point_position=fpp_out),
                                  norm=norm, offset=offset, overflow=overflow)
            python, ours = python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (overflow, norm, offset, shape)


@pytest.mark.parametrize("dtype, fpp_in", [(np.uint8, 0), (np.int8, 0), (np.int16, 8), (np.int16, 3), (np.float32, 0)])
def test_native_matrix_multiply_is_bit_identical_to_the_python_path(dtype, fpp_in):
    rng = np.random.default_rng(2515 + fpp_in)  # one format for every tensor (the validator's rule)
    for ta, tb, tc, with_c in ((False, False, False, True), (True, False, True, True), (False, True, False, False),
                               (True, True, False, True)):
        m, k, n = (int(v) for v in rng.integers(1, 12, size=3))
        a = values(rng, (m, k) if ta else (k, m), dtype, small=True)
        b = values(rng, (k, n) if tb else (n, k), dtype, small=True)
        c = values(rng, (m, n) if tc else (n, m), dtype) if with_c else None
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(a, fixed_point_position=fpp_in)
            out = g.matrix_multiply(x, ctx.tensor(b, fixed_point_position=fpp_in),
                                    None if c is None else ctx.tensor(c, fixed_point_position=fpp_in),
                                    ctx.tensor(shape=(n, m), dtype=dtype, fixed_point_position=fpp_in),
                                    transpose_a=ta, transpose_b=tb, transpose_c=tc)
            python, ours = python_then_native(ctx, g, out)
            assert python.tobytes() == ours.tobytes(), (ta, tb, tc, with_c, m, k, n)
