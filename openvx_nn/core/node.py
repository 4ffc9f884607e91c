"""``vx_node``: one kernel instance in a graph, with its parameter values."""
from __future__ import annotations

from .enums import Status, Type, type_name
from .errors import VXError
from .kernel import check_index
from .perf import Perf
from .reference import Reference
from .signature import KernelDescription


class Node(Reference):
    vx_type = Type.VX_TYPE_NODE

    def __init__(self, graph: Reference, description: KernelDescription):
        super().__init__(graph.context)
        self.graph: Reference | None = graph  # its graph.Graph
        self.description = description
        self.params: list[Reference | None] = [None] * len(description.params)
        self.status = Status.VX_SUCCESS
        self.perf = Perf()
        self.callback = 0  # address of a vx_nodecomplete_f, 0 = none
        self.border = bytes(20)
        self.target = "any"
        self.state: dict = {}  # what the validator derived for the executor (strides, layouts)
        graph.add_node(self)

    def describe(self) -> str:
        label = f"'{self.name}' " if self.name else ""
        return f"node {label}({self.description.name}, {self.handle:#x})"

    def set_parameter(self, index: int, value: Reference | None) -> None:
        """Set parameter ``index`` (None clears an optional one); the graph must verify again."""
        spec = check_index(self.description, index, self)
        if value is None and not spec.optional:
            # The sample implementation's rule: a required parameter has to exist.
            raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                          f"parameter {index} ({spec.name}) of {self.describe()} is required: "
                          f"NULL is allowed only for optional parameters", self)
        if value is not None:
            if value.vx_type == Type.VX_TYPE_ERROR:
                raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                              f"parameter {index} ({spec.name}) of {self.describe()} is an error object", self)
            if value.vx_type != spec.vx_type and spec.vx_type != Type.VX_TYPE_REFERENCE:
                raise VXError(Status.VX_ERROR_INVALID_TYPE,
                              f"parameter {index} ({spec.name}) of {self.describe()} must be a "
                              f"{type_name(spec.vx_type)}, got a {type_name(value.vx_type)}", self)
            if spec.scalar_type and getattr(value, "data_type", spec.scalar_type) != spec.scalar_type:
                raise VXError(Status.VX_ERROR_INVALID_TYPE,
                              f"parameter {index} ({spec.name}) of {self.describe()} must be a scalar of "
                              f"{type_name(spec.scalar_type)}, got {type_name(value.data_type)}", self)
            value.hold()
        old = self.params[index]
        self.params[index] = value
        if old is not None:
            old.unhold()
        if self.graph is not None:
            self.graph.invalidate()

    def detach(self) -> None:
        """Leave the graph (vxRemoveNode or the graph's destruction)."""
        self.graph = None

    def on_destroy(self) -> None:
        if self.description.release_node is not None:
            self.description.release_node(self)
        for i, value in enumerate(self.params):
            self.params[i] = None
            if value is not None:
                value.unhold()
