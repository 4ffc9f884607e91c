"""Element-wise steps by one value per channel run as one pass (``core/channel_chains.py`` on
``kernels/frontend/channel_chain``): MediaPipe's ``MUL -> ADD -> PRELU -> MUL -> ADD`` (a 1x1 depthwise convolution
as TFLite's NNAPI mapping writes it, between PRELUs).

Models built with the Python builder over randomized shapes, operand orders, vector shapes ([C] or [1, 1, C]) and
edge values (NaN, infinities, -0): the fused graph's bytes equal those of the same model with the rewrites off,
on the native plan and on the Python path, and equal a float32 NumPy reference written from NNAPI's definitions
(ADD: ``input1 + input2``; MUL: ``input1 * input2``; PRELU: ``f(x) = alpha * x for x < 0, f(x) = x for x >= 0``).
The chain stops where a tensor between steps is a model output or has a second reader, or a step fuses an
activation; a vector given as a model input is read at each execution.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from nnapi_harness import add_constant, add_i32, collect_garbage, same_bits  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi
from openvx_nn.core import rewrites
from openvx_nn.kernels.frontend import channel_chain
from openvx_nn.kernels.support import native

T, OP = nnapi.OperandType, nnapi.OperationType
F32T = T.TENSOR_FLOAT32
KINDS = {"mul": OP.MUL, "add": OP.ADD, "prelu": OP.PRELU}


@pytest.fixture(autouse=True)
def rewrites_on(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _reference(x: np.ndarray, steps: list[tuple[str, np.ndarray]]) -> np.ndarray:
    """Each step in float32, one rounding per operation, from NNAPI's text."""
    v = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for name, vector in steps:
            vector = vector.reshape(-1).astype(np.float32)
            out = np.empty_like(v)
            for c in range(v.shape[-1]):
                column = v[..., c]
                if name == "mul":
                    out[..., c] = column * vector[c]
                elif name == "add":
                    out[..., c] = column + vector[c]
                else:
                    out[..., c] = np.where(column < 0, vector[c] * column, column)
            v = out
    return v


def _model(rng, names: list[str], case: str = "plain", vector_input: bool = False):
    """(model, input arrays, output shapes, steps, expected chains): ``x`` through the steps ``names``, each by a
    random vector ([C] or [1, 1, C]; MUL and ADD take it as either operand). ``case``: ``output`` (the tensor after
    the second step is a model output too), ``reader`` (it also feeds a MUL by itself, an output), ``relu`` (the
    second step, a MUL or ADD, fuses RELU). ``vector_input``: the first step's vector is a model input."""
    n, h, w, c = 1 + int(rng.integers(0, 2)), int(rng.integers(1, 40)), int(rng.integers(1, 40)), int(rng.integers(1, 70))
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    m = nnapi.Model()
    xi = m.add_operand(F32T, [n, h, w, c])
    inputs, arrays, steps, outputs, current = [xi], [x], [], [], xi
    for k, name in enumerate(names):
        shape = (c,) if rng.integers(2) else (1, 1, c)
        vector = (rng.uniform(-0.5, 0.5, shape) if name == "prelu" else rng.standard_normal(shape)).astype(np.float32)
        if k == 0 and vector_input:
            vi = m.add_operand(F32T, list(shape))
            inputs.append(vi)
            arrays.append(vector)
        else:
            vi = add_constant(m, vector)
        out = m.add_operand(F32T, [n, h, w, c])
        act = 1 if case == "relu" and k == 1 else 0
        if name == "prelu":
            m.add_operation(OP.PRELU, [current, vi], [out])
        else:
            pair = [current, vi] if rng.integers(2) else [vi, current]
            m.add_operation(KINDS[name], pair + [add_i32(m, act)], [out])
        steps.append((name, vector, act))
        if k == 1 and case == "output":
            outputs.append(out)
        elif k == 1 and case == "reader":
            z = m.add_operand(F32T, [n, h, w, c])
            m.add_operation(OP.MUL, [out, out, add_i32(m, 0)], [z])
            outputs.append(z)
        current = out
    m.identify_inputs_and_outputs(inputs, [current] + outputs)
    m.finish()
    return m, arrays, [(n, h, w, c)] * (1 + len(outputs)), steps


def _run(monkeypatch, m, arrays, shapes, enabled: bool, python_path: bool = False, runs=None):
    """The outputs of the last of three executions (or one per array set in ``runs``), the fused chains (step
    names) and whether the last ran natively."""
    monkeypatch.setattr(rewrites, "ENABLED", enabled)
    c = nnapi.Compilation(m)
    c.finish()
    graph = c.prepared.lowered.graph
    results, native_run = [], False
    for values in runs or [arrays] * 3:
        e = nnapi.Execution(c)
        for i, a in enumerate(values):
            e.set_input(i, a)
        outs = [np.full(s, 7.0, np.float32) for s in shapes]
        for i, o in enumerate(outs):
            e.set_output(i, o)
        before = graph.native_runs
        if not python_path:
            e.compute()
        else:  # timing nodes keeps the run in Python, on each node's bound call
            graph.context.performance_enabled = True
            try:
                e.compute()
            finally:
                graph.context.performance_enabled = False
        native_run = graph.native_runs > before
        results.append(outs)
    chains = [[n.description.name.rsplit(".", 1)[-1] for n in chain] for chain in graph.rewrites.channel_chains]
    c.release()
    return results if runs else results[-1], chains, native_run


@pytest.mark.parametrize("names", [["mul", "add", "prelu", "mul", "add"], ["mul", "add"], ["prelu", "mul"],
                                   ["add", "add", "mul", "prelu", "prelu", "mul", "add", "mul", "add", "prelu"]])
@pytest.mark.parametrize("python_path", [False, True])
def test_chain_fused_gives_the_unfused_bytes(monkeypatch, names, python_path):
    rng = np.random.default_rng(zlib.crc32(repr((names, python_path)).encode()))
    for trial in range(3):
        m, arrays, shapes, steps = _model(rng, names)
        if trial == 2:
            flat = arrays[0].reshape(-1)
            flat[rng.integers(0, flat.size, 5)] = np.array([np.nan, np.inf, -np.inf, -0.0, 3e38], np.float32)
        fused, chains, native_run = _run(monkeypatch, m, arrays, shapes, True, python_path)
        plain, none, _ = _run(monkeypatch, m, arrays, shapes, False, python_path)
        longest = channel_chain.MAX_STEPS
        assert chains == [names[k:k + longest] for k in range(0, len(names), longest)
                          if len(names[k:k + longest]) > 1]
        assert none == []
        assert native_run == (not python_path)
        same_bits(plain[0], fused[0])
        same_bits(_reference(arrays[0], [(name, v) for name, v, _ in steps]), fused[0])


@pytest.mark.parametrize("case", ["output", "reader", "relu"])
def test_chain_stops_where_a_tensor_is_seen_or_read_twice_or_a_step_clamps(monkeypatch, case):
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    names = ["mul", "add", "prelu", "mul"]
    m, arrays, shapes, steps = _model(rng, names, case)
    fused, chains, _ = _run(monkeypatch, m, arrays, shapes, True)
    plain, _, _ = _run(monkeypatch, m, arrays, shapes, False)
    assert chains == ([["prelu", "mul"]] if case == "relu" else [["mul", "add"], ["prelu", "mul"]])
    for a, b in zip(plain, fused):
        same_bits(a, b)
    ref = _reference(arrays[0], [(name, v) for name, v, _ in steps[:2]])
    if case == "relu":
        ref = np.maximum(ref, 0)
    ref = _reference(ref, [(name, v) for name, v, _ in steps[2:]])
    same_bits(ref, fused[0])


def test_a_vector_given_as_a_model_input_is_read_at_each_execution(monkeypatch):
    rng = np.random.default_rng(5)
    m, arrays, shapes, steps = _model(rng, ["mul", "add", "prelu"], vector_input=True)
    runs = [arrays, [arrays[0], (arrays[1] * -3).astype(np.float32)], [arrays[0], np.zeros_like(arrays[1])]]
    results, chains, native_run = _run(monkeypatch, m, arrays, shapes, True, runs=runs)
    assert chains == [["mul", "add", "prelu"]] and native_run
    for values, outs in zip(runs, results):
        same_bits(_reference(values[0], [("mul", values[1])] + [(name, v) for name, v, _ in steps[1:]]), outs[0])


@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (3, 5, 7, 3), (1, 96, 96, 8), (2, 33, 31, 64)])
def test_kernel_against_the_reference(shape):
    """The kernel alone (native entry, shared with helpers when large; and the Python call), in place too."""
    rng = np.random.default_rng(zlib.crc32(repr(shape).encode()))
    c = shape[-1]
    names = [str(rng.choice(["mul", "add", "prelu"])) for _ in range(int(rng.integers(1, channel_chain.MAX_STEPS + 1)))]
    codes = {"mul": channel_chain.MUL, "add": channel_chain.ADD, "prelu": channel_chain.PRELU}
    vectors = [rng.standard_normal(c).astype(np.float32) for _ in names]
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[: min(4, x.size)] = np.array([np.nan, -np.inf, -0.0, np.inf], np.float32)[: min(4, x.size)]
    ref = _reference(x, list(zip(names, vectors)))
    steps = [(codes[name], v) for name, v in zip(names, vectors)]
    out = np.full_like(x, 7.0)
    native.run(channel_chain.native_entry(x, out, steps))
    same_bits(ref, out)
    out[...] = 7.0
    channel_chain.bind(x, out, steps)()
    same_bits(ref, out)
    inplace = x.copy()
    native.run(channel_chain.native_entry(inplace, inplace, steps))
    same_bits(ref, inplace)


def test_kernel_refuses_what_does_not_fit():
    x = np.zeros((1, 2, 2, 4), np.float32)
    with pytest.raises(ValueError, match="one per channel"):
        channel_chain.native_entry(x, x.copy(), [(channel_chain.MUL, np.zeros(3, np.float32))])
    with pytest.raises(ValueError, match="not MUL, ADD or PRELU"):
        channel_chain.native_entry(x, x.copy(), [(9, np.zeros(4, np.float32))])
    with pytest.raises(ValueError, match="1 to"):
        channel_chain.native_entry(x, x.copy(), [])
    with pytest.raises(ValueError, match="float32"):
        channel_chain.native_entry(x.astype(np.float64), x.copy(), [(channel_chain.ADD, np.zeros(4, np.float32))])


@pytest.mark.parametrize("seed", range(10))
def test_kernel_over_random_shapes_reads_vectors_changed_between_calls(seed):
    """Random shapes, channel counts that divide the kernel's row or not (1, odd, past a row's values), one entry
    run twice with its vectors rewritten in place between the runs: each run gives the reference of the vectors it
    saw, every bit."""
    rng = np.random.default_rng(700 + seed)
    c = int(rng.choice([1, 2, 3, 7, 8, 16, 24, 100, channel_chain.BLOCK + 5]))
    shape = tuple(int(d) for d in rng.integers(1, 40, int(rng.integers(1, 4)))) + (c,)
    if seed % 4 == 0:
        c, shape = 8, (1, 128, 128, 8)  # hand recrop's: rows shared with the gang
    names = [str(rng.choice(["mul", "add", "prelu"])) for _ in range(int(rng.integers(1, channel_chain.MAX_STEPS + 1)))]
    codes = {"mul": channel_chain.MUL, "add": channel_chain.ADD, "prelu": channel_chain.PRELU}
    vectors = [rng.standard_normal(c).astype(np.float32) for _ in names]
    x = rng.standard_normal(shape).astype(np.float32)
    out = np.full_like(x, 7.0)
    entry = channel_chain.native_entry(x, out, [(codes[name], v) for name, v in zip(names, vectors)])
    for _ in range(2):
        assert native.run(entry) == 0
        same_bits(_reference(x, list(zip(names, vectors))), out)
        for v in vectors:
            v[...] = rng.standard_normal(c).astype(np.float32)
