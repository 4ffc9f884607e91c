"""Table lookup and transpose against plain index-by-index references."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from kernel_testing import (
    FORMATS,
    LAYOUTS,
    Q78,
    S8,
    U8,
    assert_bits_equal,
    blank,
    placed,
    random_shape,
    random_values,
)

from openvx_nn.kernels import copy, table_lookup, transpose


def reference_lookup(x: np.ndarray, lut: np.ndarray, offset: int) -> np.ndarray:
    result = np.empty(x.shape, lut.dtype)
    for index in np.ndindex(x.shape):
        i = int(x[index]) + offset
        result[index] = lut[i] if 0 <= i < len(lut) else 0
    return result


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", [U8, Q78, S8], ids=str)
def test_table_lookup_indexes_the_lut_by_value_plus_offset(fmt, seed):
    rng = np.random.default_rng([10, seed, [U8, Q78, S8].index(fmt)])
    lut_dtype = np.uint8 if fmt is U8 else np.int16
    count = 256 if fmt is U8 else 65536
    lut = random_values(rng, U8 if fmt is U8 else Q78, (count,))
    x = placed(rng, random_values(rng, fmt, random_shape(rng)))
    out = blank(rng, x.shape, lut_dtype, LAYOUTS[seed % len(LAYOUTS)])
    offset = 0 if fmt is U8 else count // 2
    table_lookup(x, lut, offset, out)
    assert_bits_equal(out, reference_lookup(x, lut, offset))


def test_int16_lookup_maps_the_extremes_to_the_lut_ends():
    lut = np.arange(65536, dtype=np.int64).astype(np.int16)[::-1].copy()
    x = np.array([-32768, -1, 0, 32767], np.int16)
    out = np.zeros(4, np.int16)
    table_lookup(x, lut, 32768, out)
    assert out.tolist() == [lut[0], lut[32767], lut[32768], lut[65535]]


@pytest.mark.parametrize("count", [1, 10, 257, 4096])
def test_short_int16_lut_gives_zero_outside_its_range(count):
    rng = np.random.default_rng(count)
    lut = rng.integers(1, 1000, count).astype(np.int16)  # no zero entries: a 0 out must be "outside"
    x = np.arange(-32768, 32768, 7, dtype=np.int64).astype(np.int16)
    out = np.full(x.shape, 99, np.int16)
    table_lookup(x, lut, count // 2, out)
    assert_bits_equal(out, reference_lookup(x, lut, count // 2))
    inside = (x.astype(np.int64) + count // 2 >= 0) & (x.astype(np.int64) + count // 2 < count)
    assert (out[~inside] == 0).all() and (out[inside] != 0).all()


def test_lookup_covers_every_u8_value():
    lut = np.arange(256, dtype=np.uint8)[::-1].copy()
    x = np.arange(256, dtype=np.uint8).reshape(16, 16)
    out = np.zeros((16, 16), np.uint8)
    table_lookup(x, lut, 0, out)
    assert (out.astype(int) == 255 - x.astype(int)).all()


def reference_transpose(x: np.ndarray, dim1: int, dim2: int) -> np.ndarray:
    shape = list(x.shape)
    shape[dim1], shape[dim2] = shape[dim2], shape[dim1]
    result = np.empty(shape, x.dtype)
    for index in itertools.product(*map(range, shape)):
        source = list(index)
        source[dim1], source[dim2] = source[dim2], source[dim1]
        result[index] = x[tuple(source)]
    return result


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_transpose_swaps_two_dims(fmt, seed):
    rng = np.random.default_rng([11, FORMATS.index(fmt), seed])
    x = placed(rng, random_values(rng, fmt, random_shape(rng)))
    dim1, dim2 = (int(d) for d in rng.integers(0, x.ndim, 2))
    expected = reference_transpose(x, dim1, dim2)
    out = blank(rng, expected.shape, fmt.dtype, LAYOUTS[seed % len(LAYOUTS)])
    transpose(x, out, dim1, dim2)
    assert_bits_equal(out, expected)


def test_transpose_of_six_dims_moves_every_element():
    x = np.arange(2 * 3 * 4 * 5 * 2 * 3, dtype=np.int16).reshape(2, 3, 4, 5, 2, 3, order="F")
    out = np.zeros((2, 3, 4, 3, 2, 5), np.int16, order="F")
    transpose(x, out, 3, 5)
    assert_bits_equal(out, reference_transpose(x, 3, 5))
    assert sorted(out.ravel().tolist()) == list(range(x.size))


def test_transpose_into_a_view_of_its_own_input_reads_the_input_first():
    square = np.arange(36, dtype=np.int8).reshape(6, 6)
    expected = square.T.copy()
    transpose(square, square, 0, 1)
    assert_bits_equal(square, expected)


def test_copy_broadcasts_and_refuses_a_type_change():
    out = np.zeros((3, 4), np.int16)
    copy(np.array([[1], [2], [3]], np.int16), out)
    assert out.tolist() == [[1] * 4, [2] * 4, [3] * 4]
    with pytest.raises(ValueError, match="data type"):
        copy(np.zeros((3, 4), np.int8), out)


@pytest.mark.parametrize("shape", [(3, 4), (64, 128)])  # NumPy-sized, and a run of the byte loop
def test_copy_refuses_a_read_only_target_and_leaves_it(shape):
    out = np.zeros(shape, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        copy(np.ones(shape, np.float32), out)
    assert not out.any()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_contiguous_copy_moves_every_byte_at_any_distance_between_the_arrays(dtype, order):
    # Large contiguous copies take the kernels' byte loop (native.copy_bytes), not memcpy: every length (tails
    # of 1..31 bytes), every distance between the arrays modulo 4096, and not a byte outside the target.
    rng = np.random.default_rng([7, np.dtype(dtype).itemsize, order == "C"])
    item = np.dtype(dtype).itemsize
    for rows, cols in ((64, 64 // item), (65, 67), (129, 257)):  # from 4096 bytes (transpose.RUN_BYTES)
        n = rows * cols * item
        source_bytes = rng.integers(0, 256, n + 8192, dtype=np.uint8)
        for shift in (0, 1, 3, 16, 31, 32, 4095):
            target_bytes = np.zeros(n + 8192, np.uint8)
            at = int(rng.integers(0, 4096))
            start = (at + shift) % 4096 + 64
            source = np.ndarray((rows, cols), dtype, source_bytes, at, order=order)
            target = np.ndarray((rows, cols), dtype, target_bytes, start, order=order)
            copy(source, target)
            assert target.tobytes(order="A") == source.tobytes(order="A"), (rows, cols, shift)
            assert not target_bytes[:start].any() and not target_bytes[start + n:].any(), (rows, cols, shift)
