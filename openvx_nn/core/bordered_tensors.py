"""A rewrite at verify: a virtual tensor between float32 convolutions held inside a zero-bordered buffer.

A padded convolution on the float engine reads its input surrounded by zeros; given a tensor as it is, it copies
the tensor into a zero-bordered buffer on every call (``float_convolution._staged_input``). When the tensor is a
virtual channels-last float32 root that one convolution's call writes (its own output, or the output of the
activation or residual add the plan fused into it: ``rewrites``, ``epilogue_fusion``) and that only padded
convolutions read (any padding up to the largest; a convolution padded by less, or not at all, reads it too) or a
convolution's epilogue adds as its residual, the plan gives it a buffer ``[N, H + 2b, W + 2b, C]`` of zeros, ``b``
the largest padding of its readers: the producer writes the interior (its tiles store each pixel at its place in
the wider rows), the readers read the buffer as already padded, and the border, zeroed once here, is never
written. The values are those the copies would have made, summed in the same order: the same bytes.

Which nodes know: a convolution whose description's ``takes_borders`` says so, in ``state[BORDERS]`` (the buffer
and border of each such tensor it touches, by root). The tensor's own storage stays (the arena's slice): a node
that does not know the buffer and comes to touch the tensor -- a fused activation that is no longer a clamp at a
later binding, so that it runs itself -- runs on that storage, with the interior copied after it
(``state[STAND_INS]``, :func:`wrapped`).
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from . import epilogue_fusion, rewrites
from .enums import Direction, Type
from .regions import region

BORDERS = "borders"
"""``node.state`` key on a convolution: {id(root): (border, buffer [N, H + 2b, W + 2b, C])} of the bordered
tensors it reads or writes."""
STAND_INS = "border_stand_ins"
"""``node.state`` key on a node fused into a convolution: {parameter index: (border, buffer)} of a bordered tensor
it writes, should it run itself (module doc)."""
ALIGNMENT = 64
ENV = "OPENVX_NN_BORDERED_TENSORS"
"""``0`` turns this pass alone off (read at each verify), to measure it; ``OPENVX_NN_REWRITES=0`` turns it off with
the others."""

_F32 = int(Type.VX_TYPE_FLOAT32)
_IN, _OUT = int(Direction.VX_INPUT), int(Direction.VX_OUTPUT)


def _takes(node) -> tuple[int | None, bool] | None:
    hook = getattr(node.description, "takes_borders", None)
    return None if hook is None else hook(node.params, node.state)


def _nhwc(root) -> tuple[int, int, int, int]:
    dims = tuple(root.dims)
    return int(np.prod(dims[3:], dtype=np.int64)), dims[1], dims[0], dims[2]


def _buffer(shape: tuple[int, int, int, int], border: int) -> np.ndarray:
    """Zeros ``[N, H + 2b, W + 2b, C]``, 64-byte aligned."""
    n, h, w, c = shape
    size = n * (h + 2 * border) * (w + 2 * border) * c
    raw = np.zeros(size + ALIGNMENT // 4, np.float32)
    start = (-raw.ctypes.data % ALIGNMENT) // 4
    return raw[start:start + size].reshape(n, h + 2 * border, w + 2 * border, c)


def _computed_by(node, index: int, root):
    """The convolution whose call writes ``root`` when ``node`` writes it at ``index``: ``node`` itself (a
    convolution writing its own output) or the convolution a fused activation or residual chain belongs to; None
    when that call is no convolution that can write a bordered output."""
    producer = next((node.state[key] for key in (rewrites.FUSED, epilogue_fusion.MEMBER) if key in node.state), node)
    if producer is not node and not rewrites.fused(node):
        return None
    takes = _takes(producer)
    if takes is None or not takes[1] or not rewrites._laid_out_last(producer, (4,)):
        return None
    fused = rewrites.epilogue(producer.state)
    written = producer.params[4] if fused is None else fused[0]
    return producer if written is root else None


def _reader(node, index: int, root) -> tuple[object, int] | None:
    """(the convolution whose call reads ``root``, the padding it reads it with) when ``node`` reads it at
    ``index``: a convolution's input (laid out channels-last), or the skip of a residual add fused into a
    convolution (padding 0); else None."""
    if epilogue_fusion.MEMBER in node.state:
        conv = node.state[epilogue_fusion.MEMBER]
        return (conv, 0) if epilogue_fusion.residual(conv.state) is root else None
    takes = _takes(node)
    if index != 0 or takes is None or takes[0] is None or not rewrites._laid_out_last(node, (0,)):
        return None
    return node, takes[0]


def _plan(root, touching: list) -> tuple[int, object, list] | None:
    """(border, the producing convolution, the reading ones) when ``root`` may live in a bordered buffer."""
    writers = [(n, i) for n, i, _ in touching if n.description.params[i].direction == _OUT]
    readers = [(n, i) for n, i, _ in touching if n.description.params[i].direction == _IN]
    if len(writers) != 1 or not readers or len(writers) + len(readers) != len(touching):
        return None
    producer = _computed_by(*writers[0], root)
    if producer is None:
        return None
    found = [_reader(n, i, root) for n, i in readers]
    if any(f is None or f[0] is producer for f in found):
        return None
    border = max(pad for _, pad in found)
    return (border, producer, [conv for conv, _ in found]) if border > 0 else None


def assign(order: list, parameters, report) -> None:
    """Give each virtual float32 channels-last root the module doc allows its bordered buffer, and tell the nodes;
    after ``rewrites.run`` (it reads the fusions and layouts its passes chose), nothing when they are off.
    ``parameters``: the graph parameters as (node, index); ``report``: ``rewrites.Report``."""
    if not rewrites.enabled() or os.environ.get(ENV, "").strip() == "0":
        return
    if not any(getattr(node.description, "takes_borders", None) is not None for node in order):
        return  # no node could write or read a bordered buffer: the tensors' accesses need not be gathered
    shown = {id(region(node.params[i])[0]) for node, i in parameters if node.params[i] is not None}
    for touching in rewrites._accesses(order).values():
        root = touching[0][2].root
        if (not root.virtual or root.parent is not None or id(root) in shown or root.data_type != _F32
                or len(root.dims) < 3 or any(p is not root for _, _, p in touching)
                or not all(rewrites._laid_out_last(n, (i,)) for n, i, _ in touching)):
            continue
        found = _plan(root, touching)
        if found is None:
            continue
        border, producer, convs = found
        buffer = _buffer(_nhwc(root), border)
        for conv in [producer, *convs]:
            conv.state.setdefault(BORDERS, {})[id(root)] = (border, buffer)
        for node, i, _ in touching:
            if node is not producer and node.description.params[i].direction == _OUT:
                node.state.setdefault(STAND_INS, {})[i] = (border, buffer)
        report.bordered.append((root, border))


def of(state: dict, tensor) -> tuple[int, np.ndarray | None]:
    """(border, buffer) of ``tensor`` in a node with ``state`` (the plan's :data:`BORDERS`), else (0, None)."""
    if tensor is None:
        return 0, None
    return state.get(BORDERS, {}).get(id(tensor.root), (0, None))


def wrapped(node, bind_call: Callable) -> tuple[Callable[[], None], None] | None:
    """``node``'s call on a bordered tensor's own storage, its interior copied into the buffer after each run
    (``state[STAND_INS]``: a fused node running itself), with no native entry; None when it writes none."""
    stand_ins = node.state.get(STAND_INS)
    if not stand_ins:
        return None
    from ..kernels.openvx.float_layers import pixels
    runner, _ = bind_call(node.params)
    copies = []
    for i, (border, buffer) in stand_ins.items():
        own = pixels(node.params[i].array)
        _, h, w, _ = own.shape
        copies.append((own, buffer[:, border:border + h, border:border + w]))

    def run() -> None:
        runner()
        for own, inside in copies:
            inside[...] = own
    return run, None
