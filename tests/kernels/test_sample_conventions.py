"""The Khronos sample implementation's conventions and the supersets the
conformance suite needs (deconvolution biases per output location), kernel by kernel, in both modes.

Each case runs the kernel with the parameter a mode gives it (``origin = dilation`` or 0,
``bound = (W - 1) // upscale + 1`` or the whole input, ``truncate``) and compares it bit for bit
with the plain references of this directory, switched to the same mode (their ``sample`` flag).
Which mode a node gets is tested through the C API in ``tests/test_compat_mode.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
from conv_reference import reference_convolution, reference_deconvolution
from kernel_testing import (
    F32,
    FORMATS,
    INT_FORMATS,
    LAYOUTS,
    Q78,
    S8,
    U8,
    assert_bits_equal,
    blank,
    placed,
    random_values,
)
from test_convert_depth import reference_convert
from test_convolution import random_geometry as conv_geometry
from test_deconvolution import random_geometry as deconv_geometry

from openvx_nn.kernels import convert_depth
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.deconvolution import deconvolution

MODES = [False, True]
MODE_IDS = ["standard", "khronos-sample"]
# Integer formats with one policy pair each (the policies themselves are covered by the layer tests), and F32.
CASES = [pytest.param(fmt, sample, seed, id=f"{fmt}-{MODE_IDS[sample]}-{seed}")
         for fmt in INT_FORMATS + [F32] for sample in MODES for seed in range(3)]


def methods(fmt):
    return ["direct"] if fmt.is_float else ["gemm", "direct"]


@pytest.mark.parametrize("fmt, sample, seed", CASES)
def test_dilated_convolution_places_taps_by_the_mode(fmt, sample, seed):
    rng = np.random.default_rng([90, FORMATS.index(fmt), sample, seed])
    g = conv_geometry(rng)
    g["dilation"] = (int(rng.integers(1, 3)), g["dilation"][1])  # at least one dilated axis
    span = g["x_shape"][0] + 2 * g["pad"][0] - (g["w_shape"][0] + (g["w_shape"][0] - 1) * g["dilation"][0])
    ow = max(1, span // g["stride"][0] + 1)
    out_shape = (ow,) + g["out_shape"][1:]
    x = placed(rng, random_values(rng, fmt, g["x_shape"]))
    w = placed(rng, random_values(rng, fmt, g["w_shape"]))
    bias = placed(rng, random_values(rng, fmt, (g["w_shape"][3],)))
    saturate, nearest = bool(seed % 2), bool(seed // 2 % 2)
    fpp = (fmt.fpp,) * 4
    expected = reference_convolution(x, w, bias, out_shape, g["pad"], g["stride"], g["dilation"], fmt, fpp,
                                     saturate, nearest, sample=sample)
    origin = g["dilation"] if sample else (0, 0)
    for method in methods(fmt):
        out = blank(rng, out_shape, fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        convolution(x, w, bias, out, *g["pad"], *g["stride"], *g["dilation"], saturate, nearest,
                    fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_b=fmt.fpp, fpp_out=fmt.fpp,
                    origin_x=origin[0], origin_y=origin[1], method=method)
        assert_bits_equal(out, expected)


def test_dilated_taps_by_hand():
    # Two taps of weight 1, dilation 1, stride 1, no padding: the text reads x[o] + x[o+2],
    # the sample x[o+1] + x[o+3] (and the last output's second tap falls past the input: zero).
    x = np.arange(1, 6, dtype=np.int16).reshape(5, 1, 1) * 10
    w = np.ones((2, 1, 1, 1), np.int16)
    for origin, expected in ((0, [40, 60, 80]), (1, [60, 80, 40])):
        out = np.zeros((3, 1, 1), np.int16)
        convolution(x, w, None, out, 0, 0, 1, 1, 1, 0, True, True, origin_x=origin)
        assert out[:, 0, 0].tolist() == expected


@pytest.mark.parametrize("fmt, sample, seed", CASES)
def test_deconvolution_bound_and_biases_per_location(fmt, sample, seed):
    rng = np.random.default_rng([91, FORMATS.index(fmt), sample, seed])
    g = deconv_geometry(rng)
    x = placed(rng, random_values(rng, fmt, g["x_shape"]))
    w = placed(rng, random_values(rng, fmt, g["w_shape"]))
    bias_shape = [None, (g["w_shape"][3],), tuple(g["out_shape"][:3])][seed]
    bias = None if bias_shape is None else placed(rng, random_values(rng, fmt, bias_shape))
    saturate, nearest = bool(seed % 2), not seed % 2
    fpp = (fmt.fpp,) * 4
    expected = reference_deconvolution(x, w, bias, g["pad"], g["upscale"], g["extra"], fmt, fpp, saturate,
                                       nearest, sample=sample)
    bounds = [(n - 1) // u + 1 if sample else None for n, u in zip(g["x_shape"][:2], g["upscale"])]
    for method in methods(fmt):
        out = blank(rng, g["out_shape"], fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        deconvolution(x, w, bias, out, *g["pad"], *g["upscale"], *g["extra"], saturate, nearest,
                      fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_b=fmt.fpp, fpp_out=fmt.fpp,
                      bound_x=bounds[0], bound_y=bounds[1], method=method)
        assert_bits_equal(out, expected)


def test_deconvolution_bound_by_hand():
    # W = 3, upscale 2, a 1-tap kernel: the text gives [x0, 0, x1, 0, x2]; the sample counts only the
    # zero-inserted positions 0 and 2 (below W = 3), so x2 (at position 4) drops out.
    x = np.array([5, 6, 7], np.int8).reshape(3, 1, 1)
    w = np.ones((1, 1, 1, 1), np.int8)
    bias = np.arange(5, dtype=np.int8).reshape(5, 1, 1)  # per output location
    for bound, expected in ((None, [5, 1, 8, 3, 11]), (2, [5, 1, 8, 3, 4])):
        out = np.zeros((5, 1, 1), np.int8)
        deconvolution(x, w, bias, out, 0, 0, 2, 1, 0, 0, True, True, bound_x=bound)
        assert out[:, 0, 0].tolist() == expected


@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("fout", [U8, S8, Q78], ids=str)
@pytest.mark.parametrize("sample", MODES, ids=MODE_IDS)
def test_convert_depth_from_q78_truncates_only_in_the_sample_mode(sample, fout, saturate):
    rng = np.random.default_rng([92, sample, saturate, [U8, S8, Q78].index(fout)])
    x = random_values(rng, Q78, (300,), extremes=0.1)
    for norm, offset in ((1.0, 0.0), (0.37, -3.5), (2.0, 10.25)):
        truncate = sample and fout.dtype != np.int16  # the mode's rule: 16-bit input to an 8-bit output
        out = np.zeros(x.shape, fout.dtype)
        convert_depth(x, Q78.fpp, out, fout.fpp, norm, offset, saturate, truncate=truncate)
        assert_bits_equal(out, reference_convert(x, Q78, fout, norm, offset, saturate, sample=sample))


def test_convert_depth_truncation_by_hand():
    # 102.75 and -2.75 in Q7.8: the text rounds to 103 and -3, the sample's C cast gives 102 and -2.
    x = np.array([26304, -704, 640], np.int16)
    for truncate, expected in ((False, [103, -3, 2]), (True, [102, -2, 2])):
        out = np.zeros(3, np.int8)
        convert_depth(x, 8, out, 0, 1.0, 0.0, True, truncate=truncate)
        assert out.tolist() == expected
