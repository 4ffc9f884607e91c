"""``CoreMLError``: a model we cannot read or run, naming the layer, its type and why."""
from __future__ import annotations

from ..api.graph_builder import BuildError


class CoreMLError(BuildError):
    """Raised by :func:`openvx_nn.coreml.load` and :meth:`CoreMLModel.predict`."""
