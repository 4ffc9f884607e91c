"""The OpenVX requantization of eight int32 sums in one vector, for the SIMD engine's epilogue.

``fixed_point.requantize_lane`` works on int64 values: numba's loop of it runs four lanes a vector and, on AVX2
(no 64-bit arithmetic shift), emulates each shift: as long as the micro-kernel itself for small layers. When
the caller has checked that every value stays within int32 -- ``|v| + c + m < 2**31`` for
``v = (sum << sum_shift) + aligned`` -- the same steps on ``<8 x i32>`` lanes give the same bits:

- rounding, one formula for both policies: ``(v + c + ((v >> s1) & m)) >> shift`` (arithmetic shifts), with
  ``(c, s1, m)`` = ``(2**(shift-1) - 1, shift, 1)`` to nearest, ties to even (the bit that lands in the last kept
  place decides a tie), ``(0, 31, 2**shift - 1)`` toward zero (negatives biased up), ``(0, 0, 0)`` for shift 0
  (:func:`rounding`);
- fitting: clamped to ``[lo, hi]`` (saturate) or wrapped: ``u = v & (span - 1)``, less ``span`` above ``hi``.

Generic IR (no instruction named): correct wherever LLVM compiles it.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support import jit
from ..support.llvm_loops import splat

WIDTH = 8
_I32 = ir.IntType(32)
_VEC = ir.VectorType(_I32, WIDTH)
_NARROW = {types.int8: 8, types.uint8: 8, types.int16: 16, types.uint16: 16}  # spans within int32


@jit.kernel
def rounding(shift, nearest_even):
    """``(c, s1, m)`` of the rounding formula for ``0 <= shift < 31`` (see the module's docstring)."""
    if shift == 0:
        return 0, 0, 0
    if nearest_even:
        return (1 << (shift - 1)) - 1, shift, 1
    return 0, 31, (1 << shift) - 1


def _is_vector(array, dtypes) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype in dtypes


@intrinsic
def settle8(typingctx, narrow, n_at, sums, s_at, aligned, a_at, sum_shift, c, s1, m, shift, saturate, lo, hi):
    """``narrow[n_at + j] = fit(round((sums[s_at + j] << sum_shift) + aligned[a_at + j]))`` for ``j < 8``, in
    int32 lanes (the module's docstring: the caller guarantees the bound); ``sums`` and ``aligned`` int32,
    ``narrow`` 8- or 16-bit, all contiguous over those 8 elements."""
    scalars = (n_at, s_at, a_at, sum_shift, c, s1, m, shift, lo, hi)
    if not (_is_vector(narrow, _NARROW) and _is_vector(sums, (types.int32,)) and _is_vector(aligned, (types.int32,))
            and isinstance(saturate, types.Boolean) and all(isinstance(s, types.Integer) for s in scalars)):
        return None
    bits = _NARROW[narrow.dtype]

    def codegen(context, builder, signature, args):
        out, x, a = (context.make_array(t)(context, builder, v) for t, v in zip(signature.args[0:6:2], args[0:6:2]))
        n_at, s_at, a_at = (context.cast(builder, v, t, types.int64) for v, t in zip(args[1:6:2], signature.args[1:6:2]))
        lanes = {}
        for name, index in (("sum_shift", 6), ("c", 7), ("s1", 8), ("m", 9), ("shift", 10), ("lo", 12), ("hi", 13)):
            value = context.cast(builder, args[index], signature.args[index], types.int64)
            lanes[name] = splat(builder, builder.trunc(value, _I32), _VEC)
        saturate = context.cast(builder, args[11], signature.args[11], types.boolean)

        def at(array, index, vec):
            return builder.bitcast(builder.gep(array.data, [index]), vec.as_pointer())
        v = builder.shl(builder.load(at(x, s_at, _VEC), align=4), lanes["sum_shift"])
        v = builder.add(v, builder.load(at(a, a_at, _VEC), align=4))
        bit = builder.and_(builder.ashr(v, lanes["s1"]), lanes["m"])
        v = builder.ashr(builder.add(builder.add(v, lanes["c"]), bit), lanes["shift"])
        low, high = lanes["lo"], lanes["hi"]
        clamped = builder.select(builder.icmp_signed("<", v, low), low, v)
        clamped = builder.select(builder.icmp_signed(">", clamped, high), high, clamped)
        span = builder.add(builder.sub(high, low), ir.Constant(_VEC, [1] * WIDTH))
        wrapped = builder.and_(v, builder.sub(span, ir.Constant(_VEC, [1] * WIDTH)))
        wrapped = builder.select(builder.icmp_signed(">", wrapped, high), builder.sub(wrapped, span), wrapped)
        q = builder.select(saturate, clamped, wrapped)
        target = ir.VectorType(ir.IntType(bits), WIDTH)
        builder.store(builder.trunc(q, target), at(out, n_at, target), align=bits // 8)
        return context.get_dummy_value()
    return types.void(narrow, n_at, sums, s_at, aligned, a_at, sum_shift, c, s1, m, shift, saturate, lo, hi), codegen
