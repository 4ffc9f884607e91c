"""Float32 reductions of contiguous runs, element by element, written as LLVM IR and called from numba.

One call reduces ``n_taps`` runs of ``n`` float32 values that start at ``base + offsets[t]`` (byte offsets, an
int64 array) into ``n`` values at ``out``::

    out[j] = reduce over t < n_taps of  base[offsets[t] + 4 * j]      (j < n)

in whole vectors of ``LANES`` float32 and a masked last vector (nothing past ``n`` is read or written). Pooling
on channel-major planes is two such calls per output row: down the window's rows (the runs are input rows)
and across the window's columns (the runs are column phases of the first result), so every pass is along
contiguous memory. numba's own loops vectorize these too, but unrolled to four vectors of 16 with a scalar
remainder: on a 55-wide pooled row that is scalar code, four times slower than the masked vectors here.

``max_runs``: IEEE 754-2019 ``maximum`` in tap order (NaN wins over everything, +0.0 over -0.0:
``openvx.window_max.larger``'s rules), so the result does not depend on the order. ``sum_runs``: the sum
from +0.0 in tap order of each value times ``scale`` (a multiply, then an add: no fused multiply-add, so the
bits do not depend on the CPU), then divided by ``divisor`` (a scale and divisor of 1.0 change nothing).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.llvm_loops import constant, masked_lanes, splat, typed_args

LANES = 16
VECTORS = 4
"""Vectors of ``LANES`` a step (a 112-wide row in two steps, a 55-wide pooled row in one)."""
_F32, _I32, _I64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)


def _larger(b: ir.IRBuilder, m, v, ints: ir.VectorType):
    """``maximum(m, v)`` lane by lane: keep ``m`` when it is larger, NaN, or equal to ``v`` unless ``v`` is the
    +0.0 beside a -0.0 (``v``'s sign bit clear)."""
    keep = b.or_(b.fcmp_ordered(">", m, v), b.fcmp_unordered("uno", m, m))
    negative_v = b.icmp_signed("<", b.bitcast(v, ints), ir.Constant(ints, None))
    keep = b.or_(keep, b.and_(b.fcmp_ordered("==", m, v), negative_v))
    return b.select(keep, m, v)


def _define(module: ir.Module, name: str, maximum: bool, stride: int, vectors: int) -> ir.Function:
    """``f(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride[, divisor])`` (module doc) reading every
    ``stride``-th value of the runs: steps of ``vectors`` vectors (each its own chain of taps: one chain would
    wait on each compare and select in turn), each step's masks made once for all the rows; at stride 2 each
    vector is the even lanes of two loads."""
    vec = ir.VectorType(_F32, LANES)
    ints = ir.VectorType(_I32, LANES)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * 8 + ([] if maximum else [_F32, _F32])), name)
    fn.linkage = "internal"
    out, base, offsets, n_taps, n, n_rows, out_stride, base_stride = fn.args[:8]
    load, store, lanes_below = masked_lanes(module, vec)
    entry, block_head, block_start, row_head, row_start, tap_head, tap_body, row_end, block_end, done = (
        fn.append_basic_block(s) for s in ("entry", "block_head", "block_start", "row_head", "row_start", "tap_head",
                                           "tap_body", "row_end", "block_end", "done"))
    i64p = _I64.as_pointer()

    b = ir.IRBuilder(entry)
    first_offset = b.load(b.inttoptr(offsets, i64p))
    scale, divisor = (None, None) if maximum else (splat(b, fn.args[8], vec), splat(b, fn.args[9], vec))
    b.branch(block_head)

    h = ir.IRBuilder(block_head)  # a step of vectors * LANES outputs from j, while any is left
    j = h.phi(_I64, "j")
    h.cbranch(h.icmp_signed("<", j, n), block_start, done)
    j.add_incoming(constant(0), entry)

    b = ir.IRBuilder(block_start)  # the step's lanes below n, and where each vector's values lie
    byte = b.mul(j, constant(4))
    left = [b.sub(n, b.add(j, constant(LANES * v))) for v in range(vectors)]  # outputs left from vector v on
    masks = [lanes_below(b, count) for count in left]
    at = [b.add(byte, constant(4 * LANES * v)) for v in range(vectors)]
    if stride == 1:
        def read(b, run, v):
            return load(b, b.add(run, at[v]), masks[v])
    else:  # the values at 2 * (lane + k) of run + 2 * at: two loads' lanes below 2 * left - 1, and the even ones
        halves = [(lanes_below(b, b.sub(b.mul(count, constant(2)), constant(1))),
                   lanes_below(b, b.sub(b.mul(count, constant(2)), constant(1 + LANES)))) for count in left]
        evens = ir.Constant(ir.VectorType(_I32, LANES), list(range(0, 2 * LANES, 2)))

        def read(b, run, v):
            first = b.add(run, b.mul(at[v], constant(2)))
            low = load(b, first, halves[v][0])
            high = load(b, b.add(first, constant(4 * LANES)), halves[v][1])
            return b.shuffle_vector(low, high, evens)
    b.branch(row_head)

    h = ir.IRBuilder(row_head)  # row r of the step
    r = h.phi(_I64, "r")
    h.cbranch(h.icmp_signed("<", r, n_rows), row_start, block_end)
    r.add_incoming(constant(0), block_start)

    b = ir.IRBuilder(row_start)  # each vector's first tap (max) or +0.0 (sum)
    row_base = b.add(base, b.mul(r, base_stride))
    if maximum:
        first = b.add(row_base, first_offset)
        starts = [read(b, first, v) for v in range(vectors)]
    else:
        starts = [ir.Constant(vec, None)] * vectors
    b.branch(tap_head)

    t_builder = ir.IRBuilder(tap_head)
    t = t_builder.phi(_I64, "t")
    accs = [t_builder.phi(vec) for _ in range(vectors)]
    t_builder.cbranch(t_builder.icmp_signed("<", t, n_taps), tap_body, row_end)
    t.add_incoming(constant(1 if maximum else 0), row_start)
    for acc, start in zip(accs, starts):
        acc.add_incoming(start, row_start)

    b = ir.IRBuilder(tap_body)
    run = b.add(row_base, b.load(b.inttoptr(b.add(offsets, b.mul(t, constant(8))), i64p)))
    for v, acc in enumerate(accs):
        value = read(b, run, v)
        acc.add_incoming(_larger(b, acc, value, ints) if maximum else b.fadd(acc, b.fmul(value, scale)), tap_body)
    t.add_incoming(b.add(t, constant(1)), tap_body)
    b.branch(tap_head)

    b = ir.IRBuilder(row_end)
    row_out = b.add(out, b.mul(r, out_stride))
    for v, acc in enumerate(accs):
        store(b, acc if maximum else b.fdiv(acc, divisor), b.add(row_out, at[v]), masks[v])
    r.add_incoming(b.add(r, constant(1)), row_end)
    b.branch(row_head)

    b = ir.IRBuilder(block_end)
    j.add_incoming(b.add(j, constant(LANES * vectors)), block_end)
    b.branch(block_head)

    ir.IRBuilder(done).ret_void()
    return fn


def _codegen(name: str, maximum: bool, stride: int, vectors: int):
    def codegen(context, builder, signature, values):
        fn = builder.module.globals.get(name) or _define(builder.module, name, maximum, stride, vectors)
        kinds = (types.int64,) * 8 + (() if maximum else (types.float32, types.float32))
        builder.call(fn, [context.cast(builder, a, t, k) for a, t, k in zip(values, signature.args, kinds)])
        return context.get_dummy_value()
    return codegen


def _intrinsics(stride: int, vectors: int):
    @intrinsic
    def max_runs(typingctx, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride):
        """``(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride)``: for each row ``r < n_rows``,
        ``out + r * out_stride`` gets the maximum over the ``n_taps`` (at least one) runs at ``base + r *
        base_stride + offsets[t]`` (module doc); addresses, byte offsets, strides and counts int64."""
        args = (out, base, offsets, n_taps, n, n_rows, out_stride, base_stride)
        if not typed_args(args):
            return None
        return types.void(*(types.int64,) * 8), _codegen(f"openvx_nn_max_runs_s{stride}v{vectors}x{LANES}", True,
                                                      stride, vectors)

    @intrinsic
    def sum_runs(typingctx, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, scale, divisor):
        """``(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, scale, divisor)``: as ``max_runs``,
        the sum from +0.0 over the runs' values times ``scale`` in tap order, divided by ``divisor`` (floats;
        module doc)."""
        if not typed_args((out, base, offsets, n_taps, n, n_rows, out_stride, base_stride), (scale, divisor)):
            return None
        return (types.void(*(types.int64,) * 8, types.float32, types.float32),
                _codegen(f"openvx_nn_sum_runs_s{stride}v{vectors}x{LANES}", False, stride, vectors))
    return max_runs, sum_runs


max_runs, sum_runs = _intrinsics(1, VECTORS)
"""Reductions of contiguous runs: ``out[j]`` from ``base[offsets[t] + 4 * j]``, row after row."""
max_runs_2, sum_runs_2 = _intrinsics(2, VECTORS)
"""The same over every other value of the runs: ``out[j]`` from ``base[offsets[t] + 8 * j]`` (a stride of 2)."""
max_runs_short, sum_runs_short = _intrinsics(1, 1)
max_runs_short_2, sum_runs_short_2 = _intrinsics(2, 1)
"""The four above in steps of one vector: for runs of at most ``LANES`` values (a global pool's 7-wide rows)."""
