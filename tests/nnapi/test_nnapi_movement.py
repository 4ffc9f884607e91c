"""CONCATENATION, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESHAPE, RESIZE_BILINEAR and the lookups."""
import struct

import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    I32T,
    NO_VALUE,
    Q8,
    Out,
    Tensor,
    assert_close,
    collect_garbage,  # noqa: F401 - an autouse fixture
    i32,
    random_q8,
    run,
)

from openvx_nn import nnapi

OP = nnapi.OperationType


@pytest.mark.parametrize("kind", [F32T, Q8])
@pytest.mark.parametrize("axis", [0, 1, 3])
def test_concatenation_joins_along_the_axis(kind, axis):
    rng = np.random.default_rng(axis)
    shapes = []
    for extent in (1, 3, 2):
        s = [2, 3, 2, 4]
        s[axis] = extent
        shapes.append(tuple(s))
    xs = [rng.standard_normal(s).astype(np.float32) if kind == F32T else random_q8(rng, s) for s in shapes]
    q = {"scale": 0.5, "zero_point": 7} if kind == Q8 else {}
    want = np.concatenate(xs, axis=axis)
    (got,) = run(OP.CONCATENATION, [Tensor(x, **{k: v for k, v in q.items()}) for x in xs] + [i32(axis)],
                 [Out(kind, want.shape, q.get("scale", 0), q.get("zero_point", 0))])
    assert_close(got, want, kind)


def test_concatenation_rescales_inputs_quantized_differently():
    a = np.array([[0, 100, 255]], np.uint8)
    b = np.array([[10, 20]], np.uint8)
    (got,) = run(OP.CONCATENATION, [Tensor(a, 0.5, 100), Tensor(b, 0.25, 0), i32(1)], [Out(Q8, (1, 5), 0.5, 100)])
    real = np.concatenate([(a - 100.0) * 0.5, (b - 0.0) * 0.25], axis=1)
    np.testing.assert_array_equal(got, np.clip(np.round(real / 0.5) + 100, 0, 255))


def test_depth_to_space_and_space_to_depth_follow_the_block_layout():
    x = np.arange(2 * 2 * 3 * 8, dtype=np.float32).reshape(2, 2, 3, 8)
    bs = 2
    want = np.zeros((2, 4, 6, 2), np.float32)
    for b, h, w, c in np.ndindex(want.shape):
        i, j = h % bs, w % bs
        want[b, h, w, c] = x[b, h // bs, w // bs, (i * bs + j) * 2 + c]
    (got,) = run(OP.DEPTH_TO_SPACE, [Tensor(x), i32(bs)], [Out(F32T, want.shape)])
    assert_close(got, want, F32T)
    (back,) = run(OP.SPACE_TO_DEPTH, [Tensor(want), i32(bs)], [Out(F32T, x.shape)])
    assert_close(back, x, F32T)
    q = random_q8(np.random.default_rng(1), (1, 4, 2, 3))
    (s2d,) = run(OP.SPACE_TO_DEPTH, [Tensor(q, 0.1, 3), i32(2)], [Out(Q8, (1, 2, 1, 12), 0.1, 3)])
    for b, h, w, d in np.ndindex(s2d.shape):
        i, j, c = d // 6, (d // 3) % 2, d % 3
        assert s2d[b, h, w, d] == q[b, h * 2 + i, w * 2 + j, c]


@pytest.mark.parametrize("kind", [F32T, Q8])
def test_reshape_with_a_minus_one(kind):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32) if kind == F32T else random_q8(rng, (2, 3, 4))
    q = (0.5, 9) if kind == Q8 else (0.0, 0)
    (got,) = run(OP.RESHAPE, [Tensor(x, *q), Tensor(np.array([4, -1], np.int32), const=True)],
                 [Out(kind, (4, 6), *q)])
    np.testing.assert_array_equal(got, x.reshape(4, 6))


def test_depth_to_space_quant8_copies_raw_values():
    q = random_q8(np.random.default_rng(11), (1, 2, 2, 8))
    (got,) = run(OP.DEPTH_TO_SPACE, [Tensor(q, 0.1, 3), i32(2)], [Out(Q8, (1, 4, 4, 2), 0.1, 3)])
    for _, h, w, c in np.ndindex(got.shape):
        assert got[0, h, w, c] == q[0, h // 2, w // 2, ((h % 2) * 2 + w % 2) * 2 + c]


def test_resize_bilinear_without_corner_alignment():
    x = np.random.default_rng(3).standard_normal((1, 3, 4, 2)).astype(np.float32)
    ow, oh = 7, 5
    (got,) = run(OP.RESIZE_BILINEAR, [Tensor(x), i32(ow), i32(oh)], [Out(F32T, (1, oh, ow, 2))])
    want = np.zeros((1, oh, ow, 2))
    for _, y, xx, c in np.ndindex(want.shape):
        sy, sx = y * 3 / oh, xx * 4 / ow
        y0, x0 = int(sy), int(sx)
        y1, x1 = min(y0 + 1, 2), min(x0 + 1, 3)
        dy, dx = sy - y0, sx - x0
        want[0, y, xx, c] = ((1 - dy) * ((1 - dx) * x[0, y0, x0, c] + dx * x[0, y0, x1, c])
                             + dy * ((1 - dx) * x[0, y1, x0, c] + dx * x[0, y1, x1, c]))
    assert_close(got, want, F32T)


@pytest.mark.parametrize("kind", [F32T, I32T, Q8])
def test_embedding_lookup_copies_rows(kind):
    rng = np.random.default_rng(4)
    values = {F32T: rng.standard_normal((5, 2, 3)).astype(np.float32),
              I32T: rng.integers(-9, 9, (5, 2, 3)).astype(np.int32), Q8: random_q8(rng, (5, 2, 3))}[kind]
    lookups = np.array([4, 0, 4, 2], np.int32)
    q = (0.5, 3) if kind == Q8 else (0.0, 0)
    (got,) = run(OP.EMBEDDING_LOOKUP, [Tensor(lookups), Tensor(values, *q)], [Out(kind, (4, 2, 3), *q)])
    np.testing.assert_array_equal(got, values[lookups])


@pytest.mark.parametrize("kind", [F32T, Q8])
def test_hashtable_lookup_reports_hits(kind):
    keys = np.array([-3, 1, 7, 20], np.int32)
    rng = np.random.default_rng(5)
    values = rng.standard_normal((4, 2)).astype(np.float32) if kind == F32T else random_q8(rng, (4, 2))
    q = (0.5, 9) if kind == Q8 else (0.0, 0)
    lookups = np.array([7, 2, -3, 20, 21], np.int32)
    got, hits = run(OP.HASHTABLE_LOOKUP, [Tensor(lookups), Tensor(keys, const=True), Tensor(values, *q)],
                    [Out(kind, (5, 2), *q), Out(Q8, (5,), 1.0, 0)])
    want = np.zeros((5, 2), values.dtype)
    want_hits = np.zeros(5, np.uint8)
    for i, key in enumerate(lookups):
        for j, k in enumerate(keys):
            if k == key:
                want[i], want_hits[i] = values[j], 1
    np.testing.assert_array_equal(hits, want_hits)
    np.testing.assert_array_equal(got, want)


FARMHASH_VECTORS = {0: 0x9AE16A3B2F90404F, 1: 0x7574DEE779D18CA0, 3: 0x9025FCB7BF17EBAF, 4: 0xCA720CE7BEEBD6E9,
                    7: 0xC4BB14F3DE829C9A, 8: 0x0AF84A60C190D8D5, 12: 0x3961CBA1C6CDD908, 16: 0xDD773ECD34E9D9C8,
                    17: 0x2FCE138F7A061B9E, 24: 0x6A6EBAF2C330D85E, 32: 0x85B138EEFDAFEE80, 33: 0xAE7B19E1D6F78235,
                    48: 0xA36A74E430A6F6AF, 64: 0xC899EB3CE4DE684A, 65: 0x9DD691BDDF80E2C6, 100: 0x367382627898FB93,
                    128: 0x9D41D0198CC99D0A, 129: 0x14073AB2EDAA9497, 300: 0xE3DB0F44A675AA7E}
"""farmhash Fingerprint64 of random keys (random.Random(12345), lengths in order), from Google's implementation."""


def test_farmhash_fingerprint64_matches_googles_values():
    import random

    from openvx_nn.kernels.frontend.farmhash import fingerprint64
    rng = random.Random(12345)
    for n, want in FARMHASH_VECTORS.items():
        key = bytes(rng.randrange(256) for _ in range(n))
        assert fingerprint64(key) == want, n


def _signed_fingerprint(data: bytes) -> int:
    from openvx_nn.kernels.frontend.farmhash import fingerprint64  # checked against Google's values above
    h = fingerprint64(data)
    return h - 2**64 if h >= 2**63 else h


@pytest.mark.parametrize("sparse,weighted,rows", [(True, True, "int32"), (True, False, "float32"),
                                                  (False, True, "float32"), (False, False, "int32")])
def test_lsh_projection_sign_bits(sparse, weighted, rows):
    rng = np.random.default_rng(6)
    hashes = rng.standard_normal((3, 4)).astype(np.float32)
    x = (rng.integers(-50, 50, (5, 2)).astype(np.int32) if rows == "int32"
         else rng.standard_normal((5, 3, 4)).astype(np.float32))  # 52-byte keys
    w = rng.standard_normal(5).astype(np.float32)
    bits = np.zeros((3, 4), np.int64)
    for i in range(3):
        for j in range(4):
            seed = struct.pack("<f", hashes[i, j])
            score = sum((float(w[k]) if weighted else 1.0) * float(_signed_fingerprint(seed + x[k].tobytes())) for k in range(5))
            bits[i, j] = 1 if score > 0 else 0
    if sparse:
        want = np.array([int("".join(str(b) for b in row), 2) for row in bits], np.int32)
    else:
        want = bits.reshape(-1).astype(np.int32)
    weight = Tensor(w, const=True) if weighted else NO_VALUE
    (got,) = run(OP.LSH_PROJECTION, [Tensor(hashes, const=True), Tensor(x), weight, i32(1 if sparse else 2)],
                 [Out(I32T, want.shape)])
    np.testing.assert_array_equal(got, want)
