"""The graph builder of the NNEF front end: the model front ends' shared builder (``api.graph_builder``: tensors,
constants, parameter scalars, nodes by kernel name, views), whose blobs are NCHW-like with the last axis fastest
as NNEF's tensors are, with errors that name the NNEF operation being lowered."""
from __future__ import annotations

import weakref
from contextlib import contextmanager

import numpy as np

from ..api.graph_builder import Blob, BuildError, GraphBuilder
from ..core.errors import VXError
from ..core.tensor import Tensor
from .errors import NNEFError

__all__ = ["Blob", "NNEFBuilder"]


class NNEFBuilder(GraphBuilder):
    """One OpenVX graph for one NNEF graph; ``blobs`` are keyed by NNEF tensor name, in NNEF order."""

    internal = False

    def __init__(self, outputs=(), internal: bool = False):
        """``internal``: the graph is the body of a kernel in the application's context (an imported kernel):
        it holds no reference to the context, and its objects are not among the application's references
        (``VX_CONTEXT_REFERENCES``); they go with the context."""
        super().__init__(outputs, nhwc_route=False)
        self.internal = internal
        if internal:
            for obj in self._objects:  # the graph, made before this knew
                obj.counted = False
            self._finalizer.detach()
            self.context.release()  # the application's own reference keeps the context
            self._finalizer = weakref.finalize(self, _release_objects, self._objects)
            self._finalizer.atexit = False
        self.operation: str | None = None  # "name (result)" of the operation being lowered, for errors
        self.nnef = None  # the parsed nnef.Graph: its tensors' inferred shapes

    def fail(self, reason: str) -> NNEFError:
        return NNEFError(reason, self.operation)

    @contextmanager
    def building(self):
        try:
            yield self
        except (VXError, BuildError) as err:
            self.close()
            raise NNEFError(f"the graph cannot be built: {err}", self.operation) from err
        except BaseException:
            self.close()
            raise

    def _keep(self, obj):
        if self.internal:
            obj.counted = False
        return super()._keep(obj)

    def typed(self, dims, data_type: int, values=None) -> Tensor:
        """A virtual tensor of OpenVX ``dims`` and ``data_type`` (``values`` None), or a constant holding
        ``values`` (an array in the reversed order of ``dims``, as NNAPI's shapes are): the uint8 and int32
        tensors of the quantized kernels."""
        dims = tuple(int(d) for d in dims)
        if values is None:
            return self._keep(Tensor.create_virtual(self.graph, len(dims), dims, data_type, 0))
        tensor = self._keep(Tensor.create(self.context, len(dims), dims, data_type, 0))
        tensor.array[...] = np.asarray(values).T
        return tensor

    def verify(self) -> None:
        try:
            super().verify()
        except BuildError as err:
            raise NNEFError(err.reason) from None


def _release_objects(objects) -> None:
    """Release an internal builder's objects, newest first (those its context has not taken with it)."""
    for obj in reversed(objects):
        if obj.alive and obj.external > 0:
            obj.release()
    objects.clear()
