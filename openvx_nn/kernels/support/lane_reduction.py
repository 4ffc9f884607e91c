"""A row's reduction in four accumulators of eight lanes, written once (softmax's maximum and sum, the moments'
sums).

The order is fixed: the whole groups of eight terms go to four 8-lane accumulators in turn (group ``g``, terms
``8g .. 8g + 7``, into accumulator ``g % 4``, term ``8g + j`` into its lane ``j``), the accumulators combine lane
by lane as ``(A0, A1), (A2, A3)``, the lanes as ``((0, 1), (2, 3)), ((4, 5), (6, 7))``, and the tail's terms
follow one by one. The loop is written here as LLVM IR over ``<8 x T>`` values: numba leaves LLVM's SLP
vectorizer off, and scalar accumulators in a plain loop stayed scalar chains (``vaddsd``/``vmaxss``, one term per
instruction). Four accumulators, not one, because one vector addition waits for the previous one (4 cycles on
Intel's cores): a single chain bounded a row's sum at half a cycle a term, as long as softmax's exponentials.
The IR does each term's operations in one order and precision (no fast-math flags, no contraction into FMA), so
the results are fixed bits; the vector width is LLVM's to split (one zmm on AVX-512, two ymm on AVX2).

A reduction is a ``term`` and an ``add``, each an IR builder over scalars or ``<8 x T>`` vectors alike, so the
tail and the lanes share one definition.
"""
from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 8
WAYS = 4
"""Accumulators of ``LANES`` lanes, taking the groups of eight in turn."""
I32, I64 = ir.IntType(32), ir.IntType(64)
DOUBLE = ir.DoubleType()

Term = Callable[[ir.IRBuilder, ir.Value, ir.Value], ir.Value]
"""``term(builder, x, arg) -> value``: ``x`` a loaded element (or ``<8 x>`` of them), ``arg`` the float64 argument
(broadcast alike)."""
Add = Callable[[ir.IRBuilder, ir.Value, ir.Value], ir.Value]
"""``add(builder, accumulated, value) -> accumulated``."""


def _like(value: ir.Value, scalar: ir.Type) -> ir.Type:
    """``scalar``, or a vector of it as wide as ``value``."""
    return ir.VectorType(scalar, value.type.count) if isinstance(value.type, ir.VectorType) else scalar


def widened(b: ir.IRBuilder, x: ir.Value, arg: ir.Value) -> ir.Value:
    """``float64(x)`` (exact)."""
    element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
    return x if isinstance(element, ir.DoubleType) else b.fpext(x, _like(x, DOUBLE))


def value(b: ir.IRBuilder, x: ir.Value, arg: ir.Value) -> ir.Value:
    """``x`` itself."""
    return x


def squared_deviation(b: ir.IRBuilder, x: ir.Value, arg: ir.Value) -> ir.Value:
    """``(float64(x) - arg) ** 2``: a subtraction and a product, each rounded."""
    d = b.fsub(widened(b, x, arg), arg)
    return b.fmul(d, d)


def plus(b: ir.IRBuilder, s: ir.Value, v: ir.Value) -> ir.Value:
    """``s + v``."""
    return b.fadd(s, v)


def larger(b: ir.IRBuilder, m: ir.Value, v: ir.Value) -> ir.Value:
    """``v if v > m else m``: a NaN never replaces ``m``, and of equal values the first stays."""
    return b.select(b.fcmp_ordered(">", v, m), v, m)


def _splat(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    vec = ir.VectorType(v.type, LANES)
    one = b.insert_element(ir.Constant(vec, ir.Undefined), v, ir.Constant(I32, 0))
    return b.shuffle_vector(one, ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(I32, LANES), None))


def _halves(b: ir.IRBuilder, add: Add, v: ir.Value) -> ir.Value:
    """``add`` of the even lanes and the odd ones: ``[add(v0, v1), add(v2, v3), ...]``."""
    count = v.type.count
    even = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, count // 2), list(range(0, count, 2))))
    odd = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, count // 2), list(range(1, count, 2))))
    return add(b, even, odd)


def lane_reduction(term: Term, add: Add, name: str) -> Callable:
    """A jit-callable ``reduce(row, n, first, arg)``: ``add`` over ``term(row[k], arg)`` for ``k`` in ``[0, n)``,
    in the module's order, each accumulator's lanes starting at ``first`` (``add``'s identity, or a value whose
    repetition changes nothing, as ``row[0]`` for a maximum); the result has ``first``'s type, ``arg`` is taken
    as float64. ``row`` is a 1-D array of any layout (a C-contiguous one is read in vector loads)."""

    def reduce(typingctx, row, n, first, arg):
        if not isinstance(row, types.Array) or row.ndim != 1 or not isinstance(first, types.Float):
            return None

        def codegen(context, builder, signature, args):
            row_type, n_type, _, arg_type = signature.args
            array = context.make_array(row_type)(context, builder, args[0])
            count = context.cast(builder, args[1], n_type, types.int64)
            start = args[2]
            wide = context.cast(builder, args[3], arg_type, types.float64)
            data = builder.ptrtoint(array.data, I64)
            stride = cgutils.unpack_tuple(builder, array.strides, 1)[0]
            element = array.data.type.pointee
            itemsize = context.get_abi_sizeof(element)

            def scalar_at(k):
                address = builder.add(data, builder.mul(k, stride))
                return builder.load(builder.inttoptr(address, element.as_pointer()), align=itemsize)

            def lanes_at(k):
                if row_type.layout == "C":
                    address = builder.add(data, builder.mul(k, ir.Constant(I64, itemsize)))
                    return builder.load(builder.inttoptr(address, ir.VectorType(element, LANES).as_pointer()),
                                        align=itemsize)
                lanes = ir.Constant(ir.VectorType(element, LANES), ir.Undefined)
                for j in range(LANES):
                    lanes = builder.insert_element(lanes, scalar_at(builder.add(k, ir.Constant(I64, j))),
                                                   ir.Constant(I32, j))
                return lanes

            whole = builder.and_(count, ir.Constant(I64, -LANES))
            rounds = builder.and_(count, ir.Constant(I64, -LANES * WAYS))
            accumulators = [cgutils.alloca_once_value(builder, _splat(builder, start)) for _ in range(WAYS)]
            wide_arg = _splat(builder, wide)

            def accumulate(way, k):
                builder.store(add(builder, builder.load(accumulators[way]), term(builder, lanes_at(k), wide_arg)),
                              accumulators[way])
            with cgutils.for_range_slice(builder, ir.Constant(I64, 0), rounds, ir.Constant(I64, LANES * WAYS),
                                         inc=True) as (k, _):
                for way in range(WAYS):
                    accumulate(way, builder.add(k, ir.Constant(I64, LANES * way)))
            for way in range(WAYS - 1):  # the last whole groups, fewer than four, to accumulators 0, 1, 2
                k = builder.add(rounds, ir.Constant(I64, LANES * way))
                with builder.if_then(builder.icmp_signed("<", k, whole)):
                    accumulate(way, k)
            a = [builder.load(acc) for acc in accumulators]
            combined = add(builder, add(builder, a[0], a[1]), add(builder, a[2], a[3]))
            while combined.type.count > 1:
                combined = _halves(builder, add, combined)
            acc = cgutils.alloca_once_value(builder, builder.extract_element(combined, ir.Constant(I32, 0)))
            with cgutils.for_range_slice(builder, whole, count, ir.Constant(I64, 1), inc=True) as (k, _):
                builder.store(add(builder, builder.load(acc), term(builder, scalar_at(k), wide)), acc)
            return builder.load(acc)
        return first(row, n, first, arg), codegen

    reduce.__name__ = reduce.__qualname__ = f"lane_reduction_{name}"
    return intrinsic(reduce)
