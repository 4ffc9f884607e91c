"""API level 29's region and sampling operations are checked when they are added, as the others are
(``test_add_operation_validation_1_2``): the operand lists written here from the Android 10 ``NeuralNetworks.h``
are accepted, every mutant no valid list matches (each operand's type changed to each other type, TENSOR_QUANT16_ASYMM
among them, one operand more or fewer) is refused naming the operation and the position, and through the C API a
mutant returns BAD_DATA at ``ANeuralNetworksModel_addOperation``."""
from __future__ import annotations

import pytest
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_add_operation_validation import DRIVER, parse
from test_add_operation_validation_1_2 import TYPES as TYPES_1_2
from test_add_operation_validation_1_2 import assert_mutants_refused, c_api_codes
from test_add_operation_validation_1_2 import mutants as mutants_1_2

from openvx_nn import nnapi
from openvx_nn.nnapi.signatures_1_2_detection import SIGNATURES_1_2_DETECTION

OP = nnapi.OperationType
T = nnapi.OperandType
TYPES = {**TYPES_1_2, "a": T.TENSOR_QUANT16_ASYMM, "y": T.TENSOR_QUANT16_SYMM}
"""The 1.2 tokens, and ``a`` a TENSOR_QUANT16_ASYMM, ``y`` a TENSOR_QUANT16_SYMM (scale 0.125, zero point 0)."""
TENSOR_LETTERS = "fnqthay"
SCALE = {"q": 0.5, "a": 0.125, "y": 0.125}


def dims(token: str) -> list[int]:
    return [2] * int(token[1:]) if token[0] in TENSOR_LETTERS else []


ROI_ALIGN_TAIL = "n1 i i {r} i i b > {t}4"
ROI_POOLING_TAIL = "n1 i i {r} b > {t}4"
RATIOS = (("f", "f", ("s s",)), ("h", "h", ("e e", "e s", "s e", "s s")), ("q", "a", ("s s",)))
VALID: dict[int, list[str]] = {
    OP.ROI_ALIGN: [f"{t}4 {b}2 " + ROI_ALIGN_TAIL.format(r=r, t=t)
                   for t, b, rs in RATIOS for r in rs],
    OP.ROI_POOLING: [f"{t}4 {b}2 " + ROI_POOLING_TAIL.format(r=r, t=t)
                     for t, b, rs in RATIOS for r in rs],
    OP.AXIS_ALIGNED_BBOX_TRANSFORM: ["f2 f2 n1 f2 > f2", "h2 h2 n1 h2 > h2", "a2 q2 n1 a2 > a2"],
    OP.HEATMAP_MAX_KEYPOINT: ["f4 f2 b > f2 f3", "h4 h2 b > h2 h3", "q4 a2 b > q2 a3"],
    OP.RANDOM_MULTINOMIAL: ["f2 i n1 > n2", "h2 i n1 > n2"],
    OP.BOX_WITH_NMS_LIMIT: ["f2 f2 n1 s i i s s s > f1 f2 n1 n1", "q2 a2 n1 s i i s s s > q1 a2 n1 n1"]
    + [f"h2 h2 n1 {a} i i {b} {c} {d} > h1 h2 n1 n1" for a in "es" for b in "es" for c in "es" for d in "es"],
    OP.GENERATE_PROPOSALS: ["f4 f4 f2 f2 s s i i s s b > f1 f2 n1", "q4 q4 y2 y2 s s i i s s b > q1 a2 n1",
                            "q4 q4 y2 a2 s s i i s s b > q1 a2 n1"]
    + [f"h4 h4 h2 h2 {a} {b} i i {c} {d} b > h1 h2 n1" for a in "es" for b in "es" for c in "es" for d in "es"],
    OP.DETECTION_POSTPROCESSING: ["f3 f3 f2 s s s s b i i i s s b > f2 f3 n2 n1"]
    + [f"h3 h3 h2 {a} {b} {c} {d} b i i i e e b > h2 h3 n2 n1" for a in "es" for b in "es" for c in "es" for d in "es"],
}
"""The valid operand lists: float32, float16 (each ratio FLOAT16 or, as the header writes them, FLOAT32) and uint8
maps with TENSOR_QUANT16_ASYMM boxes."""


def valid(op: int, case) -> bool:
    return case in {parse(line) for line in VALID[op]}


def add(op: int, case) -> nnapi.Model:
    m = nnapi.Model()
    ks = [m.add_operand(TYPES[tok[0]], dims(tok), SCALE.get(tok[0], 0.0)) for tok in case[0] + case[1]]
    m.add_operation(op, ks[:len(case[0])], ks[len(case[0]):])
    return m


def mutants(case):
    """The API level 29 mutants over this file's types (the 16-bit quantized ones too)."""
    return mutants_1_2(case, TYPES, TENSOR_LETTERS)


CASES = [(op, parse(line)) for op, lines in VALID.items() for line in lines]


def test_the_cases_cover_every_operation_of_the_module_with_a_signature():
    assert set(VALID) == set(SIGNATURES_1_2_DETECTION)
    assert all(s.api == 29 for s in SIGNATURES_1_2_DETECTION.values())


@pytest.mark.parametrize("op, case", CASES, ids=[f"{OP(op).name}:{' '.join(c[0])}>{' '.join(c[1])}" for op, c in CASES])
def test_a_valid_list_is_accepted_and_every_mutant_no_valid_list_matches_is_refused_naming_the_position(op, case):
    assert_mutants_refused(op, case, valid, add, mutants)


def test_boxes_of_the_wrong_rank_are_refused():
    with pytest.raises(nnapi.NNAPIError, match=r"\(ROI_ALIGN\): input 1 \(rois\) has rank 3"):
        add(OP.ROI_ALIGN, parse("f4 f3 " + ROI_ALIGN_TAIL.format(r="s s", t="f")))


def test_the_c_api_returns_bad_data_for_the_mutants_and_no_error_for_the_valid_lists(tmp_path):
    quant16 = "code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0.5f : 0.0f"
    assert quant16 in DRIVER
    driver = DRIVER.replace(quant16, "code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0.5f : "
                                     "code == ANEURALNETWORKS_TENSOR_QUANT16_ASYMM || "
                                     "code == ANEURALNETWORKS_TENSOR_QUANT16_SYMM ? 0.125f : 0.0f")
    expected = c_api_codes(tmp_path, CASES, valid, TYPES, dims, mutants, driver, "nnapi_add_operation_detection")
    assert expected.count(4) > 300 and expected.count(0) >= len(CASES)
