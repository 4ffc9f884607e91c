"""The seven OpenVX 1.2 tensor operations: signatures, validators, executors.

Formats: UINT8, INT8, INT16 with any valid fixed point position (KHR's U8, S8
and Q7.8 among them) and FLOAT32; inputs and output share data type and fixed
point position unless the operation converts (ConvertDepth).  The inputs of
Add, Subtract and Multiply broadcast: per dim they are equal or either is 1
(a superset of the standard, which broadcasts ``input2`` only), and the
output has the broadcast shape.  The arithmetic is in ``openvx_nn.kernels``.
"""
from __future__ import annotations

import math
import struct

from ... import kernels as k
from ...core import gated_products
from ...core.enums import ConvertPolicy, Kernel, RoundPolicy, Status, Type
from ...core.kernels import register
from ...core.rewrites import ANY_SAME
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.validation import Validation
from ...kernels.frontend import channel_gate
from ...kernels.frontend.channel_gate import split
from ...kernels.openvx.elementwise import native_add_sub, native_multiply
from ...kernels.support.fixed_point import float32_value
from ..geometry import Conventions
from .common import ARITHMETIC_TYPES, ROUND_POLICIES, arithmetic_input, broadcast_dims, policy, same_format
from .float16_edges import accepting_float16

T, S, L = Type.VX_TYPE_TENSOR, Type.VX_TYPE_SCALAR, Type.VX_TYPE_LUT
ENUM, SIZE, F32 = Type.VX_TYPE_ENUM, Type.VX_TYPE_SIZE, Type.VX_TYPE_FLOAT32
LIBRARY = 0  # VX_LIBRARY_KHR_BASE
SATURATE = ConvertPolicy.VX_CONVERT_POLICY_SATURATE
NEAREST = RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN


def _tensor(name, direction=IN, optional=False):
    return ParamSpec(name, direction, T, optional)


def _scalar(name, scalar_type):
    return ParamSpec(name, IN, S, scalar_type=scalar_type)


# -- Add, Subtract, Multiply -----------------------------------------------------
def _validate_binary(v: Validation, out_index: int) -> None:
    a = arithmetic_input(v, 0)
    b = v.tensor(1)
    same_format(v, 1, b, a, "input1")
    dims = broadcast_dims(v, 1, a, b)
    v.output(out_index, dims, a.data_type, a.fpp)
    v.state["rank"] = len(dims)


def _operands(p, state) -> tuple:
    """input1 and input2 with their missing high dims as length 1 (NumPy broadcasts from the last axis)."""
    return tuple(a.reshape(a.shape + (1,) * (state["rank"] - a.ndim)) for a in (p[0].array, p[1].array))


def _validate_add(v: Validation) -> None:
    policy(v, 2)
    _validate_binary(v, 3)


def _validate_multiply(v: Validation) -> None:
    scale = v.scalar(2)
    v.require(math.isfinite(scale) and scale >= 0, 2, Status.VX_ERROR_INVALID_VALUE,
              f"scale {scale} must be a finite non-negative number")
    policy(v, 3)
    policy(v, 4, ROUND_POLICIES, "rounding policy")
    _validate_binary(v, 5)


def _run_add(p, state) -> None:
    k.add(*_operands(p, state), p[3].array, p[2].value == SATURATE)


def _run_subtract(p, state) -> None:
    k.subtract(*_operands(p, state), p[3].array, p[2].value == SATURATE)


def _takes_gate(p, state) -> tuple[int, ...]:
    """The inputs a float32 multiply by 1 can read as a gate computed in its own pass (``core.gated_products``):
    one broadcast over the other as ``channel_gate.split`` takes it, the other of the output's dims."""
    if not p[0].data_type == p[1].data_type == p[5].data_type == F32 or float32_value(p[2].value) != 1.0 or \
            any(t.parent is not None for t in (p[0], p[1], p[5])):  # views: not contiguous
        return ()
    rank, out = state["rank"], tuple(p[5].dims)
    dims = [tuple(t.dims) + (1,) * (rank - len(t.dims)) for t in (p[0], p[1])]
    return tuple(g for g in (1, 0) if dims[1 - g] == out and split(out, dims[g]) is not None)


def _gated(p, state, make):
    """``make(x, g, out, function, a, b)`` for the product whose gate the plan fused into it, else None."""
    found = gated_products.gate(state)
    if found is None:
        return None
    index, source, function, a, b = found
    x = _operands(p, state)[1 - index]
    g = source.array.reshape(source.array.shape + (1,) * (state["rank"] - source.array.ndim))
    return make(x, g, p[5].array, function, a, b)


def _bind_multiply(p, state):
    return _gated(p, state, channel_gate.bind)


def _run_multiply(p, state) -> None:
    runner = _bind_multiply(p, state)
    if runner is not None:
        runner()
        return
    k.multiply(*_operands(p, state), p[2].value, p[5].array, p[3].value == SATURATE,
               p[4].value == NEAREST, fpp1=p[0].fpp, fpp2=p[1].fpp, fpp_out=p[5].fpp)


# Native entries pack the scalars' values: writing a scalar makes every native plan stale (core/cells.py).
def _native_add(p, state):
    return native_add_sub(*_operands(p, state), p[3].array, p[2].value == SATURATE, subtract=False)


def _native_subtract(p, state):
    return native_add_sub(*_operands(p, state), p[3].array, p[2].value == SATURATE, subtract=True)


def _native_multiply(p, state):
    if gated_products.gate(state) is not None:  # its entry, or None: the Python path runs the fused call
        return _gated(p, state, channel_gate.native_entry)
    return native_multiply(*_operands(p, state), p[2].value, p[5].array, p[3].value == SATURATE,
                           p[4].value == NEAREST, fpp1=p[0].fpp, fpp2=p[1].fpp, fpp_out=p[5].fpp)


def _same_layout(p, state) -> dict[int, str]:
    """Add and subtract without broadcasting are element-wise: any layout, the same for all three tensors
    (``core.rewrites``); broadcasting needs OpenVX's order."""
    if not (tuple(p[0].dims) == tuple(p[1].dims) == tuple(p[3].dims)):
        return {}
    return {0: ANY_SAME, 1: ANY_SAME, 3: ANY_SAME}


_BINARY = (_tensor("input1"), _tensor("input2"))
register(accepting_float16(KernelDescription("org.khronos.openvx.tensor_add", Kernel.VX_KERNEL_TENSOR_ADD, LIBRARY,
                           _BINARY + (_scalar("policy", ENUM), _tensor("output", OUT)),
                           _validate_add, _run_add, native=_native_add, layouts=_same_layout)))
register(accepting_float16(KernelDescription("org.khronos.openvx.tensor_subtract", Kernel.VX_KERNEL_TENSOR_SUBTRACT, LIBRARY,
                           _BINARY + (_scalar("policy", ENUM), _tensor("output", OUT)),
                           _validate_add, _run_subtract, native=_native_subtract, layouts=_same_layout)))
register(accepting_float16(KernelDescription("org.khronos.openvx.tensor_multiply", Kernel.VX_KERNEL_TENSOR_MULTIPLY, LIBRARY,
                           _BINARY + (_scalar("scale", F32), _scalar("overflow_policy", ENUM),
                                      _scalar("rounding_policy", ENUM), _tensor("output", OUT)),
                           _validate_multiply, _run_multiply, bind=_bind_multiply, native=_native_multiply,
                           takes_gate=_takes_gate)))


# -- TableLookup -----------------------------------------------------------------
def _validate_lookup(v: Validation) -> None:
    a = v.tensor(0)
    v.require(a.data_type in (Type.VX_TYPE_UINT8, Type.VX_TYPE_INT16), 0, Status.VX_ERROR_INVALID_TYPE,
              f"data type of {a.describe()} is not supported (UINT8 or INT16)")
    lut = v.ref(1)
    v.require(lut.data_type == a.data_type, 1, Status.VX_ERROR_INVALID_TYPE,
              f"LUT of {Type(lut.data_type).name} does not match the input's {Type(a.data_type).name}")
    v.output(2, a.dims, a.data_type, a.fpp)


def _run_lookup(p, state) -> None:
    k.table_lookup(p[0].array, p[1].array, p[1].offset, p[2].array)


def _native_lookup(p, state):
    from ...kernels.openvx.lookup import native_entry
    return native_entry(p[0].array, p[1].array, p[1].offset, p[2].array)


register(KernelDescription("org.khronos.openvx.tensor_table_lookup", Kernel.VX_KERNEL_TENSOR_TABLE_LOOKUP,
                           LIBRARY, (_tensor("input1"), ParamSpec("lut", IN, L), _tensor("output", OUT)),
                           _validate_lookup, _run_lookup, native=_native_lookup))


# -- Transpose ---------------------------------------------------------------------
def _validate_transpose(v: Validation) -> None:
    a = v.tensor(0)
    dims = list(a.dims)
    for index in (1, 2):
        d = v.scalar(index)
        v.require(0 <= d < a.rank, index, Status.VX_ERROR_INVALID_VALUE,
                  f"dimension {d} is out of range for a {a.rank}-D input")
    d1, d2 = v.scalar(1), v.scalar(2)
    dims[d1], dims[d2] = dims[d2], dims[d1]
    v.output(3, dims, a.data_type, a.fpp)


def _run_transpose(p, state) -> None:
    k.transpose(p[0].array, p[3].array, p[1].value, p[2].value)


def _native_transpose(p, state):
    from ...kernels.openvx.transpose import native_entry
    return native_entry(p[0].array, p[3].array, p[1].value, p[2].value)


register(accepting_float16(KernelDescription(
    "org.khronos.openvx.tensor_transpose", Kernel.VX_KERNEL_TENSOR_TRANSPOSE, LIBRARY,
    (_tensor("input"), _scalar("dimension1", SIZE), _scalar("dimension2", SIZE),
     _tensor("output", OUT)),
    _validate_transpose, _run_transpose, constructor_order=(0, 3, 1, 2),
    native=_native_transpose)))


# -- ConvertDepth ------------------------------------------------------------------
def _validate_convert(v: Validation) -> None:
    a = arithmetic_input(v, 0)
    policy(v, 1)
    norm = v.scalar(2)
    v.require(math.isfinite(norm) and norm != 0, 2, Status.VX_ERROR_INVALID_VALUE,
              f"norm {norm} must be finite and non-zero")
    out = v.ref(4)
    data_type = out.data_type
    v.require(data_type in ARITHMETIC_TYPES, 4, Status.VX_ERROR_INVALID_TYPE,
              "output data type must be set to UINT8, INT8, INT16 or FLOAT32 (ConvertDepth cannot infer it)")
    v.output(4, a.dims, data_type, out.fpp)
    # The sample implementation drops the fraction (a C cast) from 16-bit fixed point to 8-bit integers.
    v.state["truncate"] = (Conventions.at_verify(v).sample and a.data_type == Type.VX_TYPE_INT16
                           and data_type in (Type.VX_TYPE_UINT8, Type.VX_TYPE_INT8))


def _run_convert(p, state) -> None:
    k.convert_depth(p[0].array, p[0].fpp, p[4].array, p[4].fpp, p[2].value, p[3].value,
                    p[1].value == SATURATE, truncate=state["truncate"])


def _native_convert(p, state):
    from ...kernels.openvx.convert_depth import native_entry
    return native_entry(p[0].array, p[0].fpp, p[4].array, p[4].fpp, p[2].value, p[3].value,
                        p[1].value == SATURATE, truncate=state["truncate"])


register(accepting_float16(KernelDescription(
    "org.khronos.openvx.tensor_convert_depth", Kernel.VX_KERNEL_TENSOR_CONVERT_DEPTH,
    LIBRARY, (_tensor("input"), _scalar("policy", ENUM), _scalar("norm", F32),
              _scalar("offset", F32), _tensor("output", OUT)),
    _validate_convert, _run_convert, native=_native_convert), candidates=(0, 4), together=False))


# -- MatrixMultiply ----------------------------------------------------------------
_FLAGS = struct.Struct("3i")


def _flags(raw: bytes) -> tuple[bool, bool, bool]:
    return tuple(bool(f) for f in _FLAGS.unpack(raw))  # type: ignore[return-value]


def _validate_matmul(v: Validation) -> None:
    a = arithmetic_input(v, 0)
    b = v.tensor(1)
    c = v.tensor(2)
    ta, tb, tc = _flags(v.scalar_bytes(3))
    for index, meta in ((0, a), (1, b), (2, c)):
        if meta is not None:
            v.require(meta.rank == 2, index, Status.VX_ERROR_INVALID_DIMENSION,
                      f"matrix multiply needs 2-D tensors, got {list(meta.dims)}")
            if index:
                same_format(v, index, meta, a, "input1")
    # dims [columns, rows]; a transposed input is read with its roles swapped
    m, k = (a.dims[0], a.dims[1]) if ta else (a.dims[1], a.dims[0])
    k2, n = (b.dims[0], b.dims[1]) if tb else (b.dims[1], b.dims[0])
    v.require(k == k2, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"inner dimensions differ: input1 gives {m}x{k}, input2 gives {k2}x{n}")
    if c is not None:
        want = (m, n) if tc else (n, m)
        v.require(tuple(c.dims) == want, 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"input3 dims are {list(c.dims)}, expected {list(want)} for a {m}x{n} result")
    v.output(4, (n, m), a.data_type, a.fpp)


def _run_matmul(p, state) -> None:
    ta, tb, tc = _flags(p[3].bytes)
    c = p[2]
    k.matrix_multiply(p[0].array, p[1].array, None if c is None else c.array, p[4].array,
                      ta, tb, tc, fpp_a=p[0].fpp, fpp_b=p[1].fpp,
                      fpp_c=0 if c is None else c.fpp, fpp_out=p[4].fpp)


def _native_matmul(p, state):
    from ...kernels.openvx.matmul import native_entry
    ta, tb, tc = _flags(p[3].bytes)
    c = p[2]
    return native_entry(p[0].array, p[1].array, None if c is None else c.array, p[4].array, ta, tb, tc,
                        fpp_a=p[0].fpp, fpp_b=p[1].fpp, fpp_c=0 if c is None else c.fpp, fpp_out=p[4].fpp)


register(accepting_float16(KernelDescription(
    "org.khronos.openvx.tensor_matrix_multiply",
    Kernel.VX_KERNEL_TENSOR_MATRIX_MULTIPLY, LIBRARY,
    (_tensor("input1"), _tensor("input2"), _tensor("input3", optional=True),
     _scalar("matrix_multiply_params", Type.VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS),
     _tensor("output", OUT)),
    _validate_matmul, _run_matmul, native=_native_matmul)))
