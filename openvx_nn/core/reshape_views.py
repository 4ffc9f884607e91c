"""A rewrite at verify: a reshape's output as a view of its input's bytes, with no copy per run.

A reshape (``coreml.reshape``) copies its input into its output in the same linear order (OpenVX's packed,
Fortran order). When its output is a virtual root that the reshape alone writes and no application sees, and its
input is a virtual tensor whose elements are one contiguous run of its root's storage (the whole root, or a view
that differs from it only along its slowest axis of more than one element), the output can be that run seen in
the output's shape: the reshape's call does nothing, and its readers read the producer's bytes. A converted
Transformer runs 36 reshapes a pass (heads split and merged, the layer norm's rank-4 round trips), each a copy.

The memory plan keeps the input's root alive until the last reader of the output (:attr:`Views.reads`) and gives
the output no storage of its own (:attr:`Views.outputs`); :func:`place` gives it the view once the roots are
placed. A reshape of a reshape's output views the first one's root. The bytes every reader sees are those the
copy would have made: nothing writes the input's bytes after the reshape reads them (the plan's order puts
every overlapping write before the reads), and only the reshape writes the output.

``OPENVX_NN_RESHAPE_VIEWS=0`` turns this pass alone off (read at each verify), to measure it; ``OPENVX_NN_REWRITES=0``
turns it off with the others.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import rewrites
from .enums import Type
from .regions import Access, region
from .tensor import storage_moved

KERNELS = frozenset({"org.openvx_nn.coreml.reshape"})
"""The kernels whose output is their input's elements in the same linear order (parameters: input, output)."""
VIEWED = "reshape_view"
"""``node.state`` key: the node's output is a view of its input's bytes; its call does nothing."""
ENV = "OPENVX_NN_RESHAPE_VIEWS"

_TENSOR = int(Type.VX_TYPE_TENSOR)


class Views(NamedTuple):
    """The reshapes whose outputs view their inputs, and what the memory plan must know of them."""

    pairs: tuple[tuple[object, object, object], ...] = ()
    """(node, input, output) in execution order."""
    outputs: frozenset[int] = frozenset()
    """ids of the outputs: they take no storage of their own."""
    reads: Mapping[int, list[Access]] = MappingProxyType({})
    """id(root whose storage an output views) -> the reads of those outputs: the root lives until the last."""


NONE = Views()


def enabled() -> bool:
    return rewrites.enabled() and os.environ.get(ENV, "").strip() != "0"


def viewed(node) -> bool:
    """Whether ``node``'s output is a view of its input (:func:`place` made it): its call does nothing."""
    return bool(node.state.get(VIEWED))


def _one_run(box, dims) -> bool:
    """Whether the box ``box`` of a root of ``dims`` is one contiguous run of its Fortran-order storage: whole
    along every axis below the first one it cuts, one element along every axis above."""
    if box is None:
        return True
    cut = next((k for k, ((s, e), d) in enumerate(zip(box, dims)) if (s, e) != (0, d)), len(dims))
    return all(e - s == 1 for s, e in box[cut + 1:])


def _plain(root, uses: dict, shown: set[int]) -> bool:
    """A virtual root tensor no application sees, mapped by none, touched by no bidirectional parameter."""
    u = uses.get(id(root))
    return (root.vx_type == _TENSOR and root.virtual and root.parent is None and id(root) not in shown
            and not root.pins and u is not None and not u.others)


def find(order: list, uses: dict, parameters: Iterable[tuple[object, int]]) -> Views:
    """The reshapes of ``order`` (execution order) whose outputs can view their inputs; ``uses`` the verifier's
    accesses by root (``plan.Uses``), ``parameters`` the graph parameters (their tensors keep their own bytes)."""
    if not enabled():
        return NONE
    shown = {id(region(node.params[i])[0]) for node, i in parameters if node.params[i] is not None}
    owner: dict[int, object] = {}  # id(output) -> the root whose storage it views
    pairs, reads = [], {}
    for node in order:
        if node.description.name not in KERNELS or node.state.get(rewrites.CONVERT) or node.state.get(
                rewrites.LAYOUT):
            continue
        x, y = node.params[0], node.params[1]
        if x is None or y is None or x.vx_type != _TENSOR or y.vx_type != _TENSOR:
            continue
        root, box = region(x)
        if not (_plain(root, uses, shown) and _plain(y, uses, shown) and _one_run(box, root.dims)):
            continue
        writes = uses[id(y)].writes
        if len(writes) != 1 or writes[0].box is not None or (y.data_type, y.fpp) != (x.data_type, x.fpp):
            continue
        storage = owner.get(id(root), root)
        owner[id(y)] = storage
        pairs.append((node, x, y))
        reads.setdefault(id(storage), []).extend(uses[id(y)].reads)
    return Views(tuple(pairs), frozenset(owner), reads) if pairs else NONE


def place(views: Views) -> None:
    """Give each output its input's bytes in its own shape (after the memory plan placed the roots) and mark its
    node; an output whose input's bytes turn out not to be one run keeps storage of its own and its copy."""
    moved = False
    for node, x, y in views.pairs:
        source = x.array
        try:
            seen = np.reshape(source, tuple(y.dims), order="F", copy=False)
        except ValueError:
            seen = None
        if seen is None or not seen.flags.f_contiguous or not np.shares_memory(seen, source):
            y.place(None, announce=False)  # no alias: its own storage, and the reshape copies
            moved = True
            continue
        node.state[VIEWED] = True
        try:
            current = y.array
        except Exception:  # noqa: BLE001 - no storage yet
            current = None
        if (current is None or current.__array_interface__["data"][0] != seen.__array_interface__["data"][0]
                or current.strides != seen.strides or current.shape != seen.shape):
            y.place(seen, announce=False)
            moved = True
    if moved:
        storage_moved()
