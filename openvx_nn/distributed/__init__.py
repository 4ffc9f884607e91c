"""Batch inference over many processes and machines: a dataset cut into batches along its last
axis, each batch run by a network built once per process.  Dask (``pip install .[dask]``) is only
imported when a ``dask.distributed.Client`` is given, so this package works without it.

>>> from functools import partial
>>> from openvx_nn.demo.model import build
>>> probabilities = map_batches(partial(build, batch=64), images, batch_size=64)  # doctest: +SKIP
"""
from .batches import Batch, BatchError, batches
from .mapping import local_graph, map_batches
from .worker import BuildFunction, BuiltGraph, cache_stats, cached_graph

__all__ = ["Batch", "BatchError", "BuildFunction", "BuiltGraph", "batches", "cache_stats", "cached_graph",
           "local_graph", "map_batches"]
