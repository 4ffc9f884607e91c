"""Operations that move elements: ``reshape``, ``squeeze``, ``unsqueeze``, ``tile``, ``transpose``, ``concat``,
``split``, ``pad``, ``slice`` (reshapes, permutations, views and copies onto the layout kernels)."""
from __future__ import annotations

from ...api.builder_nodes import concat as concat_views
from ...api.builder_nodes import permute, reshape, view
from ...operations.coreml.layout import PAD_MODES
from ..builder import NNEFBuilder
from .common import axis, result, shape_of
from .registry import lowers


@lowers("reshape", "squeeze", "unsqueeze")
def reshaped(g: NNEFBuilder, op) -> str:
    name = result(op)
    reshape(g, g.blob(str(op.inputs["input"])), shape_of(g, name), name)
    return "coreml.reshape"


@lowers("tile")
def tile(g: NNEFBuilder, op) -> str:
    """Each axis repeated ``repeats`` times: the tile kernel (an output of whole multiples of the input per axis)."""
    name = result(op)
    g.coreml("tile", (g.blob(str(op.inputs["input"])).tensor, g.output(name, shape_of(g, name))))
    return "coreml.tile"


@lowers("transpose")
def transpose(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    axes = [int(a) for a in op.attribs["axes"]]
    perm = axes + list(range(len(axes), x.rank))  # the axes past the list keep their place
    if sorted(perm) != list(range(x.rank)):
        raise g.fail(f"axes {axes} are not a permutation of the first axes of a rank-{x.rank} tensor")
    permute(g, x, perm, result(op))
    return "coreml.permute"


@lowers("concat")
def concat(g: NNEFBuilder, op) -> str:
    blobs = [g.blob(str(v)) for v in op.inputs["values"]]
    a = axis(g, int(op.attribs["axis"]), blobs[0].rank)
    concat_views(g, blobs, a, result(op))
    return f"{len(blobs)} copies into views"


@lowers("split")
def split(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["value"]))
    a = axis(g, int(op.attribs["axis"]), x.rank)
    offset = 0
    names = [str(v) for v in op.outputs["values"]]
    for name in names:
        shape = shape_of(g, name)
        begin = [0] * x.rank
        begin[a] = offset
        view(g, x, begin, shape, name)
        offset += shape[a]
    return f"{len(names)} views"


@lowers("pad")
def pad(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    name = result(op)
    border = op.attribs.get("border", "constant")
    if border not in PAD_MODES:
        raise g.fail(f"border '{border}' is not supported (expected one of {', '.join(PAD_MODES)})")
    before = [int(p[0]) for p in op.attribs["padding"]]
    before += [0] * (x.rank - len(before))
    g.coreml("pad", (x.tensor, g.ints(list(reversed(before))), g.enum(PAD_MODES.index(border)),
                     g.f32(float(op.attribs.get("value", 0.0))), g.output(name, shape_of(g, name))))
    return f"coreml.pad({border})"


@lowers("slice")
def slice_(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    name = result(op)
    out = shape_of(g, name)
    begin, step = [0] * x.rank, [1] * x.rank
    strides = list(op.attribs.get("stride") or [])
    for i, a in enumerate(op.attribs["axes"]):
        a = axis(g, int(a), x.rank)
        s = int(strides[i]) if strides else 1
        b = int(op.attribs["begin"][i])
        n = x.shape[a]
        b = b + n if b < 0 else b
        if s < 0 and b >= n:
            b = n - 1
        begin[a], step[a] = max(0, min(b, n - 1)), s
    if all(s == 1 for s in step):
        view(g, x, begin, out, name)
        return "a view"
    g.coreml("slice", (x.tensor, g.ints(list(reversed(begin))), g.ints(list(reversed(step))), g.output(name, out)))
    return "coreml.slice"
