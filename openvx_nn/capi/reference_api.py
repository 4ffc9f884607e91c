"""Entry points for contexts, references, error objects and the log."""
from __future__ import annotations

import struct

from ..core import compat, reference
from ..core.compat import ContextAttrExt
from ..core.context import (
    EXTENSIONS,
    IMPLEMENTATION,
    MAX_TENSOR_DIMS,
    VENDOR_ID,
    VERSION,
    Context,
    ErrorObject,
)
from ..core.enums import (
    MAX_IMPLEMENTATION_NAME,
    Border,
    BorderPolicy,
    ContextAttr,
    Hint,
    ReferenceAttr,
    Status,
    Target,
    Type,
)
from ..core.errors import VXError
from . import attributes
from .attributes import Attr
from .binding import ffi, lib
from .entry import creator_entry, status_entry, value_entry, void_entry


def c_text(pointer) -> str:
    """A C string as str; bytes that are not UTF-8 are kept (as surrogates) so
    that they go back to C unchanged."""
    return ffi.string(pointer).decode("utf-8", "surrogateescape")


# -- attributes ------------------------------------------------------------
def _name_pointer(ref: reference.Reference) -> int:
    """VX_REFERENCE_NAME answers a vx_char* that stays valid while the object lives
    (until its name changes)."""
    buf = getattr(ref, "_c_name", None)
    data = ref.name.encode("utf-8", "surrogateescape")
    if buf is None or ffi.string(buf) != data:
        buf = ffi.new("char[]", data + b"\0")
        ref._c_name = buf  # type: ignore[attr-defined]
    return int(ffi.cast("uintptr_t", buf))


attributes.register(Type.VX_TYPE_REFERENCE, {
    ReferenceAttr.VX_REFERENCE_COUNT: Attr("I", lambda r: max(r.external, 1) if isinstance(r, ErrorObject)
                                           else r.external),
    ReferenceAttr.VX_REFERENCE_TYPE: Attr("i", lambda r: r.vx_type),
    ReferenceAttr.VX_REFERENCE_NAME: Attr("P", _name_pointer),
})


def _kernel_table(ctx: Context) -> bytes:
    rows = []
    for d in ctx.kernels.all():
        rows.append(int(d.enum).to_bytes(4, "little", signed=True) + d.name.encode().ljust(256, b"\0"))
    return b"".join(rows)


def _set_border(ctx: Context, value: bytes) -> None:
    (mode,) = struct.unpack_from("=i", value)
    if mode not in Border._value2member_map_:
        raise VXError(Status.VX_ERROR_INVALID_VALUE,
                      f"VX_CONTEXT_IMMEDIATE_BORDER mode {mode:#x} is not a vx_border_e", ctx)
    ctx.immediate_border = value


def _set_border_policy(ctx: Context, value: int) -> None:
    if value not in BorderPolicy._value2member_map_:
        raise VXError(Status.VX_ERROR_INVALID_VALUE,
                      f"VX_CONTEXT_IMMEDIATE_BORDER_POLICY {value:#x} is not a vx_border_policy_e", ctx)
    ctx.immediate_border_policy = value


def _set_compat(ctx: Context, value: int) -> None:
    ctx.nn_compat = int(compat.check_setting(value))


attributes.register(Type.VX_TYPE_CONTEXT, {
    ContextAttr.VX_CONTEXT_VENDOR_ID: Attr("H", lambda c: VENDOR_ID),
    ContextAttr.VX_CONTEXT_VERSION: Attr("H", lambda c: VERSION),
    ContextAttr.VX_CONTEXT_UNIQUE_KERNELS: Attr("I", lambda c: len(c.kernels.all())),
    ContextAttr.VX_CONTEXT_MODULES: Attr("I", lambda c: c.kernels.module_count()),
    ContextAttr.VX_CONTEXT_REFERENCES: Attr("I", lambda c: c.reference_count),
    ContextAttr.VX_CONTEXT_IMPLEMENTATION: Attr("text", lambda c: IMPLEMENTATION,
                                                width=MAX_IMPLEMENTATION_NAME),
    ContextAttr.VX_CONTEXT_EXTENSIONS_SIZE: Attr("N", lambda c: len(" ".join(EXTENSIONS)) + 1),
    ContextAttr.VX_CONTEXT_EXTENSIONS: Attr("text", lambda c: c.extensions),
    ContextAttr.VX_CONTEXT_MAX_TENSOR_DIMS: Attr("N", lambda c: MAX_TENSOR_DIMS),
    ContextAttr.VX_CONTEXT_UNIQUE_KERNEL_TABLE: Attr("fixed", _kernel_table),
    ContextAttr.VX_CONTEXT_IMMEDIATE_BORDER: Attr("fixed", lambda c: c.immediate_border, _set_border, 20),
    ContextAttr.VX_CONTEXT_IMMEDIATE_BORDER_POLICY: Attr("i", lambda c: c.immediate_border_policy,
                                                         _set_border_policy),
    ContextAttrExt.VX_CONTEXT_OPENVX_NN_COMPAT: Attr("i", lambda c: compat.resolve(c.nn_compat),
                                                     _set_compat),
})


# -- entry points ------------------------------------------------------------
@creator_entry
def vxnn_create_context():
    return Context.create()


@value_entry(0)
def vxnn_get_context(handle):
    return reference.lookup(handle, reference.Reference, "reference").context.handle


@status_entry
def vxnn_release(handle_ptr, vx_type):
    if handle_ptr == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_REFERENCE, "pointer to the reference is NULL")
    handle = int(handle_ptr[0])
    obj = reference.lookup(handle, reference.class_for(vx_type))
    obj.release()
    handle_ptr[0] = 0


@status_entry
def vxnn_retain(handle):
    reference.lookup(handle, reference.Reference, "reference").retain()


def _lookup_typed(handle, vx_type):
    return reference.lookup(handle, reference.class_for(vx_type))


@status_entry
def vxnn_query(handle, vx_type, attribute, ptr, size):
    attributes.query(_lookup_typed(handle, vx_type), vx_type, attribute, ptr, size)


@status_entry
def vxnn_set_attribute(handle, vx_type, attribute, ptr, size):
    attributes.set_attribute(_lookup_typed(handle, vx_type), vx_type, attribute, ptr, size)


@value_entry(Status.VX_FAILURE)
def vxnn_get_status(handle):
    if not handle:
        return Status.VX_ERROR_NO_RESOURCES
    obj = reference.find(handle)
    if obj is None:
        return Status.VX_ERROR_INVALID_REFERENCE
    return obj.status if isinstance(obj, ErrorObject) else Status.VX_SUCCESS


@status_entry
def vxnn_set_name(handle, name):
    obj = reference.lookup(handle, reference.Reference, "reference")
    if name == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"name for {obj.describe()} is NULL", obj)
    obj.set_name(c_text(name))


@status_entry
def vxnn_hint(handle, hint, data, size):
    obj = reference.lookup(handle, reference.Reference, "reference")
    if hint not in Hint._value2member_map_:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED, f"hint {hint:#x} is not supported", obj)
    # Performance hints are accepted and have no effect: there is one target.


@status_entry
def vxnn_directive(handle, directive):
    obj = reference.lookup(handle, reference.Reference, "reference")
    try:
        obj.context.directive(directive)
    except VXError as err:
        err.ref = obj
        raise


TARGET_NAMES = ("any", "cpu", "openvx-nn")


def target_name(target: int, target_string, ref: reference.Reference) -> str:
    """The library target an application names: VX_TARGET_ANY, or VX_TARGET_STRING
    with one of TARGET_NAMES (case-insensitive).  Shared by context and node targets."""
    if target == Target.VX_TARGET_ANY:
        return "any"
    if target != Target.VX_TARGET_STRING:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED, f"target {target:#x} is not supported", ref)
    if target_string == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "target string is NULL", ref)
    name = c_text(target_string)
    if name.lower() not in TARGET_NAMES:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                      f"target '{name}' is not supported (known: {', '.join(TARGET_NAMES)})", ref)
    return name.lower()


@status_entry
def vxnn_set_immediate_target(handle, target, target_string):
    ctx = reference.lookup(handle, Context, "context")
    ctx.immediate_target = target_name(target, target_string, ctx)


@void_entry
def vxnn_add_log_entry(handle, status, text):
    obj = reference.find(handle)
    if obj is None or text == ffi.NULL:
        return
    obj.context.log(obj, status, c_text(text))


@void_entry
def vxnn_register_log_callback(handle, callback, reentrant):
    ctx = reference.lookup(handle, Context, "context")
    if callback == ffi.NULL:
        ctx.set_log_sink(None, True)
        return
    address = int(ffi.cast("uintptr_t", callback))

    def sink(context, ref, status, text):
        lib.vxnn_emit_log(ffi.cast("void *", address), context.handle, ref.handle if ref else 0,
                          status, text.encode("utf-8", "surrogateescape"))

    ctx.set_log_sink(sink, bool(reentrant))
