"""Flexible input shapes: a multi-array input may declare the shapes it takes (``enumeratedShapes``) or a range
per dimension (``shapeRange``; an upper bound of -1 is none), an image input its sizes (``enumeratedSizes``) or
ranges (``imageSizeRange``). Any shape the declaration allows runs (a graph per shape, as for every input); one
it does not allow is refused naming the input, the shape and what the model declares."""
from __future__ import annotations

from collections.abc import Callable, Sequence

Rule = Callable[[Sequence[int]], str | None]
"""The trailing dimensions of an input (as many as the declaration has) -> why they are refused, or None."""


def _within(low: int, high: int, size: int) -> bool:
    return size >= low and (high < 0 or size <= high)


def shape_rule(feature) -> tuple[int, Rule] | None:
    """(how many trailing dimensions the rule reads, the rule) for ``feature``'s flexibility, None when it has none."""
    kind = feature.type.WhichOneof("Type")
    if kind == "multiArrayType":
        array = feature.type.multiArrayType
        flexibility = array.WhichOneof("ShapeFlexibility")
        if flexibility == "enumeratedShapes":
            shapes = [tuple(int(d) for d in s.shape) for s in array.enumeratedShapes.shapes]
            rank = len(shapes[0]) if shapes else len(array.shape)
            return rank, lambda dims: None if tuple(dims) in shapes else f"it takes one of {[list(s) for s in shapes]}"
        if flexibility == "shapeRange":
            ranges = [(int(r.lowerBound), int(r.upperBound)) for r in array.shapeRange.sizeRanges]
            return len(ranges), lambda dims: None if all(_within(lo, hi, d) for (lo, hi), d in zip(ranges, dims)) \
                else f"it takes sizes within {[[lo, 'any' if hi < 0 else hi] for lo, hi in ranges]}"
        return None
    if kind == "imageType":
        image = feature.type.imageType
        flexibility = image.WhichOneof("SizeFlexibility")
        if flexibility == "enumeratedSizes":
            sizes = [(int(s.height), int(s.width)) for s in image.enumeratedSizes.sizes]
            return 2, lambda dims: None if tuple(dims) in sizes else f"it takes (height, width) one of {sizes}"
        if flexibility == "imageSizeRange":
            r = image.imageSizeRange
            ranges = [(int(r.heightRange.lowerBound), int(r.heightRange.upperBound)),
                      (int(r.widthRange.lowerBound), int(r.widthRange.upperBound))]
            return 2, lambda dims: None if all(_within(lo, hi, d) for (lo, hi), d in zip(ranges, dims)) \
                else f"it takes heights and widths within {ranges} (-1: no bound)"
    return None
