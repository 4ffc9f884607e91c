"""NNAPI's requantization of eight int32 sums in one vector, written as LLVM IR so that it is vectorized.

``engine.nhwc.scale_run`` states the rule in 32-bit lanes (``|sum + bias| < 2**31``, ``32 <= shift <= 62``):
``q = ((sext(v) * m + half - (v < 0)) >> 32) >> (shift - 32)``, plus the zero point, clamped to ``[lo, hi]``.
numba's loop of it vectorized only in part (4-lane 64-bit pieces and a scalar remainder: about 1.2 ns a value,
most of a 1x1 layer's time); here the same operations on ``<8 x i32>`` vectors let LLVM pick ``vpmuldq`` for the
products, in-lane shuffles for the high words, ``vpsrad`` for the shift and ``vpackus*`` for the bytes (about
0.25 ns a value), on any x86 (generic IR: no instruction is named, so it is correct wherever LLVM compiles it).
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
    """The rule on ``v`` (``<n x i32>``, ``n`` even, bias included) with i64 scalars (``0 <= lo <= hi <= 255``): the
    ``<n x i8>`` outputs.

    The 64-bit products are formed in place: the vector read as ``n / 2`` i64 lanes holds the even lanes' sums
    in its low halves and the odd lanes' in its high halves, each sign-extended by a shift pair (``vpmuldq``
    reads the low 32 bits of a 64-bit lane), and the two products' high words are interleaved back into the
    lanes' order. No lane crosses a 128-bit half (sign-extending the halves apart needed extracts and
    permutes). ``p < 0`` stands for ``v < 0``: ``m > 0``, and ``v = 0`` gives ``p = 0`` either way."""
    n = v.type.count
    v32, v64 = ir.VectorType(_I32, n), ir.VectorType(_I64, n // 2)

    def lanes32(value):
        return splat(builder, builder.trunc(value, _I32), v32)
    wide = builder.bitcast(v, v64)
    high_half = ir.Constant(v64, 32)
    even = builder.ashr(builder.shl(wide, high_half), high_half)
    odd = builder.ashr(wide, high_half)
    factor = builder.sext(builder.trunc(m, _I32), _I64)
    factor = splat(builder, factor, v64)
    rounding = splat(builder, half, v64)

    def rounded(x):
        product = builder.mul(x, factor)
        negative = builder.sext(builder.icmp_signed("<", product, ir.Constant(v64, 0)), v64)
        return builder.bitcast(builder.add(builder.add(product, rounding), negative), v32)
    high_words = [i + 1 + (n if i % 2 else 0) - (i % 2) for i in range(n)]  # lane 2j: even's 2j+1; 2j+1: odd's
    q = builder.shuffle_vector(rounded(even), rounded(odd), ir.Constant(ir.VectorType(_I32, n), high_words))
    q = builder.add(builder.ashr(q, lanes32(shift_hi)), lanes32(zero_point))
    byte = ir.Constant(_I64, 255)  # lo, hi are within [0, 255]: known so, the output packs with vpackus*
    low, high = lanes32(builder.and_(lo, byte)), lanes32(builder.and_(hi, byte))
    q = builder.select(builder.icmp_signed("<", q, low), low, q)
    q = builder.select(builder.icmp_signed(">", q, high), high, q)
    return builder.trunc(q, ir.VectorType(_I8, n))


def _is_vector(array, dtype) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == dtype


def _requantizer(width: int):
    """The intrinsic of the rule over ``width`` lanes (:func:`requantize8` is ``_requantizer(8)``)."""
    @intrinsic
    def requantize(typingctx, target, sums, bias, i, m, half, shift_hi, zero_point, lo, hi):
        scalars = (i, m, half, shift_hi, zero_point, lo, hi)
        if not (_is_vector(target, types.uint8) and _is_vector(sums, types.int32) and _is_vector(bias, types.int32)
                and all(isinstance(s, types.Integer) for s in scalars)):
            return None

        def codegen(context, builder, signature, args):
            arrays = [context.make_array(t)(context, builder, a) for t, a in zip(signature.args[:3], args[:3])]
            i, *rule = (context.cast(builder, a, t, types.int64) for a, t in zip(args[3:], signature.args[3:]))
            v32, v8 = ir.VectorType(_I32, width), ir.VectorType(_I8, width)

            def at(array, vec):
                return builder.bitcast(builder.gep(array.data, [i]), vec.as_pointer())
            v = builder.add(builder.load(at(arrays[1], v32), align=4), builder.load(at(arrays[2], v32), align=4))
            builder.store(requantize_vector(builder, v, *rule), at(arrays[0], v8), align=1)
            return context.get_dummy_value()
        return types.void(target, sums, bias, *scalars), codegen
    return requantize


requantize8 = _requantizer(WIDTH)
"""``requantize8(target, sums, bias, i, m, half, shift_hi, zero_point, lo, hi)``: ``target[i + j] =
clamp(((sext(sums[i + j] + bias[i + j]) * m + half - (v < 0)) >> 32 >> shift_hi) + zero_point, lo, hi)`` for
``j < 8``: ``target`` uint8, ``sums`` and ``bias`` int32, each contiguous from ``i`` on for 8 elements (the
caller's bounds), the scalars integers (``m`` a 31-bit multiplier)."""
requantize16 = _requantizer(16)
""":data:`requantize8` over 16 lanes (AVX-512's vector; two AVX2 vectors)."""
