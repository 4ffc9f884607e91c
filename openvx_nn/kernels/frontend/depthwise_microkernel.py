"""The float32 depthwise micro-kernel: one LLVM function for a run of output pixels along a row, every channel.

``run(out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1, n_vec, valid, lo,
hi)`` computes ``n`` output pixels (``out_step`` bytes apart in ``out``; their windows ``x_step`` apart in ``x``)
of a depthwise window whose taps ``ky0 <= ky < ky1``, ``kx0 <= kx < kx1`` are read at ``x + ky * x_row + kx *
x_col`` (byte steps, the dilation included) with weights at ``w + ky * w_row + kx * w_col``; channels are
contiguous in ``x``, ``w``, ``bias`` and ``out`` alike: ``n_vec`` whole vectors then, when ``valid`` > 0, one
vector of which only the first ``valid`` channels exist (read and written through masks: nothing past the
channels is touched). The caller passes the tap ranges inside the image, so no padded copy of the input is made
(taps over zero padding add nothing).

Pixels are taken ``PIXELS`` at a time, each channel vector of them in turn (their window of every channel then
stays in L1 for the next vector; a channel-outer order re-read the rows from L2 per vector), so ``PIXELS``
independent multiply-add chains run together; a last pixel alone takes ``VECTORS`` channel vectors at a time
instead (the edge columns of small maps, where single chains waited on the multiply-add latency). Each output
sums its bias then its taps in row order (``bias_last``: its taps from +0.0 in row order, then the bias, and a
NaN stored canonical under a finite clamp), each tap one ``llvm.fma``: the order does not depend on the blocking,
so every width and blocking gives the same bits. The clamp follows (a NaN fails both tests and stays).

``slide(out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec, col0, width, lo, hi)`` computes
the ``n`` output pixels of a whole row for windows ``kw`` (3 or 5) taps across at stride 1 or 2 (one function per
pair), ``n_vec`` whole channel vectors: pixel ``p``'s taps start at column ``col0 + p * stride`` (``x_col`` bytes
apart; ``x`` addresses column 0 of the first window, which may lie in the left padding), rows ``ky0 <= ky < ky1``.
Runs of ``SLIDE_RUN`` pixels load each of their ``stride * (SLIDE_RUN - 1) + kw`` input columns of a filter row
once and add it into every pixel whose window holds it (a run's loads fall from ``kw`` per multiply-add at stride 1
to about one per ``kw``); columns outside ``[0, width)`` are skipped by a test made once per run (runs wholly
inside take a copy without tests), and the last run stores only its pixels below ``n``, so a row of 7 pixels is
one run of 7 chains. Each pixel still takes its taps in row order, one ``llvm.fma`` each, in the order above: the
bits are ``run``'s. One thread, 64-byte aligned, against ORT's Conv node: 28x28x240 5x5 from 0.79 to 1.26-1.42 of
ORT, 7x7x1152 5x5 from 0.76-0.82 to 1.40-1.64 (``benchmarks/bench_depthwise.py``). At stride 2 the 3x3 windows
stay on ``float_microkernel.depthwise_3x3``: sliding measured 0.65-0.8 of it on 56x56x128 and 28x28x256.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.llvm_loops import constant, masked_lanes, splat, typed_args
from .float_microkernel import _opaque

PIXELS = 8
"""Pixels of a run summed together: eight chains of one vector (plus one weight vector: 9 registers, within AVX2's
16); one thread, 14x14x240 5x5 stride 1, runs of 4 measured slower and 12 no faster."""
VECTORS = 8
"""Channel vectors of a lone pixel summed together."""
_F32, _I64 = ir.FloatType(), ir.IntType(64)
_N_INTS = 17
_SLIDE_INTS = 15
SLIDE_RUN = 8
"""Pixels of a ``slide`` run: 8 chains, with a 5x5 row's 5 weights and one input column, 14 registers."""


def _loop(fn: ir.Function, b: ir.IRBuilder, start, stop, step: int, carried: list, body, label: str):
    """``for i = start; i + step <= stop; i += step`` carrying ``carried`` values: ``body(builder, i, values)``
    returns (its builder at the end, the new values). Returns (the builder after the loop, the last ``i``, the
    values after the loop)."""
    before = b.block
    head, inside, done = (fn.append_basic_block(f"{label}_{s}") for s in ("head", "body", "done"))
    b.branch(head)
    h = ir.IRBuilder(head)
    i = h.phi(_I64, label)
    phis = [h.phi(value.type) for value in carried]
    h.cbranch(h.icmp_signed("<=", h.add(i, constant(step)), stop), inside, done)
    end, new = body(ir.IRBuilder(inside), i, phis)
    following = end.add(i, constant(step))
    end.branch(head)
    i.add_incoming(start, before)
    i.add_incoming(following, end.block)
    for phi, first, last in zip(phis, carried, new):
        phi.add_incoming(first, before)
        phi.add_incoming(last, end.block)
    return ir.IRBuilder(done), i, phis


def _define(module: ir.Module, name: str, lanes: int, bias_last: bool) -> ir.Function:
    vec = ir.VectorType(_F32, lanes)
    fma = module.declare_intrinsic(f"llvm.fma.v{lanes}f32", fnty=ir.FunctionType(vec, [vec, vec, vec]))
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * _N_INTS + [_F32] * 2), name)
    fn.linkage = "internal"
    (out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1, n_vec, valid, lo,
     hi) = fn.args
    vecp = vec.as_pointer()
    vec_bytes = 4 * lanes
    masked_load, masked_store, lanes_below = masked_lanes(module, vec)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    low, high = splat(b, lo, vec), splat(b, hi, vec)
    zero = splat(b, ir.Constant(_F32, 0.0), vec)
    clamped = b.or_(b.fcmp_ordered(">", lo, ir.Constant(_F32, float("-inf"))),
                    b.fcmp_ordered("<", hi, ir.Constant(_F32, float("inf"))))
    canonical = splat(b, ir.Constant(_F32, float("nan")), vec)
    mask = lanes_below(b, valid)

    def load(b: ir.IRBuilder, at, masked: bool):
        return masked_load(b, at, mask) if masked else b.load(b.inttoptr(at, vecp), align=4)

    def block(b: ir.IRBuilder, p, channel, pixels: int, vectors: int, masked: bool) -> ir.IRBuilder:
        # ``pixels`` x ``vectors`` outputs from pixel ``p``, channel byte offset ``channel``: taps, then the end.
        x_at = b.add(b.add(x, b.mul(p, x_step)), channel)
        w_at = b.add(w, channel)
        bias_at = b.add(bias, channel)
        biases = [load(b, b.add(bias_at, constant(vec_bytes * v)), masked) for v in range(vectors)]
        start = [zero if bias_last else biases[v] for _ in range(pixels) for v in range(vectors)]

        def row(b: ir.IRBuilder, ky, acc):
            x_ky, w_ky = b.add(x_at, b.mul(ky, x_row)), b.add(w_at, b.mul(ky, w_row))

            def tap(b: ir.IRBuilder, kx, acc):
                x_tap, w_tap = b.add(x_ky, b.mul(kx, x_col)), b.add(w_ky, b.mul(kx, w_col))
                weights = [load(b, b.add(w_tap, constant(vec_bytes * v)), masked) for v in range(vectors)]
                new = []
                for j in range(pixels):
                    x_pixel = b.add(x_tap, b.mul(constant(j), x_step))
                    for v in range(vectors):
                        value = load(b, b.add(x_pixel, constant(vec_bytes * v)), masked)
                        new.append(b.call(fma, [value, weights[v], acc[j * vectors + v]]))
                return b, new
            b, _, acc = _loop(fn, b, kx0, kx1, 1, acc, tap, "kx")
            return b, acc
        b, _, sums = _loop(fn, b, ky0, ky1, 1, start, row, "ky")
        out_at = b.add(b.add(out, b.mul(p, out_step)), channel)
        for j in range(pixels):
            for v in range(vectors):
                value = sums[j * vectors + v]
                if bias_last:
                    value = b.fadd(value, biases[v])
                value = b.select(b.fcmp_ordered("<", value, low), low, value)
                value = b.select(b.fcmp_ordered(">", value, high), high, value)
                if bias_last:
                    value = b.select(clamped, b.select(b.fcmp_unordered("uno", value, value), canonical, value),
                                     value)
                at = b.add(b.add(out_at, b.mul(constant(j), out_step)), constant(vec_bytes * v))
                if masked:
                    masked_store(b, value, at, mask)
                else:
                    b.store(value, b.inttoptr(at, vecp), align=4)
        return b

    def pixels(b: ir.IRBuilder, p, vectors: int) -> ir.IRBuilder:
        # Every channel of pixel ``p``: whole vectors ``vectors`` at a time, then one at a time, then the partial one.
        v = constant(0)
        for step in dict.fromkeys((vectors, 1)):
            b, v, _ = _loop(fn, b, v, n_vec, step, [],
                            lambda b, i, _, step=step: (block(b, p, b.mul(i, constant(vec_bytes)), 1, step, False),
                                                        []), f"v{step}")
        return partial(b, lambda b, last: block(b, p, last, 1, 1, True))

    def partial(b: ir.IRBuilder, body) -> ir.IRBuilder:
        # ``body(builder, channel offset)`` on the partial vector, when there is one.
        inside, after = fn.append_basic_block("partial"), fn.append_basic_block("partial_done")
        last = b.mul(n_vec, constant(vec_bytes))
        b.cbranch(b.icmp_signed(">", valid, constant(0)), inside, after)
        body(ir.IRBuilder(inside), last).branch(after)
        return ir.IRBuilder(after)

    def runs(b: ir.IRBuilder, channel, masked: bool) -> ir.IRBuilder:
        # One channel vector of the whole runs of ``PIXELS``.
        b, _, _ = _loop(fn, b, constant(0), n, PIXELS, [],
                        lambda b, i, _: (block(b, i, channel, PIXELS, 1, masked), []), "runs")
        return b

    b, _, _ = _loop(fn, b, constant(0), n_vec, 1, [],
                    lambda b, i, _: (runs(b, b.mul(i, constant(vec_bytes)), False), []), "vectors")
    b = partial(b, lambda b, last: runs(b, last, True))
    b, _, _ = _loop(fn, b, b.mul(b.sdiv(n, constant(PIXELS)), constant(PIXELS)), n, 1, [],
                    lambda b, i, _: (pixels(b, i, VECTORS), []), "pixels")
    b.ret_void()
    return fn


def _define_slide(module: ir.Module, name: str, lanes: int, bias_last: bool, kw: int, stride: int,
                  pixels: int) -> ir.Function:
    """The ``slide`` function (module doc) for ``kw`` taps across at ``stride``, runs of ``pixels``."""
    vec = ir.VectorType(_F32, lanes)
    fma = module.declare_intrinsic(f"llvm.fma.v{lanes}f32", fnty=ir.FunctionType(vec, [vec, vec, vec]))
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * _SLIDE_INTS + [_F32] * 2), name)
    fn.linkage = "internal"
    out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec, col0, width, lo, hi = fn.args
    vecp = vec.as_pointer()
    vec_bytes = 4 * lanes
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    low, high = splat(b, lo, vec), splat(b, hi, vec)
    zero = splat(b, ir.Constant(_F32, 0.0), vec)
    clamped = b.or_(b.fcmp_ordered(">", lo, ir.Constant(_F32, float("-inf"))),
                    b.fcmp_ordered("<", hi, ir.Constant(_F32, float("inf"))))
    canonical = splat(b, ir.Constant(_F32, float("nan")), vec)
    columns = stride * (pixels - 1) + kw

    def load(b: ir.IRBuilder, at):
        return b.load(b.inttoptr(at, vecp), align=4)

    def when(b: ir.IRBuilder, flag, body, values: list) -> tuple[ir.IRBuilder, list]:
        # ``body(builder, values) -> new values`` where ``flag`` holds; the values either way after.
        inside, after = fn.append_basic_block("when"), fn.append_basic_block("when_done")
        before = b.block
        b.cbranch(flag, inside, after)
        t = ir.IRBuilder(inside)
        new = body(t, values)
        t.branch(after)
        a = ir.IRBuilder(after)
        merged = []
        for old, value in zip(values, new):
            if value is old:
                merged.append(old)
                continue
            phi = a.phi(old.type)
            phi.add_incoming(old, before)
            phi.add_incoming(value, t.block)
            merged.append(phi)
        return a, merged

    def run(b: ir.IRBuilder, p, channel) -> ir.IRBuilder:
        # ``pixels`` outputs from pixel ``p`` (those below ``n`` stored) of the vector at byte offset ``channel``.
        first = b.add(col0, b.mul(p, constant(stride)))
        x_at = b.add(b.add(x, b.mul(b.mul(p, constant(stride)), x_col)), channel)
        inside = [b.icmp_unsigned("<", b.add(first, constant(i)), width) for i in range(columns)]
        bias_vec = load(b, b.add(bias, channel))
        start = [zero if bias_last else bias_vec] * pixels

        def rows(b: ir.IRBuilder, checked: bool):
            def row(b: ir.IRBuilder, ky, acc):
                x_ky = _opaque(b, b.add(x_at, b.mul(ky, x_row)))
                w_ky = b.add(b.add(w, channel), b.mul(ky, w_row))
                weights = [load(b, b.add(w_ky, b.mul(constant(kx), w_col))) for kx in range(kw)]
                acc = list(acc)
                for i in range(columns):
                    # Input column ``i`` (when inside the image) is tap ``i - stride * j`` of pixel ``j``: read
                    # once, used by every pixel whose window holds it; each pixel takes its taps in ascending order.
                    def column(b: ir.IRBuilder, acc, i=i):
                        value = load(b, b.add(x_ky, b.mul(constant(i), x_col)))
                        acc = list(acc)
                        for j in range(pixels):
                            kx = i - stride * j
                            if 0 <= kx < kw:
                                acc[j] = b.call(fma, [value, weights[kx], acc[j]])
                        return acc
                    if checked:
                        b, acc = when(b, inside[i], column, acc)
                    else:
                        acc = column(b, acc)
                return b, acc
            b, _, sums = _loop(fn, b, ky0, ky1, 1, start, row, "ky_checked" if checked else "ky")
            return b, sums
        # Runs whose columns all lie inside the image skip the tests.
        whole = b.and_(b.icmp_signed(">=", first, constant(0)),
                       b.icmp_signed("<=", b.add(first, constant(columns)), width))
        plain, edge, joined = (fn.append_basic_block(label) for label in ("plain", "edge", "joined"))
        b.cbranch(whole, plain, edge)
        p_end, p_sums = rows(ir.IRBuilder(plain), False)
        p_end.branch(joined)
        e_end, e_sums = rows(ir.IRBuilder(edge), True)
        e_end.branch(joined)
        b = ir.IRBuilder(joined)
        sums = []
        for one, other in zip(p_sums, e_sums):
            phi = b.phi(one.type)
            phi.add_incoming(one, p_end.block)
            phi.add_incoming(other, e_end.block)
            sums.append(phi)
        out_at = _opaque(b, b.add(b.add(out, b.mul(p, out_step)), channel))
        for j in range(pixels):
            value = sums[j]
            if bias_last:
                value = b.fadd(value, bias_vec)
            value = b.select(b.fcmp_ordered("<", value, low), low, value)
            value = b.select(b.fcmp_ordered(">", value, high), high, value)
            if bias_last:
                value = b.select(clamped, b.select(b.fcmp_unordered("uno", value, value), canonical, value), value)

            def store(b: ir.IRBuilder, _, value=value, j=j):
                b.store(value, b.inttoptr(b.add(out_at, b.mul(constant(j), out_step)), vecp), align=4)
                return []
            b, _ = when(b, b.icmp_signed("<", b.add(p, constant(j)), n), store, [])
        return b

    def runs(b: ir.IRBuilder, channel) -> ir.IRBuilder:
        b, _, _ = _loop(fn, b, constant(0), b.add(n, constant(pixels - 1)), pixels, [],
                        lambda b, p, _: (run(b, p, channel), []), "runs")
        return b

    b, _, _ = _loop(fn, b, constant(0), n_vec, 1, [],
                    lambda b, v, _: (runs(b, b.mul(v, constant(vec_bytes))), []), "vectors")
    b.ret_void()
    return fn


def _slide(lanes: int, bias_last: bool, kw: int, stride: int):
    pixels = SLIDE_RUN
    name = f"openvx_nn_float_depthwise_slide_x{lanes}_k{kw}_s{stride}{'_bias_last' if bias_last else ''}"

    def codegen(context, builder, signature, values):
        fn = builder.module.globals.get(name) or _define_slide(builder.module, name, lanes, bias_last, kw, stride,
                                                               pixels)
        cast = [context.cast(builder, a, t, types.int64 if k < _SLIDE_INTS else types.float32)
                for k, (a, t) in enumerate(zip(values, signature.args))]
        builder.call(fn, cast)
        return context.get_dummy_value()

    @intrinsic
    def slide(typingctx, out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec, col0, width, lo,
              hi):
        """``slide(out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec, col0, width, lo, hi)``
        (module doc): int64 addresses, byte steps and counts, float ``lo`` and ``hi``."""
        ints = (out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec, col0, width)
        if not typed_args(ints, (lo, hi)):
            return None
        return types.void(*(types.int64,) * _SLIDE_INTS, types.float32, types.float32), codegen
    return slide


def _run(lanes: int, bias_last: bool):
    name = f"openvx_nn_float_depthwise_run_x{lanes}{'_bias_last' if bias_last else ''}"

    def codegen(context, builder, signature, values):
        fn = builder.module.globals.get(name) or _define(builder.module, name, lanes, bias_last)
        cast = [context.cast(builder, a, t, types.int64 if k < _N_INTS else types.float32)
                for k, (a, t) in enumerate(zip(values, signature.args))]
        builder.call(fn, cast)
        return context.get_dummy_value()

    @intrinsic
    def run(typingctx, out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1, n_vec,
            valid, lo, hi):
        """``run(out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1, n_vec,
        valid, lo, hi)`` (module doc): int64 addresses, byte steps and counts, float ``lo`` and ``hi``."""
        ints = (out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1, n_vec, valid)
        if not typed_args(ints, (lo, hi)):
            return None
        return types.void(*(types.int64,) * _N_INTS, types.float32, types.float32), codegen
    return run


run_x8, run_x16 = _run(8, False), _run(16, False)
"""Vectors of 8 (AVX2) or 16 (AVX-512) float32, the bias first."""
run_x8_last, run_x16_last = _run(8, True), _run(16, True)
"""The same in the ``bias_last`` order."""

slide_x8_k3s1, slide_x8_k3s2, slide_x8_k5s1, slide_x8_k5s2 = (_slide(8, False, k, s) for k in (3, 5) for s in (1, 2))
slide_x16_k3s1, slide_x16_k3s2, slide_x16_k5s1, slide_x16_k5s2 = (_slide(16, False, k, s) for k in (3, 5)
                                                                  for s in (1, 2))
"""Runs of pixels whose windows lie inside the image across, 3 or 5 taps wide, stride 1 or 2, the bias first."""
(slide_x8_last_k3s1, slide_x8_last_k3s2, slide_x8_last_k5s1,
 slide_x8_last_k5s2) = (_slide(8, True, k, s) for k in (3, 5) for s in (1, 2))
(slide_x16_last_k3s1, slide_x16_last_k3s2, slide_x16_last_k5s1,
 slide_x16_last_k5s2) = (_slide(16, True, k, s) for k in (3, 5) for s in (1, 2))
"""The same in the ``bias_last`` order."""
