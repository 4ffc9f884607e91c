"""U8 and S8 convolution and fully connected layers at the integer engine's own scale, through a verified graph's
native plan, bit for bit against the plain references.

The C API tests (``test_nn_convolution.py``) use a few channels and maps; here the shapes reach what the SIMD
engine does differently on real layers: several channel blocks of output maps, many strips of output pixels,
few input channels packed dense (an RGB input), strides up to 4, dilation, per-location biases, batches, and
layers large enough that the plan's helper threads share their units. Wrapped results keep the low bits of the
exact sums; saturated ones use sparse small values, so that sums land inside the range as well as beyond it.
"""
from __future__ import annotations

import numpy as np
import pytest
from conv_reference import reference_convolution
from kernel_testing import S8, U8, assert_bits_equal
from layer_references import fully_connected_ref
from native_testing import native_run

from openvx_nn.api import Context
from openvx_nn.operations.geometry import output_size

FORMATS = {np.dtype(np.uint8): U8, np.dtype(np.int8): S8}
POLICIES = [("saturate", "nearest_even"), ("wrap", "to_zero"), ("saturate", "to_zero"), ("wrap", "nearest_even")]

pytestmark = pytest.mark.usefixtures("one_simd_tile")  # one SIMD entry per format, whatever the shapes


def _values(rng, shape, dtype, sparse: bool) -> np.ndarray:
    """The whole range of ``dtype``, or (``sparse``) mostly zeros and small values."""
    info = np.iinfo(dtype)
    if not sparse:
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
    small = rng.integers(max(info.min, -2), 3, size=shape)
    return (small * (rng.random(shape) < 0.15)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["U8", "S8"])
@pytest.mark.parametrize("seed", range(2))
def test_convolution_at_engine_scale_matches_the_reference(dtype, seed):
    fmt = FORMATS[np.dtype(dtype)]
    rng = np.random.default_rng([4011, seed, int(np.dtype(dtype).kind == "i")])
    for case in range(4):
        overflow, rounding = POLICIES[case]
        sparse = overflow == "saturate"
        channels = 3 if case == 0 else int(rng.integers(4, 73))
        maps = int(rng.integers(1, 141))
        kx, ky = (int(k) for k in rng.integers(1, 6, 2))
        stride = (int(rng.integers(1, 5)),) * 2
        dil = (int(rng.integers(0, 2)),) * 2 if case == 3 else (0, 0)
        pad = tuple(int(rng.integers(0, k)) for k in (kx, ky))
        batch = (2,) if case == 2 else ()
        size = tuple(int(rng.integers(6, 20)) * stride[0] + (k - 1) * (d + 1) for k, d in zip((kx, ky), dil))
        shape = size + (channels,) + batch
        out_size = tuple(output_size(shape[a], pad[a], (kx, ky)[a] + ((kx, ky)[a] - 1) * dil[a], stride[a], False)
                         for a in (0, 1))
        out_shape = out_size + (maps,) + batch
        bias_shape = [(maps,), out_size + (maps,), None, (maps,)][case]
        with Context() as ctx, ctx.graph() as g:
            x_values = _values(rng, shape, dtype, sparse)
            w = _values(rng, (kx, ky, channels, maps), dtype, sparse)
            b = None if bias_shape is None else _values(rng, bias_shape, dtype, False)
            out = g.convolution(ctx.tensor(x_values), ctx.tensor(w), None if b is None else ctx.tensor(b),
                                out=ctx.tensor(shape=out_shape, dtype=dtype), padding=pad, dilation=dil,
                                overflow=overflow, rounding=rounding)
            got = native_run(g, out)
        expected = reference_convolution(x_values, w, b, out_shape, pad, stride, dil, fmt, (0, 0, 0, 0),
                                         overflow == "saturate", rounding == "nearest_even")
        assert_bits_equal(got, expected)
        if sparse:  # the case checks values inside the range, not only the two limits
            assert np.count_nonzero((expected > fmt.lo) & (expected < fmt.hi)) > expected.size // 10


@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["U8", "S8"])
def test_fully_connected_at_engine_scale_matches_the_reference(dtype):
    fmt = FORMATS[np.dtype(dtype)]
    rng = np.random.default_rng([4012, int(np.dtype(dtype).kind == "i")])
    for case in range(4):
        overflow, rounding = POLICIES[case]
        sparse = overflow == "saturate"
        n_in, n_out, batch = int(rng.integers(1, 700)), int(rng.integers(1, 170)), int(rng.integers(1, 4))
        x_values = _values(rng, (n_in, batch), dtype, sparse)
        w = _values(rng, (n_in, n_out), dtype, sparse)
        b = None if case == 1 else _values(rng, (n_out,), dtype, False)
        with Context() as ctx, ctx.graph() as g:
            out = g.fully_connected(ctx.tensor(x_values), ctx.tensor(w), None if b is None else ctx.tensor(b),
                                    out=ctx.tensor(shape=(n_out, batch), dtype=dtype), overflow=overflow,
                                    rounding=rounding)
            got = native_run(g, out)
        expected = fully_connected_ref(x_values, w, b, fmt, overflow == "saturate", rounding == "nearest_even")
        assert_bits_equal(got, expected)
