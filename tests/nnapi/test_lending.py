"""``Lending``: a graph's native runs lend their layers to the helpers only while that is measured to be faster."""
import pytest

from openvx_nn.operations.nnapi import common
from openvx_nn.operations.nnapi.common import Lending


class _Clock:
    """``Lending``'s clock here: a simulated run moves it on by the run's time. Real sleeps of a millisecond
    overshoot, on a loaded machine, by more than the differences the tests time (a CI run failed so)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def summons(monkeypatch):
    calls: list = []
    monkeypatch.setattr(common, "summon_helpers", lambda: calls.append(True))
    return calls


@pytest.fixture
def clock(monkeypatch) -> _Clock:
    simulated = _Clock()
    monkeypatch.setattr(common, "time", simulated)
    return simulated


def _graph(summons: list, clock: _Clock, seconds) -> tuple:
    """(a run of a graph that takes ``seconds(lent, log)`` on ``clock``, the log of its runs' ways: True for
    lending, told by the summons just before the run)."""
    log: list = []

    def process() -> int:
        lent = bool(summons)
        summons.clear()
        clock.now += seconds(lent, log)
        log.append(lent)
        return 0
    return process, log


@pytest.mark.parametrize("faster", ["lending", "alone"])
def test_runs_take_the_way_measured_faster_and_now_and_then_try_the_other(faster, summons, clock):
    process, log = _graph(summons, clock, lambda lent, _: 0.001 if lent == (faster == "lending") else 0.004)
    lending = Lending()
    for _ in range(2 * Lending.EXPLORE):
        assert lending.run(process) == 0
    first = 2 * Lending.SAMPLES + 2  # turns of two runs each way until SAMPLES pairs are timed (runs 4, 6, ..., 12)
    assert log[:first] == [True, True, False, False] * (first // 4)
    assert lending.lends == (faster == "lending")
    other = [k for k, lent in enumerate(log[first:], first + 1) if lent != (faster == "lending")]
    assert other and all(k % Lending.EXPLORE in (0, 1) for k in other), log  # only the turns of trial differ


def test_a_run_that_raises_is_not_timed(summons):
    lending = Lending()

    def fails() -> int:
        raise RuntimeError("boom")
    for _ in range(4):
        with pytest.raises(RuntimeError):
            lending.run(fails)
    assert lending.lends is None


def test_a_machine_slowing_down_does_not_hide_the_faster_way(summons, clock):
    # Lending takes 60 % of the time alone takes at the same moment, but the machine slows down threefold over the
    # runs: times of the rarely tried way, taken long ago, would look faster than today's; adjacent pairs do not.
    process, log = _graph(summons, clock, lambda lent, log: 0.001 * (1 + 2 * (len(log) + 1) / (4 * Lending.EXPLORE))
                          * (0.6 if lent else 1.0))
    lending = Lending()
    for _ in range(4 * Lending.EXPLORE):
        lending.run(process)
        assert lending.lends is not False, log
    assert lending.lends is True
    alone = [k for k, lent in enumerate(log, 1) if not lent and k > 2 * Lending.SAMPLES + 2]
    assert all(k % Lending.EXPLORE in (0, 1) for k in alone), log  # lending all along but for the trials


def test_the_run_before_a_trial_of_lending_summons_the_helpers(summons, clock):
    process, ways = _graph(summons, clock, lambda lent, _: 0.0005 if lent else 0.0001)  # alone is faster
    lending = Lending()
    for _ in range(2 * Lending.EXPLORE):
        lending.run(process)
        if not ways[-1]:  # after a run alone: the helpers are summoned if and only if the next run lends
            assert bool(summons) == lending._lend(lending._runs + 1), ways
    assert lending.lends is False
    first = 2 * Lending.SAMPLES + 2
    assert ways[Lending.EXPLORE - 1] and ways[Lending.EXPLORE] and not any(ways[first:Lending.EXPLORE - 1]), ways
    # runs 16 and 17 try lending; 13-15 do not


def test_a_trial_of_lending_is_timed_on_its_second_run(summons, clock):
    # The first lending run after runs alone wakes the helpers and is slow; lending is faster once they are awake.
    # Timing trials on their first run kept a graph running alone at half speed.
    process, log = _graph(summons, clock, lambda lent, log: (0.005 if not log or not log[-1] else 0.0006) if lent else 0.001)
    lending = Lending()
    for _ in range(4 * Lending.EXPLORE):
        lending.run(process)
    assert lending.lends is True, log
    assert sum(log[-Lending.EXPLORE:]) >= Lending.EXPLORE - 2, log


def test_lending_runs_stalled_now_and_then_do_not_turn_the_graph_to_running_alone(summons, clock):
    # A helper preempted for a time slice stalls a lending run fivefold, here every third lending run: pairs
    # timed on one run each saw lending slower in a third of them.
    process, log = _graph(summons, clock, lambda lent, log: (0.005 if (sum(log) + 1) % 3 == 0 else 0.0006) if lent else 0.001)
    lending = Lending()
    for _ in range(6 * Lending.EXPLORE):
        lending.run(process)
    assert lending.lends is True, log
    assert sum(log[-4 * Lending.EXPLORE:]) >= 4 * Lending.EXPLORE - 8, log
