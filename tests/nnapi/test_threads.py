"""One NNAPI compilation shared by threads, an Execution per call: every call gets its own input's result,
bit-identical to the same call made alone (docs/threads.md)."""
from __future__ import annotations

import numpy as np
import pytest
from thread_testing import in_threads

from openvx_nn import nnapi
from openvx_nn.nnapi.demo import build_model

CALLS = 400
F32 = nnapi.OperandType.TENSOR_FLOAT32


def _float_model(rng) -> nnapi.Model:
    """CONV_2D 3x3 SAME with RELU, then a 2x2 max pool: float32, 24x24x8 -> 12x12x16."""
    m = nnapi.Model()

    def scalar(v):
        k = m.add_operand(nnapi.OperandType.INT32)
        m.set_operand_value(k, v)
        return k
    x = m.add_operand(F32, dimensions=[1, 24, 24, 8])
    w = m.add_operand(F32, dimensions=[16, 3, 3, 8])
    m.set_operand_value(w, rng.standard_normal((16, 3, 3, 8)).astype(np.float32))
    b = m.add_operand(F32, dimensions=[16])
    m.set_operand_value(b, rng.standard_normal(16).astype(np.float32))
    c = m.add_operand(F32, dimensions=[1, 24, 24, 16])
    m.add_operation(nnapi.OperationType.CONV_2D, [x, w, b, scalar(1), scalar(1), scalar(1), scalar(1)], [c])
    y = m.add_operand(F32, dimensions=[1, 12, 12, 16])
    m.add_operation(nnapi.OperationType.MAX_POOL_2D, [c, scalar(2), scalar(2), scalar(2), scalar(2), scalar(2),
                                                      scalar(0)], [y])
    m.identify_inputs_and_outputs(inputs=[x], outputs=[y])
    m.finish()
    return m


def _compute(compilation, x, out_shape, out_dtype) -> np.ndarray:
    out = np.zeros(out_shape, out_dtype)
    execution = nnapi.Execution(compilation)
    execution.set_input(0, x)
    execution.set_output(0, out)
    execution.compute()
    return out


@pytest.mark.parametrize("kind", ["float32", "quant8"])
@pytest.mark.parametrize("count", [2, 8])
def test_threads_sharing_a_compilation_get_their_own_results(kind, count):
    rng = np.random.default_rng(count)
    if kind == "float32":
        model, in_shape, out_shape, dtype = _float_model(rng), (1, 24, 24, 8), (1, 12, 12, 16), np.float32
        inputs = [rng.standard_normal(in_shape).astype(np.float32) for _ in range(CALLS)]
    else:
        model, in_shape, out_shape, dtype = build_model(count), (1, 8, 8, 1), (1, 10), np.uint8
        inputs = [rng.integers(0, 256, in_shape, dtype=np.uint8) for _ in range(CALLS)]
    compilation = nnapi.Compilation(model)
    compilation.finish()
    try:
        alone = [_compute(compilation, x, out_shape, dtype) for x in inputs]
        got: list[np.ndarray | None] = [None] * CALLS

        def work(i: int) -> None:
            got[i] = _compute(compilation, inputs[i], out_shape, dtype)
        assert in_threads(count, CALLS, work) == []
        wrong = [i for i in range(CALLS) if not np.array_equal(got[i], alone[i])]
        assert wrong == [], f"{len(wrong)} of {CALLS} calls returned another call's result"
    finally:
        compilation.release()


def test_a_failure_message_belongs_to_the_thread_whose_request_failed():
    """A thread reads ``last_error`` after its request; another thread's request in between (a success, or a
    failure of its own) must not change what it reads."""
    import threading

    compilation = nnapi.Compilation(_float_model(np.random.default_rng(0)))
    compilation.finish()
    prepared = compilation.prepared
    failed, other_done = threading.Event(), threading.Event()
    seen: dict[str, str] = {}

    def fail():
        raise nnapi.NNAPIError("operation 3 (GATHER): index 9 is outside 0 .. 4")

    def first():
        assert prepared._answer(fail) != nnapi.ErrorStatus.NONE
        failed.set()
        other_done.wait(10)
        seen["first"] = prepared.last_error

    def second():
        failed.wait(10)
        assert prepared._answer(lambda: None) == nnapi.ErrorStatus.NONE
        seen["second"] = prepared.last_error
        other_done.set()
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"first": "operation 3 (GATHER): index 9 is outside 0 .. 4", "second": ""}
