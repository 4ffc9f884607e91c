"""Reshapes as views (``core/reshape_views.py``): a reshape's output seen in its input's bytes never changes an
output byte.

Random graphs: a permute of the input makes a virtual root; a reshape reads it whole or through a view (one
contiguous run of its bytes, or a strided box that is not), a second reshape reads the first's output (a chain),
other permutes write the arena between the reshapes and the last reader of their outputs (which would clobber the
root's bytes were its lifetime not carried to that reader), and the outputs are permutes into real tensors. Each
graph runs with the views and with them turned off (``OPENVX_NN_RESHAPE_VIEWS=0``), from C and from Python, a
few without the memory plan (every virtual tensor in storage of its own); every
output must equal a plain NumPy evaluation (OpenVX order, dim 0 fastest: a reshape is NumPy's in Fortran order).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from openvx_nn import vx
from openvx_nn.api.graph_builder import GraphBuilder
from openvx_nn.core import native_plan, reshape_views
from openvx_nn.core.graph import Graph


def _start_library() -> None:
    if native_plan.hooks is None:  # the C loop that runs native plans
        vx.vxGetStatus(vx.ffi.NULL)


def _factor(n: int, rank: int, rng) -> tuple[int, ...]:
    """``n`` as a product of ``rank`` random factors."""
    dims = [1] * rank
    for p in _primes(n):
        dims[int(rng.integers(rank))] *= p
    return tuple(dims)


def _primes(n: int) -> list[int]:
    found, p = [], 2
    while n > 1:
        while n % p == 0:
            found.append(p)
            n //= p
        p += 1
    return found


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(2, 5))
    dims = tuple(int(d) for d in rng.integers(1, 7, size=rank))
    axes = tuple(int(a) for a in rng.permutation(rank))
    permuted = tuple(dims[a] for a in axes)
    kind = str(rng.choice(["whole", "slowest", "inner"]))
    start, end = [0] * rank, list(permuted)
    if kind != "whole":  # a box cut along the slowest axis (one run) or an inner one (strided, unless 1 above)
        axis = rank - 1 if kind == "slowest" else int(rng.integers(0, rank - 1))
        start[axis] = int(rng.integers(0, permuted[axis]))
        end[axis] = int(rng.integers(start[axis] + 1, permuted[axis] + 1))
    box = tuple(slice(s, e) for s, e in zip(start, end))
    flat = np.arange(math.prod(permuted)).reshape(permuted, order="F")[box].ravel(order="F")
    count = flat.size
    return {"dims": dims, "axes": axes, "start": start, "end": end, "box": box,
            "first": _factor(count, int(rng.integers(1, 5)), rng), "second": _factor(count, int(rng.integers(1, 5)), rng),
            "x": rng.standard_normal(dims).astype(np.float32), "read_root_later": bool(rng.integers(2)),
            "one_run": bool(np.all(np.diff(flat) == 1)), "arena": seed % 4 != 3}  # some without the memory plan


def _expected(case: dict) -> dict[str, np.ndarray]:
    """Each output as the graph writes it: the value's transpose (all axes reversed)."""
    a = np.transpose(case["x"], case["axes"])
    r2 = np.reshape(np.reshape(a[case["box"]], case["first"], order="F"), case["second"], order="F")
    out = {"r2": r2.T, "b": np.transpose(case["x"], case["axes"][::-1]).T}
    if case["read_root_later"]:
        out["a"] = a.T
    return out


def _reversed(g: GraphBuilder, t, dims):
    out = g.real(tuple(dims))  # model order reversed: OpenVX dims reversed of ``dims``, the transpose's
    g.coreml("permute", (t, g.ints(list(reversed(range(len(dims))))), out))
    return out


def _run(case: dict, views: bool, native: bool, monkeypatch) -> tuple[dict[str, np.ndarray], int]:
    monkeypatch.setenv(reshape_views.ENV, "1" if views else "0")
    monkeypatch.setattr(native_plan, "ENABLED", native)
    monkeypatch.setattr(Graph, "memory_plan", case["arena"])
    g = GraphBuilder()
    try:
        dims = case["dims"]
        x = g.real(tuple(reversed(dims)))  # OpenVX dims ``dims``
        x.array[...] = case["x"]
        permuted = tuple(dims[a] for a in case["axes"])
        a = g.temp_dims(permuted)
        g.coreml("permute", (x, g.ints(list(case["axes"])), a))
        cut = a if case["start"] == [0] * len(dims) and list(case["end"]) == list(permuted) else g.view(
            a, case["start"], case["end"])
        r1 = g.temp_dims(case["first"])
        g.coreml("reshape", (cut, r1))
        b = g.temp_dims(tuple(dims[a] for a in case["axes"][::-1]))  # written while r1 is alive: the arena's test
        g.coreml("permute", (x, g.ints(list(case["axes"][::-1])), b))
        r2 = g.temp_dims(case["second"])
        g.coreml("reshape", (r1, r2))
        outs = {"b": _reversed(g, b, b.dims), "r2": _reversed(g, r2, case["second"])}
        if case["read_root_later"]:
            outs["a"] = _reversed(g, a, permuted)
        g.verify()
        for _ in range(2):  # the second: the native plan, where there is one
            assert g.graph.process() == 0
        viewed = sum(reshape_views.viewed(call.node) for call in g.graph.plan.calls)
        # a reshape of a strided box has no native entry (its copy runs from Python): no native plan then
        assert (g.graph.plan.native is not None) == (native and case["one_run"])
        return {k: t.array.copy() for k, t in outs.items()}, viewed
    finally:
        g.close()


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("seed", range(16))
def test_a_reshape_view_never_changes_an_output_byte(seed, native, monkeypatch):
    _start_library()
    case = _case(seed)
    want = _expected(case)
    with_views, viewed = _run(case, True, native, monkeypatch)
    copies, none = _run(case, False, native, monkeypatch)
    assert none == 0
    assert viewed == (2 if case["one_run"] else 1)  # the chain's second reshape always views the first's output
    for name, expected in want.items():
        assert with_views[name].tobytes() == copies[name].tobytes(), name
        np.testing.assert_array_equal(with_views[name], expected, err_msg=name)


def test_a_reshape_into_a_graph_output_keeps_its_copy(monkeypatch):
    monkeypatch.setenv(reshape_views.ENV, "1")
    _start_library()
    g = GraphBuilder()
    try:
        x = g.real((3, 4))
        x.array[...] = np.arange(12, dtype=np.float32).reshape(4, 3)
        a = g.temp_dims((3, 4))
        g.coreml("permute", (x, g.ints([1, 0]), a))
        y = g.real((2, 6))  # OpenVX dims (6, 2): an application's tensor has its own bytes
        g.coreml("reshape", (a, y))
        g.verify()
        assert g.graph.process() == 0
        assert not any(reshape_views.viewed(call.node) for call in g.graph.plan.calls)
        np.testing.assert_array_equal(y.array, np.reshape(np.arange(12, dtype=np.float32).reshape(4, 3).T, (6, 2),
                                                          order="F"))
    finally:
        g.close()
