"""What a kernel's validator sees of one node at verify time.

Validators read input meta-data and scalar values through a ``Validation``,
raise with ``fail`` (the message names the node, kernel and parameter index)
and declare each output with ``output``: a virtual output gets its unknown
meta-data filled in and its memory, a real output must already match.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from .enums import Status, type_name
from .errors import VXError
from .node import Node


class Meta(NamedTuple):
    """A tensor's meta-data: OpenVX-order dims, element type, fixed point position.

    A named tuple, not a frozen dataclass: verify makes several per node, and a
    frozen dataclass costs a few times more to create."""

    dims: tuple[int, ...]
    data_type: int
    fpp: int

    @property
    def rank(self) -> int:
        return len(self.dims)

    def describe(self) -> str:
        return f"{list(self.dims)} {type_name(self.data_type).replace('VX_TYPE_', '')} fpp {self.fpp}"


_new = tuple.__new__  # a Meta without the named tuple's Python-level constructor: verify makes several per node


def tensor_meta(tensor) -> Meta:
    return _new(Meta, (tuple(tensor.dims), tensor.data_type, tensor.fpp))


class Validation:
    def __init__(self, node: Node):
        self.node = node
        self.description = node.description
        node.state = self.state = {}
        """Values the validator derives for the executor (inferred strides, layouts)."""

    # -- reading -----------------------------------------------------------
    def present(self, index: int) -> bool:
        return self.node.params[index] is not None

    def ref(self, index: int):
        return self.node.params[index]

    def tensor(self, index: int) -> Meta | None:
        """Meta-data of input tensor ``index`` (None for an absent optional one)."""
        tensor = self.node.params[index]
        if tensor is None:
            return None
        meta = tensor_meta(tensor)
        if not meta.dims or 0 in meta.dims or not meta.data_type:
            self.fail(index, Status.VX_ERROR_INVALID_PARAMETERS,
                      f"input tensor has unknown meta-data ({meta.describe()}): nothing writes it")
        return meta

    def declared(self, index: int) -> Meta:
        """What the application declared for tensor ``index``: for a virtual
        tensor dims may be 0 and the data type VX_TYPE_INVALID (unknown)."""
        tensor = self.node.params[index]
        if tensor.virtual:
            dims, data_type, fpp = tensor.declared
            return _new(Meta, (tuple(dims), data_type, fpp))
        return tensor_meta(tensor)

    def scalar(self, index: int) -> Any:
        scalar = self.node.params[index]
        return None if scalar is None else scalar.value

    def scalar_bytes(self, index: int) -> bytes | None:
        scalar = self.node.params[index]
        return None if scalar is None else scalar.bytes

    # -- failing -----------------------------------------------------------
    def where(self, index: int) -> str:
        spec = self.description.params[index]
        return f"{self.node.describe()} parameter {index} ({spec.name})"

    def fail(self, index: int, status: int, message: str) -> None:
        raise VXError(status, f"{self.where(index)}: {message}", self.node)

    def require(self, condition: bool, index: int, status: int, message: str) -> None:
        if not condition:
            self.fail(index, status, message)

    def one_of(self, index: int, value: Any, allowed: Sequence, what: str) -> None:
        if value not in allowed:
            names = ", ".join(getattr(a, "name", str(a)) for a in allowed)
            self.fail(index, Status.VX_ERROR_INVALID_VALUE, f"{what} {value!r} is invalid (expected {names})")

    # -- outputs -----------------------------------------------------------
    def output(self, index: int, dims: Sequence[int], data_type: int, fpp: int) -> None:
        """Declare output tensor ``index``; fills in a virtual tensor's unknowns."""
        tensor = self.node.params[index]
        if tensor.virtual:
            try:  # checks against what was declared, fills unknowns; the memory plan gives storage
                tensor.allocate(dims, int(data_type), int(fpp), store=False)
            except VXError as err:
                self.fail(index, err.status, err.message)
            return
        want = Meta(tuple(int(d) for d in dims), int(data_type), int(fpp))
        have = tensor_meta(tensor)
        self._match_dims(index, have.dims, want.dims)
        self._match_type(index, have, want)

    def _match_dims(self, index: int, have: Sequence[int], want: Sequence[int]) -> None:
        if tuple(have) != tuple(want):
            self.fail(index, Status.VX_ERROR_INVALID_DIMENSION,
                      f"output dims are {list(have)}, expected {list(want)}")

    def _match_type(self, index: int, have: Meta, want: Meta) -> None:
        if have.data_type != want.data_type:
            self.fail(index, Status.VX_ERROR_INVALID_TYPE,
                      f"output data type is {type_name(have.data_type)}, expected {type_name(want.data_type)}")
        if have.fpp != want.fpp:
            self.fail(index, Status.VX_ERROR_INVALID_FORMAT,
                      f"output fixed point position is {have.fpp}, expected {want.fpp}")
