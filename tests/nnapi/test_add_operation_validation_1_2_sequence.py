"""The sequence RNNs and LSTMs of API level 29 are checked when they are added (as
``test_add_operation_validation_1_2``'s operations): the operand lists written here from the Android 10
``NeuralNetworks.h`` are accepted in TENSOR_FLOAT32 and TENSOR_FLOAT16, every mutant no valid list matches (each
operand's type changed to each other type, one operand more or fewer) is refused naming the operation and the
position, and the C API returns BAD_DATA for it at ``ANeuralNetworksModel_addOperation``."""
from __future__ import annotations

import pytest
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_add_operation_validation import DRIVER, parse
from test_add_operation_validation_1_2 import TYPES, assert_c_api_codes, assert_mutants_refused, mutants, operation_line

from openvx_nn import nnapi
from openvx_nn.nnapi.signatures_1_2_sequence import SIGNATURES_1_2_SEQUENCE

OP = nnapi.OperationType
CELL = "T2 T2 T2 T2 T2 T2 T2 T2 T1 T1 T1 T1 T1 T1 T1 T2 T1"
"""An LSTM cell's weights, peepholes, biases and projection (inputs 1 to 17 of UNIDIRECTIONAL_SEQUENCE_LSTM)."""
NORMS = "T1 T1 T1 T1"


def _floats(line: str) -> list[str]:
    """The line in TENSOR_FLOAT16 (``h``, FLOAT16 scalars ``e``) and TENSOR_FLOAT32 (``f``, FLOAT32 ``s``)."""
    return [line.replace("T", t).replace("C", c) for t, c in (("h", "e"), ("f", "s"))]


BI_LSTM = f"T3 {CELL} {CELL} T2 T2 T2 T2 T3 {' '.join(['T2'] * 8)} i C C b b {NORMS} {NORMS}"
BI_RNN = "T3 T2 T2 T1 T2 T2 T2 T1 T2 T3 T2 T2 i b b"
VALID: dict[int, list[str]] = {
    OP.UNIDIRECTIONAL_SEQUENCE_RNN: _floats("T3 T2 T2 T1 T2 i i > T3"),
    OP.BIDIRECTIONAL_SEQUENCE_RNN: _floats(f"{BI_RNN} > T3 T3") + _floats(f"{BI_RNN} > T3"),
    OP.UNIDIRECTIONAL_SEQUENCE_LSTM: _floats(f"T3 {CELL} T2 T2 i C C b {NORMS} > T3"),
    OP.BIDIRECTIONAL_SEQUENCE_LSTM: _floats(f"{BI_LSTM} > T3 T3") + _floats(f"{BI_LSTM} > T3"),
}
CASES = [(op, parse(line)) for op, lines in VALID.items() for line in lines]
Q16_TYPES = {**TYPES, "w": nnapi.OperandType.TENSOR_QUANT16_SYMM}
"""With ``w``, a TENSOR_QUANT16_SYMM (scale 2^-11): QUANTIZED_16BIT_LSTM's cell state."""
Q16_LSTM = parse("q2 q2 q2 q2 q2 q2 q2 q2 q2 n1 n1 n1 n1 w2 q2 > w2 q2")


def q16_dims(token: str) -> list[int]:
    return [2] * int(token[1:]) if token[0] in "fnqthw" else []


def q16_add(case) -> nnapi.Model:
    m = nnapi.Model()
    scales = {"q": 1 / 128, "w": 2.0 ** -11}
    ks = [m.add_operand(Q16_TYPES[tok[0]], q16_dims(tok), scales.get(tok[0], 0.0), 128 if tok[0] == "q" else 0)
          for tok in case[0] + case[1]]
    m.add_operation(OP.QUANTIZED_16BIT_LSTM, ks[:len(case[0])], ks[len(case[0]):])
    return m


def valid(op: int, case) -> bool:
    return case in {parse(line) for line in VALID[op]}


def test_the_cases_cover_every_recurrent_operation_with_a_signature():
    assert set(VALID) | {OP.QUANTIZED_16BIT_LSTM} == set(SIGNATURES_1_2_SEQUENCE)
    assert all(s.api == 29 for s in SIGNATURES_1_2_SEQUENCE.values())


@pytest.mark.parametrize("op, case", CASES, ids=[f"{OP(op).name}:{c[0][0]}>{len(c[1])}" for op, c in CASES])
def test_a_valid_list_is_accepted_and_every_mutant_no_valid_list_matches_is_refused_naming_the_position(op, case):
    assert_mutants_refused(op, case, valid)


def q16_mutants(case):
    """(where, position, mutant) as ``mutants``, over the types with TENSOR_QUANT16_SYMM."""
    for side in (0, 1):
        for p, token in enumerate(case[side]):
            for letter in Q16_TYPES:
                if letter != token[0]:
                    changed = list(case[side])
                    changed[p] = letter + (token[1:] if letter in "fnqthw" else "")
                    yield ("input", "output")[side], p, ((tuple(changed), case[1]) if side == 0 else
                                                         (case[0], tuple(changed)))
    yield "count", None, (case[0][:-1], case[1])
    yield "count", None, (case[0], case[1][:1])


def test_quantized_16bit_lstm_takes_its_list_and_refuses_every_type_and_count_mutant_naming_the_position():
    q16_add(Q16_LSTM)
    mutated = list(q16_mutants(Q16_LSTM))
    for where, p, mutant in mutated:
        place = rf" {where} {p}\b" if p is not None else ""
        with pytest.raises(nnapi.NNAPIError, match=rf"QUANTIZED_16BIT_LSTM\):{place}"):
            q16_add(mutant)
    assert len(mutated) > 100


def test_the_c_api_returns_bad_data_for_the_mutants_and_no_error_for_the_valid_lists(tmp_path):
    lines, expected = [], []
    q16 = [(OP.QUANTIZED_16BIT_LSTM, m) for m in [Q16_LSTM] + [m for *_, m in q16_mutants(Q16_LSTM)]]
    for op, mutant in [(op, m) for op, case in CASES for m in [case] + [m for *_, m in mutants(case) if m[1]]] + q16:
        lines.append(operation_line(op, mutant, Q16_TYPES, q16_dims))
        ok = mutant == Q16_LSTM if op == OP.QUANTIZED_16BIT_LSTM else valid(op, mutant)
        expected.append(0 if ok else 4)  # NO_ERROR, BAD_DATA
    # the driver gives TENSOR_QUANT8_ASYMM operands a scale; TENSOR_QUANT16_SYMM needs one too
    driver = DRIVER.replace("code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0.5f",
                            "(code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || code == ANEURALNETWORKS_TENSOR_QUANT16_SYMM)"
                            " ? 0.5f")
    assert driver != DRIVER
    assert_c_api_codes(tmp_path, lines, expected, driver, "nnapi_add_operation_q16")
    assert expected.count(4) > 1000 and expected.count(0) >= len(CASES)
