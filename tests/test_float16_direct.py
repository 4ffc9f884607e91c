"""Float16 layers that convert in the kernel's own pass (``kernels/openvx/float16_layers``), and the conversions
the other float16 layers run at their edges, on tensors large enough for the engine's helpers to share them.

Each layer is checked twice: against a plain float64 reference written here from the NN extension's text, rounded
once to binary16 (max pooling and ReLU select an input: exact; the others within one binary16 unit, see
``test_float16_layers``), and against the documented float16 semantics bit for bit -- the float32 layer on the
widened inputs, its output rounded once to binary16 (NumPy's ``astype``, nearest-even). Inputs hold infinities,
NaN, subnormals, signed zeros and values near the binary16 maximum.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from native_testing import model, python_then_native
from test_float16_layers import _assert_f16, _values

from openvx_nn.api import Context
from openvx_nn.kernels.engine import gang, isa, workers
from openvx_nn.kernels.openvx import float16

F16 = np.float16


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint16).tobytes()


def _run_entry(entry) -> None:
    """One call of a native entry from C, its helpers summoned as a graph's run summons them."""
    run = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(entry.address)
    gang.summon(workers.helpers())
    with gang.held():
        assert run(entry.block.ctypes.data) == 0


# -- the edge conversions, shared ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [float16.SHARED_VALUES - 1, float16.SHARED_VALUES + 12345, 3 * float16.UNIT + 1])
def test_shared_conversions_equal_numpy_on_every_bit_pattern(n):
    rng = np.random.default_rng([1620, n])
    halves = np.resize(rng.permutation(1 << 16).astype(np.uint16), n).view(F16)
    singles = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 18, n)).astype(np.float32)
    singles[:4] = [65519.99, 65520.0, -65504.0, 2.0 ** -25]  # to the max, to infinity, exact, a tie to zero
    with np.errstate(over="ignore"):
        narrowed = singles.astype(F16)
    for native_call in (False, True):
        wide, narrow = np.full(n, np.nan, np.float32), np.zeros(n, F16)
        if native_call:
            entries = float16.native_entry(halves, wide, True), float16.native_entry(singles, narrow, False)
            if n >= 150_000:
                assert all(gang.lends(e) == (isa.threads() > 1) for e in entries)
            for entry in entries:
                _run_entry(entry)
        else:
            float16.bind(halves, wide, True)()
            float16.bind(singles, narrow, False)()
        assert wide.view(np.uint32).tobytes() == halves.astype(np.float32).view(np.uint32).tobytes()
        assert _bits(narrow) == _bits(narrowed)


def test_conversions_keep_nan_payloads_and_signs_as_numpy():
    """Every float32 NaN class narrows as NumPy's ``astype`` (sign, the payload's high ten bits with the quiet bit
    as it was, at least one of them set), with infinities, the binary16 range's ends and random patterns beside;
    every binary16 pattern widens as NumPy's, signaling NaNs staying signaling."""
    rng = np.random.default_rng(1625)
    nans = np.concatenate([np.arange(0x7F800001, 0x80000000, 97, dtype=np.int64),
                           np.arange(0xFF800001, 0x100000000, 89, dtype=np.int64)]).astype(np.uint32)
    edges = np.array([0x7F800001, 0xFF800001, 0x7F801FFF, 0x7F802000, 0xFF802000, 0x7FC00000, 0xFFFFFFFF,
                      0x7F800000, 0xFF800000, 0x477FE000, 0x477FF000, 0x33000000, 0x33000001, 0x80000001], np.uint32)
    singles = np.concatenate([nans, edges, rng.integers(0, 1 << 32, 200_000, dtype=np.int64).astype(np.uint32)])
    singles = singles.view(np.float32)
    narrow = np.zeros(singles.size, F16)
    float16.bind(singles, narrow, False)()
    with np.errstate(all="ignore"):
        assert _bits(narrow) == _bits(singles.astype(F16))
    halves = np.arange(1 << 16, dtype=np.uint16).view(F16)
    wide = np.zeros(halves.size, np.float32)
    float16.bind(halves, wide, True)()
    assert wide.view(np.uint32).tobytes() == halves.astype(np.float32).view(np.uint32).tobytes()


# -- pooling --------------------------------------------------------------------------------------------------------
def _pool_reference(x64, out_wh, kind, size, pad, stride):
    """The NN extension's pooling, per window: max over the positions inside the input (NaN if any is NaN;
    0 for a window wholly in the padding), or the sum over them divided by the whole window's area."""
    ow, oh = out_wh
    want = np.zeros((ow, oh) + x64.shape[2:])
    for ox in range(ow):
        for oy in range(oh):
            x0, y0 = ox * stride[0] - pad[0], oy * stride[1] - pad[1]
            window = x64[max(x0, 0):max(x0 + size[0], 0), max(y0, 0):max(y0 + size[1], 0)]
            window = window.reshape((-1,) + x64.shape[2:])
            if window.shape[0] == 0:
                continue
            with np.errstate(invalid="ignore"):
                if kind == "max":
                    want[ox, oy] = np.where(np.isnan(window).any(0), np.nan, window.max(0))
                else:
                    want[ox, oy] = window.sum(0) / (size[0] * size[1])
    return want


def _pooled(ctx, x16, kind, size, pad, stride, out_wh, dtype):
    """(graph, output) of one pooling node on ``x16`` (as ``dtype``)."""
    g = ctx.graph()
    x = ctx.tensor(np.asfortranarray(x16.astype(dtype)))
    out = ctx.tensor(shape=out_wh + x16.shape[2:], dtype=dtype)
    g.pooling(x, out, kind=kind, size=size, padding=pad, stride=stride)
    return g, out


@pytest.mark.parametrize(("kind", "seed"), [("max", 0), ("max", 1), ("max", 2), ("avg", 0), ("avg", 1),
                                            ("avg", 2)])
def test_float16_pooling_reads_and_writes_binary16_in_its_own_pass(kind, seed):
    rng = np.random.default_rng([1621, seed, kind == "max"])
    size = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    pad = (int(rng.integers(0, size[0])), int(rng.integers(0, size[1])))
    stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    planes = (int(rng.integers(1, 4)),) if seed == 0 else (int(rng.integers(30, 60)), 2)  # small, or shared
    shape = (int(rng.integers(size[0], 70)), int(rng.integers(size[1], 70))) + planes
    out_wh = tuple((shape[a] + 2 * pad[a] - size[a]) // stride[a] + 1 for a in (0, 1))
    x16 = _values(rng, shape)
    with Context() as ctx:
        g, out = _pooled(ctx, x16, kind, size, pad, stride, out_wh, F16)
        g.verify()
        node = model(g.handle).order[0]
        edges = node.state["half"]
        assert edges.direct.native(node.params, edges.state) is not None, "not on the float16 route"
        python, got = python_then_native(ctx, g, out)
        assert _bits(python) == _bits(got)
        g32, out32 = _pooled(ctx, x16, kind, size, pad, stride, out_wh, np.float32)
        g32.process()
        assert _bits(got) == _bits(out32.numpy().astype(F16)), "not the float32 layer rounded once"
    _assert_f16(got, _pool_reference(x16.astype(np.float64), out_wh, kind, size, pad, stride),
                ulps=0 if kind == "max" else 1)


def test_float16_pooling_of_a_strided_view_takes_the_edges():
    rng = np.random.default_rng(1622)
    x16 = _values(rng, (9, 8, 3))
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        view = x.view((1, 0, 0), (8, 8, 3))  # a view: not packed in OpenVX order
        out = g.pooling(view, kind="max", size=(2, 2))
        result = ctx.tensor(shape=out.shape, dtype=F16)
        g.activation(out, "abs", out=result)
        python, got = python_then_native(ctx, g, result)
    assert _bits(python) == _bits(got)
    _assert_f16(got, np.abs(_pool_reference(x16[1:8].astype(np.float64), got.shape[:2], "max", (2, 2), (0, 0),
                                            (2, 2))), ulps=0)


# -- activations ------------------------------------------------------------------------------------------------
ACTIVATIONS = {  # (a, b, the NN extension's function in float64)
    "relu": (0.0, 0.0, lambda v, a, b: np.where(v <= 0, 0.0, v)),  # max(0, x); NaN stays NaN
    "brelu": (6.0, 0.0, lambda v, a, b: np.where(v > a, a, np.where(v <= 0, 0.0, v))),
    "abs": (0.0, 0.0, lambda v, a, b: np.abs(v)),
    "square": (0.0, 0.0, lambda v, a, b: v * v),
    "sqrt": (0.0, 0.0, lambda v, a, b: np.sqrt(v)),
    "linear": (1.0, 15.5, lambda v, a, b: a * v + b),  # 65504 + 15.5 rounds to 65504, 65520 to infinity
    "linear ": (1.0, 16.0, lambda v, a, b: a * v + b),
}


@pytest.mark.parametrize("function", ACTIVATIONS)
def test_float16_activations_convert_in_their_own_pass(function):
    rng = np.random.default_rng([1623, len(function), function.endswith(" ")])
    a, b, f = ACTIVATIONS[function]
    shape = (int(rng.integers(20, 90)), int(rng.integers(20, 90)), int(rng.integers(20, 40)))  # shared
    x16 = _values(rng, shape, scale=20.0)
    x16[0, 0, :4] = [65504.0, -65504.0, 2.0 ** -24, 300.0]
    name = function.strip()
    with Context() as ctx:
        outs = []
        for dtype in (F16, np.float32):
            g = ctx.graph()
            x = ctx.tensor(np.asfortranarray(x16.astype(dtype)))
            out = ctx.tensor(shape=shape, dtype=dtype)
            g.activation(x, name, a, b, out=out)
            g.verify()
            outs.append((g, out))
        (g, out), (g32, out32) = outs
        node = model(g.handle).order[0]
        edges = node.state["half"]
        assert edges.direct.native(node.params, edges.state) is not None, "not on the float16 route"
        python, got = python_then_native(ctx, g, out)
        assert _bits(python) == _bits(got)
        g32.process()
        with np.errstate(over="ignore"):
            assert _bits(got) == _bits(out32.numpy().astype(F16)), "not the float32 layer rounded once"
    with np.errstate(all="ignore"):
        want = f(x16.astype(np.float64), float(np.float32(a)), float(np.float32(b)))
    _assert_f16(got, want, ulps=0 if name in ("relu", "abs", "brelu") else 1)
    if name == "linear":
        assert got[0, 0, 0] == (65504.0 if b == 15.5 else np.inf)


def test_an_in_place_float16_activation_and_the_exp_functions():
    rng = np.random.default_rng(1624)
    x16 = _values(rng, (40, 30, 5), scale=3.0)
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x16)
        mid = g.activation(x, "logistic")  # float_activation's route: the widening edges
        result = ctx.tensor(shape=x16.shape, dtype=F16)
        g.activation(mid, "relu", out=result)
        python, got = python_then_native(ctx, g, result)
    assert _bits(python) == _bits(got)
    with np.errstate(all="ignore"):
        want = 1 / (1 + np.exp(-x16.astype(np.float64)))
    _assert_f16(got, want, ulps=1)
