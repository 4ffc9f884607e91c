"""CoreML's max pooling kernel (``chw_pooling``) gives the exact window maxima of a plainly written NumPy
reference and the same bits as the OpenVX pooling layer where that layer takes the geometry, over random
windows, strides, paddings, batch dims and edge values (NaN, signed zeros, infinities)."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend.chw_pooling import LOWEST, prepare
from openvx_nn.kernels.openvx.pooling import pooling


def reference(x, kernel, stride, offset, out_hw):
    """x [N, C, H, W]: per output the maximum of the window's positions inside the input (NaN if any is NaN, +0.0
    over -0.0), the lowest float32 for a window with none."""
    (kh, kw), (sy, sx), (top, left) = kernel, stride, offset
    out = np.empty(x.shape[:2] + tuple(out_hw), np.float32)
    for oy in range(out_hw[0]):
        for ox in range(out_hw[1]):
            y0, x0 = oy * sy - top, ox * sx - left
            window = x[:, :, max(y0, 0):max(y0 + kh, 0), max(x0, 0):max(x0 + kw, 0)].reshape(x.shape[:2] + (-1,))
            if window.shape[-1] == 0:
                out[:, :, oy, ox] = LOWEST
                continue
            top_value = np.max(window, axis=-1)
            positive_zero = (top_value == 0) & np.any((window == 0) & ~np.signbit(window), axis=-1)
            out[:, :, oy, ox] = np.where(positive_zero, np.float32(0.0), top_value)
    return out


def _same_bits(a, b):
    """The same float32 bits everywhere (signed zeros told apart), NaN where the other is NaN (any payload)."""
    nan = np.isnan(a)
    return np.array_equal(nan, np.isnan(b)) and np.array_equal(np.where(nan, 0, a).view(np.int32),
                                                               np.where(nan, 0, b).view(np.int32))


def _input(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    for value in (np.nan, -0.0, 0.0, np.inf, -np.inf):
        flat[rng.integers(0, flat.size, max(1, flat.size // 97))] = value
    return x


@pytest.mark.parametrize("trial", range(12))
def test_max_pool_matches_the_reference_over_random_geometry(trial):
    rng = np.random.default_rng(3000 + trial)
    kernel = tuple(int(v) for v in rng.integers(1, 5, 2))
    stride = tuple(int(v) for v in rng.integers(1, 4, 2))
    offset = tuple(int(v) for v in rng.integers(0, 4, 2)) if trial % 3 else (0, 0)
    hw = tuple(int(v) for v in rng.integers(1, 20, 2))
    out_hw = tuple(max(1, (n + 2 * o - k) // s + 1 + int(rng.integers(0, 2))) for n, k, s, o in
                   zip(hw, kernel, stride, offset))  # sometimes one more: a window past the end (CoreML's ceil)
    batch = (int(rng.integers(1, 3)),) if trial % 2 else ()
    x = _input(rng, batch + (int(rng.integers(1, 6)),) + hw)  # CoreML order [*batch, C, H, W]
    out = np.full(x.shape[:-2] + out_hw, 7.0, np.float32)
    prepare(x.T, out.T, kernel, stride, offset)()
    x4 = x.reshape((-1,) + x.shape[-3:])
    expected = reference(x4, kernel, stride, offset, out_hw).reshape(out.shape)
    assert _same_bits(out, expected)


@pytest.mark.parametrize("size,kernel,stride,pad", [(112, 3, 2, 1), (20, 2, 2, 0), (17, 3, 1, 1), (9, 4, 3, 2)])
def test_max_pool_gives_the_openvx_pooling_layers_bits(size, kernel, stride, pad):
    rng = np.random.default_rng(size)
    x = _input(rng, (1, 8, size, size))
    out_size = (size + 2 * pad - kernel) // stride + 1
    out = np.zeros((1, 8, out_size, out_size), np.float32)
    prepare(x.T, out.T, (kernel, kernel), (stride, stride), (pad, pad))()
    theirs = np.zeros((out_size, out_size, 8, 1), np.float32, order="F")
    pooling(np.asfortranarray(x.T), theirs, True, kernel, kernel, pad, pad, stride, stride, parallel=False)
    assert _same_bits(out.T, theirs)


def test_strided_tensors_are_read_and_written_through_copies():
    rng = np.random.default_rng(5)
    big = _input(rng, (3, 10, 12)).T  # [W, H, C]
    x = big[:, :, 1:3]  # a channel window: not contiguous as NCHW
    out_big = np.zeros((6, 5, 4), np.float32, order="F")
    out = out_big[:, :, 1:3]
    prepare(x, out, (2, 2), (2, 2), (0, 0))()
    x4 = np.ascontiguousarray(x.T)[None]
    expected = reference(x4, (2, 2), (2, 2), (0, 0), (5, 6))[0]
    assert _same_bits(np.ascontiguousarray(out.T), expected) and not out_big[:, :, 0].any()


@pytest.mark.parametrize("args,message", [
    ({"x": np.zeros((4, 4, 2), np.float64)}, "float32"),
    ({"out": np.zeros((2, 2, 3), np.float32)}, "same C"),
    ({"kernel": (0, 2)}, "at least 1"),
    ({"offset": (-1, 0)}, "at least 0"),
])
def test_bad_arguments_are_refused_by_name(args, message):
    call = {"x": np.zeros((4, 4, 2), np.float32), "out": np.zeros((2, 2, 2), np.float32), "kernel": (2, 2),
            "stride": (2, 2), "offset": (0, 0)} | args
    with pytest.raises(ValueError, match=message):
        prepare(call["x"], call["out"], call["kernel"], call["stride"], call["offset"])


@pytest.mark.parametrize("stride", [1, 2])
def test_signed_zeros_and_nans_pool_by_the_layers_rules(stride):
    """Inputs drawn from {-1, -0.0, +0.0, NaN} only: +0.0 beats -0.0 whatever the order, NaN beats all."""
    rng = np.random.default_rng(stride)
    x = rng.choice(np.array([-1.0, -0.0, 0.0, np.nan, -0.0, -1.0], np.float32), (2, 3, 9, 11))
    out_hw = ((9 - 3) // stride + 1, (11 - 3) // stride + 1)
    out = np.zeros((2, 3) + out_hw, np.float32)
    prepare(x.T, out.T, (3, 3), (stride, stride), (0, 0))()
    assert _same_bits(out, reference(x, (3, 3), (stride, stride), (0, 0), out_hw))
    assert (out == 0).any() and np.isnan(out).any()


def test_strided_tensors_with_batch_dims_are_read_and_written_through_copies():
    rng = np.random.default_rng(6)
    big = _input(rng, (2, 3, 3, 9, 11)).T  # [W, H, C, 3, 2]
    x = big[:, :, 1:3]
    out_big = np.zeros((5, 4, 4, 3, 2), np.float32, order="F")
    out = out_big[:, :, 1:3]
    prepare(x, out, (3, 3), (2, 2), (0, 0))()
    x4 = np.ascontiguousarray(x.T).reshape(6, 2, 9, 11)
    expected = reference(x4, (3, 3), (2, 2), (0, 0), (4, 5)).reshape(2, 3, 2, 4, 5)
    assert _same_bits(np.ascontiguousarray(out.T), expected) and not out_big[:, :, 0].any()


def _half_reference(x16, average, kernel, stride, offset, out_hw):
    """x16 [P, H, W] float16: per output the maximum (NaN if any is NaN, +0.0 over -0.0) or the float64 sum
    divided by the whole window's area, over the window's positions inside the input; 0.0 for a window with
    none; rounded once to float16."""
    (kh, kw), (sy, sx), (top, left) = kernel, stride, offset
    x = x16.astype(np.float64)
    out = np.zeros((x.shape[0],) + tuple(out_hw))
    for oy in range(out_hw[0]):
        for ox in range(out_hw[1]):
            y0, x0 = oy * sy - top, ox * sx - left
            window = x[:, max(y0, 0):max(y0 + kh, 0), max(x0, 0):max(x0 + kw, 0)].reshape(x.shape[0], -1)
            if window.shape[-1] == 0:
                continue
            with np.errstate(invalid="ignore"):
                if average:
                    out[:, oy, ox] = window.sum(-1) / (kh * kw)
                else:
                    top_value = np.where(np.isnan(window).any(-1), np.nan, window.max(-1))
                    positive_zero = (top_value == 0) & np.any((window == 0) & ~np.signbit(window), axis=-1)
                    out[:, oy, ox] = np.where(positive_zero, 0.0, top_value)
    with np.errstate(over="ignore"):
        return out.astype(np.float16)


def _random_window(rng, height_below: int, width_below: int):
    """(kernel, stride, offset, plane size, output size) drawn at random: kernels and strides 1 to 4, offsets
    inside the kernel, planes at least a kernel and below the bounds."""
    kernel = tuple(int(v) for v in rng.integers(1, 5, 2))
    stride = tuple(int(v) for v in rng.integers(1, 5, 2))
    offset = tuple(int(rng.integers(0, k)) for k in kernel)
    hw = (int(rng.integers(kernel[0], height_below)), int(rng.integers(kernel[1], width_below)))
    out_hw = tuple((n + 2 * o - k) // s + 1 for n, k, s, o in zip(hw, kernel, stride, offset))
    return kernel, stride, offset, hw, out_hw


@pytest.mark.parametrize("trial", range(10))
def test_binary16_planes_pool_as_the_float32_kernel_rounded_once(trial):
    """The plane kernel on binary16 bits (read and written by the window passes) gives the float32 kernel's results
    on the widened values rounded once by NumPy, bit for bit (NaN payloads included), over random bit patterns and
    geometries (strides 1 to 4: the plain, the every-other-lane and the split-by-phase second pass; rows past a
    whole vector step and short tails), and the plain reference's values (max: exact; average: within a unit)."""
    from openvx_nn.kernels.frontend.chw_pooling import pool_planes

    rng = np.random.default_rng(3100 + trial)
    average = bool(trial % 2)
    kernel, stride, offset, hw, out_hw = _random_window(rng, 24, 150)
    planes = int(rng.integers(1, 7))
    bits = rng.integers(0, 1 << 16, (planes,) + hw).astype(np.uint16)
    if trial >= 6:  # mostly ordinary values: averages of finite windows
        ordinary = (rng.standard_normal((planes,) + hw) * 100).astype(np.float16).view(np.uint16)
        bits = np.where(rng.random(bits.shape) < 0.98, ordinary, bits)
    single = bits.view(np.float16).astype(np.float32)
    out16 = np.full((planes,) + out_hw, 0x7777, np.uint16)
    out32 = np.full((planes,) + out_hw, 7.0, np.float32)
    geometry = (average, *kernel, *stride, *offset, np.float32(0.0), 0, planes)
    pool_planes(bits, out16, *geometry)
    pool_planes(single, out32, *geometry)
    with np.errstate(over="ignore"):
        rounded = out32.astype(np.float16).view(np.uint16)
    assert np.array_equal(out16, rounded), "not the float32 kernel's results rounded once"
    got = out16.view(np.float16)
    want = _half_reference(bits.view(np.float16), average, kernel, stride, offset, out_hw)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    if not average:
        assert np.array_equal(got[finite].view(np.uint16), want[finite].view(np.uint16))
    else:
        ordered = [np.where(v.view(np.int16) < 0, -(v.view(np.uint16) & 0x7FFF).astype(np.int64),
                            v.view(np.uint16).astype(np.int64)) for v in (got[finite], want[finite])]
        assert np.abs(ordered[0] - ordered[1]).max(initial=0) <= 1


_HALF_EDGES = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,  # zeros,
                        0x7E00, 0xFE00, 0x7FFF, 0xFFFF, 0x7E01, 0xFE2A,  # subnormals, max half, inf, quiet NaNs,
                        0x7C01, 0xFC01, 0x7D55, 0xFDFF, 0x3C00, 0xBC00], np.uint16)  # signaling NaNs, +-1


@pytest.mark.parametrize("trial", range(8))
def test_a_binary16_maximum_on_keys_picks_the_float32_kernels_nan_bit_for_bit(trial):
    """The maximum on binary16 planes (compared as integer keys, no conversion) over windows dense in edge values:
    of several NaNs of both signs, quiet and signaling, the one the float32 kernel's ``llvm.maximum`` keeps, with
    its payload and quiet bit as they were; +0.0 over -0.0; and every output one of its window's own patterns."""
    from openvx_nn.kernels.frontend.chw_pooling import pool_planes

    rng = np.random.default_rng(3200 + trial)
    kernel, stride, offset, hw, out_hw = _random_window(rng, 20, 90)
    planes = int(rng.integers(1, 19))
    share = (0.02, 0.3, 0.7, 1.0)[trial % 4]  # of edge values; the rest ordinary
    ordinary = (rng.standard_normal((planes,) + hw) * 1000).astype(np.float16).view(np.uint16)
    bits = np.where(rng.random(ordinary.shape) < share, rng.choice(_HALF_EDGES, ordinary.shape), ordinary)
    out16 = np.full((planes,) + out_hw, 0x7777, np.uint16)
    out32 = np.full((planes,) + out_hw, 7.0, np.float32)
    geometry = (False, *kernel, *stride, *offset, np.float32(0.0), 0, planes)
    pool_planes(bits, out16, *geometry)
    pool_planes(bits.view(np.float16).astype(np.float32), out32, *geometry)
    assert np.array_equal(out16, out32.astype(np.float16).view(np.uint16)), "not the float32 kernel's picks"
    (kh, kw), (sy, sx), (top, left) = kernel, stride, offset
    for oy in range(out_hw[0]):
        for ox in range(out_hw[1]):
            y0, x0 = oy * sy - top, ox * sx - left
            window = bits[:, max(y0, 0):max(y0 + kh, 0), max(x0, 0):max(x0 + kw, 0)].reshape(planes, -1)
            if window.shape[1] == 0:
                assert not out16[:, oy, ox].any()
                continue
            assert all(out16[p, oy, ox] in window[p] for p in range(planes)), "an output not from its window"
    want = _half_reference(bits.view(np.float16), False, kernel, stride, offset, out_hw)
    got = out16.view(np.float16)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~np.isnan(want)].view(np.uint16), want[~np.isnan(want)].view(np.uint16))


@pytest.mark.parametrize("cpu", ["haswell", "skylake-avx512"])
def test_binary16_planes_pool_the_same_compiled_for_avx2_and_avx512_without_fp16(tmp_path, cpu):
    # The window passes are generic LLVM IR; compiled for AVX2 alone (haswell: 16-bit unsigned compares and the
    # float32 maximum lowered without AVX-512) and for AVX-512 without FP16 or VNNI (skylake-avx512) the binary16
    # tests above still give the float32 kernel's bits.
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, OPENVX_NN_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__, "-k",
                           "binary16_planes_pool_as or maximum_on_keys"], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
