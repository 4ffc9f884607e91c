"""The executions behind NNAPI's C handles: ``CExecution`` (one HAL ``Request`` whose pools are the caller's
buffers and mapped memory, referenced, never copied; then its run) and ``Event`` (a run on its own thread)."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .. import hal
from ..enums import DTYPES, QUANTIZATION, SCALAR_TYPES, ErrorStatus, OperandType, ResultCode
from .objects import CAPIError, CCompilation


class Event:
    """``ANeuralNetworksEvent``: an execution running on its own thread."""

    what = "ANeuralNetworksEvent"

    def __init__(self, prepared: hal.PreparedModel, request: hal.Request):
        self.code = ResultCode.OP_FAILED
        self.message = ""
        self._thread = threading.Thread(target=self._run, args=(prepared, request), daemon=True,
                                        name="nnapi-execution")
        self._thread.start()

    def _run(self, prepared: hal.PreparedModel, request: hal.Request) -> None:
        status = prepared.execute(request)
        if status == ErrorStatus.NONE:
            self.code = ResultCode.NO_ERROR
        else:
            self.message = prepared.last_error
            self.code = ResultCode.BAD_DATA if status == ErrorStatus.INVALID_ARGUMENT else ResultCode.OP_FAILED

    def wait(self) -> None:
        self._thread.join()
        if self.code != ResultCode.NO_ERROR:
            raise CAPIError(self.code, f"the execution failed: {self.message}")


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
        return Event(self.prepared, request)
