"""Tensor matrix multiply (OpenVX 1.2 vxTensorMatrixMultiplyNode).

Layout. A 2-D tensor with dims ``[d0, d1]`` (NumPy shape ``(d0, d1)``, dim 0
fastest) is a matrix of ``d1`` rows and ``d0`` columns: dim 0 is the column
index, so the NumPy array's ``.T`` is the mathematical matrix. With
``T(x)`` the matrix of ``x``, transposed when its flag is set::

    out = T(a) @ T(b) + T(c)        (M x K) @ (K x N) + (M x N)

so ``out`` has dims ``[N, M]``.

Integers. Products of raw values are summed exactly in int64 at the scale
``2**-(pa + pb)``; ``c`` is aligned to the common scale ``2**-P`` with
``P = max(pa + pb, pc)`` by an exact left shift (so is the sum when
``pc > pa + pb``); then one rounding right shift by ``P - p_out`` (to nearest
with ties to even, or toward zero) and saturation (or wrap).

Why int64 is exact: each product is at most ``2**30`` in magnitude for 16-bit
data, so a sum of ``K`` products is below ``K * 2**30``. The dispatcher
computes the worst case ``K * max|a| * max|b| * 2**(P - pa - pb) +
max|c| * 2**(P - pc)`` from the data types and refuses (ValueError) when it
is not below ``2**62``, the helpers' domain. For int16 tensors in one format
that allows ``K`` up to ``2**31`` (a 4 GiB row): beyond that a 64-bit
accumulator is NOT enough, whatever the memory size.

float32. Products are formed in float64 (exact: 24 + 24 bits), summed in
float64 in order ``k = 0 .. K-1`` starting from 0.0, ``c`` added last, and the
result cast to float32 once. The order is part of the contract so results
are reproducible bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..engine import isa as isa_module
from ..engine import simd as engine
from ..engine.correlation import Arithmetic, Window, as6, plan
from ..support import jit, native
from ..support.fixed_point import int_range, requantize
from ..support.jit import kernel
from ..support.layout import detach

# Below this many multiply-adds the serial kernel wins over waking the thread pool.
PARALLEL_WORK = 1 << 18


def _matmul_int(a, b, c, out, sum_shift, c_shift, shift, nearest_even, saturate, lo, hi):
    m_rows, k_depth = a.shape
    n_cols = b.shape[1]
    for i in prange(m_rows):
        acc = np.zeros(n_cols, np.int64)
        for k in range(k_depth):
            x = np.int64(a[i, k])
            row = b[k]
            for j in range(n_cols):
                acc[j] += x * np.int64(row[j])
        for j in range(n_cols):
            total = (acc[j] << sum_shift) + (np.int64(c[i, j]) << c_shift)
            out[i, j] = requantize(total, shift, nearest_even, saturate, lo, hi)


def _matmul_float(a, b, c, out):
    m_rows, k_depth = a.shape
    n_cols = b.shape[1]
    for i in prange(m_rows):
        acc = np.zeros(n_cols, np.float64)
        for k in range(k_depth):
            x = np.float64(a[i, k])
            row = b[k]
            for j in range(n_cols):
                acc[j] += x * np.float64(row[j])
        for j in range(n_cols):
            out[i, j] = np.float32(acc[j] + np.float64(c[i, j]))


_KERNELS = {(kind, parallel): kernel(function, parallel=parallel)
            for kind, function in (("int", _matmul_int), ("float", _matmul_float))
            for parallel in (False, True)}


def _max_abs(dtype: np.dtype) -> int:
    lo, hi = int_range(dtype)
    return max(-lo, hi)


def matrix_multiply(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, out: np.ndarray,
                    transpose_a: bool, transpose_b: bool, transpose_c: bool, saturate: bool = True,
                    nearest_even: bool = True, *, fpp_a: int = 0, fpp_b: int = 0, fpp_c: int = 0,
                    fpp_out: int = 0, parallel: bool | None = None, isa: str | None = None) -> None:
    """``out = T(a) @ T(b) + T(c)`` for 2-D tensors in OpenVX layout (see the module doc), in place.

    ``c`` may be None (no addend). Integers are exact up to one rounding
    (``nearest_even``, else toward zero) and one saturation (else wrap);
    float32 follows the module's summation order. ``parallel``: None chooses
    the thread pool for products of at least ``PARALLEL_WORK`` multiply-adds;
    while another thread's parallel kernel holds the pool, the serial kernel
    runs instead (``jit.thread_pool``). The result is the same either way. Integers run on the
    SIMD engine of ``isa`` (default ``isa.selected()``; ``"generic"``: the int64 loops here), with
    ``b`` packed on each call (it is not a static parameter).
    """
    found = _operands(a, b, c, out, transpose_a, transpose_b, transpose_c, fpp_a, fpp_b, fpp_c, detach)
    if found is None:
        return
    mat_a, mat_b, mat_c, mat_out, fpp_c = found
    # The inner loop runs along rows of mat_b; row-major copies keep it contiguous and independent of out.
    mat_a, mat_b = np.ascontiguousarray(mat_a), np.ascontiguousarray(mat_b)
    m_rows, k_depth = mat_a.shape
    n_cols = mat_b.shape[1]
    if parallel is None:
        parallel = m_rows > 1 and m_rows * k_depth * n_cols >= PARALLEL_WORK
    arrays = (jit.array_in(mat_a, "C"), jit.array_in(mat_b, "C"), jit.array_in(mat_c), jit.array_out(mat_out))
    if out.dtype.kind == "f":
        with jit.thread_pool() as pool:
            jit.entry(_KERNELS["float", bool(parallel and pool)], *arrays)(mat_a, mat_b, mat_c, mat_out)
        return
    shifts = _shifts(a.dtype, b.dtype, mat_c.dtype, out.dtype, k_depth, fpp_a, fpp_b, fpp_c, fpp_out,
                     saturate, nearest_even)
    if _simd(mat_a, mat_b, c, mat_c, mat_out, saturate, nearest_even, (fpp_a, fpp_b, fpp_c, fpp_out), isa):
        return
    with jit.thread_pool() as pool:
        function = jit.entry(_KERNELS["int", bool(parallel and pool)], *arrays,
                             jit.INT, jit.INT, jit.INT, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
        function(mat_a, mat_b, mat_c, mat_out, *shifts)


def _operands(a, b, c, out, transpose_a, transpose_b, transpose_c, fpp_a, fpp_b, fpp_c, detached) -> tuple | None:
    """(T(a), T(b), T(c) or zeros, out.T, c's fixed point position) as views, each input passed through
    ``detached(out, input)`` (``detach``: a copy where it overlaps ``out``); None when ``out`` is empty."""
    mat_a = a if transpose_a else a.T
    mat_b = b if transpose_b else b.T
    mat_out = out.T
    m_rows, k_depth = mat_a.shape
    n_cols = mat_b.shape[1]
    if mat_b.shape[0] != k_depth or mat_out.shape != (m_rows, n_cols):
        raise ValueError(f"matrix multiply of {mat_a.shape} by {mat_b.shape} cannot fill {mat_out.shape}")
    if out.size == 0:
        return None
    if c is None:
        mat_c = np.broadcast_to(np.zeros((), out.dtype), (m_rows, n_cols))
        fpp_c = fpp_a + fpp_b
    else:
        mat_c = detached(out, c if transpose_c else c.T)
    return detached(out, mat_a), detached(out, mat_b), mat_c, mat_out, fpp_c


def _shifts(a_dtype, b_dtype, c_dtype, out_dtype, k_depth, fpp_a, fpp_b, fpp_c, fpp_out, saturate,
            nearest_even) -> tuple:
    """The integer kernel's (sum_shift, c_shift, shift, nearest_even, saturate, lo, hi); ValueError beyond
    the exact int64 accumulator."""
    lo, hi = int_range(out_dtype)
    scale = max(fpp_a + fpp_b, fpp_c)
    sum_shift, c_shift = scale - fpp_a - fpp_b, scale - fpp_c
    bound = (k_depth * _max_abs(a_dtype) * _max_abs(b_dtype) << sum_shift) + (_max_abs(c_dtype) << c_shift)
    if bound >= 1 << 62:
        raise ValueError(f"matrix multiply with K={k_depth} and these formats can exceed the exact int64 "
                         f"accumulator (worst case {bound} >= 2**62)")
    return sum_shift, c_shift, scale - fpp_out, bool(nearest_even), bool(saturate), lo, hi


def _simd(mat_a, mat_b, c, mat_c, mat_out, saturate, nearest_even, fpps, isa) -> bool:
    """``mat_out = mat_a @ mat_b + mat_c`` on the SIMD engine: rows of ``a`` are the images of a 1x1
    correlation whose weights are ``b``; False when the engine does not apply (``generic``, or
    int16 operands whose products allow no exact int32 block)."""
    chosen = isa_module.for_layer(isa, mat_b.shape[1])
    if chosen == "generic" or mat_a.dtype != mat_b.dtype:
        return False
    m_rows, k_depth = mat_a.shape
    n_cols = mat_b.shape[1]
    fpp_a, fpp_b, fpp_c, fpp_out = fpps
    steps = plan(mat_a.dtype, k_depth, c is not None, Arithmetic(bool(saturate), bool(nearest_even), fpp_a, fpp_b,
                                                                   fpp_c, fpp_out))
    route = engine.prepare(mat_b.reshape(1, 1, k_depth, n_cols), Window(1, 1, 1, 1, 0, 0),
                           (1, 1, k_depth, m_rows), (1, 1, n_cols, m_rows), chosen)
    x6 = as6(mat_a.T[None, None])
    bias4 = mat_c.T[None, None]
    return engine.correlate(route, x6, bias4, as6(mat_out.T[None, None]), steps, saturate, nearest_even)


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
# The integer product runs on the int64 loops, not the SIMD engine: that packs ``b`` (not a static
# parameter) per call. Both are exact, so the bits are the same.
@native.factory
def _native_matmul(dtype: type, is_float: bool) -> int:
    serial = _KERNELS["float" if is_float else "int", False]
    if is_float:
        def entry(block):
            serial(native.array(block, 0, dtype)[0, 0, 0, 0], native.array(block, 13, dtype)[0, 0, 0, 0],
                   native.array(block, 26, dtype)[0, 0, 0, 0], native.array(block, 39, dtype)[0, 0, 0, 0])
            return 0
    else:
        def entry(block):
            serial(native.array(block, 0, dtype)[0, 0, 0, 0], native.array(block, 13, dtype)[0, 0, 0, 0],
                   native.array(block, 26, dtype)[0, 0, 0, 0], native.array(block, 39, dtype)[0, 0, 0, 0],
                   block[52], block[53], block[54], block[55] != 0, block[56] != 0, block[57], block[58])
            return 0
    return jit.native(entry)


def _unless_overlapping(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    if np.may_share_memory(out, x):
        raise ValueError("an input overlaps the output")
    return x


def native_entry(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, out: np.ndarray, transpose_a: bool,
                 transpose_b: bool, transpose_c: bool, saturate: bool = True, nearest_even: bool = True, *,
                 fpp_a: int = 0, fpp_b: int = 0, fpp_c: int = 0, fpp_out: int = 0) -> native.Entry | None:
    """:func:`matrix_multiply` (serial) as a native entry; None when empty. ValueError when an input overlaps
    ``out`` (the Python path copies it per run) or beyond the exact accumulator."""
    found = _operands(a, b, c, out, transpose_a, transpose_b, transpose_c, fpp_a, fpp_b, fpp_c, _unless_overlapping)
    if found is None:
        return None
    mat_a, mat_b, mat_c, mat_out, fpp_c = found
    is_float = out.dtype.kind == "f"
    shifts = () if is_float else _shifts(a.dtype, b.dtype, mat_c.dtype, out.dtype, mat_a.shape[1], fpp_a, fpp_b,
                                         fpp_c, fpp_out, saturate, nearest_even)
    lead = (None,) * 4
    return native.Entry(_native_matmul(out.dtype.type, is_float),
                        *native.pack(mat_a[lead], mat_b[lead], mat_c[lead], mat_out[lead], *shifts))
