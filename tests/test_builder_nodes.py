"""``api.builder_nodes.broadcast_shape``: the front ends' one broadcast of blob shapes, right-aligned (CoreML's,
NumPy's) or left-aligned (NNEF's), against NumPy's own rule (reversed shapes for the left-aligned one)."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.api.builder_nodes import broadcast_shape


class Builder:
    """What broadcast_shape needs of a GraphBuilder: ``fail``."""

    @staticmethod
    def fail(reason: str) -> ValueError:
        return ValueError(reason)


def _numpy(shapes, align: str) -> tuple[int, ...] | None:
    flip = (lambda s: tuple(s)[::-1]) if align == "left" else tuple
    try:
        return flip(np.broadcast_shapes(*(flip(s) for s in shapes)))
    except ValueError:
        return None


@pytest.mark.parametrize("align", ["right", "left"])
def test_broadcast_shape_agrees_with_numpys_rule_over_random_shapes(align):
    rng = np.random.default_rng(7 if align == "right" else 8)
    for _ in range(500):
        count = int(rng.integers(1, 4))
        shapes = [tuple(int(d) for d in rng.choice([1, 2, 3], size=int(rng.integers(1, 5)))) for _ in range(count)]
        expected = _numpy(shapes, align)
        if expected is None:
            with pytest.raises(ValueError, match="do not broadcast"):
                broadcast_shape(Builder(), shapes, align)
        else:
            assert broadcast_shape(Builder(), shapes, align) == expected, shapes


def test_the_alignment_decides_which_axes_meet():
    # NNEF's [1, C] bias meets [N, C, H, W] on C; CoreML's (right-aligned) [C, 1, 1] meets it on C too
    assert broadcast_shape(Builder(), [(2, 5, 3, 4), (1, 5)], "left") == (2, 5, 3, 4)
    assert broadcast_shape(Builder(), [(2, 5, 3, 4), (5, 1, 1)]) == (2, 5, 3, 4)
    with pytest.raises(ValueError, match="do not broadcast"):
        broadcast_shape(Builder(), [(2, 5, 3, 4), (1, 5)], "right")
    with pytest.raises(ValueError, match="align"):
        broadcast_shape(Builder(), [(1,)], "centre")
