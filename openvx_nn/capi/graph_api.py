"""Entry points for graphs, nodes, kernels and parameters, and the one generic
typed-node constructor every ``vx*Node``/``vx*Layer`` wrapper calls."""
from __future__ import annotations

import ctypes
import struct

from ..core import cells, execution, native_plan, reference
from ..core.context import Context
from ..core.enums import (
    MAX_KERNEL_NAME,
    GraphAttr,
    KernelAttr,
    NodeAttr,
    ParameterAttr,
    Status,
    Type,
    type_name,
)
from ..core.errors import VXError
from ..core.graph import Graph
from ..core.kernel import Kernel, Parameter
from ..core.node import Node
from ..core.scalar import Scalar, value_size
from ..kernels.support import jit
from . import attributes
from .attributes import Attr
from .binding import ffi, lib
from .entry import blaming, creator_entry, status_entry, value_entry
from .reference_api import target_name

# -- attributes ---------------------------------------------------------------
attributes.register(Type.VX_TYPE_GRAPH, {
    GraphAttr.VX_GRAPH_NUMNODES: Attr("I", lambda g: len(g.nodes)),
    GraphAttr.VX_GRAPH_PERFORMANCE: Attr("fixed", lambda g: g.perf.pack()),
    GraphAttr.VX_GRAPH_NUMPARAMETERS: Attr("I", lambda g: len(g.parameters)),
    GraphAttr.VX_GRAPH_STATE: Attr("i", lambda g: g.state),
})


def _replicate_flags(node: Node) -> bytes:
    """VX_NODE_REPLICATE_FLAGS: a vx_bool per parameter (all false for a node not replicated)."""
    flags = getattr(node, "replicate_flags", None) or (False,) * len(node.params)
    return struct.pack(f"{len(flags)}i", *flags)


def _set_border(node: Node, value: bytes) -> None:
    node.border = value


attributes.register(Type.VX_TYPE_NODE, {
    NodeAttr.VX_NODE_STATUS: Attr("i", lambda n: n.status),
    NodeAttr.VX_NODE_PERFORMANCE: Attr("fixed", lambda n: n.perf.pack()),
    NodeAttr.VX_NODE_BORDER: Attr("fixed", lambda n: n.border, _set_border, 20),
    NodeAttr.VX_NODE_PARAMETERS: Attr("I", lambda n: len(n.params)),
    NodeAttr.VX_NODE_IS_REPLICATED: Attr("i", lambda n: int(getattr(n, "replicas", None) is not None)),
    NodeAttr.VX_NODE_REPLICATE_FLAGS: Attr("fixed", _replicate_flags),
    NodeAttr.VX_NODE_VALID_RECT_RESET: Attr("i", lambda n: 0),
})

attributes.register(Type.VX_TYPE_KERNEL, {
    KernelAttr.VX_KERNEL_PARAMETERS: Attr("I", lambda k: len(k.description.params)),
    KernelAttr.VX_KERNEL_NAME: Attr("text", lambda k: k.description.name, width=MAX_KERNEL_NAME),
    KernelAttr.VX_KERNEL_ENUM: Attr("i", lambda k: k.description.enum),
})


def _parameter_ref(p: Parameter) -> int:
    """VX_PARAMETER_REF hands the application a reference it must release."""
    value = p.value
    if value is None:
        return 0
    value.retain()
    return value.handle


attributes.register(Type.VX_TYPE_PARAMETER, {
    ParameterAttr.VX_PARAMETER_INDEX: Attr("I", lambda p: p.index),
    ParameterAttr.VX_PARAMETER_DIRECTION: Attr("i", lambda p: p.spec.direction),
    ParameterAttr.VX_PARAMETER_TYPE: Attr("i", lambda p: p.spec.vx_type),
    ParameterAttr.VX_PARAMETER_STATE: Attr("i", lambda p: p.spec.state),
    ParameterAttr.VX_PARAMETER_REF: Attr("P", _parameter_ref),
})


def _call_node_callback(address: int, node: Node) -> int:
    return lib.vxnn_call_node_callback(ffi.cast("void *", address), node.handle)


Graph.call_node_callback = staticmethod(_call_node_callback)


def _execute_plan(address: int) -> tuple[int, int]:
    failed = ffi.new("int64_t *")
    status = lib.vxnn_plan_execute(address, failed)
    return status, int(failed[0])


lib.vxnn_plan_count_runs_in(cells.address(jit.native_runs))
# cffi lets go of the GIL around every call; a PYFUNCTYPE call keeps it (native_plan.SMALL_WORK says why)
_run_holding_gil = ctypes.PYFUNCTYPE(ctypes.c_int32, ctypes.c_size_t)(
    int(ffi.cast("uintptr_t", ffi.addressof(lib, "vxnn_plan_run"))))
native_plan.hooks = native_plan.Hooks(lib.vxnn_plan_publish, lib.vxnn_plan_run, _execute_plan, lib.vxnn_plan_claim,
                                      lib.vxnn_plan_unclaim, lib.vxnn_plan_close, lib.vxnn_plan_schedule,
                                      lib.vxnn_plan_wait, _run_holding_gil)


@ffi.def_extern(name="vxnn_native_failed")
def _native_failed(graph, node, status):
    """plan.c: a native kernel failed (the graph is already let go): the node's status and a log line."""
    try:
        with reference.lock:  # log entries reach the application under the model lock (entry.py)
            g = reference.find(graph)
            if isinstance(g, Graph):
                n = reference.find(node)
                g.native_failed(n if isinstance(n, Node) else None, status)
    except Exception as exc:  # noqa: BLE001 - never into C
        print(f"[openvx-nn] internal error reporting a native kernel's failure: {exc!r}", flush=True)
execution.exit_guard = lib.vxnn_register_exit
# Load numba, LLVM and the thread pool during start-up: the C exit handler, registered
# after start-up, then runs before their destructors (see csrc/runtime.c).
execution.prepare_runtime(c_host=bool(lib.vxnn_hosts_python()))


# -- graphs -------------------------------------------------------------------
@creator_entry
def vxnn_create_graph(context):
    return Graph(reference.lookup(context, Context, "context"))


@status_entry(exported="vxVerifyGraph")  # in-process for Python: Ctrl-C reaches the caller as KeyboardInterrupt
def vxnn_verify_graph(graph):
    reference.lookup(graph, Graph, "graph").verify()


# The three run without the model lock (a lookup is one dict read) and are offered in-process.
@status_entry(locked=False, exported="vxProcessGraph")
def vxnn_process_graph(graph):
    return reference.lookup(graph, Graph, "graph").process()


@status_entry(locked=False, exported="vxScheduleGraph")
def vxnn_schedule_graph(graph):
    reference.lookup(graph, Graph, "graph").schedule()


@status_entry(locked=False, exported="vxWaitGraph")
def vxnn_wait_graph(graph):
    return reference.lookup(graph, Graph, "graph").wait()


@value_entry(0)
def vxnn_is_graph_verified(graph):
    return 1 if reference.lookup(graph, Graph, "graph").verified else 0


@status_entry
def vxnn_add_parameter_to_graph(graph, parameter):
    g = reference.lookup(graph, Graph, "graph")
    p = reference.lookup(parameter, Parameter, "parameter")
    g.add_parameter(p.node, p.index)


@status_entry
def vxnn_set_graph_parameter(graph, index, value):
    g = reference.lookup(graph, Graph, "graph")
    g.set_graph_parameter(index, _optional_ref(value))


@creator_entry
def vxnn_get_graph_parameter(graph, index):
    g = reference.lookup(graph, Graph, "graph")
    with blaming(g):
        node, param = g.graph_parameter(index)
        return Parameter(g.context, node.description, param, node)


# -- nodes ----------------------------------------------------------------------
@creator_entry
def vxnn_create_generic_node(graph, kernel):
    g = reference.lookup(graph, Graph, "graph")
    with blaming(g):
        k = reference.lookup(kernel, Kernel, "kernel")
        return Node(g, k.description)


@status_entry
def vxnn_remove_node(node_ptr):
    if node_ptr == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_REFERENCE, "pointer to the node is NULL")
    node = reference.lookup(int(node_ptr[0]), Node, "node")
    if node.graph is not None:
        for replica in getattr(node, "replicas", None) or ():  # vxReplicateNode's copies go with it
            node.graph.remove_node(replica)
        node.graph.remove_node(node)
    node.release()
    node_ptr[0] = 0


@status_entry
def vxnn_assign_node_callback(node, callback):
    n = reference.lookup(node, Node, "node")
    address = int(ffi.cast("uintptr_t", callback))
    if address and n.callback:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                      f"{n.describe()} already has a callback; assign NULL first", n)
    n.callback = address
    if n.graph is not None:
        n.graph.settings_changed()  # a graph with a callback runs on the Python path: its plan is rebuilt


@value_entry(0)
def vxnn_retrieve_node_callback(node):
    return reference.lookup(node, Node, "node").callback


@status_entry
def vxnn_set_node_target(node, target, target_string):
    n = reference.lookup(node, Node, "node")
    n.target = target_name(target, target_string, n)


# -- kernels and parameters -------------------------------------------------------
@creator_entry
def vxnn_get_kernel_by_name(context, name):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        if name == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "kernel name is NULL")
        return Kernel.by_name(ctx, ffi.string(name).decode(errors="replace"))


@creator_entry
def vxnn_get_kernel_by_enum(context, enum):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Kernel.by_enum(ctx, enum)


@creator_entry
def vxnn_get_kernel_parameter(kernel, index):
    k = reference.lookup(kernel, Kernel, "kernel")
    with blaming(k):
        return k.parameter(index)


@creator_entry
def vxnn_get_node_parameter(node, index):
    n = reference.lookup(node, Node, "node")
    with blaming(n):
        from ..core.kernel import check_index
        check_index(n.description, index, n)
        return Parameter(n.context, n.description, index, n)


def _optional_ref(handle):
    return reference.lookup(handle, reference.Reference, "value") if handle else None


@status_entry
def vxnn_set_node_parameter(node, index, value):
    reference.lookup(node, Node, "node").set_parameter(index, _optional_ref(value))


@status_entry
def vxnn_set_parameter_by_reference(parameter, value):
    p = reference.lookup(parameter, Parameter, "parameter")
    if p.node is None:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{p.describe()} is a kernel's, not a node's", p)
    p.node.set_parameter(p.index, _optional_ref(value))


# -- typed node constructors --------------------------------------------------------
ARG_REF, ARG_ENUM, ARG_SIZE, ARG_FLOAT32, ARG_STRUCT = range(5)
_PACK = {ARG_ENUM: "i", ARG_SIZE: "N", ARG_FLOAT32: "f"}
_SIZE_MASK = (1 << (8 * struct.calcsize("N"))) - 1


def _argument_value(ctx, graph, spec, arg):
    """A C argument of a typed constructor as the parameter object it stands for."""
    kind = arg.kind
    if kind == ARG_REF:
        return _optional_ref(int(arg.ref)), False
    if kind == ARG_STRUCT:
        if arg.p == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{spec.name} pointer is NULL")
        expected = value_size(spec.scalar_type)
        if arg.size != expected:  # checked before reading: never read past the caller's struct
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"size of {spec.name} is {arg.size} bytes, expected {expected} "
                          f"(sizeof({type_name(spec.scalar_type).replace('VX_TYPE_', '').lower()}))")
        raw = bytes(ffi.buffer(arg.p, arg.size))
    else:
        value = arg.f if kind == ARG_FLOAT32 else arg.i
        if kind == ARG_SIZE:  # a vx_size travels as int64: read it back as the unsigned value it was
            value &= _SIZE_MASK
        raw = struct.pack(_PACK[kind], value)
    return Scalar(ctx, spec.scalar_type, raw), True


@creator_entry
def vxnn_create_node(graph, kernel_enum, count, args):
    g = reference.lookup(graph, Graph, "graph")
    with blaming(g):
        description = g.context.kernels.by_enum(kernel_enum)
        if description is None:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"no kernel has enum {kernel_enum:#x}")
        values = []
        try:
            for k in range(count):
                spec = description.params[description.param_index(k)]
                values.append(_argument_value(g.context, g, spec, args[k]))
        except VXError:
            for obj, internal in values:
                if internal:
                    obj.release()
            raise
        node = Node(g, description)
        try:
            for k, (obj, internal) in enumerate(values):  # NULL for a required one is refused here
                node.set_parameter(description.param_index(k), obj)
        except VXError as err:
            node.graph.remove_node(node)
            node.release()
            raise VXError(err.status, f"{description.name}: {err.message}") from None
        finally:
            for obj, internal in values:
                if internal:
                    obj.release()
        return node

