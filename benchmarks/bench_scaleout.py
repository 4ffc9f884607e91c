"""Scale-out benchmark: images/s of the shipped digits network run by ``map_batches`` in one process
and on 1 and 2 Dask worker processes (a loopback LocalCluster), and what each batch costs on top.

Rows, timed interleaved (one repeat of every row, then the next repeat), medians reported:
  here, all cores      map_batches(client=None), numba's thread pool on every core
  here, 1 thread       the same with numba limited to one thread (one core's worth, the unit of scaling)
  dask 1 worker        1 worker process of 1 thread (NUMBA_NUM_THREADS=1), input shipped from here
  dask 2 workers       2 such workers, input shipped from this process
  dask 2 workers, file 2 workers that read and quantize their own batches from a .npy file (as `run` does)
Each row also gives the CPU time per batch of this process (the client and, in a LocalCluster, the
scheduler, which runs in the client's process) and of the workers: CPU time is what the scaling model
needs, and it is far less disturbed than wall time by other programs loading the machine.  Then the
per-batch overhead of Dask ((dask 1 worker - here 1 thread) / batches), the scheduler's round trip
for an empty task, and the pickled size and time of one batch in and out.

    python benchmarks/bench_scaleout.py                   # 32768 images, batches of 512, 5 repeats
    python benchmarks/bench_scaleout.py --smoke           # 2048 images, batches of 256, 2 repeats
"""
from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn.demo.model import Q78, build, load_model
from openvx_nn.distributed import map_batches
from openvx_nn.runner.command import lazy_input, local_cluster
from openvx_nn.runner.models import digits


def dataset(images: int) -> np.ndarray:
    """The held-out digits repeated to ``images`` items, float32 [8, 8, 1, images]."""
    test = load_model().test_images
    return np.ascontiguousarray(np.tile(test, (1, 1, 1, -(-images // test.shape[3])))[..., :images])


def timed(function: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def cpu_seconds(client) -> dict[str, float]:
    """CPU time so far of this process (client and, in a LocalCluster, the scheduler too) and of
    the workers of ``client``: unlike wall time, it hardly moves when other programs load the machine."""
    used = {"here": time.process_time()}
    if client is not None:
        used["workers"] = sum(client.run(time.process_time).values())
    return used


def idle_cpu(clients: list, seconds: float = 2.0) -> list[dict[str, float]]:
    """CPU seconds per second each process spends with nothing to do (event loops, heartbeats),
    per client as :func:`cpu_seconds` counts them: subtracted from every row so the figures are
    the cost of the work."""
    before = [cpu_seconds(c) for c in clients]
    time.sleep(seconds)
    after = [cpu_seconds(c) for c in clients]
    return [{where: (a[where] - b[where]) / seconds for where in a} for a, b in zip(after, before)]


def noop(i: int) -> int:
    return i


def scheduler_round_trip(client, tasks: int) -> float:
    """Seconds per empty task when ``tasks`` of them go through the scheduler at once."""
    seconds, _ = timed(lambda: client.gather(client.map(noop, range(tasks), pure=False)))
    return seconds / tasks


def pickled(array: np.ndarray, repeats: int = 200) -> tuple[int, float]:
    """(bytes, seconds for dumps+loads) of one array, as Dask ships a batch between processes."""
    blob = pickle.dumps(array, protocol=5)
    start = time.perf_counter()
    for _ in range(repeats):
        pickle.loads(pickle.dumps(array, protocol=5))
    return len(blob), (time.perf_counter() - start) / repeats


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=32768)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--smoke", action="store_true", help="2048 images, batches of 256, 2 repeats")
    args = p.parse_args()
    if args.smoke:
        args.images, args.batch, args.repeats = 2048, 256, 2

    import numba
    from distributed import Client

    images = dataset(args.images)
    raw = Q78.to_raw(images)
    batches = -(-args.images // args.batch)
    network = partial(build, batch=args.batch)
    expected = map_batches(network, raw, args.batch)              # also warms this process up
    all_cores = numba.get_num_threads()

    def here(threads: int) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            numba.set_num_threads(threads)
            try:
                return map_batches(network, raw, args.batch)
            finally:
                numba.set_num_threads(all_cores)
        return run

    # The clusters of `openvx-nn run --workers`: the workers' environment gives them one numba thread
    # (numba.set_num_threads is per thread: client.run would not reach the task thread).
    with tempfile.TemporaryDirectory() as tmp, local_cluster(1) as one, Client(one) as c1, \
            local_cluster(2) as two, Client(two) as c2:
        path = Path(tmp) / "images.npy"
        np.save(path, images)
        on_disk = np.load(path, mmap_mode="r")

        def on(client, from_file: bool = False) -> Callable[[], np.ndarray]:
            data = lazy_input(path, on_disk, digits(), args.batch) if from_file else raw
            return lambda: client.compute(map_batches(network, data, args.batch, client), sync=True)

        rows = {f"here, all cores ({all_cores} numba threads)": here(all_cores), "here, 1 thread": here(1),
                "dask 1 worker": on(c1), "dask 2 workers": on(c2), "dask 2 workers, file": on(c2, True)}
        clients = dict(zip(rows, (None, None, c1, c2, c2)))
        for name, function in rows.items():                        # warm-up: builds, JIT, imports
            if not np.array_equal(function(), expected):
                raise SystemExit(f"{name}: results differ from the single-process run")
        idle_clients = [None, c1, c2]
        idle_before = idle_cpu(idle_clients)
        times: dict[str, list[float]] = {name: [] for name in rows}
        cpu: dict[str, list[dict[str, float]]] = {name: [] for name in rows}
        for _ in range(args.repeats):
            for name, function in rows.items():
                before = cpu_seconds(clients[name])
                seconds, result = timed(function)
                after = cpu_seconds(clients[name])
                times[name].append(seconds)
                cpu[name].append({where: after[where] - before[where] for where in after} | {"wall": seconds})
                assert np.array_equal(result, expected), name
        empty_task = statistics.median(scheduler_round_trip(c2, batches) for _ in range(args.repeats))
        idle_after = idle_cpu(idle_clients)
        idle = {c: {w: (a[w] + b[w]) / 2 for w in a} for c, a, b in zip((None, c1, c2), idle_before, idle_after)}
        for name in rows:   # net of the processes' background load
            for sample in cpu[name]:
                for where, rate in idle[clients[name]].items():
                    sample[where] -= rate * sample["wall"]

    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"digits network, {args.images:,} images, batches of {args.batch} ({batches} batches), "
          f"{args.repeats} interleaved repeats, medians")
    print("| configuration | seconds | images/s | vs here, 1 thread | net CPU ms/batch, this process | net CPU ms/batch, workers |")
    print("|---|---|---|---|---|---|")
    base = median["here, 1 thread"]
    for name, seconds in median.items():
        per_batch = {where: 1e3 * statistics.median(c[where] for c in cpu[name]) / batches for where in cpu[name][0]}
        print(f"| {name} | {seconds:.3f} | {args.images / seconds:,.0f} | {base / seconds:.2f}x | "
              + " | ".join(f"{per_batch[w]:.2f}" if w in per_batch else "-" for w in ("here", "workers"))
              + " |")
    per_batch_here = base / batches
    overhead = (median["dask 1 worker"] - base) / batches
    in_bytes, in_seconds = pickled(raw[..., :args.batch])
    out_bytes, out_seconds = pickled(expected[..., :args.batch])
    print(f"compute per batch (here, 1 thread): {1e3 * per_batch_here:.2f} ms")
    print(f"Dask overhead per batch (dask 1 worker - here 1 thread): {1e3 * overhead:.2f} ms")
    print(f"idle CPU subtracted above, ms per s: this process {1e3 * idle[None]['here']:.1f} (both clusters' "
          f"schedulers), workers of 1: {1e3 * idle[c1]['workers']:.1f}, of 2: {1e3 * idle[c2]['workers']:.1f}")
    print(f"scheduler round trip of an empty task ({batches} at once, 2 workers): {1e3 * empty_task:.3f} ms")
    print(f"one batch pickled: input {in_bytes:,} B in {1e6 * in_seconds:.0f} us, "
          f"output {out_bytes:,} B in {1e6 * out_seconds:.0f} us (dumps + loads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
