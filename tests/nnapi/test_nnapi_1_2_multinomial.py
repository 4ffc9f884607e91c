"""RANDOM_MULTINOMIAL: draws of each row's softmax distribution from the stream docs/nnapi.md documents (the seeds
as one 64-bit seed of NumPy's PCG64, one uniform per draw in row-major order), in float32 and float16; the same
seeds give the same draws, the frequencies follow the probabilities, an impossible class is never drawn."""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import F16T, F32T, I32T, Out, Tensor, collect_garbage, i32, run  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType


def reference(logits, samples, seeds):
    """Draw s of row b: the first class whose running probability exceeds uniform b * samples + s."""
    seed = (int(seeds[0]) % 2**32) * 2**32 + int(seeds[1]) % 2**32
    words = np.random.PCG64(seed).random_raw(logits.shape[0] * samples)
    out = np.zeros((logits.shape[0], samples), np.int32)
    for b, row in enumerate(np.asarray(logits, np.float64)):
        p = np.exp(row - row.max())
        running = np.cumsum(p / p.sum())
        for s in range(samples):
            u = float(words[b * samples + s] >> np.uint64(11)) * 2.0**-53 * running[-1]
            out[b, s] = min(next((c for c, v in enumerate(running) if v > u), len(row) - 1), len(row) - 1)
    return out


def draw(logits, samples, seeds):
    got, = run(OP.RANDOM_MULTINOMIAL, [Tensor(logits), i32(samples), Tensor(np.asarray(seeds, np.int32))],
               [Out(I32T, (logits.shape[0], samples))])
    return got


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_draws_follow_the_documented_stream_and_repeat_with_the_seeds(dtype):
    rng = np.random.default_rng(74)
    for _ in range(3):
        batches, classes, samples = rng.integers(1, 4), rng.integers(1, 6), rng.integers(1, 20)
        logits = rng.uniform(-3, 3, (batches, classes)).astype(dtype)
        seeds = rng.integers(-2**31, 2**31, 2)
        got = draw(logits, samples, seeds)
        np.testing.assert_array_equal(got, reference(logits, samples, seeds))
        np.testing.assert_array_equal(draw(logits, samples, seeds), got)
    logits = np.zeros((1, 50), dtype)
    assert not np.array_equal(draw(logits, 40, [1, 2]), draw(logits, 40, [1, 3]))


def test_frequencies_follow_the_softmax_and_an_impossible_class_is_never_drawn():
    logits = np.array([[0.0, np.log(3.0), -np.inf, np.log(6.0)]], np.float32)
    got = draw(logits, 20000, [7, -7])
    counts = np.bincount(got.reshape(-1), minlength=4) / got.size
    assert counts[2] == 0
    np.testing.assert_allclose(counts, [0.1, 0.3, 0.0, 0.6], atol=0.015)
