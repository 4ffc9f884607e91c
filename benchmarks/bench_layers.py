"""Benchmark of the fully connected and pooling kernels against plain NumPy float64 in the same process.

Cases: FC 9216 -> 4096 (batch 1) and pooling 3x3 stride 2 on 55x55x96
(max and average), each in U8 and Q7.8, tensors in OpenVX layout (dim 0
fastest). Prints the median time of the kernel (thread pool allowed, and
serial), its rate (FC: GMAC/s; pooling: G window elements/s), the median time
of the NumPy float64 reference (FC: ``w.T @ x + bias`` on arrays converted
beforehand; pooling: ``sliding_window_view`` max/mean) and the speedup
(reference time / kernel time). Each kernel result is checked against the
reference once, so a fast wrong kernel cannot pass unnoticed.

    python benchmarks/bench_layers.py            # the full sizes
    python benchmarks/bench_layers.py --smoke    # tiny sizes, two repeats (CI)
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn.kernels.openvx.fully_connected import fully_connected
from openvx_nn.kernels.openvx.pooling import pooling

FORMATS = {"U8": (np.uint8, 0), "Q7.8": (np.int16, 8)}


def median_seconds(function: Callable[[], object], repeats: int) -> float:
    function()  # compile / warm caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def openvx_array(rng: np.random.Generator, shape: tuple[int, ...], dtype, lo: int, hi: int) -> np.ndarray:
    """Random raw values in ``lo .. hi - 1``, stored with dim 0 fastest as OpenVX tensors are."""
    return np.asfortranarray(rng.integers(lo, hi, shape).astype(dtype))


def fc_case(name: str, n_in: int, n_out: int, repeats: int) -> dict:
    dtype, fpp = FORMATS[name]
    rng = np.random.default_rng(1)
    # Values of moderate size (Q7.8: |x| <= 1, |w| <= 1/8) so that the outputs are not all saturated.
    x = openvx_array(rng, (n_in, 1), dtype, 0 if fpp == 0 else -256, 16 if fpp == 0 else 257)
    w = openvx_array(rng, (n_in, n_out), dtype, 0 if fpp == 0 else -32, 16 if fpp == 0 else 33)
    bias = openvx_array(rng, (n_out,), dtype, 0 if fpp == 0 else -256, 16 if fpp == 0 else 257)
    out = np.zeros((n_out, 1), dtype, order="F")
    pos = {"fpp_x": fpp, "fpp_w": fpp, "fpp_b": fpp, "fpp_out": fpp}
    kernel = median_seconds(lambda: fully_connected(x, w, bias, out, True, True, **pos), repeats)
    serial = median_seconds(lambda: fully_connected(x, w, bias, out, True, True, **pos, parallel=False), repeats)
    x64, w64, b64 = x.astype(np.float64), w.astype(np.float64), bias.astype(np.float64)
    reference = median_seconds(lambda: w64.T @ x64 + b64[:, None] * 2.0 ** fpp, repeats)
    # The float64 sums are exact integers (below 2**53); half-to-even rounding of an exact /2**fpp is exact too.
    info = np.iinfo(dtype)
    expected = np.clip(np.round((w64.T @ x64 + b64[:, None] * 2.0 ** fpp) / 2.0 ** fpp), info.min, info.max)
    fully_connected(x, w, bias, out, True, True, **pos)
    return {"case": f"FC {n_in}->{n_out} b1", "format": name, "kernel": kernel, "serial": serial,
            "rate": n_in * n_out / kernel / 1e9, "unit": "GMAC/s", "reference": reference,
            "exact": bool((out == expected).all())}


def pool_case(name: str, shape: tuple[int, int, int], max_pool: bool, repeats: int) -> dict:
    dtype, _ = FORMATS[name]
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    x = openvx_array(rng, shape, dtype, int(info.min), int(info.max) + 1)
    out_w, out_h = (shape[0] - 3) // 2 + 1, (shape[1] - 3) // 2 + 1
    out = np.zeros((out_w, out_h, shape[2]), dtype, order="F")
    kernel = median_seconds(lambda: pooling(x, out, max_pool, 3, 3, 0, 0, 2, 2), repeats)
    serial = median_seconds(lambda: pooling(x, out, max_pool, 3, 3, 0, 0, 2, 2, parallel=False), repeats)
    x64 = x.astype(np.float64)

    def numpy_pool() -> np.ndarray:
        windows = sliding_window_view(x64, (3, 3), axis=(0, 1))[::2, ::2]
        return windows.max(axis=(-2, -1)) if max_pool else windows.mean(axis=(-2, -1))

    reference = median_seconds(numpy_pool, repeats)
    pooling(x, out, max_pool, 3, 3, 0, 0, 2, 2)
    # Max is exact in float64; the float mean of 9 integers is within 1e-9 of the exact one, and no exact
    # mean of 9 integers lies within 1/18 of a .5 tie, so rounding it half-to-even is exact too.
    expected = numpy_pool() if max_pool else np.round(numpy_pool())
    elements = out.size * 9
    return {"case": f"{'max' if max_pool else 'avg'} pool 3x3/2 {'x'.join(map(str, shape))}", "format": name,
            "kernel": kernel, "serial": serial, "rate": elements / kernel / 1e9, "unit": "Gwin-el/s",
            "reference": reference, "exact": bool((out == expected).all())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes and two repeats, for CI")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per measurement (default 21)")
    args = parser.parse_args(argv)
    repeats = args.repeats or (2 if args.smoke else 21)
    fc_size, pool_shape = ((96, 64), (11, 11, 4)) if args.smoke else ((9216, 4096), (55, 55, 96))
    rows = []
    for name in FORMATS:
        rows.append(fc_case(name, *fc_size, repeats))
    for max_pool in (True, False):
        for name in FORMATS:
            rows.append(pool_case(name, pool_shape, max_pool, repeats))
    header = (f"{'case':<28} {'format':<6} {'kernel ms':>10} {'serial ms':>10} {'rate':>17} "
              f"{'numpy f64 ms':>13} {'speedup':>8} {'exact':>6}")
    print(header)
    print("-" * len(header))
    for row in rows:
        rate = f"{row['rate']:.2f} {row['unit']}"
        print(f"{row['case']:<28} {row['format']:<6} {row['kernel'] * 1e3:>10.3f} {row['serial'] * 1e3:>10.3f} "
              f"{rate:>17} {row['reference'] * 1e3:>13.3f} {row['reference'] / row['kernel']:>7.1f}x "
              f"{'yes' if row['exact'] else 'NO':>6}")
    return 0 if all(row["exact"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
