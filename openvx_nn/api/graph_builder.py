"""Building one OpenVX graph through the object model for a model front end (CoreML, NNEF): tensors for
blobs, constants, parameter scalars and nodes by kernel name. The lowering modules use only this.

A blob is a named tensor of the model in a layout whose last axis moves fastest (CoreML's blobs, NNEF's
tensors): a blob of shape ``(d0, ..., dn)`` is an OpenVX tensor of dims ``(dn, ..., d0)`` (OpenVX dim 0
moves fastest), its array the transpose (all axes) of the model-order array. Errors are the front end's:
``GraphBuilder.error`` (a :class:`BuildError`) or what its ``fail`` returns."""
from __future__ import annotations

import math
import struct
import weakref
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .. import operations  # noqa: F401  (the built-in kernels the lowerings name)
from ..core.context import Context
from ..core.enums import Type
from ..core.errors import VXError
from ..core.graph import Graph
from ..core.node import Node
from ..core.reference import Reference
from ..core.scalar import Scalar
from ..core.tensor import Tensor
from ..errors import Error

F32 = Type.VX_TYPE_FLOAT32
INT32 = Type.VX_TYPE_INT32
INT32_MAX = 2**31 - 1
MAX_BLOB_BYTES = 2**31
"""The largest blob (float32 tensor) a model may declare or make: 2 GiB. Past it a model is refused rather than
left to exhaust the machine's memory or spend minutes on one layer."""
MAX_RANK = 6  # OpenVX tensors (VX_CONTEXT_MAX_TENSOR_DIMS)


class BuildError(Error, ValueError):
    """A model a front end cannot build into a graph, naming the layer, its type and why (``CoreMLError``)."""

    def __init__(self, reason: str, layer: str | None = None, layer_type: str | None = None):
        self.reason = reason
        self.layer = layer
        self.layer_type = layer_type
        where = f"layer '{layer}' ({layer_type}): " if layer is not None else ""
        super().__init__(where + reason)


def dims_of(shape: Sequence[int]) -> tuple[int, ...]:
    """OpenVX dims of a blob of model-order ``shape``."""
    return tuple(int(d) for d in reversed(tuple(shape)))


def to_vx(array: np.ndarray) -> np.ndarray:
    """A model-order array as the OpenVX-order array of its tensor."""
    return np.asarray(array, np.float32).T


def shape_problem(shape: Sequence[int], what: str = "a dimension") -> str | None:
    """Why a blob of ``shape`` cannot be made, or None."""
    if len(shape) > MAX_RANK:
        return f"rank {len(shape)} is more than {MAX_RANK}"
    for d in shape:
        if not 1 <= d <= INT32_MAX:
            return f"{what} of {d} is outside 1..{INT32_MAX}"
    nbytes = math.prod(shape) * 4
    if nbytes > MAX_BLOB_BYTES:
        return f"{nbytes} bytes of float32 are more than the {MAX_BLOB_BYTES} a blob may hold"
    return None


@dataclass
class Blob:
    """A named blob: its tensor and its model-order shape."""

    tensor: Tensor
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)


class GraphBuilder:
    """Owns the context reference, the graph and every object made for it."""

    error: type[BuildError] = BuildError
    """The front end's error class (``fail``, ``building``, ``verify`` raise it)."""

    def __init__(self, outputs: Sequence[str] = (), nhwc_route: bool = True):
        """``nhwc_route``: convolution regions may run on the NHWC float engines (``lowering.nhwc``)."""
        self.context = Context.create()
        self.graph = Graph(self.context)
        self.graph.python_helpers = True  # predict summons them (model.py)
        self.blobs: dict[str, Blob] = {}
        self.outputs = set(outputs)
        self._objects: list[Reference] = [self.graph]
        self._scalars: dict[tuple[int, bytes], Scalar] = {}
        # A model dropped without close() still gives its context back (like nnapi's compilations).
        self._finalizer = weakref.finalize(self, _release, self.context, self._objects)
        self._finalizer.atexit = False  # at exit the context goes with the process
        self.layer: tuple[str, str] | None = None  # (name, type) being lowered
        self.nodes: dict[str, list[Node]] = {}
        self.epilogue = None  # the stages the convolution being lowered may fold (``lowering.fusion.plan``)
        self.folded: dict[int, str] = {}  # layer positions folded so far -> the convolution that took them
        # A blob -> the concatenation that alone reads it, into whose slice its producer may write (the front end's
        # plan); the concatenations' outputs made early for that -> the inputs already written into their slices.
        self.slots: dict[str, object] = {}
        self.written: dict[str, set[str]] = {}
        # Blobs held in NHWC (dims [C, W, H, N]) for the NHWC float engines, by name, with their model-order shape; a
        # blob may be in either layout or both (each converted once, when a layer first needs it there).
        self.nhwc: dict[str, Blob] = {}
        self.nhwc_route = nhwc_route
        self.values: dict[str, np.ndarray] = {}
        """model-order values of the blobs known at load (constants, shapes), by name: lowerings check static
        indices with them."""

    # -- errors ----------------------------------------------------------------------
    def fail(self, reason: str) -> BuildError:
        """An error naming the layer being lowered (raise it)."""
        name, kind = self.layer if self.layer else (None, None)
        return self.error(reason, name, kind)

    # -- objects ----------------------------------------------------------------------
    def _keep(self, obj):
        self._objects.append(obj)
        return obj

    def _sized(self, dims: Sequence[int]) -> tuple[int, ...]:
        """``dims`` when a blob of them may be made, else an error naming the layer (``validation.shape_problem``:
        no dimension below 1, no blob past ``MAX_BLOB_BYTES``)."""
        dims = tuple(int(d) for d in dims)
        problem = shape_problem(dims)
        if problem is not None:
            raise self.fail(f"a blob of shape {list(reversed(dims))} cannot be made: {problem}")
        return dims

    def real(self, shape: Sequence[int]) -> Tensor:
        dims = self._sized(dims_of(shape))
        return self._keep(Tensor.create(self.context, len(dims), dims, F32, 0))

    def temp_dims(self, dims: Sequence[int]) -> Tensor:
        """A virtual float32 tensor of OpenVX ``dims``."""
        dims = self._sized(dims)
        return self._keep(Tensor.create_virtual(self.graph, len(dims), dims, F32, 0))

    def temp(self, shape: Sequence[int]) -> Tensor:
        """A virtual float32 tensor of model-order ``shape`` (dims known: views of it are allowed)."""
        dims = self._sized(dims_of(shape))
        return self._keep(Tensor.create_virtual(self.graph, len(dims), dims, F32, 0))

    def constant(self, array: np.ndarray) -> Tensor:
        """A tensor holding a model-order float array."""
        a = np.asarray(array, np.float32)
        if a.ndim == 0:
            a = a.reshape(1)
        tensor = self.real(a.shape)
        tensor.array[...] = to_vx(a)
        return tensor

    def ints(self, values: Sequence[int]) -> Tensor:
        """A 1-D INT32 parameter tensor."""
        wide = [v for v in values if not -2**31 <= int(v) < 2**31]
        if wide:
            raise self.fail(f"the layer's parameter {wide[0]} does not fit a 32-bit integer")
        tensor = self._keep(Tensor.create(self.context, 1, (max(len(values), 1),), INT32, 0))
        tensor.array[: len(values)] = np.asarray(values, np.int32)
        return tensor

    def floats(self, values: Sequence[float]) -> Tensor:
        tensor = self._keep(Tensor.create(self.context, 1, (len(values),), F32, 0))
        tensor.array[...] = np.asarray(values, np.float32)
        return tensor

    def scalar(self, data_type: int, value) -> Scalar:
        """A parameter scalar; one object per type and value, shared by the nodes that read it (nothing writes
        a model's parameters: a network's hundreds of strides and paddings are a handful of scalars)."""
        fmt = {Type.VX_TYPE_ENUM: "<i", Type.VX_TYPE_INT32: "<i", Type.VX_TYPE_FLOAT32: "<f",
               Type.VX_TYPE_SIZE: "<Q", Type.VX_TYPE_INT64: "<q"}[data_type]
        raw = struct.pack(fmt, value)
        found = self._scalars.get((data_type, raw))
        if found is None:
            found = self._scalars[(data_type, raw)] = self._keep(Scalar(self.context, data_type, raw))
        return found

    def enum(self, value: int) -> Scalar:
        return self.scalar(Type.VX_TYPE_ENUM, value)

    def i32(self, value: int) -> Scalar:
        return self.scalar(Type.VX_TYPE_INT32, int(value))

    def i64(self, value: int) -> Scalar:
        return self.scalar(Type.VX_TYPE_INT64, int(value))

    def f32(self, value: float) -> Scalar:
        return self.scalar(Type.VX_TYPE_FLOAT32, float(value))

    def size(self, value: int) -> Scalar:
        return self.scalar(Type.VX_TYPE_SIZE, int(value))

    def scalar_struct(self, data_type: int, raw: bytes) -> Scalar:
        """A scalar of a standard struct type (the NN layers' parameter structs)."""
        return self._keep(Scalar(self.context, data_type, raw))

    def view(self, tensor: Tensor, start: Sequence[int], end: Sequence[int]) -> Tensor:
        """A view of ``tensor`` between OpenVX-order ``start`` and ``end``."""
        return self._keep(Tensor.from_view(tensor, len(start), list(start), list(end)))

    # -- nodes --------------------------------------------------------------------------
    def node(self, kernel: str, params: Sequence[Reference | None]) -> Node:
        """A node of kernel ``kernel`` (full name) with ``params`` in kernel order."""
        description = self.context.kernels.by_name(kernel)
        if description is None:
            raise self.fail(f"kernel {kernel} is not registered")
        return self.custom_node(description, params)

    def custom_node(self, description, params: Sequence[Reference | None]) -> Node:
        """A node of ``description`` (a kernel the application provides: ``lowering/custom.py``)."""
        kernel = description.name
        node = self._keep(Node(self.graph, description))
        try:
            for index, value in enumerate(params):
                if value is not None:
                    node.set_parameter(index, value)
        except VXError as err:
            raise self.fail(f"cannot set up {kernel}: {err.message}") from None
        if self.layer:
            node.set_name(self.layer[0].encode("utf-8")[:63].decode("utf-8", "ignore"))
            self.nodes.setdefault(self.layer[0], []).append(node)
        return node

    def coreml(self, layer: str, params: Sequence[Reference | None]) -> Node:
        return self.node(f"org.openvx_nn.coreml.{layer}", params)

    # -- blobs ----------------------------------------------------------------------------
    def blob(self, name: str) -> Blob:
        """Blob ``name`` in the model's layout (converted from NHWC, once, when only that is held)."""
        found = self.blobs.get(name)
        if found is not None:
            return found
        held = self.nhwc.get(name)
        if held is None:
            raise self.fail(f"input '{name}' is produced by no earlier layer and is no model input")
        tensor = self.real(held.shape) if name in self.outputs else self.temp(held.shape)
        self.coreml("to_chw", (held.tensor, tensor))
        self.blobs[name] = found = Blob(tensor, held.shape)
        return found

    def known(self, name: str) -> bool:
        """Whether blob ``name`` has been made, in either layout."""
        return name in self.blobs or name in self.nhwc

    def shape_of(self, name: str) -> tuple[int, ...] | None:
        """The CoreML shape of blob ``name`` in whichever layout it is held, None when not made yet."""
        held = self.blobs.get(name) or self.nhwc.get(name)
        return None if held is None else held.shape

    def held(self, name: str) -> Blob:
        """Blob ``name`` in whichever layout it is held (CoreML's first): for its shape, with no conversion."""
        found = self.blobs.get(name) or self.nhwc.get(name)
        if found is None:
            raise self.fail(f"input '{name}' is produced by no earlier layer and is no model input")
        return found

    def output(self, name: str, shape: Sequence[int]) -> Tensor:
        """The tensor a layer writes for blob ``name``: real for a model output, else virtual."""
        self.values.pop(name, None)
        tensor = self.real(shape) if name in self.outputs else self.temp(shape)
        self.blobs[name] = Blob(tensor, tuple(int(d) for d in shape))
        self.nhwc.pop(name, None)
        return tensor

    def alias(self, name: str, tensor: Tensor, shape: Sequence[int]) -> None:
        """Blob ``name`` is ``tensor`` itself (a view): no node. A model output gets a copy."""
        self.values.pop(name, None)
        if name in self.outputs:
            self.coreml("reshape", (tensor, self.output(name, shape)))
        else:
            self.blobs[name] = Blob(tensor, tuple(int(d) for d in shape))
            self.nhwc.pop(name, None)

    def constant_blob(self, name: str, array: np.ndarray) -> None:
        """Blob ``name`` holds ``array`` (CoreML order), known at load: a constant tensor, its values kept in
        ``values``."""
        a = np.asarray(array, np.float32)
        self.alias(name, self.constant(a), a.shape)
        self.values[name] = a

    # -- NHWC blobs ---------------------------------------------------------------------------------
    def nhwc_blob(self, name: str) -> Blob:
        """Blob ``name`` in NHWC (tensor dims ``[C, W, H, N]``, the model-order shape kept): converted once from
        the model's layout when it is not held in NHWC yet."""
        held = self.nhwc.get(name)
        if held is not None:
            return held
        x = self.blob(name)
        tensor = self.temp_dims(nhwc_dims(x.shape))
        self.coreml("to_nhwc", (x.tensor, tensor))
        self.nhwc[name] = held = Blob(tensor, x.shape)
        return held

    def nhwc_output(self, name: str, shape: Sequence[int], dims: Sequence[int] | None = None) -> Tensor:
        """The NHWC tensor a layer writes for blob ``name`` of model-order ``shape`` (``dims``: OpenVX dims when not
        ``[C, W, H, N]``, e.g. ``[C, N]`` for a 1 x 1 plane). A model output is converted back at the end."""
        shape = tuple(int(d) for d in shape)
        tensor = self.temp_dims(dims if dims is not None else nhwc_dims(shape))
        self.nhwc[name] = Blob(tensor, shape)
        self.blobs.pop(name, None)
        return tensor

    # -- lifetime ------------------------------------------------------------------------------
    @contextmanager
    def building(self):
        """Closes the builder when building fails; a refusal of the object model that no check foresaw is still
        the model's: the front end's error naming the layer being lowered."""
        try:
            yield self
        except VXError as err:
            self.close()
            name, kind = self.layer if self.layer else (None, None)
            raise self.error(f"the graph cannot be built: {err}", name, kind) from err
        except BaseException:
            self.close()
            raise

    def verify(self) -> None:
        try:
            self.graph.verify()
        except VXError as err:
            raise self.error(f"the graph does not verify: {err.message}") from None

    def close(self) -> None:
        self._finalizer()


def nhwc_dims(shape: Sequence[int]) -> tuple[int, ...]:
    """OpenVX dims ``[C, W, H, N]`` of a blob of model-order ``shape`` ``(*lead, C, H, W)`` in NHWC (N: lead's product)."""
    n = 1
    for d in shape[:-3]:
        n *= int(d)
    return int(shape[-3]), int(shape[-1]), int(shape[-2]), n


def _release(context: Context, objects: list[Reference]) -> None:
    """Release every object a builder made, newest first, then its context reference."""
    for obj in reversed(objects):
        if obj.alive and obj.external > 0:
            obj.release()
    objects.clear()
    if context.alive and context.external > 0:
        context.release()
