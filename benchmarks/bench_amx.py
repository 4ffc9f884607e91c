"""The 8-bit layers of bench_ort.py on the AMX micro-kernel against the same layers on the VNNI one, one thread.

Each U8 and S8 layer is built twice as a one-node OpenVX graph (``bench_ort.LayerGraph``): once with AMX
(``OPENVX_NN_AMX`` unset, where ``isa.amx()`` holds) and once without (``OPENVX_NN_AMX=0`` while that graph is
verified; the route is chosen then). Their outputs are compared bit for bit, then both and ONNX Runtime's u8
operator (``QLinearConv`` / ``MatMulInteger``, one intra-op thread) are timed in turns in this process by the
calling thread's CPU time (``OPENVX_NN_THREADS=1``, set here before the engine is imported); medians.

Usage: python benchmarks/bench_amx.py [--repeat N] [--rows conv1,conv2,...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["OPENVX_NN_THREADS"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_ort
import numpy as np

from openvx_nn.kernels.engine import isa


def built(amx: bool, make):
    """``make()`` with AMX on or off while it plans."""
    if amx:
        os.environ.pop(isa.ENV_AMX, None)
    else:
        os.environ[isa.ENV_AMX] = "0"
    isa.amx.cache_clear()
    try:
        return make()
    finally:
        os.environ.pop(isa.ENV_AMX, None)
        isa.amx.cache_clear()


def same_outputs(a, b) -> None:
    a(), b()
    if not np.array_equal(a.result(), b.result()):
        raise RuntimeError("the AMX and VNNI routes disagree")


def conv_contenders(rng, size, c_in, c_out, k, pad, stride):
    out_size = (size + 2 * pad - k) // stride + 1
    contenders = {}
    shape = (out_size, out_size, c_out)
    for label, dtype, lo, hi in (("U8", np.uint8, 0, 256), ("S8", np.int8, -128, 128)):
        x = np.asfortranarray(rng.integers(lo, hi, (size, size, c_in)).astype(dtype))
        w = np.asfortranarray(rng.integers(lo, hi, (k, k, c_in, c_out)).astype(dtype))
        b = rng.integers(lo, hi, c_out).astype(dtype)
        graphs = [built(amx, lambda x=x, w=w, b=b, dtype=dtype: bench_ort.graph_conv(
            x, w, b, np.zeros(shape, dtype, order="F"), pad, stride, 0)) for amx in (True, False)]
        same_outputs(*graphs)
        contenders[f"{label} AMX"], contenders[f"{label} VNNI"] = graphs
    q = bench_ort.ort_conv(c_in, c_out, k, pad, stride, size, rng.integers(-128, 128, (c_out, c_in, k, k)).astype(
        np.int8), True)
    xq = rng.integers(0, 256, (1, c_in, size, size)).astype(np.uint8)
    contenders["ORT u8"] = lambda: q.run(None, {"x": xq})
    return out_size * out_size * c_out * k * k * c_in, contenders


def fc_contenders(rng, n_in, n_out, batch):
    contenders = {}
    for label, dtype, lo, hi in (("U8", np.uint8, 0, 256), ("S8", np.int8, -128, 128)):
        x = np.asfortranarray(rng.integers(lo, hi, (n_in, batch)).astype(dtype))
        w = np.asfortranarray(rng.integers(lo, hi, (n_in, n_out)).astype(dtype))
        graphs = [built(amx, lambda x=x, w=w, dtype=dtype: bench_ort.graph_fc(
            x, w, np.zeros((n_out, batch), dtype, order="F"), 0)) for amx in (True, False)]
        same_outputs(*graphs)
        contenders[f"{label} AMX"], contenders[f"{label} VNNI"] = graphs
    session = bench_ort.ort_matmul(n_in, n_out, batch, rng.integers(-128, 128, (n_in, n_out)).astype(np.int8))
    a = rng.integers(0, 256, (batch, n_in)).astype(np.uint8)
    contenders["ORT u8"] = lambda: session.run(None, {"a": a})
    return n_in * n_out * batch, contenders


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--rows", default="", help="comma-separated name prefixes (default: all)")
    args = parser.parse_args(argv)
    if not isa.amx():
        print("this CPU or OS gives no AMX-INT8 tiles: nothing to compare")
        return 0
    bench_ort.ORT_THREADS = 1
    wanted = [r for r in args.rows.split(",") if r]
    rng = np.random.default_rng(0)
    rows = [(c[0], lambda c=c: conv_contenders(rng, *c[1:])) for c in bench_ort.CONVS]
    rows += [(f[0], lambda f=f: fc_contenders(rng, *f[1:])) for f in bench_ort.FCS]
    print(f"one thread, CPU time, medians of {args.repeat} turns; {os.uname().nodename}; load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    for name, make in rows:
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        macs, contenders = make()
        times = dict(zip(contenders, bench_ort.medians(list(contenders.values()), args.repeat,
                                                       clock=time.thread_time)))
        cells = "; ".join(f"{n} {t * 1e3:.3f} ms {macs / t / 1e9:.0f} GMAC/s" for n, t in times.items())
        ratios = "; ".join(f"{s} VNNI/AMX {times[s + ' VNNI'] / times[s + ' AMX']:.2f}, ORT/AMX "
                           f"{times['ORT u8'] / times[s + ' AMX']:.2f}" for s in ("U8", "S8"))
        print(f"{name}: {cells}; {ratios}; load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
