"""CoreML matrix kernels: batched matrix multiply (with optional bias) and embedding look-up."""
from __future__ import annotations

import math

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend import batched_product
from ...kernels.frontend.linear_algebra import gather_rows
from .common import INT32, broadcast_dims, declared_output, describe, float_input, output, same_output, scalar, tensor


def _validate_matmul(v: Validation) -> None:
    a, b = float_input(v, 0), float_input(v, 1)
    ta, tb = bool(v.scalar(2)), bool(v.scalar(3))
    v.require(a.rank >= 2 and b.rank >= 2, 0, Status.VX_ERROR_INVALID_DIMENSION,
              f"inputs need rank 2 or more, got {list(a.dims)} and {list(b.dims)}")
    k, m = (a.dims[1], a.dims[0]) if ta else a.dims[:2]
    n, k2 = (b.dims[1], b.dims[0]) if tb else b.dims[:2]
    v.require(k == k2, 1, Status.VX_ERROR_INVALID_DIMENSION, f"inner dimensions differ: {k} and {k2}")
    bias = float_input(v, 4)
    if bias is not None:
        v.require(bias.dims[0] == n and all(d == 1 for d in bias.dims[1:]), 4, Status.VX_ERROR_INVALID_DIMENSION,
                  f"bias must be [{n}], got {list(bias.dims)}")
    batch = broadcast_dims(v, 1, a.dims[2:], b.dims[2:])
    same_output(v, 5, (n, m) + batch)


def _matmul_operands(p) -> tuple:
    return (p[0].array, p[1].array, p[5].array, bool(p[2].value), bool(p[3].value),
            None if p[4] is None else p[4].array)


describe(40, "batched_matmul", (tensor("input1"), tensor("input2"), scalar("transpose_a", INT32),
                                scalar("transpose_b", INT32), tensor("bias", optional=True, static=True), output()),
         _validate_matmul, lambda p, state: batched_product.batched_matmul(*_matmul_operands(p)),
         lambda p, state: batched_product.bind(*_matmul_operands(p)),
         lambda p, state: batched_product.native_entry(*_matmul_operands(p)))


def _validate_embedding(v: Validation) -> None:
    x = float_input(v, 0)
    table = float_input(v, 1)
    v.require(table.rank == 2, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"table must be [inputDim, outputChannels], got {list(table.dims)}")
    bias = float_input(v, 2)
    if bias is not None:
        v.require(bias.dims == (table.dims[1],), 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"bias must be [{table.dims[1]}], got {list(bias.dims)}")
    declared_output(v, 3, table.dims[1] * math.prod(x.dims))


describe(41, "embedding", (tensor("indices"), tensor("table", static=True), tensor("bias", optional=True, static=True),
                           output()), _validate_embedding,
         lambda p, state: gather_rows(p[0].array, p[1].array, None if p[2] is None else p[2].array, p[3].array))
