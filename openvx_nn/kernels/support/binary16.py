"""IEEE binary16 (``VX_TYPE_FLOAT16``) bits to float32 bits and back, as LLVM IR on one value or on a vector.

numba has no float16 type, so kernels hold binary16 as ``uint16`` bits. The one definition of the conversions,
built into a scalar intrinsic (:func:`widen_bits`, :func:`narrow_bits`, what loops call per value) and into
vector micro-kernels that read and write binary16 themselves (``frontend/window_runs``):

- widening is exact (every binary16 value is a float32): LLVM's ``fpext`` (``vcvtph2ps`` with F16C), with a
  signaling NaN's quiet bit cleared again, so a NaN keeps its payload as it was;
- narrowing rounds to nearest, ties to even, as NumPy's ``astype(np.float16)``: from 65520 on to infinity,
  tiny values to subnormals or a signed zero; LLVM's ``fptrunc`` (``vcvtps2ph``), but a NaN keeps its payload's
  high bits (at least one set) and its quiet bit as it was, where the CPU would quiet it.

Both are selects on the bits, never branches, so loops over them vectorize. Where arithmetic follows the widening
(a sum) every NaN it gives is quiet whatever the input's quiet bit was, and a quiet NaN narrows to the same bits
either way, so such kernels take the CPU's conversions alone (:func:`widen_arithmetic`,
:func:`narrow_arithmetic`: one instruction a vector).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_I16, _I32, _F32, _HALF = ir.IntType(16), ir.IntType(32), ir.FloatType(), ir.HalfType()


def _like(value: ir.Value, element: ir.Type) -> ir.Type:
    """``element``, or a vector of it as long as ``value``'s type when that is a vector."""
    kind = value.type
    return ir.VectorType(element, kind.count) if isinstance(kind, ir.VectorType) else element


def _const(kind: ir.Type, number: int) -> ir.Constant:
    """``number`` in every lane of ``kind`` (an integer type or a vector of one)."""
    return ir.Constant(kind, [number] * kind.count) if isinstance(kind, ir.VectorType) else ir.Constant(kind, number)


def widen_lanes(b: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """The float32 bits (i32 lanes) of the binary16 bits ``h`` (i16 lanes), exactly (module doc)."""
    i32 = _like(h, _I32)
    i16 = h.type
    o = b.bitcast(b.fpext(b.bitcast(h, _like(h, _HALF)), _like(h, _F32)), i32)
    # a signaling NaN: a magnitude in 0x7C01..0x7DFF, one unsigned comparison in the 16-bit lanes
    signaling = b.icmp_unsigned("<", b.sub(b.and_(h, _const(i16, 0x7FFF)), _const(i16, 0x7C01)), _const(i16, 0x1FF))
    return b.select(signaling, b.and_(o, _const(i32, 0xFFBFFFFF)), o)


def narrow_lanes(b: ir.IRBuilder, f: ir.Value) -> ir.Value:
    """The binary16 bits (i16 lanes) nearest the float32 bits ``f`` (i32 lanes), ties to even (module doc): the
    CPU's narrowing, and for a NaN the sign, 0x7C00 and the payload's high ten bits (the quiet bit as it was),
    at least ``1`` of them."""
    i16 = _like(f, _I16)
    single = b.bitcast(f, _like(f, _F32))
    ordinary = b.bitcast(b.fptrunc(single, _like(f, _HALF)), i16)
    high = b.trunc(b.lshr(f, _const(f.type, 13)), i16)  # a NaN's: 0xFC00 | the payload's high ten bits
    sign = b.trunc(b.lshr(f, _const(f.type, 16)), i16)
    nan = b.or_(b.and_(sign, _const(i16, 0x8000)), b.and_(high, _const(i16, 0x7FFF)))
    least = b.or_(b.and_(nan, _const(i16, 0xFC00)), _const(i16, 1))  # the sign, 0x7C00 and a payload of 1
    nan = b.select(b.icmp_unsigned(">", nan, least), nan, least)
    magnitude = b.and_(f, _const(f.type, 0x7FFFFFFF))
    return b.select(b.icmp_unsigned(">", magnitude, _const(f.type, 0x7F800000)), nan, ordinary)


def widen_arithmetic(b: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """The float32 bits (i32 lanes) of the binary16 bits ``h`` (i16 lanes) for arithmetic: exact, but a signaling
    NaN comes out quiet (``vcvtph2ps``), as the arithmetic after it would make it (module doc)."""
    return b.bitcast(b.fpext(b.bitcast(h, _like(h, _HALF)), _like(h, _F32)), _like(h, _I32))


def narrow_arithmetic(b: ir.IRBuilder, f: ir.Value) -> ir.Value:
    """The binary16 bits (i16 lanes) nearest the float32 bits ``f`` (i32 lanes), ties to even, for a result of
    arithmetic: a quiet NaN gives :func:`narrow_lanes`' bits; a signaling one would come out quiet."""
    return b.bitcast(b.fptrunc(b.bitcast(f, _like(f, _F32)), _like(f, _HALF)), _like(f, _I16))


@intrinsic
def widen_bits(typingctx, h):
    """The float32 bits (uint32) of the binary16 bits ``h``, exactly (module doc); an integer of another width is
    cast to uint16 first (a loop typing both directions passes either)."""
    if not isinstance(h, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return widen_lanes(builder, args[0])
    return types.uint32(types.uint16), codegen


@intrinsic
def narrow_bits(typingctx, f):
    """The binary16 bits (uint16) nearest the float32 bits ``f``, ties to even (module doc); an integer of another
    width is cast to uint32 first (numba computes on 64 bits)."""
    if not isinstance(f, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return narrow_lanes(builder, args[0])
    return types.uint16(types.uint32), codegen
