"""Times the convolution kernel on the AlexNet shapes against a plain NumPy float64 im2col + matmul.

For each shape and format (U8, Q7.8) this prints the median wall time of
our ``convolution`` and of the reference, GMAC/s for both, and the ratio
reference_time / our_time (above 1: ours is faster). Both run in this
process on the same tensors, in OpenVX's natural memory layout (dim 0
fastest), timed alternately so that other load on the machine slows both
alike. The reference's timed work: convert the input to float64, pad it,
gather the windows (``sliding_window_view`` + a reshaping copy) and one
``@`` (BLAS dgemm); its weights are converted to a float64 matrix once,
outside the timing, and it leaves its result as a float64 matrix (no
rounding, no output layout). Ours does all of its work inside the timing:
weight packing, im2col, the product and exact requantization into the
output tensor.

Usage: python benchmarks/bench_convolution.py [--repeat N] [--smoke]
``--smoke`` runs two tiny shapes once (small enough for the direct route,
and large enough for the GEMM route) and checks ours against the reference.
"""
from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

try:
    from openvx_nn.kernels.openvx.convolution import convolution
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from openvx_nn.kernels.openvx.convolution import convolution

# (name, input width = height, channels in, channels out, kernel, pad, stride)
ALEXNET = [
    ("conv1 11x11/4", 227, 3, 96, 11, 0, 4),
    ("conv2 5x5", 27, 96, 256, 5, 2, 1),
    ("conv3 3x3", 13, 256, 384, 3, 1, 1),
]
SMOKE = [("smoke 3x3/2", 9, 4, 5, 3, 1, 2), ("smoke 3x3", 16, 16, 16, 3, 1, 1)]  # direct and GEMM routes
# (name, dtype, fixed point position, low, high) of the random raw values
FORMATS = [("U8", np.uint8, 0, 0, 256), ("Q7.8", np.int16, 8, -32768, 32768)]


def reference(x: np.ndarray, wmat: np.ndarray, kernel: int, pad: int, stride: int) -> np.ndarray:
    """Plain float64 im2col + matmul: ``(OW*OH, K)`` sums (row = ox + OW*oy), unrounded."""
    xp = np.pad(x.astype(np.float64), ((pad, pad), (pad, pad), (0, 0)))
    windows = sliding_window_view(xp, (kernel, kernel), axis=(0, 1))[::stride, ::stride]  # (OW, OH, C, mx, my)
    ow, oh = windows.shape[:2]
    cols = windows.transpose(1, 0, 2, 4, 3).reshape(ow * oh, -1)  # tap order (c, my, mx): wmat's
    return cols @ wmat


def median_times(functions, repeat: int) -> list[float]:
    """Median wall time of each function, timed interleaved so a busy machine slows all of them alike."""
    for function in functions:
        function()  # warm-up: compilation, caches, scratch buffers
    times: list[list[float]] = [[] for _ in functions]
    for i in range(repeat):
        order = range(len(functions)) if i % 2 == 0 else reversed(range(len(functions)))
        for k in order:
            start = time.perf_counter()
            functions[k]()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def run(shapes, repeat: int, check: bool) -> None:
    rng = np.random.default_rng(2024)
    print(f"{'shape':<15}{'format':<7}{'GMAC':>7}{'ours ms':>10}{'GMAC/s':>8}{'ref ms':>10}{'GMAC/s':>8}"
          f"{'ref/ours':>10}")
    for name, size, c_in, c_out, kernel, pad, stride in shapes:
        ow = (size + 2 * pad - kernel) // stride + 1
        macs = ow * ow * c_out * kernel * kernel * c_in
        for fmt, dtype, fpp, lo, hi in FORMATS:
            x = np.asfortranarray(rng.integers(lo, hi, (size, size, c_in)).astype(dtype))
            w = np.asfortranarray(rng.integers(lo, hi, (kernel, kernel, c_in, c_out)).astype(dtype))
            bias = rng.integers(lo, hi, c_out).astype(dtype)
            out = np.zeros((ow, ow, c_out), dtype, order="F")
            wmat = w.astype(np.float64).transpose(2, 1, 0, 3).reshape(-1, c_out)  # rows in (c, my, mx) order

            ours = functools.partial(convolution, x, w, bias, out, pad, pad, stride, stride, 0, 0, True, True,
                                     fpp_x=fpp, fpp_w=fpp, fpp_b=fpp, fpp_out=fpp)
            ref = functools.partial(reference, x, wmat, kernel, pad, stride)

            t_ours, t_ref = median_times([ours, ref], repeat)
            if check:  # the reference's exact sums, rounded the same way, must be our output
                sums = ref().reshape(ow, ow, c_out, order="F").astype(np.int64) + (bias.astype(np.int64) << fpp)
                scaled = sums.astype(np.float64) / 2.0 ** fpp
                expected = np.clip(np.rint(scaled), np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
                if not np.array_equal(out, expected):
                    raise SystemExit(f"{name} {fmt}: convolution differs from the reference")
            print(f"{name:<15}{fmt:<7}{macs / 1e9:>7.3f}{t_ours * 1e3:>10.2f}{macs / t_ours / 1e9:>8.1f}"
                  f"{t_ref * 1e3:>10.2f}{macs / t_ref / 1e9:>8.1f}{t_ref / t_ours:>10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per case (median reported)")
    parser.add_argument("--smoke", action="store_true", help="two tiny shapes, once, checked (for CI)")
    args = parser.parse_args()
    if args.smoke:
        run(SMOKE, 1, check=True)
    else:
        run(ALEXNET, args.repeat, check=False)


if __name__ == "__main__":
    main()
