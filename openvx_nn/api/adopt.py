"""Pythonic API objects for a graph a front end built through the object model.

The CoreML and NNAPI front ends lower a model with their own graph builders (object-model
graphs in the process's one context); ``openvx-nn run`` and ``map_batches`` take the
Pythonic API's ``(graph, input, output)``.  ``adopt`` hands the same objects over: each
wrapper holds a reference of its own, and the builder is released when the context closes.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .context import Context
from .graph import Graph
from .reference import call, ffi
from .tensor import Tensor


class ModelObject(Protocol):
    """An object of the object model: its ``handle`` is the id C code sees."""

    handle: int


class _Release:
    """Runs the builder's release when the context closes (the context owns this)."""

    def __init__(self, release: Callable[[], None]):
        self._release: Callable[[], None] | None = release

    def close(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


def _handle(obj: ModelObject, c_type: str):
    handle = ffi.cast(c_type, obj.handle)
    call("vxRetainReference", ffi.cast("vx_reference", handle))  # the wrapper's close releases this one
    return handle


def adopt(ctx: Context, graph: ModelObject, tensors: list[ModelObject], context: ModelObject,
          release: Callable[[], None]) -> tuple[Graph, list[Tensor]]:
    """API wrappers of ``graph`` and ``tensors`` (made in ``context``, which must be ``ctx``'s);
    ``release`` frees the builder's own references and runs when ``ctx`` closes, after the wrappers."""
    if int(ffi.cast("uintptr_t", ctx.handle)) != context.handle:
        release()
        raise ValueError("the graph was built in another context than ctx")
    ctx._own(_Release(release))
    wrapped = ctx._own(Graph(_handle(graph, "vx_graph"), ctx))
    return wrapped, [ctx._own(Tensor(_handle(t, "vx_tensor"))) for t in tensors]
