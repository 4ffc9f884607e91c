"""vxCopyTensorPatch without Python: a tensor's layout published to C (``csrc/tensor_copy.c``).

After a copy on the Python path, the tensor's data address, dims, strides, element size and the cells C
must watch are published in the native plans' table under its handle; the next copy of a well-formed
patch is done in C (0.5 us instead of about 20). The layout is current while the storage epoch keeps its
value (any tensor's memory moved: swap, allocation, memory plan) and the tensor is alive; otherwise C
hands the call to Python, which checks it, copies, and publishes afresh. A block replaced or withdrawn is
kept, with the array it points into, until no C copy holds it (its word 0 counts them).
"""
from __future__ import annotations

import numpy as np

from . import cells, native_plan
from .tensor import Tensor

RANK = 6
WORDS = 14 + RANK
SWEEP_EVERY = 64
"""Publications between two sweeps of the layouts of released tensors."""


class Layout:
    """A published layout: its words (C reads them) and the arrays they point into."""

    __slots__ = ("alive", "keep", "words")

    def __init__(self, t: Tensor, array: np.ndarray):
        words = cells.aligned(WORDS)
        rank = array.ndim
        words[1:8] = (array.__array_interface__["data"][0], rank, array.itemsize, cells.address(cells.GLOBAL, cells.EPOCH),
                      Tensor.storage_epoch, cells.address(t.root.write_counter), cells.address(t.alive_cell))
        words[8:8 + rank] = array.shape
        words[14:14 + rank] = array.strides
        self.words, self.alive, self.keep = words, t.alive_cell, (array, t.root.write_counter)

    @property
    def address(self) -> int:
        return cells.address(self.words)

    @property
    def in_use(self) -> bool:
        return bool(self.words[0])


_published: dict[int, Layout] = {}
_count = [0]


def publish(t: Tensor) -> None:
    """Publish ``t``'s current layout for C's copies (nothing without the C layer, or for a virtual tensor,
    one without storage, or of a rank or strides C does not take)."""
    if native_plan.hooks is None or t.virtual:
        return
    array = t.array
    if array is None or not 1 <= array.ndim <= RANK or min(array.strides, default=0) < 0:
        return
    layout = Layout(t, array)
    old = _published.get(t.handle)
    _published[t.handle] = layout
    native_plan.publish(t.handle, layout)
    if old is not None:
        native_plan.keep_while_used(old)
    _count[0] += 1
    if _count[0] % SWEEP_EVERY == 0:
        _sweep()


def _sweep() -> None:
    """Withdraw the layouts of released tensors (C refuses them already: their alive cell is 0)."""
    for handle in [h for h, layout in _published.items() if not layout.alive[0]]:
        native_plan.retire(handle, _published.pop(handle))
