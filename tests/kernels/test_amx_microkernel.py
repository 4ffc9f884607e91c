"""The AMX micro-kernel against a plain NumPy sum of products and against the VNNI micro-kernel: the same
int32 tile, bit for bit, over random rows (one stride or scattered), taps, group counts with tails and edge
values. Skipped where the CPU (or Linux) gives no AMX tiles."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.engine import isa

pytestmark = pytest.mark.skipif(not isa.amx(), reason="this CPU or OS gives no AMX-INT8 tiles (or AMX is off)")

_KERNELS = {}


def _tile_function(code):
    """A numba function calling one micro-kernel (``code`` a compile-time constant)."""
    if code not in _KERNELS:
        import numba

        from openvx_nn.kernels.engine.microkernel import tile_kernel

        @numba.njit
        def tile(out, rows, taps, n_taps, n_inner, w, w_stride):
            tile_kernel(code, out.ctypes.data, rows.ctypes.data, taps.ctypes.data, n_taps, n_inner, w.ctypes.data,
                        w_stride)
        _KERNELS[code] = tile
    return _KERNELS[code]


def reference_tile(a, rows, taps, n_inner, w, w_stride, vecs):
    """tile[r, v*16 + l] = sum over t, i, e of A[rows[r] + taps[t] + 4i + e] * W[t, i, v, l, e], in int64, wrapped
    to int32 as the instructions wrap (written from the micro-kernel's contract)."""
    a = a.astype(np.int64)
    out = np.zeros((rows.size, vecs * 16), np.int64)
    for t, tap in enumerate(taps):
        wt = w[t * w_stride: t * w_stride + n_inner * vecs * 64].astype(np.int64).reshape(n_inner, vecs, 16, 4)
        for r, row in enumerate(rows):
            x = a[row + tap: row + tap + 4 * n_inner].reshape(n_inner, 4)
            out[r] += np.einsum("ie,ivle->vl", x, wt).reshape(-1)
    return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)


def _case(rng, rows, vecs, n_taps, n_inner, uniform, a_dtype, w_dtype, edge):
    """Operands at offsets into one input buffer and one weight buffer that end where the data ends (so a read
    past the run would leave the arrays, and the result would show data that is not in the contract)."""
    tap_stride = n_inner * vecs * 64 + int(rng.integers(0, 3)) * 64
    w = rng.integers(np.iinfo(w_dtype).min, np.iinfo(w_dtype).max + 1, n_taps * tap_stride).astype(w_dtype)
    taps = np.sort(rng.choice(np.arange(0, 64 * n_taps, 4), n_taps, replace=False)).astype(np.int64)
    span = 4 * n_inner + int(taps.max())
    if uniform:
        pitch = 4 * n_inner + 4 * int(rng.integers(0, 4))
        starts = np.arange(rows, dtype=np.int64) * pitch
    else:
        starts = rng.integers(0, 40 * rows, rows).astype(np.int64) * 4
    size = int(starts.max()) + span
    lo, hi = np.iinfo(a_dtype).min, np.iinfo(a_dtype).max
    a = rng.integers(lo, hi + 1, size).astype(a_dtype)
    if edge:  # every product at its extreme
        a[:] = lo if a_dtype == np.int8 else hi
        w[:] = np.iinfo(w_dtype).min if w_dtype == np.int8 else np.iinfo(w_dtype).max
    return a, starts, taps, w, tap_stride


@pytest.mark.parametrize("rows, vecs", [(16, 1), (16, 2), (32, 1), (32, 2)])
@pytest.mark.parametrize("weights_unsigned", [False, True])
def test_amx_tile_equals_the_plain_sums_and_the_vnni_tile(rows, vecs, weights_unsigned):
    from openvx_nn.kernels.engine.microkernel import variant
    rng = np.random.default_rng(rows * 10 + vecs + 100 * weights_unsigned)
    a_dtype, w_dtype = (np.int8, np.uint8) if weights_unsigned else (np.uint8, np.int8)
    amx = _tile_function(variant("amx", "u8s8", rows, vecs, weights_unsigned))
    vnni = _tile_function(variant("avx512_vnni", "u8s8", rows, vecs, weights_unsigned))
    for trial in range(24):
        n_inner = int(rng.choice([1, 3, 15, 16, 17, 31, 32, 33, 48, 70]))
        n_taps = int(rng.integers(1, 5))
        uniform, edge = trial % 2 == 0, trial % 7 == 3
        a, starts, taps, w, tap_stride = _case(rng, rows, vecs, n_taps, n_inner, uniform, a_dtype, w_dtype, edge)
        # The input buffer's end is the last row's run: a copy whose pages end there would fault on over-reads;
        # the result check below catches any read of data outside the contract.
        base = np.int64(a.ctypes.data)
        expect = reference_tile(a, starts, taps, n_inner, w, tap_stride, vecs)
        got = np.full((rows, vecs * 16), 7, np.int32)
        amx(got, starts + base, taps, n_taps, n_inner, w, tap_stride)
        np.testing.assert_array_equal(got, expect, err_msg=f"AMX, trial {trial}")
        old = np.full((rows, vecs * 16), 7, np.int32)
        vnni(old, starts + base, taps, n_taps, n_inner, w, tap_stride)
        np.testing.assert_array_equal(got, old, err_msg=f"VNNI, trial {trial}")


def test_amx_tile_of_no_steps_is_zero():
    from openvx_nn.kernels.engine.microkernel import variant
    amx = _tile_function(variant("amx", "u8s8", 16, 1))
    a = np.ones(64, np.uint8)
    got = np.full((16, 16), 7, np.int32)
    amx(got, np.full(16, a.ctypes.data, np.int64), np.zeros(1, np.int64), 1, 0, np.ones(64, np.int8), 64)
    assert (got == 0).all()


def test_amx_is_off_when_an_instruction_set_is_forced_or_switched_off(monkeypatch):
    try:
        for name, value in ((isa.ENV_ISA, "avx512_vnni"), (isa.ENV_AMX, "0")):
            monkeypatch.setenv(name, value)
            isa.amx.cache_clear()
            isa.selected.cache_clear()
            assert not isa.amx()
            monkeypatch.delenv(name)
    finally:
        isa.amx.cache_clear()
        isa.selected.cache_clear()
    assert isa.amx()


def _tile_config_functions():
    import numba
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    def config_intrinsic(op):
        @intrinsic
        def call(typingctx, address):
            def codegen(context, builder, signature, args):
                i8p = ir.IntType(8).as_pointer()
                fn = builder.module.declare_intrinsic(f"llvm.x86.{op}", fnty=ir.FunctionType(ir.VoidType(), [i8p]))
                builder.call(fn, [builder.inttoptr(args[0], i8p)])
                return context.get_dummy_value()
            return types.void(types.int64), codegen
        return call

    load_config, store_config = config_intrinsic("ldtilecfg"), config_intrinsic("sttilecfg")

    @numba.njit
    def set_config(cfg):
        load_config(cfg.ctypes.data)

    @numba.njit
    def get_config(cfg):
        store_config(cfg.ctypes.data)
    return set_config, get_config


def test_another_tile_configuration_of_the_thread_is_put_back():
    """A library that configures its tiles once per thread finds its own configuration after our kernel."""
    from openvx_nn.kernels.engine.microkernel import variant
    set_config, get_config = _tile_config_functions()
    amx = _tile_function(variant("amx", "u8s8", 16, 1))
    foreign = np.zeros(64, np.uint8)
    foreign[0], foreign[16], foreign[48] = 1, 32, 8  # palette 1, tile 0 of 8 rows x 32 bytes, no other tile
    aligned = np.zeros(128, np.uint8)
    cfg = aligned[-aligned.ctypes.data % 64:][:64]
    cfg[:] = foreign
    set_config(cfg)
    a = np.ones(64 * 16, np.uint8)
    got = np.zeros((16, 16), np.int32)
    amx(got, np.arange(16, dtype=np.int64) * 64 + a.ctypes.data, np.zeros(1, np.int64), 1, 16, np.ones(1024, np.int8),
        1024)
    assert (got == 64).all()
    cfg[:] = 0
    get_config(cfg)
    np.testing.assert_array_equal(cfg, foreign)
