"""The convolutions', the layout-flag operations' and the normalizations' API level 29 signatures are checked when they are added
(``test_add_operation_validation_1_2``'s pattern): every list written here from the Android 10
``NeuralNetworks.h`` is accepted (NNAPI 1.0's lists too), every mutant no valid list matches (each operand's type
changed to each other type, one operand more or fewer) is refused naming the operation and a position, and through
the C API a mutant returns BAD_DATA at ``ANeuralNetworksModel_addOperation``."""
from __future__ import annotations

import pytest
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_add_operation_validation import parse
from test_add_operation_validation_1_2 import assert_mutants_refused, c_api_codes

from openvx_nn import nnapi

OP = nnapi.OperationType
T = nnapi.OperandType


def _bias(t: str) -> str:
    return "n1" if t == "q" else f"{t}1"


def _lists(head: str, bodies: list[str], types: str = "hfq", tails: tuple[str, ...] = ("", " b")) -> list[str]:
    """``head`` (T4 T4 B) then each body and tail, for each type T."""
    return [f"{head.replace('T', t).replace('B', _bias(t))} {body}{tail} > {t}4"
            for t in types for body in bodies for tail in tails]


CONV_TAILS = ("", " b", " b i i")
EXPLICIT, IMPLICIT = "i i i i i i", "i i i"
VALID: dict[int, list[str]] = {
    OP.CONV_2D: _lists("T4 T4 B", [f"{EXPLICIT} i", f"{IMPLICIT} i"], tails=CONV_TAILS),
    OP.DEPTHWISE_CONV_2D: _lists("T4 T4 B", [f"{EXPLICIT} i i", f"{IMPLICIT} i i"], tails=CONV_TAILS),
    OP.GROUPED_CONV_2D: _lists("T4 T4 B", [f"{EXPLICIT} i i b", f"{IMPLICIT} i i b"], tails=("",)),
    OP.TRANSPOSE_CONV_2D: _lists("T4 T4 B", [f"{EXPLICIT} i b", f"n1 {IMPLICIT} i b"], tails=("",)),
    **{op: [f"{t}4 {body}{tail} > {t}4" for t in types for body in (f"{EXPLICIT} i i i", f"{IMPLICIT} i i i")
            for tail in ("", " b")]
       for op, types in ((OP.AVERAGE_POOL_2D, "fq"), (OP.MAX_POOL_2D, "fq"), (OP.L2_POOL_2D, "f"))},
    OP.RESIZE_BILINEAR: [f"{t}4 {body}{tail} > {t}4" for t, s in (("h", "e"), ("f", "s"), ("q", "s"))
                         for body in ("i i", f"{s} {s}") for tail in ("", " b")],
    **{op: [f"{t}4 i{tail} > {t}4" for t in "fq" for tail in ("", " b")]
       for op in (OP.DEPTH_TO_SPACE, OP.SPACE_TO_DEPTH)},
    OP.BATCH_TO_SPACE_ND: [f"{t}4 n1{tail} > {t}4" for t in "fq" for tail in ("", " b")],
    OP.SPACE_TO_BATCH_ND: [f"{t}4 n1 n2{tail} > {t}4" for t in "fq" for tail in ("", " b")],
    OP.SOFTMAX: [f"{t}2 {b}{tail} > {t}2" for t, b in (("h", "e"), ("f", "s"), ("q", "s")) for tail in ("", " i")],
    OP.L2_NORMALIZATION: [f"{t}2{tail} > {t}2" for t in "hfq" for tail in ("", " i")],
    OP.LOCAL_RESPONSE_NORMALIZATION: [f"{t}4 i {b} {b} {b}{tail} > {t}4" for t, b in (("h", "e"), ("f", "s"))
                                      for tail in ("", " i")],
}
"""Every valid list of these operations (API levels 27 to 29)."""


def valid(op: int, case) -> bool:
    return case in {parse(line) for line in VALID[op]}


CASES = [(op, parse(line)) for op, lines in VALID.items() for line in lines]


@pytest.mark.parametrize("op, case", CASES, ids=[f"{OP(op).name}:{' '.join(c[0])}>{' '.join(c[1])}" for op, c in CASES])
def test_a_valid_list_is_accepted_and_every_mutant_no_valid_list_matches_is_refused_naming_the_position(op, case):
    assert_mutants_refused(op, case, valid)


def _per_channel_model(op: int, channel_dim: int, filter_shape: list[int], tail: list[tuple[int, object]]):
    m = nnapi.Model()
    x = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 4, 4, 2], scale=0.5, zero_point=3)
    f = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, filter_shape)
    m.set_operand_symm_per_channel_quant_params(f, [0.5] * filter_shape[channel_dim], channel_dim)
    b = m.add_operand(T.TENSOR_INT32, [filter_shape[channel_dim]])
    ks = []
    for kind, value in tail:
        ks.append(m.add_operand(kind))
        m.set_operand_value(ks[-1], value)
    out = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 4, 4, 2], scale=1.0)
    m.add_operation(op, [x, f, b, *ks], [out])
    return m


@pytest.mark.parametrize("op, dim, shape, tail", [
    (OP.CONV_2D, 0, [2, 1, 1, 2], [(T.INT32, 1)] * 4),
    (OP.DEPTHWISE_CONV_2D, 3, [1, 1, 1, 2], [(T.INT32, 1)] * 5 + [(T.BOOL, False)]),
    (OP.GROUPED_CONV_2D, 0, [2, 1, 1, 1], [(T.INT32, 1)] * 5 + [(T.BOOL, False)]),
    (OP.TRANSPOSE_CONV_2D, 0, [2, 1, 1, 2], [(T.INT32, 0)] * 4 + [(T.INT32, 1)] * 3 + [(T.BOOL, True)]),
], ids=["conv", "depthwise", "grouped", "transposed"])
def test_a_per_channel_filter_is_a_uint8_convolutions_filter(op, dim, shape, tail):
    _per_channel_model(op, dim, shape, tail)  # accepted at addOperation
    with pytest.raises(nnapi.NNAPIError, match=r"input 1 \(filter\) is TENSOR_QUANT8_SYMM_PER_CHANNEL; expected"):
        m = nnapi.Model()
        ks = [m.add_operand(T.TENSOR_FLOAT32, [2, 2, 2, 2])]
        f = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 2, 2, 2])
        m.set_operand_symm_per_channel_quant_params(f, [0.5, 0.5], 0)
        ks += [f, m.add_operand(T.TENSOR_FLOAT32, [2])]
        ks += [m.add_operand(T.INT32) for _ in tail]
        m.add_operation(op, ks, [m.add_operand(T.TENSOR_FLOAT32, [2, 2, 2, 2])])


def test_the_c_api_returns_bad_data_for_the_mutants_and_no_error_for_the_valid_lists(tmp_path):
    expected = c_api_codes(tmp_path, CASES, valid)
    assert expected.count(4) > 500 and expected.count(0) > 40
