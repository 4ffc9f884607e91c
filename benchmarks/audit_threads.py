"""An Amdahl audit of a model's native plan: each call's one-thread CPU time and how it splits over two threads.

    python benchmarks/audit_threads.py converted-deeplab-head,vx-small-cnn [--turns 30] [--top 15] [--all]

Load-independent: no wall time is measured. The row (``bench_models.py``'s, by name) is loaded with the plans
built for two threads (``OPENVX_NN_THREADS=2``: a layer's chunk count is fixed when it is bound), run a few
times, and its graphs' native calls (not the empty ones of nodes another call computes: the native plan skips
them) are then run one by one in plan order, ``--turns`` turns, each timed by this thread's CPU time
(``time.thread_time``) with the gang closed (``gang.closed``: every call on this thread alone, chunked or not);
per call the median. How a call splits comes from its entry: the ``gang.NativeTask``
records it keeps (units, chunks; none or no chunks: it runs on the calling thread only). The two-thread
prediction of a chunked call is the finish time of two threads taking its chunks as the chunk loop hands them
out (the caller from the front, the helper from the back, each the next as soon as it is free), a chunk
costing its share of units of the one-thread time; a serial call keeps its one-thread time. Hand-over costs
(about a microsecond to a spinning helper) and the staging a shared entry does on the caller first are not
modelled: the prediction is a lower bound of what two threads can reach with today's splits. Beside it,
``measured``: each call run again with a helper spinning in the gang (``gang.held``), timed by the calling
thread's CPU time (which spins while it waits for a helper's chunk, so it is the call's span as long as this
thread runs), the minimum over the turns (a turn whose helper the OS preempted takes longer: the minimum is the
turn where both ran); it includes what the model leaves out, and the share of the work a chunked call's units
really cost.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

if __name__ == "__main__":  # the plans must be bound for two threads: before the library loads
    os.environ.setdefault("OPENVX_NN_THREADS", "2")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def tasks_of(keep) -> list:
    """The ``gang.NativeTask`` records a native entry keeps (searched through tuples and lists, not into the
    entries a sequence runs: those are audited on their own)."""
    from openvx_nn.kernels.engine import gang
    from openvx_nn.kernels.support import native
    found, stack = [], [keep]
    while stack:
        item = stack.pop()
        if isinstance(item, gang.NativeTask):
            found.append(item)
        elif isinstance(item, (tuple, list)) and not isinstance(item, native.Entry):
            stack.extend(item)
    return found


def entries_of(entry) -> list:
    """``entry`` itself, or the entries it runs in order when it is a ``native.sequence`` of them."""
    from openvx_nn.kernels.support import native
    if entry.keep and all(isinstance(k, native.Entry) for k in entry.keep):
        return [e for k in entry.keep for e in entries_of(k)]
    return [entry]


def two_thread_time(seconds: float, units: int, chunks: int) -> float:
    """When two threads finish ``chunks`` chunks of ``units`` units (chunk ``i``: units ``[units * i // chunks,
    units * (i + 1) // chunks)``, as ``chunk_loop`` cuts them) costing ``seconds`` in all on one thread: the
    caller takes chunks from the front, the helper from the back, each the next one when it is free."""
    if chunks <= 0 or units <= 1:
        return seconds
    sizes = [units * (i + 1) // chunks - units * i // chunks for i in range(chunks)]
    front, back, clock = 0, chunks - 1, [0.0, 0.0]
    while front <= back:
        who = 0 if clock[0] <= clock[1] else 1
        if who == 0:
            clock[0] += seconds * sizes[front] / units
            front += 1
        else:
            clock[1] += seconds * sizes[back] / units
            back -= 1
    return max(clock)


def split_of(entry) -> tuple[str, int, int]:
    """(how the call splits, units, chunks) from the tasks its entry keeps."""
    tasks = tasks_of(entry.keep)
    if not tasks:
        return "serial: no split", 1, 0
    task = max(tasks, key=lambda t: t.chunks)
    units = getattr(task, "units", 0)
    if task.chunks <= 0:
        return f"serial: below threshold ({units} units)", units, 0
    return f"{units} units in {task.chunks} chunks", units, task.chunks


def _timed(calls: list, turns: int, before_turn=None) -> dict[int, list[float]]:
    """Each native entry's CPU time on this thread, ``turns`` times in plan order (``before_turn`` called first
    each turn); keyed by the entry's position in ``calls``."""
    from openvx_nn.kernels.support import native
    times: dict[int, list[float]] = defaultdict(list)
    for _ in range(turns):
        if before_turn is not None:
            before_turn()
        for k, (_, entry) in enumerate(calls):
            if entry is None:
                continue
            start = time.thread_time()
            native.run(entry)
            times[k].append(time.thread_time() - start)
    return times


def audit(row_name: str, turns: int) -> list[dict]:
    """Every native call of the row's graphs: kernel, shapes, one-thread ms, split, predicted two-thread ms."""
    from benchmarks.model_rows import ROWS
    from openvx_nn.core.graph import Graph
    from openvx_nn.kernels.engine import gang
    from openvx_nn.kernels.support import native
    before = {id(o) for o in gc.get_objects() if type(o) is Graph}
    row = ROWS[row_name](False, 1.0)
    if row is None or isinstance(row, str):
        raise SystemExit(f"{row_name}: skipped ({row})")
    run = row.load_ours()
    for _ in range(5):
        run()
    graphs = [o for o in gc.get_objects() if type(o) is Graph and id(o) not in before
              and o.plan is not None and o.plan.calls]
    from openvx_nn.core import rewrites
    calls = []
    for graph in graphs:
        for call in graph.plan.calls:
            if call.native is rewrites.no_entry():
                continue  # work another call does (fused, merged, paired): the native plan skips it
            if call.native is None:
                calls.append((call, None))
                continue
            calls.extend((call, e) for e in entries_of(call.native))
    with gang.closed():
        times = _timed(calls, turns)
    with gang.held():
        joins, deadline = gang.native_joins(), time.monotonic() + 60
        while gang.native_joins() == joins and time.monotonic() < deadline:  # until a helper spins in the gang
            gang.summon_spare()
            time.sleep(0.01)  # it takes the GIL to enter the gang (compiling its loop the first time)
            for _, entry in calls:
                if entry is not None:
                    native.run(entry)
        shared = _timed(calls, turns, gang.summon_spare)
    rows = []
    for k, (call, entry) in enumerate(calls):
        name = call.node.description.name.rsplit(".", 1)[-1]
        dims = [tuple(reversed(p.dims)) for p in call.node.params if hasattr(p, "dims")]
        if entry is None:
            rows.append({"kernel": name, "dims": dims, "one": 0.0, "two": 0.0, "measured": 0.0,
                         "split": "no native entry"})
            continue
        one = statistics.median(times[k])
        split, units, chunks = split_of(entry)
        rows.append({"kernel": name, "dims": dims, "one": one, "two": two_thread_time(one, units, chunks),
                     "measured": min(shared[k]), "split": split})
    row.close()
    return rows


def report(row_name: str, rows: list[dict], top: int, every: bool) -> None:
    one, two, measured = (sum(r[key] for r in rows) for key in ("one", "two", "measured"))
    serial = sum(r["one"] for r in rows if r["split"].startswith("serial"))
    print(f"{row_name}: {len(rows)} native calls, one thread {one * 1e3:.3f} ms, predicted two threads "
          f"{two * 1e3:.3f} ms (x{one / two:.2f} of one; ideal x2), serial calls {serial * 1e3:.3f} ms "
          f"({100 * serial / one:.0f} %); measured with a helper {measured * 1e3:.3f} ms (x{one / measured:.2f})")
    loss = sorted(rows, key=lambda r: -(r["two"] - r["one"] / 2))
    print(f"  {'kernel':28s} {'1 thr ms':>9s} {'2 thr ms':>9s} {'lost ms':>8s} {'measured':>8s}  split; shapes")
    for r in (rows if every else loss[:top]):
        shapes = f"{r['dims'][0] if r['dims'] else ''} -> {r['dims'][-1] if r['dims'] else ''}"
        print(f"  {r['kernel']:28s} {r['one'] * 1e3:9.3f} {r['two'] * 1e3:9.3f} {(r['two'] - r['one'] / 2) * 1e3:8.3f}"
              f" {r['measured'] * 1e3:8.3f}  {r['split']}; {shapes}")
    kinds: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for r in rows:
        kind = kinds[r["kernel"]]
        kind[0] += r["one"]
        kind[1] += r["two"]
        kind[2] += r["measured"]
        kind[3] += 1
    print("  by kernel (calls, 1 thread ms, predicted 2 threads ms, lost against half, measured with a helper):")
    for name, (a, b, c, n) in sorted(kinds.items(), key=lambda item: -(item[1][1] - item[1][0] / 2))[:top]:
        print(f"    {name:28s} {n:4d} {a * 1e3:9.3f} {b * 1e3:9.3f} {(b - a / 2) * 1e3:8.3f} {c * 1e3:9.3f}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="bench_models.py row names, comma-separated")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--all", action="store_true", help="every call in plan order, not the top losses")
    args = parser.parse_args(argv)
    for name in args.rows.split(","):
        report(name, audit(name, args.turns), args.top, args.all)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
