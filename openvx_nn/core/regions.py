"""The memory a node's parameter covers, and which accesses of a graph overlap, in near-linear time.

Data objects are compared by the memory they cover, not by identity: a view
and its parent (or two views of one tensor, or an image cut from a tensor)
overlap when their boxes in the root tensor intersect.  Accesses are grouped
by root first, so objects of different roots are never compared, and the
accesses of one root are matched by a sweep along one axis (sorted by start,
a heap of the open boxes by end), so ``k`` disjoint views of one tensor (a
split or a concatenation) cost ``k log k``, not ``k**2``.
"""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from .enums import Type
from .reference import Reference

Box = tuple[tuple[int, int], ...] | None  # [start, end) per dim in root coordinates; None: the whole object
Region = tuple[object, Box]


def region(obj: Reference) -> Region:
    """(root object, box in root coordinates or None for the whole object)."""
    tensor = getattr(obj, "tensor", None) if obj.vx_type == Type.VX_TYPE_IMAGE else None
    if tensor is not None:  # an image cut from a tensor (vxCreateImageObjectArrayFromTensor)
        root, box = region(tensor)
        x0, y0, x1, y1, z = obj._box
        whole = box if box is not None else tuple((0, d) for d in tensor.dims)
        cut = ((x0, x1), (y0, y1), (z, z + 1)) + tuple((0, e - s) for s, e in whole[3:])
        return root, tuple((low + s, low + e) for (low, _), (s, e) in zip(whole, cut))
    if obj.vx_type != Type.VX_TYPE_TENSOR or getattr(obj, "parent", None) is None:
        return obj, None
    offsets = [0] * len(obj.dims)
    node = obj
    while node.parent is not None:
        offsets = [o + s for o, s in zip(offsets, node.view_start)]
        node = node.parent
    return node, tuple((o, o + d) for o, d in zip(offsets, obj.dims))


def boxes_overlap(a: Box, b: Box) -> bool:
    if a is None or b is None:
        return True
    return all(s1 < e2 and s2 < e1 for (s1, e1), (s2, e2) in zip(a, b))


def overlap(a: Region, b: Region) -> bool:
    return a[0] is b[0] and boxes_overlap(a[1], b[1])


class Access(NamedTuple):
    """One parameter of one node: the node's position, the parameter index, its object and box."""

    position: int
    index: int
    obj: Reference
    box: Box


def _sweep_axis(boxes: Sequence[Box]) -> int:
    """The axis along which the boxes' starts differ most (the one that separates them best)."""
    rank = len(boxes[0])
    return max(range(rank), key=lambda axis: len({b[axis][0] for b in boxes}))


def overlapping(first: Sequence[Access], second: Sequence[Access] | None = None
                ) -> Iterator[tuple[Access, Access]]:
    """Every pair (a of ``first``, b of ``second``) whose boxes intersect, all of one root.

    With ``second`` None, the pairs within ``first`` (each pair once, the earlier
    of the two in ``first`` on the left).
    """
    same = second is None
    if all(a.box is None for a in first) and (same or all(b.box is None for b in second)):
        yield from itertools.combinations(first, 2) if same else itertools.product(first, second)
        return  # whole objects only (no views): every pair meets
    sides = (first,) if same else (first, second)
    wholes = [[a for a in side if a.box is None] for side in sides]
    boxed = [[a for a in side if a.box is not None] for side in sides]
    if same:
        for k, a in enumerate(first):  # a whole-object access meets every other access
            if a.box is None:
                yield from ((b, a) if j < k else (a, b) for j, b in enumerate(first) if j != k
                            and (b.box is not None or j > k))
    else:
        for a in wholes[0]:
            yield from ((a, b) for b in second)
        for b in wholes[1]:
            yield from ((a, b) for a in boxed[0])
    every = [a.box for side in boxed for a in side]
    if len(every) < 2:
        return
    axis = _sweep_axis(every)
    rank = {id(a): k for k, a in enumerate(first)} if same else None
    events = sorted(((a.box[axis][0], s, k, a) for s, side in enumerate(boxed) for k, a in enumerate(side)),
                    key=lambda e: (e[0], e[1], e[2]))
    open_: list[list] = [[] for _ in sides]  # per side: heap of (end, order, access)
    for n, (start, side, _, a) in enumerate(events):
        for heap in open_:
            while heap and heap[0][0] <= start:
                heapq.heappop(heap)
        others = open_[0] if same else open_[1 - side]
        for _, _, b in others:
            if boxes_overlap(a.box, b.box):
                if same:
                    yield (a, b) if rank[id(a)] < rank[id(b)] else (b, a)
                else:
                    yield (a, b) if side == 0 else (b, a)
        heapq.heappush(open_[side], (a.box[axis][1], n, a))
