"""How many 4-byte steps an int16 K-block may take before its int32 sums could overflow, from the weights.

The micro-kernels add products modulo ``2**32``; a block's sum for output channel ``k`` is exact while
``x_max * (sum over the block of |w[k]|) <= 2**31 - 1`` (every partial sum is bounded by the same). The
uniform bound ``(2**31 - 1) // (x_max * w_max * E)`` assumes every weight is the largest; the weights are
constant from verify on, so :func:`weight_sums` measures the real sums once, per channel and over the exact
blocks ``accumulate_blocks`` cuts (whole taps, or runs of steps within one tap), and :func:`run_steps` picks
the longest block length that is safe for the input's measured ``x_max``. The result keeps the meaning of
``block_steps`` that the engine's epilogue relies on (``simd._fits_int32``): with ``B`` steps per block and
``S`` steps in all, a single block's sums are within ``S * ((2**31 - 1) // B)``.
"""
from __future__ import annotations

import numpy as np

from ..support import jit

INT32_MAX = (1 << 31) - 1
X_WORST = 32768  # the largest |int16|: a block length safe for it is safe for every int16 input
_SHRINK = 0.93  # step-run lengths tried within one tap: from the tap's length down, geometrically


def weight_sums(weights: np.ndarray, n_taps: int, inner: int, w_max: int, channels: int) -> tuple[int, int]:
    """``(total, split)`` for packed int16 weights ``[block][..steps..][vector][lane][e]`` of ``channels`` output
    channels: ``total`` the largest per-channel sum of |w| over all steps; ``split`` the longest block length below
    one block of all steps whose blocks all stay within int32 for any int16 input (0: none longer than the uniform
    one). Only the real channels' lanes are summed (the padding lanes sum to 0, which no maximum needs): a layer of
    one output channel packed into 128 lanes had taken 128x the memory (8.4 million input channels: 21 GB)."""
    n_blocks, elements = weights.shape[0], weights.shape[-1]
    steps = n_taps * inner
    block = weights[0, ..., 0].size // steps
    # Exact in int32 while the whole sum is (steps * E * 32768 < 2**31); the prefix is as large as the weights.
    wide = np.int32 if steps * elements * X_WORST <= INT32_MAX else np.int64
    prefix = np.zeros((n_blocks, steps + 1, min(block, channels)), wide)
    for b in range(n_blocks):
        real = min(block, channels - b * block)
        magnitudes = np.abs(weights[b].reshape(steps, block, elements)[:, :real].astype(wide))
        per_step = magnitudes[..., 0]  # [step, lane]: the step's E elements added (slices: a reduction over
        for e in range(1, elements):  # an axis of 2 is numpy's slow case)
            per_step = per_step + magnitudes[..., e]
        np.cumsum(per_step, axis=0, out=prefix[b, 1:, :real], dtype=wide)
    total = int(prefix[:, -1].max(initial=0))
    limit = INT32_MAX // X_WORST
    uniform = INT32_MAX // (X_WORST * w_max * elements) if w_max else steps
    candidates = [t * inner for t in range(n_taps - 1, 0, -1)]
    g = inner - 1
    while g >= 1:
        candidates.append(g)
        g = min(g - 1, int(g * _SHRINK))
    tap_total = int((prefix[:, inner::inner] - prefix[:, :-inner:inner]).max(initial=0))  # the largest tap
    for length in candidates:
        if length <= uniform:  # run_steps takes the uniform bound anyway
            break
        # Fewer blocks than the largest sum (of all steps, or of one tap) needs cannot be safe: not measured.
        if length >= inner and -(-n_taps // (length // inner)) * limit < total:
            continue
        if length < inner and -(-inner // length) * limit < tap_total:
            continue
        if _largest_block(prefix, n_taps, inner, length) <= limit:
            return total, length
    return total, 0


def _largest_block(prefix: np.ndarray, n_taps: int, inner: int, length: int) -> int:
    """The largest per-channel block sum when blocks are ``length`` steps (``accumulate_blocks``' cut)."""
    if length >= inner:  # whole taps, length // inner at a time
        per = length // inner
        starts = np.arange(0, n_taps, per) * inner
        ends = np.minimum(starts + per * inner, n_taps * inner)
    else:  # runs of ``length`` steps within each tap
        within = np.arange(0, inner, length)
        starts = (np.arange(n_taps)[:, None] * inner + within).ravel()
        ends = (np.arange(n_taps)[:, None] * inner + np.minimum(within + length, inner)).ravel()
    return int((prefix[:, ends].astype(np.int64) - prefix[:, starts]).max(initial=0))


@jit.jitable
def run_steps(x_max: int, w_max: int, elements: int, total: int, split: int, steps: int) -> int:
    """Steps per K-block for an input whose largest |value| is ``x_max`` (0: no int32 block is safe). The
    longest of: one block of all ``steps`` where ``x_max * total`` fits; ``split`` (safe for any int16
    input); the uniform bound. Plain integer arithmetic: numba compiles it for the native driver."""
    worst = x_max * w_max * elements
    uniform = INT32_MAX // worst if worst else 1 << 40
    best = max(uniform, split)
    bound = x_max * total
    if bound <= INT32_MAX:
        if bound == 0:
            return max(best, 1 << 40)
        per_step = (bound + steps - 1) // steps  # an average step's bound, so that S * (MAX // B) >= bound
        single = INT32_MAX // per_step
        if single >= steps:
            best = max(best, single)
    return min(best, 1 << 40)
