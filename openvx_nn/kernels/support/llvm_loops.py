"""The LLVM-IR skeleton shared by the register-blocked micro-kernels (integer engine, float32 front end).

A tile of ``rows`` x ``vecs`` vector accumulators is summed over two nested loops, taps (filter rows)
outside and the inner run of one tap inside, with the accumulators as phi values of one function so
LLVM keeps them in registers. The function's first seven arguments are int64
``(out, row_addr, tap_addr, n_taps, n_inner, w, w_tap_stride)``: ``row_addr`` and ``tap_addr`` address
int64 arrays of byte offsets (a row's window origin, a tap's offset), ``w`` the packed weights with
``w_tap_stride`` bytes between taps. What one inner step does (the loads and the multiply-add of the
element type) and what the end does with the sums (store, bias, activation) are the caller's.
"""
from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba import types

I32, I64 = ir.IntType(32), ir.IntType(64)

Tile = list[list[ir.Value]]
Step = Callable[[ir.IRBuilder, ir.Value, list[ir.Value], ir.Value, Tile], Tile]
"""``step(builder, i, row_taps, w_tap, accumulators) -> new accumulators``: one inner step ``i`` (an i64)
with ``row_taps[r]`` the address of row ``r``'s current tap and ``w_tap`` the current tap's weights."""
Combine = Callable[[ir.IRBuilder, ir.Value, ir.Value, ir.Value], ir.Value]
"""``combine(builder, accumulator, broadcast input, weight vector) -> accumulator``: one multiply-add."""
Epilogue = Callable[[ir.IRBuilder, Tile], None]
"""``epilogue(builder, sums)``: what is done with the finished sums (the builder then returns)."""


def constant(value: int) -> ir.Constant:
    """An i64 constant."""
    return ir.Constant(I64, value)


def splat(builder: ir.IRBuilder, value: ir.Value, vec: ir.VectorType) -> ir.Value:
    """``value`` in every lane of a ``vec``."""
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(I32, vec.count),
                                                                                    None))


def broadcast_step(rows: int, vecs: int, vec: ir.VectorType, element: ir.Type, combine: Combine,
                   align: int) -> Step:
    """The inner step of a broadcast tile: load ``vecs`` weight vectors (packed ``[inner][v][lane]``), broadcast
    the 4-byte ``element`` at each row's ``4 * i``, and ``combine`` them into every accumulator."""
    vecp, elementp = vec.as_pointer(), element.as_pointer()
    step_bytes, vec_bytes = 4 * vec.count * vecs, 4 * vec.count

    def step(b: ir.IRBuilder, i: ir.Value, row_tap: list[ir.Value], w_tap: ir.Value, acc: Tile) -> Tile:
        w_step = b.add(w_tap, b.mul(i, constant(step_bytes)))
        weights = [b.load(b.inttoptr(b.add(w_step, constant(vec_bytes * v)), vecp), align=align)
                   for v in range(vecs)]
        new = []
        for r in range(rows):
            value = splat(b, b.load(b.inttoptr(b.add(row_tap[r], b.mul(i, constant(4))), elementp), align=align), vec)
            new.append([combine(b, acc[r][v], value, weights[v]) for v in range(vecs)])
        return new
    return step


def _loop_head(block: ir.Block, name: str, bound: ir.Value, rows: int, vecs: int, vec: ir.VectorType,
               body: ir.Block, leave: ir.Block) -> tuple[ir.Value, Tile]:
    """A loop header: the counter and one accumulator per tile vector as phis, then ``counter < bound``."""
    b = ir.IRBuilder(block)
    counter = b.phi(I64, name)
    accumulators = [[b.phi(vec) for _ in range(vecs)] for _ in range(rows)]
    b.cbranch(b.icmp_signed("<", counter, bound), body, leave)
    return counter, accumulators


def tile_loops(fn: ir.Function, rows: int, vecs: int, vec: ir.VectorType, step: Step, epilogue: Epilogue,
               initial: Callable[[ir.IRBuilder], Tile] | None = None) -> None:
    """Fill ``fn`` (no blocks yet) with the tap and inner loops over a zeroed tile (or over ``initial(builder)``'s
    accumulators, built in the entry block), ``step`` inside and ``epilogue`` after."""
    _, row_addr, tap_addr, n_taps, n_inner, w, w_stride = fn.args[:7]
    entry, t_head, t_body, i_head, i_body, t_next, done = (
        fn.append_basic_block(n) for n in ("entry", "t_head", "t_body", "i_head", "i_body", "t_next", "done"))
    i64p = I64.as_pointer()

    b = ir.IRBuilder(entry)
    bases = [b.load(b.inttoptr(b.add(row_addr, constant(8 * r)), i64p)) for r in range(rows)]
    start = None if initial is None else initial(b)
    b.branch(t_head)

    t, acc_t = _loop_head(t_head, "t", n_taps, rows, vecs, vec, t_body, done)
    b = ir.IRBuilder(t_body)
    tap = b.load(b.inttoptr(b.add(tap_addr, b.mul(t, constant(8))), i64p))
    w_tap = b.add(w, b.mul(t, w_stride))
    row_tap = [b.add(base, tap) for base in bases]
    b.branch(i_head)

    i, acc_i = _loop_head(i_head, "i", n_inner, rows, vecs, vec, i_body, t_next)
    b = ir.IRBuilder(i_body)
    new = step(b, i, row_tap, w_tap, acc_i)
    i_next = b.add(i, constant(1))
    b.branch(i_head)

    b = ir.IRBuilder(t_next)
    t_inc = b.add(t, constant(1))
    b.branch(t_head)

    b = ir.IRBuilder(done)
    epilogue(b, acc_t)
    b.ret_void()

    # The phi edges: t_head from entry (0, zeros) and t_next; i_head from t_body and i_body.
    zero = ir.Constant(vec, None)
    t.add_incoming(constant(0), entry)
    t.add_incoming(t_inc, t_next)
    i.add_incoming(constant(0), t_body)
    i.add_incoming(i_next, i_body)
    for r in range(rows):
        for v in range(vecs):
            acc_t[r][v].add_incoming(zero if start is None else start[r][v], entry)
            acc_t[r][v].add_incoming(acc_i[r][v], t_next)
            acc_i[r][v].add_incoming(acc_t[r][v], t_body)
            acc_i[r][v].add_incoming(new[r][v], i_body)


def masked_lanes(module: ir.Module, vec: ir.VectorType):
    """(load, store, mask) for the lanes of a vector up to a count: ``load(b, address, mask)`` (zeros elsewhere),
    ``store(b, value, address, mask)``, ``mask(b, n)`` (lanes ``< n``, an i64; none for ``n <= 0``), on LLVM's
    masked intrinsics (AVX-512's mask registers; ``vmaskmov`` on AVX2); lanes of float32 or of an integer type
    (binary16 bits are i16 lanes)."""
    flags = ir.VectorType(ir.IntType(1), vec.count)
    vecp = vec.as_pointer()
    element = vec.element
    if isinstance(element, ir.FloatType):
        kind, size = "f32", 4
    else:
        kind, size = f"i{element.width}", element.width // 8
    pointer = "p0" if llvm_version_info[0] >= 17 else f"p0v{vec.count}{kind}"  # opaque pointers from LLVM 17
    load = module.declare_intrinsic(f"llvm.masked.load.v{vec.count}{kind}.{pointer}",
                                    fnty=ir.FunctionType(vec, [vecp, I32, flags, vec]))
    store = module.declare_intrinsic(f"llvm.masked.store.v{vec.count}{kind}.{pointer}",
                                     fnty=ir.FunctionType(ir.VoidType(), [vec, vecp, I32, flags]))
    counts = ir.VectorType(I64, vec.count)
    lanes = ir.Constant(counts, list(range(vec.count)))
    align = ir.Constant(I32, size)

    def mask(b: ir.IRBuilder, n):
        return b.icmp_signed("<", lanes, splat(b, n, counts))
    return (lambda b, at, m: b.call(load, [b.inttoptr(at, vecp), align, m, ir.Constant(vec, None)]),
            lambda b, value, at, m: b.call(store, [value, b.inttoptr(at, vecp), align, m]), mask)


def typed_args(ints: tuple, floats: tuple = ()) -> bool:
    """Whether an intrinsic's numba argument types are integers (``ints``) and floats (``floats``)."""
    return all(isinstance(a, types.Integer) for a in ints) and all(isinstance(a, types.Float) for a in floats)
