"""The batched products' operand handling: the right operand packed into the engine's blocks as a plain NumPy
packing from the layout's description gives (any strides: plain, transposed, broadcast), and a contiguous left
operand read in place with the bits of a copied one."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import batched_product
from openvx_nn.kernels.frontend.float_convolution import block_shape


def _packed_reference(right: np.ndarray) -> np.ndarray:
    """``[blocks, 1, K, vectors, lanes]``: block ``blk``'s row ``kk`` holds columns ``blk * size ...`` of row ``kk``
    in order, zeros past the last column."""
    k, n = right.shape
    vecs, lanes = block_shape(n)
    size = vecs * lanes
    blocks = -(-n // size)
    out = np.zeros((blocks, 1, k, vecs * lanes))
    for blk in range(blocks):
        for kk in range(k):
            for j in range(size):
                if blk * size + j < n:
                    out[blk, 0, kk, j] = right[kk, blk * size + j]
    return out.reshape(blocks, 1, k, vecs, lanes).astype(np.float32)


@pytest.mark.parametrize("layout", ["plain", "transposed", "strided", "broadcast"])
@pytest.mark.parametrize("seed", range(4))
def test_the_right_operand_packs_as_the_layout_describes(layout, seed):
    rng = np.random.default_rng(seed)
    k, n = (int(v) for v in rng.integers(1, 90, 2))
    if layout == "plain":
        right = rng.standard_normal((k, n)).astype(np.float32)
    elif layout == "transposed":
        right = rng.standard_normal((n, k)).astype(np.float32).T
    elif layout == "strided":
        right = rng.standard_normal((2 * k, 3 * n)).astype(np.float32)[::2, ::3]
    else:
        right = np.broadcast_to(rng.standard_normal((1, n)).astype(np.float32), (k, n))
    want = _packed_reference(right)
    got = np.zeros_like(want)
    size = want.shape[3] * want.shape[4]
    batched_product._pack(right, got, n, size)  # as plain Python
    assert got.tobytes() == want.tobytes()
    compiled = np.zeros_like(want)
    a = np.ones((1, 1, 1, 1, k), np.float32)
    out = np.zeros((1, 1, 1, 1, n), np.float32)
    operands = batched_product.Operands(a, right.reshape(1, 1, 1, k, n), None, out)
    batched_product._products(*operands.args(), 0, 1)
    compiled[...] = operands.packed[0]
    assert compiled.tobytes() == want.tobytes(), "the compiled packing differs from the layout"


@pytest.mark.parametrize("seed", range(3))
def test_a_contiguous_left_operand_is_read_in_place_with_the_bits_of_a_copied_one(seed):
    rng = np.random.default_rng(20 + seed)
    heads, m, k, n = int(rng.integers(1, 5)), *(int(v) for v in rng.integers(1, 70, 3))
    a = rng.standard_normal((1, heads, m, k)).astype(np.float32)
    b = rng.standard_normal((1, heads, k, n)).astype(np.float32)
    in_place = batched_product.Operands(a, b, None, np.zeros((1, heads, m, n), np.float32))
    assert np.shares_memory(in_place.rows, a)
    frozen = a.copy()
    frozen.flags.writeable = False  # never read in place: copied into a scratch on each call
    copied = batched_product.Operands(frozen, b, None, np.zeros((1, heads, m, n), np.float32))
    assert not np.shares_memory(copied.rows, frozen)
    for operands in (in_place, copied):
        batched_product._products(*operands.args(), 0, operands.items)
    assert in_place.out.tobytes() == copied.out.tobytes()
    assert np.array_equal(a, frozen), "reading in place wrote into the operand"
    want = np.einsum("...ik,...kj->...ij", a.astype(np.float64), b.astype(np.float64))
    size = np.einsum("...ik,...kj->...ij", np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    assert np.all(np.abs(in_place.out.reshape(want.shape) - want) <= 2 * k * 2.0 ** -23 * size + 1e-30)


def test_an_operand_sharing_the_output_s_bytes_is_copied():
    buffer = np.zeros(96, np.float32)
    a, out = buffer[:64].reshape(8, 8), buffer[32:].reshape(8, 8)
    operands = batched_product.Operands(a, np.ones((8, 8), np.float32), None, out)
    assert not np.shares_memory(operands.rows, buffer)
