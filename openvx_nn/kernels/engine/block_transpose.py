"""8x8 block transposes written as LLVM IR shuffles, for the engine's layout changes.

The engine computes pixel-major (a pixel's output channels side by side) while OpenVX tensors are
channel-planar, and its packed input is channel-minor while the input tensor is channel-planar:
both are transposes of narrow elements. A plain loop moves one element per load and store; here
eight rows of eight elements become one 64-element vector, one shuffle puts it in the transposed
order (one ``vpermb``/``vpermw``/``vpermt2d`` with AVX-512, a few shuffles without), and eight
stores write it back.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.jit import kernel

SIDE = 8
_I32, _I64 = ir.IntType(32), ir.IntType(64)


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


@intrinsic
def transpose8x8(typingctx, size, src, src_stride, dst, dst_stride):
    """``transpose8x8(size, src, src_stride, dst, dst_stride)``: ``dst[i][j] = src[j][i]`` for ``i, j < 8``.

    ``size`` (a compile-time literal: 1, 2, 4 or 8) is the element's byte size; the other
    arguments are int64 byte addresses and byte strides between rows. The blocks must not overlap.
    """
    if not isinstance(size, types.IntegerLiteral) or size.literal_value not in (1, 2, 4, 8):
        return None
    if not all(isinstance(a, types.Integer) for a in (src, src_stride, dst, dst_stride)):
        return None
    n = size.literal_value

    def codegen(context, builder, signature, args):
        fn = _define(builder.module, n)
        builder.call(fn, [context.cast(builder, a, t, types.int64) for a, t in zip(args[1:], signature.args[1:])])
        return context.get_dummy_value()
    return types.void(size, *(types.int64,) * 4), codegen


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


transpose_region = kernel(_transpose_region)
"""``transpose_region(src, src_stride, dst, dst_stride, rows, cols, size)`` at int64 byte addresses:
``dst[c][r] = src[r][c]`` for ``r < rows``, ``c < cols``; both at least 8 (smaller sides are the
caller's to copy)."""
