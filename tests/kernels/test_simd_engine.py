"""The integer SIMD engine on every instruction set this CPU runs, bit for bit against the plain references.

Each case forces ``method="simd"`` with one instruction set (``isa.available()`` minus
``generic``: on a CPU without VNNI the VNNI cases are skipped, the AVX2 ones still run), and
compares with conv_reference.py / layer_references.py, which share no code with the engine.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
from conv_reference import reference_convolution, reference_deconvolution
from kernel_testing import INT_FORMATS, LAYOUTS, Q78, S8, U8, Format, assert_bits_equal, blank, placed, random_values
from layer_references import fully_connected_ref

from openvx_nn.kernels.engine import isa
from openvx_nn.kernels.engine import simd as engine
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.deconvolution import deconvolution
from openvx_nn.kernels.openvx.fully_connected import fully_connected

ALL_ISAS = [name for name in isa.ISAS if name != "generic"]
POLICIES = [(True, True), (True, False), (False, True), (False, False)]


def isa_param(name: str):
    runs = name in isa.available()
    return pytest.param(name, id=name, marks=pytest.mark.skipif(not runs, reason=f"this CPU has no {name}"))


ISAS = [isa_param(name) for name in ALL_ISAS]


def fpps(fmt: Format, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """Positions of x, w, bias, out: the format's, with the bias and output sometimes elsewhere."""
    if fmt.fpp == 0:
        return (0, 0, 0, 0)
    bits = np.iinfo(fmt.dtype).bits - 1
    return (fmt.fpp, fmt.fpp, int(rng.integers(0, bits + 1)), int(rng.integers(0, bits + 1)))


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_convolution_matches_the_reference_over_random_geometry(name, fmt):
    rng = np.random.default_rng(abs(hash((name, fmt.name))) % 2**32)
    for case in range(6):
        saturate, nearest_even = POLICIES[case % 4]
        kx, ky = (int(v) for v in rng.integers(1, 4, 2))
        dilation = tuple(int(v) for v in rng.integers(0, 3, 2))
        stride = tuple(int(v) for v in rng.integers(1, 4, 2))
        pad = (int(rng.integers(0, kx + 1)), int(rng.integers(0, ky + 1)))
        channels, k_out = int(rng.integers(1, 11)), int(rng.integers(1, 40))
        batch = tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 3))))
        width = int(rng.integers(1, 9)) + (kx - 1) * (dilation[0] + 1)
        height = int(rng.integers(1, 9)) + (ky - 1) * (dilation[1] + 1)
        ow = (width + 2 * pad[0] - (kx - 1) * (dilation[0] + 1) - 1) // stride[0] + 1
        oh = (height + 2 * pad[1] - (ky - 1) * (dilation[1] + 1) - 1) // stride[1] + 1
        x = placed(rng, random_values(rng, fmt, (width, height, channels) + batch))
        w = placed(rng, random_values(rng, fmt, (kx, ky, channels, k_out)))
        bias_shape = [(k_out,), (ow, oh, k_out), None][case % 3]
        bias = None if bias_shape is None else placed(rng, random_values(rng, fmt, bias_shape))
        out = blank(rng, (ow, oh, k_out) + batch, fmt.dtype, LAYOUTS[case % len(LAYOUTS)])
        positions = fpps(fmt, rng)
        convolution(x, w, bias, out, *pad, *stride, *dilation, saturate, nearest_even, fpp_x=positions[0],
                    fpp_w=positions[1], fpp_b=positions[2], fpp_out=positions[3], method="simd", isa=name)
        expected = reference_convolution(x, w, bias, out.shape, pad, stride, dilation, fmt, positions, saturate,
                                         nearest_even)
        assert_bits_equal(out, expected)


def test_the_planner_covers_16_and_32_channels_with_whole_vectors():
    from openvx_nn.kernels.engine.tiles import choose_tile
    assert choose_tile(16, 1024, 16) == (24, 1)
    assert choose_tile(16, 256, 32) == (12, 2)
    assert choose_tile(16, 3136, 48) == (24, 1)  # three blocks of one vector
    assert choose_tile(16, 3136, 64) == (6, 4)
    assert choose_tile(16, 1, 4096) == (1, 8)


@pytest.mark.skipif("avx512_vnni" not in isa.available(), reason="this CPU has no avx512_vnni")
@pytest.mark.parametrize("tile", [(24, 1), (12, 2)], ids=str)
@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_the_narrow_512_bit_tiles_match_the_reference(tile, fmt, monkeypatch):
    from openvx_nn.kernels.engine import tiles
    monkeypatch.setitem(tiles.TILES, 16, (tile,))
    rng = np.random.default_rng(abs(hash((tile, fmt.name))) % 2**32)
    for case, k_out in enumerate((1, 16, 23, 32, 40)):  # short, whole and several blocks, a short last one
        saturate, nearest_even = POLICIES[case % 4]
        kx, ky = (int(v) for v in rng.integers(1, 4, 2))
        pad, stride = (kx // 2, ky // 2), tuple(int(v) for v in rng.integers(1, 3, 2))
        channels = int(rng.integers(1, 20))
        width, height = (int(v) for v in rng.integers(kx + 2, 16, 2))
        ow = (width + 2 * pad[0] - kx) // stride[0] + 1
        oh = (height + 2 * pad[1] - ky) // stride[1] + 1
        x = placed(rng, random_values(rng, fmt, (width, height, channels)))
        w = placed(rng, random_values(rng, fmt, (kx, ky, channels, k_out)))
        bias = placed(rng, random_values(rng, fmt, (k_out,)))
        out = blank(rng, (ow, oh, k_out), fmt.dtype, LAYOUTS[case % len(LAYOUTS)])
        positions = fpps(fmt, rng)
        convolution(x, w, bias, out, *pad, *stride, 0, 0, saturate, nearest_even, fpp_x=positions[0],
                    fpp_w=positions[1], fpp_b=positions[2], fpp_out=positions[3], method="simd", isa="avx512_vnni")
        expected = reference_convolution(x, w, bias, out.shape, pad, stride, (0, 0), fmt, positions, saturate,
                                         nearest_even)
        assert_bits_equal(out, expected)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
@pytest.mark.parametrize("saturate, nearest_even", POLICIES)
def test_deconvolution_matches_the_reference(name, fmt, saturate, nearest_even):
    rng = np.random.default_rng(7)
    x = random_values(rng, fmt, (4, 3, 5, 2))
    w = random_values(rng, fmt, (3, 4, 5, 6))
    bias = random_values(rng, fmt, (6,))
    pads, upscales, extra = (1, 0), (2, 3), (1, 2)
    shape = ((4 - 1) * 2 - 2 + 3 + 1, (3 - 1) * 3 + 4 + 2, 6, 2)
    out = np.zeros(shape, fmt.dtype, order="F")
    positions = (fmt.fpp,) * 4
    deconvolution(x, w, bias, out, *pads, *upscales, *extra, saturate, nearest_even, fpp_x=fmt.fpp, fpp_w=fmt.fpp,
                  fpp_b=fmt.fpp, fpp_out=fmt.fpp, method="simd", isa=name)
    assert_bits_equal(out, reference_deconvolution(x, w, bias, pads, upscales, extra, fmt, positions, saturate,
                                                   nearest_even))


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_fully_connected_matches_the_reference(name, fmt):
    rng = np.random.default_rng(11)
    for case, (n_in, n_out, n_batch) in enumerate([(1, 1, 1), (13, 17, 1), (70, 5, 3), (257, 33, 9)]):
        saturate, nearest_even = POLICIES[case]
        x = placed(rng, random_values(rng, fmt, (n_in, n_batch)))
        w = placed(rng, random_values(rng, fmt, (n_in, n_out)))
        bias = random_values(rng, fmt, (n_out,)) if case % 2 else None
        out = blank(rng, (n_out, n_batch), fmt.dtype, LAYOUTS[case])
        positions = {"fpp_x": fmt.fpp, "fpp_w": fmt.fpp, "fpp_b": fmt.fpp, "fpp_out": fmt.fpp}
        fully_connected(x, w, bias, out, saturate, nearest_even, isa=name, **positions)
        assert_bits_equal(out, fully_connected_ref(x, w, bias, fmt, saturate, nearest_even, **positions))


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
def test_matrix_multiply_matches_the_reference(name, fmt):
    from test_matmul import operands, reference_matmul

    from openvx_nn.kernels.openvx.matmul import matrix_multiply
    rng = np.random.default_rng(13)
    for case, flags in enumerate([(False, False, False), (True, False, True), (False, True, False)]):
        saturate, nearest_even = POLICIES[case]
        m, k, n = (int(v) for v in rng.integers(1, 40, 3))
        a, b, c, out = operands(rng, m, k, n, fmt, fmt, fmt, fmt, *flags, with_c=case != 2)
        matrix_multiply(a, b, c, out, *flags, saturate, nearest_even, fpp_a=fmt.fpp, fpp_b=fmt.fpp, fpp_c=fmt.fpp,
                        fpp_out=fmt.fpp, isa=name)
        assert_bits_equal(out, reference_matmul(a, b, c, fmt, fmt, fmt, fmt, *flags, saturate, nearest_even))


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt, x_value, w_value", [(U8, 255, 255), (U8, 0, 255), (S8, -128, -128), (S8, 127, -128),
                                                   (Q78, -32768, -16384), (Q78, 32767, 32767),
                                                   (Q78, -32768, -32768)], ids=str)
def test_all_extreme_inputs_stress_the_int32_blocks(name, fmt, x_value, w_value):
    # Long sums of the largest products: the 8-bit kinds pass 2**31 after 66,000 taps (K-blocks widened
    # to int64); int16 products of 2**28 to 2**30 allow blocks of one or a few steps, and -32768 * -32768
    # pairs allow none (the int64 route takes over). Wrapping keeps the low bits of the exact sum.
    n_in = 70_001 if fmt.dtype != np.int16 else 1_001
    x = np.full((n_in, 2), x_value, fmt.dtype)
    w = np.full((n_in, 3), w_value, fmt.dtype)
    w[::7, 1] = 0
    for saturate in (True, False):
        out = np.zeros((3, 2), fmt.dtype, order="F")
        fully_connected(x, w, None, out, saturate, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_out=fmt.fpp, isa=name)
        expected = fully_connected_ref(x, w, None, fmt, saturate, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp,
                                       fpp_out=fmt.fpp)
        assert_bits_equal(out, expected)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
def test_layout_transposes_cover_every_block_edge(name, fmt):
    # Packing and the epilogue move 8x8 blocks between channel-planar tensors and the engine's
    # pixel-major layouts; the last block of a row or of the channels is moved back to overlap the one
    # before it. Widths, channel counts and output maps of 8, just above and well above multiples of 8,
    # a batch whose strips cross images, rows of one pixel, and a non-contiguous input.
    rng = np.random.default_rng(23)
    for width, height, channels, k_out, batch, layout in ((8, 3, 8, 8, (), "f"), (13, 11, 13, 21, (2,), "f"),
                                                          (27, 5, 19, 40, (), "f"), (9, 9, 16, 9, (3,), "f"),
                                                          (12, 7, 10, 17, (), "step"), (1, 30, 24, 12, (), "f")):
        x = placed(rng, random_values(rng, fmt, (width, height, channels) + batch), layout)
        w = random_values(rng, fmt, (3, 3, channels, k_out)) // (64 if fmt is Q78 else 1)
        bias = random_values(rng, fmt, (k_out,))
        out = np.zeros((width, height, k_out) + batch, fmt.dtype, order="F")
        convolution(x, w, bias, out, 1, 1, 1, 1, 0, 0, True, False, fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_b=fmt.fpp,
                    fpp_out=fmt.fpp, method="simd", isa=name)
        assert_bits_equal(out, reference_convolution(x, w, bias, out.shape, (1, 1), (1, 1), (0, 0), fmt,
                                                     (fmt.fpp,) * 4, True, False))


@pytest.mark.parametrize("name", ISAS)
def test_many_channels_split_into_blocks_and_groups(name):
    # 300 input channels (75 groups of 4, with a partial one) and 200 output channels (several channel
    # blocks, the last partial), on 3x3 taps with K-blocks forced small by large int16 weights.
    rng = np.random.default_rng(5)
    for fmt, w_limit in ((U8, 256), (Q78, 1 << 13)):
        x = random_values(rng, fmt, (5, 4, 301))
        w = rng.integers(-w_limit if fmt.lo < 0 else 0, w_limit, (3, 3, 301, 200)).astype(fmt.dtype)
        bias = random_values(rng, fmt, (200,))
        out = np.zeros((5, 4, 200), fmt.dtype, order="F")
        convolution(x, w, bias, out, 1, 1, 1, 1, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_b=fmt.fpp,
                    fpp_out=fmt.fpp, method="simd", isa=name)
        assert_bits_equal(out, reference_convolution(x, w, bias, out.shape, (1, 1), (1, 1), (0, 0), fmt,
                                                     (fmt.fpp,) * 4))


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
def test_dense_packing_of_few_channels(name, fmt):
    # Channels that do not fill whole groups (RGB) on kernel rows of adjacent taps are packed dense: a
    # kernel row is one run of kx * C elements whose groups straddle pixels, the last one reading past the
    # row (and, for the last pixel, past the packed input) times zero weights. AlexNet's conv1 shape at a
    # small size, a 1-channel and a 5-channel input, the extreme values, and K-blocks split inside a run.
    rng = np.random.default_rng(29)
    for channels, k, stride, pad, size in ((3, 11, 4, 0, 31), (1, 3, 1, 1, 9), (5, 2, 2, 1, 8), (3, 3, 1, 1, 7)):
        x = random_values(rng, fmt, (size, size, channels))
        x[0, 0, :], x[-1, -1, :] = fmt.lo, fmt.hi
        w = random_values(rng, fmt, (k, k, channels, 19))
        if fmt is Q78:
            w[..., :3] = -16384  # products of 2**29 beside -32768 inputs: K-blocks of one step
        bias = random_values(rng, fmt, (19,))
        out_size = (size + 2 * pad - k) // stride + 1
        plan = engine.prepare(w, _window_of(stride, pad), x.shape, (out_size, out_size, 19), name)
        assert plan.depth == channels  # dense, not padded to whole groups
        out = np.zeros((out_size, out_size, 19), fmt.dtype, order="F")
        convolution(x, w, bias, out, pad, pad, stride, stride, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp,
                    fpp_b=fmt.fpp, fpp_out=fmt.fpp, method="simd", isa=name)
        assert_bits_equal(out, reference_convolution(x, w, bias, out.shape, (pad, pad), (stride, stride), (0, 0),
                                                     fmt, (fmt.fpp,) * 4))


def _window_of(stride: int, pad: int):
    from openvx_nn.kernels.engine.correlation import convolution_window
    return convolution_window(pad, pad, stride, stride, 0, 0)


def test_block_length_keeps_int32_partials_exact():
    w = np.full((1, 1, 8, 4), -32768, np.int16)
    plan = engine.prepare(w, _window(), (1, 1, 8), (1, 1, 4), "avx2")
    assert engine.block_steps(plan, 32768) == 0  # two products of 2**30 reach 2**31
    assert engine.block_steps(plan, 32767) == 1
    assert engine.block_steps(plan, 0) > 1 << 30
    if "avx512_vnni" in isa.available():
        u8 = engine.prepare(np.full((1, 1, 8, 4), 255, np.uint8), _window(), (1, 1, 8), (1, 1, 4), "avx512_vnni")
        steps = engine.block_steps(u8, u8.x_max)
        assert steps * 4 * 128 * 255 < 2**31 <= (steps + 1) * 4 * 128 * 255


def _window():
    from openvx_nn.kernels.engine.correlation import Window
    return Window(1, 1, 1, 1, 0, 0)


def test_forced_instruction_set_is_checked(monkeypatch):
    monkeypatch.setenv(isa.ENV_ISA, "sse9")
    isa.selected.cache_clear()
    try:
        with pytest.raises(ValueError, match="OPENVX_NN_ISA=sse9"):
            isa.selected()
        monkeypatch.setenv(isa.ENV_ISA, "generic")
        isa.selected.cache_clear()
        assert isa.selected() == "generic"
    finally:
        monkeypatch.delenv(isa.ENV_ISA)
        isa.selected.cache_clear()
    assert isa.selected() == isa.available()[0]
    with pytest.raises(ValueError, match="not one of"):
        isa.check("neon")


def test_forcing_a_narrower_instruction_set_narrows_the_float_vectors(monkeypatch):
    def lanes(forced):
        if forced is None:
            monkeypatch.delenv(isa.ENV_ISA, raising=False)
        else:
            monkeypatch.setenv(isa.ENV_ISA, forced)
        isa.selected.cache_clear()
        isa.float_lanes.cache_clear()
        return isa.float_lanes()
    try:
        assert lanes("generic") == 8
        if "avx2" in isa.available():
            assert lanes("avx2") == 8
        wide = 16 if "avx512f" in isa._cpuinfo_flags() else 8
        if "avx512_vnni" in isa.available():
            assert lanes("avx512_vnni") == wide
        assert lanes(None) == wide
    finally:
        monkeypatch.delenv(isa.ENV_ISA, raising=False)
        isa.selected.cache_clear()
        isa.float_lanes.cache_clear()


def test_a_layer_of_few_channels_takes_the_256_bit_kernels_unless_an_instruction_set_is_forced(monkeypatch):
    monkeypatch.delenv(isa.ENV_ISA, raising=False)
    monkeypatch.setattr(isa, "available", lambda: ("avx512_vnni", "avx_vnni", "avx2", "generic"))
    monkeypatch.setattr(isa, "selected", lambda: "avx512_vnni")
    assert [isa.for_layer(None, k) for k in (1, 8, 9, 32, 64)] == ["avx_vnni"] * 2 + ["avx512_vnni"] * 3
    assert isa.for_layer("avx512_vnni", 8) == "avx512_vnni"  # asked for by the caller
    assert isa.for_layer(None, 0) == "avx512_vnni"
    monkeypatch.setenv(isa.ENV_ISA, "avx512_vnni")  # forced for the process
    assert isa.for_layer(None, 8) == "avx512_vnni"
    monkeypatch.delenv(isa.ENV_ISA)
    monkeypatch.setattr(isa, "available", lambda: ("avx512_vnni", "avx2", "generic"))  # no 256-bit VNNI
    assert isa.for_layer(None, 8) == "avx512_vnni"
    monkeypatch.setattr(isa, "selected", lambda: "avx2")
    assert isa.for_layer(None, 8) == "avx2"


@pytest.mark.skipif(not {"avx512_vnni", "avx_vnni"} <= set(isa.available()), reason="needs both VNNI widths")
def test_a_uint8_layer_of_few_channels_gives_the_same_bits_on_either_width():
    from openvx_nn.kernels.frontend import quant8_convolution
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (1, 9, 7, 5), dtype=np.uint8)
    w = rng.integers(0, 256, (12, 3, 3, 5), dtype=np.uint8)
    bias = rng.integers(-3000, 3000, 12).astype(np.int32)
    outs = []
    for name in (None, "avx512_vnni", "avx_vnni"):
        out = np.empty((1, 9, 7, 12), np.uint8)
        run = quant8_convolution.prepare_conv(w, bias, x.shape, out.shape, (1, 1, 1, 1), (1, 1), 0, (0.02, 128),
                                              (0.01, 120), (0.05, 10), name)
        run(x, out)
        outs.append(out)
    want = np.empty_like(outs[0])
    quant8_convolution.reference.conv2d(x, w, bias, want, (1, 1, 1, 1), (1, 1), 0, (0.02, 128), (0.01, 120),
                                        (0.05, 10))
    for out in outs:
        np.testing.assert_array_equal(out, want)


def test_thread_count_setting(monkeypatch):
    monkeypatch.setenv(isa.ENV_THREADS, "zero")
    isa.threads.cache_clear()
    try:
        with pytest.raises(ValueError, match="positive integer"):
            isa.threads()
        monkeypatch.setenv(isa.ENV_THREADS, "3")
        isa.threads.cache_clear()
        assert isa.threads() == 3
    finally:
        monkeypatch.delenv(isa.ENV_THREADS)
        isa.threads.cache_clear()


@pytest.mark.skipif("avx512_vnni" not in isa.available(), reason="this CPU has no AVX-512 VNNI")
@pytest.mark.parametrize("kind, instruction", [("u8s8", "vpdpbusd"), ("s16", "vpdpwssd")])
def test_vnni_micro_kernel_keeps_its_accumulators_in_registers(kind, instruction):
    import numba

    from openvx_nn.kernels.engine.microkernel import tile_kernel, variant
    code = variant("avx512_vnni", kind, 6, 4)

    @numba.njit  # compiled here, not loaded from a cache, so its assembly can be read
    def tile(out, rows, taps, w):
        tile_kernel(code, out.ctypes.data, rows.ctypes.data, taps.ctypes.data, 9, 16, w.ctypes.data, 16 * 256)

    a = np.zeros(4096, np.uint8)
    out = np.zeros(6 * 64, np.int32)
    w = np.ones(9 * 16 * 256, np.int8)
    tile(out, np.full(6, a.ctypes.data, np.int64), np.zeros(9, np.int64), w)
    assert (out == 0).all()  # A is zero
    asm = next(iter(tile.inspect_asm().values()))
    targets = {line.split(",")[-1].strip() for line in asm.splitlines() if line.strip().startswith(instruction)}
    # 6 rows x 4 vectors: 24 accumulators, each its own zmm register through the loop (spilled ones
    # would be reloaded into a few shared registers instead).
    assert len(targets) >= 24 and all(t.startswith("%zmm") for t in targets), targets


def test_two_threads_share_the_engine_exactly():
    # Two graphs may run at once (one per thread): the engine's pool and scratch must not mix them.
    import concurrent.futures
    rng = np.random.default_rng(17)
    cases = []
    for fmt in (U8, S8, Q78, U8):
        x = random_values(rng, fmt, (24, 20, 12, 2))
        w = random_values(rng, fmt, (3, 3, 12, 40)) // (64 if fmt is Q78 else 1)
        expected = reference_convolution(x, w, None, (22, 18, 40, 2), (0, 0), (1, 1), (0, 0), fmt, (fmt.fpp,) * 4)
        cases.append((fmt, x, w.astype(fmt.dtype), expected))

    def run(case):
        fmt, x, w, expected = case
        for _ in range(3):
            out = np.zeros(expected.shape, fmt.dtype, order="F")
            convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp,
                        fpp_out=fmt.fpp)
            assert_bits_equal(out, expected)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(run, cases))


def test_a_helper_that_comes_late_or_never_holds_nothing_up(monkeypatch):
    # A call lends its chunks to helpers and computes every chunk no helper claimed: here the helper
    # is never run during the call (as on a machine whose other core is busy), then runs afterwards.
    from openvx_nn.kernels.engine import workers
    lent = []
    monkeypatch.setattr(workers, "helpers", lambda: 1)
    monkeypatch.setattr(workers, "lend", lambda task, count: lent.append(task))
    monkeypatch.setattr(engine, "PACK_PARALLEL_BYTES", 0)  # packing is lent too
    rng = np.random.default_rng(29)
    for fmt in (U8, Q78):
        x = random_values(rng, fmt, (40, 40, 64))
        w = random_values(rng, fmt, (3, 3, 64, 40)) // (64 if fmt is Q78 else 1)
        out = np.zeros((40, 40, 40), fmt.dtype, order="F")
        assert out.size * 9 * 64 >= engine.PARALLEL_WORK
        convolution(x, w, None, out, 1, 1, 1, 1, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_out=fmt.fpp,
                    method="simd")
        expected = reference_convolution(x, w, None, out.shape, (1, 1), (1, 1), (0, 0), fmt, (fmt.fpp,) * 4)
        assert_bits_equal(out, expected)
        assert lent, "the work was not offered to a helper"
        for task in lent:  # the helper runs at last: no chunk is left for it, and it changes nothing
            task()
        assert_bits_equal(out, expected)
        lent.clear()


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("saturate", [True, False])
def test_an_output_position_finer_than_the_sums_shifts_left_exactly(name, saturate):
    # shift = scale - fpp_out < 0: the epilogue's exact left shift, not the rounding right shift.
    rng = np.random.default_rng(31)
    fmt = Q78
    x = random_values(rng, fmt, (9, 7, 12))
    w = random_values(rng, fmt, (3, 3, 12, 10)) // 256
    bias = random_values(rng, fmt, (10,))
    for positions in ((2, 2, 3, 15), (0, 1, 1, 6), (4, 4, 0, 9)):
        out = np.zeros((9, 7, 10), fmt.dtype, order="F")
        convolution(x, w, bias, out, 1, 1, 1, 1, 0, 0, saturate, True, fpp_x=positions[0], fpp_w=positions[1],
                    fpp_b=positions[2], fpp_out=positions[3], method="simd", isa=name)
        assert_bits_equal(out, reference_convolution(x, w, bias, out.shape, (1, 1), (1, 1), (0, 0), fmt, positions,
                                                     saturate, True))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_starts_its_own_helpers_and_computes_exactly():
    # The parent's helper threads do not exist in a forked child: tasks lent there must be served by
    # the child's own helpers (or none), never left in a queue nobody reads.
    from openvx_nn.kernels.engine import workers
    rng = np.random.default_rng(37)
    x = random_values(rng, U8, (30, 30, 64))
    w = random_values(rng, U8, (3, 3, 64, 48))
    expected = reference_convolution(x, w, None, (30, 30, 48), (1, 1), (1, 1), (0, 0), U8, (0,) * 4)

    def run() -> np.ndarray:
        out = np.zeros((30, 30, 48), np.uint8, order="F")
        convolution(x, w, None, out, 1, 1, 1, 1, 0, 0, True, True, method="simd")
        return out

    assert_bits_equal(run(), expected)  # the parent's helpers start (when this machine has 2+ threads)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        ok = 1
        try:
            for _ in range(3):
                ok &= int((run() == expected).all())
            for _ in range(200):  # every lent task is taken by a helper of the child's own
                if workers._tasks.qsize() == 0:
                    break
                time.sleep(0.01)
            ok &= int(workers._tasks.qsize() == 0)
        except BaseException:  # noqa: BLE001
            ok = 0
        os.write(writer, bytes([ok]))
        os._exit(0)
    os.close(writer)
    answer = os.read(reader, 1)
    os.waitpid(pid, 0)
    assert answer == b"\x01"
