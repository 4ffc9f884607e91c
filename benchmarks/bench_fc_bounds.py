"""How far the 32-row fully connected layer of bench_ort.py (9216 -> 4096, batch 32) is from its bounds, one thread.

In turns in this process, each call timed by the calling thread's CPU time (``OPENVX_NN_THREADS=1``), medians:

- ``vpdpwssd`` alone: 24 independent 512-bit ``vpdpwssd`` a loop iteration on registers (no loads), the int16
  products a core can do: the physical bound of a Q7.8 layer on the VNNI route;
- the Q7.8 micro-kernel (``microkernel``'s s16 tile the planner takes for 32 rows) on cache-resident data;
- the layer's sums alone on the AMX micro-kernel (32 x 2 tiles, 128 output blocks of 32 channels over K = 9216):
  weights streamed as the layer reads them (37.7 MB a call), and one block's weights read 128 times (in L2);
- the layers as one-node OpenVX graphs (``bench_ort.graph_fc``): U8, S8, Q7.8, and ONNX Runtime's
  ``MatMulInteger`` (u8 x s8, one intra-op thread).

Usage: python benchmarks/bench_fc_bounds.py [--repeat N]
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
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from openvx_nn.kernels.engine import isa, microkernel, tiles

N_IN, N_OUT, ROWS = 9216, 4096, 32
ACCUMULATORS = 24


@intrinsic
def _vpdpwssd_loop(typingctx, n, buf):
    """``n`` iterations of ``ACCUMULATORS`` independent ``vpdpwssd`` (accumulators and operands from ``buf``,
    64-byte aligned, the sums stored back so nothing is folded away)."""
    def codegen(context, builder, signature, args):
        vec = ir.VectorType(ir.IntType(32), 16)
        fn = builder.module.declare_intrinsic("llvm.x86.avx512.vpdpwssd.512", fnty=ir.FunctionType(vec, [vec] * 3))
        at = builder.inttoptr(args[1], vec.as_pointer())
        slot = [builder.gep(at, [ir.Constant(ir.IntType(64), i)]) for i in range(ACCUMULATORS + 2)]
        first = [builder.load(p, align=64) for p in slot]
        a, b = first[-2:]
        entry = builder.block
        loop, done = builder.append_basic_block("loop"), builder.append_basic_block("done")
        builder.branch(loop)
        builder.position_at_end(loop)
        i = builder.phi(ir.IntType(64))
        accs = [builder.phi(vec) for _ in range(ACCUMULATORS)]
        sums = [builder.call(fn, [acc, a, b]) for acc in accs]
        i_next = builder.add(i, ir.Constant(ir.IntType(64), 1))
        builder.cbranch(builder.icmp_signed("<", i_next, args[0]), loop, done)
        i.add_incoming(ir.Constant(ir.IntType(64), 0), entry)
        i.add_incoming(i_next, loop)
        for acc, value, total in zip(accs, first, sums):
            acc.add_incoming(value, entry)
            acc.add_incoming(total, loop)
        builder.position_at_end(done)
        for p, total in zip(slot, sums):
            builder.store(total, p, align=64)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@numba.njit(nogil=True, cache=False)
def _pure(n, at):
    _vpdpwssd_loop(n, at)


def pure_peak():
    """(calls, GMAC of a call): the register-only ``vpdpwssd`` loop."""
    buf = np.ones((ACCUMULATORS + 3) * 16, np.int32)
    at = buf.ctypes.data + (-buf.ctypes.data) % 64
    n = 200_000
    return (lambda: _pure(n, at + 0 * buf.size)), n * ACCUMULATORS * 32 / 1e9  # buf lives as long as the call


def s16_tile():
    """The planner's Q7.8 tile for 32 rows on cache-resident data (9 taps of 16 steps, as bench_ort.peak)."""
    rows, vecs = tiles.choose_tile(16, ROWS, N_OUT)
    run, steps = bench_ort.cached_tile(microkernel.variant("avx512_vnni", "s16", rows, vecs), rows, vecs, 16)
    calls = 2000
    return (lambda: run(calls)), calls * steps * 2 / 1e9, (rows, vecs)


def amx_sums(rng, block_bytes: int | None):
    """The layer's sums on the AMX 32 x 2 tile, one output block after another (``block_bytes`` 0: every block
    reads the first block's weights)."""
    code = microkernel.variant("amx", "u8s8", 32, 2, True)

    @numba.njit(nogil=True, cache=False)
    def units(tile, addr, taps, w0, inner, step, n):
        for u in range(n):
            microkernel.tile_kernel(code, tile.ctypes.data, addr.ctypes.data, taps.ctypes.data, 1, inner,
                                    w0 + u * step, inner * 128)
    x = rng.integers(0, 256, (ROWS, N_IN)).astype(np.uint8)
    w = rng.integers(0, 256, (N_OUT // 32, N_IN // 4, 2, 16, 4)).astype(np.uint8)
    keep = (np.zeros(32 * 32, np.int32), np.array([x.ctypes.data + N_IN * r for r in range(ROWS)], np.int64),
            np.zeros(1, np.int64), w, x)
    step = N_IN * 32 if block_bytes is None else block_bytes
    return lambda: units(keep[0], keep[1], keep[2], keep[3].ctypes.data, N_IN // 4, step, N_OUT // 32)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if isa.selected() != "avx512_vnni":
        print(f"needs the avx512_vnni route (this run: {isa.selected()})")
        return 0
    rng = np.random.default_rng(2024)
    macs = N_IN * N_OUT * ROWS / 1e9
    pure, pure_gmac = pure_peak()
    tile, tile_gmac, tile_shape = s16_tile()
    contenders = {"vpdpwssd alone": (pure, pure_gmac), f"Q7.8 tile {tile_shape} cached": (tile, tile_gmac)}
    if isa.amx():
        contenders["AMX sums, weights streamed"] = (amx_sums(rng, None), macs)
        contenders["AMX sums, weights in L2"] = (amx_sums(rng, 0), macs)
    x = np.asfortranarray(rng.integers(0, 256, (N_IN, ROWS)).astype(np.uint8))
    w = np.asfortranarray(rng.integers(0, 256, (N_IN, N_OUT)).astype(np.uint8))
    xs = np.asfortranarray(rng.integers(-128, 128, (N_IN, ROWS)).astype(np.int8))
    ws = np.asfortranarray(rng.integers(-128, 128, (N_IN, N_OUT)).astype(np.int8))
    x16 = np.asfortranarray(rng.integers(-32768, 32768, (N_IN, ROWS)).astype(np.int16))
    w16 = np.asfortranarray(rng.integers(-256, 257, (N_IN, N_OUT)).astype(np.int16))
    contenders["ours U8"] = (bench_ort.graph_fc(x, w, np.zeros((N_OUT, ROWS), np.uint8, order="F"), 0), macs)
    contenders["ours S8"] = (bench_ort.graph_fc(xs, ws, np.zeros((N_OUT, ROWS), np.int8, order="F"), 0), macs)
    contenders["ours Q7.8"] = (bench_ort.graph_fc(x16, w16, np.zeros((N_OUT, ROWS), np.int16, order="F"), 8), macs)
    try:
        bench_ort.ORT_THREADS = 1
        session = bench_ort.ort_matmul(N_IN, N_OUT, ROWS, rng.integers(-128, 128, (N_IN, N_OUT)).astype(np.int8))
        a = np.ascontiguousarray(x.T)
        contenders["ORT MatMulInteger u8"] = (lambda: session.run(None, {"a": a}), macs)
    except ImportError:
        print("onnxruntime and onnx are not installed: ours only")
    times = bench_ort.medians([f for f, _ in contenders.values()], args.repeat, clock=time.thread_time)
    rates = {name: gmac / t for (name, (_, gmac)), t in zip(contenders.items(), times)}
    for (name, _), t in zip(contenders.items(), times):
        print(f"{name}: {t * 1e3:.3f} ms {rates[name]:.0f} GMAC/s")
    peak = rates["vpdpwssd alone"]
    print(f"Q7.8 layer at {rates['ours Q7.8'] / peak:.2f} of the vpdpwssd peak; its tile at "
          f"{rates[f'Q7.8 tile {tile_shape} cached'] / peak:.2f}")
    if "ORT MatMulInteger u8" in rates:
        ort = rates["ORT MatMulInteger u8"]
        print(f"ours / ORT u8: U8 {rates['ours U8'] / ort:.2f}, S8 {rates['ours S8'] / ort:.2f}, Q7.8 "
              f"{rates['ours Q7.8'] / ort:.2f}; the vpdpwssd peak / ORT u8 (Q7.8's bound on this route): "
              f"{peak / ort:.2f}")
    print(f"one thread, CPU time; {isa.selected()}, AMX {'on' if isa.amx() else 'off'}; "
          f"load {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
