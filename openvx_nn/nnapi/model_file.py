"""The ``.nnapi`` file: a HAL ``Model`` saved with ``numpy.savez`` (no pickle), see docs/nnapi.md.

NNAPI has no file format (an app builds its model in code); this one lets ``openvx-nn run`` and
other processes load a model.  Members: ``model.json`` (UTF-8 bytes: format tag, version, operands,
operations, input and output indexes, pool count; enums by name; a per-channel quantized operand's
``extraParams``), ``operandValues`` and ``pool<i>``
(uint8 arrays).  Loading checks the structure (``execution_order``) so a bad file fails at once.
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any

import numpy as np

from .enums import OperandLifeTime, OperandType, OperationType
from .errors import NNAPIError, refusing
from .hal.structs import DataLocation, Model, Operand, Operation, SymmPerChannelQuantParams, pool_bytes
from .model_check import execution_order

FORMAT = "openvx-nn.nnapi"
VERSION = 1


def _bytes(buffer) -> np.ndarray:
    return np.frombuffer(bytes(pool_bytes(buffer)), np.uint8)


def save_model(model: Model, path: str | os.PathLike) -> None:
    """Write ``model`` (a HAL ``Model``) to ``path`` in the ``.nnapi`` format."""
    description = {
        "format": FORMAT, "version": VERSION,
        "operands": [_operand(o) for o in model.operands],
        "operations": [{"type": OperationType(op.type).name, "inputs": [int(k) for k in op.inputs],
                        "outputs": [int(k) for k in op.outputs]} for op in model.operations],
        "inputIndexes": [int(k) for k in model.inputIndexes],
        "outputIndexes": [int(k) for k in model.outputIndexes],
        "pools": len(model.pools),
        "relaxComputationFloat32toFloat16": bool(model.relaxComputationFloat32toFloat16),
    }
    members = {"model.json": np.frombuffer(json.dumps(description).encode(), np.uint8),
               "operandValues": _bytes(model.operandValues)}
    members.update({f"pool{i}": _bytes(pool) for i, pool in enumerate(model.pools)})
    with open(path, "wb") as f:  # a file object: savez would append ".npz" to a name
        np.savez(f, **members)


def _operand(o: Operand) -> dict:
    described = {"type": OperandType(o.type).name, "dimensions": [int(d) for d in o.dimensions],
                 "numberOfConsumers": int(o.numberOfConsumers), "scale": float(o.scale),
                 "zeroPoint": int(o.zeroPoint), "lifetime": OperandLifeTime(o.lifetime).name,
                 "location": [int(o.location.poolIndex), int(o.location.offset), int(o.location.length)]}
    if o.extraParams is not None:  # a TENSOR_QUANT8_SYMM_PER_CHANNEL operand's channel quantization
        described["extraParams"] = {"channelDim": int(o.extraParams.channelDim),
                                    "scales": [float(x) for x in o.extraParams.scales]}
    return described


def _channel_quant(extra: Any, where: str) -> SymmPerChannelQuantParams | None:
    if extra is None:
        return None
    if not isinstance(extra, dict) or not isinstance(extra.get("scales"), list):
        raise NNAPIError(f"{where} extraParams {extra!r} is not {{\"channelDim\": int, \"scales\": [numbers]}}")
    scales = extra["scales"]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in scales):
        raise NNAPIError(f"{where} extraParams scales {scales!r} are not all numbers")
    return SymmPerChannelQuantParams([float(x) for x in scales], _int(extra.get("channelDim"), f"{where} channelDim"))


@refusing
def load_model(path: str | os.PathLike) -> Model:
    """The HAL ``Model`` in the ``.nnapi`` file ``path``, structurally checked (raises ``NNAPIError``)."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as f:
            data = f.read()
    except OSError as err:
        raise NNAPIError(f"{where}: cannot read ({err.strerror or err})") from None
    if not zipfile.is_zipfile(io.BytesIO(data)):  # np.load would take other bytes for a pickle or a .npy
        raise NNAPIError(f"{where} is not a .nnapi model file (a NumPy .npz archive)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            members = {name: archive[name] for name in archive.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as err:
        raise NNAPIError(f"{where} is not a .nnapi model file (a NumPy .npz archive): {err}") from None
    if "model.json" not in members or "operandValues" not in members:
        raise NNAPIError(f"{where} is not a .nnapi model file: it lacks model.json or operandValues")
    try:
        description = json.loads(members["model.json"].tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise NNAPIError(f"{where}: model.json is not valid JSON ({err})") from None
    if not isinstance(description, dict) or description.get("format") != FORMAT:
        raise NNAPIError(f"{where}: model.json does not describe an {FORMAT} model")
    if description.get("version") != VERSION:
        raise NNAPIError(f"{where}: format version {description.get('version')!r}; this reads version {VERSION}")
    try:
        model = _model(description, members)
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, NNAPIError):
            raise NNAPIError(f"{where}: {err}", err.status) from None
        raise NNAPIError(f"{where}: model.json is malformed ({type(err).__name__}: {err})") from None
    try:
        execution_order(model)
    except NNAPIError as err:
        raise NNAPIError(f"{where}: {err}", err.status) from None
    return model


def _enum(kind: type, name: Any, what: str):
    if not isinstance(name, str) or name not in kind.__members__:
        raise NNAPIError(f"{what} {name!r} is not an {kind.__name__}")
    return kind[name]


def _int(value: Any, what: str) -> int:
    """A JSON integer (not a float such as 1e308, nor a bool)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise NNAPIError(f"{what} {value!r} is not an integer")
    return value


def _ints(values: Any, what: str) -> list[int]:
    if not isinstance(values, list):
        raise NNAPIError(f"{what} {values!r} is not a list")
    return [_int(x, what) for x in values]


def _model(d: dict, members: dict[str, np.ndarray]) -> Model:
    operands = []
    for i, o in enumerate(d["operands"]):
        where = f"operand {i}:"
        scale = o["scale"]
        if not isinstance(scale, (int, float)) or isinstance(scale, bool):
            raise NNAPIError(f"{where} scale {scale!r} is not a number")
        location = _ints(o["location"], f"{where} location")
        if len(location) != 3:
            raise NNAPIError(f"{where} location {location} is not [poolIndex, offset, length]")
        operands.append(Operand(_enum(OperandType, o["type"], f"{where} type"),
                                _ints(o["dimensions"], f"{where} dimension"),
                                _int(o["numberOfConsumers"], f"{where} numberOfConsumers"), float(scale),
                                _int(o["zeroPoint"], f"{where} zeroPoint"),
                                _enum(OperandLifeTime, o["lifetime"], f"{where} lifetime"), DataLocation(*location),
                                _channel_quant(o.get("extraParams"), where)))
    operations = [Operation(_enum(OperationType, op["type"], f"operation {j}: type"),
                            _ints(op["inputs"], f"operation {j}: input"), _ints(op["outputs"], f"operation {j}: output"))
                  for j, op in enumerate(d["operations"])]
    pools = []
    count = _int(d["pools"], "pools")
    if not 0 <= count <= len(members):
        raise NNAPIError(f"pools {count}: the file holds {len(members)} members")
    for i in range(count):
        if f"pool{i}" not in members:
            raise NNAPIError(f"pool {i} is missing (model.json counts {count})")
        pools.append(members[f"pool{i}"].tobytes())
    relaxed = d.get("relaxComputationFloat32toFloat16", False)  # absent from files written before it existed
    if not isinstance(relaxed, bool):
        raise NNAPIError(f"relaxComputationFloat32toFloat16 {relaxed!r} is not a boolean")
    return Model(operands, operations, _ints(d["inputIndexes"], "model input"),
                 _ints(d["outputIndexes"], "model output"), members["operandValues"].tobytes(), pools, relaxed)
