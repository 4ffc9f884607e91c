"""NNAPI CONV_2D layers exchange their float32 intermediates through zero-bordered buffers
(``core/bordered_tensors.py``): a virtual tensor one CONV_2D writes and only padded CONV_2Ds read lives inside a
buffer of zeros as wide as its readers' largest padding, which they read in place instead of copying it per call.

Randomized models (pads 1 and 2, symmetric or not, strides 1 and 2, a tensor read by two convolutions, a residual
ADD with RELU after a convolution, a tensor a MAX_POOL_2D also reads, a model output a convolution also reads, one
an unpadded 1x1 layer also reads) give
the bytes of the same model compiled with ``OPENVX_NN_BORDERED_TENSORS=0`` on the native plan and on the Python path
(NaN and infinities included), agree with a float64 NumPy reference written from NNAPI's definition of CONV_2D, and
border exactly the tensors the rule allows: not one an ADD or a pooling reads, nor a model output.
"""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import add_constant, add_i32, collect_garbage, same_bits  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi

T, OP = nnapi.OperandType, nnapi.OperationType
F32T = T.TENSOR_FLOAT32
ENV = "OPENVX_NN_BORDERED_TENSORS"


@pytest.fixture(autouse=True)
def rewrites_on(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)


def _ref_conv(x, w, b, pads, strides):
    """CONV_2D in float64 from its definition: out[n, y, x, o] = b[o] + sum over ky, kx, c of
    padded[n, y * sh + ky, x * sw + kx, c] * w[o, ky, kx, c], ``padded`` the input with ``pads`` (left, right, top,
    bottom) zeros around it, ``strides`` (width, height)."""
    left, right, top, bottom = pads
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    p = np.zeros((n, h + top + bottom, wd + left + right, c))
    p[:, top:top + h, left:left + wd] = x
    oh, ow = (p.shape[1] - kh) // strides[1] + 1, (p.shape[2] - kw) // strides[0] + 1
    out = np.empty((n, oh, ow, o))
    for y in range(oh):
        for xx in range(ow):
            for oc in range(o):
                win = p[:, y * strides[1]:y * strides[1] + kh, xx * strides[0]:xx * strides[0] + kw, :]
                out[:, y, xx, oc] = (win * w[oc]).sum(axis=(1, 2, 3)) + b[oc]
    return out


def _ref_pool(x, size):
    """MAX_POOL_2D with no padding, window and stride ``size``."""
    n, h, w, c = x.shape
    oh, ow = (h - size) // size + 1, (w - size) // size + 1
    out = np.empty((n, oh, ow, c))
    for y in range(oh):
        for xx in range(ow):
            out[:, y, xx] = x[:, y * size:y * size + size, xx * size:xx * size + size].max(axis=(1, 2))
    return out


class _Net:
    """A model and its float64 reference, built together: each value a pair (the value, the same computation on
    magnitudes: the bound of the float32 rounding)."""

    def __init__(self, rng, x):
        self.rng, self.m = rng, nnapi.Model()
        self.x = self.m.add_operand(F32T, list(x.shape))
        self.values = {self.x: (x.astype(np.float64), np.abs(x.astype(np.float64)))}

    def conv(self, source, maps, kernel, pads, strides=(1, 1), relu=False):
        v, s = self.values[source]
        n, h, w, c = v.shape
        wt = (self.rng.standard_normal((maps, kernel[0], kernel[1], c)) / np.sqrt(c * kernel[0] * kernel[1]))
        wt = wt.astype(np.float32)
        b = self.rng.standard_normal(maps).astype(np.float32)
        oh, ow = (h + pads[2] + pads[3] - kernel[0]) // strides[1] + 1, (w + pads[0] + pads[1] - kernel[1]) // strides[0] + 1
        out = self.m.add_operand(F32T, [n, oh, ow, maps])
        self.m.add_operation(OP.CONV_2D, [source, add_constant(self.m, wt), add_constant(self.m, b)]
                             + [add_i32(self.m, p) for p in pads]
                             + [add_i32(self.m, strides[0]), add_i32(self.m, strides[1]), add_i32(self.m, int(relu))],
                             [out])
        rv = _ref_conv(v, wt.astype(np.float64), b, pads, strides)
        rs = _ref_conv(s, np.abs(wt.astype(np.float64)), np.abs(b), pads, strides)
        self.values[out] = (np.maximum(rv, 0) if relu else rv, rs)
        return out

    def add_relu(self, a, b):
        (va, sa), (vb, sb) = self.values[a], self.values[b]
        out = self.m.add_operand(F32T, list(va.shape))
        self.m.add_operation(OP.ADD, [a, b, add_i32(self.m, 1)], [out])
        self.values[out] = (np.maximum(va + vb, 0), sa + sb)
        return out

    def max_pool(self, source, size):
        v, s = self.values[source]
        out_shape = [v.shape[0], (v.shape[1] - size) // size + 1, (v.shape[2] - size) // size + 1, v.shape[3]]
        out = self.m.add_operand(F32T, out_shape)
        self.m.add_operation(OP.MAX_POOL_2D, [source] + [add_i32(self.m, p) for p in (0, 0, 0, 0, size, size, size, size, 0)],
                             [out])
        self.values[out] = (_ref_pool(v, size), _ref_pool(s, size))
        return out


def _model(rng, x):
    """(model, outputs, their references, {operand: expected border}) of the network (module doc):

    x -> A (pad pa, RELU) -> a ; a -> B (pad pb) -> t ; a -> C (pad pc, RELU) -> s ; ADD(t, s) + RELU -> r ;
    r -> D (pad pd, RELU) -> d -> G (pads asymmetric, stride sg) -> g ; r -> MAX_POOL_2D -> q ;
    s -> E (pad pe, stride se) -> e (a model output) -> F (pad pf) -> f ; x -> H -> h -> 1x1 K -> k, h -> J -> j.
    ``a`` bordered by max(pb, pc) (two readers, both convolutions), ``d`` by G's largest pad; not ``s`` or ``t``
    (read by the ADD), not ``r`` (read by the pool), not ``e`` (a model output), not ``h`` (read by an unpadded 1x1
    layer of stride 1, which keeps the engine's matrix route)."""
    net = _Net(rng, x)
    maps = int(rng.integers(2, 24))

    def pad():
        return int(rng.integers(1, 3))

    def same(p):  # a window of 2p + 1 with pad p each side: the input's extent
        return (2 * p + 1, 2 * p + 1), (p, p, p, p)
    pa, pb, pc, pd, pe, pf = (pad() for _ in range(6))
    a = net.conv(net.x, maps, *same(pa), relu=True)
    t = net.conv(a, maps, *same(pb))
    s = net.conv(a, maps, *same(pc), relu=True)
    r = net.add_relu(t, s)
    d = net.conv(r, int(rng.integers(1, 20)), *same(pd), relu=True)
    g_pads = tuple(pad() for _ in range(4))
    g = net.conv(d, int(rng.integers(1, 9)), (3, 3), g_pads, (int(rng.integers(1, 3)),) * 2)
    q = net.max_pool(r, 2)
    e = net.conv(s, int(rng.integers(1, 9)), (3, 3), (pe,) * 4, (int(rng.integers(1, 3)),) * 2)
    f = net.conv(e, int(rng.integers(1, 9)), *same(pf), relu=True)
    h = net.conv(net.x, int(rng.integers(1, 9)), *same(pad()))
    k = net.conv(h, int(rng.integers(1, 9)), (1, 1), (0, 0, 0, 0))
    j = net.conv(h, int(rng.integers(1, 9)), *same(pad()))
    outputs = [g, q, e, f, k, j]
    net.m.identify_inputs_and_outputs([net.x], outputs)
    net.m.finish()
    shape = {k: tuple(v.shape) for k, (v, _) in net.values.items()}
    bordered = {(shape[a], max(pb, pc)), (shape[d], max(g_pads))}
    return net.m, [shape[o] for o in outputs], [net.values[o] for o in outputs], bordered


def _run(monkeypatch, m, x, shapes, bordered: bool, python_path: bool):
    """The outputs after three executions (the last two on the bound plan: native, or the Python runners), the
    (NNAPI shape, border) of each tensor the plan bordered, and the activation chains fused into convolutions."""
    monkeypatch.setenv(ENV, "1" if bordered else "0")
    c = nnapi.Compilation(m)
    c.finish()
    graph = c.prepared.lowered.graph
    outs = []
    runs = graph.native_runs
    for _ in range(3):
        e = nnapi.Execution(c)
        e.set_input(0, x)
        outs = [np.full(s, 7.0, np.float32) for s in shapes]
        for i, o in enumerate(outs):
            e.set_output(i, o)
        if not python_path:
            e.compute()
            continue
        graph.context.performance_enabled = True  # timing each node: the Python runners
        try:
            e.compute()
        finally:
            graph.context.performance_enabled = False
    assert (graph.native_runs > runs) == (not python_path)
    found = {(tuple(reversed(root.dims)), border) for root, border in graph.rewrites.bordered}
    chains = [tuple(None if n is None else n.description.name.split(".")[-1] for n in chain)
              for chain in graph.rewrites.activations]
    c.release()
    return outs, found, chains


@pytest.mark.parametrize("python_path", [False, True], ids=["native", "python"])
@pytest.mark.parametrize("seed", range(4))
def test_convolutions_through_bordered_buffers_give_the_plain_bytes_and_the_reference(monkeypatch, seed, python_path):
    rng = np.random.default_rng([7301, seed, python_path])
    shape = (1 + int(rng.integers(0, 2)), int(rng.integers(4, 15)), int(rng.integers(4, 13)), int(rng.integers(1, 9)))
    x = rng.standard_normal(shape).astype(np.float32)
    edge = seed == 3
    if edge:  # NaN, infinities and -0 through every layer: the bytes alone are compared
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 4)] = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
    with np.errstate(all="ignore"):
        m, shapes, refs, expected = _model(rng, x)
    got, bordered, chains = _run(monkeypatch, m, x, shapes, True, python_path)
    plain, none, _ = _run(monkeypatch, m, x, shapes, False, python_path)
    # B computes the ADD and its RELU in its epilogue (``core/activation_epilogue``), reading ``a`` bordered
    assert chains == [("conv_2d", "add", None)]
    assert bordered == expected
    assert none == set()
    for mine, theirs in zip(got, plain):
        same_bits(mine, theirs)
    if not edge:
        for mine, (value, scale) in zip(got, refs):
            assert np.all(np.abs(mine - value) <= 1e-5 * scale + 1e-6)
