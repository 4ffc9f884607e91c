"""Output tiles of the integer engine: which tile shape a layer uses, and a tile's exact sums over any K.

Both entries of the engine (``simd.py`` for OpenVX's layouts, ``nhwc.py`` for NNAPI's asymmetric uint8)
compute a tile of ``rows`` output pixels by ``block`` output channels with one micro-kernel call
(``microkernel.tile_kernel``) when the whole sum fits one K-block, and otherwise with
:func:`accumulate_blocks`: the taps and channel groups are cut into blocks of at most ``block_steps``
4-byte steps, whose int32 sums cannot overflow (the caller derives ``block_steps`` from the operands'
largest magnitudes), and the blocks are added in int64.

The micro-kernel's ``code`` must be a compile-time literal: the callers' entry points type it as
``types.literal(code)`` and numba passes that literal type on to :func:`accumulate_blocks`, so each
micro-kernel still gets its own specialisation.
"""
from __future__ import annotations

import numpy as np

from ..support.jit import kernel
from .microkernel import tile_kernel

# (rows, vectors) tiles the planner chooses from: 32 vector registers with AVX-512, 16 without. (12, 2) and
# (24, 1) cover 32 and 16 channels (and their multiples) with no padded lanes, as (6, 2) and (12, 1) do with 8
# lanes: a layer of 16 channels on (6, 4) computed four times its sums. Few: each one is compiled.
TILES = {16: ((6, 4), (4, 6), (1, 8), (12, 2), (24, 1)), 8: ((4, 3), (6, 2), (12, 1), (1, 6))}
# The AMX micro-kernel's tiles (amx_microkernel: one or two A tiles of 16 rows by one or two B tiles of 16 lanes).
AMX_TILES = ((32, 2), (16, 2), (32, 1), (16, 1))


def choose_tile(lanes: int, pixels: int, k_out: int, whole_blocks: bool = False,
                amx: bool = False) -> tuple[int, int]:
    """The (rows, vectors) tile of ``TILES[lanes]`` (of ``AMX_TILES`` when ``amx``) with the least padded work for
    ``pixels`` x ``k_out``; ``whole_blocks``: among the tiles whose channel block divides ``k_out`` where there are
    any (the NHWC entry then requantizes in the micro-kernel's registers, which saves more than a few padded lanes
    cost)."""
    vectors = -(-k_out // lanes)
    options = AMX_TILES if amx else TILES[lanes]
    candidates = [t for t in options if k_out % (t[1] * lanes) == 0] if whole_blocks else []

    def cost(tile):
        rows, vecs = tile
        padded = -(-pixels // rows) * rows * (-(-vectors // vecs) * vecs)
        return padded * (1 + 0.25 * (rows + vecs) / (rows * vecs))
    return min(candidates or options, key=cost)


@kernel
def accumulate_blocks(code, tile, acc, addr, taps_at, n_taps, inner, w0, tap_stride, taps_per_block,
                      inner_per_block):
    """``acc`` (int64, rows x block) = the tile's exact sums over ``n_taps`` taps of ``inner`` steps each.

    ``tile`` (int32, rows x block) receives each K-block's sums: ``taps_per_block`` taps, or
    ``inner_per_block`` steps of one tap, per micro-kernel call. ``addr`` holds the rows' byte addresses
    (moved along the steps during a call, restored after); ``taps_at`` and ``w0`` are the addresses of the
    taps' offsets and of the weights, ``tap_stride`` the weight bytes per tap.

    Several tiles at once where ``acc`` holds more than one tile (``addr`` then all their rows, tile after
    tile): each K-block runs for every tile in turn, so its slice of the weights is read from memory once for
    all of them (a wide fully connected layer's weights do not fit L2; ``simd._correlate_units``).
    """
    tiles = acc.shape[0] // tile.shape[0]
    rows = addr.shape[0] // tiles
    n_tile = tile.shape[0]
    block = n_tile // rows
    tile_at, addr_at = np.int64(tile.ctypes.data), np.int64(addr.ctypes.data)
    acc[:] = 0
    for t0 in range(0, n_taps, taps_per_block):
        nt = min(taps_per_block, n_taps - t0)
        for g0 in range(0, inner, inner_per_block):
            ng = min(inner_per_block, inner - g0)
            for r in range(addr.shape[0]):
                addr[r] += 4 * g0
            for k in range(tiles):
                tile_kernel(code, tile_at, addr_at + 8 * rows * k, taps_at + 8 * t0, nt, ng,
                            w0 + t0 * tap_stride + g0 * 4 * block, tap_stride)
                part = acc[k * n_tile: (k + 1) * n_tile]
                for i in range(n_tile):
                    part[i] += tile[i]
            for r in range(addr.shape[0]):
                addr[r] -= 4 * g0
