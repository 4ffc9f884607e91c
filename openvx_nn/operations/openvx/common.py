"""Validation rules shared by several kernels: formats, policies, shapes."""
from __future__ import annotations

from ...core.enums import ConvertPolicy, RoundPolicy, Status, Type
from ...core.validation import Meta, Validation

INTEGER_TYPES = (Type.VX_TYPE_UINT8, Type.VX_TYPE_INT8, Type.VX_TYPE_INT16)
ARITHMETIC_TYPES = INTEGER_TYPES + (Type.VX_TYPE_FLOAT32,)
CONVERT_POLICIES = (ConvertPolicy.VX_CONVERT_POLICY_WRAP, ConvertPolicy.VX_CONVERT_POLICY_SATURATE)
ROUND_POLICIES = (RoundPolicy.VX_ROUND_POLICY_TO_ZERO, RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN)


def arithmetic_input(v: Validation, index: int) -> Meta:
    """A tensor input of U8/S8/INT16 (any valid fixed point position) or F32."""
    meta = v.tensor(index)
    if meta.data_type not in ARITHMETIC_TYPES:  # the message is built only on failure: verify runs this per node
        v.fail(index, Status.VX_ERROR_INVALID_TYPE,
               f"data type {meta.describe()} is not supported (UINT8, INT8, INT16, FLOAT32)")
    return meta


def same_format(v: Validation, index: int, meta: Meta, reference: Meta, what: str) -> None:
    # the messages are built only on failure: verify runs this per element-wise node
    if meta.data_type != reference.data_type:
        v.fail(index, Status.VX_ERROR_INVALID_TYPE,
               f"data type of {meta.describe()} differs from {what} ({reference.describe()})")
    if meta.fpp != reference.fpp:
        v.fail(index, Status.VX_ERROR_INVALID_FORMAT,
               f"fixed point position {meta.fpp} differs from {what}'s {reference.fpp}")


def broadcast_dims(v: Validation, index: int, a: Meta, b: Meta) -> tuple[int, ...]:
    """The shape ``a`` and ``b`` broadcast to: per dim equal, or either is 1 (dims past a tensor's rank
    count as 1). OpenVX broadcasts only ``b`` (input2); either is a superset the conformance suite uses."""
    if a.dims == b.dims:  # the common case, without the padding and the per-dim loop
        return a.dims
    rank = max(a.rank, b.rank)
    da, db = a.dims + (1,) * (rank - a.rank), b.dims + (1,) * (rank - b.rank)
    if not all(m == n or 1 in (m, n) for m, n in zip(da, db)):
        v.fail(index, Status.VX_ERROR_INVALID_DIMENSION,
               f"dims {list(b.dims)} and input1's {list(a.dims)} do not broadcast "
               f"(each dim must be equal, or 1 in either)")
    return tuple(max(m, n) for m, n in zip(da, db))


def policy(v: Validation, index: int, allowed=CONVERT_POLICIES, what: str = "overflow policy") -> int:
    value = v.scalar(index)
    v.one_of(index, value, allowed, what)
    return value


def is_float(meta: Meta | None) -> bool:
    return meta is not None and meta.data_type == Type.VX_TYPE_FLOAT32


def nn_input(v: Validation, index: int, min_rank: int, max_rank: int = 6) -> Meta:
    """An NN layer's data input: an arithmetic format and a rank in range."""
    meta = arithmetic_input(v, index)
    if not min_rank <= meta.rank <= max_rank:
        v.fail(index, Status.VX_ERROR_INVALID_DIMENSION,
               f"expected {min_rank} to {max_rank} dims, got {meta.rank} ({list(meta.dims)})")
    return meta


def static_tensor(v: Validation, index: int, reference: Meta, what: str, fpp_free: bool = True) -> Meta | None:
    """A [static] tensor (weights, biases) of the input's data type (the verifier
    has already refused virtual ones)."""
    if v.ref(index) is None:
        return None
    meta = v.tensor(index)
    if fpp_free:
        v.require(meta.data_type == reference.data_type, index, Status.VX_ERROR_INVALID_TYPE,
                  f"{what} data type {meta.describe()} differs from the input's ({reference.describe()})")
    else:
        same_format(v, index, meta, reference, "the input")
    return meta


def output_format(v: Validation, index: int, reference: Meta, rescales: bool) -> tuple[int, int]:
    """(data type, fpp) of an NN output: the input's data type; the declared
    fixed point position where the layer rescales (else the input's); unknown
    (virtual) ones inherit the input's."""
    declared = v.declared(index)
    if not declared.data_type:
        return reference.data_type, reference.fpp
    if declared.data_type != reference.data_type:
        v.fail(index, Status.VX_ERROR_INVALID_TYPE, f"output data type {Type(declared.data_type).name} differs "
               f"from the input's {Type(reference.data_type).name}")
    if not rescales and declared.fpp != reference.fpp:
        v.fail(index, Status.VX_ERROR_INVALID_FORMAT,
               f"output fixed point position {declared.fpp} differs from the input's {reference.fpp}")
    return declared.data_type, (declared.fpp if reference.data_type != Type.VX_TYPE_FLOAT32 else 0)


def declared_extent(v: Validation, index: int, axis: int) -> int:
    """Dim ``axis`` the application gave output ``index`` (0 = unknown)."""
    dims = v.declared(index).dims
    return dims[axis] if axis < len(dims) else 0
