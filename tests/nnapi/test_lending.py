"""``Lending``: a graph's native runs lend their layers to the helpers only while that is measured to be faster."""
import itertools

import pytest

from openvx_nn.kernels.engine import gang
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


def _lent(summons: list) -> bool:
    """Whether the run about to start lends: helpers were summoned and the gang is open (helpers summoned to spin
    beside a run alone, in a closed gang, lend nothing)."""
    return bool(summons) and gang._mailbox[gang.CLOSED // 8] <= 0


def _graph(summons: list, clock: _Clock, seconds) -> tuple:
    """(a run of a graph that takes ``seconds(lent, log)`` on ``clock``, the log of its runs' ways: True for
    lending, told by the summons just before the run)."""
    log: list = []

    def process() -> int:
        lent = _lent(summons)
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


@pytest.mark.parametrize(("slower", "lends"), [(1.05, True), (1.08, True), (1.15, False), (2.5, False)])
def test_lending_goes_on_unless_clearly_slower_than_running_alone(slower, lends, summons, clock):
    # pairs near 1 are the noise of a shared machine; a helper that stalls the layers is far slower
    process, _ = _graph(summons, clock, lambda lent, _: 0.001 * (slower if lent else 1.0))
    lending = Lending()
    for _ in range(2 * Lending.EXPLORE):
        lending.run(process)
    assert lending.lends is lends


@pytest.mark.parametrize(("stalled", "lends"), [((2, 10), True), ((6, 10), False)])
def test_three_stalled_pairs_in_five_do_not_turn_the_graph_alone_four_do(stalled, lends, summons, clock):
    # The first turns time five pairs: lending runs 2, 6, 6, 10, 10 against alone runs 4, 4, 8, 8, 12. A lending run
    # with no help (1.5 ms against 0.6 lending, 1.0 alone) at runs 2 and 10 makes three pairs of five say lending is
    # slower: now and then on a shared machine, not a reason to run alone (a median had decided so). At 6 and 10,
    # four pairs: alone.
    process, _ = _graph(summons, clock, lambda lent, log: (0.0015 if len(log) + 1 in stalled else 0.0006) if lent
                        else 0.001)
    lending = Lending()
    for _ in range(2 * Lending.SAMPLES + 2):
        lending.run(process)
    assert len(lending._ratios) == Lending.SAMPLES
    assert lending.lends is lends


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


def test_the_runs_before_a_trial_of_lending_summon_the_helpers(summons, clock):
    process, ways = _graph(summons, clock, lambda lent, _: 0.0005 if lent else 0.0001)  # alone is faster
    lending = Lending()
    first = 2 * Lending.SAMPLES + 2
    for k in range(1, 2 * Lending.EXPLORE + 1):
        lending.run(process)
        if not ways[-1]:  # after a run alone: the helpers are summoned if and only if a run soon lends
            soon = 1 if k <= first else Lending.WARM + 1  # the next run; decided alone, the WARM runs before too
            assert bool(summons) == any(lending._lend(k + j) for j in range(1, soon + 1)), (k, ways)
    assert lending.lends is False
    assert ways[Lending.EXPLORE - 1] and ways[Lending.EXPLORE] and not any(ways[first:Lending.EXPLORE - 1]), ways
    # runs 16 and 17 try lending; 13-15 do not (14 and 15 run alone with the helpers spinning beside them)


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


def test_a_run_after_a_pause_is_not_timed(summons, clock):
    # The application pauses 10 ms before some runs, among them the runs that would time lending (the second of
    # the first lending turns, and the second lending run after each trial alone): the helpers have left, and a
    # lending run after a pause takes ten times its steady time. In steady runs lending is faster.
    def paused(k: int) -> bool:
        return (k < 12 and k % 4 == 2) or k % Lending.EXPLORE == 3

    process, log = _graph(summons, clock, lambda lent, log: (0.006 if paused(len(log) + 1) else 0.0006) if lent
                          else 0.001)
    lending = Lending()
    for k in range(1, 8 * Lending.EXPLORE + 1):
        if paused(k):
            clock.now += 0.010
        lending.run(process)
    assert lending.lends is True, log
    assert sum(log[-4 * Lending.EXPLORE:]) >= 4 * Lending.EXPLORE - 8, log


def test_runs_always_after_a_pause_are_timed(summons, clock):
    # An application that runs the graph now and then (every 30 ms): every run comes after a pause, both ways alike.
    process, log = _graph(summons, clock, lambda lent, _: 0.001 if lent else 0.004)
    lending = Lending()
    for _ in range(2 * Lending.EXPLORE):
        clock.now += 0.030
        lending.run(process)
    assert lending.lends is True, log


def test_runs_after_pauses_out_of_step_with_the_turns_are_timed_in_the_end(summons, clock):
    # A benchmark alternating call by call with another runtime: our runs come two back to back, the first after
    # the other's calls, the pairs out of step with Lending's turns of two, so the pause rule alone times nothing.
    process, log = _graph(summons, clock, lambda lent, _: 0.002 if lent else 0.004)
    lending = Lending()
    lending.run(process)  # a first call (the benchmark's warm-up), then pairs
    for _ in range(4 * Lending.EXPLORE):
        clock.now += 0.006  # the other runtime's two calls
        lending.run(process)
        lending.run(process)
    assert lending.lends is True, log
    assert sum(log[-Lending.EXPLORE:]) >= Lending.EXPLORE - 2  # lending but for the trials


def test_a_trial_of_lending_from_running_alone_is_warmed(summons, clock):
    # The machine is busy for the first turns (lending 4 ms against 1 ms alone): the graph is decided for running
    # alone. Then it is idle, and lending takes 0.6 ms, but a helper whose core sat idle for three runs or more
    # stalls the next two lending runs (4 ms) until it has been held spinning through two runs. Trials begun cold
    # would keep the graph alone; warmed, they bring it back to lending. The runs alone that warm the helpers get
    # no help.
    state = {"warmth": 0, "idle_runs": 0}
    ways: list = []

    def process() -> int:
        lent = _lent(summons)
        spun = gang._mailbox[gang.HOLDS // 8] > 0  # helpers held in the gang through this run (lending, or beside it)
        busy = len(ways) < 2 * Lending.SAMPLES + 2
        clock.now += (0.004 if busy or state["warmth"] < 2 else 0.0006) if lent else 0.001
        state["idle_runs"] = 0 if spun else state["idle_runs"] + 1
        state["warmth"] = min(2, state["warmth"] + 1) if spun else (0 if state["idle_runs"] >= 3 else state["warmth"])
        ways.append(lent)
        summons.clear()
        return 0
    lending = Lending()
    decisions = []
    for _ in range(8 * Lending.EXPLORE):
        lending.run(process)
        decisions.append(lending.lends)
    assert decisions[2 * Lending.SAMPLES + 1] is False, ways  # the busy first turns decided for running alone
    assert lending.lends is True, ways
    assert sum(ways[-4 * Lending.EXPLORE:]) >= 4 * Lending.EXPLORE - 8, ways


def _trials(log: list, lends: bool) -> list[int]:
    """The first run (from 1) of each turn of the other way after the first turns."""
    first = 2 * Lending.SAMPLES + 2
    other = [k for k, lent in enumerate(log, 1) if k > first and lent != lends]
    return [k for k in other if k - 1 not in other]


@pytest.mark.parametrize("faster", ["lending", "alone"])
def test_trials_that_clearly_confirm_the_way_come_ever_farther_apart(faster, summons, clock):
    # Lending at half the time alone takes (or twice it): each trial doubles the distance to the next, up to
    # EXPLORE_MOST runs; two runs the slower way every 16 had cost a large model a tenth of its time.
    lends = faster == "lending"
    process, log = _graph(summons, clock, lambda lent, _: 0.001 if lent == lends else 0.002)
    lending = Lending()
    for _ in range(1200):
        lending.run(process)
    assert lending.lends is lends
    starts = _trials(log, lends)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert starts[0] == Lending.EXPLORE, starts
    assert gaps[:4] == [2 * Lending.EXPLORE, 4 * Lending.EXPLORE, 8 * Lending.EXPLORE, Lending.EXPLORE_MOST], starts
    assert set(gaps[4:]) == {Lending.EXPLORE_MOST}, starts
    assert all(log[k - 1] != lends and log[k] != lends for k in starts), log  # turns of two runs


def test_trials_that_are_not_clear_stay_every_explore_runs(summons, clock):
    # Lending at 0.9 of the time alone: faster, but within what a shared machine's noise moves.
    process, log = _graph(summons, clock, lambda lent, _: 0.0009 if lent else 0.001)
    lending = Lending()
    for _ in range(8 * Lending.EXPLORE):
        lending.run(process)
    assert lending.lends is True
    starts = _trials(log, True)
    assert {b - a for a, b in itertools.pairwise(starts)} == {Lending.EXPLORE}, starts


def test_long_runs_are_tried_the_other_way_at_least_every_explore_seconds(summons, clock):
    # Runs of 20 ms lending (40 alone): the trials stop drawing apart at a second's worth of runs (50, give or
    # take the simulated clock's rounding).
    process, log = _graph(summons, clock, lambda lent, _: 0.02 if lent else 0.04)
    lending = Lending()
    for _ in range(400):
        lending.run(process)
    starts = _trials(log, True)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[0] == 2 * Lending.EXPLORE and len(gaps) >= 5, starts
    assert all(49 <= gap <= 50 for gap in gaps[1:]), starts


def test_a_load_that_comes_after_the_trials_drew_apart_turns_the_graph_alone_within_about_a_second(summons, clock):
    # Idle at first (lending 0.5 ms against 1 ms alone): the trials draw apart. Then another program takes a core
    # and lending stalls (2.5 ms): the next trial is at most EXPLORE_MOST runs (here under a second) away, and the
    # trials are EXPLORE runs apart again until four pairs in five say alone.
    loaded_from = 700
    process, log = _graph(summons, clock, lambda lent, log: (0.0025 if len(log) >= loaded_from else 0.0005) if lent
                          else 0.001)
    lending = Lending()
    for _ in range(loaded_from):
        lending.run(process)
    assert lending.lends is True
    began = clock.now
    runs = 0
    while lending.lends is not False:
        lending.run(process)
        runs += 1
        assert runs <= Lending.EXPLORE_MOST + 4 * Lending.EXPLORE, log[loaded_from:]
    assert clock.now - began < 2 * Lending.EXPLORE_SECONDS
