"""``Graph``: an OpenVX graph whose methods add nodes and return their outputs."""
from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import vx
from .arguments import constant_array, instance, integer
from .arguments import shape as checked_shape
from .formats import DTYPES, vx_type
from .layers import LayerMethods
from .reference import Reference, call, call_on, create, ffi
from .tensor import Tensor, create_tensor, create_virtual
from .tensor_ops import TensorOpMethods
from .user_kernel import UserKernel

_SCALAR_CTYPES = {vx.VX_TYPE_FLOAT32: "vx_float32", vx.VX_TYPE_ENUM: "vx_enum", vx.VX_TYPE_SIZE: "vx_size"}
_STATES = {vx.VX_GRAPH_STATE_UNVERIFIED: "unverified", vx.VX_GRAPH_STATE_VERIFIED: "verified",
           vx.VX_GRAPH_STATE_RUNNING: "running", vx.VX_GRAPH_STATE_ABANDONED: "abandoned",
           vx.VX_GRAPH_STATE_COMPLETED: "completed"}


@dataclass
class Node(Reference):
    """A node of a graph: its kernel and the objects at its parameter indices."""

    _handle: object
    kernel: str
    params: dict[int, Reference] = field(default_factory=dict)


class Graph(Reference, LayerMethods, TensorOpMethods):
    """A graph of a :class:`Context`.  Each layer or tensor operation method adds
    one node and returns its output tensor: ``out`` when given, else a new
    virtual tensor whose shape and format the API infers where it can (the
    library fills the rest in at :meth:`verify`).

    >>> with ctx.graph() as g:
    ...     y = g.softmax(g.relu(x), out=ctx.tensor(shape=x.shape, dtype=x.dtype))
    ...     g.process()
    """

    def __init__(self, handle, context: Reference):
        super().__init__(handle)
        self.context = context
        self.nodes: list[Node] = []
        self._owned: list[Reference] = []
        self._kernels: list[UserKernel] = []
        self._turn = threading.Lock()  # one run() at a time: its writes, the run and its reads are one turn

    # -- building ------------------------------------------------------------------
    def virtual(self, shape: Sequence[int] | None = None, dtype=None, fixed_point_position: int = 0) -> Tensor:
        """A virtual tensor of this graph (shape/dtype None: left for verification)."""
        if shape is not None:
            shape = checked_shape(shape, "shape", minimum=0)
        fixed_point_position = integer(fixed_point_position, "fixed_point_position")
        tensor = create_virtual(self.handle, shape, dtype, fixed_point_position)
        self._owned.append(tensor)
        return tensor

    def _output(self, out: Tensor | None, shape, like: Tensor | None, fpp: int | None = None,
                dtype=None) -> Tensor:
        if out is not None:
            return out
        if shape is not None and min(shape, default=1) <= 0:
            shape = None  # the settings give no output: verification says why, with the library's status
        _, in_dtype, in_fpp = like.known() if like is not None else (None, None, 0)
        dtype = dtype if dtype is not None else in_dtype
        if dtype is None:
            return self.virtual(shape, None, 0)
        if np.dtype(dtype).kind == "f":
            fpp = 0
        return self.virtual(shape, dtype, in_fpp if fpp is None else fpp)

    def _inputs(self, x, out) -> tuple[Tensor, Tensor | None]:
        """A layer's input and optional output, checked to be tensors."""
        return instance(x, Tensor, "x"), instance(out, Tensor, "out", optional=True)

    def _constant(self, value, name: str, like: Tensor | None, optional: bool = False, default=None) -> Tensor | None:
        """``value`` as a tensor: a Tensor itself, or raw values (array, nested lists)
        as a constant tensor of ``like``'s data type and fixed point position
        (else of ``default`` or the values' own type), owned by this graph."""
        if value is None and optional:
            return None
        if isinstance(value, Tensor):
            return value
        if not isinstance(value, (np.ndarray, list, tuple)):
            raise TypeError(f"{name} must be a Tensor, a NumPy array or nested lists, got {type(value).__name__}")
        _, dtype, fpp = like.known() if like is not None else (None, None, 0)
        if dtype is None and default is not None and np.asarray(value).dtype.kind in "iu":
            dtype = default
        array = constant_array(value, name, dtype)
        if array.dtype not in DTYPES:
            raise TypeError(f"{name} has dtype {array.dtype}, which no OpenVX tensor holds "
                            f"(give a NumPy array of one of {', '.join(str(d) for d in DTYPES)})")
        tensor = create_tensor(self.context.handle, array.shape, array.dtype, 0 if array.dtype.kind == "f" else fpp)
        self._owned.append(tensor)
        tensor.write(array)
        return tensor

    def _scalar(self, data_type: int, value) -> Reference:
        ctype = _SCALAR_CTYPES[data_type]
        scalar = Reference(create("vxCreateScalar", self.context.handle, data_type, ffi.new(f"{ctype} *", value)))
        self._owned.append(scalar)
        return scalar

    def _node(self, constructor: str, kernel: str, params: dict[int, Reference | None], *args) -> Node:
        handle = create(constructor, self.handle, *args)
        node = Node(handle, kernel, {i: p for i, p in params.items() if p is not None})
        self.nodes.append(node)
        return node

    def node(self, kernel: UserKernel, *args) -> Node:
        """A node of user kernel ``kernel`` (:meth:`Context.add_kernel`) with ``args`` in its
        parameter order: Tensors, Python numbers for scalar parameters, None for optional ones."""
        kernel = instance(kernel, UserKernel, "kernel")
        if len(args) != len(kernel.params):
            raise ValueError(f"kernel {kernel.kernel_name} takes {len(kernel.params)} arguments, got {len(args)}")
        values: dict[int, Reference] = {}
        for i, (p, arg) in enumerate(zip(kernel.params, args)):
            if arg is None:
                continue
            if p.kind == "scalar":
                raw = np.asarray(arg, p.dtype)
                scalar = Reference(create("vxCreateScalar", self.context.handle, vx_type(p.dtype), ffi.from_buffer(raw)))
                self._owned.append(scalar)
                values[i] = scalar
            else:
                values[i] = instance(arg, Tensor, f"argument {i}")
        node = Node(create("vxCreateGenericNode", self.handle, kernel.handle), kernel.kernel_name, values)
        self.nodes.append(node)
        self._kernels.append(kernel)  # its callbacks must outlive the node, even if the kernel is removed
        for i, value in values.items():
            call("vxSetParameterByIndex", node.handle, i, value.ref)
        return node

    # -- running ----------------------------------------------------------------------
    def verify(self) -> None:
        """Check the graph and fill in its virtual tensors (raises ``VXError``)."""
        call_on("vxVerifyGraph", self)

    def process(self) -> None:
        """Run the graph once, verifying it first if needed."""
        call_on("vxProcessGraph", self)

    def run(self, inputs: Mapping[Tensor, np.ndarray], outputs: Sequence[Tensor]) -> list[np.ndarray]:
        """Write ``inputs`` ({tensor: array}), process, and return copies of ``outputs``, as one turn: threads
        calling ``run`` on one graph at once each get their own inputs' results (``process`` alone is
        serialized too, but another thread may write or run between it and your reads)."""
        if not isinstance(inputs, Mapping):
            raise TypeError(f"inputs must map tensors to arrays, got {type(inputs).__name__}")
        for tensor in list(inputs) + list(outputs):
            instance(tensor, Tensor, "inputs and outputs")
        with self._turn:
            for tensor, array in inputs.items():
                tensor.write(array)
            self.process()
            return [tensor.numpy() for tensor in outputs]

    def schedule(self) -> None:
        """Start the graph in the background; :meth:`wait` for it."""
        call_on("vxScheduleGraph", self)

    def wait(self) -> None:
        call_on("vxWaitGraph", self)

    @property
    def state(self) -> str:
        """'unverified', 'verified', 'running', 'completed' or 'abandoned'."""
        out = ffi.new("vx_enum *")
        call("vxQueryGraph", self.handle, vx.VX_GRAPH_STATE, out, ffi.sizeof("vx_enum"))
        return _STATES.get(out[0], str(out[0]))

    # -- graph parameters ---------------------------------------------------------------
    def add_parameter(self, tensor: Reference, node: Node | None = None) -> int:
        """Make ``tensor``'s place in ``node`` (default: the first node that uses it)
        a graph parameter; returns the parameter's index."""
        for candidate in ([node] if node is not None else self.nodes):
            for index, value in candidate.params.items():
                if value is tensor:
                    count = ffi.new("vx_uint32 *")
                    call("vxQueryGraph", self.handle, vx.VX_GRAPH_NUMPARAMETERS, count, 4)
                    parameter = create("vxGetParameterByIndex", candidate.handle, index)
                    try:
                        call("vxAddParameterToGraph", self.handle, parameter)
                    finally:
                        call("vxReleaseReference", ffi.new("vx_reference *", ffi.cast("vx_reference", parameter)))
                    return int(count[0])
        raise ValueError("the object is not a parameter of any node of this graph")

    def set_parameter(self, index: int, value: Reference) -> None:
        """Replace graph parameter ``index`` by ``value`` (e.g. the next batch's tensor)."""
        index, value = integer(index, "index", 0), instance(value, Reference, "value")
        call("vxSetGraphParameterByIndex", self.handle, index, value.ref)

    def close(self) -> None:
        """Release the nodes, the graph's virtual tensors and scalars, then the graph."""
        if self.closed:
            return
        for obj in reversed(self.nodes + self._owned):
            obj.close()
        self.nodes.clear()
        self._owned.clear()
        super().close()
