"""Operations are checked when they are added, as Android's runtime checks ``addOperation``: for every operation
of NNAPI 1.0 and 1.1, valid operand lists written here from ``NeuralNetworks.h`` (API levels 27 and 28) and the
1.0 HAL text are accepted, and every mutant (each operand's type changed to each other type, one operand more or
fewer) that no valid list matches is refused at the call, naming the operation and the position; through the C
API a representative subset returns BAD_DATA at ``ANeuralNetworksModel_addOperation``."""
from __future__ import annotations

import os
import re
import subprocess

import pytest
from conftest import ROOT, compile_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi
from openvx_nn.nnapi.signatures import markdown_table

T = nnapi.OperandType
OP = nnapi.OperationType
TYPES = {"f": T.TENSOR_FLOAT32, "n": T.TENSOR_INT32, "q": T.TENSOR_QUANT8_ASYMM, "i": T.INT32, "s": T.FLOAT32,
         "u": T.UINT32}
"""Tokens: a letter for the type, then a tensor's rank (``f4``: a 4-D TENSOR_FLOAT32, ``i``: an INT32 scalar)."""
TENSOR_LETTERS = "fnq"


def _each(*kinds: str):
    def fill(line: str) -> list[str]:
        return [line.replace("T", k) for k in kinds]
    return fill


FQ, F = _each("f", "q"), _each("f")
ANY = _each("f", "n", "q")
POOL_EXPLICIT, POOL_IMPLICIT = "T4 i i i i i i i i i > T4", "T4 i i i i i i > T4"
CONV_F = ["f4 f4 f1 " + "i " * 7 + "> f4", "f4 f4 f1 i i i i > f4"]
CONV_Q = ["q4 q4 n1 " + "i " * 7 + "> q4", "q4 q4 n1 i i i i > q4"]
LSTM_HEAD = "f2 " + "f2 " * 8 + "f1 " * 7 + "f2 f1 "
RNN_HEAD = "f2 f2 f2 f1 "

VALID: dict[int, list[str]] = {
    OP.ADD: FQ("T4 T4 i > T4"),
    OP.AVERAGE_POOL_2D: FQ(POOL_EXPLICIT) + FQ(POOL_IMPLICIT),
    OP.CONCATENATION: [c for n in (1, 2, 3) for tail in ("i", "i i") for c in FQ("T2 " * n + tail + " > T2")],
    OP.CONV_2D: CONV_F + CONV_Q,
    OP.DEPTHWISE_CONV_2D: ["f4 f4 f1 " + "i " * 8 + "> f4", "f4 f4 f1 " + "i " * 5 + "> f4",
                           "q4 q4 n1 " + "i " * 8 + "> q4", "q4 q4 n1 " + "i " * 5 + "> q4"],
    OP.DEPTH_TO_SPACE: FQ("T4 i > T4"),
    OP.DEQUANTIZE: ["q2 > f2"],
    OP.EMBEDDING_LOOKUP: ANY("n1 T2 > T2"),
    OP.FLOOR: ["f3 > f3"],
    OP.FULLY_CONNECTED: ["f2 f2 f1 i > f2", "q2 q2 n1 i > q2"],
    OP.HASHTABLE_LOOKUP: ANY("n1 n1 T2 > T2 q1"),
    OP.L2_NORMALIZATION: ["f4 > f4"],
    OP.L2_POOL_2D: F(POOL_EXPLICIT) + F(POOL_IMPLICIT),
    OP.LOCAL_RESPONSE_NORMALIZATION: ["f4 i s s s > f4"],
    OP.LOGISTIC: FQ("T2 > T2"),
    OP.LSH_PROJECTION: ANY("f2 T2 f1 i > n1"),
    OP.LSTM: [LSTM_HEAD + "f2 f2 i s s > f2 f2 f2 f2", LSTM_HEAD + "i s s > f2 f2 f2 f2"],
    OP.MAX_POOL_2D: FQ(POOL_EXPLICIT) + FQ(POOL_IMPLICIT),
    OP.MUL: FQ("T3 T1 i > T3"),
    OP.RELU: FQ("T2 > T2"),
    OP.RELU1: FQ("T1 > T1"),
    OP.RELU6: FQ("T4 > T4"),
    OP.RESHAPE: FQ("T3 n1 > T2"),
    OP.RESIZE_BILINEAR: ["f4 i i > f4"],
    OP.RNN: [RNN_HEAD + ins + outs for ins in ("f2 i > ", "i f2 > ", "i > ") for outs in ("f2 f2", "f2")],
    OP.SOFTMAX: FQ("T2 s > T2") + FQ("T4 s > T4"),
    OP.SPACE_TO_DEPTH: FQ("T4 i > T4"),
    OP.SVDF: ["f2 f2 f2 f1 f2 i i > f2 f2", "f2 f2 f2 f1 i i > f2 f2"],
    OP.TANH: ["f2 > f2"],
    OP.BATCH_TO_SPACE_ND: FQ("T4 n1 > T4"),
    OP.DIV: ["f4 f2 i > f4"],
    OP.MEAN: FQ("T3 n1 i > T2"),
    OP.PAD: FQ("T3 n2 > T3"),
    OP.SPACE_TO_BATCH_ND: FQ("T4 n1 n2 > T4"),
    OP.SQUEEZE: FQ("T3 n1 > T2") + FQ("T3 > T2"),
    OP.STRIDED_SLICE: FQ("T3 n1 n1 n1 i i i > T3"),
    OP.SUB: ["f2 f2 i > f2"],
    OP.TRANSPOSE: FQ("T3 n1 > T3") + FQ("T3 > T3"),
}
"""Every operation's valid operand lists, from the header's Inputs/Outputs (and the 1.0 HAL's extra forms:
CONCATENATION's fused activation, LSTM and SVDF without state inputs, RNN's other orders and single output;
SQUEEZE and TRANSPOSE with their trailing optional input left out)."""

Case = tuple[tuple[str, ...], tuple[str, ...]]


def parse(line: str) -> Case:
    ins, outs = line.split(">")
    return tuple(ins.split()), tuple(outs.split())


def valid(op: int, case: Case) -> bool:
    if op == OP.CONCATENATION:  # any number of like tensors, the axis, and the 1.0 HAL's optional activation
        ins, outs = case
        n = next((k for k, tok in enumerate(ins) if tok[0] not in TENSOR_LETTERS), len(ins))
        return (n >= 1 and ins[0][0] in "fq" and set(ins[:n]) == {ins[0]} and ins[n:] in (("i",), ("i", "i"))
                and outs == (ins[0],))
    return case in {parse(line) for line in VALID[op]}


def dims(token: str) -> list[int]:
    return [2] * int(token[1:]) if token[0] in TENSOR_LETTERS else []


def add(op: int, case: Case, dims_of=dims) -> nnapi.Model:
    """A model with one operand per token, then the operation over them (raises what ``add_operation`` raises)."""
    m = nnapi.Model()
    ks = [m.add_operand(TYPES[tok[0]], dims_of(tok), 0.5 if tok[0] == "q" else 0.0) for tok in case[0] + case[1]]
    m.add_operation(op, ks[:len(case[0])], ks[len(case[0]):])
    return m


def mutate(token: str, letter: str, rank: str) -> str:
    """``token`` with type ``letter``, keeping a tensor's rank (a scalar turned tensor takes ``rank``)."""
    if letter not in TENSOR_LETTERS:
        return letter
    return letter + (token[1:] if token[0] in TENSOR_LETTERS else rank)


def type_mutants(case: Case):
    """(side, position, mutant) for every operand changed to every other type."""
    rank = next(tok[1:] for tok in case[0] + case[1] if tok[0] in TENSOR_LETTERS)
    for side in (0, 1):
        for p, token in enumerate(case[side]):
            for letter in TYPES:
                if letter != token[0]:
                    changed = list(case[side])
                    changed[p] = mutate(token, letter, rank)
                    yield side, p, (tuple(changed), case[1]) if side == 0 else (case[0], tuple(changed))


def count_mutants(case: Case):
    """(what, mutant): the last input or output dropped, or one more like it."""
    ins, outs = case
    yield "one input fewer", (ins[:-1], outs)
    yield "one input more", (ins + ins[-1:], outs)
    yield "one output fewer", (ins, outs[:-1])
    yield "one output more", (ins, outs + outs[-1:])


CASES = [(op, parse(line)) for op, lines in VALID.items() for line in lines]


def case_id(value) -> str:
    if isinstance(value, tuple):
        return " ".join(value[0]) + " > " + " ".join(value[1])
    return OP(value).name


def test_every_operation_of_nnapi_1_0_and_1_1_is_covered():
    assert set(VALID) == {op for op in OP if op <= OP.TRANSPOSE}
    assert len(VALID) == 38


@pytest.mark.parametrize("op, case", CASES, ids=[f"{OP(op).name}:{case_id(c)}" for op, c in CASES])
def test_a_valid_operation_is_accepted_and_every_type_mutant_no_valid_list_matches_is_refused(op, case):
    add(op, case)  # no exception
    refused = 0
    for side, p, mutant in type_mutants(case):
        if valid(op, mutant):
            add(op, mutant)
            continue
        with pytest.raises(nnapi.NNAPIError) as err:
            add(op, mutant)
        message = str(err.value)
        where = ("input", "output")[side]
        assert err.value.status == nnapi.ErrorStatus.INVALID_ARGUMENT
        assert message.startswith(f"operation 0 ({OP(op).name}): "), message
        assert re.search(rf"\b{where} {p}\b", message), (mutant, message)
        assert "expected" in message
        refused += 1
    assert refused >= len(case[0]) + len(case[1])  # each position has types it refuses


@pytest.mark.parametrize("op, case", CASES, ids=[f"{OP(op).name}:{case_id(c)}" for op, c in CASES])
def test_one_operand_more_or_fewer_is_refused_unless_another_valid_list_has_that_count(op, case):
    for what, mutant in count_mutants(case):
        if valid(op, mutant):  # CONCATENATION takes any number of tensors, and an optional fused activation
            add(op, mutant)
            continue
        with pytest.raises(nnapi.NNAPIError) as err:
            add(op, mutant)
        message = str(err.value)
        assert message.startswith(f"operation 0 ({OP(op).name}): "), (what, message)
        assert re.search(r"\b(inputs?|outputs?)\b", message) and "expected" in message, (what, message)


def test_a_count_mutant_names_the_counts_the_operation_takes():
    # API level 29 adds CONV_2D's layout flag (11 or 8 inputs) and dilation (13 or 10) to NNAPI 1.0's 10 or 7
    with pytest.raises(nnapi.NNAPIError, match=r"operation 0 \(CONV_2D\): has 9 inputs and 1 output; expected "
                                               r"10 or 11 or 13 or 7 or 8 inputs and 1 output"):
        add(OP.CONV_2D, parse("f4 f4 f1 i i i i i i > f4"))
    with pytest.raises(nnapi.NNAPIError, match=r"\(LSTM\): has 22 inputs and 4 outputs; expected 23 or 21 inputs"):
        add(OP.LSTM, parse(LSTM_HEAD + "f2 i s s > f2 f2 f2 f2"))


def test_the_message_names_the_expected_type():
    with pytest.raises(nnapi.NNAPIError, match=r"input 2 \(bias\) is TENSOR_FLOAT32; expected TENSOR_INT32 "
                                               r"\(with TENSOR_QUANT8_ASYMM input 0\)"):
        add(OP.CONV_2D, parse(CONV_Q[1].replace("n1", "f1")))
    with pytest.raises(nnapi.NNAPIError, match=r"input 0 \(input1\) is TENSOR_QUANT8_ASYMM; expected TENSOR_FLOAT32$"):
        add(OP.SUB, parse("q2 q2 i > q2"))  # quant8 SUB is API level 29
    with pytest.raises(nnapi.NNAPIError, match=r"input 1 \(input2\) is TENSOR_FLOAT32; expected "
                                               r"TENSOR_QUANT8_ASYMM, the type of input 0"):
        add(OP.ADD, parse("q2 f2 i > q2"))


# -- ranks ---------------------------------------------------------------------------------------------------------

RANKS = [  # (operation, valid list, input position, a rank the header refuses there)
    (OP.CONV_2D, CONV_F[1], 0, 3), (OP.CONV_2D, CONV_F[1], 1, 2), (OP.CONV_2D, CONV_F[1], 2, 2),
    (OP.DEPTHWISE_CONV_2D, VALID[OP.DEPTHWISE_CONV_2D][1], 1, 3), (OP.MAX_POOL_2D, VALID[OP.MAX_POOL_2D][1], 0, 2),
    (OP.L2_NORMALIZATION, "f4 > f4", 0, 5), (OP.LOCAL_RESPONSE_NORMALIZATION, "f4 i s s s > f4", 0, 5),
    (OP.SOFTMAX, "f2 s > f2", 0, 5),  # API level 29 takes ranks 1 to 4 for these three (OP.RESIZE_BILINEAR, "f4 i i > f4", 0, 3), (OP.ADD, "f4 f4 i > f4", 0, 5),
    (OP.FULLY_CONNECTED, "f2 f2 f1 i > f2", 1, 3), (OP.EMBEDDING_LOOKUP, "n1 f2 > f2", 0, 2),
    (OP.EMBEDDING_LOOKUP, "n1 f2 > f2", 1, 1), (OP.HASHTABLE_LOOKUP, "n1 n1 f2 > f2 q1", 1, 2),
    (OP.LSH_PROJECTION, "f2 f2 f1 i > n1", 0, 3), (OP.RESHAPE, "f3 n1 > f2", 1, 2),
    (OP.SPACE_TO_BATCH_ND, "f4 n1 n2 > f4", 2, 1), (OP.PAD, "f3 n2 > f3", 1, 1), (OP.MEAN, "f3 n1 i > f2", 1, 2),
    (OP.STRIDED_SLICE, "f3 n1 n1 n1 i i i > f3", 3, 2), (OP.TRANSPOSE, "f3 n1 > f3", 0, 5),
    (OP.LSTM, VALID[OP.LSTM][0], 9, 2), (OP.RNN, VALID[OP.RNN][0], 0, 3), (OP.SVDF, VALID[OP.SVDF][0], 3, 2),
]


@pytest.mark.parametrize("op, line, position, rank", RANKS, ids=[f"{OP(r[0]).name}-{r[2]}" for r in RANKS])
def test_a_rank_the_operation_does_not_take_is_refused_and_an_unknown_rank_is_accepted(op, line, position, rank):
    case = parse(line)
    target = case[0][position]
    with pytest.raises(nnapi.NNAPIError, match=rf"operation 0 \({OP(op).name}\): input {position} \(.*\) has rank "
                                               rf"{rank} .*expected rank"):
        add(op, (case[0][:position] + (target[0] + str(rank),) + case[0][position + 1:], case[1]))
    seen = iter(range(len(case[0]) + len(case[1])))
    add(op, case, lambda tok: [] if next(seen) == position else dims(tok))  # unknown rank: NNAPI allows it
    seen = iter(range(len(case[0]) + len(case[1])))
    add(op, case, lambda tok: [0] * len(dims(tok)) if next(seen) == position else dims(tok))  # unknown sizes


# -- the C API: BAD_DATA at the call ------------------------------------------------------------------------------

DRIVER = r"""
#include <NeuralNetworks.h>
#include <stdio.h>

/* Each line of the file: operation, input count, output count, then per operand its type code, rank and
   dimensions. One model per line; prints addOperation's result. Then identify/setOperandValue checks. */
int main(int argc, char **argv)
{
    FILE *spec = argc == 2 ? fopen(argv[1], "r") : NULL;
    int op, n_in, n_out;
    if (!spec)
        return 2;
    while (fscanf(spec, "%d %d %d", &op, &n_in, &n_out) == 3) {
        ANeuralNetworksModel *model = NULL;
        uint32_t index[64];
        ANeuralNetworksModel_create(&model);
        for (int k = 0; k < n_in + n_out; k++) {
            int code, rank;
            uint32_t dims[8];
            if (fscanf(spec, "%d %d", &code, &rank) != 2)
                return 2;
            for (int r = 0; r < rank; r++)
                if (fscanf(spec, "%u", &dims[r]) != 1)
                    return 2;
            ANeuralNetworksOperandType type = {code, (uint32_t)rank, rank ? dims : NULL,
                                               code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0.5f : 0.0f, 0};
            if (ANeuralNetworksModel_addOperand(model, &type) != ANEURALNETWORKS_NO_ERROR)
                return 3;
            index[k] = (uint32_t)k;
        }
        printf("%d\n", ANeuralNetworksModel_addOperation(model, op, n_in, index, n_out, index + n_in));
        ANeuralNetworksModel_free(model);
    }
    {
        ANeuralNetworksModel *model = NULL;
        uint32_t two[1] = {2}, in = 0, out = 1;
        float value[2] = {1.0f, 2.0f};
        ANeuralNetworksOperandType f2 = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, two, 0.0f, 0};
        ANeuralNetworksModel_create(&model);
        ANeuralNetworksModel_addOperand(model, &f2);
        ANeuralNetworksModel_addOperand(model, &f2);
        printf("value_short %d\n", ANeuralNetworksModel_setOperandValue(model, 0, value, 4));
        printf("value_exact %d\n", ANeuralNetworksModel_setOperandValue(model, 0, value, 8));
        printf("identify_constant %d\n", ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &in, 1, &out));
        printf("identify_out_of_range %d\n", ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &out, 1, &two[0]));
        ANeuralNetworksModel_free(model);
    }
    return 0;
}
"""
C_SUBSET = (OP.ADD, OP.CONV_2D, OP.DEPTHWISE_CONV_2D, OP.CONCATENATION, OP.DEQUANTIZE, OP.HASHTABLE_LOOKUP,
            OP.LSH_PROJECTION, OP.RNN, OP.SOFTMAX, OP.PAD, OP.SQUEEZE, OP.STRIDED_SLICE, OP.SUB, OP.TRANSPOSE)


def test_the_c_api_returns_bad_data_at_add_operation_for_each_mutant_and_no_error_for_each_valid_list(tmp_path):
    lines, expected = [], []
    for op, case in CASES:
        if op not in C_SUBSET:
            continue
        mutants = [case] + [m for *_, m in type_mutants(case)] + [m for _, m in count_mutants(case)]
        for mutant in mutants:
            tokens = mutant[0] + mutant[1]
            operands = " ".join(f"{int(TYPES[t[0]])} {len(dims(t))} " + " ".join(map(str, dims(t))) for t in tokens)
            lines.append(f"{int(op)} {len(mutant[0])} {len(mutant[1])} {operands}")
            expected.append(0 if valid(op, mutant) else 4)  # NO_ERROR, BAD_DATA
    spec = tmp_path / "operations.txt"
    spec.write_text("\n".join(lines) + "\n")
    exe = compile_c(DRIVER, "nnapi_add_operation", nnapi_flags())
    # the library's embedded Python imports the first openvx_nn on its path: this checkout's
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([str(exe), str(spec)], capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    out = result.stdout.split("\n")
    got = [int(v) for v in out[:len(expected)]]
    assert got == expected
    assert expected.count(4) > 1000 and expected.count(0) > 50
    assert out[len(expected):len(expected) + 4] == ["value_short 4", "value_exact 0", "identify_constant 4",
                                                     "identify_out_of_range 4"]
    # each refusal is one log line naming the function and the operation
    assert re.search(r"libneuralnetworks: ANeuralNetworksModel_addOperation: operation 0 \(CONV_2D\): input \d+",
                     result.stderr)


def test_the_docs_table_of_signatures_is_the_tables():
    text = (ROOT / "docs" / "nnapi.md").read_text()
    start = text.index("<!-- signatures: generated from openvx_nn/nnapi/signatures.py")
    block = text[text.index("\n", start) + 1:text.index("<!-- end of signatures -->")]
    assert block == markdown_table()
    for op in VALID:  # every operation has its row
        assert f"\n| {OP(op).name} | " in block
