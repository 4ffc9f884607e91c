"""``vxImportKernelFromURL``: a kernel whose body is a model read from a URL (a folder path).

The formats are the front ends' (a layer above this one): each is named here by the module that turns a URL
into a kernel, imported at the first call, so that a C host that never imports a model never loads a parser.
"""
from __future__ import annotations

import importlib

from ..core import reference
from ..core.context import Context
from ..core.enums import ParameterAttr, Status, Type
from ..core.errors import VXError
from ..core.meta_format import MetaFormat
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry
from .reference_api import c_text

IMPORTERS = {"nnef": "openvx_nn.nnef.import_kernel", "vx_khr_nnef": "openvx_nn.nnef.import_kernel"}
"""Type string -> the module whose ``import_kernel(context, url)`` returns the kernel (or raises VXError)."""


@creator_entry
def vxnn_import_kernel_from_url(context, kind, url):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        if kind == ffi.NULL or url == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "the type or the URL is NULL")
        name = c_text(kind)
        module = IMPORTERS.get(name)
        if module is None:
            raise VXError(Status.VX_ERROR_NOT_SUPPORTED, f"type '{name}' is not a format this library imports "
                                                         f"(expected one of {', '.join(sorted(IMPORTERS))})")
        return importlib.import_module(module).import_kernel(ctx, c_text(url))


# -- what an imported kernel tells about its parameters before any graph exists ----------------------------------
def _parameter_meta(p) -> int:
    """VX_PARAMETER_META_FORMAT of a kernel's parameter: a meta format holding the tensor the import declared for
    it (number of dims, dims, data type), owned by the kernel (the application does not release it)."""
    user = p.description.user
    declared = getattr(user, "parameter_metas", None)
    if declared is None:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                      f"VX_PARAMETER_META_FORMAT: parameter {p.index} of kernel {p.description.name} declares no "
                      "meta format (only imported kernels do)", p)
    made = user.__dict__.setdefault("parameter_meta_objects", {})
    meta = made.get(p.index)
    if meta is None or not meta.alive:
        meta = made[p.index] = MetaFormat(p.context, Type.VX_TYPE_TENSOR, f"parameter {p.index}")
        for attribute, value in declared[p.index].items():
            meta.set(attribute, value)
    return meta.handle


attributes.register(Type.VX_TYPE_PARAMETER, {ParameterAttr.VX_PARAMETER_META_FORMAT: Attr("P", _parameter_meta)})
