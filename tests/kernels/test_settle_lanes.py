"""The SIMD engine's int32-lane requantization (engine/settle_lanes.py) against the plain statement of the
contract's steps 4-5 (a rounded division of Python integers, then clamp or wrap), on every value class the
caller's bound allows: both policies, every shift 0..30, each output type, values at the bound."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.engine.settle_lanes import rounding, settle8
from openvx_nn.kernels.support.jit import kernel


def requantized(v: int, shift: int, nearest_even: bool, saturate: bool, lo: int, hi: int) -> int:
    """v / 2**shift rounded once (to nearest, ties to even; or toward zero), then clamped or wrapped."""
    q, r = divmod(v, 1 << shift)  # floor
    if nearest_even:
        if 2 * r > (1 << shift) or (2 * r == (1 << shift) and q % 2 == 1):
            q += 1
    elif q < 0 and r:
        q += 1
    if saturate:
        return min(max(q, lo), hi)
    span = hi - lo + 1
    return (q - lo) % span + lo


@kernel
def _run(out, sums, aligned, sum_shift, c, s1, m, shift, saturate, lo, hi):
    for i in range(0, sums.size, 8):
        settle8(out, i, sums, i, aligned, i % aligned.size, sum_shift, c, s1, m, shift, saturate, lo, hi)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("nearest_even", [True, False], ids=["nearest-even", "to-zero"])
def test_lanes_equal_the_rounded_division_of_exact_integers(dtype, saturate, nearest_even):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    for shift in range(31):
        c, s1, m = rounding(shift, nearest_even)
        for sum_shift in (0, 1, 3):
            limit = (1 << 31) - 1 - c - m  # the caller's bound: |(sum << sum_shift) + aligned| + c + m < 2**31
            aligned = rng.integers(-limit // 4, limit // 4, 16).astype(np.int32)
            room = (limit - int(np.abs(aligned.astype(np.int64)).max())) >> sum_shift
            picks = [rng.integers(-room, room + 1, 96), [0] * 16, [room] * 8, [-room] * 8]
            if sum_shift == 0:  # values on, and one either side of, every rounding boundary near zero
                step = max((1 << shift) // 2, 1)
                v = (np.arange(-16, 16)[:, None] * step + np.array([-1, 0, 1])).ravel()
                picks.append(v - aligned[np.arange(v.size) % 16])
            sums = np.clip(np.concatenate(picks), -room, room)
            sums = sums[: sums.size // 16 * 16].astype(np.int32)
            out = np.zeros(sums.size, dtype)
            _run(out, sums, aligned, sum_shift, c, s1, m, shift, saturate, int(info.min), int(info.max))
            expected = [requantized((int(s) << sum_shift) + int(aligned[i % 16]), shift, nearest_even, saturate,
                                    int(info.min), int(info.max)) for i, s in enumerate(sums)]
            assert out.tolist() == expected, (shift, sum_shift)
