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

The same holds for a virtual float32 tensor NHWC by definition (NNAPI's CONV_2D, and the CoreML front end's
convolutions on the NHWC route, ``nnapi.conv_2d_residual``: OpenVX dims ``(C, W, H, N)``, no layout to choose) that
such convolutions alone write and read, or add as a residual input (:class:`Takes`); every node touching a tensor
must see it the same way.

Which nodes know: a convolution whose description's ``takes_borders`` says so, in ``state[BORDERS]`` (the buffer
and border of each such tensor it touches, by root). The tensor's own storage stays (the arena's slice): a node
that does not know the buffer and comes to touch the tensor -- a fused activation that is no longer a clamp at a
later binding, so that it runs itself -- runs on that storage, with the interior copied after it
(``state[STAND_INS]``, :func:`wrapped`).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

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


class Takes(NamedTuple):
    """A ``takes_borders`` hook's answer (a plain tuple of its first fields will do)."""

    pad: int | None
    """The padding with which the node reads its input 0 from a zero-bordered buffer, or None: it does not."""
    writes: bool
    """Whether it can write its output (or a fused chain's) into one."""
    residual: int | None = None
    """The index of an input it adds to its output and can read from one (an NNAPI convolution with a residual)."""
    nhwc: bool = False
    """Its tensors are ``[N, H, W, C]`` by definition, OpenVX dims ``(C, W, H, N)`` (NNAPI's), with no layout for
    the plan to choose; else they take part only where the plan laid them out channels-last."""


def _takes(node) -> Takes | None:
    hook = getattr(node.description, "takes_borders", None)
    found = None if hook is None else hook(node.params, node.state)
    return None if found is None else Takes(*found)


def _output_index(node) -> int:
    return next(i for i, s in enumerate(node.description.params) if s.direction == _OUT)


def _view(node, index: int) -> str | None:
    """How ``node`` sees the tensor at ``index`` as ``[N, H, W, C]``: "last" (laid out channels-last by the plan),
    "nhwc" (by definition: :attr:`Takes.nhwc`), or None (not so)."""
    if rewrites._laid_out_last(node, (index,)):
        return "last"
    takes = _takes(node)
    return "nhwc" if takes is not None and takes.nhwc else None


def _nhwc(root, view: str) -> tuple[int, int, int, int]:
    dims = tuple(root.dims)
    if view == "nhwc":
        return dims[3], dims[2], dims[1], dims[0]
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
    out = _output_index(producer)
    if takes is None or not takes.writes or not (takes.nhwc or rewrites._laid_out_last(producer, (out,))):
        return None
    fused = rewrites.epilogue(producer.state)
    written = producer.params[out] if fused is None else fused[0]
    return producer if written is root else None


def _reader(node, index: int, root) -> tuple[object, int] | None:
    """(the convolution whose call reads ``root``, the padding it reads it with) when ``node`` reads it at
    ``index``: a convolution's input (laid out channels-last, or NHWC by definition), the skip of a residual add
    fused into a convolution, or a convolution's own residual input (padding 0); else None."""
    if epilogue_fusion.MEMBER in node.state:
        conv = node.state[epilogue_fusion.MEMBER]
        return (conv, 0) if epilogue_fusion.residual(conv.state) is root else None
    takes = _takes(node)
    if takes is None:
        return None
    if index == 0 and takes.pad is not None and (takes.nhwc or rewrites._laid_out_last(node, (0,))):
        return node, takes.pad
    return (node, 0) if takes.residual is not None and index == takes.residual else None


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
                or len(root.dims) < 3 or any(p is not root for _, _, p in touching)):
            continue
        views = {_view(n, i) for n, i, _ in touching}  # one reading of the dims for every node
        if len(views) != 1 or None in views or (views == {"nhwc"} and len(root.dims) != 4):
            continue
        found = _plan(root, touching)
        if found is None:
            continue
        border, producer, convs = found
        buffer = _buffer(_nhwc(root, views.pop()), border)
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
