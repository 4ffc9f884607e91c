"""The executions behind NNAPI's C handles: ``CExecution`` (one HAL ``Request`` whose pools are the caller's
buffers and mapped memory, referenced, never copied; then its run, its output shapes and durations), ``Event``
(a run on its own thread) and ``Burst`` (runs of one compilation, one at a time)."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .. import hal
from ..enums import DTYPES, QUANTIZATION, SCALAR_TYPES, DurationCode, ErrorStatus, OperandType, ResultCode
from .objects import CAPIError, CCompilation


class Event:
    """``ANeuralNetworksEvent``: an execution running on its own thread."""

    what = "ANeuralNetworksEvent"

    def __init__(self, execution: CExecution, request: hal.Request):
        self.execution = execution
        self._thread = threading.Thread(target=execution.run, args=(request,), daemon=True, name="nnapi-execution")
        self._thread.start()

    def wait(self) -> None:
        self._thread.join()
        self.execution.raise_failure()


CODES = {ErrorStatus.NONE: ResultCode.NO_ERROR, ErrorStatus.INVALID_ARGUMENT: ResultCode.BAD_DATA,
         ErrorStatus.OUTPUT_INSUFFICIENT_SIZE: ResultCode.OUTPUT_INSUFFICIENT_SIZE}
"""The ResultCode of a run's ErrorStatus (any other: OP_FAILED)."""


class CExecution:
    """``ANeuralNetworksExecution``: the arguments of one request, then one asynchronous run."""

    what = "ANeuralNetworksExecution"

    def __init__(self, compilation: CCompilation):
        if not compilation.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the compilation is not finished (ANeuralNetworksCompilation_finish)")
        self.prepared = compilation.compilation.prepared
        self.model = compilation.compilation.model.to_hal()
        self._arguments: dict[tuple[bool, int], tuple[hal.RequestArgument, Any]] = {}
        self.started = False
        self.compilation = compilation
        self.measure = False
        self.code: ResultCode | None = None  # the run's, once it completed
        self.message = ""
        self.shapes: list[hal.OutputShape] = []
        self.timing = hal.Timing()

    def set_measure_timing(self, measure: bool) -> None:
        """Measure the next run's durations: only an execution of a compilation made for one device."""
        if not self.compilation.for_devices:
            raise CAPIError(ResultCode.BAD_DATA, "timing is measured only for an execution of a compilation made "
                            "by ANeuralNetworksCompilation_createForDevices (with one device)")
        if self.started:
            raise CAPIError(ResultCode.BAD_STATE, "the execution has started")
        self.measure = measure

    def set(self, output: bool, index: int, typed: tuple[int, Sequence[int], float, int] | None,
            data: memoryview | None) -> None:
        """Argument ``index`` of the inputs (or outputs): ``data`` (None: an omitted input), dimensions from
        ``typed`` (type code, dimensions, scale, zero point) where the model leaves them unknown."""
        if self.started:
            raise CAPIError(ResultCode.BAD_STATE, "the execution has started; its arguments can no longer change")
        what = "output" if output else "input"
        indexes = self.model.outputIndexes if output else self.model.inputIndexes
        if not 0 <= index < len(indexes):
            raise CAPIError(ResultCode.BAD_DATA, f"{what} {index} does not exist (the model has {len(indexes)})")
        operand = self.model.operands[indexes[index]]
        dims = self._dimensions(f"{what} {index}", operand, typed)
        if data is None:
            self._arguments[(output, index)] = (hal.RequestArgument(True, hal.DataLocation(), []), None)
            return
        if not output and operand.type not in SCALAR_TYPES and (not dims or 0 in dims):
            raise CAPIError(ResultCode.BAD_DATA, f"{what} {index} has unknown dimensions {dims}; the type argument "
                            "must give them")
        if 0 not in dims and (dims or operand.type in SCALAR_TYPES):
            need = hal.element_count(dims) * DTYPES[operand.type].itemsize
            if len(data) != need:
                raise CAPIError(ResultCode.BAD_DATA, f"{what} {index} ({OperandType(operand.type).name} "
                                f"{dims}) takes {need} bytes, the buffer has {len(data)}")
        given = list(dims) if typed and typed[1] else []
        argument = hal.RequestArgument(False, hal.DataLocation(0, 0, len(data)), given)
        self._arguments[(output, index)] = (argument, data)

    @staticmethod
    def _dimensions(what: str, operand: hal.Operand, typed) -> list[int]:
        """The operand's dimensions, completed by the call's type (which must otherwise match the model's)."""
        declared = [int(d) for d in operand.dimensions]
        if typed is None:
            return declared
        code, dims, scale, zero_point = typed
        if code != operand.type or (operand.type in QUANTIZATION and
                                    (scale != operand.scale or zero_point != operand.zeroPoint)):
            raise CAPIError(ResultCode.BAD_DATA, f"{what}: the type given ({code}, scale {scale}, zero point "
                            f"{zero_point}) differs from the model's ({int(operand.type)}, scale {operand.scale}, "
                            f"zero point {operand.zeroPoint})")
        if not dims:
            return declared
        dims = [int(d) for d in dims]
        if 0 in dims or (declared and (len(dims) != len(declared) or
                                       any(d and d != g for d, g in zip(declared, dims)))):
            raise CAPIError(ResultCode.BAD_DATA, f"{what}: dimensions {dims} do not complete the model's "
                            f"{declared} (0: given at execution)")
        return dims

    def start(self) -> Event:
        """``startCompute``: the run on its own thread."""
        return Event(self, self._request())

    def compute(self) -> None:
        """``compute`` (and a burst's): the run on the calling thread; its failure raised."""
        self.run(self._request())
        self.raise_failure()

    def run(self, request: hal.Request) -> None:
        """Execute ``request``; keep its code, output shapes and timing."""
        status, self.shapes, self.timing = self.prepared.execute_synchronously(request, self.measure)
        self.message = self.prepared.last_error if status != ErrorStatus.NONE else ""
        self.code = CODES.get(status, ResultCode.OP_FAILED)

    def raise_failure(self) -> None:
        if self.code != ResultCode.NO_ERROR:
            raise CAPIError(self.code, f"the execution failed: {self.message}")

    def _completed(self) -> None:
        """The queries after a run: it must have completed, well or for a too small output buffer."""
        if self.code is None:
            raise CAPIError(ResultCode.BAD_STATE, "the execution has not completed (compute, or startCompute and "
                            "ANeuralNetworksEvent_wait)")
        if self.code not in (ResultCode.NO_ERROR, ResultCode.OUTPUT_INSUFFICIENT_SIZE) or not self.shapes:
            raise CAPIError(ResultCode.BAD_STATE, f"the execution failed ({self.code.name}): it has no output "
                            "shapes")

    def output_dimensions(self, index: int, scalar_ok: bool) -> hal.OutputShape:
        """Output ``index``'s dimensions as the run computed them, and whether its buffer held them
        (``scalar_ok``: a rank query, which a scalar answers too)."""
        if not 0 <= index < len(self.model.outputIndexes):
            raise CAPIError(ResultCode.BAD_DATA, f"output {index} does not exist (the model has "
                            f"{len(self.model.outputIndexes)})")
        self._completed()
        operand = self.model.operands[self.model.outputIndexes[index]]
        if not scalar_ok and operand.type in SCALAR_TYPES:
            raise CAPIError(ResultCode.BAD_DATA, f"output {index} is a scalar ({OperandType(operand.type).name}): "
                            "it has no dimensions")
        return self.shapes[index]

    @staticmethod
    def check_sufficient(index: int, shape: hal.OutputShape) -> None:
        """After the dimensions are handed out: a too small buffer is the query's code too (NNAPI's rule)."""
        if not shape.isSufficient:
            raise CAPIError(ResultCode.OUTPUT_INSUFFICIENT_SIZE, f"output {index}'s buffer was too small for its "
                            f"dimensions {shape.dimensions}")

    def duration(self, code: int) -> int:
        """``getDuration``: nanoseconds (the HAL's microseconds times 1000), UINT64_MAX where not measured."""
        try:
            which = DurationCode(code)
        except ValueError:
            raise CAPIError(ResultCode.BAD_DATA, f"duration code {code} is not a DurationCode") from None
        if self.code is None:
            raise CAPIError(ResultCode.BAD_STATE, "the execution has not completed")
        value = self.timing.timeOnDevice if which == DurationCode.ON_HARDWARE else self.timing.timeInDriver
        return hal.NO_TIME if value == hal.NO_TIME else value * 1000

    def _request(self) -> hal.Request:
        if self.started:
            raise CAPIError(ResultCode.BAD_STATE, "the execution has already started (an execution runs once)")
        pools: list = []

        def arguments(output: bool, count: int) -> list[hal.RequestArgument]:
            out = []
            for k in range(count):
                if (output, k) not in self._arguments:
                    raise CAPIError(ResultCode.BAD_DATA, f"{'output' if output else 'input'} {k} was not set")
                argument, data = self._arguments[(output, k)]
                if data is not None:
                    argument.location.poolIndex = len(pools)
                    pools.append(data)
                out.append(argument)
            return out
        request = hal.Request(arguments(False, len(self.model.inputIndexes)),
                              arguments(True, len(self.model.outputIndexes)), pools)
        self.started = True
        return request


class Burst:
    """``ANeuralNetworksBurst``: executions of one compilation, one at a time, each a plain ``compute``."""

    what = "ANeuralNetworksBurst"

    def __init__(self, compilation: CCompilation):
        if not compilation.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the compilation is not finished (ANeuralNetworksCompilation_finish)")
        self.compilation = compilation
        self._busy = threading.Lock()

    def compute(self, execution: CExecution) -> None:
        if execution.compilation is not self.compilation:
            raise CAPIError(ResultCode.BAD_DATA, "the execution and the burst come from different compilations")
        if not self._busy.acquire(blocking=False):
            raise CAPIError(ResultCode.BAD_STATE, "the burst is running another execution")
        try:
            execution.compute()
        finally:
            self._busy.release()
