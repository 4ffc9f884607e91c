"""``python -m openvx_nn demo``: classify the held-out digits with the library and print a table."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from ..api import Context
from .model import F32, Q78, DigitsModel, Variant, build_graph, load_model


@dataclass(frozen=True)
class Result:
    variant: str
    correct: int
    total: int
    seconds: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.total

    @property
    def images_per_second(self) -> float:
        return self.total / self.seconds if self.seconds > 0 else float("inf")


def _progress(stream: TextIO | None, label: str, done: int, total: int) -> None:
    if stream is None:
        return
    if not stream.isatty() and done != total:  # a log file gets the finished bar only
        return
    width = 30
    filled = width * done // total
    stream.write(f"\r{label:5} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done == total:
        stream.write("\n")
    stream.flush()


def classify(ctx: Context, model: DigitsModel, variant: Variant, batch: int = 64,
             limit: int | None = None, progress: TextIO | None = None) -> tuple[np.ndarray, float]:
    """Predicted labels of the first ``limit`` test images and the seconds the graph runs took
    (after one warm-up run, so JIT compilation is not counted)."""
    images = model.test_images[..., :limit]
    total = images.shape[3]
    g, x, probs = build_graph(ctx, model, variant, batch)
    try:
        g.process()  # warm-up: compiles the kernels
        predictions = np.empty(total, np.int64)
        elapsed = 0.0
        _progress(progress, variant.name, 0, total)
        for start in range(0, total, batch):
            chunk = images[..., start:start + batch]
            n = chunk.shape[3]
            raw = np.zeros((8, 8, 1, batch), variant.dtype)
            raw[..., :n] = variant.to_raw(chunk)
            begin = time.perf_counter()
            x.write(raw)
            g.process()
            out = probs.numpy()
            elapsed += time.perf_counter() - begin
            predictions[start:start + n] = out[:, :n].argmax(axis=0)
            _progress(progress, variant.name, start + n, total)
        return predictions, elapsed
    finally:
        g.close()


def run_demo(limit: int | None = None, batch: int = 64, progress: TextIO | None = sys.stdout) -> list[Result]:
    if limit is not None and limit < 1:  # a negative limit would slice from the end, zero divide by zero
        raise ValueError(f"limit must be at least 1 (or None for every image), got {limit}")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    model = load_model()
    labels = model.test_labels[:limit].astype(np.int64)
    results = []
    with Context() as ctx:
        for variant in (Q78, F32):
            predicted, seconds = classify(ctx, model, variant, batch, limit, progress)
            results.append(Result(variant.name, int((predicted == labels).sum()), len(labels), seconds))
    return results


def format_table(results: list[Result]) -> str:
    lines = ["| format | accuracy | correct | images/s |", "|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.variant} | {100 * r.accuracy:.2f}% | {r.correct}/{r.total} | {r.images_per_second:,.0f} |")
    return "\n".join(lines)


def main(limit: int | None = None, batch: int = 64) -> int:
    model = load_model()
    n = model.test_images.shape[3] if limit is None else min(limit, model.test_images.shape[3])
    print(f"openvx-nn demo: LeNet-style CNN on {n} held-out 8x8 digits (scikit-learn's digits), "
          f"batches of {batch}")
    results = run_demo(limit, batch)
    print(format_table(results))
    q, f = results[0].accuracy, results[1].accuracy
    print(f"Q7.8 is {100 * (q - f):+.2f} percentage points from float32.")
    return 0
