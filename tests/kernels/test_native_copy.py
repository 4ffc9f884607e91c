"""The copy kernel under reshapes, permutes and concatenations (``kernels.openvx.transpose``): bound and as a native
entry, serial and shared with the gang's helpers, it writes exactly NumPy's assignment of the same views and
nothing around them, over randomized shapes, strides, offsets and data types."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from openvx_nn.kernels.engine import gang, isa, workers
from openvx_nn.kernels.openvx import transpose
from openvx_nn.kernels.support import native

DTYPES = (np.float32, np.int8, np.uint8, np.int16, np.int32)


def _run_shared(entry) -> None:
    """One call of ``entry`` from C with the helpers spinning, as a graph's native run calls it."""
    run = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(entry.address)
    gang.summon(workers.helpers())
    with gang.held():
        assert run(entry.block.ctypes.data) == 0


def _values(rng, shape, dtype):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("seed", range(12))
def test_a_concatenation_slice_of_channels_last_gets_numpy_assignments_values(seed):
    """The input copied into channels ``[offset, offset + c)`` of an NHWC tensor: every pixel a run of ``c``
    values a row of the output apart; the channels around the slice keep their values."""
    rng = np.random.default_rng(seed)
    dtype = DTYPES[seed % len(DTYPES)]
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 40)), int(rng.integers(1, 40))
    c, before, after = int(rng.integers(1, 70)), int(rng.integers(0, 40)), int(rng.integers(0, 40))
    x = _values(rng, (n, h, w, c), dtype)
    out = _values(rng, (n, h, w, before + c + after), dtype)
    want = out.copy()
    for b in range(n):  # plainly: pixel by pixel, channel by channel
        for i in range(h):
            for j in range(w):
                for k in range(c):
                    want[b, i, j, before + k] = x[b, i, j, k]
    entry = transpose.native_entry(x, out[..., before:before + c], 0, 0)
    assert entry is not None
    if seed % 2:
        _run_shared(entry)
    else:
        assert native.run(entry) == 0
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("seed", range(8))
def test_transposed_reversed_and_strided_views_copy_elementwise(seed):
    """Views whose innermost axis is not contiguous on one side (a transpose, a reversal, a step) take the element
    loop, bound and native, serial and shared."""
    rng = np.random.default_rng(100 + seed)
    dtype = DTYPES[seed % len(DTYPES)]
    shape = tuple(int(s) for s in rng.integers(1, 24, 4))
    base = _values(rng, tuple(2 * s for s in shape), dtype)
    views = [base[::2, ::2, ::2, ::2], base[::-2, :shape[1], 1::2, :shape[3]],
             np.transpose(base[:shape[3], :shape[2], :shape[1], :shape[0]], (3, 2, 1, 0))]
    src = views[seed % 3][:shape[0], :shape[1], :shape[2], :shape[3]]
    out = np.zeros(src.shape, dtype)
    transpose.copy(src, out)
    np.testing.assert_array_equal(out, np.array(src))
    out2 = np.zeros((src.shape[1], src.shape[0], *src.shape[2:]), dtype)
    entry = transpose.native_entry(src, out2, 0, 1)
    if seed % 2:
        _run_shared(entry)
    else:
        assert native.run(entry) == 0
    np.testing.assert_array_equal(out2, np.swapaxes(np.array(src), 0, 1))


def test_large_copies_are_shared_with_the_helpers_and_small_ones_are_not():
    x = np.ones((1, 56, 56, 64), np.float32)
    out = np.zeros((1, 56, 56, 96), np.float32)
    assert x.nbytes >= transpose.SHARED_BYTES
    assert gang.lends(transpose.native_entry(x, out[..., :64], 0, 0)) == (isa.threads() > 1)
    assert not gang.lends(transpose.native_entry(x[:, :4, :4], out[:, :4, :4, :64], 0, 0))


def test_an_overlapping_copy_has_no_native_entry():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert transpose.native_entry(a[:, :3], a[:, 3:], 0, 0) is None


@pytest.mark.parametrize("seed", range(12))
def test_a_last_axis_pad_writes_the_input_and_its_margins_and_nothing_else(seed):
    """``native_margin_entry``: each line of the output (its last axis) is ``before`` fill values, the input's run,
    then fill to the end; lines outside the given view, and bytes around the output, keep their values. Random
    ranks, shapes, margins and data types; half the calls from C with the helpers spinning; some large enough to be
    shared with them."""
    rng = np.random.default_rng(300 + seed)
    dtype = (*DTYPES, np.float16)[seed % (len(DTYPES) + 1)]
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 9, rank)]
    if seed % 3 == 0:  # BlazeFace's sizes: shared with the gang
        shape = [1, 64, 64, 24][-rank:] if rank > 1 else [40000]
    shape[-1] = max(2, shape[-1])
    before, after = int(rng.integers(0, 6)), int(rng.integers(0, 6)) or 1
    x = _values(rng, tuple(shape), dtype)
    whole = _values(rng, (3, *shape[:-1], before + shape[-1] + after + 2), dtype)  # room around the view
    out = whole[1, ..., 1:-1]
    value = _values(rng, (1,), dtype)[0]
    want = whole.copy()
    lines = want[1, ..., 1:-1].reshape(-1, before + shape[-1] + after)
    for r, run in enumerate(x.reshape(-1, shape[-1])):  # plainly: line by line, value by value
        for k in range(lines.shape[1]):
            lines[r, k] = run[k - before] if before <= k < before + shape[-1] else value
    entry = transpose.native_margin_entry(x, out, before, value)
    assert entry is not None
    if seed % 2:
        _run_shared(entry)
    else:
        assert native.run(entry) == 0
    np.testing.assert_array_equal(whole.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("seed", range(12))
def test_a_pad_of_whole_contiguous_arrays_takes_the_typed_loop_and_writes_each_line(seed):
    """Where the input and the output are whole C-contiguous arrays (a pad of the last axis alone: BlazeFace's
    channel pads), the entry takes the typed loop over [rows, line]: each line is ``before`` fill values, the
    input's run, fill to the end, and no byte before or after the output changes. Random ranks, shapes, margins
    (0 included) and data types; half the calls from C with the helpers spinning; some shared with them."""
    rng = np.random.default_rng(500 + seed)
    dtype = (*DTYPES, np.float16)[seed % (len(DTYPES) + 1)]
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 9, rank)]
    if seed % 3 == 0:
        shape = [1, 64, 64, 24][-rank:] if rank > 1 else [40000]
    shape[-1] = max(2, shape[-1])
    before, after = [(0, 4), (3, 0), (int(rng.integers(0, 6)), int(rng.integers(0, 6)) or 1)][seed % 3]
    x = _values(rng, tuple(shape), dtype)
    width = before + shape[-1] + after
    size = int(np.prod(shape[:-1], dtype=np.int64)) * width
    guard = 5
    flat = _values(rng, (size + 2 * guard,), dtype)
    out = flat[guard:guard + size].reshape(*shape[:-1], width)
    assert out.flags.c_contiguous
    value = _values(rng, (1,), dtype)[0]
    want = flat.copy()
    lines = want[guard:guard + size].reshape(-1, width)
    for r, run in enumerate(x.reshape(-1, shape[-1])):  # plainly: line by line, value by value
        for k in range(width):
            lines[r, k] = run[k - before] if before <= k < before + shape[-1] else value
    entry = transpose.native_margin_entry(x, out, before, value)
    assert entry is not None and entry.block[transpose._DENSE] == 1
    if seed % 2:
        _run_shared(entry)
    else:
        assert native.run(entry) == 0
    np.testing.assert_array_equal(flat.view(np.uint8), want.view(np.uint8))


def test_a_margin_copy_refuses_what_it_cannot_write_as_runs():
    """No entry (the caller copies otherwise) for one value a line, an overlap, a strided last axis, a misfit."""
    x = np.zeros((4, 3), np.float32)
    out = np.zeros((4, 5), np.float32)
    assert transpose.native_margin_entry(np.zeros((4, 1), np.float32), out, 1, 0.0) is None
    assert transpose.native_margin_entry(out[:, :3], out, 1, 0.0) is None
    assert transpose.native_margin_entry(x, np.zeros((4, 10), np.float32)[:, ::2], 1, 0.0) is None
    assert transpose.native_margin_entry(x, out, 3, 0.0) is None
    assert transpose.native_margin_entry(x, np.zeros((5, 5), np.float32), 1, 0.0) is None
