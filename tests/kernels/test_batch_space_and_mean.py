"""``nhwc_resampling.space_to_batch`` / ``batch_to_space`` and ``reduction.mean_of_integers`` against plain
loops over random shapes, block sizes, paddings and axes."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from openvx_nn.kernels.frontend import nhwc_resampling, reduction


def _space_to_batch(x, block, pads, pad_value):
    n, h, w, c = x.shape
    bh, bw = block
    top, bottom, left, right = pads
    oh, ow = (h + top + bottom) // bh, (w + left + right) // bw
    out = np.empty((n * bh * bw, oh, ow, c), x.dtype)
    for i, j, b, y, z, k in itertools.product(range(bh), range(bw), range(n), range(oh), range(ow), range(c)):
        sy, sz = y * bh + i - top, z * bw + j - left
        inside = 0 <= sy < h and 0 <= sz < w
        out[(i * bw + j) * n + b, y, z, k] = x[b, sy, sz, k] if inside else pad_value
    return out


@pytest.mark.parametrize("case", range(12))
def test_space_to_batch_and_back_match_the_loops(case):
    rng = np.random.default_rng(case)
    bh, bw = (int(v) for v in rng.integers(1, 4, 2))
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    top, left = (int(v) for v in rng.integers(0, 3, 2))
    h, w = bh * int(rng.integers(1, 4)) - top, bw * int(rng.integers(1, 4)) - left
    if h < 1 or w < 1:
        h, w, top, left = bh, bw, 0, 0
    bottom, right = (-(h + top)) % bh, (-(w + left)) % bw
    x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    want = _space_to_batch(x, (bh, bw), (top, bottom, left, right), 11)
    got = np.zeros_like(want)
    nhwc_resampling.space_to_batch(x, got, (bh, bw), (top, bottom, left, right), 11)
    np.testing.assert_array_equal(got, want)
    if top == bottom == left == right == 0:
        back = np.zeros_like(x)
        nhwc_resampling.batch_to_space(got, back, (bh, bw))
        np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("case", range(12))
def test_mean_of_integers_is_the_exact_mean_rounded_half_to_even(case):
    rng = np.random.default_rng(50 + case)
    rank = int(rng.integers(1, 5))
    x = rng.integers(0, 256, tuple(int(d) for d in rng.integers(1, 5, rank)), dtype=np.uint8)
    axes = sorted(int(a) for a in rng.choice(rank, int(rng.integers(1, rank + 1)), replace=False))
    keep = bool(rng.integers(0, 2))
    kept = [1 if i in axes else d for i, d in enumerate(x.shape)]
    want = np.empty(kept, np.uint8)
    for index in np.ndindex(*kept):
        picked = [x[src] for src in itertools.product(*[range(x.shape[i]) if i in axes else [index[i]]
                                                        for i in range(rank)])]
        want[index] = round(Fraction(sum(int(v) for v in picked), len(picked)))  # Python rounds half to even
    if not keep:
        want = want.reshape([d for i, d in enumerate(x.shape) if i not in axes] or [1])
    got = np.zeros_like(want)
    reduction.mean_of_integers(x, got, axes)
    np.testing.assert_array_equal(got, want)
