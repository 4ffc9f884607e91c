"""The phase scatter's output bytes against a NumPy loop placing each phase's channels at its strided pixels.

Phase ``j`` at ``(py, px)`` of an ``[N, nh, nw, P * K]`` input owns channels ``[j * K, (j + 1) * K)``; its pixel
``(y, x)`` lands at output pixel ``(py + y * uy, px + x * ux)``, in channel planes ``[N, K, OH, OW]`` or channels-last
``[N, OH, OW, K]``; nothing else of the output changes. Inputs carry NaNs with payloads, infinities, signed zeros
and subnormals, so a route that rounds or canonicalises shows up in the bytes.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_chw_layout import copy_route  # noqa: F401 - the fixture, by name

from openvx_nn.kernels.frontend import phase_scatter


def _reference(src, out, phases, strides, channels_last):
    expected = out.copy()
    n_items, nh, nw, _ = src.shape
    maps = out.shape[3] if channels_last else out.shape[1]
    for n in range(n_items):
        for j, (py, px) in enumerate(phases):
            for y in range(nh):
                for x in range(nw):
                    oy, ox = py + y * strides[0], px + x * strides[1]
                    for k in range(maps):
                        value = src[n, y, x, j * maps + k]
                        if channels_last:
                            expected[n, oy, ox, k] = value
                        else:
                            expected[n, k, oy, ox] = value
    return expected


def _values(rng, shape):
    bits = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
    special = np.array([0x7FC01234, 0xFFA00001, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001, 0x807FFFFF],
                       np.uint32)
    where = rng.random(shape) < 0.05
    bits[where] = rng.choice(special, int(where.sum()))
    return bits.view(np.float32)


def _case(rng, whole_grid):
    uy, ux = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if whole_grid:
        phases = [(py, px) for py in range(uy) for px in range(ux)]
    else:  # some phases, in any order
        grid = [(py, px) for py in range(uy) for px in range(ux)]
        pick = rng.permutation(len(grid))[:int(rng.integers(1, len(grid) + 1))]
        phases = [grid[i] for i in pick]
        if len(phases) == uy * ux and phases == sorted(phases):
            phases = phases[::-1]
    n, nh, nw = int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 13))
    maps = int(rng.choice([1, 3, 8, 9, 16, 21]))
    extra = int(rng.integers(0, 3)), int(rng.integers(0, 3))  # output larger than the phases reach
    size = (nh * uy + extra[0], nw * ux + extra[1])
    return np.array(phases, np.int64), (uy, ux), n, nh, nw, maps, size


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("whole_grid", [True, False])
def test_scatter_places_the_bytes_of_every_phase(channels_last, whole_grid):
    rng = np.random.default_rng(17 + 2 * whole_grid + channels_last)
    for _ in range(25):
        phases, strides, n, nh, nw, maps, (oh, ow) = _case(rng, whole_grid)
        src = _values(rng, (n, nh, nw, len(phases) * maps))
        shape = (n, oh, ow, maps) if channels_last else (n, maps, oh, ow)
        out = np.full(shape, -7.5, np.float32)
        expected = _reference(src, out, phases.tolist(), strides, channels_last)
        phase_scatter.bind(src, out, phases, strides, channels_last)()
        assert out.tobytes() == expected.tobytes(), (phases.tolist(), strides, src.shape, shape)


@pytest.mark.parametrize("whole_grid", [True, False])
def test_native_scatter_matches_the_reference_bytes(whole_grid):
    from openvx_nn.kernels.support import native
    rng = np.random.default_rng(5 + whole_grid)
    for _ in range(12):
        phases, strides, n, nh, nw, maps, (oh, ow) = _case(rng, whole_grid)
        src = _values(rng, (n, nh, nw, len(phases) * maps))
        out = np.full((n, maps, oh, ow), 3.25, np.float32)
        expected = _reference(src, out, phases.tolist(), strides, False)
        assert native.run(phase_scatter.native_scatter(src, out, phases, strides)) == 0
        assert out.tobytes() == expected.tobytes(), (phases.tolist(), strides, src.shape, out.shape)


def test_a_deconvolution_sized_scatter_matches_numpys_depth_to_space():
    # kernel 2 stride 2, 64 -> 32 at 56x56: phase (py, px)'s maps are output pixels (2y + py, 2x + px)
    rng = np.random.default_rng(2)
    src = _values(rng, (1, 56, 56, 4 * 32))
    out = np.empty((1, 32, 112, 112), np.float32)
    phase_scatter.bind(src, out, np.array([(0, 0), (0, 1), (1, 0), (1, 1)]), (2, 2))()
    expected = src.reshape(1, 56, 56, 2, 2, 32).transpose(0, 5, 1, 3, 2, 4).reshape(1, 32, 112, 112)
    assert out.tobytes() == expected.tobytes()


def test_phases_that_do_not_fit_are_refused():
    src = np.zeros((1, 2, 2, 8), np.float32)
    with pytest.raises(ValueError, match="do not fit"):
        phase_scatter.bind(src, np.zeros((1, 4, 3, 3), np.float32), np.array([(0, 0), (1, 1)]), (2, 2))


@pytest.mark.parametrize("whole_grid", [True, False])
@pytest.mark.usefixtures("copy_route")
def test_a_binary16_output_takes_each_placed_value_rounded_once_as_numpy(whole_grid):
    """A float16 deconvolution's placement narrows as it places (nearest even, NaN payloads as NumPy's ``astype``),
    on the Python path and natively, the whole grid's blocks with 8 or 16 lanes and the plain loop."""
    from test_chw_layout import _singles

    from openvx_nn.kernels.support import native
    rng = np.random.default_rng(1641 + whole_grid)
    for case in range(12):
        phases, strides, n, nh, nw, maps, (oh, ow) = _case(rng, whole_grid)
        src = _singles(rng, (n, nh, nw, len(phases) * maps))
        out = np.full((n, maps, oh, ow), 3.25, np.float16)
        with np.errstate(all="ignore"):
            expected = _reference(src, out.astype(np.float32), phases.tolist(), strides, False).astype(np.float16)
        if case % 2:
            assert native.run(phase_scatter.native_scatter(src, out, phases, strides)) == 0
        else:
            phase_scatter.bind(src, out, phases, strides)()
        assert out.view(np.uint16).tobytes() == expected.view(np.uint16).tobytes(), (phases.tolist(), strides)


def test_a_binary16_output_is_planar_only():
    with pytest.raises(ValueError, match="planar float16"):
        phase_scatter.bind(np.zeros((1, 2, 2, 8), np.float32), np.zeros((1, 4, 4, 2), np.float16),
                           np.array([(0, 0), (0, 1), (1, 0), (1, 1)]), (2, 2), channels_last=True)
