"""Tensor convert depth against a plain float64 reference with Python-integer rounding and fitting."""
from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    Q3_12,
    Q7,
    Q11_4,
    Q78,
    S8,
    U8,
    Format,
    assert_bits_equal,
    blank,
    fit_exact,
    placed,
    random_shape,
    random_values,
)

from openvx_nn.kernels import convert_depth


def real_value(raw, fin: Format, fout: Format, norm: float, offset: float) -> float:
    """((raw / 2**in_fpp) - offset) / norm * 2**out_fpp in IEEE double, step by step."""
    pin = 0 if fin.is_float else fin.fpp
    pout = 0 if fout.is_float else fout.fpp
    numerator = float(raw) / 2 ** pin - float(np.float32(offset))
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = float(np.float64(numerator) / np.float64(np.float32(norm)))  # IEEE: x/0 is +-inf or nan
    return quotient * 2 ** pout


def reference_convert(x, fin, fout, norm, offset, saturate, sample: bool = False) -> np.ndarray:
    """``sample``: the Khronos sample implementation's convention, a C cast (fraction dropped toward zero)
    from a 16-bit fixed point input to an 8-bit output; the text rounds to nearest, ties to even."""
    cast = sample and fin.dtype == np.int16 and fout.dtype in (np.uint8, np.int8)
    result = np.empty(x.shape, fout.dtype)
    for index in np.ndindex(x.shape):
        v = real_value(x[index], fin, fout, norm, offset)
        if fout.is_float:
            result[index] = np.float32(v)
        elif math.isnan(v):
            result[index] = 0
        elif math.isinf(v):
            result[index] = (fout.hi if v > 0 else fout.lo) if saturate else 0
        else:
            result[index] = fit_exact(math.trunc(v) if cast else round(v), fout, saturate)  # round: half to even
    return result


NORM_OFFSET = [(1.0, 0.0), (0.5, 3.25), (3.0, -10.0), (0.1, 0.7)]


@pytest.mark.parametrize("norm_offset", NORM_OFFSET, ids=lambda p: f"norm{p[0]}-offset{p[1]}")
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("fout", FORMATS, ids=lambda f: f"to-{f}")
@pytest.mark.parametrize("fin", FORMATS, ids=lambda f: f"from-{f}")
def test_convert_depth_matches_float64_reference(fin, fout, saturate, norm_offset):
    norm, offset = norm_offset
    rng = np.random.default_rng([20, FORMATS.index(fin), FORMATS.index(fout), saturate,
                                 NORM_OFFSET.index(norm_offset)])
    x = placed(rng, random_values(rng, fin, random_shape(rng, max_size=200)))
    out = blank(rng, x.shape, fout.dtype, ["c", "f", "step", "perm", "reversed"][int(rng.integers(5))])
    convert_depth(x, fin.fpp, out, fout.fpp, norm, offset, saturate)
    assert_bits_equal(out, reference_convert(x, fin, fout, norm, offset, saturate))


@pytest.mark.parametrize("fin, fout", [(Q78, S8), (Q78, U8), (Q11_4, S8), (F32, S8), (F32, Q78), (Q3_12, Q78), (Q3_12, Q7)],
                         ids=lambda f: str(f))
def test_convert_depth_rounds_exact_ties_to_even(fin, fout):
    # Inputs whose converted value (norm 1, offset 0) has a fraction of exactly one half.
    if fin.is_float:
        x = (np.arange(-40, 40) + 0.5).astype(np.float32)
        if fout.fpp:
            x = (x / 2 ** fout.fpp).astype(np.float32)
    else:
        half = 1 << (fin.fpp - fout.fpp - 1)
        x = (np.arange(-40, 40) * 2 * half + half).astype(fin.dtype)
    values = [real_value(v, fin, fout, 1.0, 0.0) for v in x]
    assert all(v - math.floor(v) == 0.5 for v in values)
    out = np.zeros(x.shape, fout.dtype)
    convert_depth(x, fin.fpp, out, fout.fpp, 1.0, 0.0, True)
    assert_bits_equal(out, reference_convert(x, fin, fout, 1.0, 0.0, True))
    assert all(int(o) % 2 == 0 for o, v in zip(out, values) if fout.lo < round(v) < fout.hi)


def test_q78_to_s8_examples():
    x = np.array([640, 384, -640, -384, 128, -128, 32767, -32768], np.int16)  # 2.5 1.5 -2.5 -1.5 .5 -.5 ...
    out = np.zeros(8, np.int8)
    convert_depth(x, 8, out, 0, 1.0, 0.0, True)
    assert out.tolist() == [2, 2, -2, -2, 0, 0, 127, -128]


def test_zero_norm_follows_ieee_division():
    x = np.array([-3, 0, 5], np.int8)
    out = np.zeros(3, np.int8)
    convert_depth(x, 0, out, 0, 0.0, 0.0, True)
    assert out.tolist() == [-128, 0, 127]
    convert_depth(x, 0, out, 0, 0.0, 0.0, False)
    assert out.tolist() == [0, 0, 0]
    f = np.zeros(3, np.float32)
    convert_depth(x, 0, f, 0, 0.0, 0.0, True)
    assert f[0] == -np.inf and np.isnan(f[1]) and f[2] == np.inf


def test_wrapping_a_huge_float_keeps_its_exact_low_bits():
    x = np.array([3.0e9, -3.0e9, 1.0e30, 16777217.0, 255.5], np.float32)
    out = np.zeros(5, np.int16)
    convert_depth(x, 0, out, 0, 1.0, 0.0, False)
    expected = [fit_exact(round(float(v)), Q78, False) for v in x]
    assert out.tolist() == expected
