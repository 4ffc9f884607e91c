"""``branch``, ``loop``, ``loopBreak``, ``loopContinue``: run by the host between graphs (``coreml/control.py``
splits a network at them), never as nodes; the entry here names them as lowered types and refuses a call from
a graph being built, which only a caller bypassing ``control.py`` makes."""
from __future__ import annotations

from ..builder import GraphBuilder
from ..control import CONTROL
from .registry import lowers


@lowers(*sorted(CONTROL))
def control_flow(g: GraphBuilder, layer, p) -> str:
    raise g.fail("a control-flow layer runs between graphs (openvx_nn.coreml.control), not inside one")
