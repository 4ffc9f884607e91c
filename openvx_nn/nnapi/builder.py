"""The NNAPI model builder: ``Model``, ``Compilation``, ``Execution``.

Shaped like the NNAPI C API.  ``Model.finish`` checks the model and freezes
it; ``to_hal`` gives the HAL struct the driver (``hal.Device``) prepares and
executes, so the builder and the HAL share one implementation.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from . import hal
from .enums import DTYPES, SCALAR_TYPES, DurationCode, ErrorStatus, OperandLifeTime, OperandType, OperationType, as_bool
from .errors import NNAPIError, refusing
from .hal.structs import element_count
from .model_check import check_channel_quant, check_operand, execution_order
from .signature_check import check_signature

IMMEDIATE_LIMIT = 128
"""Values up to this many bytes are copied into operandValues (CONSTANT_COPY); larger ones go to a pool."""


class Model:
    """An NNAPI model under construction: operands, operations, inputs and outputs."""

    def __init__(self) -> None:
        self._operands: list[hal.Operand] = []
        self._values: dict[int, bytes | memoryview | None] = {}
        self._operations: list[hal.Operation] = []
        self._inputs: list[int] = []
        self._outputs: list[int] = []
        self._relaxed = False
        self._finished = False
        self._hal: hal.Model | None = None

    def _check_open(self) -> None:
        if self._finished:
            raise NNAPIError("the model is finished and can no longer change", ErrorStatus.INVALID_ARGUMENT)

    def _check_index(self, index: int, what: str = "operand") -> int:
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self._operands):
            raise NNAPIError(f"{what} {index} is not an operand index (0..{len(self._operands) - 1})")
        return int(index)

    @refusing
    def add_operand(self, type: OperandType, dimensions: Sequence[int] = (), scale: float = 0.0,
                    zero_point: int = 0) -> int:
        """Add an operand; returns its index."""
        self._check_open()
        operand = hal.Operand(type=type, dimensions=[int(d) for d in dimensions], scale=float(scale),
                              zeroPoint=int(zero_point))
        check_operand(len(self._operands), operand)
        operand.type = OperandType(type)
        self._operands.append(operand)
        return len(self._operands) - 1

    @refusing
    def set_operand_value(self, index: int, value) -> None:
        """Give operand ``index`` a constant value (array, 0-d array or Python number); None: no value."""
        self._check_open()
        index = self._check_index(index)
        if value is None:
            self._values[index] = None
            return
        operand = self._operands[index]
        dtype = DTYPES[operand.type]
        array = np.asarray(value)
        if array.dtype.kind != dtype.kind and not (array.dtype.kind in "iub" and dtype.kind in "iufb"):
            raise NNAPIError(f"operand {index} is {operand.type.name}; a value of dtype {array.dtype} does not fit")
        _check_range(array, dtype, f"operand {index} ({operand.type.name})")
        if dtype == np.bool_:
            array = as_bool(array)  # NNAPI: any non-zero value is true
        want = tuple(operand.dimensions)
        if operand.type in SCALAR_TYPES:
            if array.size != 1:
                raise NNAPIError(f"operand {index} is a scalar; got a value of shape {array.shape}")
        elif not want or 0 in want:
            raise NNAPIError(f"operand {index} has unknown dimensions {list(want)}; it cannot take a value")
        elif array.shape != want:
            raise NNAPIError(f"operand {index} has dimensions {list(want)}; got a value of shape {array.shape}")
        self._values[index] = np.ascontiguousarray(array, dtype).tobytes()

    @refusing
    def set_operand_reference(self, index: int, buffer, copy: bool = False) -> None:
        """Give operand ``index`` the raw bytes of ``buffer`` (the C API's values and memory): copied with
        ``copy``, else referenced (a pool of the model: the buffer must outlive it and keep its bytes)."""
        self._check_open()
        index = self._check_index(index)
        operand = self._operands[index]
        view = memoryview(buffer).cast("B")
        need = element_count(operand.dimensions) * DTYPES[operand.type].itemsize
        if operand.type not in SCALAR_TYPES and (not operand.dimensions or 0 in operand.dimensions):
            raise NNAPIError(f"operand {index} has unknown dimensions {operand.dimensions}; it cannot take a value")
        if len(view) != need:
            raise NNAPIError(f"operand {index} ({operand.type.name} {operand.dimensions}) takes {need} bytes, "
                             f"got {len(view)}")
        self._values[index] = bytes(view) if copy else view

    @refusing
    def set_operand_symm_per_channel_quant_params(self, index: int, scales: Sequence[float],
                                                  channel_dim: int) -> None:
        """The scales of TENSOR_QUANT8_SYMM_PER_CHANNEL operand ``index``: one per index of axis
        ``channel_dim`` (required for every such operand before ``finish``)."""
        self._check_open()
        index = self._check_index(index)
        operand = self._operands[index]
        if operand.type != OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            raise NNAPIError(f"operand {index} is {operand.type.name}; channel quantization parameters are for "
                             "TENSOR_QUANT8_SYMM_PER_CHANNEL operands")
        if not isinstance(channel_dim, (int, np.integer)) or isinstance(channel_dim, bool):
            raise NNAPIError(f"operand {index}: channel dimension {channel_dim!r} is not an integer")
        values = np.asarray(scales)
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            raise NNAPIError(f"operand {index}: scales must be a list of numbers, got {values.dtype} of shape "
                             f"{values.shape}")
        # stored as float32, as the C struct holds them (a scale too small for float32 fails as 0)
        params = hal.SymmPerChannelQuantParams([float(x) for x in values.astype(np.float32)], int(channel_dim))
        check_channel_quant(f"operand {index}", replace(operand, extraParams=params))
        operand.extraParams = params

    @refusing
    def relax_computation_float32_to_float16(self, allow: bool) -> None:
        """Let TENSOR_FLOAT32 be computed with float16 range and precision (NNAPI 1.1); before ``finish``.
        Recorded in the HAL model; this driver computes float32 throughout either way."""
        self._check_open()
        self._relaxed = bool(allow)

    @property
    def relaxed(self) -> bool:
        """Whether ``relax_computation_float32_to_float16(True)`` was called last."""
        return self._relaxed

    @property
    def finished(self) -> bool:
        return self._finished

    @refusing
    def add_operation(self, type: OperationType, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        """Add an operation; its operands must fit its signature (counts, types, known ranks), checked now."""
        self._check_open()
        try:
            kind = OperationType(type)
        except ValueError:
            raise NNAPIError(f"type {type} is not an OperationType") from None
        for k in list(inputs) + list(outputs):
            self._check_index(k, f"operation {len(self._operations)} ({kind.name}): operand")
        inputs, outputs = [int(k) for k in inputs], [int(k) for k in outputs]
        check_signature(kind, [self._operands[k] for k in inputs], [self._operands[k] for k in outputs],
                        len(self._operations))
        self._operations.append(hal.Operation(kind, inputs, outputs))

    @refusing
    def identify_inputs_and_outputs(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        """The model's inputs and outputs: operands without a value, each listed once."""
        self._check_open()
        for k in list(inputs) + list(outputs):
            self._check_index(k, "model input/output")
            if int(k) in self._values:
                what = "has no value (NO_VALUE)" if self._values[int(k)] is None else "is a constant"
                raise NNAPIError(f"operand {k} {what}; it cannot be a model input or output")
        listed = [int(k) for k in list(inputs) + list(outputs)]
        twice = {k for k in listed if listed.count(k) > 1}
        if twice:
            raise NNAPIError(f"operand {min(twice)} is listed twice among the model's inputs and outputs")
        self._inputs = [int(k) for k in inputs]
        self._outputs = [int(k) for k in outputs]

    @refusing
    def finish(self) -> None:
        """Check the model (raises ``NNAPIError``) and freeze it."""
        self._check_open()
        model = self._build_hal()
        order = execution_order(model)
        model.operations = [model.operations[j] for j in order]
        self._hal = model
        self._finished = True

    @refusing
    def supported_operations(self, device: hal.Device | None = None) -> list[bool]:
        """For each operation, in the order added: can ``device`` (this driver by default) run it?  The model
        must be finished."""
        if not self._finished:
            raise NNAPIError("the model is not finished (call finish())")
        return (device or hal.Device()).get_supported_operations(self._build_hal())

    def to_hal(self) -> hal.Model:
        """The HAL struct of the finished model."""
        if self._hal is None:
            raise NNAPIError("the model is not finished (call finish())")
        return self._hal

    @refusing
    def save(self, path) -> None:
        """Write the finished model to a ``.nnapi`` file (``hal.load_model`` reads it back)."""
        hal.save_model(self.to_hal(), path)

    def _build_hal(self) -> hal.Model:
        values = bytearray()
        pools: list[bytes] = []
        operands = []
        for k, src in enumerate(self._operands):
            operand = hal.Operand(src.type, list(src.dimensions), 0, src.scale, src.zeroPoint,
                                  extraParams=None if src.extraParams is None else
                                  hal.SymmPerChannelQuantParams(list(src.extraParams.scales),
                                                                src.extraParams.channelDim))
            data = self._values.get(k, b"")
            if k in self._values and data is None:
                operand.lifetime = OperandLifeTime.NO_VALUE
            elif k in self._values:
                if len(data) <= IMMEDIATE_LIMIT and not isinstance(data, memoryview):
                    operand.lifetime = OperandLifeTime.CONSTANT_COPY
                    operand.location = hal.DataLocation(0, len(values), len(data))
                    values += data
                else:
                    operand.lifetime = OperandLifeTime.CONSTANT_REFERENCE
                    operand.location = hal.DataLocation(len(pools), 0, len(data))
                    pools.append(data)
            elif k in self._inputs:
                operand.lifetime = OperandLifeTime.MODEL_INPUT
            elif k in self._outputs:
                operand.lifetime = OperandLifeTime.MODEL_OUTPUT
            operands.append(operand)
        for op in self._operations:
            for k in op.inputs:
                operands[k].numberOfConsumers += 1
        for k in self._inputs:
            if k in self._values:
                raise NNAPIError(f"model input {k} also has a constant value")
        operations = [hal.Operation(op.type, list(op.inputs), list(op.outputs)) for op in self._operations]
        return hal.Model(operands, operations, list(self._inputs), list(self._outputs), bytes(values), pools,
                         self._relaxed)


def _check_range(array: np.ndarray, dtype: np.dtype, what: str) -> None:
    """Integer values must fit ``dtype`` (no silent wrap-around); finite values must stay finite in float16."""
    if dtype.kind in "iu" and array.size and array.dtype.kind in "iub":
        info = np.iinfo(dtype)
        low, high = int(array.min()), int(array.max())
        if low < info.min or high > info.max:
            raise NNAPIError(f"{what}: values {low}..{high} do not fit {dtype} ({info.min}..{info.max})")
    if dtype == np.float16 and array.size and array.dtype != np.float16 and array.dtype.kind in "iuf":
        wide = array.astype(np.float64)
        with np.errstate(over="ignore"):
            overflow = np.isfinite(wide) & ~np.isfinite(wide.astype(np.float16))
        if overflow.any():
            raise NNAPIError(f"{what}: value {wide[overflow].flat[0]} is beyond float16's range "
                             f"(largest finite {float(np.finfo(np.float16).max)})")


class Compilation:
    """A finished model being prepared for this driver."""

    @refusing
    def __init__(self, model: Model, device: hal.Device | None = None):
        if not isinstance(model, Model):
            raise NNAPIError(f"Compilation needs an nnapi.Model, got {type(model).__name__}")
        self.model = model
        self.device = device or hal.Device()
        self.prepared: hal.PreparedModel | None = None

    @refusing
    def finish(self) -> None:
        """Lower the model onto a verified OpenVX graph (raises ``NNAPIError``)."""
        if self.prepared is not None:
            raise NNAPIError("the compilation is already finished")
        self.prepared = self.device.prepare_model(self.model.to_hal())

    def release(self) -> None:
        """Release the OpenVX graph now (garbage collection does it otherwise)."""
        if self.prepared is not None:
            self.prepared.release()
            self.prepared = None


class Execution:
    """One run of a finished compilation: inputs, in-place outputs, ``compute``."""

    @refusing
    def __init__(self, compilation: Compilation):
        if compilation.prepared is None:
            raise NNAPIError("the compilation is not finished (call finish())")
        self.compilation = compilation
        hal_model = compilation.model.to_hal()
        self._model = hal_model
        self._inputs: dict[int, np.ndarray | None] = {}
        self._outputs: dict[int, np.ndarray] = {}
        self._measure = False
        self._timing: hal.Timing | None = None
        self._shapes: list[hal.OutputShape] | None = None

    def set_measure_timing(self, measure: bool) -> None:
        """Measure the durations of the next ``compute`` (``get_duration``); off by default."""
        self._measure = bool(measure)

    @refusing
    def get_duration(self, code: DurationCode) -> int | None:
        """Nanoseconds the last ``compute`` spent (``DurationCode``: ON_HARDWARE, the graph's run; IN_DRIVER, the
        whole execution), at the HAL's microsecond resolution; None when it was not measured or failed."""
        try:
            code = DurationCode(code)
        except ValueError:
            raise NNAPIError(f"duration code {code} is not a DurationCode") from None
        if self._timing is None:
            raise NNAPIError("the execution has not computed yet")
        value = self._timing.timeOnDevice if code == DurationCode.ON_HARDWARE else self._timing.timeInDriver
        return None if value == hal.NO_TIME else value * 1000

    @refusing
    def output_shape(self, k: int) -> tuple[int, ...]:
        """Output ``k``'s dimensions as the last ``compute`` computed them (an output the model left unknown
        included; known too after a compute refused its buffer as too small)."""
        k = self._position(k, self._model.outputIndexes, "output")
        if self._shapes is None:
            raise NNAPIError("the execution has not computed yet")
        return tuple(self._shapes[k].dimensions)

    def _position(self, k: int, indexes: list[int], what: str) -> int:
        if not isinstance(k, (int, np.integer)) or not 0 <= k < len(indexes):
            raise NNAPIError(f"{what} {k} does not exist (the model has {len(indexes)})")
        return int(k)

    @refusing
    def set_input(self, k: int, array) -> None:
        """Input ``k`` (position in the model's input list) takes ``array``'s values, and its shape where
        the model left dimensions unknown (0); None omits an optional input."""
        k = self._position(k, self._model.inputIndexes, "input")
        if array is None:
            self._inputs[k] = None
            return
        dtype = DTYPES[self._model.operands[self._model.inputIndexes[k]].type]
        array = np.asarray(array)
        if array.dtype != dtype:  # values of the operand's own dtype fit it: no scan of the input
            if not np.can_cast(array.dtype, dtype, "same_kind"):
                raise NNAPIError(f"input {k} is {dtype}; an array of {array.dtype} does not convert to it")
            _check_range(array, dtype, f"input {k}")
        elif array.flags.c_contiguous:
            self._inputs[k] = array
            return
        self._inputs[k] = np.ascontiguousarray(array, dtype).reshape(array.shape)  # 0-d stays 0-d

    @refusing
    def set_output(self, k: int, array: np.ndarray) -> None:
        """Output ``k`` is written into ``array`` (the caller's, C-contiguous) by ``compute``."""
        k = self._position(k, self._model.outputIndexes, "output")
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous or not array.flags.writeable:
            raise NNAPIError(f"output {k} must be a writable C-contiguous NumPy array")
        dtype = DTYPES[self._model.operands[self._model.outputIndexes[k]].type]
        if array.dtype != dtype:
            raise NNAPIError(f"output {k} is {dtype}; the array given is {array.dtype}")
        self._outputs[k] = array

    @refusing
    def compute(self) -> None:
        """Run the model; raises ``NNAPIError`` with the driver's ``ErrorStatus`` on failure."""
        for k in range(len(self._model.inputIndexes)):
            if k not in self._inputs:
                raise NNAPIError(f"input {k} (operand {self._model.inputIndexes[k]}) was not set")
        for k in range(len(self._model.outputIndexes)):
            if k not in self._outputs:
                raise NNAPIError(f"output {k} (operand {self._model.outputIndexes[k]}) was not set")
        prepared = self.compilation.prepared
        if prepared is None:
            raise NNAPIError("the compilation was released")
        inputs = [self._inputs[k] for k in range(len(self._inputs))]
        outputs = [self._outputs[k] for k in range(len(self._outputs))]
        self._timing = self._shapes = None
        if all(a is not None for a in inputs):  # arrays of the operands' shapes need no request of pools (the checked path)
            answer = prepared.execute_arrays(inputs, outputs, self._measure)
            if answer is not None:
                status, self._timing = answer
                if status != ErrorStatus.NONE:
                    raise NNAPIError(prepared.last_error, status)
                self._shapes = [hal.OutputShape(list(a.shape)) for a in outputs]  # run_arrays takes exact shapes
                return
        pools: list = []

        def argument(array: np.ndarray | None, dimensions: list[int]) -> hal.RequestArgument:
            if array is None:
                return hal.RequestArgument(True, hal.DataLocation(), [])
            pools.append(array.reshape(-1).view(np.uint8))
            return hal.RequestArgument(False, hal.DataLocation(len(pools) - 1, 0, array.nbytes), dimensions)

        def dimensions(k: int) -> list[int]:
            """The array's shape where the model leaves a dimension unknown (else its byte count tells)."""
            declared = self._model.operands[self._model.inputIndexes[k]].dimensions
            array = self._inputs[k]
            unknown = array is not None and array.ndim and (not declared or 0 in declared)
            return list(array.shape) if unknown else []
        request = hal.Request([argument(self._inputs[k], dimensions(k)) for k in range(len(self._inputs))],
                              [argument(self._outputs[k], []) for k in range(len(self._outputs))], pools)
        status, shapes, self._timing = prepared.execute_synchronously(request, self._measure)
        if shapes:
            self._shapes = shapes
        if status != ErrorStatus.NONE:
            raise NNAPIError(prepared.last_error, status)
