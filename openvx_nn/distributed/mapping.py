"""``map_batches``: run a network over a dataset batch by batch, in this process or on Dask workers."""
from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .batches import Batch, batches, check_block
from .worker import BuildFunction, BuiltGraph, cached_graph


def _check_batch_size(input_shape: tuple[int, ...], batch_size: int) -> None:
    if input_shape[-1] != batch_size:
        raise ValueError(f"batch_size {batch_size} differs from the last dimension of the input tensor "
                         f"build made, {input_shape[-1]} (shape {tuple(input_shape)})")


def _check_data(data: Any, input_shape: tuple[int, ...], input_dtype: np.dtype, batch_size: int) -> None:
    """Fail before any work when the whole array cannot fit (its first batch names the problem)."""
    shape = tuple(data.shape)
    if any(math.isnan(n) for n in shape):  # a Dask array whose chunk sizes are unknown
        raise ValueError(f"data has unknown chunk sizes {shape}: call data.compute_chunk_sizes() first")
    if not shape:
        raise ValueError("data must have at least one axis (the batch axis, last)")
    if shape[-1]:
        check_block(shape[:-1] + (min(batch_size, shape[-1]),), data.dtype, batches(shape[-1], batch_size)[0],
                    input_shape, input_dtype)


@contextmanager
def local_graph(build: BuildFunction, batch_size: int) -> Iterator[BuiltGraph]:
    """A network built and verified in this process for the duration of a ``with`` block."""
    net = BuiltGraph.build(build)
    try:
        _check_batch_size(net.input_shape, batch_size)
        yield net
    finally:
        net.close()


def map_batches(build: BuildFunction, data: Any, batch_size: int, client: Any = None) -> Any:
    """The outputs of the network ``build(ctx) -> (graph, input, output)`` for every item of ``data``.

    ``data`` (NumPy or Dask array, OpenVX dim order) has the batch on its last axis, which is cut
    into batches of ``batch_size`` (the input tensor's last dim); a short last batch is padded with
    zeros and its outputs trimmed.  With ``client=None`` it runs here and returns a NumPy array; with
    a ``dask.distributed.Client`` each worker process builds and verifies the network once and
    reuses it, and the result is a lazy Dask array of the outputs in input order.  A batch of the
    wrong dtype or shape raises :class:`BatchError` naming it.
    """
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):  # lists and other array-likes
        data = np.asarray(data)
    if client is not None:
        return _map_on_dask(build, data, batch_size, client)
    with local_graph(build, batch_size) as net:
        _check_data(data, net.input_shape, net.input_dtype, batch_size)
        total = data.shape[-1]
        out = np.empty(net.output_shape[:-1] + (total,), net.output_dtype)
        for batch in batches(total, batch_size):
            out[..., batch.start:batch.stop] = net.run(np.asarray(data[..., batch.start:batch.stop]), batch)
    return out


def _describe(key: str, build: BuildFunction) -> tuple[tuple[int, ...], np.dtype, tuple[int, ...], np.dtype]:
    """On a worker: build (and cache) the network; its input and output shapes and dtypes."""
    net = cached_graph(key, build)
    return net.input_shape, net.input_dtype, net.output_shape, net.output_dtype


def _run_block(block: np.ndarray, key: str, build: BuildFunction, block_info: dict | None = None) -> np.ndarray:
    """On a worker: one batch through this process's cached network."""
    location = block_info[0]
    start, stop = location["array-location"][-1]
    batch = Batch(location["chunk-location"][-1], start, stop)
    return cached_graph(key, build).run(block, batch)


def _map_on_dask(build: BuildFunction, data: Any, batch_size: int, client: Any) -> Any:
    import dask
    import dask.array as da
    from dask.base import tokenize

    key = f"openvx-nn-{tokenize(build)}"
    # One worker builds the network now: we learn the output's shape, and that worker is warm.
    in_shape, in_dtype, out_shape, out_dtype = client.submit(_describe, key, build, pure=False).result()
    _check_batch_size(in_shape, batch_size)
    _check_data(data, in_shape, in_dtype, batch_size)
    if not isinstance(data, da.Array):
        data = da.from_array(np.asarray(data), chunks=data.shape[:-1] + (batch_size,))
    data = data.rechunk(data.shape[:-1] + (batch_size,))
    in_nd, out_nd = data.ndim, len(out_shape)
    return data.map_blocks(
        _run_block, key, dask.delayed(build, pure=True),
        drop_axis=list(range(in_nd - 1)), new_axis=list(range(out_nd - 1)),
        chunks=tuple((n,) for n in out_shape[:-1]) + (data.chunks[-1],),
        dtype=out_dtype, meta=np.empty((0,) * out_nd, out_dtype), name=f"openvx-nn-batches-{tokenize(key, data)}")
