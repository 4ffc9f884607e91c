"""``openvx-nn run``: a model over a whole ``.npy`` dataset, in this process or on Dask workers,
with a progress bar, writing the results in input order."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..distributed import Batch, batches, local_graph, map_batches
from ..errors import Error
from .models import Model, resolve
from .progress import Pending, Progress


class RunError(Error, ValueError):
    """A run that cannot start or finish: bad arguments, unreadable input, missing Dask."""


def open_input(path: Path, model: Model) -> np.ndarray:
    """The dataset, memory-mapped (never read whole), checked against the model's item shape."""
    try:
        images = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as error:
        raise RunError(f"--input {str(path)!r}: cannot read a .npy array ({error})") from error
    if images.ndim == 0:
        raise RunError(f"--input {str(path)!r}: a 0-d array has no batch axis")
    if model.item_shape is not None and images.shape[:-1] != model.item_shape:
        expected = ", ".join(str(n) for n in model.item_shape + ("N",))
        raise RunError(f"--input {str(path)!r}: shape {images.shape}, but {model.name} takes items of shape "
                       f"{model.item_shape} with the batch on the last axis: ({expected})")
    return images


def check_output(output: Path, input: Path) -> Path:
    """``--output`` as a file path a run may create: not a directory, in an existing directory, not the input."""
    output = Path(output)
    if output.is_dir() or str(output).endswith(os.sep):
        raise RunError(f"--output {str(output)!r} is a directory; name a .npy file in it")
    if not output.parent.is_dir():
        raise RunError(f"--output {str(output)!r}: directory {str(output.parent)!r} does not exist")
    if output.resolve() == Path(input).resolve() or (output.exists() and Path(input).exists()
                                                     and os.path.samefile(output, input)):
        raise RunError(f"--output {str(output)!r} is the --input file; the run would overwrite its own data")
    return output


class ResultWriter:
    """Writes each batch's results into place in a temporary ``.npy`` of its own (a unique name beside the
    output, so concurrent runs with one ``--output`` never share it) and renames it to the output only when
    every batch has arrived: an interrupted run leaves no partial file, and the last run to finish wins whole."""

    def __init__(self, path: Path, total: int, plan: list[Batch]):
        self.path, self.total = path, total
        try:  # created now: an unwritable directory fails before any work
            handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial.npy", dir=path.parent)
        except OSError as error:
            raise RunError(f"--output {str(path)!r}: cannot create a file there ({error.strerror})") from error
        os.close(handle)
        self.partial = Path(name)
        self.array: np.memmap | None = None
        self.pending = {b.index for b in plan}

    def write(self, batch: Batch, results: np.ndarray) -> None:
        if self.array is None:
            self.array = np.lib.format.open_memmap(self.partial, mode="w+", dtype=results.dtype,
                                                   shape=results.shape[:-1] + (self.total,))
        self.array[..., batch.start:batch.stop] = results
        self.pending.discard(batch.index)

    def commit(self, empty: Callable[[], np.ndarray]) -> np.ndarray:
        if self.pending:
            raise RunError(f"batches {sorted(self.pending)} never arrived; {self.path} not written")
        if self.array is None:  # an empty dataset: results of the right shape with no items
            with open(self.partial, "wb") as f:
                np.save(f, empty())
        else:
            self.array.flush()
            self.array = None
        os.chmod(self.partial, 0o666 & ~_umask())  # mkstemp's 0600 is for the temporary name only
        os.replace(self.partial, self.path)
        return np.load(self.path, mmap_mode="r")

    def discard(self) -> None:
        self.array = None
        self.partial.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _load_block(path: str, start: int, stop: int, prepare: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """On a worker: one batch read from the shared file and converted to the input tensor's values."""
    try:
        images = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError as error:
        raise RunError(f"a worker cannot read {path!r} ({error}); with --scheduler the input must be on a "
                       f"file system every worker sees, under the same path") from error
    return prepare(np.asarray(images[..., start:stop]))


def lazy_input(path: Path, images: np.ndarray, model: Model, batch_size: int) -> Any:
    """A Dask array whose blocks the workers load and prepare themselves (the client reads nothing)."""
    import dask
    import dask.array as da

    dtype = model.prepare(np.asarray(images[..., :0])).dtype
    blocks = [da.from_delayed(dask.delayed(_load_block, pure=True)(str(path), b.start, b.stop, model.prepare),
                              shape=images.shape[:-1] + (b.size,), dtype=dtype)
              for b in batches(images.shape[-1], batch_size)]
    return da.concatenate(blocks, axis=-1)


@contextmanager
def dask_client(workers: int | None, scheduler: str | None, connect_timeout: float = 10.0) -> Iterator[Any]:
    """A client of ``scheduler`` (given up after ``connect_timeout`` s), or of a local cluster of ``workers``
    processes of one thread each."""
    try:
        from distributed import Client
    except ImportError as error:
        raise RunError(f"--workers and --scheduler need Dask: pip install 'openvx-nn[dask]' ({error})") from error
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=f"{connect_timeout}s")
        except (OSError, TimeoutError) as error:
            raise RunError(f"--scheduler {scheduler!r}: no scheduler answered within {connect_timeout:g} s "
                           f"({error})") from error
        with client:
            yield client
        return
    with local_cluster(workers) as cluster, Client(cluster) as client:
        yield client


def local_cluster(workers: int) -> Any:
    """A loopback Dask cluster of ``workers`` processes, one thread each and one kernel thread (numba's
    pool and the integer engine's helpers: the workers already take the cores, and numba's pool costs
    more than it gains on small batches: see docs/scale-out.md); no dashboard, and its HTTP server on a
    free port, not 8787."""
    from distributed import LocalCluster
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        scheduler_kwargs={"dashboard_address": ":0"},
                        env={"NUMBA_NUM_THREADS": "1", "OPENVX_NN_THREADS": "1"})


def _run_here(model: Model, images: np.ndarray, batch_size: int, writer: ResultWriter, bar: Progress) -> None:
    with (Pending(f"loading {model.name} (graphs built, verified and run once)", bar.stream) as loading,
          local_graph(model.build_for(batch_size), batch_size) as net):
        for batch in batches(images.shape[-1], batch_size):
            block = model.prepare(np.asarray(images[..., batch.start:batch.stop]))
            result = net.run(block, batch)
            loading.stop()  # the first result is in: from here the bar tells
            writer.write(batch, model.finish(result))
            bar.update(batch.size)


def _run_on_dask(model: Model, path: Path, images: np.ndarray, batch_size: int, client: Any,
                 writer: ResultWriter, bar: Progress) -> None:
    from distributed import as_completed

    outputs = map_batches(model.build_for(batch_size), lazy_input(path, images, model, batch_size), batch_size,
                          client)
    plan = batches(images.shape[-1], batch_size)
    futures = client.compute(list(outputs.to_delayed().ravel()))
    which = {future.key: batch for future, batch in zip(futures, plan)}
    with Pending(f"loading {model.name} on the workers (first results)", bar.stream) as loading:
        for future in as_completed(futures):
            loading.stop()
            batch = which[future.key]
            writer.write(batch, model.finish(future.result()))
            future.release()
            bar.update(batch.size)


SCHEDULER_ADDRESS = re.compile(r"^([a-z]+://)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$")


def check_scheduler(scheduler: str) -> str:
    """A Dask scheduler address: ``[protocol://]host:port``."""
    if not SCHEDULER_ADDRESS.match(scheduler):
        raise RunError(f"--scheduler {scheduler!r} is not a scheduler address: expected host:port or "
                       f"tcp://host:port (as 'dask scheduler' prints)")
    return scheduler


def run(model: str, input: Path, output: Path, *, batch_size: int = 256, workers: int | None = None,
        scheduler: str | None = None, variant: str = "q78", progress: TextIO | None = sys.stderr,
        report: TextIO | None = sys.stdout, connect_timeout: float = 10.0,
        starting: Callable[[], None] | None = None) -> np.ndarray:
    """Run ``model`` over every item of ``input`` and save the results to ``output`` (returned,
    memory-mapped): here without Dask, else on ``workers`` local processes or at ``scheduler``.
    ``starting()`` is called once the arguments are checked, before any work."""
    if batch_size < 1:
        raise RunError(f"--batch must be at least 1, got {batch_size}")
    if workers is not None and scheduler is not None:
        raise RunError("give --workers or --scheduler, not both")
    if workers is not None and workers < 1:
        raise RunError(f"--workers must be at least 1, got {workers}")
    if not connect_timeout > 0:
        raise RunError(f"--connect-timeout must be a positive number of seconds, got {connect_timeout}")
    if scheduler is not None:
        check_scheduler(scheduler)
    output = check_output(Path(output), Path(input))
    chosen = resolve(model, variant)
    path = Path(input).resolve()
    images = open_input(path, chosen)
    total = images.shape[-1]
    writer = ResultWriter(output, total, batches(total, batch_size))
    if starting is not None:
        starting()
    begin = time.perf_counter()
    bar = Progress(total, progress)
    try:
        local = workers is None and scheduler is None
        if total and local:
            _run_here(chosen, images, batch_size, writer, bar)
        elif total:
            with dask_client(workers, scheduler, connect_timeout) as client:
                _run_on_dask(chosen, path, images, batch_size, client, writer, bar)
        bar.close()
        results = writer.commit(lambda: _empty_results(chosen, batch_size))
    except BaseException:
        writer.discard()
        raise
    if report is not None:
        seconds = time.perf_counter() - begin
        where = "this process" if local else \
            f"{workers} Dask workers" if scheduler is None else f"the Dask scheduler at {scheduler}"
        print(f"{chosen.name}: {total:,} items in {seconds:.2f} s on {where}; {chosen.describes} "
              f"{results.shape} {results.dtype} written to {output}", file=report)
    return results


def _empty_results(model: Model, batch_size: int) -> np.ndarray:
    with local_graph(model.build_for(batch_size), batch_size) as net:
        return model.finish(np.zeros(net.output_shape[:-1] + (0,), net.output_dtype))
