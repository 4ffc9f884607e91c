"""8x8 block transposes written as LLVM IR shuffles, for the engine's layout changes.

The engine computes pixel-major (a pixel's output channels side by side) while OpenVX tensors are
channel-planar, and its packed input is channel-minor while the input tensor is channel-planar:
both are transposes of narrow elements. A plain loop moves one element per load and store; here
eight rows of eight elements become one 64-element vector, one shuffle puts it in the transposed
order (one ``vpermb``/``vpermw``/``vpermt2d`` with AVX-512, a few shuffles without), and eight
stores write it back.

Float32 blocks at the edges of a float graph (``frontend/chw_layout``) take a square of ``side`` rows of one vector
each instead (16 with AVX-512, 8 with AVX2): one stage per bit of the index swaps that bit between rows and columns
with one two-source shuffle a row (``vpermt2ps``, ``vunpcklpd``, ``vshuff64x2``, ...), four stages for 16x16, so the
values never leave the registers between the loads and the stores. A square may also widen binary16 rows as it
loads them or narrow its rows to binary16 as it stores them (``support/binary16``'s exact conversions, one
``vcvtph2ps`` or ``vcvtps2ph`` a row and its NaN selects): a float16 tensor's layout copy converts in the same pass.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.binary16 import narrow_lanes, widen_lanes
from ..support.jit import kernel

SIDE = 8
_I16, _I32, _I64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
COPY, WIDEN, NARROW = 0, 1, 2
"""A square's conversion: none (4-byte elements both sides), binary16 source rows widened to float32, float32
rows narrowed to binary16 on store."""


def _define(module: ir.Module, size: int) -> ir.Function:
    name = f"openvx_nn_transpose8x8_{size}"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    word = ir.IntType(8 * size * SIDE)  # one row as a single integer: loads and stores of whole rows
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * 4), name)
    fn.linkage = "internal"
    src, src_stride, dst, dst_stride = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    rows_t = ir.VectorType(word, SIDE)
    whole = ir.Constant(rows_t, ir.Undefined)
    for i in range(SIDE):
        at = b.inttoptr(b.add(src, b.mul(src_stride, ir.Constant(_I64, i))), word.as_pointer())
        whole = b.insert_element(whole, b.load(at, align=1), ir.Constant(_I32, i))
    elements = ir.VectorType(ir.IntType(8 * size), SIDE * SIDE)
    flat = b.bitcast(whole, elements)
    # element (i, j) of the result is element (j, i) of the source
    order = [j * SIDE + i for i in range(SIDE) for j in range(SIDE)]
    moved = b.bitcast(b.shuffle_vector(flat, ir.Constant(elements, ir.Undefined),
                                       ir.Constant(ir.VectorType(_I32, SIDE * SIDE), order)), rows_t)
    for i in range(SIDE):
        at = b.inttoptr(b.add(dst, b.mul(dst_stride, ir.Constant(_I64, i))), word.as_pointer())
        b.store(b.extract_element(moved, ir.Constant(_I32, i)), at, align=1)
    b.ret_void()
    return fn


def _block_intrinsic(name: str, define, literals: tuple[int, ...]):
    """An intrinsic ``f(literal, src, src_stride, dst, dst_stride)`` calling ``define(module, literal)``'s
    function on int64 byte addresses and strides; ``literal`` a compile-time constant among ``literals``."""
    def typer(typingctx, literal, src, src_stride, dst, dst_stride):
        if not isinstance(literal, types.IntegerLiteral) or literal.literal_value not in literals:
            return None
        if not all(isinstance(a, types.Integer) for a in (src, src_stride, dst, dst_stride)):
            return None
        n = literal.literal_value

        def codegen(context, builder, signature, args):
            fn = define(builder.module, n)
            builder.call(fn, [context.cast(builder, a, t, types.int64)
                              for a, t in zip(args[1:], signature.args[1:])])
            return context.get_dummy_value()
        return types.void(literal, *(types.int64,) * 4), codegen
    typer.__name__ = typer.__qualname__ = name  # numba names the intrinsic after its function
    return intrinsic(typer)


transpose8x8 = _block_intrinsic("transpose8x8", _define, (1, 2, 4, 8))
"""``transpose8x8(size, src, src_stride, dst, dst_stride)``: ``dst[i][j] = src[j][i]`` for ``i, j < 8``.

``size`` (a compile-time literal: 1, 2, 4 or 8) is the element's byte size; the other
arguments are int64 byte addresses and byte strides between rows. The blocks must not overlap.
"""


def _transpose_region(src, src_stride, dst, dst_stride, rows, cols, size):
    # dst[c][r] = src[r][c] for r < rows, c < cols (both at least SIDE), elements of ``size`` bytes,
    # strides in bytes. In 8x8 blocks; the last block of each direction is moved back to end at the
    # edge (it overlaps the one before it and writes the same values again).
    for r0 in range(0, rows, SIDE):
        r = min(r0, rows - SIDE)
        for c0 in range(0, cols, SIDE):
            c = min(c0, cols - SIDE)
            a, b = src + r * src_stride + c * size, dst + c * dst_stride + r * size
            if size == 1:
                transpose8x8(1, a, src_stride, b, dst_stride)
            elif size == 2:
                transpose8x8(2, a, src_stride, b, dst_stride)
            elif size == 4:
                transpose8x8(4, a, src_stride, b, dst_stride)
            else:
                transpose8x8(8, a, src_stride, b, dst_stride)


def _define_square(module: ir.Module, side: int, convert: int = COPY) -> ir.Function:
    name = f"openvx_nn_transpose_square32_{side}" + ("", "_widen", "_narrow")[convert]
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    row_t, half_t = ir.VectorType(_I32, side), ir.VectorType(_I16, side)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_I64] * 4), name)
    fn.linkage = "internal"
    src, src_stride, dst, dst_stride = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    load_t = half_t if convert == WIDEN else row_t
    rows = [b.load(b.inttoptr(b.add(src, b.mul(src_stride, ir.Constant(_I64, i))), load_t.as_pointer()),
                   align=load_t.element.width // 8) for i in range(side)]
    if convert == WIDEN:
        rows = [widen_lanes(b, row) for row in rows]
    bit = 1
    while bit < side:
        # swap index bit ``bit`` between rows and columns: rows i and i + bit exchange their off-diagonal halves
        low = [side + c - bit if c & bit else c for c in range(side)]
        high = [side + c if c & bit else c + bit for c in range(side)]
        moved = list(rows)
        for i in range(side):
            if not i & bit:
                for at, order in ((i, low), (i + bit, high)):
                    moved[at] = b.shuffle_vector(rows[i], rows[i + bit],
                                                 ir.Constant(ir.VectorType(_I32, side), order))
        rows, bit = moved, 2 * bit
    if convert == NARROW:
        rows = [narrow_lanes(b, row) for row in rows]
    store_t = half_t if convert == NARROW else row_t
    for i, row in enumerate(rows):
        b.store(row, b.inttoptr(b.add(dst, b.mul(dst_stride, ir.Constant(_I64, i))), store_t.as_pointer()),
                align=store_t.element.width // 8)
    b.ret_void()
    return fn


transpose_square32 = _block_intrinsic("transpose_square32", _define_square, (8, 16))
"""``transpose_square32(side, src, src_stride, dst, dst_stride)``: ``dst[i][j] = src[j][i]`` for ``i, j <
side`` of 4-byte elements, in registers (module doc). ``side`` a compile-time literal 8 or 16; the others
int64 byte addresses and byte strides between rows. The blocks must not overlap."""

transpose_square_widen = _block_intrinsic("transpose_square_widen",
                                          lambda module, side: _define_square(module, side, WIDEN), (8, 16))
""":func:`transpose_square32` from binary16 source elements (2 bytes) to float32 ones, widened exactly."""

transpose_square_narrow = _block_intrinsic("transpose_square_narrow",
                                           lambda module, side: _define_square(module, side, NARROW), (8, 16))
""":func:`transpose_square32` from float32 source elements to binary16 ones (2 bytes), rounded to nearest even
(a NaN keeps its payload's high bits, ``support/binary16``)."""


def _transpose_region32(src, src_stride, dst, dst_stride, rows, cols, side, convert):
    # ``_transpose_region``'s walk for 4-byte elements (binary16 on the source side when ``convert`` is WIDEN, on
    # the destination side when NARROW) in squares of ``side`` (16, else 8) on both sides; the last square of each
    # direction moved back to end at the edge, as there
    step = 16 if side == 16 and rows >= 16 and cols >= 16 else 8
    src_size, dst_size = (2 if convert == WIDEN else 4), (2 if convert == NARROW else 4)
    for r0 in range(0, rows, step):
        r = min(r0, rows - step)
        for c0 in range(0, cols, step):
            c = min(c0, cols - step)
            a, b = src + r * src_stride + c * src_size, dst + c * dst_stride + r * dst_size
            if convert == WIDEN:
                if step == 16:
                    transpose_square_widen(16, a, src_stride, b, dst_stride)
                else:
                    transpose_square_widen(8, a, src_stride, b, dst_stride)
            elif convert == NARROW:
                if step == 16:
                    transpose_square_narrow(16, a, src_stride, b, dst_stride)
                else:
                    transpose_square_narrow(8, a, src_stride, b, dst_stride)
            elif step == 16:
                transpose_square32(16, a, src_stride, b, dst_stride)
            else:
                transpose_square32(8, a, src_stride, b, dst_stride)


transpose_region = kernel(_transpose_region)
"""``transpose_region(src, src_stride, dst, dst_stride, rows, cols, size)`` at int64 byte addresses:
``dst[c][r] = src[r][c]`` for ``r < rows``, ``c < cols``; both at least 8 (smaller sides are the
caller's to copy)."""

transpose_region32 = kernel(_transpose_region32)
"""``transpose_region32(src, src_stride, dst, dst_stride, rows, cols, side, convert)``: :func:`transpose_region` of
4-byte elements in squares of ``side`` (16: where both sides are at least 16, else squares of 8); both at least 8.
``convert`` (:data:`COPY`, :data:`WIDEN`, :data:`NARROW`): binary16 elements on the source or destination side,
converted in the squares (module doc)."""
