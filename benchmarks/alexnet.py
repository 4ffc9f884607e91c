"""AlexNet-sized layers as users run them: one verified graph per layer (Pythonic API), ``process()`` timed.

For the three convolutions, FC 9216->4096 and 3x3/2 max pooling, in U8 and Q7.8, each graph is built and
verified once (weights constant, so packing and planning happen at verify, as in any model) and then only
``g.process()`` is timed, interleaved with a plain NumPy float64 reference in the same process (im2col +
matmul, matmul, window max); medians of ``--repeat`` runs. The kernels alone (no graph) are timed by
``bench_convolution.py`` and ``bench_layers.py``.

    python benchmarks/alexnet.py [--repeat N]
    python benchmarks/alexnet.py --smoke      # tiny shapes, once, every result checked (CI)
"""
from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

try:
    from openvx_nn.api import Context
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from openvx_nn.api import Context

# (name, input width = height, channels in, channels out, kernel, pad, stride)
CONVOLUTIONS = [("conv1 227²×3→96 k11/4", 227, 3, 96, 11, 0, 4), ("conv2 27²×96→256 k5 p2", 27, 96, 256, 5, 2, 1),
                ("conv3 13²×256→384 k3 p1", 13, 256, 384, 3, 1, 1)]
FULLY_CONNECTED = [("FC 9216→4096", 9216, 4096)]
POOLING = [("max pool 55²×96 3x3/2", 55, 96, 3, 2)]
SMOKE_CONVOLUTIONS = [("smoke conv 9²×4→5 k3/2 p1", 9, 4, 5, 3, 1, 2), ("smoke conv 16²×16→16 k3 p1", 16, 16, 16, 3, 1, 1)]
SMOKE_FULLY_CONNECTED = [("smoke FC 96→64", 96, 64)]
SMOKE_POOLING = [("smoke max pool 11²×4 3x3/2", 11, 4, 3, 2)]
# (name, dtype, fixed point position, low, high) of the random raw values
FORMATS = [("U8", np.uint8, 0, 0, 256), ("Q7.8", np.int16, 8, -32768, 32768)]


def interleaved_medians(functions: list[Callable[[], object]], repeat: int) -> list[float]:
    """Median wall time of each function, alternating their order so a busy machine slows all alike."""
    for function in functions:
        function()  # warm-up: compilation, scratch buffers
    times: list[list[float]] = [[] for _ in functions]
    for i in range(repeat):
        for k in (range(len(functions)) if i % 2 == 0 else reversed(range(len(functions)))):
            start = time.perf_counter()
            functions[k]()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def rounded(sums: np.ndarray, fpp: int, dtype) -> np.ndarray:
    """Exact float64 sums (integers here) to the output format: nearest-even shift by ``fpp``, saturate."""
    info = np.iinfo(dtype)
    return np.clip(np.rint(sums / 2.0 ** fpp), info.min, info.max).astype(dtype)


def conv_reference(x: np.ndarray, w: np.ndarray, pad: int, stride: int) -> np.ndarray:
    """float64 im2col + one matmul, [W, H, C] in, [OW, OH, K] sums out (unrounded)."""
    kernel = w.shape[0]
    xp = np.pad(x.astype(np.float64), ((pad, pad), (pad, pad), (0, 0)))
    windows = sliding_window_view(xp, (kernel, kernel), axis=(0, 1))[::stride, ::stride]  # (OW, OH, C, kx, ky)
    ow, oh = windows.shape[:2]
    wmat = w.astype(np.float64).transpose(2, 0, 1, 3).reshape(-1, w.shape[3])          # rows (c, kx, ky)
    return (windows.reshape(ow * oh, -1) @ wmat).reshape(ow, oh, -1)


def row(name: str, fmt: str, macs: float, ours: float, ref: float) -> None:
    print(f"{name:<28}{fmt:<6}{ours * 1e3:>10.3f}{macs / ours / 1e9:>9.1f}{ref * 1e3:>10.3f}{ref / ours:>10.2f}")


def convolutions(ctx: Context, shapes, repeat: int, check: bool, rng) -> None:
    for name, size, c_in, c_out, kernel, pad, stride in shapes:
        ow = (size + 2 * pad - kernel) // stride + 1
        for fmt, dtype, fpp, lo, hi in FORMATS:
            x_raw = rng.integers(lo, hi, (size, size, c_in)).astype(dtype)
            w = rng.integers(lo, hi, (kernel, kernel, c_in, c_out)).astype(dtype)
            b = rng.integers(lo, hi, c_out).astype(dtype)
            with ctx.graph() as g:
                x = ctx.tensor(x_raw, fixed_point_position=fpp)
                y = g.convolution(x, w, b, padding=pad, stride=stride,
                                  out=ctx.tensor(shape=(ow, ow, c_out), dtype=dtype, fixed_point_position=fpp))
                g.verify()
                ours, ref = interleaved_medians([g.process, functools.partial(conv_reference, x_raw, w, pad, stride)], repeat)
                if check:
                    sums = conv_reference(x_raw, w, pad, stride) + (b.astype(np.float64) * 2.0 ** fpp)
                    assert np.array_equal(y.numpy(), rounded(sums, fpp, dtype)), f"{name} {fmt} differs"
            row(name, fmt, ow * ow * c_out * kernel * kernel * c_in, ours, ref)


def fully_connected(ctx: Context, shapes, repeat: int, check: bool, rng) -> None:
    for name, n_in, n_out in shapes:
        for fmt, dtype, fpp, lo, hi in FORMATS:
            x_raw = rng.integers(lo, hi, n_in).astype(dtype)
            w = rng.integers(lo, hi, (n_in, n_out)).astype(dtype)
            b = rng.integers(lo, hi, n_out).astype(dtype)
            w64 = w.astype(np.float64)
            with ctx.graph() as g:
                y = g.fully_connected(ctx.tensor(x_raw, fixed_point_position=fpp), w, b,
                                      out=ctx.tensor(shape=(n_out,), dtype=dtype, fixed_point_position=fpp))
                g.verify()
                ours, ref = interleaved_medians([g.process, functools.partial(np.matmul, x_raw.astype(np.float64), w64)], repeat)
                if check:
                    sums = x_raw.astype(np.float64) @ w64 + b.astype(np.float64) * 2.0 ** fpp
                    assert np.array_equal(y.numpy(), rounded(sums, fpp, dtype)), f"{name} {fmt} differs"
            row(name, fmt, n_in * n_out, ours, ref)


def pooling(ctx: Context, shapes, repeat: int, check: bool, rng) -> None:
    for name, size, channels, window, stride in shapes:
        out = (size - window) // stride + 1
        for fmt, dtype, fpp, lo, hi in FORMATS:
            x_raw = rng.integers(lo, hi, (size, size, channels)).astype(dtype)

            def reference(x_raw=x_raw, window=window, stride=stride):
                return sliding_window_view(x_raw, (window, window), axis=(0, 1))[::stride, ::stride].max(axis=(3, 4))

            with ctx.graph() as g:
                y = g.max_pool(ctx.tensor(x_raw, fixed_point_position=fpp), size=window, stride=stride,
                               out=ctx.tensor(shape=(out, out, channels), dtype=dtype, fixed_point_position=fpp))
                g.verify()
                ours, ref = interleaved_medians([g.process, reference], repeat)
                if check:
                    assert np.array_equal(y.numpy(), reference()), f"{name} {fmt} differs"
            row(name, fmt, out * out * channels * window * window, ours, ref)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per case (median reported)")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, once, every result checked (CI)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2024)
    repeat = 1 if args.smoke else args.repeat
    print(f"{'layer (one verified graph)':<28}{'fmt':<6}{'ours ms':>10}{'GMAC/s':>9}{'ref ms':>10}{'ref/ours':>10}")
    with Context() as ctx:
        convolutions(ctx, SMOKE_CONVOLUTIONS if args.smoke else CONVOLUTIONS, repeat, args.smoke, rng)
        fully_connected(ctx, SMOKE_FULLY_CONNECTED if args.smoke else FULLY_CONNECTED, repeat, args.smoke, rng)
        pooling(ctx, SMOKE_POOLING if args.smoke else POOLING, repeat, args.smoke, rng)
    if args.smoke:
        print("every result equals the reference: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
