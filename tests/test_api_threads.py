"""One Pythonic graph shared by threads: ``Graph.run`` writes the inputs, processes and reads the outputs as one
turn, so every call returns its own inputs' result, bit-identical to the same call made alone
(docs/threads.md); arguments that are not tensors are refused by name."""
from __future__ import annotations

import numpy as np
import pytest
from thread_testing import in_threads

from openvx_nn.api import Context

CALLS = 400


def _graph(ctx, rng):
    """A Q7.8 convolution, ReLU and max pool: long enough a run for calls to overlap."""
    x = ctx.tensor(shape=(20, 20, 8, 1), dtype=np.int16, fixed_point_position=8)
    w = ctx.tensor(rng.integers(-64, 64, (3, 3, 8, 8)).astype(np.int16), fixed_point_position=8)
    y = ctx.tensor(shape=(9, 9, 8, 1), dtype=np.int16, fixed_point_position=8)
    g = ctx.graph()
    g.max_pool(g.relu(g.convolution(x, w)), out=y, size=(2, 2))
    g.verify()
    return g, x, y


@pytest.mark.parametrize("count", [2, 8])
def test_threads_running_one_graph_get_their_own_results(count):
    rng = np.random.default_rng(count)
    with Context() as ctx:
        g, x, y = _graph(ctx, rng)
        inputs = [rng.integers(-512, 512, x.shape).astype(np.int16) for _ in range(CALLS)]
        alone = [g.run({x: a}, [y])[0] for a in inputs]
        assert len({a.tobytes() for a in alone}) > CALLS // 2  # the inputs do change the result
        got: list[np.ndarray | None] = [None] * CALLS

        def work(i: int) -> None:
            got[i] = g.run({x: inputs[i]}, [y])[0]
        assert in_threads(count, CALLS, work) == []
        wrong = [i for i in range(CALLS) if not np.array_equal(got[i], alone[i])]
        assert wrong == [], f"{len(wrong)} of {CALLS} runs returned another run's result"
        g.close()


def test_run_names_a_bad_argument():
    with Context() as ctx:
        g, x, y = _graph(ctx, np.random.default_rng(0))
        with pytest.raises(TypeError, match="inputs must map"):
            g.run([x], [y])
        with pytest.raises(TypeError, match="inputs and outputs must be a Tensor"):
            g.run({x: np.zeros(x.shape, np.int16)}, [np.zeros(3)])
        g.close()
