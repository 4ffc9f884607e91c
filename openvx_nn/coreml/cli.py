"""``openvx-nn coreml MODEL.mlmodel --input name=file.npy [--bench]``: run a model, print
its outputs, and with ``--bench`` the per-layer time from the graph's performance counters."""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path

import numpy as np

from .errors import CoreMLError
from .loading import load

BENCH_RUNS = 10


def _inputs(pairs: Sequence[str]) -> dict[str, np.ndarray]:
    feeds = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise CoreMLError(f"--input {pair!r} is not NAME=FILE.npy")
        try:
            feeds[name] = np.load(Path(path), allow_pickle=False)
        except (OSError, ValueError) as err:
            raise CoreMLError(f"cannot read input '{name}' from {path}: {err}") from None
    return feeds


def _show(name: str, value) -> None:
    if isinstance(value, dict):
        print(f"{name}:")
        for label, p in sorted(value.items(), key=lambda kv: -kv[1]):
            print(f"  {label}: {p:.6f}")
    elif isinstance(value, np.ndarray):
        print(f"{name}: shape {list(value.shape)}")
        print(np.array2string(value, precision=6, threshold=64))
    else:
        print(f"{name}: {value}")


def main(model_path: str, inputs: Sequence[str], bench: bool = False,
         loading: Callable[[], AbstractContextManager] = nullcontext) -> int:
    """``loading()`` wraps the load and the first prediction (the command's notice of a slow load)."""
    try:
        with ExitStack() as stack:
            with loading():
                model = stack.enter_context(load(model_path))
                feeds = _inputs(inputs)
                outputs = model.predict(feeds)
            for name, value in outputs.items():
                _show(name, value)
            if bench:  # the run above compiled and allocated everything: time the next ones only
                model.reset_timings()
                for _ in range(BENCH_RUNS):
                    model.predict(feeds, bench=True)
                _timing(model)
    except CoreMLError as err:
        print(f"openvx-nn coreml: {err}", file=sys.stderr)
        return 1
    return 0


def _timing(model) -> None:
    rows = model.timings()
    total = sum(avg for _, _, avg, _ in rows)
    print(f"\nper-layer time over {BENCH_RUNS} runs after a warm-up (graph performance counters):")
    width = max((len(layer) for layer, *_ in rows), default=5)
    print(f"  {'layer':<{width}}  {'average':>12}  {'minimum':>12}  kernel")
    for layer, kernel, avg, low in rows:
        print(f"  {layer:<{width}}  {avg:9.3f} ms  {low:9.3f} ms  {kernel}")
    print(f"  {'total':<{width}}  {total:9.3f} ms")
