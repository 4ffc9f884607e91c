"""The one entry point behind every generated stub (csrc/build_capi.py): functions
of the standard that openvx-nn declares and exports but does not implement."""
from __future__ import annotations

from ..core import reference
from ..core.enums import Status
from ..core.errors import VXError
from .entry import creator_entry


@creator_entry
def vxnn_not_implemented(ref):
    """Always fails: logged against ``ref``'s context, whose error object for
    VX_ERROR_NOT_IMPLEMENTED a creator returns (NULL when ``ref`` is no live object)."""
    obj = reference.find(ref)
    owner = obj if obj is not None and obj.alive else None
    raise VXError(Status.VX_ERROR_NOT_IMPLEMENTED, "not implemented by openvx-nn", owner)
