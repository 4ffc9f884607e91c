"""API level 29's operations are checked when they are added, as the 1.0 and 1.1 ones are
(``test_add_operation_validation``): the operand lists written here from the Android 10 ``NeuralNetworks.h`` are
accepted, every mutant no valid list matches (each operand's type changed to each other type, one operand more or
fewer) is refused at the call naming the operation and the position, and through the C API a mutant returns
BAD_DATA at ``ANeuralNetworksModel_addOperation``."""
from __future__ import annotations

import os
import re
import subprocess

import pytest
from conftest import ROOT, compile_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_add_operation_validation import DRIVER, TYPES, parse
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi
from openvx_nn.nnapi.signatures_1_2 import SIGNATURES_1_2

OP = nnapi.OperationType
T = nnapi.OperandType
TYPES = {**TYPES, "b": T.BOOL, "t": T.TENSOR_BOOL8, "h": T.TENSOR_FLOAT16, "e": T.FLOAT16}
"""The 1.0 tokens, and ``b`` a BOOL scalar, ``t`` a TENSOR_BOOL8, ``h`` a TENSOR_FLOAT16, ``e`` a FLOAT16."""
TENSOR_LETTERS = "fnqth"


def dims(token: str) -> list[int]:
    return [2] * int(token[1:]) if token[0] in TENSOR_LETTERS else []


def _each(*kinds: str):
    def fill(line: str) -> list[str]:
        return [line.replace("T", k) for k in kinds]
    return fill


FLOATS, FQ, ANY = _each("h", "f"), _each("h", "f", "q"), _each("h", "f", "n", "q")

VALID: dict[int, list[str]] = {
    **{op: FLOATS("T3 > T3") for op in (OP.ABS, OP.EXP, OP.LOG, OP.RSQRT, OP.SIN, OP.SQRT)},
    OP.NEG: FLOATS("T3 > T3") + ["n3 > n3"],
    OP.POW: FLOATS("T3 T3 > T3"),
    OP.MAXIMUM: ANY("T3 T3 > T3"),
    OP.MINIMUM: ANY("T3 T3 > T3"),
    OP.PRELU: FQ("T3 T3 > T3"),
    OP.ARGMAX: ANY("T3 i > n2"),
    OP.ARGMIN: ANY("T3 i > n2"),
    OP.EXPAND_DIMS: ANY("T3 i > T4"),
    OP.GATHER: ANY("T3 i n1 > T3"),
    OP.SLICE: ANY("T3 n1 n1 > T3"),
    OP.SPLIT: ANY("T3 i i > T3") + ANY("T3 i i > T3 T3") + ANY("T3 i i > T3 T3 T3"),
    OP.TILE: ANY("T3 n1 > T3"),
    OP.TOPK_V2: ANY("T3 i > T3 n3"),
    OP.PAD_V2: ["h3 n2 e > h3", "f3 n2 s > f3", "q3 n2 i > q3"],
    OP.CHANNEL_SHUFFLE: FQ("T3 i i > T3"),
    OP.LOG_SOFTMAX: ["h3 e i > h3", "f3 s i > f3"],
    OP.CAST: [f"{a}3 > {b}3" for a in "hfnq" for b in "hfnq"],
    OP.QUANTIZE: FLOATS("T3 > q3"),
    **{op: _each("t", "h", "f", "n", "q")("T3 T3 > t3")
       for op in (OP.EQUAL, OP.NOT_EQUAL, OP.GREATER, OP.GREATER_EQUAL, OP.LESS, OP.LESS_EQUAL)},
    OP.LOGICAL_AND: ["t3 t3 > t3"],
    OP.LOGICAL_OR: ["t3 t3 > t3"],
    OP.LOGICAL_NOT: ["t3 > t3"],
    OP.SELECT: ANY("t3 T3 T3 > T3"),
    OP.REDUCE_MAX: FQ("T3 n1 b > T2"),
    OP.REDUCE_MIN: FQ("T3 n1 b > T2"),
    OP.REDUCE_PROD: FLOATS("T3 n1 b > T2"),
    OP.REDUCE_SUM: FLOATS("T3 n1 b > T2"),
    OP.REDUCE_ALL: ["t3 n1 b > t2"],
    OP.REDUCE_ANY: ["t3 n1 b > t2"],
    OP.INSTANCE_NORMALIZATION: ["h4 e e e b > h4", "f4 s s s b > f4"],
    OP.RESIZE_NEAREST_NEIGHBOR: FQ("T4 i i b > T4") + ["h4 e e b > h4", "f4 s s b > f4", "q4 s s b > q4"],
}
"""Every API level 29 operation of this batch, its valid operand lists from the header."""


def valid(op: int, case) -> bool:
    if op == OP.SPLIT:  # the tensor, axis and count, then one or more parts of the tensor's type
        ins, outs = case
        return (len(ins) == 3 and ins[0][0] in TENSOR_LETTERS and ins[1:] == ("i", "i") and len(outs) >= 1
                and set(outs) == {ins[0]})
    return case in {parse(line) for line in VALID[op]}


def add(op: int, case) -> nnapi.Model:
    m = nnapi.Model()
    ks = [m.add_operand(TYPES[tok[0]], dims(tok), 0.5 if tok[0] == "q" else 0.0) for tok in case[0] + case[1]]
    m.add_operation(op, ks[:len(case[0])], ks[len(case[0]):])
    return m


def mutants(case, types=TYPES, tensor_letters=TENSOR_LETTERS):
    """(where, position, mutant): every operand changed to every other type of ``types`` (a tensor keeps its
    rank, a scalar turned tensor takes rank 3), then one input or output fewer or more."""
    for side in (0, 1):
        for p, token in enumerate(case[side]):
            for letter in types:
                if letter == token[0]:
                    continue
                changed = list(case[side])
                changed[p] = letter if letter not in tensor_letters else letter + (
                    token[1:] if token[0] in tensor_letters else "3")
                yield ("input", "output")[side], p, ((tuple(changed), case[1]) if side == 0 else
                                                     (case[0], tuple(changed)))
    ins, outs = case
    yield "count", None, (ins[:-1], outs)
    yield "count", None, (ins + ins[-1:], outs)
    yield "count", None, (ins, outs[:-1])
    yield "count", None, (ins, outs + outs[-1:])


CASES = [(op, parse(line)) for op, lines in VALID.items() for line in lines]


def test_the_cases_cover_every_api_level_29_operation_with_a_signature():
    assert set(VALID) == set(SIGNATURES_1_2)
    assert all(s.api == 29 for s in SIGNATURES_1_2.values())


@pytest.mark.parametrize("op, case", CASES, ids=[f"{OP(op).name}:{' '.join(c[0])}>{' '.join(c[1])}" for op, c in CASES])
def test_a_valid_list_is_accepted_and_every_mutant_no_valid_list_matches_is_refused_naming_the_position(op, case):
    assert_mutants_refused(op, case, valid)


def assert_mutants_refused(op: int, case, is_valid, build=add, variants=mutants) -> None:
    """``case`` is accepted, and every mutant ``is_valid(op, mutant)`` rejects is refused naming the operation
    and the operand's position (``build`` and ``variants``: a file's own ``add`` and ``mutants``, for more
    operand types)."""
    build(op, case)
    refused = 0
    for where, p, mutant in variants(case):
        if not mutant[1] or is_valid(op, mutant):
            if mutant[1]:
                build(op, mutant)
            continue
        with pytest.raises(nnapi.NNAPIError) as err:
            build(op, mutant)
        message = str(err.value)
        assert err.value.status == nnapi.ErrorStatus.INVALID_ARGUMENT
        assert message.startswith(f"operation 0 ({OP(op).name}): "), message
        assert "expected" in message, message
        if p is not None:
            assert re.search(rf"\b{where} {p}\b", message), (mutant, message)
        refused += 1
    assert refused >= len(case[0]) + len(case[1])


def test_a_rank_beyond_six_or_a_paddings_tensor_of_the_wrong_rank_is_refused():
    with pytest.raises(nnapi.NNAPIError, match=r"\(ABS\): input 0 \(input\) has rank 7 .*expected rank 1 to 6"):
        add(OP.ABS, parse("f7 > f7"))
    with pytest.raises(nnapi.NNAPIError, match=r"\(PAD_V2\): input 0 \(input\) has rank 5 .*expected rank"):
        add(OP.PAD_V2, parse("f5 n2 s > f5"))
    with pytest.raises(nnapi.NNAPIError, match=r"\(PAD_V2\): input 1 \(paddings\) has rank 1"):
        add(OP.PAD_V2, parse("f3 n1 s > f3"))


def operation_line(op: int, case, types=TYPES, dims_of=dims) -> str:
    """One line of the C driver's input: the operation, its counts, then each operand's type, rank and dims."""
    tokens = case[0] + case[1]
    operands = " ".join(f"{int(types[t[0]])} {len(dims_of(t))} " + " ".join(map(str, dims_of(t))) for t in tokens)
    return f"{int(op)} {len(case[0])} {len(case[1])} {operands}"


def assert_c_api_codes(tmp_path, lines: list[str], expected: list[int], driver: str = DRIVER,
                       name: str = "nnapi_add_operation") -> None:
    """The C driver adds each line's operation through ``ANeuralNetworksModel_addOperation``; its codes are
    ``expected``."""
    spec = tmp_path / "operations.txt"
    spec.write_text("\n".join(lines) + "\n")
    exe = compile_c(driver, name, nnapi_flags())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([str(exe), str(spec)], capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    got = [int(v) for v in result.stdout.split("\n")[:len(expected)]]
    assert got == expected


def c_api_codes(tmp_path, cases, is_valid, types=TYPES, dims_of=dims, variants=mutants, driver: str = DRIVER,
                name: str = "nnapi_add_operation") -> list[int]:
    """Each case and its mutants added through ``ANeuralNetworksModel_addOperation``: the C API's codes checked
    against NO_ERROR for the lists ``is_valid`` takes and BAD_DATA for the others; returns the codes."""
    lines, expected = [], []
    for op, case in cases:
        for mutant in [case] + [m for *_, m in variants(case) if m[1]]:
            lines.append(operation_line(op, mutant, types, dims_of))
            expected.append(0 if is_valid(op, mutant) else 4)  # NO_ERROR, BAD_DATA
    assert_c_api_codes(tmp_path, lines, expected, driver, name)
    return expected


def test_the_c_api_returns_bad_data_for_the_mutants_and_no_error_for_the_valid_lists(tmp_path):
    expected = c_api_codes(tmp_path, CASES, valid)
    assert expected.count(4) > 500 and expected.count(0) > 40
