"""User kernels: kernels an application adds at run time (``vxAddUserKernel``, the Python API).

A :class:`UserKernel` is built in three steps, as the standard has it: created with its name,
enum, parameter count and callbacks, given its parameters one by one, then finalized, which turns
it into an ordinary :class:`KernelDescription` published in the context's kernel table.  From then
on its nodes are made, verified and run like any built-in kernel's: the description's validator
calls the application's validator with one meta format per output and checks what it says against
the outputs (``meta_format``), then calls ``init``; the executor calls the kernel function.  A
status other than VX_SUCCESS fails verification or the run with that status.

The callbacks are Python callables on model objects; the C layer wraps C function pointers in
them, the Python API wraps Python functions.  While one runs, the thread may touch the node's
virtual objects (``access.in_user_kernel``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import access
from .datatypes import NUMPY
from .enums import (
    ArrayAttr,
    Direction,
    ImageAttr,
    ObjectArrayAttr,
    ParameterState,
    ScalarAttr,
    Status,
    TensorAttr,
    Type,
    status_name,
    type_name,
)
from .errors import VXError
from .meta_format import MetaFormat
from .reference import Reference
from .signature import KernelDescription, ParamSpec
from .validation import Validation

MAX_PARAMETERS = 64
OBJECT_TYPES = (Type.VX_TYPE_REFERENCE, Type.VX_TYPE_TENSOR, Type.VX_TYPE_SCALAR, Type.VX_TYPE_IMAGE,
                Type.VX_TYPE_ARRAY, Type.VX_TYPE_OBJECT_ARRAY, Type.VX_TYPE_LUT)
"""Object types a user kernel's parameter may have (other plain or struct types mean a scalar of it)."""

NodeCall = Callable[[Reference, list], int]  # (node, parameter objects) -> vx_status
ValidateCall = Callable[[Reference, list, list], int]  # (node, parameters, meta formats) -> vx_status


@dataclass(frozen=True)
class Callbacks:
    """The application's functions: kernel function, validator, and optional init and deinit."""

    run: NodeCall
    validate: ValidateCall
    init: NodeCall | None = None
    deinit: NodeCall | None = None


class LocalData:
    """A node's local data (VX_NODE_LOCAL_DATA_SIZE/PTR): the library allocates ``size``
    zeroed bytes after init unless the kernel set a pointer of its own."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pointer = 0
        self.initialized = False
        self._buffer: np.ndarray | None = None

    def allocate(self) -> None:
        if self.size and not self.pointer:
            self._buffer = np.zeros(self.size, np.uint8)
            self.pointer = self._buffer.ctypes.data

    def free(self) -> None:
        self._buffer, self.pointer, self.initialized = None, 0, False


def local_data(node: Reference) -> LocalData | None:
    """The local data of a user kernel's node (None for a built-in kernel's node)."""
    return getattr(node, "local_data", None)


def parameter_spec(index: int, direction: int, data_type: int, state: int) -> ParamSpec:
    """The checked spec of ``vxAddParameterToKernel``'s arguments."""
    if direction not in (Direction.VX_INPUT, Direction.VX_OUTPUT):
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"direction {direction:#x} of parameter {index} is invalid (expected VX_INPUT or "
                      f"VX_OUTPUT; VX_BIDIRECTIONAL is not allowed for user kernels)")
    if state not in (ParameterState.VX_PARAMETER_STATE_REQUIRED, ParameterState.VX_PARAMETER_STATE_OPTIONAL):
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"state {state:#x} of parameter {index} is invalid (expected "
                      f"VX_PARAMETER_STATE_REQUIRED or VX_PARAMETER_STATE_OPTIONAL)")
    optional = state == ParameterState.VX_PARAMETER_STATE_OPTIONAL
    name = f"parameter {index}"
    if data_type in OBJECT_TYPES:
        return ParamSpec(name, direction, data_type, optional)
    if data_type in NUMPY or Type.VX_TYPE_RECTANGLE <= data_type <= Type.VX_TYPE_USER_STRUCT_END:
        return ParamSpec(name, direction, Type.VX_TYPE_SCALAR, optional, scalar_type=data_type)
    raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                  f"type {type_name(data_type)} of parameter {index} is not a parameter type "
                  f"(expected an object type such as VX_TYPE_TENSOR, or a scalar's data type)")


class UserKernel:
    """A user kernel from ``vxAddUserKernel`` until and after ``vxFinalizeKernel``."""

    def __init__(self, name: str, enum: int, count: int, callbacks: Callbacks):
        if not name:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "kernel name is empty")
        if not 1 <= count <= MAX_PARAMETERS:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"parameter count {count} of kernel {name} is invalid (expected 1..{MAX_PARAMETERS})")
        self.name, self.enum, self.callbacks = name, int(enum), callbacks
        self.specs: list[ParamSpec | None] = [None] * count
        self.local_data_size = 0
        self.description: KernelDescription | None = None  # set by finalize

    @property
    def finalized(self) -> bool:
        return self.description is not None

    def _check_open(self, action: str) -> None:
        if self.finalized:
            raise VXError(Status.VX_ERROR_NOT_SUPPORTED, f"kernel {self.name} is finalized: cannot {action}")

    def add_parameter(self, index: int, direction: int, data_type: int, state: int) -> None:
        self._check_open("add parameters")
        if not 0 <= index < len(self.specs):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"parameter index {index} is out of range for kernel {self.name} "
                          f"({len(self.specs)} parameters)")
        self.specs[index] = parameter_spec(index, direction, data_type, state)

    def set_local_data_size(self, size: int) -> None:
        self._check_open("change VX_KERNEL_LOCAL_DATA_SIZE")
        self.local_data_size = int(size)

    def preview(self) -> KernelDescription:
        """What queries see before finalization (parameters not yet added show as references)."""
        specs = tuple(s or ParamSpec(f"parameter {i}", Direction.VX_INPUT, Type.VX_TYPE_REFERENCE)
                      for i, s in enumerate(self.specs))
        return self._describe(specs)

    def finalize(self) -> KernelDescription:
        self._check_open("finalize it again")
        missing = [i for i, s in enumerate(self.specs) if s is None]
        if missing:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"kernel {self.name} cannot be finalized: parameters {missing} were never added")
        self.description = self._describe(tuple(self.specs))
        return self.description

    def _describe(self, specs: tuple[ParamSpec, ...]) -> KernelDescription:
        return KernelDescription(self.name, self.enum, (self.enum >> 12) & 0xFF, specs,
                                 self._validate, self._execute, doc="a user kernel",
                                 release_node=self._release_node, user=self)

    # -- what verification and execution call ---------------------------------------------
    def _call(self, what: str, node: Reference, call: Callable[[], int]) -> None:
        with access.in_user_kernel():
            try:
                status = int(call())
            except VXError as err:
                status = err.status
            except Exception as exc:  # noqa: BLE001 - an application callback must not break the graph
                raise VXError(Status.VX_FAILURE, f"the {what} of user kernel {self.name} raised "
                                                 f"{type(exc).__name__}: {exc}", node) from None
        if status != Status.VX_SUCCESS:
            raise VXError(status, f"the {what} of user kernel {self.name} returned {status_name(status)}", node)

    def _validate(self, v: Validation) -> None:
        node, params = v.node, v.node.params
        v.state["node"] = node
        self._release_node(node)
        metas = [MetaFormat(node.context, spec.vx_type, v.where(i)) if spec.direction == Direction.VX_OUTPUT
                 else None for i, spec in enumerate(v.description.params)]
        try:
            self._call("validator", node, lambda: self.callbacks.validate(node, list(params), metas))
            for index, meta in enumerate(metas):
                if meta is not None and params[index] is not None:
                    apply(v, index, meta)
        finally:
            for meta in metas:
                if meta is not None:
                    meta.destroy()
        data = local_data(node)
        if data is None:
            data = node.local_data = LocalData(self.local_data_size)
        if self.callbacks.init is not None:
            self._call("initializer", node, lambda: self.callbacks.init(node, list(params)))
        if not data.size and not data.pointer:  # an initializer that set neither (or none): the kernel's size
            data.size = self.local_data_size
        data.initialized = True
        data.allocate()

    def _execute(self, params: list, state: dict) -> None:
        node = state["node"]
        self._call("function", node, lambda: self.callbacks.run(node, list(params)))

    def _release_node(self, node: Reference) -> None:
        """Deinit (once per init) and free the local data: before re-verification and at destruction."""
        data = local_data(node)
        if data is None or not data.initialized:
            return
        data.initialized = False
        try:
            if self.callbacks.deinit is not None:
                self._call("deinitializer", node, lambda: self.callbacks.deinit(node, list(node.params)))
        except VXError as err:
            node.context.log(node, err.status, err.message)
        finally:
            data.free()
            data.size = self.local_data_size


# -- checking what a validator said against the output -------------------------------------
def apply(v: Validation, index: int, meta: MetaFormat) -> None:
    """Check output ``index`` against ``meta``; a virtual output takes its meta-data."""
    obj = v.ref(index)
    said = meta.values
    kind = obj.vx_type
    if not said and not getattr(obj, "virtual", False):
        return  # the validator vouches for a real output as it is
    if kind == Type.VX_TYPE_TENSOR:
        declared = v.declared(index)
        dims = tuple(said.get(TensorAttr.VX_TENSOR_DIMS, declared.dims))
        count = said.get(TensorAttr.VX_TENSOR_NUMBER_OF_DIMS, len(dims))
        data_type = said.get(TensorAttr.VX_TENSOR_DATA_TYPE, declared.data_type)
        fpp = said.get(TensorAttr.VX_TENSOR_FIXED_POINT_POSITION, declared.fpp)
        if not dims or 0 in dims[:count] or len(dims) < count or not data_type:
            v.fail(index, Status.VX_ERROR_INVALID_PARAMETERS,
                   f"the validator's meta format leaves the output's dims or data type unknown "
                   f"(dims {list(dims[:count])}, {type_name(data_type)})")
        v.output(index, dims[:count], data_type, fpp)
    elif kind == Type.VX_TYPE_IMAGE:
        want = (said.get(ImageAttr.VX_IMAGE_WIDTH, obj.width), said.get(ImageAttr.VX_IMAGE_HEIGHT, obj.height),
                said.get(ImageAttr.VX_IMAGE_FORMAT, obj.format))
        if obj.virtual:
            _allocating(v, index, lambda: obj.allocate(*want))
        else:
            _same(v, index, Status.VX_ERROR_INVALID_DIMENSION, "size", (obj.width, obj.height), want[:2])
            _same(v, index, Status.VX_ERROR_INVALID_FORMAT, "format", obj.format, want[2])
    elif kind == Type.VX_TYPE_SCALAR:
        _same(v, index, Status.VX_ERROR_INVALID_TYPE, "scalar type", type_name(obj.data_type),
              type_name(said.get(ScalarAttr.VX_SCALAR_TYPE, obj.data_type)))
    elif kind == Type.VX_TYPE_ARRAY:
        item_type = said.get(ArrayAttr.VX_ARRAY_ITEMTYPE, obj.item_type)
        capacity = said.get(ArrayAttr.VX_ARRAY_CAPACITY, obj.capacity)
        if obj.virtual:
            _allocating(v, index, lambda: obj.allocate(item_type, capacity))
        else:
            _same(v, index, Status.VX_ERROR_INVALID_TYPE, "item type", type_name(obj.item_type), type_name(item_type))
            if obj.capacity < capacity:
                v.fail(index, Status.VX_ERROR_INVALID_DIMENSION,
                       f"capacity is {obj.capacity}, the validator needs {capacity}")
    elif kind == Type.VX_TYPE_OBJECT_ARRAY:
        _same(v, index, Status.VX_ERROR_INVALID_TYPE, "item type", type_name(obj.item_type),
              type_name(said.get(ObjectArrayAttr.VX_OBJECT_ARRAY_ITEMTYPE, obj.item_type)))
        _same(v, index, Status.VX_ERROR_INVALID_DIMENSION, "item count", len(obj.items),
              said.get(ObjectArrayAttr.VX_OBJECT_ARRAY_NUMITEMS, len(obj.items)))


def _same(v: Validation, index: int, status: int, what: str, have, want) -> None:
    if have != want:
        v.fail(index, status, f"output {what} is {have}, the validator's meta format says {want}")


def _allocating(v: Validation, index: int, allocate: Callable[[], None]) -> None:
    try:
        allocate()
    except VXError as err:
        v.fail(index, err.status, err.message)
