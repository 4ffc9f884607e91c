"""``Lending``: a graph's native runs lend their layers to the helpers only while that is measured to be faster."""
import time

import pytest

from openvx_nn.kernels.engine import gang
from openvx_nn.operations.nnapi.common import Lending


def _process(lending_s: float, alone_s: float, log: list):
    def process() -> int:
        held = gang._mailbox[gang.HOLDS // 8] > 0  # helpers_held() holds the gang while the run lasts
        log.append(bool(held))
        time.sleep(lending_s if held else alone_s)
        return 0
    return process


@pytest.mark.parametrize("faster", ["lending", "alone"])
def test_runs_take_the_way_measured_faster_and_now_and_then_try_the_other(faster):
    log: list = []
    lending = Lending()
    slow, fast = 0.004, 0.001
    process = _process(fast if faster == "lending" else slow, slow if faster == "lending" else fast, log)
    for _ in range(2 * Lending.EXPLORE):
        assert lending.run(process) == 0
    assert log[:4] == [True, False, True, False]  # both ways first, each timed from its second run
    assert lending.lends == (faster == "lending")
    settled = log[4:]
    other = [k for k, held in enumerate(settled, 5) if held != (faster == "lending")]
    assert other and all(k % Lending.EXPLORE == 0 for k in other), log  # only the exploring runs differ
    assert gang._mailbox[gang.HOLDS // 8] == 0  # every hold released


def test_a_run_that_raises_releases_the_hold():
    lending = Lending()

    def fails() -> int:
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        lending.run(fails)
    assert gang._mailbox[gang.HOLDS // 8] == 0
