"""``Lending``: a graph's native runs lend their layers to the helpers only while that is measured to be faster."""
import time

import pytest

from openvx_nn.operations.nnapi import common
from openvx_nn.operations.nnapi.common import Lending


@pytest.fixture
def summons(monkeypatch):
    calls: list = []
    monkeypatch.setattr(common, "summon_helpers", lambda: calls.append(True))
    return calls


@pytest.mark.parametrize("faster", ["lending", "alone"])
def test_runs_take_the_way_measured_faster_and_now_and_then_try_the_other(faster, summons):
    log: list = []
    slow, fast = 0.004, 0.001

    def process() -> int:
        lent = bool(summons)  # a lending run summons the helpers just before the run
        summons.clear()
        log.append(lent)
        time.sleep((fast if faster == "lending" else slow) if lent else (slow if faster == "lending" else fast))
        return 0
    lending = Lending()
    for _ in range(2 * Lending.EXPLORE):
        assert lending.run(process) == 0
    assert log[:4] == [True, False, True, False]  # both ways first, each timed from its second run
    assert lending.lends == (faster == "lending")
    other = [k for k, lent in enumerate(log[4:], 5) if lent != (faster == "lending")]
    assert other and all(k % Lending.EXPLORE == 0 for k in other), log  # only the exploring runs differ


def test_a_run_that_raises_is_not_timed(summons):
    lending = Lending()

    def fails() -> int:
        raise RuntimeError("boom")
    for _ in range(4):
        with pytest.raises(RuntimeError):
            lending.run(fails)
    assert lending.lends is None
