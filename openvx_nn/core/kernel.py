"""``vx_kernel`` and ``vx_parameter``: the application's handles on kernel
descriptions and on one parameter of a kernel or a node."""
from __future__ import annotations

from .context import Context
from .enums import Status, Type
from .errors import VXError
from .reference import Reference
from .signature import KernelDescription, ParamSpec


class Kernel(Reference):
    vx_type = Type.VX_TYPE_KERNEL

    def __init__(self, context: Context, description: KernelDescription):
        super().__init__(context)
        self.description = description
        self.name = ""

    @property
    def counted(self) -> bool:  # type: ignore[override]
        """A user kernel's handle kept by the context's table (``KernelTable.keep``) counts among the
        application's references only while the application holds it."""
        return self.external > 0

    @classmethod
    def by_name(cls, context: Context, name: str) -> Kernel:
        description = context.kernels.by_name(name)
        if description is None:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"no kernel is named '{name}'", context)
        return cls._handle(context, description)

    @classmethod
    def by_enum(cls, context: Context, enum: int) -> Kernel:
        description = context.kernels.by_enum(enum)
        if description is None:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"no kernel has enum {enum:#x}", context)
        return cls._handle(context, description)

    @classmethod
    def _handle(cls, context: Context, description: KernelDescription) -> Kernel:
        """A new handle on a built-in kernel; a user kernel's one kept handle, retained (made when missing)."""
        if description.user is None:
            return cls(context, description)
        kept = context.kernels.kept(description)
        if kept is not None:
            kept.retain()
            return kept
        kernel = cls(context, description)
        context.kernels.keep(description, kernel)
        return kernel

    def describe(self) -> str:
        return f"kernel {self.description.name} ({self.handle:#x})"

    def parameter(self, index: int) -> Parameter:
        check_index(self.description, index, self)
        return Parameter(self.context, self.description, index, None)


def check_index(description: KernelDescription, index: int, ref: Reference) -> ParamSpec:
    if not 0 <= index < len(description.params):
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"parameter index {index} is out of range for {description.name} "
                      f"(it has {len(description.params)} parameters)", ref)
    return description.params[index]


class Parameter(Reference):
    """Parameter ``index`` of a kernel (``node`` None) or of a node."""

    vx_type = Type.VX_TYPE_PARAMETER

    def __init__(self, context: Context, description: KernelDescription, index: int,
                 node: Reference | None):
        super().__init__(context)
        self.description = description
        self.index = index
        self.node = node
        if node is not None:
            node.hold()

    @property
    def spec(self) -> ParamSpec:
        return self.description.params[self.index]

    @property
    def value(self) -> Reference | None:
        return self.node.params[self.index] if self.node is not None else None

    def on_destroy(self) -> None:
        if self.node is not None:
            self.node.unhold()

    def describe(self) -> str:
        owner = self.node.describe() if self.node is not None else self.description.name
        return f"parameter {self.index} of {owner}"
