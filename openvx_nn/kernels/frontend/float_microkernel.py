"""Register-blocked float32 micro-kernels, written as LLVM IR and called from numba through an intrinsic.

One call computes a tile of ``R`` output pixels by ``V`` vectors of ``L`` float32 lanes (8: AVX2's registers,
16: AVX-512's)::

    tile[r, v*L + l] = sum over t < n_taps, i < n_inner of  X[rows[r] + taps[t] + 4*i] * W[t, i, v, l]

held in ``R * V`` vector registers for the whole loop (plain SSA values of one function, so LLVM keeps
them there; numba's loops would keep them in memory), and stored once at the end. ``rows`` and
``taps`` are byte offsets (int64 arrays): row = an output pixel's window origin in the input, tap =
one filter row, inner = the filter row's ``kw * depth`` contiguous inputs, so the same kernel serves a
convolution (implicit GEMM, no im2col) and a matrix product (one tap). Each step broadcasts one input
value per row and loads ``V`` weight vectors, packed ``[tap][inner][v][lane]`` with ``w_tap_stride``
bytes between taps; the multiply-add is ``llvm.fma.v8f32`` (or ``v16f32``), which LLVM emits as ``vfmadd``
on any CPU with FMA and as a correctly rounded sequence elsewhere (a 16-lane vector as two halves without
AVX-512). Each lane sums its products in the same order whatever the width, so both widths give the same bits.

The shapes are fixed per intrinsic (``TILES``, by vectors and lanes): 6 x 2 vectors of 8 (12 accumulators, 2
weight loads, one broadcast: 15 of AVX2's 16 registers) for 16 output channels, 12 x 1 for 8; with AVX-512's 32
registers, ROWS_WIDE x 2 vectors of 16 for 32 channels (ROWS_DEEP x 2 for layers of several filter rows),
ROWS_WIDE x 3 for 48 and ROWS_WIDE_ONE x 1 for 16; and ROWS_WIDE x 3 vectors of 8 for multiples of 24 channels on a CPU
whose 512-bit multiply-adds take two halves (``NARROW_THREE``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.llvm_loops import broadcast_step, constant, masked_lanes, splat, tile_loops, typed_args

LANES = 8
_F32, _I32, _I64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)


def _declare(module: ir.Module, name: str, n_ints: int, n_floats: int, lanes: int = LANES):
    """(a new internal void function of ``n_ints`` int64 then ``n_floats`` float parameters, the vector type of
    ``lanes`` float32, ``llvm.fma`` on it)."""
    vec = ir.VectorType(_F32, lanes)
    fma = module.declare_intrinsic(f"llvm.fma.v{lanes}f32", fnty=ir.FunctionType(vec, [vec, vec, vec]))
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * n_ints + [_F32] * n_floats), name)
    fn.linkage = "internal"
    return fn, vec, fma


def _define(module: ir.Module, name: str, rows: int, vecs: int, lanes: int, direct: bool,
            residual: bool = False, partial: bool = False, resume: bool = False) -> ir.Function:
    # direct: + out_stride, bias(, residual)(, valid), lo, hi
    fn, vec, fma = _declare(module, name, 7 + (2 + residual + partial if direct else 0), 2 if direct else 0, lanes)
    out = fn.args[0]
    vecp = vec.as_pointer()
    masked_load, masked_store, lanes_below = masked_lanes(module, vec) if partial else (None, None, None)

    def combine(b: ir.IRBuilder, acc, value, weights):
        return b.call(fma, [value, weights, acc])

    def finish(b: ir.IRBuilder, sums):
        if not direct:
            for r in range(rows):
                for v in range(vecs):
                    b.store(sums[r][v], b.inttoptr(b.add(out, constant(4 * lanes * (r * vecs + v))), vecp), align=4)
            return
        # The epilogue: bias, the residual (read at the output's offsets in its own array; added unless the value
        # is NaN, which stays), the fused activation (NaN fails both tests and stays; where the clamp has a finite
        # bound, an activation's, a NaN is stored as the canonical 0x7FC00000, as the activation layers store it),
        # store to the rows. ``partial``: only the block's first ``valid`` channels exist (a last block of a layer whose channels it does not fill): the bias and
        # residual are read and the rows written through masks, so nothing past them is touched.
        out_stride, bias = fn.args[7:9]
        extra, lo, hi = fn.args[9] if residual else None, fn.args[-2], fn.args[-1]
        masks = [lanes_below(b, b.sub(fn.args[9 + residual], constant(lanes * v))) for v in range(vecs)] \
            if partial else None

        def load(at, v):
            return masked_load(b, at, masks[v]) if partial else b.load(b.inttoptr(at, vecp), align=4)
        low, high = splat(b, lo, vec), splat(b, hi, vec)
        clamped = b.or_(b.fcmp_ordered(">", lo, ir.Constant(_F32, float("-inf"))),
                        b.fcmp_ordered("<", hi, ir.Constant(_F32, float("inf"))))
        canonical = splat(b, ir.Constant(_F32, float("nan")), vec)
        biases = [load(b.add(bias, constant(4 * lanes * v)), v) for v in range(vecs)]
        out_rows, extra_rows = _row_offsets(b, fn, out_stride, rows, residual)
        for r in range(rows):
            for v in range(vecs):
                offset = b.add(out_rows[r], constant(4 * lanes * v))
                value = b.fadd(sums[r][v], biases[v])
                if residual:  # a NaN value stays itself (the add's first operand: ``elementwise.add``'s rule)
                    value = b.select(b.fcmp_unordered("uno", value, value), value,
                                     b.fadd(value, load(b.add(extra, b.add(extra_rows[r], constant(4 * lanes * v))),
                                                        v)))
                value = b.select(b.fcmp_ordered("<", value, low), low, value)
                value = b.select(b.fcmp_ordered(">", value, high), high, value)
                value = b.select(clamped, b.select(b.fcmp_unordered("uno", value, value), canonical, value), value)
                if partial:
                    masked_store(b, value, b.add(out, offset), masks[v])
                else:
                    b.store(value, b.inttoptr(b.add(out, offset), vecp), align=4)

    def initial(b: ir.IRBuilder):
        # ``resume``: the sums so far, a bare tile's stores at the address listed after the rows' offsets
        src = b.load(b.inttoptr(b.add(fn.args[1], constant(8 * 3 * rows)), _I64.as_pointer()))
        return [[b.load(b.inttoptr(b.add(src, constant(4 * lanes * (r * vecs + v))), vecp), align=4)
                 for v in range(vecs)] for r in range(rows)]

    tile_loops(fn, rows, vecs, vec, broadcast_step(rows, vecs, vec, _F32, combine, 4), finish,
               initial if resume else None)
    return fn


def _row_offsets(b: ir.IRBuilder, fn: ir.Function, out_stride, rows: int, residual: bool) -> tuple[list, list]:
    """(byte offsets of the tile's rows from ``out``, and from the residual's address): ``r * out_stride`` for
    both, or, where ``out_stride`` is 0, listed after the rows' input addresses in the ``row_addr`` array
    (``rows`` output offsets, then ``rows`` residual ones): a tile whose pixels cross an image row of an output
    with a row pitch of its own (a zero-bordered tensor's interior: ``float_convolution``). ``b`` is left at the
    end of the block where both are known."""
    row_addr = fn.args[1]
    linear = [b.mul(out_stride, constant(r)) for r in range(rows)]
    here = b.block
    listed, merged = fn.append_basic_block("rows_listed"), fn.append_basic_block("rows_merged")
    b.cbranch(b.icmp_signed("==", out_stride, constant(0)), listed, merged)
    g = ir.IRBuilder(listed)
    loaded = [[g.load(g.inttoptr(g.add(row_addr, constant(8 * (rows * k + r))), _I64.as_pointer()))
               for r in range(rows)] for k in ((1, 2) if residual else (1,))]
    g.branch(merged)
    b.position_at_end(merged)
    found = []
    for values in loaded:
        phis = []
        for r in range(rows):
            phi = b.phi(_I64)
            phi.add_incoming(linear[r], here)
            phi.add_incoming(values[r], listed)
            phis.append(phi)
        found.append(phis)
    return found[0], found[1] if residual else found[0]


def _codegen(define, name: str, n_ints: int):
    """An intrinsic's code generation: a call of ``define(module, name)`` (defined once per module) with the
    arguments cast to its parameters (``n_ints`` int64, then float32)."""
    def codegen(context, builder, signature, values):
        fn = builder.module.globals.get(name) or define(builder.module, name)
        cast = [context.cast(builder, a, t, types.int64 if k < n_ints else types.float32)
                for k, (a, t) in enumerate(zip(values, signature.args))]
        builder.call(fn, cast)
        return context.get_dummy_value()
    return codegen


def _call(name: str, rows: int, vecs: int, lanes: int, direct: bool, n_ints: int, residual: bool = False,
          partial: bool = False, resume: bool = False):
    """The code generation of a tile intrinsic."""
    return _codegen(lambda module, fn_name: _define(module, fn_name, rows, vecs, lanes, direct, residual, partial,
                                                    resume), name + ("_resumed" if resume else ""), n_ints)


def _tile(rows: int, vecs: int, lanes: int = LANES, resume: bool = False):
    name = f"openvx_nn_float_tile_{rows}x{vecs}x{lanes}"

    @intrinsic
    def tile(typingctx, out, row_addr, tap_addr, n_taps, n_inner, w, w_stride):
        """``tile(out, rows, taps, n_taps, n_inner, w, w_tap_stride)``: one tile (module doc) into ``out``
        (``rows * vecs * lanes`` float32); int64 addresses and counts."""
        if not typed_args((out, row_addr, tap_addr, n_taps, n_inner, w, w_stride)):
            return None
        return types.void(*(types.int64,) * 7), _call(name, rows, vecs, lanes, False, 7, resume=resume)
    return tile


def _tile_direct(rows: int, vecs: int, lanes: int = LANES, resume: bool = False):
    name = f"openvx_nn_float_tile_{rows}x{vecs}x{lanes}_direct"

    @intrinsic
    def tile(typingctx, out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, lo, hi):
        """``tile(out, rows, taps, n_taps, n_inner, w, w_tap_stride, out_stride, bias, lo, hi)``: one tile
        (module doc) plus ``bias`` (address), clamped to [lo, hi], stored at ``out + r * out_stride`` (``out_stride``
        0: at the offsets listed in ``rows`` after the input addresses, ``_row_offsets``)."""
        if not typed_args((out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias), (lo, hi)):
            return None
        return (types.void(*(types.int64,) * 9, types.float32, types.float32),
                _call(name, rows, vecs, lanes, True, 9, resume=resume))
    return tile


def _tile_residual(rows: int, vecs: int, lanes: int = LANES, resume: bool = False):
    name = f"openvx_nn_float_tile_{rows}x{vecs}x{lanes}_residual"

    @intrinsic
    def tile(typingctx, out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, residual, lo, hi):
        """``tile(out, rows, taps, n_taps, n_inner, w, w_tap_stride, out_stride, bias, residual, lo, hi)``: the
        direct tile with ``residual`` (the address of the tile's first value in an array laid out as the
        output) added to the sums and bias before the clamp."""
        if not typed_args((out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, residual), (lo, hi)):
            return None
        return (types.void(*(types.int64,) * 10, types.float32, types.float32),
                _call(name, rows, vecs, lanes, True, 10, residual=True, resume=resume))
    return tile


def _tile_partial(rows: int, vecs: int, lanes: int, residual: bool, resume: bool = False):
    name = f"openvx_nn_float_tile_{rows}x{vecs}x{lanes}_{'residual' if residual else 'direct'}_partial"
    n_ints = 11 if residual else 10
    codegen = _call(name, rows, vecs, lanes, True, n_ints, residual, partial=True, resume=resume)
    signature = types.void(*(types.int64,) * n_ints, types.float32, types.float32)

    if residual:
        @intrinsic
        def tile(typingctx, out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, extra, valid, lo,
                 hi):
            """The residual tile (``tile_residual``) with ``valid`` channels of its block existing."""
            if not typed_args((out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, extra, valid),
                          (lo, hi)):
                return None
            return signature, codegen
        return tile

    @intrinsic
    def tile(typingctx, out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, valid, lo, hi):
        """The direct tile (``tile_direct``) with only the first ``valid`` channels of its block existing: bias and
        output (and a residual's) read and written through masks, nothing past them touched."""
        if not typed_args((out, row_addr, tap_addr, n_taps, n_inner, w, w_stride, out_stride, bias, valid), (lo, hi)):
            return None
        return signature, codegen
    return tile


@dataclass(frozen=True)
class Tile:
    """One tile shape's three intrinsics: ``bare`` (into a scratch buffer), ``direct`` (with the epilogue, to the
    output rows: ``(out, rows, taps, n_taps, n_inner, w, w_tap_stride, out_stride, bias, lo, hi)``) and
    ``residual`` (the epilogue adding a residual: ``(..., bias, residual, lo, hi)``, a convolution's conv -> add
    (-> clip) in one pass)."""

    rows: int
    vecs: int
    lanes: int
    bare: Callable
    direct: Callable
    residual: Callable
    direct_partial: Callable
    residual_partial: Callable
    resumed: Tile | None = None
    """The same five, continuing sums a bare tile stored (``resume``: their address listed in the rows' array
    after the output and residual offsets, at ``3 * rows``) instead of starting from zeros: a 1x1 layer's input
    channels taken in chunks (``float_convolution.K_CHUNK``) keep each pixel's sum in the same order, the same
    bits."""


def _shape(rows: int, vecs: int, lanes: int, resumable: bool = False) -> Tile:
    resumed = _shape_of(rows, vecs, lanes, True) if resumable else None
    return _shape_of(rows, vecs, lanes, False, resumed)


def _shape_of(rows: int, vecs: int, lanes: int, resume: bool, resumed: Tile | None = None) -> Tile:
    return Tile(rows, vecs, lanes, _tile(rows, vecs, lanes, resume), _tile_direct(rows, vecs, lanes, resume),
                _tile_residual(rows, vecs, lanes, resume), _tile_partial(rows, vecs, lanes, False, resume),
                _tile_partial(rows, vecs, lanes, True, resume), resumed)


WIDE_LANES = 16
ROWS_WIDE, ROWS_WIDE_ONE = 8, 12
"""Rows of the 16-lane tiles of 2 and 1 vectors (16 and 12 of AVX-512's 32 registers as accumulators). One thread,
interleaved: 12 x 2 and 24 x 1 ran 3x3 layers no faster and a 1x1 layer of few input channels (24 -> 144 at 56x56)
1.24x slower; 6 x 2 ran within 2 % of 8 x 2 on ResNet's 3x3 layers."""
ROWS_WIDE_ODD = 7
"""Rows of the 16-lane two-vector tile for maps whose pixels are a multiple of 7 but not of ``ROWS_WIDE`` (7x7,
14x14): 8-row tiles computed 56 rows for a 7x7 map's 49 (the short last tile repeats its last pixel), 7-row ones
compute 49 (see ``tile_rows``)."""
ODD_TILE = _shape(ROWS_WIDE_ODD, 2, WIDE_LANES, resumable=True)
ROWS_WIDE_TEN = 10
"""Rows of the 16-lane two-vector tile for maps of 7x7 and 14x14 pixels where ten rows pad a twentieth or less
(49 -> 50, 196 -> 200; ``float_convolution.tile_rows``): each weight line from L2 feeds ten rows' multiply-adds
where the 7-row tiles fed seven, and the weights pass over the map in 5 tiles, not 7 (a 3x3 512->512 layer's
9.4 MB at 7x7 had run at 40 GMAC/s on 7 rows, the other ResNet layers at 60-68 on 12). The same bits: each pixel's
sum in the same order. Intel Xeon (Emerald Rapids), one thread, CPU time, the layer beside ORT's node in one process,
two builds' processes in turns (6 each, load 5.8), median ORT ÷ ours: 3x3 512->512 at 7x7 0.77 -> 0.83, with the
residual add 0.74 -> 0.83, 3x3/2 256->512 to 7x7 0.75 -> 0.79; the 1x1/2 256->512 to 7x7 0.94 either way."""
TEN_TILE = _shape(ROWS_WIDE_TEN, 2, WIDE_LANES, resumable=True)
ROWS_DEEP = 12
"""Rows of the 16-lane two-vector tile for layers of more than one filter row (3x3, 11x11: ``tile_rows``). Their
blocks' packed weights (a 3x3 layer of 64 inputs: 72 KiB a block) outgrow L1 and stream from L2 once per tile: 12
rows read each weight vector for 24 FMAs where 8 rows read it for 16 (24 accumulators, 2 weight vectors, one
broadcast; 13 and 14 rows spill the rows' addresses to the stack). Intel Xeon (Emerald Rapids), one thread, CPU
time, a layer's tile loop both ways in turns in one process (loaded machine), medians: 3x3 64->64 at 56x56 1.94 ms
against 2.16 on 8 rows, 128->128 at 28x28 1.96 against 2.14, 256->256 at 14x14 2.99 against 3.25 on 7 rows, 11x11
stride 4 3->96 2.12 against 2.28; the same bits."""
DEEP_TILE = _shape(ROWS_DEEP, 2, WIDE_LANES)
ROW_VECTORS = 4
"""Vectors of the one-row tiles (a fully connected layer of one input row: a matrix-vector product): four
independent sums per step, where a tile of 8 rows would compute its one row 8 times over."""
WIDE_THREE = 3
"""Vectors of the third 16-lane block shape (48 channels, ``ROWS_WIDE`` rows: 24 accumulators), for layers whose
channels three vectors pad less than two do (40, 48, 144, 240: MobileNet v3's and EfficientNet's projections). One
thread, the bare tiles over 3136 pixels: 240 -> 48 channels 275 us on 8 x 3 against 337 on 12 x 1 (three blocks of
16), 16 -> 48 channels 18.9 against 26.1."""
NARROW_THREE = 3
"""Vectors of the 8-lane block shape for a CPU whose 512-bit multiply-adds take two 256-bit halves (AMD Zen 4:
``isa.split_wide_fma``): 24 channels a block, ``ROWS_WIDE`` rows (24 accumulators, so AVX-512's 32 registers
only), where two 16-lane vectors would pad 24 channels to 32 (``float_convolution.pack_conv``)."""
TILES = {(2, LANES): _shape(6, 2, LANES), (1, LANES): _shape(12, 1, LANES),
         (2, WIDE_LANES): _shape(ROWS_WIDE, 2, WIDE_LANES, resumable=True), (1, WIDE_LANES): _shape(ROWS_WIDE_ONE, 1, WIDE_LANES),
         (WIDE_THREE, WIDE_LANES): _shape(ROWS_WIDE, WIDE_THREE, WIDE_LANES),
         (NARROW_THREE, LANES): _shape(ROWS_WIDE, NARROW_THREE, LANES),
         (ROW_VECTORS, LANES): _shape(1, ROW_VECTORS, LANES),
         (ROW_VECTORS, WIDE_LANES): _shape(1, ROW_VECTORS, WIDE_LANES)}
"""The tile shapes by (vectors, lanes)."""
tile_6x2, tile_12x1 = TILES[2, LANES].bare, TILES[1, LANES].bare
tile_6x2_direct, tile_12x1_direct = TILES[2, LANES].direct, TILES[1, LANES].direct


DEPTHWISE_PIXELS = {LANES: 4, WIDE_LANES: 8}
"""Output pixels a 3x3 depthwise kernel computes together, by lanes (with the nine weights, the bias and the range:
20 of AVX-512's 32 registers, 16 of AVX2's). A pixel's nine multiply-adds are one dependent chain; interleaving
the chains of a run of pixels took a vector of 16 channels from 3.6 to 2.2-2.7 ns (stride 1, one thread, 64-byte
aligned rows; runs of 4, 6, 12 and 16 measured within 10 % of 8, and runs sharing each filter row's input
columns no faster). In a model the layers gain less (MobileNet v2: 2-3 %): there they wait on memory more."""


def _opaque(b: ir.IRBuilder, value):
    """``value``, hidden from LLVM's loop analysis: addresses derived from it are not rewritten into one induction
    variable each (a run of 8 pixels has 72 taps; they spilled to the stack and cost a third of the speed)."""
    return b.asm(ir.FunctionType(_I64, [_I64]), "", "=r,0", [value], False)


def _define_depthwise(module: ir.Module, name: str, lanes: int, bias_last: bool = False) -> ir.Function:
    """``f(out, x, n, out_step, x_step, x_row, x_col, w, w_tap, bias, lo, hi)``: ``lanes`` channels of ``n`` output
    pixels of a 3x3 depthwise window (addresses and byte steps; ``lo``/``hi`` the activation's range). The nine
    weight vectors and the bias stay in registers; the pixels are taken ``DEPTHWISE_PIXELS[lanes]`` at a time,
    then one at a time. Every pixel sums its bias then its taps in row order, as ``depthwise_taps``: the same
    bits; ``bias_last``: its taps from +0.0, then the bias (:class:`_BiasLastEnd`)."""
    fn, vec, fma = _declare(module, name, 10, 2, lanes)
    out, x, n, out_step, x_step, x_row, x_col, w, w_tap, bias, lo, hi = fn.args
    vecp = vec.as_pointer()
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    weights = [b.load(b.inttoptr(b.add(w, b.mul(w_tap, constant(k))), vecp), align=4) for k in range(9)]
    start = b.load(b.inttoptr(bias, vecp), align=4)
    end = _BiasLastEnd(b, vec, start, lo, hi) if bias_last else None
    if bias_last:
        start = splat(b, ir.Constant(_F32, 0.0), vec)
    low, high = splat(b, lo, vec), splat(b, hi, vec)
    taps = [b.add(b.mul(x_row, constant(ky)), b.mul(x_col, constant(kx))) for ky in range(3) for kx in range(3)]

    def pixels(b: ir.IRBuilder, p, count: int) -> None:
        # ``count`` pixels from ``p``, their chains interleaved tap by tap.
        origin = _opaque(b, b.add(x, b.mul(p, x_step)))
        origins = [b.add(origin, b.mul(constant(j), x_step)) for j in range(count)]
        acc = [start] * count
        for tap, weight in zip(taps, weights):
            acc = [b.call(fma, [b.load(b.inttoptr(b.add(o, tap), vecp), align=4), weight, a])
                   for o, a in zip(origins, acc)]
        at = _opaque(b, b.add(out, b.mul(p, out_step)))
        for a in acc:
            if end is not None:
                a = end(b, a)
            # The fused activation; a NaN fails both comparisons and stays NaN, as in the reference.
            a = b.select(b.fcmp_ordered("<", a, low), low, a)
            a = b.select(b.fcmp_ordered(">", a, high), high, a)
            if end is not None:
                a = end.canonical(b, a)
            b.store(a, b.inttoptr(at, vecp), align=4)
            at = b.add(at, out_step)

    p, after = constant(0), entry
    for count, label in ((DEPTHWISE_PIXELS[lanes], "runs"), (1, "pixels")):
        head, body, tail = (fn.append_basic_block(f"{label}_{s}") for s in ("head", "body", "done"))
        b.branch(head)
        h = ir.IRBuilder(head)
        phi = h.phi(_I64, label)
        h.cbranch(h.icmp_signed("<=", h.add(phi, constant(count)), n), body, tail)
        b = ir.IRBuilder(body)
        pixels(b, phi, count)
        following = b.add(phi, constant(count))
        b.branch(head)
        phi.add_incoming(p, after)
        phi.add_incoming(following, b.block)
        b, p, after = ir.IRBuilder(tail), phi, tail
    b.ret_void()
    return fn


class _BiasLastEnd:
    """The end of a ``bias_last`` depthwise sum, as the plane kernel's (``chw_depthwise``) and the engine's
    epilogue: the bias added once after the taps; after the clamp, a NaN stored as the canonical 0x7FC00000 where
    the clamp has a finite bound (an activation's)."""

    def __init__(self, b: ir.IRBuilder, vec, bias, lo, hi):
        self.bias = bias
        self.clamped = b.or_(b.fcmp_ordered(">", lo, ir.Constant(_F32, float("-inf"))),
                             b.fcmp_ordered("<", hi, ir.Constant(_F32, float("inf"))))
        self.nan = splat(b, ir.Constant(_F32, float("nan")), vec)

    def __call__(self, b: ir.IRBuilder, acc):
        return b.fadd(acc, self.bias)

    def canonical(self, b: ir.IRBuilder, value):
        return b.select(self.clamped, b.select(b.fcmp_unordered("uno", value, value), self.nan, value), value)


def _depthwise_3x3(lanes: int, bias_last: bool = False):
    name = f"openvx_nn_float_depthwise_3x3x{lanes}{'_bias_last' if bias_last else ''}"

    @intrinsic
    def depthwise(typingctx, out, x, n, out_step, x_step, x_row, x_col, w, w_tap, bias, lo, hi):
        """``depthwise_3x3(out, x, n, out_step, x_step, x_row, x_col, w, w_tap, bias, lo, hi)``: a vector of
        channels of ``n`` pixels along an output row of a 3x3 depthwise convolution, bias and fused activation
        included. Addresses and byte steps are int64, ``lo`` and ``hi`` floats."""
        if not typed_args((out, x, n, out_step, x_step, x_row, x_col, w, w_tap, bias), (lo, hi)):
            return None
        return (types.void(*(types.int64,) * 10, types.float32, types.float32),
                _codegen(lambda module, fn_name: _define_depthwise(module, fn_name, lanes, bias_last), name, 10))
    return depthwise


depthwise_3x3, depthwise_3x3_wide = _depthwise_3x3(LANES), _depthwise_3x3(WIDE_LANES)
"""8 and 16 channels of a run of pixels (``(out, x, n, out_step, x_step, x_row, x_col, w, w_tap, bias, lo, hi)``)."""
depthwise_3x3_last, depthwise_3x3_wide_last = _depthwise_3x3(LANES, True), _depthwise_3x3(WIDE_LANES, True)
"""The same in the ``bias_last`` order (taps from +0.0, then the bias; canonical NaN under a finite clamp)."""


def _tap_reduction(fn: ir.Function, vec, out, n_taps, lo, hi, start: Callable, step: Callable,
                   end: Callable | None = None, bias_last=None) -> None:
    """Fill ``fn`` with a loop over ``n_taps`` taps of a vector accumulator, from ``start(builder)``, each tap
    ``step(builder, t, acc) -> acc``; the result (``end(builder, acc)`` when given) clamped to [lo, hi] (a NaN
    fails both tests and stays) and stored at ``out``."""
    entry, head, body, done = (fn.append_basic_block(s) for s in ("entry", "head", "body", "done"))
    vecp = vec.as_pointer()

    b = ir.IRBuilder(entry)
    first = start(b)
    b.branch(head)

    h = ir.IRBuilder(head)
    t = h.phi(_I64, "t")
    acc = h.phi(vec, "acc")
    h.cbranch(h.icmp_signed("<", t, n_taps), body, done)

    b = ir.IRBuilder(body)
    after = step(b, t, acc)
    t_next = b.add(t, constant(1))
    b.branch(head)

    b = ir.IRBuilder(done)
    low, high = splat(b, lo, vec), splat(b, hi, vec)
    result = acc if end is None else end(b, acc)
    value = b.select(b.fcmp_ordered("<", result, low), low, result)
    value = b.select(b.fcmp_ordered(">", value, high), high, value)
    if bias_last is not None:
        value = bias_last(b).canonical(b, value)
    b.store(value, b.inttoptr(out, vecp), align=4)
    b.ret_void()
    t.add_incoming(constant(0), entry)
    t.add_incoming(t_next, body)
    acc.add_incoming(first, entry)
    acc.add_incoming(after, body)


def _at_offset(b: ir.IRBuilder, base, offsets, t):
    """``base`` plus the ``t``-th int64 of the array at ``offsets``."""
    return b.add(base, b.load(b.inttoptr(b.add(offsets, b.mul(t, constant(8))), _I64.as_pointer())))


def _define_depthwise_taps(module: ir.Module, name: str, lanes: int, bias_last: bool = False) -> ir.Function:
    """``f(out, x, w, n_taps, x_offsets, w_offsets, bias, lo, hi)``: ``lanes`` channels of one output pixel of any
    depthwise window: ``bias + sum over t of x[x_offsets[t]] * w[w_offsets[t]]`` (byte offsets in int64
    arrays, the window's taps inside the image), clamped to [lo, hi] and stored at ``out``."""
    fn, vec, fma = _declare(module, name, 7, 2, lanes)
    out, x, w, n_taps, x_offsets, w_offsets, bias, lo, hi = fn.args
    vecp = vec.as_pointer()

    def step(b, t, acc):
        x_at, w_at = _at_offset(b, x, x_offsets, t), _at_offset(b, w, w_offsets, t)
        return b.call(fma, [b.load(b.inttoptr(x_at, vecp), align=4), b.load(b.inttoptr(w_at, vecp), align=4), acc])
    if not bias_last:
        _tap_reduction(fn, vec, out, n_taps, lo, hi, lambda b: b.load(b.inttoptr(bias, vecp), align=4), step)
        return fn

    def end(b, acc):  # ``bias_last``: the taps from +0.0, then the bias
        return b.fadd(acc, b.load(b.inttoptr(bias, vecp), align=4))
    _tap_reduction(fn, vec, out, n_taps, lo, hi, lambda b: splat(b, ir.Constant(_F32, 0.0), vec), step, end,
                   lambda b: _BiasLastEnd(b, vec, None, lo, hi))
    return fn


def _depthwise_taps(lanes: int, bias_last: bool = False):
    name = f"openvx_nn_float_depthwise_taps_x{lanes}{'_bias_last' if bias_last else ''}"

    @intrinsic
    def depthwise(typingctx, out, x, w, n_taps, x_offsets, w_offsets, bias, lo, hi):
        """``depthwise_taps(out, x, w, n_taps, x_offsets, w_offsets, bias, lo, hi)``: a vector of channels of one
        output pixel of a depthwise window given as its taps inside the image (edges, any window size);
        addresses, counts and byte offsets int64, ``lo`` and ``hi`` floats."""
        if not typed_args((out, x, w, n_taps, x_offsets, w_offsets, bias), (lo, hi)):
            return None
        return (types.void(*(types.int64,) * 7, types.float32, types.float32),
                _codegen(lambda module, fn_name: _define_depthwise_taps(module, fn_name, lanes, bias_last), name, 7))
    return depthwise


depthwise_taps, depthwise_taps_wide = _depthwise_taps(LANES), _depthwise_taps(WIDE_LANES)
depthwise_taps_last, depthwise_taps_wide_last = _depthwise_taps(LANES, True), _depthwise_taps(WIDE_LANES, True)
"""8 and 16 channels of one pixel's window taps (``(out, x, w, n_taps, x_offsets, w_offsets, bias, lo, hi)``)."""
