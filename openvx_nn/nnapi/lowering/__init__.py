"""Lowering an NNAPI model onto one OpenVX graph.

``LOWERINGS`` (``registry``) maps each ``OperationType`` to the function that checks the
operation and adds its nodes (one module per operation family).  ``lower``
builds and verifies the graph of a whole model; ``check`` and ``supported_operations``
run the same checks as a dry run (what waits for an execution, ``Deferred``, passes).
"""
from __future__ import annotations

from ..enums import ErrorStatus
from ..errors import NNAPIError
from ..hal.structs import Model
from ..model_check import execution_order
from . import (  # noqa: F401  (register LOWERINGS)
    conv_pool,
    convolution_1_2,
    counted_rows,
    detection,
    elementwise,
    functions,
    layout_1_2,
    lookup,
    movement,
    recurrent,
    reshaping,
    selection,
    sequence_recurrent,
    statistics,
)
from .context import Deferred, GraphBuilder, OpContext
from .lowered import Lowered
from .registry import LOWERINGS

__all__ = ["Deferred", "Lowered", "check", "lower", "supported_operations"]


def _lower_all(builder: GraphBuilder, order: list[int]) -> None:
    for j in order:
        op = OpContext(builder, j)
        try:
            counted_rows.settle(op)
            LOWERINGS[op.type](op)
        except NNAPIError:
            raise
        except MemoryError:
            op.fail("out of memory building its nodes", ErrorStatus.GENERAL_FAILURE)
        except Exception as err:  # noqa: BLE001 - what a lowering did not foresee, named by its operation
            op.fail(f"{type(err).__name__}: {err}")


def lower(model: Model, runtime: dict | None = None) -> Lowered:
    """Check ``model``, build its graph and verify it (raises ``NNAPIError``; ``Deferred`` when a model
    input's dimensions or value, absent from ``runtime``, are needed)."""
    order = execution_order(model)
    builder = GraphBuilder(model, dry=False, runtime=runtime)
    try:
        _lower_all(builder, order)
        return Lowered(builder)
    except BaseException:
        builder.release()
        raise


def check(model: Model) -> None:
    """Every check ``lower`` makes that does not wait for an execution (raises ``NNAPIError``)."""
    builder = GraphBuilder(model, dry=True)
    for j in execution_order(model):
        try:
            _lower_all(builder, [j])
        except Deferred:
            continue


def supported_operations(model: Model) -> list[bool]:
    """One bool per operation: would it lower?  An operation after a failed one is judged on its
    operands' declared dimensions; one that waits for an execution's dimensions or values is supported."""
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
            op = OpContext(builder, j)
            counted_rows.settle(op)
            LOWERINGS[op.type](op)
            answers[j] = True
        except Deferred:
            answers[j] = True
        except Exception:  # noqa: BLE001 - "not supported" is the answer, never an exception
            answers[j] = False
    return answers
