"""The openvx-nn NNAPI driver (the HAL's ``IDevice`` and ``IPreparedModel``).

A prepared model is a verified ``vx_graph`` (``lowering.lower``) per request
signature (``lowering.plans``: omitted inputs, dimensions given at execution,
inputs read as parameters); it keeps its tensors between executions and
releases every OpenVX object it made when ``release`` is called or it is
garbage collected.
"""
from __future__ import annotations

import threading
import time
import weakref

from ..enums import DeviceStatus, ErrorStatus
from ..errors import NNAPIError, refusing
from ..lowering import supported_operations
from ..lowering.plans import Plans
from .structs import Capabilities, Model, OutputShape, Request, Timing


class PreparedModel:
    """A model lowered onto verified OpenVX graphs (one per request signature), ready to execute requests."""

    def __init__(self, model: Model):
        self.model = model
        self.plans = Plans(model)
        self._errors = threading.local()  # each thread reads the failure of its own last request
        self._lock = threading.Lock()  # the plan cache changes under one request at a time
        self._finalizer = weakref.finalize(self, self.plans.release)
        self._finalizer.atexit = False  # at exit the context goes with the process

    @property
    def last_error(self) -> str:
        """Why this thread's last request failed ("" after a success): per thread, so that two threads sharing
        the prepared model never read each other's message."""
        return getattr(self._errors, "message", "")

    @last_error.setter
    def last_error(self, message: str) -> None:
        self._errors.message = message

    @property
    def lowered(self):
        """The graph of the last request (of the model's declared dimensions before any)."""
        if self.plans.last is None:
            raise NNAPIError("the model waits for an execution's dimensions or values: it has no graph yet")
        return self.plans.last

    def execute(self, request: Request) -> ErrorStatus:
        """Copy the inputs in, run the graph, copy the outputs out; ``last_error`` says why on failure."""
        return self._answer(lambda: self.plans.for_request(request).execute(request))

    def execute_synchronously(self, request: Request, measure: bool = False
                              ) -> tuple[ErrorStatus, list[OutputShape], Timing]:
        """HAL 1.2's synchronous execution: :meth:`execute`, with each output's dimensions (also when a buffer
        is too small: ``OUTPUT_INSUFFICIENT_SIZE``) and, with ``measure``, how long it took."""
        shapes: list[OutputShape] = []
        lowered: list = []

        def run() -> None:
            graph = self.plans.for_request(request)
            lowered.append(graph)
            try:
                graph.execute(request)
            finally:  # after the run: an output whose rows the data decides has them now
                shapes.extend(graph.output_shapes(request))
        start = time.perf_counter_ns()
        status = self._answer(run)
        return status, shapes, self._timing(measure, status, lowered, start)

    def execute_arrays(self, inputs: list, outputs: list, measure: bool = False
                       ) -> tuple[ErrorStatus, Timing] | None:
        """:meth:`execute` of a request whose inputs and outputs are arrays of their operands' dtypes and shapes
        (``Plans.run_arrays``), and its timing (with ``measure``); None, nothing done, where it needs a
        :class:`Request` (checked pools)."""
        ran: list[bool] = []
        lowered: list = []

        def run() -> None:
            ran.append(self.plans.run_arrays(inputs, outputs))
            if ran[0]:
                lowered.append(self.plans.last)
        start = time.perf_counter_ns()
        status = self._answer(run)
        if ran and not ran[0]:
            return None
        return status, self._timing(measure, status, lowered, start)

    @staticmethod
    def _timing(measure: bool, status: ErrorStatus, lowered: list, start: int) -> Timing:
        if not measure or status != ErrorStatus.NONE or not lowered:
            return Timing()
        return Timing(lowered[-1].run_ns // 1000, (time.perf_counter_ns() - start) // 1000)

    def _answer(self, run) -> ErrorStatus:
        """``run()`` under the lock, its failure as a status (``last_error`` says why)."""
        try:
            with self._lock:
                run()
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

    @refusing
    def prepare_model(self, model: Model) -> PreparedModel:
        """Validate ``model`` and lower it onto a verified OpenVX graph (raises ``NNAPIError``)."""
        return PreparedModel(model)
