"""The ``@ffi.def_extern`` bodies of libneuralnetworks.so: C values in, a ``ResultCode`` out.

Translation only: handles to objects (``objects.Handles``), C buffers to memoryviews over the caller's
memory (no copy), ``CAPIError`` to its code plus one stderr line naming the function and the object.
Ctrl-C inside an entry is handled as libopenvx's entries handle it (``openvx_nn/capi/interrupt.py``): a log
line, ``OP_FAILED``, and the signal given back to a C program, which then ends as it would without the library.
"""
from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable

from ... import __version__
from ...capi.interrupt import MESSAGE, escaped, redeliver
from ..enums import ResultCode
from .binding import ffi
from .execution import Burst, CExecution, Event
from .objects import CAPIError, CCompilation, CModel, Handles, Memory

HANDLES = Handles()
KINDS = (Memory, CModel, CCompilation, CExecution, Event, Burst)
"""The ``kind`` argument of ``nnapi_free`` (csrc/nnapi/neuralnetworks.c's KIND_* values)."""


def _log(fn: str, message: str) -> None:
    sys.stderr.write(f"libneuralnetworks: {fn}: {message}\n")
    sys.stderr.flush()


def _entry(function: Callable[..., int | None]) -> Callable[..., int]:
    """A bridge function: ``CAPIError`` becomes its code (and a log line), Ctrl-C ``OP_FAILED`` with the signal
    given back (``interrupt.redeliver``), anything else ``OP_FAILED``."""
    @functools.wraps(function)
    def call(fn_c, *args) -> int:
        fn = ffi.string(fn_c).decode()
        try:
            function(*args)
        except CAPIError as err:
            _log(fn, str(err))
            return int(err.code)
        except MemoryError:
            _log(fn, "out of memory")
            return int(ResultCode.OUT_OF_MEMORY)
        except KeyboardInterrupt:
            _log(fn, MESSAGE)
            redeliver()
            return int(ResultCode.OP_FAILED)
        except Exception as err:  # noqa: BLE001 - a C caller gets a code, never a Python exception
            _log(fn, f"internal error {type(err).__name__}: {err}")
            return int(ResultCode.OP_FAILED)
        return int(ResultCode.NO_ERROR)
    return ffi.def_extern(name=function.__name__, onerror=escaped(int(ResultCode.OP_FAILED)))(call)


def _new(out, obj) -> None:
    out[0] = HANDLES.add(obj)


MAX_COUNT = 1 << 16
"""More dimensions or operand indexes than this in one call is garbage (refused before reading them)."""


def _ints(pointer, count: int) -> list[int]:
    if count > MAX_COUNT:
        raise CAPIError(ResultCode.BAD_DATA, f"a count of {count} (more than {MAX_COUNT}) is not a list's length")
    return list(ffi.unpack(ffi.cast("uint32_t *", pointer), count)) if count else []


def _with(handle: int, cls: type, what: str):
    """The object of ``handle`` (its kind checked), naming it in any error."""
    try:
        return HANDLES.get(handle, cls)
    except CAPIError as err:
        raise CAPIError(err.code, f"{what}: {err}") from None


@contextlib.contextmanager
def _naming(what: str):
    """Refusals inside name the object (``execution 0x10030: ...``)."""
    try:
        yield
    except CAPIError as err:
        raise CAPIError(err.code, f"{what}: {err}") from None


def _execution(handle: int) -> CExecution:
    return _with(handle, CExecution, f"execution {handle:#x}")


@_entry
def nnapi_memory_create(size, protect, fd, offset, out):
    _new(out, Memory(size, protect, fd, offset))


@ffi.def_extern()
def nnapi_free(fn_c, handle, kind):
    try:
        HANDLES.remove(handle, KINDS[kind])
    except CAPIError as err:
        _log(ffi.string(fn_c).decode(), str(err))


@_entry
def nnapi_model_create(out):
    _new(out, CModel())


@_entry
def nnapi_model_finish(model):
    _with(model, CModel, f"model {model:#x}").finish()


@_entry
def nnapi_model_add_operand(model, code, count, dims, scale, zero_point):
    _with(model, CModel, f"model {model:#x}").add_operand(code, _ints(dims, count), scale, zero_point)


@_entry
def nnapi_model_set_value(model, index, buffer, length):
    target = _with(model, CModel, f"model {model:#x}")
    data = None if buffer == ffi.NULL else memoryview(ffi.buffer(buffer, length))
    # NNAPI copies values of at most 128 bytes; longer ones are referenced and must outlive the model
    target.set_value(index, data, copy=length <= 128)


@_entry
def nnapi_model_set_value_from_memory(model, index, memory, offset, length):
    target = _with(model, CModel, f"model {model:#x}")
    region = _with(memory, Memory, f"memory {memory:#x}").region(offset, length)
    target.set_value(index, region, copy=False)


@_entry
def nnapi_model_add_operation(model, code, n_in, ins, n_out, outs):
    _with(model, CModel, f"model {model:#x}").add_operation(code, _ints(ins, n_in), _ints(outs, n_out))


@_entry
def nnapi_model_set_channel_quant(model, index, channel_dim, count, scales):
    if count > MAX_COUNT:
        raise CAPIError(ResultCode.BAD_DATA, f"a scaleCount of {count} (more than {MAX_COUNT}) is not a channel count")
    values = list(ffi.unpack(scales, count)) if count else []
    _with(model, CModel, f"model {model:#x}").set_channel_quant(index, values, channel_dim)


@_entry
def nnapi_model_relax(model, allow):
    _with(model, CModel, f"model {model:#x}").relax(bool(allow))


@_entry
def nnapi_model_identify(model, n_in, ins, n_out, outs):
    _with(model, CModel, f"model {model:#x}").identify(_ints(ins, n_in), _ints(outs, n_out))


@_entry
def nnapi_compilation_create(model, for_devices, out):
    _new(out, CCompilation(_with(model, CModel, f"model {model:#x}"), bool(for_devices)))


@_entry
def nnapi_model_supported(model, supported):
    with _naming(f"model {model:#x}"):
        answers = _with(model, CModel, "the model").supported_operations()
    for j, answer in enumerate(answers):
        supported[j] = answer


@_entry
def nnapi_device_version(buffer, size):
    text = f"openvx-nn {__version__}".encode()[:size - 1]
    ffi.memmove(buffer, text + b"\0", len(text) + 1)


@_entry
def nnapi_compilation_set_preference(compilation, preference):
    _with(compilation, CCompilation, f"compilation {compilation:#x}").set_preference(preference)


@_entry
def nnapi_compilation_finish(compilation):
    _with(compilation, CCompilation, f"compilation {compilation:#x}").finish()


@_entry
def nnapi_execution_create(compilation, out):
    _new(out, CExecution(_with(compilation, CCompilation, f"compilation {compilation:#x}")))


@_entry
def nnapi_execution_set(execution, output, index, typed, code, count, dims, scale, zero_point, buffer, memory,
                        offset, length):
    target = _with(execution, CExecution, f"execution {execution:#x}")
    if memory:
        data = _with(memory, Memory, f"memory {memory:#x}").region(offset, length, written=bool(output))
    elif buffer == ffi.NULL:
        data = None  # setInput(NULL, 0): an omitted optional input
    else:
        data = memoryview(ffi.buffer(buffer, length))
    kind = (code, _ints(dims, count), scale, zero_point) if typed else None
    try:
        target.set(bool(output), index, kind, data)
    except CAPIError as err:
        raise CAPIError(err.code, f"execution {execution:#x}: {err}") from None


@_entry
def nnapi_execution_compute(execution):
    with _naming(f"execution {execution:#x}"):
        _execution(execution).compute()


@_entry
def nnapi_execution_measure(execution, measure):
    with _naming(f"execution {execution:#x}"):
        _execution(execution).set_measure_timing(bool(measure))


@_entry
def nnapi_execution_duration(execution, code, out):
    with _naming(f"execution {execution:#x}"):
        out[0] = _execution(execution).duration(code)


@_entry
def nnapi_execution_output_rank(execution, index, rank):
    with _naming(f"execution {execution:#x}"):
        shape = _execution(execution).output_dimensions(index, True)
        rank[0] = len(shape.dimensions)
        CExecution.check_sufficient(index, shape)


@_entry
def nnapi_execution_output_dimensions(execution, index, dimensions):
    with _naming(f"execution {execution:#x}"):
        shape = _execution(execution).output_dimensions(index, False)
        for j, d in enumerate(shape.dimensions):
            dimensions[j] = d
        CExecution.check_sufficient(index, shape)


@_entry
def nnapi_burst_create(compilation, out):
    with _naming(f"compilation {compilation:#x}"):
        _new(out, Burst(_with(compilation, CCompilation, "the compilation")))


@_entry
def nnapi_burst_compute(execution, burst):
    target = _execution(execution)
    with _naming(f"burst {burst:#x}, execution {execution:#x}"):
        _with(burst, Burst, "the burst").compute(target)


@_entry
def nnapi_execution_start(execution, out):
    _new(out, _with(execution, CExecution, f"execution {execution:#x}").start())


@_entry
def nnapi_event_wait(event):
    _with(event, Event, f"event {event:#x}").wait()
