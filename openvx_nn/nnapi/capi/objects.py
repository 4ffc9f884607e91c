"""The objects behind NNAPI's C handles, and the rules of its C API in Python terms.

Each C object wraps the Python front end's: a ``CModel`` the builder ``Model``, a ``CCompilation`` the
builder ``Compilation`` (one HAL ``PreparedModel``); the executions are in ``execution``.  Problems raise ``CAPIError``
with the ``ResultCode`` the C function returns: calls out of order ``BAD_STATE``, bad operands and
buffers ``BAD_DATA`` (what the builder refuses with ``NNAPIError``), a failed execution ``OP_FAILED``.
"""
from __future__ import annotations

import itertools
import mmap
import threading
from collections.abc import Sequence
from typing import Any

from ..builder import Compilation, Model
from ..enums import DTYPES, ErrorStatus, OperandType, PreferenceCode, ResultCode
from ..errors import NNAPIError


class CAPIError(Exception):
    """A C API call refused: ``code`` is what the C function returns."""

    def __init__(self, code: ResultCode, message: str):
        super().__init__(message)
        self.code = ResultCode(code)


def bad_data(err: NNAPIError) -> CAPIError:
    return CAPIError(ResultCode.BAD_DATA, str(err))


class Handles:
    """Handles as never-reused ids that look like pointers, checked by kind on every use."""

    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        self._ids = itertools.count(0x10000, 0x10)
        self._lock = threading.Lock()

    def add(self, obj: Any) -> int:
        with self._lock:
            handle = next(self._ids)
            self._objects[handle] = obj
        return handle

    def get(self, handle: int, cls: type) -> Any:
        obj = self._objects.get(handle)
        if not isinstance(obj, cls):
            raise CAPIError(ResultCode.BAD_DATA, f"{handle:#x} is not an {cls.what} (freed, or never made)")
        return obj

    def remove(self, handle: int, cls: type) -> None:
        self.get(handle, cls)
        with self._lock:
            del self._objects[handle]


class Memory:
    """``ANeuralNetworksMemory``: ``size`` bytes of a file descriptor mapped at ``offset``."""

    what = "ANeuralNetworksMemory"

    def __init__(self, size: int, protect: int, fd: int, offset: int):
        if size <= 0 or fd < 0:
            raise CAPIError(ResultCode.BAD_DATA, f"size {size}, fd {fd}: a memory needs bytes and a descriptor")
        prot = protect & (mmap.PROT_READ | mmap.PROT_WRITE)
        if not prot or protect & ~(mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC):
            raise CAPIError(ResultCode.BAD_DATA, f"protect {protect:#x} is not PROT_READ and/or PROT_WRITE")
        start = offset - offset % mmap.ALLOCATIONGRANULARITY  # mmap wants a page-aligned offset
        self.writable = bool(protect & mmap.PROT_WRITE)
        # Without PROT_WRITE the mapping is private (copy on write): never written back, and NumPy sees a
        # writable array, which the kernels take in place.
        flags = mmap.MAP_SHARED if self.writable else mmap.MAP_PRIVATE
        try:
            self._map = mmap.mmap(fd, size + offset - start, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE,
                                  offset=start)
        except (OSError, ValueError, OverflowError) as err:
            raise CAPIError(ResultCode.UNMAPPABLE, f"fd {fd} cannot be mapped ({size} bytes at {offset}): {err}")
        self.view = memoryview(self._map)[offset - start:]
        self.size = size

    def region(self, offset: int, length: int, written: bool = False) -> memoryview:
        """Bytes ``offset`` .. ``offset + length`` (``written``: an output's, which needs PROT_WRITE)."""
        if offset + length > self.size:
            raise CAPIError(ResultCode.BAD_DATA, f"bytes {offset}..{offset + length} lie outside the memory's "
                            f"{self.size}")
        if written and not self.writable:
            raise CAPIError(ResultCode.BAD_DATA, "the memory was mapped without PROT_WRITE; an output needs it")
        return self.view[offset:offset + length]


def _operand_type(code: int) -> OperandType:
    try:
        kind = OperandType(code)
    except ValueError:
        raise CAPIError(ResultCode.BAD_DATA, f"type {code} is not an OperandCode") from None
    if kind not in DTYPES:
        raise CAPIError(ResultCode.BAD_DATA, f"type {kind.name} is not supported")
    return kind


class CModel:
    """``ANeuralNetworksModel``: the builder ``Model`` with NNAPI's C-API rules on top."""

    what = "ANeuralNetworksModel"

    def __init__(self) -> None:
        self.model = Model()

    def _open(self) -> Model:
        if self.model.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the model is finished and can no longer change")
        return self.model

    def add_operand(self, code: int, dims: Sequence[int], scale: float, zero_point: int) -> None:
        model = self._open()
        try:
            model.add_operand(_operand_type(code), dims, scale, zero_point)
        except NNAPIError as err:
            raise bad_data(err) from None

    def set_value(self, index: int, data: memoryview | None, copy: bool) -> None:
        """Operand ``index`` takes ``data`` (None: omitted), copied when ``copy``, else referenced."""
        model = self._open()
        try:
            if data is None:
                model.set_operand_value(index, None)
            else:
                model.set_operand_reference(index, data, copy)
        except NNAPIError as err:
            raise bad_data(err) from None

    def add_operation(self, code: int, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        model = self._open()
        try:
            model.add_operation(code, inputs, outputs)
        except NNAPIError as err:
            raise bad_data(err) from None

    def set_channel_quant(self, index: int, scales: Sequence[float], channel_dim: int) -> None:
        """``setOperandSymmPerChannelQuantParams``: the scales of a per-channel operand (copied)."""
        model = self._open()
        try:
            model.set_operand_symm_per_channel_quant_params(index, scales, channel_dim)
        except NNAPIError as err:
            raise bad_data(err) from None

    def relax(self, allow: bool) -> None:
        """``relaxComputationFloat32toFloat16``: before ``finish`` (BAD_STATE after)."""
        self._open().relax_computation_float32_to_float16(allow)

    def identify(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        model = self._open()
        try:
            model.identify_inputs_and_outputs(inputs, outputs)
        except NNAPIError as err:
            raise bad_data(err) from None

    def supported_operations(self) -> list[bool]:
        """``getSupportedOperationsForDevices`` (this one device): per operation, in the order added."""
        if not self.model.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the model is not finished (ANeuralNetworksModel_finish)")
        return self.model.supported_operations()

    def finish(self) -> None:
        try:
            self._open().finish()
        except NNAPIError as err:
            raise bad_data(err) from None


class CCompilation:
    """``ANeuralNetworksCompilation``: a finished model being prepared."""

    what = "ANeuralNetworksCompilation"

    def __init__(self, model: CModel, for_devices: bool = False):
        if not model.model.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the model is not finished (ANeuralNetworksModel_finish)")
        self.compilation = Compilation(model.model)
        self.for_devices = for_devices  # made by createForDevices: its executions may measure their timing
        self.preference = PreferenceCode.PREFER_FAST_SINGLE_ANSWER

    @property
    def finished(self) -> bool:
        return self.compilation.prepared is not None

    def set_preference(self, preference: int) -> None:
        if self.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the compilation is finished")
        try:
            self.preference = PreferenceCode(preference)
        except ValueError:
            raise CAPIError(ResultCode.BAD_DATA, f"preference {preference} is not a PreferenceCode") from None

    def finish(self) -> None:
        if self.finished:
            raise CAPIError(ResultCode.BAD_STATE, "the compilation is already finished")
        try:
            self.compilation.finish()
        except NNAPIError as err:
            code = ResultCode.BAD_DATA if err.status == ErrorStatus.INVALID_ARGUMENT else ResultCode.OP_FAILED
            raise CAPIError(code, str(err)) from None
