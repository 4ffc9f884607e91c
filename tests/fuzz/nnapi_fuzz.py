"""The NNAPI model fuzzer: mutants of seed models covering every NNAPI 1.0 and 1.1 operation, each built (or loaded),
compiled and executed with random inputs in its own child.

Two modes. ``model``: a seed's recipe (operands, operations, model inputs and outputs) is changed in one to three
ways, then built through ``openvx_nn.nnapi.Model``: an operand's type, rank or dimensions, an operation's operand
index, a scale or zero point, an enum operand's value (fused activation, padding scheme, projection type), a
constant's value removed or made NO_VALUE, an operation's input or output dropped or added, the model's inputs or
outputs changed. ``file``: a seed saved as a ``.nnapi`` file is changed at the byte level: bit flips, truncation,
inserted bytes (of the file, or of one member re-zipped with a correct CRC so that the mutation reaches the
loader), or an integer of ``model.json`` overwritten with 0, -1, a huge value, 1e308 or NaN.
``Mutant.invalid`` is True only where the change certainly breaks NNAPI's rules (a negative or huge dimension,
an operand index out of range, a non-finite or non-positive quant8 scale, a zero point outside 0..255, an
undefined enum value, a required input without a value, a SOFTMAX or LOGISTIC quant8 output not at 1/256, a bias
scale off input scale * filter scale, no model inputs or outputs): such a model must be refused.

Usage: ``python tests/fuzz/nnapi_fuzz.py --mode model|file --count 10000 --seed 1 --workers 2 --timeout 30``; it
prints the summary line (counts per outcome, ``tests/fuzz/mutants.py``) and every mutant that ended in a bad
column.
"""
from __future__ import annotations

import argparse
import copy
import io
import json
import math
import os
import random
import resource
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import Mutant, campaign, serial_library

serial_library()  # before the library is imported: a fork copies only the calling thread

import numpy as np

from openvx_nn import nnapi
from openvx_nn.nnapi.signature_check import check_signature
from openvx_nn.nnapi.signatures import SIGNATURES, Slot

T = nnapi.OperandType
OP = nnapi.OperationType
F32T, I32T, Q8 = T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM
DTYPE = {T.FLOAT32: np.float32, T.INT32: np.int32, T.UINT32: np.uint32, F32T: np.float32, I32T: np.int32,
         Q8: np.uint8}
UNSET = "unset"  # an operand never given a value (a model input, or a temporary written by an operation)
FEED_LIMIT = 1 << 26
"""Bytes of one input or output the run allocates at most; a larger model that compiled counts as accepted."""
MEMORY_LIMIT = 3 << 30
"""Address space a child may add to what it inherits: a huge operand ends in MemoryError, not the OOM killer."""


@dataclass
class Operand:
    type: int
    dims: list
    scale: float = 0.0
    zero_point: int = 0
    value: object = UNSET  # UNSET, None (NO_VALUE) or the constant's value


@dataclass
class Recipe:
    """A model as data, so that a mutation is an edit and ``build`` makes it through the public API."""

    name: str
    operands: list[Operand] = field(default_factory=list)
    operations: list[tuple[int, list[int], list[int]]] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)

    def add(self, operand: Operand) -> int:
        self.operands.append(operand)
        return len(self.operands) - 1

    def input(self, kind, dims, scale=0.0, zero_point=0) -> int:
        self.inputs.append(self.add(Operand(kind, list(dims), scale, zero_point)))
        return self.inputs[-1]

    def const(self, kind, value, scale=0.0, zero_point=0) -> int:
        value = np.asarray(value, DTYPE[kind])
        return self.add(Operand(kind, list(value.shape), scale, zero_point, value))

    def i32(self, v) -> int:
        return self.add(Operand(T.INT32, [], value=np.int32(v)))

    def f32(self, v) -> int:
        return self.add(Operand(T.FLOAT32, [], value=np.float32(v)))

    def none(self) -> int:
        return self.add(Operand(F32T, [0], value=None))

    def temp(self, kind, dims, scale=0.0, zero_point=0) -> int:
        return self.add(Operand(kind, list(dims), scale, zero_point))

    def op(self, kind, inputs, outputs) -> list[int]:
        self.operations.append((kind, list(inputs), list(outputs)))
        return outputs

    def output(self, kind, dims, scale=0.0, zero_point=0) -> int:
        self.outputs.append(self.temp(kind, dims, scale, zero_point))
        return self.outputs[-1]


# -- seeds ---------------------------------------------------------------------------------------------------------

def _seeds() -> list[Recipe]:
    rng = np.random.default_rng(0)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    q = lambda *shape: rng.integers(0, 256, shape).astype(np.uint8)
    seeds = []

    def seed(name) -> Recipe:
        seeds.append(Recipe(name))
        return seeds[-1]

    for kind in (F32T, Q8):  # elementwise
        qp = (0.5, 10) if kind == Q8 else (0.0, 0)
        for op in (OP.ADD, OP.MUL):
            r = seed(f"{op.name} {kind.name}")
            a, b = r.input(kind, [1, 2, 2, 3], *qp), r.input(kind, [1, 2, 2, 3], *qp)
            r.op(op, [a, b, r.i32(1)], [r.output(kind, [1, 2, 2, 3], *(qp if kind == F32T else (1.0, 5)))])
        for op in (OP.RELU, OP.RELU1, OP.RELU6):
            r = seed(f"{op.name} {kind.name}")
            r.op(op, [r.input(kind, [2, 3], *qp)], [r.output(kind, [2, 3], *qp)])
        r = seed(f"LOGISTIC {kind.name}")
        r.op(OP.LOGISTIC, [r.input(kind, [2, 3], *qp)], [r.output(kind, [2, 3], *((1 / 256, 0) if kind == Q8 else qp))])
        r = seed(f"SOFTMAX {kind.name}")
        r.op(OP.SOFTMAX, [r.input(kind, [2, 5], *qp), r.f32(1.0)],
             [r.output(kind, [2, 5], *((1 / 256, 0) if kind == Q8 else qp))])
        for op in (OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D):
            r = seed(f"{op.name} implicit {kind.name}")
            x = r.input(kind, [1, 4, 4, 2], *qp)
            r.op(op, [x, r.i32(1), r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(0)], [r.output(kind, [1, 2, 2, 2], *qp)])
            r = seed(f"{op.name} explicit {kind.name}")
            x = r.input(kind, [1, 4, 4, 2], *qp)
            r.op(op, [x] + [r.i32(v) for v in (0, 0, 0, 0, 1, 1, 2, 2, 1)], [r.output(kind, [1, 3, 3, 2], *qp)])
        r = seed(f"CONV_2D explicit {kind.name}")
        filt = r.const(kind, q(3, 2, 2, 2) if kind == Q8 else f(3, 2, 2, 2), *((0.25, 128) if kind == Q8 else qp))
        bias = r.const(I32T, rng.integers(-50, 50, 3), 0.125) if kind == Q8 else r.const(F32T, f(3))
        x = r.input(kind, [1, 4, 4, 2], *qp)
        r.op(OP.CONV_2D, [x, filt, bias] + [r.i32(v) for v in (0, 0, 0, 0, 1, 1, 0)],
             [r.output(kind, [1, 3, 3, 3], *((8.0, 100) if kind == Q8 else qp))])
        r = seed(f"CONV_2D implicit {kind.name}")
        filt = r.const(kind, q(3, 3, 3, 2) if kind == Q8 else f(3, 3, 3, 2), *((0.25, 128) if kind == Q8 else qp))
        bias = r.const(I32T, rng.integers(-50, 50, 3), 0.125) if kind == Q8 else r.const(F32T, f(3))
        x = r.input(kind, [1, 5, 5, 2], *qp)
        r.op(OP.CONV_2D, [x, filt, bias, r.i32(1), r.i32(2), r.i32(2), r.i32(1)],
             [r.output(kind, [1, 3, 3, 3], *((8.0, 100) if kind == Q8 else qp))])
        r = seed(f"DEPTHWISE_CONV_2D implicit {kind.name}")
        filt = r.const(kind, q(1, 2, 2, 4) if kind == Q8 else f(1, 2, 2, 4), *((0.25, 128) if kind == Q8 else qp))
        bias = r.const(I32T, rng.integers(-50, 50, 4), 0.125) if kind == Q8 else r.const(F32T, f(4))
        x = r.input(kind, [1, 4, 4, 2], *qp)
        r.op(OP.DEPTHWISE_CONV_2D, [x, filt, bias, r.i32(2), r.i32(1), r.i32(1), r.i32(2), r.i32(0)],
             [r.output(kind, [1, 3, 3, 4], *((8.0, 100) if kind == Q8 else qp))])
        r = seed(f"DEPTHWISE_CONV_2D explicit {kind.name}")
        filt = r.const(kind, q(1, 2, 2, 2) if kind == Q8 else f(1, 2, 2, 2), *((0.25, 128) if kind == Q8 else qp))
        bias = r.const(I32T, rng.integers(-50, 50, 2), 0.125) if kind == Q8 else r.const(F32T, f(2))
        x = r.input(kind, [1, 4, 4, 2], *qp)
        r.op(OP.DEPTHWISE_CONV_2D, [x, filt, bias] + [r.i32(v) for v in (1, 1, 1, 1, 1, 1, 1, 3)],
             [r.output(kind, [1, 5, 5, 2], *((8.0, 100) if kind == Q8 else qp))])
        r = seed(f"FULLY_CONNECTED {kind.name}")
        filt = r.const(kind, q(4, 6) if kind == Q8 else f(4, 6), *((0.25, 128) if kind == Q8 else qp))
        bias = r.const(I32T, rng.integers(-50, 50, 4), 0.125) if kind == Q8 else r.const(F32T, f(4))
        r.op(OP.FULLY_CONNECTED, [r.input(kind, [2, 6], *qp), filt, bias, r.i32(1)],
             [r.output(kind, [2, 4], *((8.0, 100) if kind == Q8 else qp))])
        r = seed(f"CONCATENATION {kind.name}")
        a, b = r.input(kind, [2, 3], *qp), r.input(kind, [2, 2], *qp)
        r.op(OP.CONCATENATION, [a, b, r.i32(1)], [r.output(kind, [2, 5], *qp)])
        for op, shape, out in ((OP.DEPTH_TO_SPACE, [1, 2, 2, 4], [1, 4, 4, 1]),
                               (OP.SPACE_TO_DEPTH, [1, 4, 4, 1], [1, 2, 2, 4])):
            r = seed(f"{op.name} {kind.name}")
            r.op(op, [r.input(kind, shape, *qp), r.i32(2)], [r.output(kind, out, *qp)])
        r = seed(f"RESHAPE {kind.name}")
        r.op(OP.RESHAPE, [r.input(kind, [2, 3, 2], *qp), r.const(I32T, [3, -1])], [r.output(kind, [3, 4], *qp)])
        r = seed(f"EMBEDDING_LOOKUP {kind.name}")
        r.op(OP.EMBEDDING_LOOKUP, [r.const(I32T, [2, 0, 1]), r.input(kind, [4, 2], *qp)], [r.output(kind, [3, 2], *qp)])
        r = seed(f"HASHTABLE_LOOKUP {kind.name}")
        r.op(OP.HASHTABLE_LOOKUP, [r.input(I32T, [3]), r.const(I32T, [0, 1, 2, 3]), r.input(kind, [4, 2], *qp)],
             [r.output(kind, [3, 2], *qp), r.output(Q8, [3], 1.0, 0)])
    r = seed("DEQUANTIZE")
    r.op(OP.DEQUANTIZE, [r.input(Q8, [2, 3], 0.5, 7)], [r.output(F32T, [2, 3])])
    for op in (OP.FLOOR, OP.TANH, OP.L2_NORMALIZATION):
        r = seed(op.name)
        r.op(op, [r.input(F32T, [1, 1, 2, 3])], [r.output(F32T, [1, 1, 2, 3])])
    r = seed("L2_POOL_2D")
    r.op(OP.L2_POOL_2D, [r.input(F32T, [1, 4, 4, 2]), r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(0)],
         [r.output(F32T, [1, 2, 2, 2])])
    r = seed("LOCAL_RESPONSE_NORMALIZATION")
    r.op(OP.LOCAL_RESPONSE_NORMALIZATION, [r.input(F32T, [1, 2, 2, 6]), r.i32(2), r.f32(1.0), r.f32(0.5), r.f32(0.75)],
         [r.output(F32T, [1, 2, 2, 6])])
    r = seed("RESIZE_BILINEAR")
    r.op(OP.RESIZE_BILINEAR, [r.input(F32T, [1, 2, 2, 3]), r.i32(4), r.i32(3)], [r.output(F32T, [1, 3, 4, 3])])
    for kind in (1, 2):
        r = seed(f"LSH_PROJECTION type {kind}")
        r.op(OP.LSH_PROJECTION, [r.const(F32T, f(3, 2)), r.input(F32T, [4, 3]), r.const(F32T, f(4)), r.i32(kind)],
             [r.output(I32T, [3] if kind == 1 else [6])])
    r = seed("RNN")
    r.op(OP.RNN, [r.input(F32T, [2, 3]), r.const(F32T, f(4, 3)), r.const(F32T, f(4, 4)), r.const(F32T, f(4)),
                  r.input(F32T, [2, 4]), r.i32(1)], [r.output(F32T, [2, 4]), r.output(F32T, [2, 4])])
    r = seed("SVDF")
    r.op(OP.SVDF, [r.input(F32T, [2, 3]), r.const(F32T, f(2, 3)), r.const(F32T, f(2, 4)), r.const(F32T, f(2)),
                   r.input(F32T, [2, 6]), r.i32(1), r.i32(1)], [r.output(F32T, [2, 6]), r.output(F32T, [2, 2])])
    r = seed("LSTM")
    units, size = 3, 2
    ins = [r.input(F32T, [1, size])]
    ins += [r.const(F32T, f(units, size) * 0.5) for _ in range(4)] + [r.const(F32T, f(units, units) * 0.5) for _ in range(4)]
    ins += [r.none() for _ in range(3)] + [r.const(F32T, f(units)) for _ in range(4)] + [r.none(), r.none()]
    ins += [r.i32(4), r.f32(0.0), r.f32(0.0)]
    r.op(OP.LSTM, ins, [r.temp(F32T, [1, units * 4]), r.temp(F32T, [1, units]), r.temp(F32T, [1, units]),
                        r.output(F32T, [1, units])])
    r = seed("a small quantized CNN")  # several operations: conv, relu, pool, fully connected, softmax
    x = r.input(Q8, [1, 6, 6, 2], 0.5, 10)
    c1 = r.temp(Q8, [1, 6, 6, 4], 4.0, 90)
    r.op(OP.CONV_2D, [x, r.const(Q8, q(4, 3, 3, 2), 0.25, 128), r.const(I32T, rng.integers(-50, 50, 4), 0.125),
                      r.i32(1), r.i32(1), r.i32(1), r.i32(1)], [c1])
    p1 = r.temp(Q8, [1, 3, 3, 4], 4.0, 90)
    r.op(OP.MAX_POOL_2D, [c1, r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(0)], [p1])
    flat = r.temp(Q8, [1, 36], 4.0, 90)
    r.op(OP.RESHAPE, [p1, r.const(I32T, [1, 36])], [flat])
    logits = r.temp(Q8, [1, 5], 16.0, 128)
    r.op(OP.FULLY_CONNECTED, [flat, r.const(Q8, q(5, 36), 0.25, 128), r.const(I32T, rng.integers(-50, 50, 5), 1.0),
                              r.i32(0)], [logits])
    r.op(OP.SOFTMAX, [logits, r.f32(1.0)], [r.output(Q8, [1, 5], 1 / 256, 0)])
    r = seed("a small float CNN")
    x = r.input(F32T, [1, 5, 5, 2])
    c1 = r.temp(F32T, [1, 5, 5, 3])
    r.op(OP.CONV_2D, [x, r.const(F32T, f(3, 3, 3, 2)), r.const(F32T, f(3)), r.i32(1), r.i32(1), r.i32(1), r.i32(3)],
         [c1])
    s = r.temp(F32T, [1, 5, 5, 3])
    r.op(OP.ADD, [c1, r.input(F32T, [1, 5, 5, 3]), r.i32(0)], [s])
    p1 = r.temp(F32T, [1, 2, 2, 3])
    r.op(OP.AVERAGE_POOL_2D, [s, r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(2), r.i32(0)], [p1])
    r.op(OP.LOGISTIC, [p1], [r.output(F32T, [1, 2, 2, 3])])
    for kind in (F32T, Q8):  # NNAPI 1.1's data movement and MEAN
        qp = (0.5, 10) if kind == Q8 else (0.0, 0)
        for op, shape, params, out in (
                (OP.TRANSPOSE, [2, 3, 4], [[2, 0, 1]], [4, 2, 3]),
                (OP.PAD, [1, 2, 3], [[[0, 1], [1, 0], [2, 2]]], [2, 3, 7]),
                (OP.SQUEEZE, [1, 3, 1, 2], [[0]], [3, 1, 2]),
                (OP.SPACE_TO_BATCH_ND, [1, 4, 4, 2], [[2, 2], [[0, 0], [0, 0]]], [4, 2, 2, 2]),
                (OP.BATCH_TO_SPACE_ND, [4, 2, 2, 2], [[2, 2]], [1, 4, 4, 2])):
            r = seed(f"{op.name} {kind.name}")
            r.op(op, [r.input(kind, shape, *qp)] + [r.const(I32T, p) for p in params], [r.output(kind, out, *qp)])
        r = seed(f"MEAN {kind.name}")
        r.op(OP.MEAN, [r.input(kind, [2, 3, 4], *qp), r.const(I32T, [1, -1]), r.i32(0)], [r.output(kind, [2], *qp)])
        r = seed(f"STRIDED_SLICE {kind.name}")
        r.op(OP.STRIDED_SLICE, [r.input(kind, [3, 4], *qp), r.const(I32T, [0, -1]), r.const(I32T, [3, 0]),
                                r.const(I32T, [2, -1]), r.i32(0), r.i32(0), r.i32(0)], [r.output(kind, [2, 3], *qp)])
    for op in (OP.SUB, OP.DIV):
        r = seed(op.name)
        r.op(op, [r.input(F32T, [1, 2, 2, 3]), r.input(F32T, [3]), r.i32(1)], [r.output(F32T, [1, 2, 2, 3])])
    return seeds


# -- building and running ------------------------------------------------------------------------------------------

def build(recipe: Recipe) -> nnapi.Model:
    m = nnapi.Model()
    for operand in recipe.operands:
        k = m.add_operand(operand.type, operand.dims, operand.scale, operand.zero_point)
        if not (isinstance(operand.value, str) and operand.value == UNSET):
            m.set_operand_value(k, operand.value)
    for kind, inputs, outputs in recipe.operations:
        m.add_operation(kind, inputs, outputs)
    m.identify_inputs_and_outputs(recipe.inputs, recipe.outputs)
    m.finish()
    return m


def _array(rng: np.random.Generator, operand, shape: list[int]) -> np.ndarray | None:
    dtype = np.dtype(DTYPE.get(nnapi.OperandType(operand.type), np.float32))
    if math.prod(shape) * dtype.itemsize > FEED_LIMIT:
        return None
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 4 if dtype.kind == "i" else 256, shape).astype(dtype)


def execute(model: nnapi.Model, rng: np.random.Generator) -> None:
    """Compile ``model`` and run it once with random inputs of its declared shapes (unknown dimensions: 1)."""
    compilation = nnapi.Compilation(model)
    compilation.finish()
    execution = nnapi.Execution(compilation)
    hal = model.to_hal()
    arrays = []
    for position, k in enumerate(hal.inputIndexes):
        operand = hal.operands[k]
        arrays.append(_array(rng, operand, [d or 1 for d in operand.dimensions]))
        if arrays[-1] is None:
            return  # compiled, too large to feed here: accepted
        execution.set_input(position, arrays[-1])
    for position, k in enumerate(hal.outputIndexes):
        operand = hal.operands[k]
        out = _array(rng, operand, [d or 1 for d in operand.dimensions])
        if out is None:
            return
        execution.set_output(position, np.zeros_like(out))
    execution.compute()
    compilation.release()


def execute_hal(model, rng: np.random.Generator) -> None:
    """Prepare a HAL model on the driver and execute one request of random inputs (NNAPIError on failure)."""
    prepared = nnapi.hal.Device().prepare_model(model)
    pools, inputs, outputs = [], [], []
    for k in model.inputIndexes:
        array = _array(rng, model.operands[k], [d or 1 for d in model.operands[k].dimensions])
        if array is None:
            return
        pools.append(array.reshape(-1).view(np.uint8))
        inputs.append(nnapi.hal.RequestArgument(False, nnapi.hal.DataLocation(len(pools) - 1, 0, array.nbytes),
                                                list(array.shape)))
    for k in model.outputIndexes:
        array = _array(rng, model.operands[k], [d or 1 for d in model.operands[k].dimensions])
        if array is None:
            return
        pools.append(np.zeros(array.nbytes, np.uint8))
        outputs.append(nnapi.hal.RequestArgument(False, nnapi.hal.DataLocation(len(pools) - 1, 0, array.nbytes), []))
    status = prepared.execute(nnapi.hal.Request(inputs, outputs, pools))
    prepared.release()
    if status != nnapi.ErrorStatus.NONE:
        raise nnapi.NNAPIError(prepared.last_error, status)


def _limit_memory() -> None:
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + MEMORY_LIMIT, resource.RLIM_INFINITY))


class Swallowed(Exception):
    """An exception a native kernel raised and the library printed instead of failing the run with it (numba
    reports it through ``sys.unraisablehook``): the run's outputs cannot be trusted, a silent wrong answer."""


def _watched(run):
    """``run`` in a child: memory limited, and an exception swallowed on the way (``Swallowed``) fails it."""
    def child(mutant: Mutant) -> None:
        _limit_memory()
        swallowed = []
        sys.unraisablehook = lambda report: swallowed.append(f"{report.exc_type.__name__}: {report.exc_value}")
        run(mutant)
        if swallowed:
            raise Swallowed("; ".join(swallowed))
    return child


@_watched
def run_model(mutant: Mutant) -> None:
    execute(build(mutant.data), np.random.default_rng(mutant.index))


@_watched
def run_file(mutant: Mutant) -> None:
    with tempfile.NamedTemporaryFile(suffix=".nnapi") as f:
        f.write(mutant.data)
        f.flush()
        model = nnapi.hal.load_model(f.name)
    execute_hal(model, np.random.default_rng(mutant.index))


# -- model mutations: each edits a copy of the recipe and says whether it certainly breaks NNAPI's rules -------

HUGE_DIMS = (-1, -7, 2**31, 2**32 + 3, 2**40, 10**308)
BAD_SCALES = (float("nan"), float("inf"), -float("inf"), 0.0, -0.5, -1e-30)


def _tensors(r: Recipe) -> list[int]:
    return [k for k, o in enumerate(r.operands) if o.type in (F32T, I32T, Q8) and o.dims != [0]]


def _used(r: Recipe) -> set[int]:
    return {k for _, ins, _ in r.operations for k in ins}


def m_type(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    k = rng.randrange(len(r.operands))
    new = rng.choice([0, 1, 2, 3, 4, 5, 10000, 10001, 6, 99, -1])
    r.operands[k].type = new
    return f"operand {k}: type {new}", False


def m_rank(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    k = rng.choice(_tensors(r))
    dims = r.operands[k].dims
    if dims and rng.random() < 0.5:
        dims.pop(rng.randrange(len(dims)))
    else:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice([1, 2, 3]))
    _reshape_value(r.operands[k])
    return f"operand {k}: dimensions {dims}", False


def _reshape_value(o: Operand) -> None:
    """A constant follows its operand's new dimensions (else the builder's own check refuses it at once)."""
    if isinstance(o.value, np.ndarray) and o.value.ndim and o.dims and all(isinstance(d, int) and 0 < d < 64
                                                                            for d in o.dims) and len(o.dims) < 6:
        o.value = np.resize(o.value, o.dims)


def m_dimension(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    k = rng.choice(_tensors(r))
    o = r.operands[k]
    if not o.dims:
        o.dims = [1]
    i = rng.randrange(len(o.dims))
    if rng.random() < 0.5:
        o.dims[i] = rng.choice(HUGE_DIMS)
        return f"operand {k}: dimension {i} = {o.dims[i]}", True
    o.dims[i] = rng.choice([0, 1, 2, 3, 5, 7, 64, 1000])
    _reshape_value(o)
    return f"operand {k}: dimension {i} = {o.dims[i]}", False


def m_index(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    j = rng.randrange(len(r.operations))
    _, ins, outs = r.operations[j]
    where = ins if rng.random() < 0.7 else outs
    i = rng.randrange(len(where))
    if rng.random() < 0.4:
        where[i] = rng.choice([len(r.operands), len(r.operands) + 5, -1, 2**32, 2**31 - 1])
        return f"operation {j}: operand index {where[i]} (out of range)", True
    where[i] = rng.randrange(len(r.operands))
    return f"operation {j}: operand index {where[i]}", False


def m_quantization(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    q8 = [k for k, o in enumerate(r.operands) if o.type == Q8]
    if not q8:
        return m_scalar_value(rng, r)
    k = rng.choice(q8)
    o = r.operands[k]
    choice = rng.random()
    if choice < 0.35:
        o.scale = rng.choice(BAD_SCALES)
        return f"operand {k}: scale {o.scale}", True
    if choice < 0.6:
        o.zero_point = rng.choice([-1, 256, 1000, -2**31, 2**31 - 1])
        return f"operand {k}: zero point {o.zero_point}", True
    o.scale, o.zero_point = rng.choice([0.001, 0.3, 2.0, 100.0]), rng.randrange(256)
    fixed = any(kind in (OP.SOFTMAX, OP.LOGISTIC) and outs[0] == k for kind, _, outs in r.operations)
    invalid = fixed and not (np.float32(o.scale) == np.float32(1 / 256) and o.zero_point == 0)
    biased = any(kind in (OP.CONV_2D, OP.DEPTHWISE_CONV_2D, OP.FULLY_CONNECTED) and k in ins[:2]
                 and r.operands[ins[2]].type == I32T for kind, ins, _ in r.operations)
    return f"operand {k}: scale {o.scale}, zero point {o.zero_point}", invalid or biased


def m_bias(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    biases = [ins[2] for kind, ins, _ in r.operations if kind in (OP.CONV_2D, OP.DEPTHWISE_CONV_2D,
                                                                   OP.FULLY_CONNECTED)
              and r.operands[ins[0]].type == Q8 and r.operands[ins[2]].type == I32T]
    if not biases:
        return m_quantization(rng, r)
    k = rng.choice(biases)
    o = r.operands[k]
    if rng.random() < 0.3:
        o.zero_point = rng.choice([1, -1, 128])
        return f"bias operand {k}: zero point {o.zero_point}", True
    o.scale = rng.choice([float("nan"), float("inf"), 0.0, -o.scale, o.scale * 2, o.scale * (1 + 1e-3)])
    return f"bias operand {k}: scale {o.scale}", True


def _slot(r: Recipe, j: int, p: int) -> Slot | None:
    """The signature's slot of input ``p`` of operation ``j`` (None: no form of the signature has its counts)."""
    kind, ins, outs = r.operations[j]
    if not all(0 <= k < len(r.operands) for k in ins + outs):
        return None
    def view(ks: list[int]) -> list[nnapi.hal.Operand]:
        return [nnapi.hal.Operand(r.operands[k].type, r.operands[k].dims) for k in ks]
    try:
        form = check_signature(kind, view(ins), view(outs), j)
    except nnapi.NNAPIError:  # an earlier mutation broke a type: the first form of these counts
        forms = [f for f in SIGNATURES[kind].forms if f.accepts_count(len(ins), len(outs))]
        if not forms:
            return None
        form = forms[0]
    return form.input_slot(p, len(ins))


def m_enum(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    places = [(j, p, slot) for j, (kind, ins, _) in enumerate(r.operations) for p in range(len(ins))
              if (slot := _slot(r, j, p)) is not None and slot.values]
    if not places:
        return m_scalar_value(rng, r)
    j, p, slot = rng.choice(places)
    _, ins, _ = r.operations[j]
    value = rng.choice([v for v in (-1, 4, 5, 7, 99, 2**31 - 1, -2**31, 0, 1, 2, 3) if v not in slot.values])
    k2 = r.add(Operand(T.INT32, [], value=np.int32(value)))  # an operand of its own: others may share k
    ins[p] = k2
    return f"operation {j}: input {p} ({slot.name}) = {value}", True


def m_scalar_value(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    scalars = [k for k, o in enumerate(r.operands) if o.type in (T.INT32, T.FLOAT32) and isinstance(o.value, np.generic)]
    k = rng.choice(scalars)
    o = r.operands[k]
    o.value = (np.int32(rng.choice([0, -1, 1, 2, 3, 8, 1000, 2**31 - 1, -2**31])) if o.type == T.INT32 else
               np.float32(rng.choice([0.0, -1.0, 1e-30, 1e30, float("nan"), float("inf")])))
    return f"operand {k}: value {o.value}", False


def m_value(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    """A constant loses its value: never set, or NO_VALUE."""
    consts = [k for k, o in enumerate(r.operands) if not isinstance(o.value, str) and o.value is not None]
    k = rng.choice(consts)
    used_at = [(j, p) for j, (_, ins, _) in enumerate(r.operations) for p, i in enumerate(ins) if i == k]
    if rng.random() < 0.5:
        r.operands[k].value = UNSET
        return f"operand {k}: value never set", bool(used_at)
    r.operands[k].value = None
    required = any((slot := _slot(r, j, p)) is not None and not slot.optional for j, p in used_at)
    return f"operand {k}: NO_VALUE", required


def m_operation_arity(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    j = rng.randrange(len(r.operations))
    _, ins, outs = r.operations[j]
    choice = rng.random()
    if choice < 0.35 and ins:
        ins.pop(rng.randrange(len(ins)))
        return f"operation {j}: an input dropped", False
    if choice < 0.7:
        ins.insert(rng.randrange(len(ins) + 1), rng.randrange(len(r.operands)))
        return f"operation {j}: an input added", False
    if choice < 0.85:
        outs.append(r.temp(F32T, [1]))
        return f"operation {j}: an output added", False
    outs.clear()
    return f"operation {j}: no outputs", True


def m_model_io(rng: random.Random, r: Recipe) -> tuple[str, bool]:
    choice = rng.random()
    if choice < 0.2:
        r.outputs.clear()
        return "no model outputs", True
    if choice < 0.4:
        r.inputs.clear()
        return "no model inputs", True
    if choice < 0.55:
        k = r.inputs.pop(rng.randrange(len(r.inputs)))
        return f"model input {k} no longer listed", k in _used(r)
    if choice < 0.7:
        r.inputs.append(r.temp(F32T, [2]))
        return "an unused model input added", False
    if choice < 0.8:
        k = rng.choice(r.inputs + r.outputs)
        (r.inputs if rng.random() < 0.5 else r.outputs).append(k)
        return f"operand {k} listed twice", True
    k = rng.randrange(len(r.operands))
    (r.inputs if rng.random() < 0.5 else r.outputs).append(k)
    return f"operand {k} listed as a model input or output", False


MODEL_MUTATIONS = (m_type, m_rank, m_dimension, m_index, m_quantization, m_bias, m_enum, m_scalar_value, m_value,
                   m_operation_arity, m_model_io)


def model_mutants(seeds: list[Recipe], count: int, seed: int) -> Iterator[Mutant]:
    rng = random.Random(seed)
    for index in range(count):
        recipe = copy.deepcopy(rng.choice(seeds))
        steps, invalid = [], False
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            while True:
                try:
                    how, broken = rng.choice(MODEL_MUTATIONS)(rng, recipe)
                    break
                except (IndexError, ValueError):  # nothing of that kind left to mutate: another mutation
                    continue
            steps.append(how)
            invalid = invalid or broken
        # a later step may undo an earlier one (a dimension restored, a use of an unset operand replaced):
        # only a single change is certain to break the model
        yield Mutant(index, f"{recipe.name}: " + "; ".join(steps), recipe, invalid and len(steps) == 1)


# -- file mutations ------------------------------------------------------------------------------------------------

SPECIAL = (0, -1, 2**31, 2**32, 2**63, 10**30, "1e308", "NaN", "-Infinity", "1.5")
STRICT_KEYS = ("dimensions", "inputs", "outputs", "inputIndexes", "outputIndexes", "location", "pools",
               "numberOfConsumers")


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {name: z.read(name) for name in z.namelist()}


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _ints_in(tree, path=()) -> list[tuple]:
    found = []
    if isinstance(tree, dict):
        for key, value in tree.items():
            found += _ints_in(value, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            found += _ints_in(value, path + (i,))
    elif isinstance(tree, int) and not isinstance(tree, bool):
        found.append(path)
    return found


def f_json_int(rng: random.Random, data: bytes) -> tuple[bytes, str, bool]:
    members = _members(data)
    text = np.load(io.BytesIO(members["model.json.npy"])).tobytes().decode()
    tree = json.loads(text)
    path = rng.choice(_ints_in(tree))
    value = rng.choice(SPECIAL)
    node = tree
    for key in path[:-1]:
        node = node[key]
    old, node[path[-1]] = node[path[-1]], "@@"
    text = json.dumps(tree).replace('"@@"', str(value))
    members["model.json.npy"] = _npy(np.frombuffer(text.encode(), np.uint8))
    strict = any(key in STRICT_KEYS for key in path if isinstance(key, str)) or path[-1] == "version"
    q8_zero = path[-1] == "zeroPoint" and tree["operands"][path[1]]["type"] == "TENSOR_QUANT8_ASYMM"
    not_int = isinstance(value, str)
    negative_or_huge = not not_int and (value < 0 or value >= 2**31)
    invalid = value != old and (not_int or ((strict or q8_zero) and negative_or_huge) or
                                (q8_zero and value > 255))
    return _zip(members), f"model.json {'/'.join(map(str, path))}: {old} -> {value}", invalid


def f_member_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str, bool]:
    members = _members(data)
    name = rng.choice(sorted(members))
    raw = bytearray(members[name])
    how = _bytes_mutation(rng, raw)
    members[name] = bytes(raw)
    return _zip(members), f"member {name}: {how}", False


def f_file_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str, bool]:
    raw = bytearray(data)
    how = _bytes_mutation(rng, raw)
    return bytes(raw), f"file: {how}", False


def _bytes_mutation(rng: random.Random, raw: bytearray) -> str:
    choice = rng.random()
    if choice < 0.4 and raw:
        flips = rng.randint(1, 8)
        for _ in range(flips):
            i = rng.randrange(len(raw))
            raw[i] ^= 1 << rng.randrange(8)
        return f"{flips} bit flips"
    if choice < 0.6:
        n = rng.randrange(len(raw) + 1)
        del raw[n:]
        return f"truncated to {n} bytes"
    if choice < 0.8:
        i, n = rng.randrange(len(raw) + 1), rng.randint(1, 16)
        raw[i:i] = bytes(rng.randrange(256) for _ in range(n))
        return f"{n} bytes inserted at {i}"
    if len(raw) < 4:
        return "unchanged"
    i = rng.randrange(len(raw) - 3)
    value = rng.choice([0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x7FC00000])  # 0, -1, huge, NaN as float32
    raw[i:i + 4] = value.to_bytes(4, "little")
    return f"bytes {i}..{i + 3} = {value:#x}"


FILE_MUTATIONS = (f_json_int, f_json_int, f_member_bytes, f_file_bytes)


def saved(recipe: Recipe) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "seed.nnapi")
        build(recipe).save(path)
        with open(path, "rb") as f:
            return f.read()


def file_mutants(seeds: list[Recipe], count: int, seed: int) -> Iterator[Mutant]:
    rng = random.Random(seed)
    files = [(r.name, saved(r)) for r in seeds]
    for index in range(count):
        name, data = rng.choice(files)
        steps, invalid = [], False
        for _ in range(rng.choice([1, 1, 2])):
            try:
                data, how, broken = rng.choice(FILE_MUTATIONS)(rng, data)
            except Exception:  # noqa: BLE001 - an earlier step broke the zip or the JSON: mutate the raw bytes
                data, how, broken = f_file_bytes(rng, data)
            steps.append(how)
            invalid = invalid or broken
        yield Mutant(index, f"{name}: " + "; ".join(steps), data, invalid and len(steps) == 1)


def warm_up(seeds: list[Recipe]) -> None:
    """Run every seed once in this process (kernels compiled and cached before the children fork); a seed that
    fails is a bug of the fuzzer or the library and stops the campaign."""
    rng = np.random.default_rng(0)
    for recipe in seeds:
        try:
            execute(build(recipe), rng)
        except Exception as err:
            raise SystemExit(f"seed {recipe.name!r} does not run: {type(err).__name__}: {err}") from err


def fuzz(mode: str, count: int, seed: int, workers: int, timeout: float, progress=None):
    seeds = _seeds()
    warm_up(seeds)
    if mode == "model":
        return campaign(model_mutants(seeds, count, seed), run_model, (nnapi.NNAPIError,), timeout, workers,
                        progress)
    return campaign(file_mutants(seeds, count, seed), run_file, (nnapi.NNAPIError,), timeout, workers, progress)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("model", "file"), default="model")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    name = f"nnapi-{args.mode}"

    def progress(summary):
        if sum(summary.counts.values()) % 500 == 0:
            print(summary.line(f"{name} (so far, seed {args.seed})"), flush=True)

    summary = fuzz(args.mode, args.count, args.seed, args.workers, args.timeout, progress)
    print(summary.line(name), flush=True)
    for index, how, outcome, detail in summary.bad:
        print(f"  #{index} {outcome}: {how}\n      {detail}")
    return 0 if summary.clean else 1


if __name__ == "__main__":
    sys.exit(main())
