"""Register-blocked integer micro-kernels, written as LLVM IR and called from numba through an intrinsic.

One micro-kernel call computes a tile of ``R`` rows by ``V`` vectors of ``L`` int32 lanes::

    tile[r, v*L + l] = sum over t < n_taps, i < n_inner, e < E of
                       A[rows[r] + taps[t] + 4*i + e] * W[t, i, v, l, e]

held in ``R * V`` vector registers for the whole loop (LLVM keeps them there: they are plain SSA
values of one function), and stored as int32 once at the end. ``rows`` and ``taps`` are byte
offsets (int64 arrays), so the same kernel serves an implicit-GEMM convolution (row = output
pixel, tap = kernel position, inner = channel group) and a plain matrix product (one tap). Each
step broadcasts 4 bytes of ``A`` per row (``E`` = 4 int8 or 2 int16 elements) and loads ``V``
vectors of packed weights, ``W`` laid out ``[tap][inner][v][lane][e]`` with ``w_tap_stride``
bytes between taps.

The instruction per ``(isa, kind)``:

- ``avx512_vnni``: ``vpdpbusd`` (u8 x s8, 4 products per lane, ``kind="u8s8"``) or ``vpdpwssd``
  (s16 x s16, 2 products, ``kind="s16"``) on 16 lanes;
- ``avx_vnni``: the same on 8 lanes (VEX encoded where the CPU lacks AVX-512);
- ``avx2``: ``vpmaddwd`` then ``vpaddd`` (s16 x s16) on 8 lanes;
- ``amx``: ``u8s8`` only, on AMX tiles of 16 or 32 rows by 1 or 2 vectors (``amx_microkernel``, the same
  packing and sums).

Exactness is the caller's: every instruction here adds modulo ``2**32`` (no saturating forms),
so a tile is the exact sum whenever that sum lies in the int32 range (``engine.py`` chooses the
K-blocks that guarantee it). ``weights_unsigned`` says which operand of ``vpdpbusd`` is the u8 one.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.llvm_loops import broadcast_step, constant, tile_loops
from . import amx_microkernel
from .requantize_lanes import requantize_vector

LANES = {"avx512_vnni": 16, "avx_vnni": 8, "avx2": 8, "amx": 16}
KINDS = {"avx512_vnni": ("u8s8", "s16"), "avx_vnni": ("u8s8", "s16"), "avx2": ("s16",), "amx": ("u8s8",)}
ELEMENTS = {"u8s8": 4, "s16": 2}  # elements of one 4-byte group, i.e. products per lane per step
_I32, _I64 = ir.IntType(32), ir.IntType(64)


def _instruction(module: ir.Module, isa: str, kind: str, lanes: int):
    """``f(acc, a, b) -> acc + dot(a, b)`` on ``<lanes x i32>`` values (a is the u8 operand of vpdpbusd)."""
    vec = ir.VectorType(_I32, lanes)
    if isa == "avx2":
        half = ir.VectorType(ir.IntType(16), 2 * lanes)
        madd = module.declare_intrinsic("llvm.x86.avx2.pmadd.wd", fnty=ir.FunctionType(vec, [half, half]))

        def step(builder, acc, a, b):
            return builder.add(acc, builder.call(madd, [builder.bitcast(a, half), builder.bitcast(b, half)]))
        return step
    op = "vpdpbusd" if kind == "u8s8" else "vpdpwssd"
    width = 512 if lanes == 16 else 256
    fn = module.declare_intrinsic(f"llvm.x86.avx512.{op}.{width}", fnty=ir.FunctionType(vec, [vec, vec, vec]))

    def step(builder, acc, a, b):
        return builder.call(fn, [acc, a, b])
    return step


def _define(module: ir.Module, name: str, isa: str, kind: str, rows: int, vecs: int,
            weights_unsigned: bool, requantize: bool = False) -> ir.Function:
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    lanes = LANES[isa]
    vec = ir.VectorType(_I32, lanes)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * (10 if requantize else 7)), name)
    fn.linkage = "internal"
    out = fn.args[0]
    instruction = _instruction(module, isa, kind, lanes)
    vecp = vec.as_pointer()

    def combine(b: ir.IRBuilder, acc, value, weights):
        return instruction(b, acc, *((weights, value) if weights_unsigned else (value, weights)))

    def store(b: ir.IRBuilder, sums):
        for r in range(rows):
            for v in range(vecs):
                b.store(sums[r][v], b.inttoptr(b.add(out, constant(4 * lanes * (r * vecs + v))), vecp), align=1)

    def store_requantized(b: ir.IRBuilder, sums):
        # fn's last three arguments: the rows' uint8 output addresses (int64 array), the block's int32 bias,
        # the rule's int64 (m, half, shift - 32, zero point, lo, hi) (requantize_lanes)
        targets, bias_at, rule_at = fn.args[7:10]
        i64p, bytes_p = _I64.as_pointer(), ir.VectorType(ir.IntType(8), lanes).as_pointer()
        rule = [b.load(b.inttoptr(b.add(rule_at, constant(8 * j)), i64p)) for j in range(6)]
        starts = [b.load(b.inttoptr(b.add(targets, constant(8 * r)), i64p)) for r in range(rows)]
        for v in range(vecs):
            bias = b.load(b.inttoptr(b.add(bias_at, constant(4 * lanes * v)), vecp), align=4)
            for r in range(rows):
                q = requantize_vector(b, b.add(sums[r][v], bias), *rule)
                b.store(q, b.inttoptr(b.add(starts[r], constant(lanes * v)), bytes_p), align=1)

    tile_loops(fn, rows, vecs, vec, broadcast_step(rows, vecs, vec, _I32, combine, 1),
               store_requantized if requantize else store)
    return fn


def variant(isa: str, kind: str, rows: int, vecs: int, weights_unsigned: bool = False) -> int:
    """The code naming one micro-kernel: the first, compile-time literal argument of :func:`tile_kernel`."""
    if isa not in KINDS or kind not in KINDS[isa]:
        raise ValueError(f"no {kind} micro-kernel for {isa}")
    if not (1 <= rows < 64 and 1 <= vecs < 64):
        raise ValueError(f"tile of {rows} rows by {vecs} vectors is out of range")
    if isa == "amx" and (rows not in amx_microkernel.ROWS or vecs not in amx_microkernel.VECS):
        raise ValueError(f"no AMX tile of {rows} rows by {vecs} vectors")
    return (((list(LANES).index(isa) * 2 + ("u8s8", "s16").index(kind)) * 64 + rows) * 64 + vecs) * 2 + int(
        weights_unsigned)


def decode(code: int) -> tuple[str, str, int, int, bool]:
    code, unsigned = divmod(code, 2)
    code, vecs = divmod(code, 64)
    code, rows = divmod(code, 64)
    isa, kind = divmod(code, 2)
    return list(LANES)[isa], ("u8s8", "s16")[kind], rows, vecs, bool(unsigned)


@intrinsic
def tile_kernel(typingctx, code, out, row_addr, tap_addr, n_taps, n_inner, w, w_stride):
    """``tile_kernel(code, out, rows, taps, n_taps, n_inner, w, w_tap_stride)``: one tile (module doc).

    ``code`` (from :func:`variant`) must be a compile-time literal, so each micro-kernel is its own
    specialisation of the calling function (and has its own entry in numba's disk cache). All other
    arguments are int64 addresses or counts. Only compile it for a CPU that has the code's ISA.
    """
    if not isinstance(code, types.IntegerLiteral):
        return None
    if not all(isinstance(a, types.Integer) for a in (out, row_addr, tap_addr, n_taps, n_inner, w, w_stride)):
        return None
    isa, kind, rows, vecs, unsigned = decode(code.literal_value)
    name = f"openvx_nn_mk_{isa}_{kind}_{rows}x{vecs}{'_wu' if unsigned else ''}"

    def codegen(context, builder, signature, args):
        if isa == "amx":
            fn = amx_microkernel.define(builder.module, name, rows, vecs, unsigned)
        else:
            fn = _define(builder.module, name, isa, kind, rows, vecs, unsigned)
        builder.call(fn, [context.cast(builder, a, t, types.int64) for a, t in zip(args[1:], signature.args[1:])])
        return context.get_dummy_value()
    return types.void(code, *(types.int64,) * 7), codegen


@intrinsic
def tile_kernel_requantized(typingctx, code, row_addr, tap_addr, n_taps, n_inner, w, w_stride, targets, bias, rule):
    """``tile_kernel`` whose tile is requantized in registers by NNAPI's rule in 32-bit lanes
    (``requantize_lanes``) and stored as uint8: row ``r``'s ``V * L`` values at the address ``targets[r]``
    (``targets`` the address of an int64 array), ``bias`` the address of the block's int32 bias, ``rule`` of the
    int64 ``(m, 2**(shift - 1), shift - 32, zero point, lo, hi)``. Only where the caller's plan bounds
    ``|sum + bias|`` below ``2**31`` and ``32 <= shift <= 62``, and each row has room for all its lanes."""
    rest = (row_addr, tap_addr, n_taps, n_inner, w, w_stride, targets, bias, rule)
    if not isinstance(code, types.IntegerLiteral) or not all(isinstance(a, types.Integer) for a in rest):
        return None
    isa, kind, rows, vecs, unsigned = decode(code.literal_value)
    if isa == "amx":
        raise ValueError("no requantizing AMX micro-kernel")
    name = f"openvx_nn_mk_{isa}_{kind}_{rows}x{vecs}{'_wu' if unsigned else ''}_requantized"

    def codegen(context, builder, signature, args):
        fn = _define(builder.module, name, isa, kind, rows, vecs, unsigned, requantize=True)
        values = [context.cast(builder, a, t, types.int64) for a, t in zip(args[1:], signature.args[1:])]
        builder.call(fn, [ir.Constant(_I64, 0), *values])
        return context.get_dummy_value()
    return types.void(code, *(types.int64,) * 9), codegen
