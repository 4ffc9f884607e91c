"""Nodes the model front ends' lowerings share over a :class:`GraphBuilder`: permutations, reshapes,
concatenations and views of blobs (on the ``org.openvx_nn.coreml.*`` copies), and nodes of the NNAPI kernels
(``org.openvx_nn.nnapi.*``) on float32 tensors."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..operations.nnapi.common import NNAPI_KERNELS
from .graph_builder import Blob, GraphBuilder, dims_of


def vx_axes(perm: Sequence[int]) -> list[int]:
    """OpenVX permute axes of a model-order permutation (out axis i = in axis perm[i])."""
    r = len(perm)
    return [r - 1 - perm[r - 1 - j] for j in range(r)]


def broadcast_shape(g: GraphBuilder, shapes: Sequence[Sequence[int]], align: str = "right") -> tuple[int, ...]:
    """The broadcast of several model-order shapes, the shorter ones padded with unit axes at the front
    (``align="right"``: CoreML's and NumPy's) or at the end (``"left"``: NNEF's, whose shapes extend with
    singletons at the end, so a ``[1, C]`` bias meets ``[N, C, H, W]`` on C); ``g.fail`` when they do not
    broadcast."""
    if align not in ("right", "left"):
        raise ValueError(f"align is {align!r}; expected 'right' or 'left'")
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) if align == "right" else tuple(s) + (1,) * (rank - len(s))
              for s in shapes]
    out = []
    for sizes in zip(*padded):
        big = max(sizes)
        if any(d not in (1, big) for d in sizes):
            raise g.fail(f"shapes {[list(s) for s in shapes]} do not broadcast")
        out.append(big)
    return tuple(out)


def permute(g: GraphBuilder, blob: Blob, perm: Sequence[int], name: str | None = None) -> Blob:
    shape = tuple(blob.shape[p] for p in perm)
    out = g.output(name, shape) if name else g.temp(shape)
    g.coreml("permute", (blob.tensor, g.ints(vx_axes(perm)), out))
    return Blob(out, shape)


def reshape(g: GraphBuilder, blob: Blob, shape: Sequence[int], name: str | None = None) -> Blob:
    shape = tuple(int(d) for d in shape)
    out = g.output(name, shape) if name else g.temp(shape)
    g.coreml("reshape", (blob.tensor, out))
    return Blob(out, shape)


def concat(g: GraphBuilder, blobs: Sequence[Blob], cm_axis: int, name: str) -> None:
    """Copy each input into its slice of one output along model-order axis ``cm_axis``."""
    first = blobs[0]
    for b in blobs[1:]:
        if b.rank != first.rank or any(x != y for i, (x, y) in enumerate(zip(b.shape, first.shape)) if i != cm_axis):
            raise g.fail(f"inputs {list(first.shape)} and {list(b.shape)} differ off the concatenation axis")
    shape = list(first.shape)
    shape[cm_axis] = sum(b.shape[cm_axis] for b in blobs)
    out = g.output(name, shape)
    axis = first.rank - 1 - cm_axis
    offset = 0
    for b in blobs:
        start = [0] * first.rank
        start[axis] = offset
        end = list(dims_of(b.shape))
        end[axis] += offset
        g.coreml("reshape", (b.tensor, g.view(out, start, end)))
        offset += b.shape[cm_axis]


def view(g: GraphBuilder, blob: Blob, begin: Sequence[int], shape: Sequence[int], name: str) -> None:
    """Blob ``name`` is the box of ``blob`` at model-order ``begin`` with model-order ``shape``."""
    start = list(reversed(list(begin)))
    end = [s + d for s, d in zip(start, dims_of(shape))]
    g.alias(name, g.view(blob.tensor, start, end), shape)


def nnapi_node(g: GraphBuilder, op: str, tensors: Mapping[str, object], ints: Mapping[str, int] = (),
         floats: Mapping[str, float] = ()) -> None:
    """A node of ``org.openvx_nn.nnapi.<op>`` on float32 tensors (quantization scalars at their neutral values)."""
    kernel = NNAPI_KERNELS[op]
    ints, floats = dict(ints), dict(floats)
    params: list = [tensors.get(name) for name in kernel.tensor_names]
    for name, _ in kernel.scalar_names:
        if name in floats or name.endswith("_scale"):
            params.append(g.f32(floats.get(name, 1.0)))
        else:
            params.append(g.i32(ints.get(name, 0)))
    g.node(kernel.name, params)
