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
Runs of ``SLIDE_RUN`` pixels load each of their ``stride * (SLIDE_RUN - 1) + kw`` input columns of a filter row once
and add it into every pixel whose window holds it (a run's loads fall from ``kw`` per multiply-add at stride 1 to
about one per ``kw``); columns outside ``[0, width)`` are skipped by a test made once per run (runs wholly inside
take a copy without tests), and the last run stores only its pixels below ``n``, so a row of 7 pixels is one run of
7 chains. Each run takes every channel vector in turn, so the bytes of an input pixel are read together: a
vector-outer order walked the whole row once per vector, its loads a pixel's width apart (2 KB at 512 channels,
which maps a run's columns of a vector onto two L1 sets). Each pixel still takes its taps in row order, one
``llvm.fma`` each, in the order above: the bits are ``run``'s. One thread, 64-byte aligned, against ORT's Conv node:
28x28x240 5x5 from 0.79 to 1.26-1.42 of ORT, 7x7x1152 5x5 from 0.76-0.82 to 1.40-1.64
(``benchmarks/bench_depthwise.py``). At stride 2 the 3x3 windows stay on ``float_microkernel.depthwise_3x3``:
sliding measured 0.65-0.8 of it on 56x56x128 and 28x28x256.
"""
from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..support.llvm_loops import constant, masked_lanes, splat, typed_args
from .float_microkernel import _BiasLastEnd, _declare, _define_depthwise, _opaque

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


def _finished(b: ir.IRBuilder, value, bias, low, high, end):
    """The sum ``value`` as stored: ``bias`` added where ``end`` (a ``bias_last`` order's end) is given, clamped to
    ``[low, high]`` (a NaN fails both tests and stays), then, in that order, a NaN made canonical."""
    if end is not None:
        value = b.fadd(value, bias)
    value = b.select(b.fcmp_ordered("<", value, low), low, value)
    value = b.select(b.fcmp_ordered(">", value, high), high, value)
    return value if end is None else end.canonical(b, value)


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
    fn, vec, fma = _declare(module, name, _N_INTS, 2, lanes)
    (out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1, n_vec, valid, lo,
     hi) = fn.args
    vecp = vec.as_pointer()
    vec_bytes = 4 * lanes
    masked_load, masked_store, lanes_below = masked_lanes(module, vec)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    low, high = splat(b, lo, vec), splat(b, hi, vec)
    zero = splat(b, ir.Constant(_F32, 0.0), vec)
    end = _BiasLastEnd(b, vec, None, lo, hi) if bias_last else None
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
                value = _finished(b, sums[j * vectors + v], biases[v], low, high, end)
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
    fn, vec, fma = _declare(module, name, _SLIDE_INTS, 2, lanes)
    out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec, col0, width, lo, hi = fn.args
    vecp = vec.as_pointer()
    vec_bytes = 4 * lanes
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    low, high = splat(b, lo, vec), splat(b, hi, vec)
    zero = splat(b, ir.Constant(_F32, 0.0), vec)
    end = _BiasLastEnd(b, vec, None, lo, hi) if bias_last else None
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
            value = _finished(b, sums[j], bias_vec, low, high, end)

            def store(b: ir.IRBuilder, _, value=value, j=j):
                b.store(value, b.inttoptr(b.add(out_at, b.mul(constant(j), out_step)), vecp), align=4)
                return []
            b, _ = when(b, b.icmp_signed("<", b.add(p, constant(j)), n), store, [])
        return b

    def vectors(b: ir.IRBuilder, p) -> ir.IRBuilder:
        b, _, _ = _loop(fn, b, constant(0), n_vec, 1, [],
                        lambda b, v, _: (run(b, p, b.mul(v, constant(vec_bytes))), []), "vectors")
        return b

    b, _, _ = _loop(fn, b, constant(0), b.add(n, constant(pixels - 1)), pixels, [],
                    lambda b, p, _: (vectors(b, p), []), "runs")
    b.ret_void()
    return fn


def _selecting(name_of: Callable[..., str], define: Callable[..., ir.Function], n_flags: int, n_ints: int,
               n_floats: int):
    """An intrinsic ``f(flag_1, .., flag_n, *arguments)`` calling the variant the flags (each true or false) pick:
    ``define(module, name_of(*flags), *flags)``, defined once per module, its arguments cast to ``n_ints`` int64
    then ``n_floats`` float32. One call where a caller would branch over every variant; a switch in the IR does
    the same branching."""
    def codegen(context, builder, signature, values):
        (flag_types, arg_types), (flags, args) = ((s[:n_flags], s[n_flags:]) for s in
                                                  (signature.args[0].types, cgutils.unpack_tuple(builder, values[0])))
        cast = [context.cast(builder, a, t, types.int64 if k < n_ints else types.float32)
                for k, (a, t) in enumerate(zip(args, arg_types))]
        index = constant(0)
        for k, (flag, t) in enumerate(zip(flags, flag_types)):
            bit = builder.icmp_signed("!=", context.cast(builder, flag, t, types.int64), constant(0))
            index = builder.or_(index, builder.shl(builder.zext(bit, _I64), constant(k)))
        done = builder.append_basic_block("variant_done")
        switch = builder.switch(index, done)
        for variant in range(1 << n_flags):
            picked = tuple(bool(variant >> k & 1) for k in range(n_flags))
            name = name_of(*picked)
            fn = builder.module.globals.get(name) or define(builder.module, name, *picked)
            block = builder.append_basic_block(f"variant_{variant}")
            switch.add_case(constant(variant), block)
            builder.position_at_end(block)
            builder.call(fn, cast)
            builder.branch(done)
        builder.position_at_end(done)
        return context.get_dummy_value()

    @intrinsic
    def selected(typingctx, *values):
        flags, ints, floats = values[:n_flags], values[n_flags:n_flags + n_ints], values[n_flags + n_ints:]
        if len(floats) != n_floats or not typed_args(ints, floats) or \
                not all(isinstance(f, (types.Integer, types.Boolean)) for f in flags):
            return None
        return types.void(types.StarArgTuple.from_types(values)), codegen
    return selected


run = _selecting(lambda wide, bias_last: f"openvx_nn_float_depthwise_run_x{16 if wide else 8}"
                                         f"{'_bias_last' if bias_last else ''}",
                 lambda module, name, wide, bias_last: _define(module, name, 16 if wide else 8, bias_last),
                 2, _N_INTS, 2)
"""``run(wide, bias_last, out, x, n, out_step, x_step, x_row, x_col, w, w_row, w_col, bias, ky0, ky1, kx0, kx1,
n_vec, valid, lo, hi)`` (module doc): vectors of 16 float32 where ``wide`` (AVX-512), else 8 (AVX2), in the
``bias_last`` order or the bias first; int64 addresses, byte steps and counts, float ``lo`` and ``hi``."""

slide = _selecting(lambda wide, bias_last, five, two: f"openvx_nn_float_depthwise_slide_x{16 if wide else 8}"
                                                      f"_k{5 if five else 3}_s{2 if two else 1}"
                                                      f"{'_bias_last' if bias_last else ''}",
                   lambda module, name, wide, bias_last, five, two: _define_slide(
                       module, name, 16 if wide else 8, bias_last, 5 if five else 3, 2 if two else 1, SLIDE_RUN),
                   4, _SLIDE_INTS, 2)
"""``slide(wide, bias_last, five, two, out, x, n, out_step, x_col, x_row, w, w_row, w_col, bias, ky0, ky1, n_vec,
col0, width, lo, hi)`` (module doc): 5 taps across where ``five``, else 3; stride 2 where ``two``, else 1; the
vectors and order as :data:`run`'s."""

depthwise_3x3 = _selecting(lambda wide, bias_last: f"openvx_nn_float_depthwise_3x3x{16 if wide else 8}"
                                                   f"{'_bias_last' if bias_last else ''}",
                           lambda module, name, wide, bias_last: _define_depthwise(module, name, 16 if wide else 8,
                                                                                   bias_last),
                           2, 10, 2)
"""``float_microkernel.depthwise_3x3`` (``depthwise_3x3(wide, bias_last, out, x, n, out_step, x_step, x_row,
x_col, w, w_tap, bias, lo, hi)``): its four variants (the names its intrinsics give them) behind one call."""
