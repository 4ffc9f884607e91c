"""The 8-bit layers of the SIMD engine on AMX tiles: bit for bit against the plain references (conv_reference.py,
layer_references.py, which share no code with the engine) and against the VNNI route (``OPENVX_NN_AMX=0``), on
layers big enough for the planner to pick AMX. Skipped where the CPU or Linux gives no AMX tiles."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from conv_reference import reference_convolution, reference_deconvolution
from kernel_testing import LAYOUTS, S8, U8, assert_bits_equal, blank, placed, random_values
from layer_references import fully_connected_ref

from openvx_nn.kernels.engine import isa, microkernel
from openvx_nn.kernels.engine import simd as engine
from openvx_nn.kernels.engine.correlation import convolution_window
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.deconvolution import deconvolution
from openvx_nn.kernels.openvx.fully_connected import fully_connected

pytestmark = pytest.mark.skipif(not isa.amx(), reason="this CPU or OS gives no AMX-INT8 tiles (or AMX is off)")
POLICIES = [(True, True), (True, False), (False, True), (False, False)]


def on_both_routes(monkeypatch, layer, blank_out, x, w, bias, *args, **kwargs):
    """The output of ``layer(x, w, bias, out, *args, **kwargs)`` (``out = blank_out()``) with AMX, then with the
    VNNI kernels (the switch is read when a layer is planned)."""
    results = []
    for setting in ("1", "0"):
        monkeypatch.setenv(isa.ENV_AMX, setting)
        isa.amx.cache_clear()
        out = blank_out()
        layer(x, w, bias, out, *args, **kwargs)
        results.append(out)
    monkeypatch.delenv(isa.ENV_AMX)
    isa.amx.cache_clear()
    return results


def _micro_isa(w, stride, pad, x_shape, out_shape) -> str:
    plan = engine.prepare(w, convolution_window(pad, pad, stride, stride, 0, 0), x_shape, out_shape, "avx512_vnni")
    return microkernel.decode(plan.code)[0]


def test_the_planner_takes_amx_for_layers_that_fill_its_tiles(monkeypatch):
    w = np.ones((3, 3, 64, 64), np.uint8)
    assert _micro_isa(w, 1, 1, (14, 14, 64), (14, 14, 64)) == "amx"
    assert _micro_isa(w, 1, 1, (5, 5, 64), (5, 5, 64)) == "avx512_vnni"  # 25 pixels
    assert _micro_isa(np.ones((1, 1, 16, 64), np.int8), 1, 0, (14, 14, 16), (14, 14, 64)) == "avx512_vnni"  # 4 groups
    assert _micro_isa(np.ones((3, 3, 16, 8), np.int16), 1, 1, (14, 14, 16), (14, 14, 8)) == "avx512_vnni"  # int16
    monkeypatch.setenv(isa.ENV_AMX, "0")
    isa.amx.cache_clear()
    try:
        assert _micro_isa(w, 1, 1, (14, 14, 64), (14, 14, 64)) == "avx512_vnni"
    finally:
        monkeypatch.delenv(isa.ENV_AMX)
        isa.amx.cache_clear()


@pytest.mark.parametrize("fmt", [U8, S8], ids=str)
def test_convolution_on_amx_matches_the_reference_and_vnni(fmt, monkeypatch):
    rng = np.random.default_rng(1 if fmt is U8 else 2)
    for case in range(10):
        saturate, nearest_even = POLICIES[case % 4]
        kx, ky = (int(v) for v in rng.integers(1, 4, 2))
        dilation = tuple(int(v) for v in rng.integers(0, 2, 2))
        stride = tuple(int(v) for v in rng.integers(1, 3, 2))
        pad = (int(rng.integers(0, kx + 1)), int(rng.integers(0, ky + 1)))
        channels = int(rng.choice([3, 13, 32, 33, 64, 70, 129]))  # dense RGB rows, group tails, whole steps
        k_out = int(rng.choice([1, 15, 16, 17, 32, 33, 70]))
        batch = (2,) if case % 5 == 4 else ()
        width = int(rng.integers(6, 16)) + (kx - 1) * (dilation[0] + 1)
        height = int(rng.integers(6, 12)) + (ky - 1) * (dilation[1] + 1)
        ow = (width + 2 * pad[0] - (kx - 1) * (dilation[0] + 1) - 1) // stride[0] + 1
        oh = (height + 2 * pad[1] - (ky - 1) * (dilation[1] + 1) - 1) // stride[1] + 1
        x = placed(rng, random_values(rng, fmt, (width, height, channels) + batch))
        w = placed(rng, random_values(rng, fmt, (kx, ky, channels, k_out)))
        if case % 3 == 2:  # the extreme values
            x[::2], w[..., ::2] = fmt.lo, fmt.lo
            x[1::2], w[..., 1::2] = fmt.hi, fmt.hi
        bias = placed(rng, random_values(rng, fmt, (k_out,))) if case % 2 else None
        out = partial(blank, rng, (ow, oh, k_out) + batch, fmt.dtype, LAYOUTS[case % len(LAYOUTS)])
        amx, vnni = on_both_routes(monkeypatch, convolution, out, x, w, bias, *pad, *stride, *dilation, saturate,
                                   nearest_even, method="simd", isa="avx512_vnni")
        expected = reference_convolution(x, w, bias, amx.shape, pad, stride, dilation, fmt, (0, 0, 0, 0), saturate,
                                         nearest_even)
        assert_bits_equal(amx, expected)
        assert_bits_equal(amx, vnni)


@pytest.mark.parametrize("fmt", [U8, S8], ids=str)
def test_fully_connected_on_amx_matches_the_reference_and_vnni(fmt, monkeypatch):
    rng = np.random.default_rng(3 if fmt is U8 else 4)
    for case, (n_in, n_out, n_batch) in enumerate([(32, 16, 32), (33, 17, 33), (257, 70, 40), (1000, 5, 64)]):
        saturate, nearest_even = POLICIES[case]
        x = placed(rng, random_values(rng, fmt, (n_in, n_batch)))
        w = placed(rng, random_values(rng, fmt, (n_in, n_out)))
        bias = random_values(rng, fmt, (n_out,)) if case % 2 else None
        out = partial(blank, rng, (n_out, n_batch), fmt.dtype, LAYOUTS[case])
        amx, vnni = on_both_routes(monkeypatch, fully_connected, out, x, w, bias, saturate, nearest_even,
                                   isa="avx512_vnni")
        assert_bits_equal(amx, fully_connected_ref(x, w, bias, fmt, saturate, nearest_even))
        assert_bits_equal(amx, vnni)


@pytest.mark.parametrize("fmt, x_value, w_value", [(U8, 255, 255), (U8, 0, 255), (S8, -128, -128), (S8, 127, -128)],
                         ids=str)
def test_long_extreme_sums_on_amx_keep_their_int32_blocks_exact(fmt, x_value, w_value, monkeypatch):
    # Past 2**31 after some 66,000 products: the K-blocks end inside a 16-group AMX step.
    x = np.full((70_001, 33), x_value, fmt.dtype)
    w = np.full((70_001, 3), w_value, fmt.dtype)
    w[::7, 1] = 0
    for saturate in (True, False):
        out = partial(np.zeros, (3, 33), fmt.dtype, order="F")
        amx, vnni = on_both_routes(monkeypatch, fully_connected, out, x, w, None, saturate, True, isa="avx512_vnni")
        assert_bits_equal(amx, fully_connected_ref(x, w, None, fmt, saturate, True))
        assert_bits_equal(amx, vnni)


@pytest.mark.parametrize("fmt", [U8, S8], ids=str)
@pytest.mark.parametrize("saturate, nearest_even", POLICIES[:2])
def test_deconvolution_on_amx_matches_the_reference_and_vnni(fmt, saturate, nearest_even, monkeypatch):
    rng = np.random.default_rng(7)
    x = random_values(rng, fmt, (9, 8, 40, 2))
    w = random_values(rng, fmt, (3, 4, 40, 20))
    bias = random_values(rng, fmt, (20,))
    pads, upscales, extra = (1, 0), (2, 3), (1, 2)
    shape = ((9 - 1) * 2 - 2 + 3 + 1, (8 - 1) * 3 + 4 + 2, 20, 2)
    out = partial(np.zeros, shape, fmt.dtype, order="F")
    amx, vnni = on_both_routes(monkeypatch, deconvolution, out, x, w, bias, *pads, *upscales, *extra, saturate,
                               nearest_even, method="simd", isa="avx512_vnni")
    assert_bits_equal(amx, reference_deconvolution(x, w, bias, pads, upscales, extra, fmt, (0,) * 4, saturate,
                                                   nearest_even))
    assert_bits_equal(amx, vnni)
