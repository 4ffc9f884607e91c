"""NNAPI 1.2's data movement and selection (API level 29) against references written from the header's text
(``NeuralNetworks.h`` of Android 10) in plain loops: ARGMAX, ARGMIN, EXPAND_DIMS, GATHER, SLICE, SPLIT, TILE,
TOPK_V2, PAD_V2, CHANNEL_SHUFFLE and LOG_SOFTMAX, in every tensor type the header lists, over random shapes and
every axis (negative ones too)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import F32T, I32T, Q8, Out, Tensor, collect_garbage, f32, i32, refused, run  # noqa: F401 - autouse

from openvx_nn import nnapi

OP = nnapi.OperationType
KINDS = {"f": (F32T, np.float32), "n": (I32T, np.int32), "q": (Q8, np.uint8)}
QUANT = (0.25, 3)


def random_shape(rng, rank: int, low: int = 1, high: int = 5) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(low, high, size=rank))


def random_data(rng, shape, letter: str) -> np.ndarray:
    if letter == "f":
        return rng.standard_normal(shape).astype(np.float32)
    if letter == "n":
        return rng.integers(-50, 50, size=shape).astype(np.int32)
    return rng.integers(0, 256, size=shape).astype(np.uint8)


def tensor(x: np.ndarray, letter: str, const: bool = False) -> Tensor:
    return Tensor(x, *(QUANT if letter == "q" else (0.0, 0)), const=const)


def out(letter: str, shape) -> Out:
    return Out(KINDS[letter][0], tuple(shape), *(QUANT if letter == "q" else (0.0, 0)))


def ints(values) -> Tensor:
    return Tensor(np.asarray(values, np.int32), const=True)


def lines(x: np.ndarray, axis: int):
    """(index of the line, the line's values) for every line of ``x`` along ``axis``."""
    moved = np.moveaxis(x, axis, -1)
    for index in np.ndindex(*moved.shape[:-1]):
        yield index, [moved[index + (k,)] for k in range(moved.shape[-1])]


# -- ARGMAX, ARGMIN ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fnq")
@pytest.mark.parametrize("op", [OP.ARGMAX, OP.ARGMIN], ids=lambda op: OP(op).name)
def test_argmax_and_argmin_along_every_axis_negative_ones_too_give_the_first_extreme(op, letter):
    rng = np.random.default_rng(int(op) + ord(letter))
    for rank in (1, 2, 3, 4):
        shape = random_shape(rng, rank, 1, 5)
        x = random_data(rng, shape, letter)
        if letter != "f":
            x = (x % 4).astype(x.dtype)  # ties
        for axis in range(-rank, rank):
            a = axis % rank
            want_shape = tuple(d for i, d in enumerate(shape) if i != a) or (1,)
            got = run(op, [tensor(x, letter), i32(axis)], [Out(I32T, want_shape)])[0]
            want = np.zeros(want_shape, np.int32)
            for index, line in lines(x, a):
                best = max(line) if op == OP.ARGMAX else min(line)
                want[index if index else (0,)] = line.index(best)  # ties: the first
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} axis {axis}")


# -- EXPAND_DIMS ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fnq")
def test_expand_dims_inserts_a_1_at_every_position_negative_ones_counted_from_the_end(letter):
    rng = np.random.default_rng(ord(letter))
    x = random_data(rng, (2, 3, 4), letter)
    for axis in range(-4, 4):
        position = axis if axis >= 0 else axis + 4
        shape = [2, 3, 4]
        shape.insert(position, 1)
        got = run(OP.EXPAND_DIMS, [tensor(x, letter), i32(axis)], [out(letter, shape)])[0]
        assert got.shape == tuple(shape)
        np.testing.assert_array_equal(got.reshape(-1), x.reshape(-1))


# -- GATHER --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fnq")
def test_gather_along_every_axis_by_vectors_and_higher_rank_indices(letter):
    rng = np.random.default_rng(ord(letter) + 1)
    for rank in (1, 2, 3):
        shape = random_shape(rng, rank, 2, 5)
        x = random_data(rng, shape, letter)
        for axis in range(-rank, rank):
            a = axis % rank
            for index_shape in ((3,), (2, 2)):
                indices = rng.integers(0, shape[a], size=index_shape).astype(np.int32)
                want_shape = shape[:a] + index_shape + shape[a + 1:]
                got = run(OP.GATHER, [tensor(x, letter), i32(axis), Tensor(indices)], [out(letter, want_shape)])[0]
                want = np.zeros(want_shape, x.dtype)
                for where in np.ndindex(*want_shape):  # output[a.., i.., b..] = input[a.., indices[i..], b..]
                    i = where[a:a + len(index_shape)]
                    source = where[:a] + (indices[i],) + where[a + len(index_shape):]
                    want[where] = x[source]
                np.testing.assert_array_equal(got, want)


def test_gather_with_an_index_out_of_bounds_fails_the_execution_naming_it():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for bad in (3, -1):
        with pytest.raises(nnapi.NNAPIError, match=rf"index {bad} is outside 0..2"):
            run(OP.GATHER, [Tensor(x), i32(1), Tensor(np.array([0, bad], np.int32))], [Out(F32T, (2, 2))])


# -- SLICE, SPLIT --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fnq")
def test_slice_with_sizes_and_minus_one(letter):
    rng = np.random.default_rng(ord(letter) + 2)
    for rank in (1, 2, 4, 5):
        shape = random_shape(rng, rank, 1, 5)
        x = random_data(rng, shape, letter)
        begin = [int(rng.integers(0, d)) for d in shape]
        size = [-1 if rng.random() < 0.3 else int(rng.integers(1, d - b + 1)) for b, d in zip(begin, shape)]
        extent = [d - b if s == -1 else s for b, s, d in zip(begin, size, shape)]
        got = run(OP.SLICE, [tensor(x, letter), ints(begin), ints(size)], [out(letter, extent)])[0]
        want = np.zeros(extent, x.dtype)
        for where in np.ndindex(*extent):
            want[where] = x[tuple(b + w for b, w in zip(begin, where))]
        np.testing.assert_array_equal(got, want, err_msg=f"{shape} {begin} {size}")


def test_slice_refuses_a_slice_beyond_the_input():
    x = np.zeros((3, 4), np.float32)
    message = refused(OP.SLICE, [Tensor(x), ints([0, 2]), ints([1, 3])], [Out(F32T, (1, 3))])
    assert "axis 1: begin 2 and size 3 leave" in message


@pytest.mark.parametrize("letter", "fnq")
def test_split_into_equal_parts_along_every_axis(letter):
    rng = np.random.default_rng(ord(letter) + 3)
    x = random_data(rng, (4, 6, 2), letter)
    for axis in range(-3, 3):
        a = axis % 3
        for parts in (p for p in (1, 2, 3) if x.shape[a] % p == 0):
            step = x.shape[a] // parts
            shape = list(x.shape)
            shape[a] = step
            got = run(OP.SPLIT, [tensor(x, letter), i32(axis), i32(parts)], [out(letter, shape)] * parts)
            for j, part in enumerate(got):
                index = [slice(None)] * 3
                index[a] = slice(j * step, (j + 1) * step)
                np.testing.assert_array_equal(part, x[tuple(index)])


def test_split_refuses_parts_that_do_not_divide_the_axis_and_a_count_unlike_the_outputs():
    x = np.zeros((4, 6), np.float32)
    message = refused(OP.SPLIT, [Tensor(x), i32(1), i32(4)], [Out(F32T, (4, 1))] * 4)
    assert "4 splits do not divide axis 1 of 6" in message
    message = refused(OP.SPLIT, [Tensor(x), i32(1), i32(3)], [Out(F32T, (4, 2))] * 2)
    assert "number of splits) is 3, but the operation has 2 outputs" in message


# -- TILE ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fnq")
def test_tile_repeats_along_every_axis(letter):
    rng = np.random.default_rng(ord(letter) + 4)
    for rank in (1, 2, 3, 4):
        shape = random_shape(rng, rank, 1, 4)
        x = random_data(rng, shape, letter)
        multiples = [int(m) for m in rng.integers(1, 4, size=rank)]
        want_shape = [d * m for d, m in zip(shape, multiples)]
        got = run(OP.TILE, [tensor(x, letter), ints(multiples)], [out(letter, want_shape)])[0]
        want = np.zeros(want_shape, x.dtype)
        for where in np.ndindex(*want_shape):
            want[where] = x[tuple(w % d for w, d in zip(where, shape))]
        np.testing.assert_array_equal(got, want)


# -- TOPK_V2 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fnq")
def test_topk_gives_the_k_largest_descending_and_of_equal_values_the_larger_index_first(letter):
    rng = np.random.default_rng(ord(letter) + 5)
    for rank in (1, 2, 3):
        shape = random_shape(rng, rank, 2, 7)
        x = random_data(rng, shape, letter)
        if letter != "f":
            x = (x % 3).astype(x.dtype)  # many ties
        for k in (1, shape[-1] // 2 or 1, shape[-1]):
            want_shape = shape[:-1] + (k,)
            values, indices = run(OP.TOPK_V2, [tensor(x, letter), i32(k)], [out(letter, want_shape),
                                                                               Out(I32T, want_shape)])
            for index, line in lines(x, -1):
                order = sorted(range(len(line)), key=lambda j: (line[j], j), reverse=True)[:k]
                np.testing.assert_array_equal(indices[index], order)
                np.testing.assert_array_equal(values[index], [line[j] for j in order])


# -- PAD_V2 --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fq")
def test_pad_v2_pads_with_the_given_value(letter):
    rng = np.random.default_rng(ord(letter) + 6)
    for rank in (1, 2, 3, 4):
        shape = random_shape(rng, rank, 1, 4)
        x = random_data(rng, shape, letter)
        pads = rng.integers(0, 3, size=(rank, 2))
        want_shape = [int(p[0] + d + p[1]) for p, d in zip(pads, shape)]
        value = -2.5 if letter == "f" else 200
        param = f32(value) if letter == "f" else i32(value)
        got = run(OP.PAD_V2, [tensor(x, letter), ints(pads), param], [out(letter, want_shape)])[0]
        want = np.full(want_shape, value, x.dtype)
        for where in np.ndindex(*shape):
            want[tuple(w + int(p[0]) for w, p in zip(where, pads))] = x[where]
        np.testing.assert_array_equal(got, want)


def test_pad_v2_refuses_a_quantized_pad_value_outside_0_to_255():
    x = np.zeros((2, 2), np.uint8)
    message = refused(OP.PAD_V2, [Tensor(x, 0.5, 0), ints([[1, 1], [0, 0]]), i32(256)], [Out(Q8, (4, 2), 0.5, 0)])
    assert "pad value) is 256" in message


# -- CHANNEL_SHUFFLE -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("letter", "fq")
def test_channel_shuffle_by_the_headers_formula_along_every_axis(letter):
    rng = np.random.default_rng(ord(letter) + 7)
    x = random_data(rng, (2, 6, 4, 12), letter)
    for axis in range(-4, 4):
        a = axis % 4
        n = x.shape[a]
        for groups in (g for g in (1, 2, 3, 4, 6) if n % g == 0):
            got = run(OP.CHANNEL_SHUFFLE, [tensor(x, letter), i32(groups), i32(axis)], [out(letter, x.shape)])[0]
            size = n // groups
            want = np.zeros_like(x)
            for k in range(size):  # output_channel[k * num_groups + g] = input_channel[g * group_size + k]
                for g in range(groups):
                    target, source = [slice(None)] * 4, [slice(None)] * 4
                    target[a], source[a] = k * groups + g, g * size + k
                    want[tuple(target)] = x[tuple(source)]
            np.testing.assert_array_equal(got, want, err_msg=f"axis {axis} groups {groups}")


# -- LOG_SOFTMAX ---------------------------------------------------------------------------------------------------
def test_log_softmax_along_every_axis_with_beta():
    rng = np.random.default_rng(8)
    for rank in (1, 2, 4):
        shape = random_shape(rng, rank, 1, 5)
        x = (rng.standard_normal(shape) * 4).astype(np.float32)
        for axis in range(-rank, rank):
            for beta in (1.0, 0.5, 3.0):
                got = run(OP.LOG_SOFTMAX, [Tensor(x), f32(beta), i32(axis)], [Out(F32T, shape)])[0]
                want = np.zeros(shape)
                for index, line in lines(x, axis % rank):
                    # "output = logits * beta - log(reduce_sum(exp(logits * beta), axis))"
                    total = math.log(sum(math.exp(float(v) * beta) for v in line))
                    moved = np.moveaxis(want, axis % rank, -1)
                    moved[index] = [float(v) * beta - total for v in line]
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_operations_refuse_an_axis_out_of_range():
    x = np.zeros((2, 3), np.float32)
    assert "axis 2 is outside [-2, 2)" in refused(OP.ARGMAX, [Tensor(x), i32(2)], [Out(I32T, (2,))])
    assert "axis -4 is outside [-3, 3)" in refused(OP.EXPAND_DIMS, [Tensor(x), i32(-4)], [Out(F32T, (1, 2, 3))])
    assert "axis -3 is outside [-2, 2)" in refused(OP.LOG_SOFTMAX, [Tensor(x), f32(1.0), i32(-3)],
                                                   [Out(F32T, (2, 3))])


def test_data_movement_refuses_an_output_quantized_unlike_its_input():
    x = np.zeros((2, 4), np.uint8)
    assert "quantization" in refused(OP.TILE, [Tensor(x, 0.5, 1), ints([1, 2])], [Out(Q8, (2, 8), 0.25, 1)])
    message = refused(OP.SPLIT, [Tensor(x, 0.5, 1), i32(1), i32(2)], [Out(Q8, (2, 2), 0.5, 1), Out(Q8, (2, 2), 0.5, 2)])
    assert "output 1's quantization" in message
