"""One loaded CoreML model shared by threads: every ``predict`` returns its own input's result, bit-identical
to the same call made alone (docs/threads.md). Before calls took turns, two threads read each other's outputs."""
from __future__ import annotations

import numpy as np
import pytest
from thread_testing import in_threads

from .harness import builder, load

CALLS = 400


def _cnn(rng):
    """A plain CNN (convolution, ReLU, pooling, a classifier) whose run is long enough for calls to overlap."""
    b = builder({"x": (8, 24, 24)}, ["y"], output_shapes={"y": (10,)})
    b.add_convolution("conv", 8, 16, 3, 3, 1, 1, "same", 1, rng.standard_normal((3, 3, 8, 16)).astype(np.float32),
                      rng.standard_normal(16), True, input_name="x", output_name="c")
    b.add_activation("relu", "RELU", "c", "r")
    b.add_pooling("pool", 2, 2, 2, 2, "MAX", "VALID", "r", "p")
    b.add_inner_product("fc", rng.standard_normal((10, 16 * 12 * 12)).astype(np.float32), rng.standard_normal(10),
                        16 * 12 * 12, 10, True, "p", "y")
    return b


@pytest.mark.parametrize("count", [2, 8])
def test_threads_sharing_a_model_get_their_own_results(tmp_path, rng, count):
    model = load(tmp_path, _cnn(rng))
    try:
        inputs = [rng.standard_normal((8, 24, 24)).astype(np.float32) for _ in range(CALLS)]
        alone = [model.predict({"x": x})["y"] for x in inputs]
        got: list[np.ndarray | None] = [None] * CALLS

        def work(i: int) -> None:
            got[i] = model.predict({"x": inputs[i]})["y"]
        assert in_threads(count, CALLS, work) == []
        wrong = [i for i in range(CALLS) if not np.array_equal(got[i], alone[i])]
        assert wrong == [], f"{len(wrong)} of {CALLS} calls returned another call's result"
    finally:
        model.close()
