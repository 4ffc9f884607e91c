"""Entry points for user kernels, meta formats, kernel modules and user structs.

C function pointers become ``core.user_kernel.Callbacks`` that call them through the
``vxnn_call_*`` helpers of csrc/runtime.c; everything else is the object model's.
"""
from __future__ import annotations

import struct

from ..core import reference
from ..core.context import Context
from ..core.enums import (
    ArrayAttr,
    ImageAttr,
    KernelAttr,
    NodeAttr,
    ObjectArrayAttr,
    ScalarAttr,
    Status,
    TensorAttr,
    Type,
    status_name,
)
from ..core.errors import VXError
from ..core.kernel import Kernel
from ..core.meta_format import MetaFormat
from ..core.node import Node
from ..core.user_kernel import Callbacks, UserKernel, local_data
from . import attributes
from .attributes import Attr
from .binding import ffi, lib
from .entry import blaming, creator_entry, status_entry, value_entry
from .reference_api import c_text

# -- attributes ------------------------------------------------------------------------------
_META_FORMATS = {
    TensorAttr.VX_TENSOR_NUMBER_OF_DIMS: "N", TensorAttr.VX_TENSOR_DIMS: "sizes",
    TensorAttr.VX_TENSOR_DATA_TYPE: "i", TensorAttr.VX_TENSOR_FIXED_POINT_POSITION: "b",
    ImageAttr.VX_IMAGE_WIDTH: "I", ImageAttr.VX_IMAGE_HEIGHT: "I", ImageAttr.VX_IMAGE_FORMAT: "I",
    ScalarAttr.VX_SCALAR_TYPE: "i",
    ArrayAttr.VX_ARRAY_ITEMTYPE: "i", ArrayAttr.VX_ARRAY_CAPACITY: "N",
    ObjectArrayAttr.VX_OBJECT_ARRAY_ITEMTYPE: "i", ObjectArrayAttr.VX_OBJECT_ARRAY_NUMITEMS: "N",
}
"""The C layout of each meta format attribute (those of the object type it describes)."""


def _meta_getter(attribute: int):
    return lambda meta: meta.get(attribute)


attributes.register(Type.VX_TYPE_META_FORMAT, {a: Attr(f, _meta_getter(a)) for a, f in _META_FORMATS.items()})


def _user(kernel: Kernel, action: str) -> UserKernel:
    user = kernel.description.user
    if user is None:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                      f"{kernel.describe()} is a built-in kernel: cannot {action}", kernel)
    return user


def _set_kernel_local_size(kernel: Kernel, size: int) -> None:
    with blaming(kernel):
        _user(kernel, "set VX_KERNEL_LOCAL_DATA_SIZE").set_local_data_size(size)


def _user_node(node: Node, attribute: str):
    data = local_data(node)
    if data is None:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                      f"{attribute} of {node.describe()}: only nodes of user kernels have local data "
                      f"(and only once verified)", node)
    return data


def _set_node_local_size(node: Node, size: int) -> None:
    _user_node(node, "VX_NODE_LOCAL_DATA_SIZE").size = int(size)


def _set_node_local_pointer(node: Node, pointer: int) -> None:
    _user_node(node, "VX_NODE_LOCAL_DATA_PTR").pointer = int(pointer)


attributes.register(Type.VX_TYPE_KERNEL, {
    KernelAttr.VX_KERNEL_LOCAL_DATA_SIZE: Attr("N", lambda k: getattr(k.description.user, "local_data_size", 0),
                                               _set_kernel_local_size),
})
attributes.register(Type.VX_TYPE_NODE, {
    NodeAttr.VX_NODE_LOCAL_DATA_SIZE: Attr("N", lambda n: getattr(local_data(n), "size", 0), _set_node_local_size),
    NodeAttr.VX_NODE_LOCAL_DATA_PTR: Attr("P", lambda n: getattr(local_data(n), "pointer", 0), _set_node_local_pointer),
})


# -- user kernels -------------------------------------------------------------------------------
def _handles(objects: list):
    return ffi.new("uintptr_t[]", [o.handle if o is not None else 0 for o in objects] or [0])


def _node_call(address: int):
    """A C vx_kernel_f (or initializer, deinitializer) as a ``Callbacks`` member; None for NULL."""
    if not address:
        return None
    function = ffi.cast("void *", address)

    def call(node, params):
        return lib.vxnn_call_kernel(function, node.handle, _handles(params), len(params))

    return call


def _validator(address: int):
    function = ffi.cast("void *", address)

    def call(node, params, metas):
        return lib.vxnn_call_validator(function, node.handle, _handles(params), len(params), _handles(metas))

    return call


def _address(pointer) -> int:
    return int(ffi.cast("uintptr_t", pointer))


@status_entry
def vxnn_allocate_user_kernel_id(context, out):
    ctx = reference.lookup(context, Context, "context")
    if out == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "pKernelEnumId is NULL", ctx)
    with blaming(ctx):
        out[0] = ctx.kernels.allocate_kernel_id()


@status_entry
def vxnn_allocate_user_kernel_library_id(context, out):
    ctx = reference.lookup(context, Context, "context")
    if out == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "pLibraryId is NULL", ctx)
    with blaming(ctx):
        out[0] = ctx.kernels.allocate_library_id()


@creator_entry
def vxnn_add_user_kernel(context, name, enumeration, function, count, validate, init, deinit):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        if name == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "kernel name is NULL")
        text = c_text(name)
        if len(text.encode("utf-8", "surrogateescape")) >= 256:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"kernel name '{text[:40]}...' is longer than VX_MAX_KERNEL_NAME - 1")
        if not _address(function):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"kernel function of {text} is NULL")
        if not _address(validate):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"validator of {text} is NULL")
        callbacks = Callbacks(_node_call(_address(function)), _validator(_address(validate)),
                              _node_call(_address(init)), _node_call(_address(deinit)))
        return add_user_kernel(ctx, UserKernel(text, enumeration, count, callbacks))


def add_user_kernel(ctx: Context, user: UserKernel) -> Kernel:
    """The kernel handle of a new user kernel, its name and enum checked against the context's."""
    clash = ctx.kernels.by_name(user.name) or ctx.kernels.by_enum(user.enum)
    if clash is not None:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"kernel {user.name} ({user.enum:#x}) clashes with kernel {clash.name} ({clash.enum:#x})")
    return Kernel(ctx, user.preview())


@status_entry
def vxnn_add_parameter_to_kernel(kernel, index, direction, data_type, state):
    k = reference.lookup(kernel, Kernel, "kernel")
    with blaming(k):
        user = _user(k, "add parameters")
        user.add_parameter(index, direction, data_type, state)
        k.description = user.preview()


@status_entry
def vxnn_finalize_kernel(kernel):
    k = reference.lookup(kernel, Kernel, "kernel")
    with blaming(k):
        user = _user(k, "finalize it")
        description = user.finalize()
        try:
            k.context.kernels.add(description)
        except VXError:
            user.description = None
            raise
        k.description = description
        k.context.kernels.keep(description, k)  # the handle by name and by enum from now on


@status_entry
def vxnn_remove_kernel(kernel):
    k = reference.lookup(kernel, Kernel, "kernel")
    with blaming(k):
        user = _user(k, "remove it")
        if user.description is not None:
            k.context.kernels.remove(user.description)  # lets go of the kept handle
        if k.external > 0:  # a kept handle the application released already goes with the table's hold
            k.release()


# -- meta formats ---------------------------------------------------------------------------------
@status_entry
def vxnn_set_meta_format_attribute(meta, attribute, ptr, size):
    m = reference.lookup(meta, MetaFormat, "meta")
    with blaming(m):
        fmt = _META_FORMATS.get(attribute)
        if fmt is None:
            raise VXError(Status.VX_ERROR_NOT_SUPPORTED, f"attribute {attribute:#x} is not a meta format attribute")
        m.check_attribute(attribute)
        if ptr == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"NULL pointer for attribute {attribute:#x}")
        raw = bytes(ffi.buffer(ptr, size))
        if fmt == "sizes":
            step = struct.calcsize("N")
            if size == 0 or size % step:
                raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                              f"VX_TENSOR_DIMS needs a whole number of vx_size, size is {size}")
            value = struct.unpack(f"{size // step}N", raw)
            count = m.values.get(TensorAttr.VX_TENSOR_NUMBER_OF_DIMS)
            m.set(attribute, value[:count] if count else value)
            return
        if size != struct.calcsize(fmt):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"attribute {attribute:#x} is {struct.calcsize(fmt)} bytes, size is {size}")
        (value,) = struct.unpack(fmt, raw)
        m.set(attribute, value)


@status_entry
def vxnn_set_meta_format_from_reference(meta, exemplar):
    m = reference.lookup(meta, MetaFormat, "meta")
    ex = reference.lookup(exemplar, reference.Reference, "exemplar")
    with blaming(m):
        m.set_from(ex)


# -- kernel modules ----------------------------------------------------------------------------------
def _module_path(name: str) -> str:
    """``name`` as given when it is a path, else ``lib<name>.so`` for the loader's search path."""
    return name if "/" in name or name.endswith(".so") else f"lib{name}.so"


def _publish(ctx: Context, name: str, publish, handle) -> None:
    """Run a module's publish; on failure, take back what it added and report its status."""
    before = ctx.kernels.names()
    status = lib.vxnn_call_publish(publish, ctx.handle)
    added = ctx.kernels.names() - before
    if status != Status.VX_SUCCESS:
        for kernel_name in added:
            ctx.kernels.remove(ctx.kernels.by_name(kernel_name))
        lib.vxnn_module_close(handle)
        raise VXError(status, f"vxPublishKernels of kernel module '{name}' failed with {status_name(status)}", ctx)
    ctx.kernels.modules[name] = (handle, added)


@status_entry
def vxnn_load_kernels(context, module):
    ctx = reference.lookup(context, Context, "context")
    if module == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "module name is NULL", ctx)
    name = c_text(module)
    if name in ctx.kernels.modules:
        raise VXError(Status.VX_ERROR_INVALID_MODULE, f"kernel module '{name}' is already loaded", ctx)
    if name in ctx.kernels.libraries:
        publish, _ = ctx.kernels.libraries[name]
        _publish(ctx, name, publish, ffi.NULL)
        return
    path = _module_path(name)
    error = ffi.new("char[]", 512)
    handle = lib.vxnn_module_open(path.encode("utf-8", "surrogateescape"), error, len(error))
    if handle == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_MODULE,
                      f"kernel module '{name}' cannot be loaded from {path}: {c_text(error)}", ctx)
    publish = lib.vxnn_module_symbol(handle, b"vxPublishKernels")
    if publish == ffi.NULL:
        lib.vxnn_module_close(handle)
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"kernel module '{name}' ({path}) has no entry point vxPublishKernels", ctx)
    _publish(ctx, name, publish, handle)


@status_entry
def vxnn_unload_kernels(context, module):
    ctx = reference.lookup(context, Context, "context")
    if module == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "module name is NULL", ctx)
    name = c_text(module)
    if name not in ctx.kernels.modules:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"kernel module '{name}' is not loaded", ctx)
    handle, added = ctx.kernels.modules.pop(name)
    if name in ctx.kernels.libraries:
        unpublish = ctx.kernels.libraries[name][1]
    else:
        unpublish = lib.vxnn_module_symbol(handle, b"vxUnpublishKernels")
    status = lib.vxnn_call_publish(unpublish, ctx.handle) if unpublish != ffi.NULL else Status.VX_SUCCESS
    for kernel_name in added:  # whatever the module's unpublish left behind
        description = ctx.kernels.by_name(kernel_name)
        if description is not None:
            ctx.kernels.remove(description)
    if handle != ffi.NULL:
        lib.vxnn_module_close(handle)
    if status != Status.VX_SUCCESS:
        raise VXError(status, f"vxUnpublishKernels of kernel module '{name}' failed with {status_name(status)}", ctx)


@status_entry
def vxnn_register_kernel_library(context, module, publish, unpublish):
    ctx = reference.lookup(context, Context, "context")
    if module == ffi.NULL or publish == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "module name or publish function is NULL", ctx)
    ctx.kernels.libraries[c_text(module)] = (publish, unpublish)


# -- user structs ---------------------------------------------------------------------------------------
@value_entry(Type.VX_TYPE_INVALID)
def vxnn_register_user_struct(context, size, name):
    ctx = reference.lookup(context, Context, "context")
    text = c_text(name) if name != ffi.NULL else ""
    enum = ctx.user_structs.register(size, text)
    if enum == Type.VX_TYPE_INVALID:
        ctx.log(ctx, Status.VX_ERROR_INVALID_PARAMETERS,
                f"vxRegisterUserStruct: cannot register a struct of {size} bytes named '{text}' "
                f"(size 0, name taken, or every user struct enum in use)")
    return enum


@status_entry
def vxnn_get_user_struct_name(context, type_enum, out, size):
    if not context:  # the sample implementation's status for a missing context here
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "vxGetUserStructNameByEnum: context is NULL")
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        if out == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "type_name is NULL")
        data = ctx.user_structs.name_of(type_enum).encode("utf-8", "surrogateescape") + b"\0"
        if size < len(data):
            raise VXError(Status.VX_ERROR_NO_MEMORY, f"name_size {size} is too small for '{data[:-1].decode()}' "
                                                     f"({len(data)} bytes with the NUL)")
        ffi.memmove(out, data, len(data))


@status_entry
def vxnn_get_user_struct_enum(context, name, out):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        if name == ffi.NULL:  # no name: no struct found (the sample implementation's status)
            raise VXError(Status.VX_FAILURE, "type_name is NULL: no user struct is named so")
        if out == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "user_struct_type is NULL")
        text = c_text(name)
        enum = ctx.user_structs.enum_of(text)
        if enum is None:
            raise VXError(Status.VX_FAILURE, f"no user struct is named '{text}'")
        out[0] = enum
