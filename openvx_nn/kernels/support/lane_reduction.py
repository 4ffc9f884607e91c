"""A row's reduction in eight accumulators, written once (softmax's maximum and sum, the moments' sums).

LLVM vectorizes a reduction only when it may reassociate it; eight scalar accumulators, each taking every
eighth term, give it eight independent chains it packs into one vector without changing a bit. The order is
fixed: lane ``j`` takes terms ``j, j + 8, ...`` of the whole groups of eight, the lanes combine as
``((0, 1), (2, 3)), ((4, 5), (6, 7))``, and the tail's terms follow one by one.
"""
from __future__ import annotations

from collections.abc import Callable

from . import jit


def lane_reduction(term: Callable, add: Callable) -> Callable:
    """A jit-callable ``reduce(row, n, first, arg)``: ``add`` over ``term(row, k, arg)`` for ``k`` in ``[0, n)``,
    in the module's order, each of the eight lanes starting at ``first`` (``add``'s identity, or a value whose
    repetition changes nothing, as ``row[0]`` for a maximum). ``term`` and ``add`` are bound by closure, so the
    caller's kernel calls them directly and stays cacheable (as ``engine.chunk_loop``)."""

    @jit.jitable
    def reduce(row, n, first, arg):
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = first
        k = 0
        while k + 8 <= n:
            a0 = add(a0, term(row, k, arg))
            a1 = add(a1, term(row, k + 1, arg))
            a2 = add(a2, term(row, k + 2, arg))
            a3 = add(a3, term(row, k + 3, arg))
            a4 = add(a4, term(row, k + 4, arg))
            a5 = add(a5, term(row, k + 5, arg))
            a6 = add(a6, term(row, k + 6, arg))
            a7 = add(a7, term(row, k + 7, arg))
            k += 8
        a = add(add(add(a0, a1), add(a2, a3)), add(add(a4, a5), add(a6, a7)))
        while k < n:
            a = add(a, term(row, k, arg))
            k += 1
        return a
    return reduce


@jit.jitable
def plus(s, v):
    """``add`` of a sum."""
    return s + v
