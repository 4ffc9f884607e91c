"""``CoreMLError``: a model we cannot read or run, naming the layer, its type and why."""
from __future__ import annotations

from ..errors import Error


class CoreMLError(Error, ValueError):
    """Raised by :func:`openvx_nn.coreml.load` and :meth:`CoreMLModel.predict`."""

    def __init__(self, reason: str, layer: str | None = None, layer_type: str | None = None):
        self.reason = reason
        self.layer = layer
        self.layer_type = layer_type
        where = f"layer '{layer}' ({layer_type}): " if layer is not None else ""
        super().__init__(where + reason)
