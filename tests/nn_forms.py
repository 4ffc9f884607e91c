"""Running one NN layer through the C API in its two graph forms: the typed
constructor and a generic node built with the seed's parameter numbering."""
from __future__ import annotations

from vxhelp import as_ref, release, status

FORMS = ("typed", "generic")

_SCALARS = {"enum": ("vx_enum", "VX_TYPE_ENUM"), "size": ("vx_size", "VX_TYPE_SIZE"),
            "float32": ("vx_float32", "VX_TYPE_FLOAT32")}


def make_scalar(vx, ctx, kind, value):
    """A scalar for a generic node: ("enum"|"size"|"float32", value) or (struct_type_name, cdata)."""
    if kind in _SCALARS:
        ctype, type_name = _SCALARS[kind]
        s = vx.vxCreateScalar(ctx, getattr(vx, type_name), vx.ffi.new(f"{ctype} *", value))
    else:
        s = vx.vxCreateScalarWithSize(ctx, getattr(vx, kind), value, vx.ffi.sizeof(value[0]))
    assert status(vx, s) == vx.VX_SUCCESS
    return s


def run_layer(vx, ctx, form, kernel, typed, params, expect=None):
    """Build one node in a new graph and process it.

    ``typed(graph)`` makes the node with the typed constructor; ``params`` lists
    the kernel parameters in the seed's numbering: references (or None for an
    unset optional one) and (kind, value) pairs that become scalars."""
    graph = vx.vxCreateGraph(ctx)
    made = []
    if form == "typed":
        node = typed(graph)
    else:
        k = vx.vxGetKernelByEnum(ctx, kernel)
        count = vx.ffi.new("vx_uint32 *")
        assert vx.vxQueryKernel(k, vx.VX_KERNEL_PARAMETERS, count, 4) == vx.VX_SUCCESS
        assert count[0] == len(params)
        node = vx.vxCreateGenericNode(graph, k)
        for index, value in enumerate(params):
            if isinstance(value, tuple):
                value = make_scalar(vx, ctx, *value)
                made.append(value)
            if value is not None:
                assert vx.vxSetParameterByIndex(node, index, as_ref(vx, value)) == vx.VX_SUCCESS
        made.append(k)
    assert status(vx, node) == vx.VX_SUCCESS
    rc = vx.vxProcessGraph(graph)
    release(vx, node, *made, graph)
    assert rc == (vx.VX_SUCCESS if expect is None else expect)
