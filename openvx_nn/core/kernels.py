"""Kernel tables: the built-in descriptions, their publishers, and each context's own table.

Core never imports upwards.  The description modules (``openvx_nn.operations``, a layer above)
``register`` their descriptions in the catalogue when imported, and each family adds a *publisher*
(``add_publisher``): a function that puts its kernels into a context's :class:`KernelTable`.  A
table runs every publisher once, the first time it is read, so a context created before a family
was imported still gets it.  User kernels (``vxAddUserKernel``, kernel modules, the Python API)
enter the same table through the same ``add``: a built-in kernel and a user kernel are found,
queried, validated and run the same way."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .enums import Status
from .errors import VXError

if TYPE_CHECKING:
    from .signature import KernelDescription

USER_KERNEL_BASE = (0xFFE << 20) - (1 << 32)  # VX_KERNEL_BASE(VX_ID_USER, 0) as the signed vx_enum C sees
KERNEL_MASK = 0xFFF
FIRST_USER_LIBRARY, LIBRARY_MAX = 3, 0xFF

_BY_ENUM: dict[int, KernelDescription] = {}
_BY_NAME: dict[str, KernelDescription] = {}


def register(description: KernelDescription) -> KernelDescription:
    """Add a built-in description to the catalogue (at import of its module)."""
    if description.enum in _BY_ENUM or description.name in _BY_NAME:
        raise ValueError(f"kernel {description.name} ({description.enum:#x}) registered twice")
    _BY_ENUM[description.enum] = description
    _BY_NAME[description.name] = description
    return description


def by_enum(enum: int) -> KernelDescription | None:
    """The built-in description with ``enum`` (the catalogue, not a context's table)."""
    return _BY_ENUM.get(enum)


def by_name(name: str) -> KernelDescription | None:
    return _BY_NAME.get(name)


def all_kernels() -> list[KernelDescription]:
    """Every built-in description, by enum."""
    return sorted(_BY_ENUM.values(), key=lambda d: d.enum)


def kernel_table() -> list[tuple[int, str]]:
    return [(d.enum, d.name) for d in all_kernels()]


def module_count() -> int:
    return len({d.library for d in all_kernels()})


# -- publishers ---------------------------------------------------------------------------
Publisher = Callable[["KernelTable"], None]
_PUBLISHERS: dict[str, Publisher] = {}


def add_publisher(module: str, publish: Publisher) -> None:
    """Make ``publish`` fill every context's table (built-in families call this at import)."""
    if module in _PUBLISHERS:
        raise ValueError(f"kernel module {module} has a publisher already")
    _PUBLISHERS[module] = publish


def family_publisher(prefix: str) -> Publisher:
    """A publisher of every catalogued description whose name starts with ``prefix`` (a family)."""

    def publish(table: KernelTable) -> None:
        for description in all_kernels():
            if description.name.startswith(prefix):
                table.add(description)

    return publish


class KernelTable:
    """One context's kernels by name and by enum, and the modules that published them."""

    def __init__(self) -> None:
        self._by_enum: dict[int, KernelDescription] = {}
        self._by_name: dict[str, KernelDescription] = {}
        self._published: set[str] = set()
        self.modules: dict[str, object] = {}
        """Loaded kernel modules (vxLoadKernels) by the name they were loaded with."""
        self.libraries: dict[str, tuple[object, object]] = {}
        """(publish, unpublish) of modules registered with vxRegisterKernelLibrary."""
        self._next_kernel = 0
        self._next_library = FIRST_USER_LIBRARY
        self._kept: dict[str, object] = {}
        """The one handle object (a ``vx_kernel``) of each published user kernel, by name (:meth:`keep`)."""

    def _sync(self) -> None:
        if len(self._published) != len(_PUBLISHERS):
            for module, publish in list(_PUBLISHERS.items()):
                if module not in self._published:
                    self._published.add(module)
                    publish(self)

    def add(self, description: KernelDescription) -> None:
        """Publish a kernel; a name or enum already in the table is refused."""
        clash = self._by_name.get(description.name) or self._by_enum.get(description.enum)
        if clash is not None:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"kernel {description.name} ({description.enum:#x}) clashes with kernel "
                          f"{clash.name} ({clash.enum:#x}) already in the context")
        self._by_enum[description.enum] = description
        self._by_name[description.name] = description

    def remove(self, description: KernelDescription) -> None:
        """Take a kernel out of the table; its kept handle (:meth:`keep`) lives on only while the application
        holds it."""
        if self._by_name.get(description.name) is description:
            del self._by_name[description.name]
            del self._by_enum[description.enum]
            kept = self._kept.pop(description.name, None)
            if kept is not None:
                kept.unhold()

    def keep(self, description: KernelDescription, handle) -> None:
        """Hold ``handle`` (a ``vx_kernel`` reference) as the one handle of the published user kernel
        ``description`` until :meth:`remove`: as in the sample implementation, a user kernel's handle stays
        valid while the kernel is in the context, even after the application released its last reference to
        it (a module's vxUnpublishKernels may release the handle it got by name, then remove the kernel)."""
        handle.hold()
        self._kept[description.name] = handle

    def kept(self, description: KernelDescription):
        """The kept handle of the published user kernel ``description``, or None."""
        handle = self._kept.get(description.name)
        return handle if handle is not None and handle.alive and handle.description is description else None

    def names(self) -> set[str]:
        self._sync()
        return set(self._by_name)

    def allocate_kernel_id(self) -> int:
        """vxAllocateUserKernelId: the next of VX_KERNEL_BASE(VX_ID_USER, 0) + 0..0xFFF."""
        if self._next_kernel > KERNEL_MASK:
            raise VXError(Status.VX_ERROR_NO_RESOURCES, f"all {KERNEL_MASK + 1} user kernel ids are allocated")
        self._next_kernel += 1
        return USER_KERNEL_BASE + self._next_kernel - 1

    def allocate_library_id(self) -> int:
        """vxAllocateUserKernelLibraryId: the next library id under VX_ID_USER (1 and 2 are
        the library's own NNAPI and CoreML kernels)."""
        if self._next_library > LIBRARY_MAX:
            raise VXError(Status.VX_ERROR_NO_RESOURCES, f"all user kernel library ids up to {LIBRARY_MAX} are allocated")
        self._next_library += 1
        return self._next_library - 1

    def by_name(self, name: str) -> KernelDescription | None:
        self._sync()
        return self._by_name.get(name)

    def by_enum(self, enum: int) -> KernelDescription | None:
        self._sync()
        return self._by_enum.get(enum)

    def all(self) -> list[KernelDescription]:
        self._sync()
        return sorted(self._by_enum.values(), key=lambda d: d.enum)

    def module_count(self) -> int:
        return len({d.library for d in self.all()})

