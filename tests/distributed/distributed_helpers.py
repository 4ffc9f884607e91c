"""Small networks and inputs the distributed tests share (importable by Dask workers by value)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openvx_nn.api import quantize
from openvx_nn.demo.model import Q78, build, load_model

BATCH = 16
ITEMS = 100          # 6 full batches and a short one of 4


def relu_build(ctx, batch: int = BATCH):
    """A one-layer network left unverified: map_batches must verify it."""
    x = ctx.tensor(shape=(3, 2, batch), dtype=np.int16, fixed_point_position=8)
    y = ctx.tensor(shape=(3, 2, batch), dtype=np.int16, fixed_point_position=8)
    g = ctx.graph()
    g.relu(x, out=y)
    return g, x, y


def relu_data(items: int = ITEMS, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-2000, 2000, size=(3, 2, items)).astype(np.int16)


digits_build = partial(build, batch=BATCH)


def digits_raw(items: int = ITEMS) -> np.ndarray:
    """The first held-out digits as Q7.8 raw values, [8, 8, 1, items]."""
    return quantize(load_model().test_images[..., :items], np.int16, Q78.fpp)


class KillOnRead:
    """A batch that hard-kills the worker process reading it (inside the batch task, as the
    network takes its input), the first time only: ``marker`` is created atomically and holds
    the killed pid."""

    def __init__(self, block: np.ndarray, marker: str):
        self.block, self.marker = block, marker
        self.shape, self.ndim, self.dtype = block.shape, block.ndim, block.dtype

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        import os
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self.block
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(1)


def kill_worker_in_batch(block: np.ndarray, marker: str, index: int, block_info=None):
    """Batch ``index`` arrives as a :class:`KillOnRead`."""
    return KillOnRead(block, marker) if block_info[0]["chunk-location"][-1] == index else block


def spoil_block(block: np.ndarray, index: int, block_info=None) -> np.ndarray:
    """Batch ``index`` arrives as float32 although the array says int16."""
    return block.astype(np.float32) if block_info[0]["chunk-location"][-1] == index else block
