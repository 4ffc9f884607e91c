"""Float32 reductions of contiguous runs, element by element, written as LLVM IR and called from numba.

One call reduces ``n_taps`` runs of ``n`` float32 values that start at ``base + offsets[t]`` (byte offsets, an
int64 array) into ``n`` values at ``out``::

    out[j] = reduce over t < n_taps of  base[offsets[t] + 4 * j]      (j < n)

in whole vectors of ``LANES`` float32 and a masked last vector (nothing past ``n`` is read or written), for
``n_rows`` rows at once. Pooling on channel-major planes is two such calls: down the window's rows for every
output row (the runs are input rows) and across the window's columns (the runs are the first result's rows, or
their column phases), so every pass is along contiguous memory. numba's own loops vectorize these too, but
unrolled to four vectors of 16 with a scalar remainder: a 55-wide pooled row ran as scalar code.

``max_runs``: ``llvm.maximum``, IEEE 754-2019 ``maximum`` (NaN wins over everything, +0.0 over -0.0:
``openvx.window_max.larger``'s rules), so the result does not depend on the order (a window holding NaNs gives
a NaN; LLVM does not say which payload). ``sum_runs``: the sum
from +0.0 in tap order of each value times ``scale``, as one fused multiply-add (``llvm.fma``: the same bits on
every CPU; a power-of-two scale makes the product exact for normal floats, so it is the sum of the scaled
values), then divided by ``divisor`` (a scale and divisor of 1.0 change nothing).

NNAPI's pooling rules (``float_pooling``, one pass over the window's taps as runs of channels): ``greater_runs``
the largest value a ``>`` test picks from -inf (a NaN fails it and is passed over; of equal values the first
visited stays, so a window's +0.0 and -0.0 give the one its order meets first); ``mean_runs`` the sum from +0.0
in tap order with plain additions, divided by ``divisor`` (the count of positions inside the input);
``l2_runs`` the same over each value's square, rounded before its addition, then square-rooted. Each result is
clamped to the fused activation's ``[lo, hi]`` (a NaN fails both tests and stays).

Element types. Each pass reads float32 or binary16 runs and writes float32 or binary16 outputs (``half_in``,
``half_out``; the ``_hf`` and ``_fh`` forms; NNAPI's ``_h`` forms both): binary16 lanes are widened exactly as they are loaded and each
result is narrowed once as it is stored (``support/binary16``), the reduction itself is float32 either way, so a
binary16 pool gives the float32 pool's results on the widened values, rounded once. The maximum keeps a signaling
NaN's bits through both conversions (it passes NaNs on unchanged); the sum takes the CPU's conversions alone
(``widen_arithmetic``, ``narrow_arithmetic``: its additions quiet every NaN anyway, so the bits are the same at a
fraction of the instructions; NNAPI's maximum never gives a NaN, so its forms take those too). Offsets and strides are in bytes whatever the element (a binary16 run's value ``j``
is at ``2 * j``).

Keys. A maximum of binary16 into binary16 converts nothing: it compares the binary16 bits as ordered integer
keys in 16-bit lanes, ``2 * LANES`` a vector (``key = h ^ ((h >> 15) & 0x7FFF)``, signed: -0.0 below +0.0; its
own inverse), and picks the operand ``llvm.maximum`` picks as x86 lowers it, whose choice depends only on each
operand's NaN-ness, sign and order: of ``maximum(x, y)`` (``x`` the running result, ``y`` the next tap) a NaN
``x`` with its sign set, else a NaN ``y``, else a NaN ``x``, else the larger. The float32 maximum returns one of
its operands' bits unchanged and the exact conversions give a binary16 back its own bits, so the keys give the
widened float32 pool's result rounded once, bit for bit. The first pass writes keys (``_hk``), the second reads
them (``_kh``): the rows between them are never turned back into bits.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.binary16 import narrow_arithmetic, narrow_lanes, widen_arithmetic, widen_lanes
from ..support.llvm_loops import constant, masked_lanes, splat, typed_args

LANES = 16
VECTORS = 4
"""Vectors of ``LANES`` a step (a 112-wide row in two steps, a 55-wide pooled row in one)."""
_F32, _I16, _I32, _I64 = ir.FloatType(), ir.IntType(16), ir.IntType(32), ir.IntType(64)

MAXIMUM, SUM, GREATER, MEAN, SQUARES = range(5)
"""The reductions (module doc): IEEE ``maximum``; the scaled sum; and NNAPI's three, each result clamped to the
fused activation's ``[lo, hi]``: the largest value a ``>`` test picks from -inf, the sum and the sum of squares
over ``divisor`` (square-rooted)."""
FLOATS = (0, 2, 3, 3, 3)
"""How many float arguments each kind takes after the eight integers."""


def _key_maximum(b: ir.IRBuilder, x: ir.Value, y: ir.Value, keyed: bool) -> ir.Value:
    """``llvm.maximum``'s pick (module doc, keys) of the key ``x`` (the running result) and ``y`` (i16 lanes: a
    key where ``keyed``, else binary16 bits), as a key."""
    kind = y.type
    if keyed:  # a NaN's key lies outside [key(-inf), key(+inf)] = [-0x7C01, 0x7C00]: one unsigned comparison
        ky = y
        y_nan = b.icmp_unsigned(">", b.add(y, _const16(kind, 0x7C01)), _const16(kind, 0xF801))
    else:
        ky = _as_key(b, y)
        y_nan = b.icmp_unsigned(">", b.and_(y, _const16(kind, 0x7FFF)), _const16(kind, 0x7C00))
    x_negative_nan = b.icmp_signed("<", x, _const16(kind, -0x7C01))  # a key below -inf's: a NaN, its sign set
    larger = b.select(b.icmp_signed(">", ky, x), ky, x)  # a NaN x with its sign clear is above every number
    return b.select(x_negative_nan, x, b.select(y_nan, ky, larger))


def _as_key(b: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """The key of the binary16 bits ``h`` (i16 lanes), or the bits of the key ``h``: its own inverse."""
    return b.xor(h, b.and_(b.ashr(h, _const16(h.type, 15)), _const16(h.type, 0x7FFF)))


def _const16(kind: ir.VectorType, number: int) -> ir.Constant:
    return ir.Constant(kind, [number] * kind.count)


def _define(module: ir.Module, name: str, kind: int, stride: int, vectors: int, half_in: bool,
            half_out: bool, keyed: str = "") -> ir.Function:
    """``f(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride[, floats])`` (module doc; the floats
    ``kind`` takes: none, ``scale, divisor`` or ``divisor, lo, hi``) reading
    every ``stride``-th value of the runs, row after row (memory in order), each row in steps of ``vectors``
    vectors (each its own chain of taps: one chain would wait on each compare and select in turn): whole steps
    with plain loads, then the rest of the row through masks made once; at stride 2 each vector is the even
    lanes of two loads; binary16 lanes (``half_in``, ``half_out``) are widened as loaded, narrowed as stored; a
    maximum of binary16 into binary16 compares keys (module doc), ``keyed`` "out" writing them, "in" reading them."""
    maximum, clamped = kind == MAXIMUM, kind >= GREATER
    keys = maximum and half_in and half_out  # integer keys, no conversion (module doc)
    n_lanes = 2 * LANES if keys else LANES
    vec = ir.VectorType(_F32, LANES)
    halves = ir.VectorType(_I16, n_lanes)
    acc_vec = halves if keys else vec
    in_vec, in_size = (halves, 2) if half_in else (vec, 4)
    out_vec, out_size = (halves, 2) if half_out else (vec, 4)
    in_p, out_p = in_vec.as_pointer(), out_vec.as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * 8 + [_F32] * FLOATS[kind]), name)
    fn.linkage = "internal"
    out, base, offsets, n_taps, n, n_rows, out_stride, base_stride = fn.args[:8]
    load, _, lanes_below = masked_lanes(module, in_vec)
    _, store, _ = masked_lanes(module, out_vec)
    fma = module.declare_intrinsic(f"llvm.fma.v{LANES}f32", fnty=ir.FunctionType(vec, [vec, vec, vec]))
    # IEEE 754-2019 maximum: NaN wins, -0.0 below +0.0 (one vrangeps with AVX-512DQ, a short sequence elsewhere)
    larger = module.declare_intrinsic(f"llvm.maximum.v{LANES}f32", fnty=ir.FunctionType(vec, [vec, vec]))
    sqrt = module.declare_intrinsic(f"llvm.sqrt.v{LANES}f32", fnty=ir.FunctionType(vec, [vec]))
    i64p = _I64.as_pointer()
    step = n_lanes * vectors
    evens = ir.Constant(ir.VectorType(_I32, n_lanes), list(range(0, 2 * n_lanes, 2)))

    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    first_offset = b.load(b.inttoptr(offsets, i64p))
    scale = divisor = low = high = None
    if kind == SUM:
        scale, divisor = splat(b, fn.args[8], vec), splat(b, fn.args[9], vec)
    elif clamped:
        divisor, low, high = (splat(b, a, vec) for a in fn.args[8:11])
    whole = b.sub(n, b.srem(n, constant(step)))  # outputs [0, whole) in whole steps, [whole, n) in the last
    left = [b.sub(b.sub(n, whole), constant(n_lanes * v)) for v in range(vectors)]  # lanes of vector v in the last
    tail_masks = [lanes_below(b, count) for count in left]
    tail_halves = [(lanes_below(b, b.sub(b.mul(count, constant(2)), constant(1))),
                    lanes_below(b, b.sub(b.mul(count, constant(2)), constant(1 + n_lanes)))) for count in left]
    high_whole = lanes_below(b, constant(n_lanes - 1))  # a whole step's last vector needs 31 of its 32 values

    # a maximum passes a NaN on as it is: its conversions keep a signaling NaN's bits; a sum quiets every NaN
    widen, narrow = (widen_lanes, narrow_lanes) if maximum else (widen_arithmetic, narrow_arithmetic)

    def widened(b, lanes):
        return b.bitcast(widen(b, lanes), vec) if half_in and not keys else lanes

    def reader(masks, halves):
        """``read(b, run, j, v)``: vector ``v`` of the step at output ``j`` of ``run``, as float32."""
        def read(b, run, j, v):
            at = b.mul(b.add(j, constant(n_lanes * v)), constant(in_size))
            if stride == 1:
                address = b.add(run, at)
                lanes = load(b, address, masks[v]) if masks else b.load(b.inttoptr(address, in_p), align=in_size)
                return widened(b, lanes)
            first = b.add(run, b.mul(at, constant(2)))  # the values at 2 * (lane + k) of the run
            second = b.add(first, constant(in_size * n_lanes))
            if halves:
                low, high = load(b, first, halves[v][0]), load(b, second, halves[v][1])
            else:
                low = b.load(b.inttoptr(first, in_p), align=in_size)
                high = (load(b, second, high_whole) if v == vectors - 1 else
                        b.load(b.inttoptr(second, in_p), align=in_size))
            return widened(b, b.shuffle_vector(low, high, evens))
        return read

    row_head, row_start, done = (fn.append_basic_block(s) for s in ("row_head", "row_start", "done"))
    b.branch(row_head)
    h = ir.IRBuilder(row_head)
    r = h.phi(_I64, "r")
    h.cbranch(h.icmp_signed("<", r, n_rows), row_start, done)
    r.add_incoming(constant(0), entry)
    b = ir.IRBuilder(row_start)
    row_base, row_out = b.add(base, b.mul(r, base_stride)), b.add(out, b.mul(r, out_stride))

    def emit_step(j, read, masks, after: ir.Block, vectors: int = vectors) -> ir.Block:
        """Blocks computing ``vectors`` vectors from output ``j``, ending in a branch to ``after``; returns the
        first."""
        start, tap_head, tap_body, end = (fn.append_basic_block(s) for s in ("start", "tap_head", "tap_body", "end"))
        b = ir.IRBuilder(start)
        if maximum:
            first = b.add(row_base, first_offset)
            starts = [read(b, first, j, v) for v in range(vectors)]
            if keys and keyed != "in":
                starts = [_as_key(b, value) for value in starts]
        elif kind == GREATER:
            starts = [ir.Constant(vec, [float("-inf")] * LANES)] * vectors
        else:
            starts = [ir.Constant(vec, None)] * vectors
        b.branch(tap_head)
        th = ir.IRBuilder(tap_head)
        t = th.phi(_I64, "t")
        accs = [th.phi(acc_vec) for _ in range(vectors)]
        th.cbranch(th.icmp_signed("<", t, n_taps), tap_body, end)
        t.add_incoming(constant(1 if maximum else 0), start)
        for acc, value in zip(accs, starts):
            acc.add_incoming(value, start)
        b = ir.IRBuilder(tap_body)
        run = b.add(row_base, b.load(b.inttoptr(b.add(offsets, b.mul(t, constant(8))), i64p)))
        for v, acc in enumerate(accs):
            value = read(b, run, j, v)
            if keys:
                value = _key_maximum(b, acc, value, keyed == "in")
            elif maximum:
                value = b.call(larger, [acc, value])
            elif kind == SUM:
                value = b.call(fma, [value, scale, acc])
            elif kind == GREATER:  # a NaN fails the test: passed over
                value = b.select(b.fcmp_ordered(">", value, acc), value, acc)
            else:  # separate multiplies and adds, in tap order
                value = b.fadd(acc, b.fmul(value, value) if kind == SQUARES else value)
            acc.add_incoming(value, tap_body)
        t.add_incoming(b.add(t, constant(1)), tap_body)
        b.branch(tap_head)
        b = ir.IRBuilder(end)
        for v, acc in enumerate(accs):
            result = acc if kind in (MAXIMUM, GREATER) else b.fdiv(acc, divisor)
            if kind == SQUARES:
                result = b.call(sqrt, [result])
            if clamped:  # a NaN fails both tests and stays
                result = b.select(b.fcmp_ordered("<", result, low), low, result)
                result = b.select(b.fcmp_ordered(">", result, high), high, result)
            if keys:
                result = result if keyed == "out" else _as_key(b, result)
            elif half_out:  # rounded once, here
                result = narrow(b, b.bitcast(result, ir.VectorType(_I32, LANES)))
            address = b.add(row_out, b.mul(b.add(j, constant(n_lanes * v)), constant(out_size)))
            if masks:
                store(b, result, address, masks[v])
            else:
                b.store(result, b.inttoptr(address, out_p), align=out_size)
        b.branch(after)
        return start

    step_head, tail_check, row_next = (fn.append_basic_block(s) for s in ("step_head", "tail_check", "row_next"))
    b.branch(step_head)
    h = ir.IRBuilder(step_head)
    j = h.phi(_I64, "j")
    step_next = fn.append_basic_block("step_next")
    first_whole = emit_step(j, reader(None, None), None, step_next)
    h.cbranch(h.icmp_signed("<", j, whole), first_whole, tail_check)
    j.add_incoming(constant(0), row_start)
    b = ir.IRBuilder(step_next)
    j.add_incoming(b.add(j, constant(step)), step_next)
    b.branch(step_head)

    b = ir.IRBuilder(tail_check)  # the last step in as many vectors as it has values for (none: nothing)
    count = b.sdiv(b.add(b.sub(n, whole), constant(n_lanes - 1)), constant(n_lanes))
    choose = b.switch(count, row_next)
    read_tail = reader(tail_masks, tail_halves)
    for k in range(1, vectors + 1):
        choose.add_case(constant(k), emit_step(whole, read_tail, tail_masks, row_next, k))

    b = ir.IRBuilder(row_next)
    r.add_incoming(b.add(r, constant(1)), row_next)
    b.branch(row_head)

    ir.IRBuilder(done).ret_void()
    return fn


def _codegen(name: str, kind: int, stride: int, vectors: int, half_in: bool, half_out: bool, keyed: str = ""):
    def codegen(context, builder, signature, values):
        fn = builder.module.globals.get(name) or _define(builder.module, name, kind, stride, vectors, half_in,
                                                         half_out, keyed)
        kinds = (types.int64,) * 8 + (types.float32,) * FLOATS[kind]
        builder.call(fn, [context.cast(builder, a, t, k) for a, t, k in zip(values, signature.args, kinds)])
        return context.get_dummy_value()
    return codegen


def _intrinsics(stride: int, vectors: int, half_in: bool = False, half_out: bool = False, keyed: str = ""):
    kinds = {"in": "kh", "out": "hk"}.get(keyed, f"{'h' if half_in else 'f'}{'h' if half_out else 'f'}")

    @intrinsic
    def max_runs(typingctx, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride):
        """``(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride)``: for each row ``r < n_rows``,
        ``out + r * out_stride`` gets the maximum over the ``n_taps`` (at least one) runs at ``base + r *
        base_stride + offsets[t]`` (module doc); addresses, byte offsets, strides and counts int64."""
        args = (out, base, offsets, n_taps, n, n_rows, out_stride, base_stride)
        if not typed_args(args):
            return None
        return types.void(*(types.int64,) * 8), _codegen(
            f"openvx_nn_max_runs_s{stride}v{vectors}x{LANES}{kinds}", MAXIMUM, stride, vectors, half_in, half_out,
            keyed)

    @intrinsic
    def sum_runs(typingctx, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, scale, divisor):
        """``(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, scale, divisor)``: as ``max_runs``,
        the sum from +0.0 over the runs' values times ``scale`` in tap order, divided by ``divisor`` (floats;
        module doc)."""
        if not typed_args((out, base, offsets, n_taps, n, n_rows, out_stride, base_stride), (scale, divisor)):
            return None
        return (types.void(*(types.int64,) * 8, types.float32, types.float32),
                _codegen(f"openvx_nn_sum_runs_s{stride}v{vectors}x{LANES}{kinds}", SUM, stride, vectors, half_in,
                         half_out))
    return max_runs, sum_runs


max_runs, sum_runs = _intrinsics(1, VECTORS)
"""Reductions of contiguous runs: ``out[j]`` from ``base[offsets[t] + 4 * j]``, row after row."""
max_runs_2, sum_runs_2 = _intrinsics(2, VECTORS)
"""The same over every other value of the runs: ``out[j]`` from ``base[offsets[t] + 8 * j]`` (a stride of 2)."""
max_runs_hf, sum_runs_hf = _intrinsics(1, VECTORS, half_in=True)
"""``max_runs`` and ``sum_runs`` reading binary16 runs (``out[j]`` from ``base[offsets[t] + 2 * j]``), writing
float32."""
max_runs_fh, sum_runs_fh = _intrinsics(1, VECTORS, half_out=True)
"""``max_runs`` and ``sum_runs`` writing binary16 outputs (``out + 2 * j``), each rounded once."""
max_runs_2fh, sum_runs_2fh = _intrinsics(2, VECTORS, half_out=True)
"""``max_runs_2`` and ``sum_runs_2`` writing binary16 outputs."""
max_runs_hk = _intrinsics(1, VECTORS, half_in=True, half_out=True, keyed="out")[0]
"""``max_runs`` of binary16 runs compared as integer keys, writing the keys (module doc)."""
max_runs_kh, max_runs_2kh = (_intrinsics(stride, VECTORS, half_in=True, half_out=True, keyed="in")[0]
                             for stride in (1, 2))
"""``max_runs`` and ``max_runs_2`` of runs of keys, writing binary16 (module doc)."""


def _clamped(kind: int, half: bool):
    name = f"openvx_nn_{('greater', 'mean', 'l2')[kind - GREATER]}_runs_v{VECTORS}x{LANES}{'hh' if half else 'ff'}"

    @intrinsic
    def runs(typingctx, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, divisor, lo, hi):
        """``(out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, divisor, lo, hi)``: as ``max_runs``
        (stride 1) under NNAPI's rules (module doc), each result clamped to ``[lo, hi]``."""
        if not typed_args((out, base, offsets, n_taps, n, n_rows, out_stride, base_stride), (divisor, lo, hi)):
            return None
        return (types.void(*(types.int64,) * 8, *(types.float32,) * 3),
                _codegen(name, kind, 1, VECTORS, half, half))
    return runs


greater_runs, mean_runs, l2_runs = (_clamped(kind, False) for kind in (GREATER, MEAN, SQUARES))
"""NNAPI's maximum, average and L2 of contiguous float32 runs (the ``divisor`` the window's count), clamped."""
greater_runs_h, mean_runs_h, l2_runs_h = (_clamped(kind, True) for kind in (GREATER, MEAN, SQUARES))
"""The same reading and writing binary16: widened as loaded, each result narrowed once as stored."""
