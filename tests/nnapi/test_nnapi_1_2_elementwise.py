"""NNAPI 1.2's element-wise operations (API level 29) against references written from the header's text
(``NeuralNetworks.h`` of Android 10): ABS, EXP, LOG, NEG, RSQRT, SIN, SQRT, POW, MAXIMUM, MINIMUM, PRELU, CAST and
QUANTIZE, in every tensor type their "Supported tensor types" lists, over random shapes and broadcasts."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import F32T, I32T, Q8, Out, Tensor, collect_garbage, run  # noqa: F401 - autouse

from openvx_nn import nnapi

OP = nnapi.OperationType


def random_shape(rng, rank: int, low: int = 1, high: int = 5) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(low, high, size=rank))


def real(q: np.ndarray, scale: float, zero: int) -> np.ndarray:
    """An operand's scale is a C float: its float32 value is the one the model holds."""
    return (q.astype(np.float64) - zero) * float(np.float32(scale))


def to_q8(values: np.ndarray, scale: float, zero: int) -> np.ndarray:
    """The real values to uint8, rounded half to even (the project's rule for non-sum results)."""
    return np.clip(np.rint(values / float(np.float32(scale))) + zero, 0, 255).astype(np.uint8)


# -- one tensor in -------------------------------------------------------------------------------------------------
FUNCTIONS = {  # the header's one-line definitions, on float64
    OP.ABS: lambda v: np.array([abs(e) for e in v.reshape(-1)]).reshape(v.shape),
    OP.EXP: lambda v: np.array([math.exp(e) for e in v.reshape(-1)]).reshape(v.shape),
    OP.LOG: lambda v: np.array([math.log(e) if e > 0 else (-math.inf if e == 0 else math.nan)
                                for e in v.reshape(-1)]).reshape(v.shape),
    OP.NEG: lambda v: -v,
    OP.RSQRT: lambda v: np.array([1 / math.sqrt(e) if e > 0 else (math.inf if e == 0 else math.nan)
                                  for e in v.reshape(-1)]).reshape(v.shape),
    OP.SIN: lambda v: np.array([math.sin(e) for e in v.reshape(-1)]).reshape(v.shape),
    OP.SQRT: lambda v: np.array([math.sqrt(e) if e >= 0 else math.nan for e in v.reshape(-1)]).reshape(v.shape),
}


@pytest.mark.parametrize("op", list(FUNCTIONS), ids=lambda op: OP(op).name)
@pytest.mark.parametrize("rank", [1, 2, 4, 6])
def test_float32_functions_equal_the_float64_definition_rounded_once(op, rank):
    rng = np.random.default_rng(rank * 100 + int(op))
    shape = random_shape(rng, rank, 1, 4)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    if op in (OP.LOG, OP.RSQRT, OP.SQRT):
        x = np.abs(x) + np.float32(1e-3)
    got = run(op, [Tensor(x)], [Out(F32T, shape)])[0]
    want = FUNCTIONS[op](x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2 ** -23, atol=0)


@pytest.mark.parametrize("op, edges", [
    (OP.LOG, {0.0: -math.inf, -1.0: math.nan, math.inf: math.inf}),
    (OP.SQRT, {0.0: 0.0, -1.0: math.nan, math.inf: math.inf}),
    (OP.RSQRT, {0.0: math.inf, -4.0: math.nan, 4.0: 0.5}),
    (OP.EXP, {-math.inf: 0.0, 100.0: math.inf, 0.0: 1.0}),
    (OP.ABS, {-0.0: 0.0, -math.inf: math.inf}),
    (OP.NEG, {math.inf: -math.inf, 2.5: -2.5}),
])
def test_functions_at_the_edges_of_their_domain_follow_ieee(op, edges):
    x = np.array(list(edges), np.float32)
    got = run(op, [Tensor(x)], [Out(F32T, x.shape)])[0]
    np.testing.assert_array_equal(got, np.array(list(edges.values()), np.float32))


def test_int32_neg_negates_and_wraps_the_most_negative_value():
    rng = np.random.default_rng(1)
    x = rng.integers(-2 ** 31 + 1, 2 ** 31, size=(3, 5), dtype=np.int64).astype(np.int32)
    x[0, 0] = -2 ** 31
    got = run(OP.NEG, [Tensor(x)], [Out(I32T, x.shape)])[0]
    want = np.array([[-int(v) if v != -2 ** 31 else v for v in row] for row in x.tolist()], np.int64)
    np.testing.assert_array_equal(got, want.astype(np.int32))


# -- two tensors, broadcasting ----------------------------------------------------------------------------------------
def broadcast_pairs(rng, count: int, max_rank: int = 4):
    """(shape a, shape b, result shape): trailing dimensions aligned, one side 1 where they differ."""
    pairs = [((4, 1, 2), (5, 4, 3, 1), (5, 4, 3, 2))]  # the header's example
    for _ in range(count):
        rank = int(rng.integers(1, max_rank + 1))
        out = random_shape(rng, rank, 1, 5)
        a = tuple(1 if rng.random() < 0.3 else d for d in out)
        b = tuple(1 if rng.random() < 0.3 else d for d in out)
        a = a[int(rng.integers(0, rank)):] or (1,)
        pairs.append((a, b, tuple(max(x, y) for x, y in zip((1,) * (rank - len(a)) + a, b))))
    return pairs


def reference_binary(rule, a, b):
    """``rule`` element by element over the broadcast of ``a`` and ``b`` (plain loop over the result)."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    aa, bb = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    out = np.empty(shape, np.float64)
    for index in np.ndindex(*shape):
        out[index] = rule(float(aa[index]), float(bb[index]))
    return out


def maximum(x, y):
    return x if (x >= y or math.isnan(x)) else y


def minimum(x, y):
    return x if (x <= y or math.isnan(x)) else y


def prelu(x, alpha):
    return x if x >= 0 else alpha * x  # "f(x) = alpha * x for x < 0, f(x) = x for x >= 0"


def power(base, exponent):
    try:
        return math.pow(base, exponent)
    except ValueError:
        return math.nan  # a negative base to a fractional power
    except OverflowError:
        return math.inf


RULES = {OP.MAXIMUM: maximum, OP.MINIMUM: minimum, OP.PRELU: prelu, OP.POW: power}


@pytest.mark.parametrize("op", list(RULES), ids=lambda op: OP(op).name)
def test_float32_binary_operations_broadcast_and_equal_the_float64_rule_rounded_once(op):
    rng = np.random.default_rng(int(op))
    for sa, sb, shape in broadcast_pairs(rng, 6) + [((2, 1, 3, 1, 2), (3, 4, 1), (2, 1, 3, 4, 2))]:
        a = (rng.standard_normal(sa) * 2).astype(np.float32)
        b = (rng.standard_normal(sb) * 2).astype(np.float32)
        if op == OP.POW:
            a = np.abs(a)
        got = run(op, [Tensor(a), Tensor(b)], [Out(F32T, shape)])[0]
        np.testing.assert_array_equal(got, reference_binary(RULES[op], a, b).astype(np.float32), err_msg=f"{sa} {sb}")


def test_float32_prelu_of_a_mediapipe_shape_with_per_channel_alpha_as_a_constant():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 16, 16, 24)).astype(np.float32)
    alpha = (rng.random((1, 1, 24)) * 0.5).astype(np.float32)
    got = run(OP.PRELU, [Tensor(x), Tensor(alpha, const=True)], [Out(F32T, x.shape)])[0]
    np.testing.assert_array_equal(got, reference_binary(prelu, x, alpha).astype(np.float32))


def test_maximum_and_minimum_pass_a_nan_on_and_pow_gives_nan_for_a_negative_base_to_a_fraction():
    a = np.array([np.nan, 1.0, 2.0, -8.0], np.float32)
    b = np.array([1.0, np.nan, 3.0, 0.5], np.float32)
    assert np.isnan(run(OP.MAXIMUM, [Tensor(a), Tensor(b)], [Out(F32T, (4,))])[0][:2]).all()
    assert np.isnan(run(OP.MINIMUM, [Tensor(a), Tensor(b)], [Out(F32T, (4,))])[0][:2]).all()
    got = run(OP.POW, [Tensor(a[2:]), Tensor(b[2:])], [Out(F32T, (2,))])[0]
    assert got[0] == 8.0 and np.isnan(got[1])


@pytest.mark.parametrize("op", [OP.MAXIMUM, OP.MINIMUM], ids=lambda op: OP(op).name)
def test_int32_maximum_and_minimum_are_exact(op):
    rng = np.random.default_rng(3)
    for sa, sb, shape in broadcast_pairs(rng, 4):
        a = rng.integers(-2 ** 31, 2 ** 31, size=sa, dtype=np.int64).astype(np.int32)
        b = rng.integers(-2 ** 31, 2 ** 31, size=sb, dtype=np.int64).astype(np.int32)
        got = run(op, [Tensor(a), Tensor(b)], [Out(I32T, shape)])[0]
        want = reference_binary(RULES[op], a, b)
        np.testing.assert_array_equal(got, want.astype(np.int64).astype(np.int32))


@pytest.mark.parametrize("op", [OP.MAXIMUM, OP.MINIMUM, OP.PRELU], ids=lambda op: OP(op).name)
def test_quant8_binary_operations_compare_real_values_of_different_quantizations(op):
    rng = np.random.default_rng(int(op) + 50)
    qa, qb, qo = (0.05, 120), (0.11, 30), (0.07, 140)
    for sa, sb, shape in broadcast_pairs(rng, 5):
        a = rng.integers(0, 256, size=sa, dtype=np.uint8)
        b = rng.integers(0, 256, size=sb, dtype=np.uint8)
        got = run(op, [Tensor(a, *qa), Tensor(b, *qb)], [Out(Q8, shape, *qo)])[0]
        want = to_q8(reference_binary(RULES[op], real(a, *qa), real(b, *qb)), *qo)
        np.testing.assert_array_equal(got, want)


# -- CAST, QUANTIZE ------------------------------------------------------------------------------------------------
def cast_one(value: float, to: str) -> float:
    """The header: "casts a tensor to a new type", quantization ignored; a float to an integer type is truncated
    toward zero, saturated to the type's range (our choice where C leaves it undefined), NaN 0."""
    if to == "f":
        return value
    low, high = (0, 255) if to == "q" else (-2 ** 31, 2 ** 31 - 1)
    if math.isnan(value):
        return 0
    return min(max(math.trunc(value) if math.isfinite(value) else value, low), high)


KINDS = {"f": (F32T, np.float32), "n": (I32T, np.int32), "q": (Q8, np.uint8)}


@pytest.mark.parametrize("to", "fnq")
@pytest.mark.parametrize("source", "fnq")
def test_cast_between_every_pair_of_types_ignores_quantization_truncates_and_saturates(source, to):
    rng = np.random.default_rng(ord(source) * 7 + ord(to))
    if source == "f":
        x = np.concatenate([rng.standard_normal(20) * 300, [-0.5, 0.99, -1.99, 255.5, 256.0, -1e10, 1e10,
                                                            np.nan, np.inf, -np.inf]]).astype(np.float32)
    elif source == "n":
        x = np.concatenate([rng.integers(-1000, 1000, 20), [-2 ** 31, 2 ** 31 - 1, 255, 256, -1]]).astype(np.int32)
    else:
        x = rng.integers(0, 256, 25).astype(np.uint8)
    kind, dtype = KINDS[to]
    out = Out(kind, x.shape, 0.25 if to == "q" else 0.0, 7 if to == "q" else 0)
    got = run(OP.CAST, [Tensor(x, 0.5 if source == "q" else 0.0, 3 if source == "q" else 0)], [out])[0]
    want = np.array([cast_one(float(v), to) for v in x], np.float64).astype(dtype)
    np.testing.assert_array_equal(got, want)


def test_quantize_rounds_halves_away_from_zero_and_clamps():
    scale, zero = 0.5, 100
    x = np.array([0.25, -0.25, 0.75, -0.75, 1.25, 200.0, -200.0, 0.0, 3.3, -3.3], np.float32)
    got = run(OP.QUANTIZE, [Tensor(x)], [Out(Q8, x.shape, scale, zero)])[0]

    def one(v):  # "output = max(0, min(255, round(input / scale) + zeroPoint))", round as C's
        r = v / scale
        return max(0, min(255, math.floor(abs(r) + 0.5) * (1 if r >= 0 else -1) + zero))
    np.testing.assert_array_equal(got, [one(float(v)) for v in x])
    assert got[0] == 101 and got[1] == 99  # 0.5 and -0.5 away from zero


def test_quantize_of_random_shapes():
    rng = np.random.default_rng(11)
    for rank in (1, 3, 5):
        shape = random_shape(rng, rank)
        x = (rng.standard_normal(shape) * 10).astype(np.float32)
        got = run(OP.QUANTIZE, [Tensor(x)], [Out(Q8, shape, 0.1, 128)])[0]
        r = x.astype(np.float64) / float(np.float32(0.1))  # the operand holds a C float
        want = np.clip(np.sign(r) * np.floor(np.abs(r) + 0.5) + 128, 0, 255)
        np.testing.assert_array_equal(got, want.astype(np.uint8))


def test_every_element_wise_operation_is_supported_in_its_types():
    supported = nnapi.hal.Device().get_supported_operations
    for op in (*FUNCTIONS, *RULES, OP.CAST, OP.QUANTIZE):
        m = nnapi.Model()
        a = m.add_operand(F32T, [2])
        ins = [a] if op not in RULES else [a, m.add_operand(F32T, [2])]
        out = m.add_operand(Q8 if op == OP.QUANTIZE else F32T, [2], 0.5 if op == OP.QUANTIZE else 0.0)
        m.add_operation(op, ins, [out])
        m.identify_inputs_and_outputs(ins, [out])
        m.finish()
        assert supported(m.to_hal()) == [True], OP(op).name


def _conv_prelu(native: bool, x, w, bias, alpha, rule: int) -> tuple[np.ndarray, object]:
    """A MediaPipe block (CONV_2D 3x3 SAME, then PRELU, MAXIMUM or MINIMUM by a per-channel constant) run twice:
    (the second run's output, the graph)."""
    m = nnapi.Model()
    xi = m.add_operand(F32T, list(x.shape))
    wk, bk, ak = (m.add_operand(F32T, list(v.shape)) for v in (w, bias, alpha))
    for k, v in ((wk, w), (bk, bias), (ak, alpha)):
        m.set_operand_value(k, v)
    params = [m.add_operand(nnapi.OperandType.INT32) for _ in range(4)]
    for k, v in zip(params, (1, 1, 1, 0)):  # SAME, stride 1 x 1, no activation
        m.set_operand_value(k, v)
    mid = m.add_operand(F32T, [*x.shape[:3], w.shape[0]])
    out = m.add_operand(F32T, [*x.shape[:3], w.shape[0]])
    m.add_operation(OP.CONV_2D, [xi, wk, bk, *params], [mid])
    m.add_operation(rule, [mid, ak], [out])
    m.identify_inputs_and_outputs([xi], [out])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    c.prepared.graph.native_allowed = native
    e = nnapi.Execution(c)
    e.set_input(0, x)
    result = np.zeros((*x.shape[:3], w.shape[0]), np.float32)
    e.set_output(0, result)
    e.compute()
    e.compute()
    return result, c


@pytest.mark.parametrize("op", [OP.PRELU, OP.MAXIMUM, OP.MINIMUM], ids=lambda op: OP(op).name)
def test_a_convolution_then_a_per_channel_float32_binary_operation_runs_natively_with_the_python_paths_bits(op):
    rng = np.random.default_rng(int(op) + 9)
    x = rng.standard_normal((1, 12, 10, 8)).astype(np.float32)
    w = rng.standard_normal((16, 3, 3, 8)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    alpha = (rng.random((1, 1, 16)) * 0.5).astype(np.float32)
    native, compilation = _conv_prelu(True, x, w, bias, alpha, op)
    graph = compilation.prepared.graph
    assert graph.plan.native is not None, "the graph has no native plan"
    runs = graph.native_runs
    e = nnapi.Execution(compilation)
    e.set_input(0, x)
    again = np.zeros_like(native)
    e.set_output(0, again)
    e.compute()
    assert graph.native_runs == runs + 1, "Execution.compute did not run the native plan"
    python, other = _conv_prelu(False, x, w, bias, alpha, op)
    assert other.prepared.graph.plan.native is None
    np.testing.assert_array_equal(native, python)
    np.testing.assert_array_equal(again, python)
    mid = np.zeros((1, 12, 10, 16))  # the convolution in float64, then the rule on it
    padded = np.pad(x.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)])
    for i in range(12):
        for j in range(10):
            mid[0, i, j] = np.tensordot(w.astype(np.float64), padded[0, i:i + 3, j:j + 3], axes=([1, 2, 3], [0, 1, 2]))
    mid += bias
    want = reference_binary(RULES[op], mid.astype(np.float32), alpha)
    np.testing.assert_allclose(python, want, rtol=1e-5, atol=1e-5)
