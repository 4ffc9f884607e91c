"""Two recurrent layers run side by side (``engine/side_by_side.pair``): the forward and the reverse direction of a
bidirectional LSTM as one entry, against plain float64 loops written from the LSTM's definition
(``test_recurrence.reference``), over randomized shapes, with one thread and with two: each direction's values as
its entry gives them alone, bit for bit, and with two threads a helper runs one of them."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from test_recurrence import _cell, _close, reference

from openvx_nn.kernels.engine import gang, isa, side_by_side
from openvx_nn.kernels.frontend import recurrent_layer as rl
from openvx_nn.kernels.support import native

ACTS = [("sigmoid", 0, 0), ("tanh", 0, 0), ("tanh", 0, 0)]


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def _directions(rng, steps, batch, size, units, kind="lstm"):
    """A forward and a reverse cell over one input, writing the two halves of one output ``[T, B, 2U]``."""
    acts = ACTS if kind == "lstm" else ACTS[:2]
    cells = [_cell(rng, kind, size, units, activations=acts, pre_clip=50.0) for _ in range(2)]
    x = rng.standard_normal((steps, batch, size)).astype(np.float32)
    out = np.full((steps, batch, 2 * units), np.nan, np.float32)
    entries = [rl.bind(cell, x, out[:, :, k * units:(k + 1) * units], reverse=bool(k)) for k, cell in enumerate(cells)]
    return cells, x, out, entries


def _want(cells, x, units):
    batch = x.shape[1]
    zeros = np.zeros((batch, units))
    return np.concatenate([reference(cell, x, zeros, zeros, bool(k))[0] for k, cell in enumerate(cells)], axis=2)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("steps,batch,size,units", [(1, 1, 3, 4), (9, 2, 5, 7), (40, 1, 12, 16), (6, 3, 20, 33)])
def test_directions_side_by_side_match_the_reference_and_the_entries_alone(rng, monkeypatch, threads, steps, batch,
                                                                          size, units):
    if threads == 1:
        monkeypatch.setattr(isa, "threads", lambda: 1)  # the engine's thread count, read when an entry is bound
    elif isa.threads() < 2:
        pytest.skip("one thread here")
    cells, x, out, entries = _directions(rng, steps, batch, size, units)
    assert all(side_by_side.beside(e) for e in entries)
    for entry in entries:
        assert native.run(entry) == 0
    alone = out.copy()
    _close(alone, _want(cells, x, units))
    both = side_by_side.pair(*entries)
    assert gang.lends(both) == (threads == 2)  # a native plan summons the helpers for it
    for _ in range(3):
        out[...] = np.nan
        gang.summon_spare()
        with gang.held():
            assert native.run(both) == 0
        np.testing.assert_array_equal(out.view(np.uint32), alone.view(np.uint32))


@pytest.mark.skipif(isa.threads() < 2, reason="one thread: no helper to run a direction")
def test_a_helper_runs_one_direction(rng):
    """With a helper spinning in the gang, it takes the second entry while the caller runs the first (long enough
    directions that the helper arrives while the first still runs)."""
    cells, x, out, entries = _directions(rng, 300, 1, 32, 64)
    both = side_by_side.pair(*entries)
    joins = gang.native_joins()
    for _ in range(200):  # a loaded machine may run the woken helper late: until it joins once
        gang.summon_spare()
        with gang.held():
            assert native.run(both) == 0
        if gang.native_joins() > joins:
            break
    assert gang.native_joins() > joins
    _close(out, _want(cells, x, 64))


def test_only_marked_entries_pair(rng):
    entries = _directions(rng, 3, 1, 4, 5)[3]
    plain = native.Entry(entries[1].address, entries[1].block, tuple(k for k in entries[1].keep
                                                                       if k is not side_by_side.BESIDE))
    assert not side_by_side.beside(plain) and not side_by_side.beside(None)
    with pytest.raises(ValueError, match="BESIDE"):
        side_by_side.pair(entries[0], plain)


def test_a_failing_pair_names_both_nodes(rng, monkeypatch):
    """A pair's call that fails says which two nodes it ran (the log of a native failure names the partner too,
    through ``partner``)."""
    from types import SimpleNamespace

    from openvx_nn.core import side_by_side as pairing
    from openvx_nn.core.compiled import Call

    entries = _directions(rng, 3, 1, 4, 5)[3]
    nodes = [SimpleNamespace(describe=lambda name=name: f"node '{name}'", params=()) for name in ("forward", "reverse")]
    calls = [Call(node, None, (), entry) for node, entry in zip(nodes, entries)]
    monkeypatch.setattr(pairing, "independent", lambda first, second: True)
    paired = pairing.pair_calls(calls, "nothing", None)
    assert pairing.partner(paired[0]) is nodes[1] and pairing.partner(paired[1]) is None
    assert pairing.partner(calls[0]) is None
    monkeypatch.setattr(native, "run", lambda entry: 3)
    with pytest.raises(RuntimeError, match="node 'forward' and node 'reverse', run side by side, failed"):
        paired[0].run()
