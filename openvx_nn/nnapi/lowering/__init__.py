"""Lowering an NNAPI model onto one OpenVX graph.

``LOWERINGS`` (``registry``) maps each ``OperationType`` to the function that checks the
operation and adds its nodes (one module per operation family).  ``lower``
builds and verifies the graph of a whole model; ``supported_operations``
runs the same checks as a dry run, one answer per operation.
"""
from __future__ import annotations

from ..errors import NNAPIError
from ..hal.structs import Model
from ..model_check import execution_order
from . import conv_pool, elementwise, lookup, recurrent, reshaping  # noqa: F401  (register LOWERINGS)
from .context import GraphBuilder, OpContext
from .lowered import Lowered
from .registry import LOWERINGS


def _lower_all(builder: GraphBuilder, order: list[int]) -> None:
    for j in order:
        op = OpContext(builder, j)
        LOWERINGS[op.type](op)


def lower(model: Model) -> Lowered:
    """Check ``model``, build its graph and verify it (raises ``NNAPIError``)."""
    order = execution_order(model)
    builder = GraphBuilder(model, dry=False)
    try:
        _lower_all(builder, order)
        return Lowered(builder)
    except BaseException:
        builder.release()
        raise


def supported_operations(model: Model) -> list[bool]:
    """One bool per operation: would it lower?  An operation after a failed one is judged on its
    operands' declared dimensions."""
    try:
        order = execution_order(model)
    except NNAPIError as err:
        if err.operation is None:
            return [False] * len(model.operations)
        order = [j for j in range(len(model.operations)) if j != err.operation]
    answers = [False] * len(model.operations)
    builder = GraphBuilder(model, dry=True)
    for j in order:
        try:
            LOWERINGS[OpContext(builder, j).type](OpContext(builder, j))
            answers[j] = True
        except Exception:  # noqa: BLE001 - "not supported" is the answer, never an exception
            answers[j] = False
    return answers
