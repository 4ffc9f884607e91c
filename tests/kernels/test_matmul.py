"""Tensor matrix multiply against exact Python-integer and ordered Python-float references.

OpenVX layout: a tensor of NumPy shape (d0, d1) is a matrix of d1 rows and d0
columns, element (row r, column c) = x[c, r].
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    LAYOUTS,
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
    random_values,
    round_exact,
)

from openvx_nn.kernels import matrix_multiply


def matrix(x: np.ndarray, transposed: bool) -> list[list]:
    d0, d1 = x.shape
    rows = [[x[c, r] for c in range(d0)] for r in range(d1)]
    return [list(col) for col in zip(*rows)] if transposed else rows


def reference_matmul(a, b, c, fa: Format, fb: Format, fc: Format, fo: Format, ta, tb, tc,
                     saturate=True, nearest_even=True) -> np.ndarray:
    A, B = matrix(a, ta), matrix(b, tb)
    C = matrix(c, tc) if c is not None else None
    m, k_depth, n = len(A), len(B), len(B[0])
    result = np.empty((n, m), fo.dtype)  # OpenVX dims [N, M]
    for i, j in itertools.product(range(m), range(n)):
        if fo.is_float:
            acc = 0.0
            for k in range(k_depth):
                acc += float(A[i][k]) * float(B[k][j])  # float32 x float32 is exact in a double
            result[j, i] = np.float32(acc + (float(C[i][j]) if C else 0.0))
            continue
        total = Fraction(sum(int(A[i][k]) * int(B[k][j]) for k in range(k_depth)), 2 ** (fa.fpp + fb.fpp))
        if C:
            total += Fraction(int(C[i][j]), 2 ** fc.fpp)
        result[j, i] = fit_exact(round_exact(total * 2 ** fo.fpp, nearest_even), fo, saturate)
    return result


def operands(rng, m, k, n, fa, fb, fc, fo, ta, tb, tc, with_c=True):
    a = placed(rng, random_values(rng, fa, (m, k) if ta else (k, m)))
    b = placed(rng, random_values(rng, fb, (k, n) if tb else (n, k)))
    c = placed(rng, random_values(rng, fc, (m, n) if tc else (n, m))) if with_c else None
    out = blank(rng, (n, m), fo.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    return a, b, c, out


FLAGS = list(itertools.product([False, True], repeat=3))


POLICIES = [(True, True), (True, False), (False, True), (False, False)]
FORMAT_POLICIES = [pytest.param(fmt, saturate, nearest_even,
                                id=f"{fmt}-{'saturate' if saturate else 'wrap'}-{'even' if nearest_even else 'zero'}")
                   for fmt in FORMATS for saturate, nearest_even in (POLICIES[:1] if fmt.is_float else POLICIES)]


@pytest.mark.parametrize("with_c", [False, True], ids=["no_c", "c"])
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "T" + "".join("1" if x else "0" for x in f))
@pytest.mark.parametrize("fmt, saturate, nearest_even", FORMAT_POLICIES)
def test_matrix_multiply_matches_exact_reference(fmt, saturate, nearest_even, flags, with_c):
    rng = np.random.default_rng([30, FORMATS.index(fmt), FLAGS.index(flags), with_c, saturate, nearest_even])
    m, k, n = (int(v) for v in rng.integers(1, 9, 3))
    a, b, c, out = operands(rng, m, k, n, fmt, fmt, fmt, fmt, *flags, with_c=with_c)
    matrix_multiply(a, b, c, out, *flags, saturate, nearest_even, fpp_a=fmt.fpp, fpp_b=fmt.fpp, fpp_c=fmt.fpp,
                    fpp_out=fmt.fpp, parallel=bool(rng.integers(2)))
    assert_bits_equal(out, reference_matmul(a, b, c, fmt, fmt, fmt, fmt, *flags, saturate, nearest_even))


MIXED = [(Q11_4, Q3_12, Q78, Q78), (Q78, Q78, Q3_12, Q11_4), (Q7, Q7, S8, Q7), (S8, Q7, Q78, Q3_12)]


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("formats", MIXED, ids=lambda f: "-".join(map(str, f)))
def test_matrix_multiply_aligns_formats_exactly(formats, saturate, nearest_even):
    # The last case has c at a finer position than the products (pc > pa + pb): the sum is shifted left.
    rng = np.random.default_rng([31, MIXED.index(formats), saturate, nearest_even])
    for flags in FLAGS[::3]:
        m, k, n = (int(v) for v in rng.integers(1, 7, 3))
        a, b, c, out = operands(rng, m, k, n, *formats, *flags)
        fpp = dict(zip(["fpp_a", "fpp_b", "fpp_c", "fpp_out"], (f.fpp for f in formats)))
        matrix_multiply(a, b, c, out, *flags, saturate, nearest_even, **fpp)
        assert_bits_equal(out, reference_matmul(a, b, c, *formats, *flags, saturate, nearest_even))


@pytest.mark.parametrize("fmt", [Q78, F32, U8], ids=str)
def test_large_product_uses_the_thread_pool_and_stays_exact(fmt):
    rng = np.random.default_rng(32)
    m, k, n = 64, 100, 48  # 307200 multiply-adds: above PARALLEL_WORK, so parallel=None picks threads
    a, b, c, out = operands(rng, m, k, n, fmt, fmt, fmt, fmt, False, False, False)
    matrix_multiply(a, b, c, out, False, False, False, fpp_a=fmt.fpp, fpp_b=fmt.fpp, fpp_c=fmt.fpp,
                    fpp_out=fmt.fpp)
    assert_bits_equal(out, reference_matmul(a, b, c, fmt, fmt, fmt, fmt, False, False, False))


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("fmt", [Q78, Q7, Q11_4, Q3_12], ids=str)
def test_matrix_multiply_rounds_exact_ties_by_the_policy(fmt, nearest_even):
    # One-term dot products a*b = odd * 2**(s-1) with s = fpp (out shares the format): every output is a tie.
    s = fmt.fpp
    rng = np.random.default_rng([33, s])
    odd_max = fmt.hi >> (s - 1)
    odd = rng.integers(-(odd_max // 2) - 1, (odd_max + 1) // 2, 12) * 2 + 1
    a = (odd * 2 ** (s - 1)).astype(fmt.dtype).reshape(1, 12)  # dims [K=1, M=12]
    b = np.array([[1], [-1], [3]], fmt.dtype)  # dims [N=3, K=1]
    out = np.zeros((3, 12), fmt.dtype)
    matrix_multiply(a, b, None, out, False, False, False, True, nearest_even, fpp_a=s, fpp_b=s, fpp_out=s)
    expected = reference_matmul(a, b, None, fmt, fmt, fmt, fmt, False, False, False, True, nearest_even)
    assert_bits_equal(out, expected)
    exact = [Fraction(int(x) * int(y), 2 ** s) for x in a[0] for y in b[:, 0]]
    assert all(q.denominator == 2 for q in exact)


def test_openvx_layout_example():
    # A = [[1, 2, 3], [4, 5, 6]] (2 rows, 3 columns) is a tensor with dims [3, 2].
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int16).T
    b = np.array([[1, 0], [0, 1], [1, 1]], np.int16).T  # 3 x 2 matrix, dims [2, 3]
    c = np.array([[10, 20], [30, 40]], np.int16).T
    out = np.zeros((2, 2), np.int16)
    matrix_multiply(a, b, c, out, False, False, False)
    assert out.T.tolist() == [[1 + 3 + 10, 2 + 3 + 20], [4 + 6 + 30, 5 + 6 + 40]]
    matrix_multiply(a.T.copy(), b, c, out, True, False, False)  # T(a) of the transposed tensor is A again
    assert out.T.tolist() == [[14, 25], [40, 51]]


def test_refuses_a_depth_that_could_overflow_the_int64_accumulator():
    k = 1 << 17
    a = np.zeros((k, 1), np.int16)
    b = np.zeros((1, k), np.int16)
    c = np.zeros((1, 1), np.int16)
    out = np.zeros((1, 1), np.int16)
    # c at Q0.15 with integer a and b: the sum is shifted left by 15, so K * 2**30 * 2**15 reaches 2**62.
    with pytest.raises(ValueError, match="int64"):
        matrix_multiply(a, b, c, out, False, False, False, fpp_c=15)
    matrix_multiply(a, b, c, out, False, False, False, fpp_a=8, fpp_b=8, fpp_c=8, fpp_out=8)  # K = 2**17: fine
    assert out[0, 0] == 0


def test_rejects_shapes_that_do_not_chain():
    with pytest.raises(ValueError, match="cannot fill"):
        matrix_multiply(np.zeros((3, 2), np.int8), np.zeros((4, 2), np.int8), None, np.zeros((4, 2), np.int8),
                        False, False, False)
