"""Tensors: N-dimensional data in NumPy storage, views of it, application
memory, and virtual tensors whose meta-data a graph infers.

Layout.  ``dims`` is in OpenVX order, dimension 0 moving fastest.  ``array``
has ``shape == dims`` in that same axis order (axis 0 has the smallest
stride), so kernels index ``array[x, y, channel, batch]``.  A tensor's own
storage is a zeroed Fortran-order array, which is OpenVX's packed layout.

One class, four kinds fixed at creation:

- normal (vxCreateTensor): owns its storage.
- view (vxCreateTensorFromView): has no storage; ``array`` slices the
  parent's *current* array on every access, so writes are seen both ways and
  a swapped parent handle is followed.  A view keeps its parent's rank; when
  it is given fewer dims than the rank, the higher dims are taken whole.  It
  holds a library reference to its parent, so the parent may be released
  first.  Data type and fixed point position are always the parent's.
- from handle (vxCreateTensorFromHandle): ``array`` is the application's
  memory with its byte strides (stride[0] = element size, each stride at
  least the previous one times the previous dim, so elements never overlap).
  vxSwapTensorHandle replaces the memory; NULL takes it back, after which
  ``array`` (hence copy and map) fails with VX_ERROR_NO_MEMORY.  A normal
  tensor may swap too: it then becomes a from-handle tensor with packed
  strides, and the first swap returns the address of its own storage, which
  stays allocated until the tensor is destroyed.  A swap is
  refused (VX_FAILURE) while a map of the tensor or of any view of it is open.
- virtual (vxCreateVirtualTensor): rank (0), dims (0) and data type
  (VX_TYPE_INVALID) may be unknown; the fixed point position is checked only
  when the type is known.  There is no storage until the graph calls
  ``allocate`` at verify; before that ``array`` fails with
  VX_ERROR_OPTIMIZED_AWAY.  The application never reads or writes a virtual
  tensor (copy and map check ``virtual``, not storage); only kernels use
  ``array``.  A view of a virtual tensor is allowed once the parent's dims are
  known; it is virtual, belongs to the same graph and allocates through its
  parent.  A virtual tensor refers to its graph without holding it.

Failures raise ``VXError`` with the object concerned when it exists; the
creators raise before any object is made, so a failed create leaves nothing
behind.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from . import cells
from .access import Mappings, check_memory_type
from .context import MAX_TENSOR_DIMS, Context
from .datatypes import TENSOR_TYPES, check_fixed_point, dtype_of
from .enums import Status, Type, type_name
from .errors import VXError, invalid_parameters
from .reference import Reference

Sizes = tuple[int, ...]
Wrap = Callable[[int, Sequence[int], Sequence[int], np.dtype], np.ndarray]
"""Makes an array of (shape, byte strides, dtype) over an application address
without copying (``capi.memory.user_array``): the model never touches pointers."""

UNKNOWN_TYPE = Type.VX_TYPE_INVALID
_MAX_BYTES = int(np.iinfo(np.intp).max)
_TYPE_NAMES = ", ".join(type_name(t) for t in TENSOR_TYPES)


# -- argument checks shared by creators, views and patches -----------------------
def check_rank(n: int, low: int, high: int = MAX_TENSOR_DIMS,
               status: int = Status.VX_ERROR_INVALID_DIMENSION, ref: Reference | None = None) -> None:
    if not low <= n <= high:
        of = f" for {ref.describe()} of rank {high}" if ref is not None else ""
        raise VXError(status, f"number_of_dims {n} is out of range{of} (expected {low}..{high})", ref)


def _check_dims(dims: Sequence[int] | None, n: int, unknown_ok: bool = False) -> Sizes:
    if dims is None:
        raise invalid_parameters(f"dims is NULL with number_of_dims {n}")
    sizes = tuple(map(int, dims))
    least = 0 if unknown_ok else 1
    if sizes and min(sizes) < least:
        i = next(i for i, size in enumerate(sizes) if size < least)
        raise VXError(Status.VX_ERROR_INVALID_DIMENSION, f"dims[{i}] is {sizes[i]} (expected at least {least})")
    return sizes


_valid_formats: set[tuple[int, int]] = set()
"""(data type, fixed point position) pairs already checked: verify checks one per virtual tensor."""


def _check_type(data_type: int, fpp: int, unknown_ok: bool = False) -> None:
    if (data_type, fpp) in _valid_formats or (unknown_ok and data_type == UNKNOWN_TYPE):
        return
    if data_type not in TENSOR_TYPES:
        raise VXError(Status.VX_ERROR_INVALID_TYPE,
                      f"data type {type_name(data_type)} is not a tensor type (expected one of {_TYPE_NAMES})")
    check_fixed_point(data_type, fpp)
    _valid_formats.add((int(data_type), int(fpp)))


def _check_meta(n: int, dims: Sequence[int] | None, data_type: int, fpp: int) -> Sizes:
    """The checks of a tensor with storage: known rank, dims and type."""
    check_rank(n, 1)
    sizes = _check_dims(dims, n)
    _check_type(data_type, fpp)
    return sizes


def check_strides(strides: Sequence[int] | None, shape: Sizes, itemsize: int, what: str,
                  ref: Reference | None = None) -> Sizes:
    """Byte strides of application memory: ascending and non-overlapping, stride[0]
    the element size, and the whole span addressable."""
    if strides is None:
        raise invalid_parameters(f"{what} is NULL", ref)
    if strides[0] != itemsize:
        raise invalid_parameters(f"{what}[0] is {strides[0]} (expected the element size {itemsize})", ref)
    for i in range(1, len(shape)):
        least = strides[i - 1] * shape[i - 1]
        if strides[i] < least:
            raise invalid_parameters(f"{what}[{i}] is {strides[i]}, which overlaps dimension {i - 1} "
                                     f"(expected at least {what}[{i - 1}] * {shape[i - 1]} = {least})", ref)
    span = strides[-1] * shape[-1]
    if span > _MAX_BYTES:
        raise invalid_parameters(f"{what} spans {span} bytes, more than the address space", ref)
    return tuple(int(s) for s in strides)


def check_region(t: Tensor, n: int, start: Sequence[int] | None, end: Sequence[int] | None,
                 what: str) -> tuple[Sizes, Sizes]:
    """``start``/``end`` of a box in ``t``'s lowest ``n`` dims: start[i] < end[i] <= dims[i]."""
    rank = len(t.dims)
    check_rank(n, 1, rank, Status.VX_ERROR_INVALID_PARAMETERS, t)
    if start is None or end is None:
        raise invalid_parameters(f"{what} {'start' if start is None else 'end'} is NULL "
                                 f"for {t.describe()}", t)
    for i, (s, e, size) in enumerate(zip(start, end, t.dims)):
        if e > size:
            raise invalid_parameters(f"{what} end {e} exceeds dimension {i} of size {size} "
                                     f"of {t.describe()}", t)
        if s >= e:
            raise invalid_parameters(f"{what} start {s} is not below end {e} in dimension {i} "
                                     f"of {t.describe()}", t)
    return tuple(start), tuple(end)


def _zeros(dims: Sizes, data_type: int) -> np.ndarray:
    dtype = dtype_of(data_type)
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > _MAX_BYTES:
        raise VXError(Status.VX_ERROR_NO_MEMORY,
                      f"dims {list(dims)} of {type_name(data_type)} need {nbytes} bytes, "
                      "more than the address space")
    try:
        return np.zeros(dims, dtype, order="F")
    except MemoryError:
        raise VXError(Status.VX_ERROR_NO_MEMORY,
                      f"cannot allocate {nbytes} bytes for dims {list(dims)}") from None


# -- the object ------------------------------------------------------------------
class Tensor(Reference):
    """A tensor of any kind; create it with the class methods, not the constructor."""

    vx_type = Type.VX_TYPE_TENSOR
    storage_epoch = 0
    """Counts storage changes of any tensor (swap, allocation): graphs rebind their runners when it moves."""

    def __init__(self, context: Context, dims: Sizes, data_type: int, fpp: int, *,
                 storage: np.ndarray | None = None, virtual: bool = False,
                 graph: Reference | None = None, parent: Tensor | None = None,
                 view_start: Sizes = (), wrap: Wrap | None = None, strides: Sizes = ()):
        super().__init__(context)
        self.dims = dims
        self._data_type = data_type
        self._fpp = fpp
        self.declared = (dims, data_type, fpp)  # unknowns included: what allocate() must agree with
        self.virtual = virtual
        self.graph = graph
        self.parent = parent
        self.view_start = view_start
        self._storage = storage
        self._wrap = wrap  # from-handle tensors only
        self._strides = strides
        self._address = 0
        self._own_storage: np.ndarray | None = None  # a swapped normal tensor's storage, kept for the app
        self._placed = False  # the storage is a slice of a graph's arena (virtual roots only)
        self.maps = Mappings()
        self.pins = 0  # open maps of this tensor and its views, counted on the root: they block swaps
        self._writes = cells.counter()  # C-visible: native plans bump it (see ``writes``)
        self._alive = cells.counter()  # C-visible: 1 until released (``native_copy``'s layouts check it)
        self._alive[0] = 1

    @property
    def writes(self) -> int:
        """Counted on the root: grows with every write (copy, unmap, swap, node output, native or not)."""
        return int(self._writes[0])

    @writes.setter
    def writes(self, value: int) -> None:
        self._writes[0] = value

    @property
    def write_counter(self) -> np.ndarray:
        """The int64 behind :attr:`writes`, which a native plan bumps and checks without Python."""
        return self._writes

    @property
    def alive_cell(self) -> np.ndarray:
        """An int64 that is 1 until the tensor is released: C's copies (``native_copy``) check it."""
        return self._alive

    # -- creators ----------------------------------------------------------------
    @classmethod
    def create(cls, context: Context, n: int, dims: Sequence[int] | None, data_type: int,
               fpp: int) -> Tensor:
        sizes = _check_meta(n, dims, data_type, fpp)
        return cls(context, sizes, data_type, fpp, storage=_zeros(sizes, data_type))

    @classmethod
    def create_virtual(cls, graph: Reference, n: int, dims: Sequence[int] | None, data_type: int,
                       fpp: int) -> Tensor:
        check_rank(n, 0)
        sizes = _check_dims(dims, n, unknown_ok=True) if n else ()
        _check_type(data_type, fpp, unknown_ok=True)
        return cls(graph.context, sizes, data_type, fpp, virtual=True, graph=graph)

    @classmethod
    def from_handle(cls, context: Context, n: int, dims: Sequence[int] | None, data_type: int,
                    fpp: int, strides: Sequence[int] | None, address: int, memory_type: int,
                    wrap: Wrap) -> Tensor:
        sizes = _check_meta(n, dims, data_type, fpp)
        check_memory_type(memory_type)
        byte_strides = check_strides(strides, sizes, dtype_of(data_type).itemsize, "stride")
        tensor = cls(context, sizes, data_type, fpp, wrap=wrap, strides=byte_strides)
        tensor._attach(address)
        return tensor

    @classmethod
    def from_view(cls, parent: Tensor, n: int, start: Sequence[int] | None,
                  end: Sequence[int] | None) -> Tensor:
        if parent.virtual and not all(parent.dims):
            raise invalid_parameters(f"dims {list(parent.dims)} of virtual {parent.describe()} are not "
                                     "known yet, so it cannot be viewed", parent)
        low, high = check_region(parent, n, start, end, "view")
        low += (0,) * (len(parent.dims) - n)
        high += parent.dims[n:]
        view = cls(parent.context, tuple(e - s for s, e in zip(low, high)), parent.data_type, parent.fpp,
                   virtual=parent.virtual, graph=parent.graph, parent=parent, view_start=low)
        parent.hold()
        return view

    # -- meta-data -----------------------------------------------------------------
    @property
    def data_type(self) -> int:
        return self.parent.data_type if self.parent is not None else self._data_type

    @property
    def fpp(self) -> int:
        return self.parent.fpp if self.parent is not None else self._fpp

    def meta(self) -> tuple[Sizes, int, int]:
        return self.dims, self.data_type, self.fpp

    @property
    def root(self) -> Tensor:
        """The tensor that has the memory: itself unless it is a view."""
        return self if self.parent is None else self.parent.root

    # -- data ------------------------------------------------------------------------
    @property
    def placed(self) -> bool:
        """Whether the storage is a slice of a graph's arena (:meth:`place`)."""
        return self._placed

    @property
    def has_memory(self) -> bool:
        return self.parent.has_memory if self.parent is not None else self._storage is not None

    @property
    def array(self) -> np.ndarray:
        """The data, ``shape == dims``, axis 0 = dimension 0; writes go to the tensor."""
        if self.parent is not None:
            return self.parent.array[tuple(slice(s, s + d) for s, d in zip(self.view_start, self.dims))]
        if self._storage is not None:
            return self._storage
        if self.virtual:
            raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                          f"virtual {self.describe()} has no data outside its graph", self)
        raise VXError(Status.VX_ERROR_NO_MEMORY,
                      f"{self.describe()} has no memory: its handle is NULL", self)

    def allocate(self, dims: Sequence[int], data_type: int, fpp: int, store: bool = True) -> None:
        """Give a virtual tensor its inferred meta-data and zeroed storage (graph verify).

        What was declared at creation must agree; unknowns are filled.  The same
        meta-data again keeps the storage, so re-verifying a graph keeps its data.
        A view allocates its parent.  With ``store`` False new meta-data leave the
        tensor without storage: the graph's memory plan gives it (:meth:`place`).
        """
        if not self.virtual:
            raise invalid_parameters(f"{self.describe()} is not virtual; it needs no allocation", self)
        try:
            check_rank(len(dims), 1)
            sizes = _check_dims(dims, len(dims))
            _check_type(data_type, fpp)
        except VXError as err:
            err.ref = self
            raise
        declared_dims, declared_type, declared_fpp = self.declared
        if declared_dims and declared_dims != sizes and (
                len(sizes) != len(declared_dims) or any(k and k != d for k, d in zip(declared_dims, sizes))):
            raise VXError(Status.VX_ERROR_INVALID_DIMENSION,
                          f"dims {list(sizes)} do not match the declared {list(declared_dims)} "
                          f"of {self.describe()}", self)
        if declared_type != UNKNOWN_TYPE and (data_type, fpp) != (declared_type, declared_fpp):
            raise VXError(Status.VX_ERROR_INVALID_TYPE,
                          f"{type_name(data_type)} with fixed point position {fpp} does not match the "
                          f"declared {type_name(declared_type)} with {declared_fpp} "
                          f"of {self.describe()}", self)
        if self.parent is not None:
            self.parent.allocate(self.parent.dims, data_type, fpp, store)
            return
        if self._storage is None or self.meta() != (sizes, data_type, fpp):
            moved = self._storage is not None or store  # no storage before or after: nothing moved
            self._storage = _zeros(sizes, data_type) if store else None
            self._placed = False
            self._writes[0] += 1
            if moved:
                storage_moved()
        self.dims, self._data_type, self._fpp = sizes, data_type, fpp

    def place(self, storage: np.ndarray | None, announce: bool = True) -> None:
        """Put a virtual root tensor's data in ``storage`` (a slice of its graph's arena), or,
        with None, give it zeroed storage of its own unless it has some (the graph's memory plan).

        The meta-data stay; the contents are undefined until a node writes them.  ``announce``
        False: the caller places several and calls :func:`storage_moved` once after.
        """
        if storage is None:
            if self._storage is not None and not self._placed:
                return
            self._storage, self._placed = _zeros(self.dims, self._data_type), False
        else:
            if storage.shape != self.dims or storage.dtype != dtype_of(self._data_type):
                raise invalid_parameters(f"storage {storage.shape} {storage.dtype} does not fit "
                                         f"{self.describe()}", self)
            self._storage, self._placed = storage, True
        self._writes[0] += 1
        if announce:
            storage_moved()

    # -- application memory ------------------------------------------------------
    def _attach(self, address: int) -> None:
        self._address = address
        self._storage = (self._wrap(address, self.dims, self._strides, dtype_of(self._data_type))
                         if address else None)
        self._writes[0] += 1
        storage_moved()

    def swap_handle(self, address: int, wrap: Wrap | None = None) -> int:
        """Use the application memory at ``address`` (0: none) and return the previous address.

        A tensor made by vxCreateTensor adopts ``wrap`` and the packed strides on
        its first swap; the address it returns then is that of its own storage,
        which it keeps (valid for the application) until it is destroyed.
        """
        if self.parent is not None:
            raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                          f"{self.describe()} is a view; only its root tensor's handle can be swapped", self)
        if self.virtual:
            raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                          f"virtual {self.describe()} has no application memory to swap", self)
        if self.pins:
            raise VXError(Status.VX_FAILURE,
                          f"{self.describe()} has {self.pins} open mapping(s); unmap before swapping", self)
        if self._wrap is None:
            if wrap is None:
                raise invalid_parameters(f"{self.describe()} cannot take application memory here", self)
            self._own_storage = self._storage
            self._address = self._storage.__array_interface__["data"][0]
            self._strides = tuple(self._storage.strides)
            self._wrap = wrap
        previous = self._address
        self._attach(address)
        return previous

    # -- lifetime --------------------------------------------------------------------
    def on_destroy(self) -> None:
        self._alive[0] = 0
        if len(self.maps):
            # The application still has pointers into this memory: keep it (and the
            # parent a view addresses) until the last unmap; the handle is already invalid.
            _mapped_after_release[self.handle] = self
            return
        if self.parent is not None:
            self.parent.unhold()

    def unmapped(self) -> None:
        """One map of this tensor ended: release what a destroyed tensor kept for it."""
        self.root.pins -= 1
        self.root.writes += 1
        if not self.alive and not len(self.maps):
            _mapped_after_release.pop(self.handle, None)
            if self.parent is not None:
                self.parent.unhold()


def storage_moved() -> None:
    """Some tensor's storage changed address: cached pointers (bound calls, native plans) are stale."""
    Tensor.storage_epoch += 1
    cells.moved(Tensor.storage_epoch)


_mapped_after_release: dict[int, Tensor] = {}
"""Tensors whose last reference was released while mapped, by handle: only unmap still reaches them."""


def mapped_after_release(handle: int) -> Tensor | None:
    """The released tensor ``handle`` named if it still has open maps, else None."""
    return _mapped_after_release.get(handle)


def assign(target: np.ndarray, values: np.ndarray) -> None:
    """``target[...] = values``: a front end's model inputs and outputs in and out of tensors. A large contiguous
    copy goes through the kernels' byte loop (``kernels.copy_run``): NumPy's goes through glibc's ``memcpy``, 8 to
    13 times slower when the two addresses lie 1 to 31 bytes apart modulo 4096 (``native.copy_bytes``)."""
    global _copy_run
    if _copy_run is None:  # the kernels (numba) are loaded by the time a graph's values move
        from ..kernels import copy_run
        _copy_run = copy_run
    if not _copy_run(values, target):
        target[...] = values


_copy_run: Callable[[np.ndarray, np.ndarray], bool] | None = None
"""``kernels.copy_run``, imported on first use (an import statement cost microseconds on each copy of a run)."""
