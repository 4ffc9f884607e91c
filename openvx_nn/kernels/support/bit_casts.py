"""Bit casts between float32 and its 32-bit pattern, as LLVM ``bitcast``s (no instruction; loops over them
vectorize): what kernels that select on a float's bits (NaN payloads, binary16 conversions, powers of two built
from exponents) read and write; and float32's fused multiply-add, an LLVM intrinsic numba does not offer."""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def float_of_bits(typingctx, bits):
    """The float32 whose bits the low 32 bits of the integer ``bits`` hold (numba widens integer arithmetic to 64
    bits: the value is cast to int32 or uint32 first)."""
    if not isinstance(bits, types.Integer):
        return None
    if bits.bitwidth != 32:
        bits = types.int32 if bits.signed else types.uint32

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(bits), codegen


@intrinsic
def bits_of_float(typingctx, value):
    """The uint32 bits of the float32 ``value``."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def fused_multiply_add(typingctx, a, b, c):
    """``a * b + c`` of float32 values rounded once (``llvm.fma.f32``: a loop of them vectorizes to ``vfmadd``)."""
    if not (a == types.float32 and b == types.float32 and c == types.float32):
        return None

    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        fma = builder.module.declare_intrinsic("llvm.fma", [f32], ir.FunctionType(f32, [f32, f32, f32]))
        return builder.call(fma, args)
    return types.float32(types.float32, types.float32, types.float32), codegen
