"""A built and verified network that runs batches, and the per-process cache of them that Dask
workers keep so each process builds and verifies a network once, not once per batch."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..api import Context, Graph, Tensor
from .batches import Batch, check_block

BuildFunction = Callable[[Context], tuple[Graph, Tensor, Tensor]]
"""``build(ctx) -> (graph, input tensor, output tensor)``: the input's last dim is the batch."""

CACHE_SIZE = 4
"""Networks kept per process; the least recently used beyond that is released."""


@dataclass
class BuiltGraph:
    """A network of its own context, verified once, that maps one batch at a time."""

    context: Context
    graph: Graph
    input: Tensor
    output: Tensor
    input_shape: tuple[int, ...]
    input_dtype: np.dtype
    output_shape: tuple[int, ...]
    output_dtype: np.dtype
    batches_run: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(cls, build: BuildFunction) -> BuiltGraph:
        ctx = Context()
        try:
            made = build(ctx)
            if not (isinstance(made, tuple) and len(made) == 3):
                raise TypeError(f"build must return (graph, input tensor, output tensor), got {type(made).__name__}")
            graph, x, y = made
            graph.verify()
            built = cls(ctx, graph, x, y, x.shape, np.dtype(x.dtype), y.shape, np.dtype(y.dtype))
            if not built.input_shape or not built.output_shape:
                raise ValueError("the input and output tensors of build need at least one dimension (the batch)")
            if built.input_shape[-1] != built.output_shape[-1]:
                raise ValueError(f"the input's batch dimension {built.input_shape[-1]} differs from the output's "
                                 f"{built.output_shape[-1]} (both tensors keep the batch on their last dim)")
        except BaseException:
            ctx.close()
            raise
        return built

    @property
    def batch_size(self) -> int:
        return self.input_shape[-1]

    def run(self, block: np.ndarray, batch: Batch) -> np.ndarray:
        """The outputs of one batch: checked, zero-padded to the tensor's batch, run, trimmed."""
        block = np.asarray(block)
        check_block(block.shape, block.dtype, batch, self.input_shape, self.input_dtype)
        if batch.size != self.batch_size:
            padded = np.zeros(self.input_shape, self.input_dtype)
            padded[..., :batch.size] = block
            block = padded
        with self.lock:  # one graph per process: threads of a worker take turns
            self.input.write(block)
            self.graph.process()
            out = self.output.numpy()
            self.batches_run += 1
        return np.ascontiguousarray(out[..., :batch.size])

    def close(self) -> None:
        self.context.close()


_cache: OrderedDict[str, BuiltGraph] = OrderedDict()
_cache_lock = threading.Lock()
_builds: dict[str, int] = {}


def cached_graph(key: str, build: BuildFunction) -> BuiltGraph:
    """This process's network for ``key`` (a token of ``build``), built and verified on first use."""
    with _cache_lock:
        built = _cache.get(key)
        if built is None:
            built = _cache[key] = BuiltGraph.build(build)
            _builds[key] = _builds.get(key, 0) + 1
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)[1].close()
        _cache.move_to_end(key)
        return built


def cache_stats() -> dict[str, tuple[int, int]]:
    """{key: (times built in this process, batches its cached network ran)}, for tests and tuning."""
    with _cache_lock:
        return {key: (count, _cache[key].batches_run if key in _cache else 0) for key, count in _builds.items()}
