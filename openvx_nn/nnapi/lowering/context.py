"""What a lowering function sees of one NNAPI operation (``OpContext``) and
the graph under construction (``GraphBuilder``).

A lowering function reads its operation's constant scalars and calls ``node``
with an NNAPI kernel's tensor names; operand counts and types were checked
against the operation's signature (``signatures``) with the model.
``node`` infers the outputs through the kernel's own ``infer`` (the rules the
OpenVX validator applies too), checks them against the declared operands and,
unless the builder is a dry run (``get_supported_operations``), creates the
OpenVX tensors, scalars and the node.

What only an execution can tell (a model input's unknown dimensions, the value of a model input read
as a parameter, such as RESHAPE's shape) raises ``Deferred``; an execution then lowers the model
again with the request's dimensions and values (``GraphBuilder.runtime``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import operations  # noqa: F401  (the built-in kernels the lowerings name)
from ...core.context import Context
from ...core.datatypes import dtype_of
from ...core.enums import Type
from ...core.graph import Graph
from ...core.node import Node
from ...core.scalar import Scalar
from ...core.tensor import Tensor
from ...operations.nnapi.common import NNAPI_KERNELS, VX_TYPES, Args, ShapeError, TensorSpec
from ..enums import (
    DTYPES,
    QUANTIZATION,
    TENSOR_TYPES,
    ErrorStatus,
    OperandLifeTime,
    OperandType,
    OperationType,
    as_bool,
)
from ..errors import NNAPIError
from ..hal.structs import Model, Operand, constant_bytes
from ..signature_check import check_enum, check_signature

QUANT8 = OperandType.TENSOR_QUANT8_ASYMM
CONSTANT = (OperandLifeTime.CONSTANT_COPY, OperandLifeTime.CONSTANT_REFERENCE)


NHWC_FROM_NCHW = (0, 2, 3, 1)
"""``OpContext.perm`` of an NCHW operation onto an NHWC kernel."""


def _perm(axes: tuple[int, ...]) -> dict[str, int]:
    """The ``transpose`` kernel's scalars for a permutation of up to four axes (the rest in place)."""
    return {f"perm{i}": a for i, a in enumerate((*axes, *range(len(axes), 4)))}


class Deferred(NNAPIError):
    """The operation needs what only an execution gives: dimensions or the value of a model input."""


class GraphBuilder:
    """Operand shapes, constants and (unless ``dry``) the OpenVX objects of one model."""

    def __init__(self, model: Model, dry: bool, runtime: dict[int, np.ndarray] | None = None):
        self.model = model
        self.dry = dry
        self.runtime = runtime or {}  # operand -> a model input's value in the request being planned
        self.parameters: set[int] = set()  # model inputs the lowering read as parameters (from runtime)
        # the model's operands, then the temporaries a lowering adds (``temporary``)
        self.operands = list(model.operands)
        self.shapes: dict[int, tuple[int, ...]] = {}
        self.tensors: dict[int, Tensor] = {}
        self.refs: list = []  # every object made here, released in reverse order
        self.node_ops: list[tuple[Node, int]] = []
        self.writers = {k for op in model.operations for k in op.outputs}
        self.made: dict[int, np.ndarray] = {}  # constants a lowering added (``constant_operand``)
        # operands whose first dimension the data decides: operand -> the INT32 [1] operand a kernel writes that
        # count into (``OpContext.rows_counted``, carried on by ``counted_rows``); their tensors hold as many rows
        # as could come
        self.counted: dict[int, int] = {}
        for k, operand in enumerate(model.operands):
            dims = tuple(int(d) for d in operand.dimensions)
            if dims and all(dims) and not self.absent(k):
                self.shapes[k] = dims
        self.context = self.graph = None
        if not dry:
            self.context = Context.create()
            self.graph = Graph(self.context)
            self.graph.python_helpers = True  # each run summons them (lowered.py)

    # -- operands -------------------------------------------------------------
    def temporary(self, like: int) -> int:
        """A new operand typed and quantized like operand ``like``, its shape to be inferred."""
        src = self.operands[like]
        self.operands.append(Operand(src.type, [], 0, src.scale, src.zeroPoint, extraParams=src.extraParams))
        self.writers.add(len(self.operands) - 1)
        return len(self.operands) - 1

    def constant_operand(self, value: np.ndarray, kind: OperandType) -> int:
        """A new constant operand of ``kind`` holding ``value`` (NNAPI-shaped), for a kernel input a lowering
        makes (a per-channel filter's scales): its tensor is written once, as the model's constants are."""
        value = np.ascontiguousarray(value, DTYPES[kind])
        self.operands.append(Operand(kind, list(value.shape), 0, lifetime=OperandLifeTime.CONSTANT_COPY))
        k = len(self.operands) - 1
        self.made[k] = value
        self.shapes[k] = tuple(value.shape)
        return k

    def count_operand(self) -> int:
        """A new INT32 [1] operand a kernel writes a count into, read after each run: a tensor of its own (never
        placed in the graph's arena), zero until written."""
        return self.constant_operand(np.zeros(1, np.int32), OperandType.TENSOR_INT32)

    def absent(self, k: int) -> bool:
        """No value: NO_VALUE, a 0 in a tensor's dimensions, or never given a value nor written."""
        operand = self.operands[k]
        if operand.lifetime == OperandLifeTime.NO_VALUE:
            return True
        if operand.type in TENSOR_TYPES and operand.lifetime in CONSTANT and 0 in operand.dimensions:
            return True
        return (operand.lifetime == OperandLifeTime.TEMPORARY_VARIABLE and k not in self.writers
                and k not in self.model.inputIndexes)

    def internal(self, k: int) -> bool:
        """Operand ``k`` is a temporary of the model or of a lowering: neither a model input or output nor a
        constant, so no execution reads or writes it."""
        return self.operands[k].lifetime == OperandLifeTime.TEMPORARY_VARIABLE and \
            k not in self.model.inputIndexes and k not in self.model.outputIndexes

    def value(self, k: int) -> np.ndarray:
        """A constant operand's value, NNAPI-shaped (a model input's from ``runtime``)."""
        if k in self.runtime:
            self.parameters.add(k)
            return self.runtime[k]
        if k in self.made:
            return self.made[k]
        operand = self.operands[k]
        data = constant_bytes(self.model, operand)
        dtype = DTYPES[OperandType(operand.type)]
        shape = tuple(int(d) for d in operand.dimensions)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if len(data) != count * dtype.itemsize:
            raise NNAPIError(f"operand {k}: its value has {len(data)} bytes, its type and dimensions need "
                             f"{count * dtype.itemsize}")
        value = np.frombuffer(data, dtype).reshape(shape)
        return as_bool(value) if dtype == np.bool_ else value  # C's bytes: any non-zero byte is true

    def tensor(self, k: int) -> Tensor:
        tensor = self.tensors.get(k)
        if tensor is None:
            operand = self.operands[k]
            shape = self.shapes[k]
            vx_type = VX_TYPES[DTYPES[OperandType(operand.type)]]
            value = self.value(k) if operand.lifetime in CONSTANT else None
            if value is not None and operand.lifetime == OperandLifeTime.CONSTANT_REFERENCE and \
                    value.flags.writeable and value.flags.aligned and value.dtype == dtype_of(vx_type):
                # A pool the application keeps for the model's lifetime (NNAPI's rule for memory and large
                # values): the tensor reads it in place.  Read-only pools (Python bytes) are copied, since
                # kernels compiled for writable arrays would not take them.
                tensor = Tensor(self.context, tuple(reversed(shape)), vx_type, 0, storage=value.T)
            elif value is None and self.internal(k):
                # Only the graph reads and writes it: the verify's memory plan places it in the graph's arena.
                tensor = Tensor.create_virtual(self.graph, len(shape), tuple(reversed(shape)), vx_type, 0)
            else:
                tensor = Tensor.create(self.context, len(shape), tuple(reversed(shape)), vx_type, 0)
                if value is not None:
                    tensor.array.T[...] = value if value.dtype.itemsize != 2 else value.view(tensor.array.dtype)
            tensor.set_name(f"nnapi operand {k}")
            self.tensors[k] = tensor
            self.refs.append(tensor)
        return tensor

    def scalar(self, vx_type: int, value) -> Scalar:
        dtype = np.float32 if vx_type == Type.VX_TYPE_FLOAT32 else np.int32
        scalar = Scalar(self.context, vx_type, np.asarray(value, dtype).tobytes())
        self.refs.append(scalar)
        return scalar

    def release(self) -> None:
        refs, self.refs = self.refs, []
        for node, _ in self.node_ops:
            node.release()
        self.node_ops = []
        for ref in reversed(refs):
            ref.release()
        if self.graph is not None:
            self.graph.release()
            self.context.release()
            self.graph = self.context = None


class OpContext:
    """One operation being lowered: its operands, checks and node creation."""

    def __init__(self, builder: GraphBuilder, index: int):
        self.b = builder
        self.index = index
        op = builder.model.operations[index]
        self.type = OperationType(op.type)
        self.inputs = list(op.inputs)
        self.outputs = list(op.outputs)
        # the model's check has passed it: this names the form (which inputs are optional, which are enums)
        self.form = check_signature(self.type, [builder.operands[k] for k in self.inputs],
                                    [builder.operands[k] for k in self.outputs], index)
        self.rows_count: int | None = None
        """The count operand of the inputs whose rows the data decides, for an operation whose kernel takes it
        (``counted_rows.settle``); None when its inputs have fixed rows."""
        self.perm: tuple[int, ...] | None = None
        """Input 0 and output 0 seen through a permutation of their axes (NHWC from API level 29's NCHW layout, a
        normalization's axis moved last): ``shape(0)`` reads input 0 permuted and ``node`` puts transposes at the
        node's edges, so the lowering and its kernel stay as they are."""

    def fail(self, message: str, status: ErrorStatus = ErrorStatus.INVALID_ARGUMENT) -> None:
        raise NNAPIError(message, status, self.index, self.type)

    # -- reading operands ---------------------------------------------------------
    def operand(self, k: int, output: bool = False):
        return self.b.operands[(self.outputs if output else self.inputs)[k]]

    def kind(self, k: int) -> OperandType:
        return OperandType(self.operand(k).type)

    def present(self, k: int) -> bool:
        return k < len(self.inputs) and not self.b.absent(self.inputs[k])

    def optional(self, k: int) -> bool:
        """Whether input ``k`` may be omitted (its slot in the operation's signature)."""
        return self.form.input_slot(k, len(self.inputs)).optional

    def scalar(self, k: int) -> Any:
        """The value of constant scalar input ``k`` (its type is the signature's, checked with the model)."""
        self._parameter(k, self.kind(k).name)
        value = self.b.value(self.inputs[k]).item()
        check_enum(self.form.input_slot(k, len(self.inputs)), k, value, self.index, self.type)
        return value

    def constant(self, k: int) -> np.ndarray:
        """A parameter tensor's value: a constant, or a model input's value in the request."""
        self._parameter(k, OperandType(self.operand(k).type).name)
        return self.b.value(self.inputs[k])

    def _parameter(self, k: int, what: str) -> None:
        """Input ``k`` is read as a parameter: a constant, or a model input the request gives."""
        index = self.inputs[k]
        if self.operand(k).lifetime in CONSTANT or index in self.b.runtime:
            return
        if not self.present(k):
            self.fail(f"input {k} ({what}, operand {index}) has no value; it is not optional")
        if index in self.b.model.inputIndexes:
            raise Deferred(f"input {k} ({what}, operand {index}) is a model input: its value comes with "
                           "the execution", ErrorStatus.INVALID_ARGUMENT, self.index, self.type)
        self.fail(f"input {k} ({what}) must be a constant or a model input")

    def channel_quant(self, k: int) -> tuple[np.ndarray, int]:
        """Input ``k``'s per-channel scales (float32, one per index of its channel dimension) and that
        dimension: a TENSOR_QUANT8_SYMM_PER_CHANNEL operand's (checked with the model)."""
        extra = self.operand(k).extraParams
        if extra is None:
            self.fail(f"input {k} (operand {self.inputs[k]}) has no per-channel quantization")
        return np.asarray(extra.scales, np.float32), int(extra.channelDim)

    def shape(self, k: int) -> tuple[int, ...]:
        index = self.inputs[k]
        if index not in self.b.shapes:
            self._unknown(k, str(k))
        shape = self.b.shapes[index]
        if self.perm is not None and k == 0 and len(shape) == len(self.perm):
            return tuple(shape[a] for a in self.perm)
        return shape

    def _unknown(self, k: int, name: str) -> None:
        """Input ``k`` has no shape yet: omitted (an error), or known only at execution (``Deferred``)."""
        index = self.inputs[k]
        if self.b.absent(index):
            self.fail(f"input {name} (operand {index}) has no value; it is not optional")
        raise Deferred(f"input {name} (operand {index}) has unknown dimensions", ErrorStatus.INVALID_ARGUMENT,
                       self.index, self.type)

    def rows_counted(self, outputs: list[int]) -> int:
        """Outputs ``outputs`` (positions) have as many rows as the data decides: their tensors hold the most rows
        that can come, and the kernel writes the count into the operand returned (an execution reports and copies
        that many rows of a model output; an operation reading them takes the count along: ``counted_rows``)."""
        count = self.b.count_operand()
        for j in outputs:
            self.b.counted[self.outputs[j]] = count
        return count

    # -- making the node ----------------------------------------------------------
    def node(self, op: str, tensors: dict[str, int | None], outputs: dict[str, int | None],
             ints: dict[str, int] | None = None, floats: dict[str, float] | None = None,
             create: bool = True, made: dict[str, int] | None = None) -> None:
        """Add kernel ``org.openvx_nn.nnapi.<op>`` with NNAPI input positions ``tensors`` (None: absent)
        and output positions ``outputs``; check and record the outputs' shapes.  With ``create`` False
        only the checks run (the caller lowers the operation onto standard kernels instead); ``made``: inputs
        the lowering made, by operand index (``GraphBuilder.constant_operand``)."""
        kernel = NNAPI_KERNELS[op]
        optional = {n.rstrip("?") for n in kernel.inputs if n.endswith("?")}
        operands: dict[str, int | None] = {}
        for name, k in tensors.items():
            if k is not None and self.present(k):
                if self.inputs[k] not in self.b.shapes:
                    self._unknown(k, f"{k} ({name})")
                operands[name] = self.inputs[k]
            elif k is not None and k < len(self.inputs) and (name not in optional or not self.optional(k)):
                self.fail(f"input {k} ({name}, operand {self.inputs[k]}) has no value; it is not optional")
            else:
                operands[name] = None
        operands.update(made or {})
        outs = {n: (None if k is None else self.outputs[k]) for n, k in outputs.items()}
        if self.perm is not None:
            operands["input"], outs["output"] = self._permuted_edges(operands["input"], outs["output"])
        self.node_on(op, operands, outs, ints, floats, create)
        if self.perm is not None:
            back = tuple(int(a) for a in np.argsort(self.perm))
            self.node_on("transpose", {"input": outs["output"]}, {"output": self.outputs[0]}, _perm(back),
                         create=create)

    def permuted_edges(self) -> tuple[int, int]:
        """Input 0 transposed by ``perm``, and a temporary for output 0 in the kernels' order: for a lowering that
        writes several nodes between them (:meth:`restore_layout` then writes the temporary into output 0)."""
        return self._permuted_edges(self.inputs[0], self.outputs[0])

    def restore_layout(self, out: int) -> None:
        """Output 0 from ``out``, the temporary :meth:`permuted_edges` gave, transposed back from ``perm``."""
        back = tuple(int(a) for a in np.argsort(self.perm))
        self.node_on("transpose", {"input": out}, {"output": self.outputs[0]}, _perm(back))

    def _permuted_edges(self, data: int, out: int) -> tuple[int, int]:
        """A temporary holding input ``data`` transposed by ``perm``, and one for the kernel's output (transposed
        back into ``out`` by ``node``), typed and quantized like them."""
        if len(self.b.shapes[data]) != len(self.perm):
            self.fail(f"input 0 has shape {list(self.b.shapes[data])}; its layout needs {len(self.perm)} dimensions")
        moved_in, moved_out = self.b.temporary(data), self.b.temporary(out)
        self.node_on("transpose", {"input": data}, {"output": moved_in}, _perm(self.perm))
        return moved_in, moved_out

    def node_on(self, op: str, inputs: dict[str, int | None], outputs: dict[str, int | None],
                ints: dict[str, int] | None = None, floats: dict[str, float] | None = None,
                create: bool = True) -> None:
        """``node`` with operand indexes (inputs of known shape, or None) instead of NNAPI positions."""
        kernel = NNAPI_KERNELS[op]
        b = self.b
        operands = {**inputs, **outputs}
        specs: dict[str, Any] = {}
        scalars: dict[str, Any] = dict(ints or {})
        scalars.update(floats or {})
        for name, index in operands.items():
            if index is None:
                specs[name] = None
                continue
            operand = b.operands[index]
            if index in b.shapes:
                specs[name] = TensorSpec(b.shapes[index], DTYPES[OperandType(operand.type)])
            if name in kernel.quantized and QUANTIZATION.get(operand.type) is not None:  # one scale, one zero point
                scalars[f"{name}_scale"] = float(operand.scale)
                scalars[f"{name}_zero_point"] = int(operand.zeroPoint)
        for name in kernel.quantized:
            scalars.setdefault(f"{name}_scale", 1.0)
            scalars.setdefault(f"{name}_zero_point", 0)
        try:
            inferred = kernel.infer(Args(specs, scalars))
        except ShapeError as err:
            self.fail(f"{err.param}: {err}")
        for name, index in outputs.items():
            if index is not None:
                self._settle_output(index, *inferred[name])
        if create and not b.dry:
            self._create(kernel, operands, scalars)

    def _settle_output(self, index: int, shape: tuple[int, ...], dtype: np.dtype) -> None:
        operand = self.b.operands[index]
        have = DTYPES[OperandType(operand.type)]
        if have != np.dtype(dtype):
            self.fail(f"output operand {index} is {OperandType(operand.type).name}, the result is {np.dtype(dtype)}")
        declared = tuple(int(d) for d in operand.dimensions)
        if index in self.b.counted:  # the first dimension comes with the data
            declared = declared[:1] and (0,) + declared[1:]
        if declared and (len(declared) != len(shape) or any(d and d != s for d, s in zip(declared, shape))):
            self.fail(f"output operand {index} is declared {list(declared)}, the result has shape {list(shape)}")
        self.b.shapes[index] = tuple(shape)

    def _create(self, kernel, operands: dict[str, int | None], scalars: dict[str, Any]) -> None:
        b = self.b
        description = b.graph.context.kernels.by_name(kernel.name)
        node = Node(b.graph, description)
        b.node_ops.append((node, self.index))
        values = [None if operands.get(n) is None else b.tensor(operands[n]) for n in kernel.tensor_names]
        values += [b.scalar(t, scalars[n]) for n, t in kernel.scalar_names]
        for i, value in enumerate(values):
            if value is not None:
                node.set_parameter(i, value)

    # -- nodes of the standard OpenVX kernels ----------------------------------------
    def settle(self, k: int, shape: tuple[int, ...], dtype: np.dtype) -> None:
        """Record output ``k``'s shape (checked against its declaration)."""
        self._settle_output(self.outputs[k], shape, dtype)

    def vx(self, what: str, value) -> Any:
        """An OpenVX parameter: ('in'|'out', position), ('enum'|'f32'|'size', number), ('tmp', NNAPI shape)
        or ('tmp_dims', OpenVX dims) of a float32 tensor, ('const', (OpenVX dims, values in that axis order))."""
        b = self.b
        if what == "in":
            return b.tensor(self.inputs[value])
        if what == "out":
            return b.tensor(self.outputs[value])
        if what in ("tmp", "tmp_dims", "const"):
            dims = tuple(reversed(value)) if what == "tmp" else tuple(value[0]) if what == "const" else tuple(value)
            if what == "const":
                tensor = Tensor.create(b.context, len(dims), dims, Type.VX_TYPE_FLOAT32, 0)
                tensor.array[...] = value[1]
            else:  # a lowering's intermediate: the graph's memory plan places it
                tensor = Tensor.create_virtual(b.graph, len(dims), dims, Type.VX_TYPE_FLOAT32, 0)
            b.refs.append(tensor)
            return tensor
        if what == "size":
            scalar = Scalar(b.context, Type.VX_TYPE_SIZE, np.asarray(value, np.uintp).tobytes())
            b.refs.append(scalar)
            return scalar
        return b.scalar(Type.VX_TYPE_ENUM if what == "enum" else Type.VX_TYPE_FLOAT32, value)

    def standard(self, kernel_name: str, params: list) -> None:
        """Add a node of a standard kernel (``org.khronos...``) with parameters made by ``vx``."""
        if self.b.dry:
            return
        node = Node(self.b.graph, self.b.graph.context.kernels.by_name(kernel_name))
        self.b.node_ops.append((node, self.index))
        for i, value in enumerate(params):
            if value is not None:
                node.set_parameter(i, value)
