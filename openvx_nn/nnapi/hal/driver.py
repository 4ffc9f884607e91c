"""The openvx-nn NNAPI driver (the HAL's ``IDevice`` and ``IPreparedModel``).

A prepared model is one verified ``vx_graph`` (``lowering.lower``); it keeps
its tensors between executions and releases every OpenVX object it made when
``release`` is called or it is garbage collected.
"""
from __future__ import annotations

import weakref

from ..enums import DeviceStatus, ErrorStatus
from ..errors import NNAPIError
from ..lowering import lower, supported_operations
from .structs import Capabilities, Model, Request


class PreparedModel:
    """A model lowered onto one verified OpenVX graph, ready to execute requests."""

    def __init__(self, model: Model):
        self.model = model
        self.lowered = lower(model)
        self.last_error = ""
        self._finalizer = weakref.finalize(self, self.lowered.release)
        self._finalizer.atexit = False  # at exit the context goes with the process

    def execute(self, request: Request) -> ErrorStatus:
        """Copy the inputs in, run the graph, copy the outputs out; ``last_error`` says why on failure."""
        try:
            self.lowered.execute(request)
        except NNAPIError as err:
            self.last_error = str(err)
            return err.status
        except Exception as err:  # noqa: BLE001 - a driver answers with a status, never an exception
            self.last_error = f"internal error {type(err).__name__}: {err}"
            return ErrorStatus.GENERAL_FAILURE
        self.last_error = ""
        return ErrorStatus.NONE

    @property
    def graph(self):
        """The OpenVX graph (``openvx_nn.core.graph.Graph``) the model runs on."""
        return self.lowered.graph

    def operation_timings(self) -> list[tuple[int, str, float]]:
        """(operation index, OpenVX kernel, last run in ms) of every node, in execution order."""
        return self.lowered.timings()

    def release(self) -> None:
        """Release every OpenVX object of this prepared model (also done at garbage collection)."""
        self._finalizer()


class Device:
    """The openvx-nn NNAPI driver."""

    def get_capabilities(self) -> tuple[ErrorStatus, Capabilities]:
        return ErrorStatus.NONE, Capabilities()

    def get_status(self):
        return DeviceStatus.AVAILABLE

    def get_supported_operations(self, model: Model) -> list[bool]:
        """For each operation of ``model``: can this driver run it?  Never raises."""
        try:
            return supported_operations(model)
        except Exception:  # noqa: BLE001 - a malformed model answers "not supported", never an exception
            return [False] * len(getattr(model, "operations", []) or [])

    def prepare_model(self, model: Model) -> PreparedModel:
        """Validate ``model`` and lower it onto a verified OpenVX graph (raises ``NNAPIError``)."""
        return PreparedModel(model)
