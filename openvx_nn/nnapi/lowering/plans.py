"""A prepared model's verified graphs, one per request signature.

NNAPI lets an execution decide three things a graph is built on: which optional inputs are omitted
(``RequestArgument.hasNoValue``), the dimensions a model left unknown (0, given by
``RequestArgument.dimensions``), and the value of a model input an operation reads as a parameter
(RESHAPE's shape).  A request's *signature* is those three; each signature is lowered and verified
once, and a later request with the same signature runs on the same graph.  Inputs read as parameters
are learnt while lowering (``GraphBuilder.parameters``); only their values enter the signature, so a
change of ordinary data never re-plans.
"""
from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict

import numpy as np

from ..enums import DTYPES, SCALAR_TYPES, ErrorStatus, OperandLifeTime, OperandType, as_bool
from ..errors import NNAPIError
from ..hal.structs import Model, Request, pool_bytes
from . import Deferred, Lowered, check, lower

OMITTED = "omitted"
LIMIT = 8
"""Graphs kept per prepared model; the least recently used one beyond that is released."""


def _given_dimensions(model: Model, position: int, dims: list[int]) -> tuple[int, ...]:
    """Input ``position``'s dimensions: the request's where given, checked against the model's."""
    k = model.inputIndexes[position]
    declared = tuple(int(d) for d in model.operands[k].dimensions)
    is_scalar = OperandType(model.operands[k].type) in SCALAR_TYPES
    if not dims:
        if not is_scalar and (not declared or 0 in declared):
            raise NNAPIError(f"input {position} (operand {k}) has unknown dimensions {list(declared)}; the "
                             "execution must give them")
        return declared
    given = tuple(int(d) for d in dims)
    if is_scalar or (declared and len(given) != len(declared)) or any(d <= 0 for d in given) or \
            any(d and d != g for d, g in zip(declared, given)):
        raise NNAPIError(f"input {position} (operand {k}) is given dimensions {list(given)}; the model "
                         f"declares {list(declared)} (0: any size)")
    return given


def _input_bytes(request: Request, position: int, k: int, need: int) -> memoryview:
    arg = request.inputs[position]
    loc = arg.location
    if not 0 <= loc.poolIndex < len(request.pools):
        raise NNAPIError(f"input {position}: pool {loc.poolIndex} does not exist")
    data = pool_bytes(request.pools[loc.poolIndex])
    if loc.length != need:
        raise NNAPIError(f"input {position} (operand {k}) has {loc.length} bytes, it needs {need} (its type and "
                         "dimensions)")
    if loc.offset < 0 or loc.offset + loc.length > len(data):
        raise NNAPIError(f"input {position}: bytes {loc.offset}..{loc.offset + loc.length} lie outside pool "
                         f"{loc.poolIndex} of {len(data)} bytes")
    return data[loc.offset:loc.offset + need]


class Plans:
    """The lowered graphs of one model by request signature (at most ``LIMIT``, least recently used out)."""

    def __init__(self, model: Model):
        self.model = model
        self.parameters: set[int] = set()
        self._graphs: OrderedDict[tuple, Lowered] = OrderedDict()
        self.last: Lowered | None = None
        try:
            lowered = lower(model)
        except Deferred:
            check(model)  # everything that does not wait for an execution is checked now
        else:
            key = tuple((tuple(model.operands[k].dimensions), None) for k in model.inputIndexes)
            self._keep(key, lowered)

    def _keep(self, key: tuple, lowered: Lowered) -> None:
        self._graphs[key] = self.last = lowered
        while len(self._graphs) > LIMIT:
            _, old = self._graphs.popitem(last=False)
            old.release()

    def for_request(self, request: Request) -> Lowered:
        """The graph of ``request``'s signature, lowered now if it is new (raises ``NNAPIError``)."""
        model = self.model
        if len(request.inputs) != len(model.inputIndexes):
            raise NNAPIError(f"the request has {len(request.inputs)} inputs, the model {len(model.inputIndexes)}")
        shapes: list[tuple[int, ...] | None] = [
            None if arg.hasNoValue else _given_dimensions(model, position, arg.dimensions)
            for position, arg in enumerate(request.inputs)]
        # Only inputs read as parameters enter the key with their values; the rest are read by the graph.
        key = self._key(shapes, self._values(request, shapes, self.parameters))
        lowered = self._graphs.get(key)
        if lowered is None:
            lowered, parameters = self._lower(shapes, self._values(request, shapes, None))
            self.parameters |= parameters
            key = self._key(shapes, self._values(request, shapes, self.parameters))
            self._keep(key, lowered)
        self._graphs.move_to_end(key)
        self.last = lowered
        return lowered

    def run_arrays(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> bool:
        """Run a request of arrays (``Lowered.run_arrays``) on the graph of their shapes, where one is lowered and
        no input is read as a parameter; else False, nothing done (the request takes the checked path)."""
        if self.parameters or len(inputs) != len(self.model.inputIndexes):
            return False
        key = tuple((getattr(array, "shape", None), None) for array in inputs)
        lowered = self._graphs.get(key)
        if lowered is None or not lowered.run_arrays(inputs, outputs):
            return False
        self._graphs.move_to_end(key)
        self.last = lowered
        return True

    def _values(self, request: Request, shapes: list, which: set[int] | None) -> dict[int, np.ndarray]:
        """The request's values of the present inputs in ``which`` (None: all), views of its pools."""
        values: dict[int, np.ndarray] = {}
        for position, (k, shape) in enumerate(zip(self.model.inputIndexes, shapes)):
            if shape is None or (which is not None and k not in which):
                continue
            dtype = DTYPES[OperandType(self.model.operands[k].type)]
            need = math.prod(shape) * dtype.itemsize
            value = np.frombuffer(_input_bytes(request, position, k, need), dtype).reshape(shape)
            values[k] = as_bool(value) if dtype == np.bool_ else value
        return values

    def _key(self, shapes: list, values: dict[int, np.ndarray]) -> tuple:
        return tuple(OMITTED if shape is None else
                     (shape, values[k].tobytes() if k in self.parameters else None)
                     for k, shape in zip(self.model.inputIndexes, shapes))

    def _lower(self, shapes: list, values: dict[int, np.ndarray]) -> tuple[Lowered, set[int]]:
        """Lower a copy of the model whose inputs have the request's dimensions (NO_VALUE if omitted)."""
        operands = list(self.model.operands)
        for k, shape in zip(self.model.inputIndexes, shapes):
            operands[k] = dataclasses.replace(operands[k], dimensions=list(shape or operands[k].dimensions))
            if shape is None:
                operands[k].lifetime = OperandLifeTime.NO_VALUE
        model = dataclasses.replace(self.model, operands=operands)
        # values are views of the request's pools: copy the few a lowering keeps as parameters
        runtime = {k: v.copy() for k, v in values.items()}
        try:
            lowered = lower(model, runtime)
        except Deferred as err:
            raise NNAPIError(str(err), ErrorStatus.INVALID_ARGUMENT) from None
        return lowered, lowered.builder.parameters

    def release(self) -> None:
        graphs, self._graphs = list(self._graphs.values()), OrderedDict()
        self.last = None
        for lowered in graphs:
            lowered.release()
