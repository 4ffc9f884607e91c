"""The ``u8s8`` micro-kernel of ``microkernel.py`` on Intel AMX tiles (``tdpbusd``/``tdpbsud``), as LLVM IR.

Same contract and arguments as the VNNI micro-kernel (``microkernel.tile_kernel``)::

    tile[r, v*16 + l] = sum over t < n_taps, i < n_inner, e < 4 of
                        A[rows[r] + taps[t] + 4*i + e] * W[t, i, v, l, e]

with ``rows`` 16 or 32 (one or two A tiles) and ``vecs`` 1 or 2 (one or two B tiles), so up to four int32
accumulator tiles. Why the VNNI packing fits unchanged: the weights are packed ``[tap][group][vector][lane][e]``,
64 bytes per vector per group, so 16 consecutive groups of vector ``v`` are an AMX B tile (16 rows of
``lane x e`` bytes at a stride of ``vecs * 64``), and the int32 tile stored row-major at a stride of
``vecs * 64`` bytes is exactly the ``rows x (vecs * 16)`` tile the callers read.

A tiles: each step's 16 rows x 64 bytes (16 groups) are loaded straight from the input where the rows lie at
one stride (checked once a call: consecutive pixels of a row of output), else gathered into a 64-byte aligned
stack buffer. The last ``n_inner % 16`` groups of each tap: the rows are read under a byte mask (zeros past the
run, so nothing beyond it is read and nothing it would meet counts) and the weights' remaining rows copied to a
stack buffer (the rows past them are never multiplied by anything but those zeros and are not read from the
weights, which end there for the last tap).

Each step's weights are prefetched ``PREFETCH`` bytes ahead (a fully connected layer's stream from memory).

Tile configuration (all eight tiles 16 rows x 64 bytes): loaded only when the thread's is another, which is then
put back at the end unless the tiles were unconfigured; no ``tilerelease`` (see ``define``).

Exactness as the VNNI kernel's: AMX adds modulo ``2**32`` like ``vpdpbusd``, so the int32 sums are the same bits;
the K-blocks that keep them exact are the caller's. ``weights_unsigned``: the weights are the u8 operand, the
input the s8 one (``tdpbsud``), else the reverse (``tdpbusd``). Only compile it where ``isa.amx()`` is true: the
process must hold Linux's permission for tile data before the first tile instruction.
"""
from __future__ import annotations

from llvmlite import ir

from ..support.llvm_loops import constant

ROWS = (16, 32)
VECS = (1, 2)
_I8, _I16, _I64 = ir.IntType(8), ir.IntType(16), ir.IntType(64)
_BYTES = ir.VectorType(_I8, 64)
_TILE = 1024  # bytes of one 16 x 64 tile
# Each step's weights are prefetched (prefetcht0) this many bytes ahead of its B tiles' loads: the 32-row fully
# connected layer's weights stream from memory, a convolution's block from L2 (a kernel probe, in turns in one
# process: FC 9216 -> 4096 on 32 x 2 tiles 5-8 % faster in 5 runs of 6; docs/benchmarks.md).
PREFETCH = 4096


def _config(n_tiles: int) -> ir.Constant:
    """The 64-byte tile configuration: palette 1, tiles 0 .. n_tiles-1 of 16 rows x 64 bytes."""
    cfg = [0] * 64
    cfg[0] = 1
    for t in range(n_tiles):
        cfg[16 + 2 * t] = 64  # colsb, little-endian uint16
        cfg[48 + t] = 16
    return ir.Constant(_BYTES, cfg)


def define(module: ir.Module, name: str, rows: int, vecs: int, weights_unsigned: bool,
           prefetch: int = PREFETCH, locality: int = 3) -> ir.Function:
    """The function ``name(out, row_addr, tap_addr, n_taps, n_inner, w, w_tap_stride)`` (all i64); ``prefetch``:
    each step's weights are prefetched that many bytes ahead (0: none), with LLVM's ``locality`` (3: all cache
    levels)."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    if rows not in ROWS or vecs not in VECS:
        raise ValueError(f"no AMX tile of {rows} rows by {vecs} vectors")
    a_tiles = rows // 16
    n_acc = a_tiles * vecs
    a_id = [4 + a for a in range(a_tiles)]  # tiles 0..3 accumulate, 4..5 hold A, 6..7 hold B
    b_id = [6 + v for v in range(vecs)]
    i8p = _I8.as_pointer()
    void = ir.VoidType()
    tile_cfg = module.declare_intrinsic("llvm.x86.ldtilecfg", fnty=ir.FunctionType(void, [i8p]))
    tile_load = module.declare_intrinsic("llvm.x86.tileloadd64", fnty=ir.FunctionType(void, [_I8, i8p, _I64]))
    tile_store = module.declare_intrinsic("llvm.x86.tilestored64", fnty=ir.FunctionType(void, [_I8, i8p, _I64]))
    tile_zero = module.declare_intrinsic("llvm.x86.tilezero", fnty=ir.FunctionType(void, [_I8]))
    tile_store_cfg = module.declare_intrinsic("llvm.x86.sttilecfg", fnty=ir.FunctionType(void, [i8p]))
    op = "llvm.x86.tdpbsud" if weights_unsigned else "llvm.x86.tdpbusd"
    product = module.declare_intrinsic(op, fnty=ir.FunctionType(void, [_I8, _I8, _I8]))
    i32 = ir.IntType(32)
    fetch = module.declare_intrinsic("llvm.prefetch.p0", fnty=ir.FunctionType(void, [i8p, i32, i32, i32]))
    flags = ir.VectorType(ir.IntType(1), 64)
    masked_load = module.declare_intrinsic(
        "llvm.masked.load.v64i8.p0", fnty=ir.FunctionType(_BYTES, [_BYTES.as_pointer(), ir.IntType(32), flags,
                                                                    _BYTES]))

    fn = ir.Function(module, ir.FunctionType(void, [_I64] * 7), name)
    fn.linkage = "internal"
    out, row_addr, tap_addr, n_taps, n_inner, w, w_stride = fn.args
    blocks = {n: fn.append_basic_block(n) for n in ("entry", "t_head", "t_body", "c_head", "c_body", "direct",
                                                   "gather", "compute", "tail_check", "tail", "b_head", "b_body",
                                                   "tail_compute", "t_next", "done")}
    tid = [ir.Constant(_I8, i) for i in range(8)]
    bytes_p = _BYTES.as_pointer()
    row_bytes = vecs * 64  # weight bytes per group (one B row of every vector)

    def ptr(b, address, kind=i8p):
        return b.inttoptr(address, kind)

    def load_b_tiles(b, base, product_all):
        for v in range(vecs):
            b.call(tile_load, [tid[b_id[v]], ptr(b, b.add(base, constant(64 * v))), constant(row_bytes)])
        if product_all:
            for a in range(a_tiles):
                for v in range(vecs):
                    b.call(product, [tid[a * vecs + v], tid[a_id[a]], tid[b_id[v]]])

    b = ir.IRBuilder(blocks["entry"])
    # The thread's tile configuration: kept when it is already ours (the usual case, from the second call on:
    # an ldtilecfg and a tilerelease on every call cost about as much as the products of a small tile), else ours
    # loaded and, at the end, the one found put back where there was one (a library that configures its tiles
    # once per thread, like ONNX Runtime's MLAS, then finds its own again; unconfigured tiles stay ours).
    cfg = b.alloca(_BYTES)
    cfg.align = 64
    b.store(_config(8), cfg, align=64)
    found = b.alloca(_BYTES)
    found.align = 64
    b.call(tile_store_cfg, [b.bitcast(found, i8p)])
    wide = ir.IntType(512).as_pointer()
    other = b.icmp_unsigned("!=", b.load(b.bitcast(found, wide), align=64), b.load(b.bitcast(cfg, wide), align=64))
    with b.if_then(other, likely=False):
        b.call(tile_cfg, [b.bitcast(cfg, i8p)])
    restore = b.and_(other, b.icmp_unsigned("!=", b.load(b.bitcast(found, i8p), align=64), ir.Constant(_I8, 0)))
    for k in range(n_acc):
        b.call(tile_zero, [tid[k]])
    a_buf = b.alloca(ir.ArrayType(_I8, rows * 64))
    a_buf.align = 64
    b_buf = b.alloca(ir.ArrayType(_I8, 16 * row_bytes))
    b_buf.align = 64
    a_at = b.ptrtoint(a_buf, _I64)
    b_at = b.ptrtoint(b_buf, _I64)
    i64p = _I64.as_pointer()
    bases = [b.load(ptr(b, b.add(row_addr, constant(8 * r)), i64p)) for r in range(rows)]
    pitch = b.sub(bases[1], bases[0])
    uniform = ir.Constant(ir.IntType(1), 1)
    for r in range(2, rows):
        uniform = b.and_(uniform, b.icmp_signed("==", bases[r], b.add(bases[0], b.mul(pitch, constant(r)))))
    chunks = b.ashr(n_inner, constant(4))
    rem = b.and_(n_inner, constant(15))
    start = b.block
    b.branch(blocks["t_head"])

    b = ir.IRBuilder(blocks["t_head"])
    t = b.phi(_I64, "t")
    b.cbranch(b.icmp_signed("<", t, n_taps), blocks["t_body"], blocks["done"])

    b = ir.IRBuilder(blocks["t_body"])
    tap = b.load(ptr(b, b.add(tap_addr, b.mul(t, constant(8))), i64p))
    w_tap = b.add(w, b.mul(t, w_stride))
    b.branch(blocks["c_head"])

    b = ir.IRBuilder(blocks["c_head"])
    c = b.phi(_I64, "c")
    b.cbranch(b.icmp_signed("<", c, chunks), blocks["c_body"], blocks["tail_check"])

    b = ir.IRBuilder(blocks["c_body"])
    offset = b.add(tap, b.mul(c, constant(64)))
    b.cbranch(uniform, blocks["direct"], blocks["gather"])

    b = ir.IRBuilder(blocks["direct"])  # rows at one stride: the tiles straight from the input
    first = b.add(bases[0], offset)
    for a in range(a_tiles):
        b.call(tile_load, [tid[a_id[a]], ptr(b, b.add(first, b.mul(pitch, constant(16 * a)))), pitch])
    b.branch(blocks["compute"])

    b = ir.IRBuilder(blocks["gather"])
    for r in range(rows):
        value = b.load(ptr(b, b.add(bases[r], offset), bytes_p), align=1)
        b.store(value, ptr(b, b.add(a_at, constant(64 * r)), bytes_p), align=64)
    for a in range(a_tiles):
        b.call(tile_load, [tid[a_id[a]], ptr(b, b.add(a_at, constant(_TILE * a))), constant(64)])
    b.branch(blocks["compute"])

    b = ir.IRBuilder(blocks["compute"])
    w_step = b.add(w_tap, b.mul(c, constant(16 * row_bytes)))
    if prefetch:  # a step's weights, ``prefetch`` bytes ahead (past the end: no fault, nothing loaded)
        ahead = b.add(w_step, constant(prefetch))
        for line in range(16 * row_bytes // 64):
            b.call(fetch, [ptr(b, b.add(ahead, constant(64 * line))), ir.Constant(ir.IntType(32), 0),
                           ir.Constant(ir.IntType(32), locality), ir.Constant(ir.IntType(32), 1)])
    load_b_tiles(b, w_step, True)
    c_next = b.add(c, constant(1))
    b.branch(blocks["c_head"])

    b = ir.IRBuilder(blocks["tail_check"])
    b.cbranch(b.icmp_signed("!=", rem, constant(0)), blocks["tail"], blocks["t_next"])

    b = ir.IRBuilder(blocks["tail"])  # the last rem < 16 groups: masked rows, the weights' rows copied
    offset_tail = b.add(tap, b.mul(chunks, constant(64)))
    mask = b.bitcast(b.sub(b.shl(constant(1), b.mul(rem, constant(4))), constant(1)), flags)
    zeros = ir.Constant(_BYTES, None)
    for r in range(rows):
        value = b.call(masked_load, [ptr(b, b.add(bases[r], offset_tail), bytes_p), ir.Constant(ir.IntType(32), 1),
                                     mask, zeros])
        b.store(value, ptr(b, b.add(a_at, constant(64 * r)), bytes_p), align=64)
    w_tail = b.add(w_tap, b.mul(chunks, constant(16 * row_bytes)))
    n_copy = b.mul(rem, constant(vecs))  # 64-byte pieces
    b.branch(blocks["b_head"])

    b = ir.IRBuilder(blocks["b_head"])
    j = b.phi(_I64, "j")
    b.cbranch(b.icmp_signed("<", j, n_copy), blocks["b_body"], blocks["tail_compute"])

    b = ir.IRBuilder(blocks["b_body"])
    piece = b.load(ptr(b, b.add(w_tail, b.mul(j, constant(64))), bytes_p), align=1)
    b.store(piece, ptr(b, b.add(b_at, b.mul(j, constant(64))), bytes_p), align=64)
    j_next = b.add(j, constant(1))
    b.branch(blocks["b_head"])

    b = ir.IRBuilder(blocks["tail_compute"])
    for a in range(a_tiles):
        b.call(tile_load, [tid[a_id[a]], ptr(b, b.add(a_at, constant(_TILE * a))), constant(64)])
    load_b_tiles(b, b_at, True)
    b.branch(blocks["t_next"])

    b = ir.IRBuilder(blocks["t_next"])
    t_next = b.add(t, constant(1))
    b.branch(blocks["t_head"])

    b = ir.IRBuilder(blocks["done"])
    for a in range(a_tiles):
        for v in range(vecs):
            at = b.add(out, constant(a * 16 * row_bytes + 64 * v))
            b.call(tile_store, [tid[a * vecs + v], ptr(b, at), constant(row_bytes)])
    with b.if_then(restore, likely=False):
        b.call(tile_cfg, [b.bitcast(found, i8p)])
    b.ret_void()

    t.add_incoming(constant(0), start)
    t.add_incoming(t_next, blocks["t_next"])
    c.add_incoming(constant(0), blocks["t_body"])
    c.add_incoming(c_next, blocks["compute"])
    j.add_incoming(constant(0), blocks["tail"])
    j.add_incoming(j_next, blocks["b_body"])
    return fn
