"""The vocabulary of operand signatures: ``Slot`` (one operand position), ``Form`` (one accepted operand list),
``Signature`` (an operation's forms and API level) and the small constructors the signature tables are written
with (``signatures``: API levels 27 and 28; ``signatures_1_2``: API level 29).

A ``Form``'s tensors of type ``T`` share one type, chosen among ``Form.types`` by the operand at ``Form.anchor``;
a ``Slot`` with ``by_type`` takes the type paired with ``T`` (a quantized convolution's bias is TENSOR_INT32).
"""
from __future__ import annotations

from dataclasses import dataclass

from .enums import FusedActivationFunc, OperandType, OperationType

F32, I32 = OperandType.FLOAT32, OperandType.INT32
TF32, TI32, Q8 = OperandType.TENSOR_FLOAT32, OperandType.TENSOR_INT32, OperandType.TENSOR_QUANT8_ASYMM
OP = OperationType


@dataclass(frozen=True)
class Slot:
    """One operand position: its name, type, ranks, whether it may have no value, an enum's values."""

    name: str
    type: OperandType | None = None
    """A fixed type; None: the form's type ``T`` (or the type ``by_type`` pairs with it)."""
    by_type: tuple[tuple[OperandType, OperandType], ...] = ()
    """(T, this slot's type) pairs, for a type that follows T without being T; a T listed in several pairs
    lets the slot take any of their types (a TENSOR_QUANT8_ASYMM convolution's filter: TENSOR_QUANT8_ASYMM or
    TENSOR_QUANT8_SYMM_PER_CHANNEL), the first being the one messages name."""
    ranks: tuple[int, ...] = ()
    """The ranks a tensor may have (() with ``min_rank`` 0: any); checked where the rank is known."""
    min_rank: int = 0
    optional: bool = False
    """The operand may have no value (NO_VALUE); it keeps its position and type."""
    values: tuple[int, ...] = ()
    """The values an enum scalar may take (() for a plain number)."""

    def expected(self, t: OperandType | None) -> OperandType | None:
        """The type this slot takes when the form's type is ``t`` (None: ``t`` unknown)."""
        if self.type is not None:
            return self.type
        if self.by_type:
            return dict(self.by_type).get(t)
        return t

    def allowed(self, t: OperandType | None) -> tuple[OperandType | None, ...]:
        """Every type this slot takes when the form's type is ``t``."""
        if self.type is None and self.by_type:
            return tuple(b for a, b in self.by_type if a == t) or (None,)
        return (self.expected(t),)

    def rank_ok(self, rank: int) -> bool:
        return (rank in self.ranks) if self.ranks else rank >= self.min_rank

    def rank_text(self) -> str:
        if self.ranks:
            return " or ".join(map(str, self.ranks)) if len(self.ranks) < 3 else f"{self.ranks[0]} to {self.ranks[-1]}"
        return f"at least {self.min_rank}" if self.min_rank else ""


@dataclass(frozen=True)
class Form:
    """One operand list an operation accepts."""

    inputs: tuple[Slot, ...]
    outputs: tuple[Slot, ...]
    types: tuple[OperandType, ...] = ()
    """What ``T`` may be (() when no slot uses it)."""
    anchor: int = 0
    """The input whose type is ``T``."""
    repeated: bool = False
    """``inputs[0]`` stands for one or more operands (CONCATENATION's tensors)."""
    repeated_outputs: bool = False
    """``outputs[0]`` stands for one or more operands (SPLIT's parts)."""
    name: str = ""

    def accepts_count(self, n_inputs: int, n_outputs: int) -> bool:
        if n_outputs != len(self.outputs) and not (self.repeated_outputs and n_outputs >= len(self.outputs)):
            return False
        return n_inputs >= len(self.inputs) if self.repeated else n_inputs == len(self.inputs)

    def input_slot(self, position: int, n_inputs: int) -> Slot:
        """The slot of input ``position`` in a list of ``n_inputs`` operands."""
        if not self.repeated:
            return self.inputs[position]
        extra = n_inputs - len(self.inputs)
        return self.inputs[0] if position <= extra else self.inputs[position - extra]

    def output_slot(self, position: int) -> Slot:
        """The slot of output ``position``."""
        return self.outputs[0] if self.repeated_outputs else self.outputs[position]


@dataclass(frozen=True)
class Signature:
    operation: OperationType
    forms: tuple[Form, ...]
    api: int = 27
    """The API level that introduced the operation."""


UP_TO_4 = (1, 2, 3, 4)
FUSE = tuple(int(a) for a in FusedActivationFunc)


def t(name: str, ranks: tuple[int, ...] = UP_TO_4, optional: bool = False, min_rank: int = 0) -> Slot:
    """A tensor of the form's type."""
    return Slot(name, ranks=ranks, optional=optional, min_rank=min_rank)


def fixed(name: str, kind: OperandType, ranks: tuple[int, ...] = (), optional: bool = False) -> Slot:
    return Slot(name, kind, ranks=ranks, optional=optional)


def i32(name: str, values: tuple[int, ...] = ()) -> Slot:
    return Slot(name, I32, values=values)


def f32(name: str) -> Slot:
    return Slot(name, F32)


ACTIVATION = i32("fused activation", FUSE)
BIAS = Slot("bias", by_type=((TF32, TF32), (Q8, TI32)), ranks=(1,))
FLOAT_OR_QUANT = (TF32, Q8)
ANY_TENSOR = (TF32, TI32, Q8)


def unary(types: tuple[OperandType, ...]) -> tuple[Form, ...]:
    return (Form((t("input"),), (t("output"),), types),)


def binary(types: tuple[OperandType, ...]) -> tuple[Form, ...]:
    return (Form((t("input1"), t("input2"), ACTIVATION), (t("output"),), types),)


def ints(name: str, rank: int = 1, optional: bool = False) -> Slot:
    return fixed(name, TI32, (rank,), optional)
