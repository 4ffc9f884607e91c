"""How a dataset is cut into batches along its last axis, and the error that names a bad one."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import Error


@dataclass(frozen=True)
class Batch:
    """One slice ``[start, stop)`` of the batch axis; ``index`` counts batches from 0."""

    index: int
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start

    def __str__(self) -> str:
        return f"batch {self.index} (items {self.start}:{self.stop})"


def batches(total: int, batch_size: int) -> list[Batch]:
    """The batches covering ``total`` items; the last one may be short."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return [Batch(i, start, min(start + batch_size, total))
            for i, start in enumerate(range(0, total, batch_size))]


class BatchError(Error, ValueError):
    """A batch whose data the network cannot take (wrong dtype or shape); the message names the batch."""

    def __init__(self, batch: Batch, problem: str):
        super().__init__(f"{batch}: {problem}")
        self.batch = batch
        self.problem = problem

    def __reduce__(self):  # crosses process boundaries (Dask ships a worker's exception to the client)
        return type(self), (self.batch, self.problem)


def check_block(block_shape: tuple[int, ...], block_dtype: np.dtype, batch: Batch,
                input_shape: tuple[int, ...], input_dtype: np.dtype) -> None:
    """Raise :class:`BatchError` unless the block fits the input tensor exactly (no silent casts)."""
    expected = tuple(input_shape[:-1]) + (batch.size,)
    if tuple(block_shape) != expected:
        raise BatchError(batch, f"shape {tuple(block_shape)} differs from the expected {expected} "
                                f"(the input tensor is {tuple(input_shape)}, batch axis last)")
    if np.dtype(block_dtype) != np.dtype(input_dtype):
        raise BatchError(batch, f"dtype {np.dtype(block_dtype)} differs from the input tensor's "
                                f"{np.dtype(input_dtype)}")
