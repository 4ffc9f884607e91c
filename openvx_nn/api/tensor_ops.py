"""The OpenVX 1.2 tensor operations as :class:`Graph` methods."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import vx
from .arguments import Constant, instance, integer, real
from .formats import OVERFLOW, ROUNDING, choose
from .lut import Lut
from .reference import ffi

if TYPE_CHECKING:
    from .tensor import Tensor


def _broadcast(a: Tensor, b: Tensor):
    """The shape ``a`` and ``b`` broadcast to (either may have dims of 1; missing high dims count as 1),
    or None when one is unknown or they do not broadcast (verification then says why)."""
    sa, sb = a.known()[0], b.known()[0]
    if not sa or not sb:
        return sa or None
    rank = max(len(sa), len(sb))
    sa, sb = tuple(sa) + (1,) * (rank - len(sa)), tuple(sb) + (1,) * (rank - len(sb))
    if any(m != n and 1 not in (m, n) for m, n in zip(sa, sb)):
        return None
    return tuple(max(m, n) for m, n in zip(sa, sb))


class TensorOpMethods:
    """add, subtract, multiply, table_lookup, transpose, convert_depth, matrix_multiply.

    The second operand (``b``, and ``c`` of matrix_multiply) may be raw values
    (a NumPy array or nested lists): a constant tensor of ``a``'s format."""

    def add(self, a: Tensor, b: Constant, out: Tensor | None = None, *, overflow: str = "saturate") -> Tensor:
        """vxTensorAddNode: ``a + b`` (either broadcasts: per dim equal, or 1 in one of them)."""
        return self._sum_node("vxTensorAddNode", "tensor_add", a, b, out, overflow)

    def subtract(self, a: Tensor, b: Constant, out: Tensor | None = None, *, overflow: str = "saturate") -> Tensor:
        """vxTensorSubtractNode: ``a - b`` (either broadcasts)."""
        return self._sum_node("vxTensorSubtractNode", "tensor_subtract", a, b, out, overflow)

    def _sum_node(self, function: str, kind: str, a: Tensor, b: Constant, out: Tensor | None,
                  overflow: str) -> Tensor:
        """The node of :meth:`add` or :meth:`subtract` (same parameters: ``a``, ``b``, overflow policy, out)."""
        a, out = self._inputs(a, out)
        b = self._constant(b, "b", a)
        out = self._output(out, _broadcast(a, b), a)
        self._node(function, kind, {0: a, 1: b, 3: out}, a.handle, b.handle, choose(OVERFLOW, overflow, "overflow"),
                   out.handle)
        return out

    def multiply(self, a: Tensor, b: Constant, out: Tensor | None = None, *, scale: float = 1.0,
                 overflow: str = "saturate", rounding: str = "nearest_even") -> Tensor:
        """vxTensorMultiplyNode: ``a * b * scale`` (either broadcasts)."""
        a, out = self._inputs(a, out)
        b = self._constant(b, "b", a)
        scale = real(scale, "scale")
        out = self._output(out, _broadcast(a, b), a)
        s = self._scalar(vx.VX_TYPE_FLOAT32, scale)
        self._node("vxTensorMultiplyNode", "tensor_multiply", {0: a, 1: b, 2: s, 5: out}, a.handle, b.handle,
                   s.handle, choose(OVERFLOW, overflow, "overflow"), choose(ROUNDING, rounding, "rounding"),
                   out.handle)
        return out

    def table_lookup(self, a: Tensor, lut: Lut, out: Tensor | None = None) -> Tensor:
        """vxTensorTableLookupNode: each element replaced by its LUT entry."""
        a, out = self._inputs(a, out)
        lut = instance(lut, Lut, "lut")
        out = self._output(out, a.known()[0], a)
        self._node("vxTensorTableLookupNode", "tensor_table_lookup", {0: a, 1: lut, 2: out},
                   a.handle, lut.handle, out.handle)
        return out

    def transpose(self, a: Tensor, dim1: int = 0, dim2: int = 1, out: Tensor | None = None) -> Tensor:
        """vxTensorTransposeNode: dims ``dim1`` and ``dim2`` swapped."""
        a, out = self._inputs(a, out)
        dim1, dim2 = integer(dim1, "dim1", 0), integer(dim2, "dim2", 0)
        shape = a.known()[0]
        if shape and max(dim1, dim2) >= len(shape):
            raise ValueError(f"dim1 {dim1} and dim2 {dim2} must be below the input's {len(shape)} dims")
        if shape:
            dims = list(shape)
            dims[dim1], dims[dim2] = dims[dim2], dims[dim1]
            shape = tuple(dims)
        out = self._output(out, shape, a)
        self._node("vxTensorTransposeNode", "tensor_transpose", {0: a, 3: out}, a.handle, out.handle, dim1, dim2)
        return out

    def convert_depth(self, a: Tensor, dtype=None, out: Tensor | None = None, *, fixed_point_position: int = 0,
                      norm: float = 1.0, offset: float = 0.0, overflow: str = "saturate") -> Tensor:
        """vxTensorConvertDepthNode: ``(a - offset) / norm`` into ``dtype``
        (or ``out``'s type; one of them must be given)."""
        a, out = self._inputs(a, out)
        norm, offset = real(norm, "norm"), real(offset, "offset")
        fixed_point_position = integer(fixed_point_position, "fixed_point_position")
        if out is None:
            if dtype is None:
                raise ValueError("convert_depth needs dtype= or out=")
            out = self._output(None, a.known()[0], a, fixed_point_position, dtype=dtype)
        n, o = self._scalar(vx.VX_TYPE_FLOAT32, norm), self._scalar(vx.VX_TYPE_FLOAT32, offset)
        self._node("vxTensorConvertDepthNode", "tensor_convert_depth", {0: a, 2: n, 3: o, 4: out}, a.handle,
                   choose(OVERFLOW, overflow, "overflow"), n.handle, o.handle, out.handle)
        return out

    def matrix_multiply(self, a: Tensor, b: Constant, c: Constant | None = None, out: Tensor | None = None, *,
                        transpose_a: bool = False, transpose_b: bool = False,
                        transpose_c: bool = False) -> Tensor:
        """vxTensorMatrixMultiplyNode: ``a @ b + c`` on 2-D tensors of dims [columns, rows]."""
        a, out = self._inputs(a, out)
        b, c = self._constant(b, "b", a), self._constant(c, "c", a, optional=True)
        sa, sb = a.known()[0], b.known()[0]
        shape = None
        if sa and sb and len(sa) == len(sb) == 2:
            rows = sa[0] if transpose_a else sa[1]
            cols = sb[1] if transpose_b else sb[0]
            shape = (cols, rows)
        out = self._output(out, shape, a)
        params = ffi.new("vx_tensor_matrix_multiply_params_t *", {
            "transpose_input1": int(transpose_a), "transpose_input2": int(transpose_b),
            "transpose_input3": int(transpose_c)})
        self._node("vxTensorMatrixMultiplyNode", "tensor_matrix_multiply", {0: a, 1: b, 2: c, 4: out}, a.handle,
                   b.handle, ffi.NULL if c is None else c.handle, params, out.handle)
        return out
