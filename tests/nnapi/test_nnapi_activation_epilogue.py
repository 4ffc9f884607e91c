"""NNAPI blocks reach the plan's activation epilogue (``core/activation_epilogue.py``): a float32 CONV_2D with no
fused activation computes the ADD of a skip (either operand order) and the PRELU after it, or the PRELU alone.

Models built with the Python builder (MediaPipe's block: ``s = CONV_2D(x)``, ``t = CONV_2D(s)``, ``u = ADD(s, t)``,
``y = PRELU(u, alpha)``) over randomized shapes, windows, alphas (per channel or one value) and NaN/infinities:
the fused graph's bytes equal those of the same model compiled with the rewrites off (NaN where it is NaN), on the
native plan and on the Python path, and agree with a float64 NumPy reference written from NNAPI's definitions.
No fusion where the intermediate is a model output or has a second reader, or the CONV_2D fuses a RELU; the sum
alone where the alpha does not broadcast per channel, the sum has a second reader or the ADD clamps it itself.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from nnapi_harness import add_constant, add_i32, collect_garbage, same_bits  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi
from openvx_nn.core import activation_epilogue, rewrites

T, OP = nnapi.OperandType, nnapi.OperationType
F32T, I32T = T.TENSOR_FLOAT32, T.TENSOR_INT32


@pytest.fixture(autouse=True)
def rewrites_on(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _conv(m, x, w, b, pads, strides, out, activation=0):
    m.add_operation(OP.CONV_2D, [x, add_constant(m, w), add_constant(m, b)] + [add_i32(m, p) for p in pads]
                    + [add_i32(m, strides[0]), add_i32(m, strides[1]), add_i32(m, activation)], [out])


def _ref_conv(x, w, b, pads, strides):
    """NNAPI CONV_2D in float64: out[n, y, x, o] = b[o] + sum over the window of input * filter (explicit pads
    left, right, top, bottom; strides width, height)."""
    left, right, top, bottom = pads
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    p = np.zeros((n, h + top + bottom, wd + left + right, c))
    p[:, top:top + h, left:left + wd] = x
    oh, ow = (p.shape[1] - kh) // strides[1] + 1, (p.shape[2] - kw) // strides[0] + 1
    out = np.empty((n, oh, ow, o))
    for y in range(oh):
        for xx in range(ow):
            win = p[:, y * strides[1]:y * strides[1] + kh, xx * strides[0]:xx * strides[0] + kw, :]
            out[:, y, xx, :] = np.tensordot(win, w.astype(np.float64), axes=([1, 2, 3], [1, 2, 3])) + b
    return out


def _block(rng, case: str = "plain", add: bool = True):
    """(model, reference output or None, input, output shapes): MediaPipe's block (module doc); ``case`` plain,
    swap (ADD(t, s)), scalar (one alpha), output (t is a model output too), reader (t also feeds a MUL, an
    output), relu (the second CONV_2D fuses RELU), full_alpha (an alpha per element: no per-channel broadcast)."""
    n, h, w, c = 1 + int(rng.integers(0, 2)), int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 9))
    k = int(rng.integers(1, 40))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    pads = ((kw - 1) // 2, kw // 2, (kh - 1) // 2, kh // 2)  # SAME, stride 1: s and t of one shape
    w1 = rng.standard_normal((k, 1, 1, c)).astype(np.float32)
    b1 = rng.standard_normal(k).astype(np.float32)
    w2 = (rng.standard_normal((k, kh, kw, k)) * 0.4).astype(np.float32)
    b2 = rng.standard_normal(k).astype(np.float32)
    alpha = (rng.uniform(-0.5, 0.5, 1) if case == "scalar" else
             rng.uniform(-0.5, 0.5, (h, w, k)) if case == "full_alpha" else
             rng.uniform(-0.5, 0.5, (1, 1, k))).astype(np.float32)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    m = nnapi.Model()
    xi = m.add_operand(F32T, [n, h, w, c])
    s, t = m.add_operand(F32T, [n, h, w, k]), m.add_operand(F32T, [n, h, w, k])
    _conv(m, xi, w1, b1, (0, 0, 0, 0), (1, 1), s)
    _conv(m, s, w2, b2, pads, (1, 1), t, 1 if case == "relu" else 0)
    u = t
    if add:
        u = m.add_operand(F32T, [n, h, w, k])
        m.add_operation(OP.ADD, ([t, s] if case == "swap" else [s, t]) + [add_i32(m, 0)], [u])
    y = m.add_operand(F32T, [n, h, w, k])
    m.add_operation(OP.PRELU, [u, add_constant(m, alpha)], [y])
    outputs = [y]
    if case == "output":
        outputs.append(t)
    elif case == "reader":
        z = m.add_operand(F32T, [n, h, w, k])
        m.add_operation(OP.MUL, [t, t, add_i32(m, 0)], [z])
        outputs.append(z)
    m.identify_inputs_and_outputs([xi], outputs)
    m.finish()
    sv = _ref_conv(x, w1, b1, (0, 0, 0, 0), (1, 1))
    tv = _ref_conv(sv, w2, b2, pads, (1, 1))
    if case == "relu":
        tv = np.maximum(tv, 0)
    uv = tv + sv if add else tv
    ref = np.where(uv >= 0, uv, alpha.astype(np.float64) * uv)
    scale = np.abs(_ref_conv(np.abs(_ref_conv(np.abs(x), np.abs(w1), np.abs(b1), (0, 0, 0, 0), (1, 1))), np.abs(w2),
                             np.abs(b2), pads, (1, 1))) + (np.abs(sv) if add else 0)
    return m, (ref, scale), x, [(n, h, w, k)] * len(outputs)


def _run(monkeypatch, m, x, out_shapes, enabled: bool, python_path: bool = False):
    """The model's outputs after three executions (the last on the bound plan: native, or each node's Python
    runner) and the fused (convolution, add or None, activation) chains of its graph."""
    monkeypatch.setattr(rewrites, "ENABLED", enabled)
    c = nnapi.Compilation(m)
    c.finish()
    graph = c.prepared.lowered.graph
    outs = []
    for _ in range(3):
        e = nnapi.Execution(c)
        e.set_input(0, x)
        outs = [np.full(s, 7.0, np.float32) for s in out_shapes]
        for i, o in enumerate(outs):
            e.set_output(i, o)
        runs = graph.native_runs
        if not python_path:
            e.compute()
        else:
            graph.context.performance_enabled = True
            try:
                e.compute()
            finally:
                graph.context.performance_enabled = False
        native = graph.native_runs > runs
        assert not (python_path and native)
    chains = [tuple(None if n is None else n.description.name.split(".")[-1] for n in chain)
              for chain in graph.rewrites.activations]
    c.release()
    return outs, chains, native


@pytest.mark.parametrize("case", ["plain", "swap", "scalar", "no_add"])
@pytest.mark.parametrize("python_path", [False, True])
def test_block_fused_gives_the_unfused_bytes(monkeypatch, case, python_path):
    rng = np.random.default_rng(zlib.crc32(repr((case, python_path)).encode()))
    for trial in range(4):
        m, (ref, scale), x, shapes = _block(rng, case, add=case != "no_add")
        if trial == 3:  # edge values: NaN, infinities, -0 and large magnitudes through the whole block
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size, 4)] = np.resize(np.array([np.nan, np.inf, -np.inf, -0.0, 1e30],
                                                                     np.float32), 4)
        fused, chains, native = _run(monkeypatch, m, x, shapes, True, python_path)
        plain, none, _ = _run(monkeypatch, m, x, shapes, False, python_path)
        assert chains == [("conv_2d", None if case == "no_add" else "add", "prelu")]
        assert none == []
        assert native == (not python_path)
        same_bits(plain[0], fused[0])
        if trial < 3:
            assert np.all(np.abs(fused[0] - ref) <= 1e-5 * scale + 1e-5)


def _single(rng, layer: str, activation: str):
    """(model, input, output shape, float64 reference): ``layer`` (CONV_2D or DEPTHWISE_CONV_2D, random window,
    strides and pads) followed by ``activation`` (PRELU with an alpha per channel, or LOGISTIC)."""
    n, h, w, c = 1 + int(rng.integers(0, 2)), int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 5))
    c = 8 * c if layer == "depthwise" and rng.integers(2) else c
    k = c if layer == "depthwise" else int(rng.integers(1, 40))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    pads = tuple(int(v) for v in rng.integers(0, 2, 4))
    strides = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    kh, kw = min(kh, h + pads[2] + pads[3]), min(kw, w + pads[0] + pads[1])
    oh, ow = (h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1
    x = (rng.standard_normal((n, h, w, c)) * 2).astype(np.float32)
    wt = rng.standard_normal((1, kh, kw, k) if layer == "depthwise" else (k, kh, kw, c)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    alpha = rng.uniform(-0.5, 0.5, (1, 1, k)).astype(np.float32)
    m = nnapi.Model()
    xi, t, y = m.add_operand(F32T, [n, h, w, c]), m.add_operand(F32T, [n, oh, ow, k]), m.add_operand(F32T, [n, oh, ow, k])
    window = [add_i32(m, p) for p in pads] + [add_i32(m, strides[0]), add_i32(m, strides[1])]
    if layer == "depthwise":
        m.add_operation(OP.DEPTHWISE_CONV_2D, [xi, add_constant(m, wt), add_constant(m, b)] + window + [add_i32(m, 1), add_i32(m, 0)], [t])
        ref = np.stack([_ref_conv(x[..., i:i + 1], wt[..., i].reshape(1, kh, kw, 1), b[i:i + 1], pads, strides)[..., 0]
                        for i in range(k)], -1)
    else:
        m.add_operation(OP.CONV_2D, [xi, add_constant(m, wt), add_constant(m, b)] + window + [add_i32(m, 0)], [t])
        ref = _ref_conv(x, wt, b, pads, strides)
    if activation == "prelu":
        m.add_operation(OP.PRELU, [t, add_constant(m, alpha)], [y])
        ref = np.where(ref >= 0, ref, alpha.astype(np.float64) * ref)
    else:
        m.add_operation(OP.LOGISTIC, [t], [y])
        ref = 1.0 / (1.0 + np.exp(-ref))
    m.identify_inputs_and_outputs([xi], [y])
    m.finish()
    return m, x, (n, oh, ow, k), ref


@pytest.mark.parametrize("layer", ["conv", "depthwise"])
@pytest.mark.parametrize("activation", ["prelu", "logistic"])
def test_layer_and_activation_fused(monkeypatch, layer, activation):
    """A convolution or depthwise convolution and the PRELU or LOGISTIC (the standard activation layer's
    ``gate_function``, folded when the plan is asked to fold functions) after it: the unfused bytes, and the
    float64 reference."""
    monkeypatch.setattr(activation_epilogue, "FUNCTIONS", activation_epilogue.COMPUTABLE)
    rng = np.random.default_rng(zlib.crc32(f"{layer} {activation}".encode()))
    for _ in range(4):
        m, x, shape, ref = _single(rng, layer, activation)
        fused, chains, _ = _run(monkeypatch, m, x, [shape], True)
        plain, _, _ = _run(monkeypatch, m, x, [shape], False)
        assert len(chains) == 1 and chains[0][:2] == ("depthwise_conv_2d" if layer == "depthwise" else "conv_2d", None)
        same_bits(plain[0], fused[0])
        assert np.allclose(fused[0], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["output", "reader", "relu", "full_alpha"])
def test_no_fusion_where_the_chain_is_not_private(monkeypatch, case):
    """Nothing fused where the convolution's output is seen or read twice, or the convolution clamps; an alpha
    that does not broadcast per channel leaves the PRELU apart, the sum alone fused."""
    rng = np.random.default_rng(7)
    m, (ref, scale), x, shapes = _block(rng, case)
    outs, chains, _ = _run(monkeypatch, m, x, shapes, True)
    plain, _, _ = _run(monkeypatch, m, x, shapes, False)
    assert chains == ([("conv_2d", "add", None)] if case == "full_alpha" else [])
    same_bits(plain[0], outs[0])
    assert np.all(np.abs(outs[0] - ref) <= 1e-5 * scale + 1e-5)


def test_a_gate_the_product_computes_stays_with_the_product(monkeypatch):
    """Squeeze-and-excitation with its excitation as a 1x1 CONV_2D: ``x * logistic(conv(pool(x)))``. The product
    computes the gate from the convolution's output (``core/gated_products.py``), so the convolution must still
    write it: no epilogue takes the LOGISTIC (even when the plan folds functions), and the bytes are the unfused
    graph's."""
    monkeypatch.setattr(activation_epilogue, "FUNCTIONS", activation_epilogue.COMPUTABLE)
    rng = np.random.default_rng(11)
    for _ in range(3):
        n, h, w, c = 1, int(rng.integers(2, 8)), int(rng.integers(2, 8)), int(rng.integers(1, 24))
        wt = rng.standard_normal((c, 1, 1, c)).astype(np.float32)
        b = rng.standard_normal(c).astype(np.float32)
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        m = nnapi.Model()
        xi = m.add_operand(F32T, [n, h, w, c])
        pooled, g, gate, y = (m.add_operand(F32T, s) for s in ([n, 1, 1, c], [n, 1, 1, c], [n, 1, 1, c], [n, h, w, c]))
        m.add_operation(OP.AVERAGE_POOL_2D, [xi] + [add_i32(m, 0) for _ in range(4)]
                        + [add_i32(m, 1), add_i32(m, 1), add_i32(m, w), add_i32(m, h), add_i32(m, 0)], [pooled])
        _conv(m, pooled, wt, b, (0, 0, 0, 0), (1, 1), g)
        m.add_operation(OP.LOGISTIC, [g], [gate])
        m.add_operation(OP.MUL, [xi, gate, add_i32(m, 0)], [y])
        m.identify_inputs_and_outputs([xi], [y])
        m.finish()
        fused, chains, _ = _run(monkeypatch, m, x, [(n, h, w, c)], True)
        plain, _, _ = _run(monkeypatch, m, x, [(n, h, w, c)], False)
        assert chains == []
        same_bits(plain[0], fused[0])
        ref = x * (1.0 / (1.0 + np.exp(-(np.tensordot(x.mean((1, 2)), wt[:, 0, 0, :], ([1], [1])) + b))))[:, None, None]
        assert np.allclose(fused[0], ref, rtol=1e-4, atol=1e-5)


def _sum_block(rng, act: int, second_reader: bool, padded_skip: bool):
    """(model, (reference, scale), input, output shapes): ``s = CONV_2D(x)`` (1x1), ``t = CONV_2D(s)``, then
    ``u = ADD(skip, t)`` with fused activation ``act`` (0 NONE, 1 RELU, 2 RELU1, 3 RELU6) and ``y = PRELU(u)``
    after it (an epilogue computes one activation: after a clamping ADD the PRELU stays its own node). ``second_reader``: ``u`` also feeds ``z = MUL(u, u)``, a second output (MediaPipe
    feeds the sum to the next block and to its skip branch). ``padded_skip``: the skip is ``PAD(s)`` over the
    channels (BlazeFace's channel-growing skip), added to the model after the second CONV_2D, so it runs after the
    convolution unless the plan moves it."""
    n, h, w = 1 + int(rng.integers(0, 2)), int(rng.integers(1, 10)), int(rng.integers(1, 10))
    c, k0 = int(rng.integers(1, 9)), int(rng.integers(1, 24))
    k = k0 + (int(rng.integers(1, 9)) if padded_skip else 0)
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    pads = ((kw - 1) // 2, kw // 2, (kh - 1) // 2, kh // 2)
    w1, b1 = rng.standard_normal((k0, 1, 1, c)).astype(np.float32), rng.standard_normal(k0).astype(np.float32)
    w2 = (rng.standard_normal((k, kh, kw, k0)) * 0.4).astype(np.float32)
    b2 = rng.standard_normal(k).astype(np.float32)
    alpha = rng.uniform(-0.5, 0.5, (1, 1, k)).astype(np.float32)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    m = nnapi.Model()
    xi = m.add_operand(F32T, [n, h, w, c])
    s, t, u = (m.add_operand(F32T, [n, h, w, kk]) for kk in (k0, k, k))
    _conv(m, xi, w1, b1, (0, 0, 0, 0), (1, 1), s)
    _conv(m, s, w2, b2, pads, (1, 1), t)
    skip = s
    if padded_skip:
        skip = m.add_operand(F32T, [n, h, w, k])
        m.add_operation(OP.PAD, [s, add_constant(m, np.array([[0, 0], [0, 0], [0, 0], [0, k - k0]], np.int32))],
                        [skip])
    m.add_operation(OP.ADD, [skip, t, add_i32(m, act)], [u])
    y = m.add_operand(F32T, [n, h, w, k])
    m.add_operation(OP.PRELU, [u, add_constant(m, alpha)], [y])
    outputs = [y]
    if second_reader:
        z = m.add_operand(F32T, [n, h, w, k])
        m.add_operation(OP.MUL, [u, u, add_i32(m, 0)], [z])
        outputs.append(z)
    m.identify_inputs_and_outputs([xi], outputs)
    m.finish()
    sv = _ref_conv(x, w1, b1, (0, 0, 0, 0), (1, 1))
    tv = _ref_conv(sv, w2, b2, pads, (1, 1))
    skv = np.concatenate([sv, np.zeros(sv.shape[:3] + (k - k0,))], -1)  # PAD: zeros after the channels
    uv = tv + skv
    low, high = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[act]  # NNAPI's FuseCode
    uv = np.minimum(np.maximum(uv, low), high)
    ref = np.where(uv >= 0, uv, alpha.astype(np.float64) * uv)
    scale = np.abs(_ref_conv(np.abs(_ref_conv(np.abs(x), np.abs(w1), np.abs(b1), (0, 0, 0, 0), (1, 1))), np.abs(w2),
                             np.abs(b2), pads, (1, 1))) + np.abs(skv)
    return m, (ref, scale), x, [(n, h, w, k)] * len(outputs)


@pytest.mark.parametrize("act, second_reader, padded_skip", [(0, True, False), (0, True, True), (1, False, False),
                                                             (1, True, True), (2, False, True), (3, False, False)])
@pytest.mark.parametrize("python_path", [False, True])
def test_residual_sum_alone_fused(monkeypatch, act, second_reader, padded_skip, python_path):
    """The sum with no activation after it: its output read twice (the PRELU stays its own node), or the ADD
    clamping it (RELU, RELU1, RELU6 fused): the convolution writes the ADD's output, clamped as the ADD clamps it;
    a skip written after the convolution (a PAD added later) is moved before it. The unfused bytes, the float64
    reference."""
    rng = np.random.default_rng(zlib.crc32(repr((act, second_reader, padded_skip, python_path)).encode()))
    for trial in range(4):
        m, (ref, scale), x, shapes = _sum_block(rng, act, second_reader, padded_skip)
        if trial == 3:
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size, 4)] = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
        fused, chains, native = _run(monkeypatch, m, x, shapes, True, python_path)
        plain, none, _ = _run(monkeypatch, m, x, shapes, False, python_path)
        assert chains == [("conv_2d", "add", None)]
        assert none == []
        assert native == (not python_path)
        for a, b in zip(plain, fused):
            same_bits(a, b)
        if trial < 3:
            assert np.all(np.abs(fused[0] - ref) <= 1e-5 * scale + 1e-5)
