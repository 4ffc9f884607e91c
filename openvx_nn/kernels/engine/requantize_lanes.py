"""NNAPI's requantization of eight int32 sums in one vector, written as LLVM IR so that it is vectorized.

``engine.nhwc.scale_run`` states the rule in 32-bit lanes (``|sum + bias| < 2**31``, ``32 <= shift <= 62``):
``q = ((sext(v) * m + half - (v < 0)) >> 32) >> (shift - 32)``, plus the zero point, clamped to ``[lo, hi]``.
numba's loop of it vectorized only in part (4-lane 64-bit pieces and a scalar remainder: about 1.2 ns a value,
most of a 1x1 layer's time); here the same operations on ``<8 x i32>`` vectors let LLVM pick ``vpmuldq`` for the
product of sign-extended halves, a shuffle for the high words and ``vpsrad`` for the shift, on any x86 (generic
IR: no instruction is named, so it is correct wherever LLVM compiles it).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support.llvm_loops import splat

WIDTH = 8
_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)


def requantize_vector(builder: ir.IRBuilder, v: ir.Value, m: ir.Value, half: ir.Value, shift_hi: ir.Value,
                      zero_point: ir.Value, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """The rule on ``v`` (``<n x i32>``, bias included) with i64 scalars: the ``<n x i8>`` outputs."""
    n = v.type.count
    v32, v64 = ir.VectorType(_I32, n), ir.VectorType(_I64, n)

    def lanes32(value):
        return splat(builder, builder.trunc(value, _I32), v32)
    negative = builder.icmp_signed("<", v, ir.Constant(v32, 0))
    product = builder.mul(builder.sext(v, v64), builder.sext(lanes32(m), v64))
    product = builder.sub(builder.add(product, splat(builder, half, v64)), builder.zext(negative, v64))
    q = builder.trunc(builder.ashr(product, ir.Constant(v64, 32)), v32)
    q = builder.add(builder.ashr(q, lanes32(shift_hi)), lanes32(zero_point))
    low, high = lanes32(lo), lanes32(hi)
    q = builder.select(builder.icmp_signed("<", q, low), low, q)
    q = builder.select(builder.icmp_signed(">", q, high), high, q)
    return builder.trunc(q, ir.VectorType(_I8, n))


def _is_vector(array, dtype) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == dtype


@intrinsic
def requantize8(typingctx, target, sums, bias, i, m, half, shift_hi, zero_point, lo, hi):
    """``target[i + j] = clamp(((sext(sums[i + j] + bias[i + j]) * m + half - (v < 0)) >> 32 >> shift_hi) +
    zero_point, lo, hi)`` for ``j < 8``: ``target`` uint8, ``sums`` and ``bias`` int32, each contiguous from ``i``
    on for 8 elements (the caller's bounds), the scalars integers (``m`` a 31-bit multiplier)."""
    scalars = (i, m, half, shift_hi, zero_point, lo, hi)
    if not (_is_vector(target, types.uint8) and _is_vector(sums, types.int32) and _is_vector(bias, types.int32)
            and all(isinstance(s, types.Integer) for s in scalars)):
        return None

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, a) for t, a in zip(signature.args[:3], args[:3])]
        i, *rule = (context.cast(builder, a, t, types.int64) for a, t in zip(args[3:], signature.args[3:]))
        v32, v8 = ir.VectorType(_I32, WIDTH), ir.VectorType(_I8, WIDTH)

        def at(array, vec):
            return builder.bitcast(builder.gep(array.data, [i]), vec.as_pointer())
        v = builder.add(builder.load(at(arrays[1], v32), align=4), builder.load(at(arrays[2], v32), align=4))
        builder.store(requantize_vector(builder, v, *rule), at(arrays[0], v8), align=1)
        return context.get_dummy_value()
    return types.void(target, sums, bias, *scalars), codegen
