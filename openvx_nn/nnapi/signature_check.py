"""An operation's operands against its signature (``signatures.SIGNATURES``): operand counts, the type at each
position, tensor ranks where the operand's rank is known.

``Model.add_operation`` calls ``check_signature`` when the operation is added (as Android's runtime does, so the
C API answers ``BAD_DATA`` at ``addOperation``), ``model_check`` on every operation of a HAL model, and the
lowering asks it which form an operation has (which inputs may be omitted, which are enums).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .enums import ErrorStatus, OperandType, OperationType
from .errors import NNAPIError
from .signatures import SIGNATURES, Form, Signature, Slot


class Typed(Protocol):
    """What the check reads of an operand (``hal.Operand`` has it)."""

    type: int
    dimensions: list[int]


def type_name(kind: int) -> str:
    try:
        return OperandType(kind).name
    except ValueError:
        return f"type {kind}"


def _slot_problem(where: str, slot: Slot, operand: Typed, t: OperandType | None, anchor: int) -> str | None:
    want = slot.expected(t)
    if operand.type not in slot.allowed(t):
        if slot.type is not None or t is None:
            text = type_name(want) if want is not None else "a tensor"
        elif slot.by_type:
            text = f"{type_name(want)} (with {t.name} input {anchor})"
        else:
            text = f"{t.name}, the type of input {anchor}"
        return f"{where} ({slot.name}) is {type_name(operand.type)}; expected {text}"
    rank = len(operand.dimensions)
    placeholder = slot.optional and 0 in operand.dimensions  # an omitted input's dimensions are often [0]
    if rank and not slot.rank_ok(rank) and not placeholder:
        return f"{where} ({slot.name}) has rank {rank} {list(operand.dimensions)}; expected rank {slot.rank_text()}"
    return None


def _mismatch(form: Form, ins: Sequence[Typed], outs: Sequence[Typed]) -> tuple[int, str] | None:
    """None when the operands fit ``form``; else (the position of the first misfit, what is wrong)."""
    t = None
    if form.types:
        kind = ins[form.anchor].type
        if kind not in form.types:
            slot = form.input_slot(form.anchor, len(ins))
            expected = " or ".join(k.name for k in form.types)
            return form.anchor, f"input {form.anchor} ({slot.name}) is {type_name(kind)}; expected {expected}"
        t = OperandType(kind)
    for p, operand in enumerate(ins):
        problem = _slot_problem(f"input {p}", form.input_slot(p, len(ins)), operand, t, form.anchor)
        if problem:
            return p, problem
    for p, operand in enumerate(outs):
        problem = _slot_problem(f"output {p}", form.output_slot(p), operand, t, form.anchor)
        if problem:
            return len(ins) + p, problem
    return None


def counts_text(signature: Signature) -> str:
    """The operand counts an operation takes, e.g. ``10 or 7 inputs and 1 output``."""
    ins, outs = [], []
    for form in signature.forms:
        n = f"at least {len(form.inputs)}" if form.repeated else str(len(form.inputs))
        ins += [n] if n not in ins else []
        m = f"at least {len(form.outputs)}" if form.repeated_outputs else str(len(form.outputs))
        outs += [m] if m not in outs else []
    return (f"{' or '.join(ins)} input{'s' if ins != ['1'] else ''} and {' or '.join(outs)} "
            f"output{'s' if outs != ['1'] else ''}")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def check_signature(kind: int, ins: Sequence[Typed], outs: Sequence[Typed], index: int) -> Form:
    """The form operation ``index`` of type ``kind`` has; raises ``NNAPIError`` naming the operation and the
    position when no form of its signature fits its operands."""
    if kind == OperationType.OEM_OPERATION:
        raise NNAPIError("OEM operations are not supported", ErrorStatus.INVALID_ARGUMENT, index, kind)
    try:
        signature = SIGNATURES[OperationType(kind)]
    except (ValueError, KeyError):
        raise NNAPIError("is not an operation this driver runs", ErrorStatus.INVALID_ARGUMENT, index,
                         kind) from None
    forms = [f for f in signature.forms if f.accepts_count(len(ins), len(outs))]
    if not forms:
        raise NNAPIError(f"has {_count(len(ins), 'input')} and {_count(len(outs), 'output')}; expected "
                         f"{counts_text(signature)}", ErrorStatus.INVALID_ARGUMENT, index, kind)
    problems = []
    for form in forms:
        problem = _mismatch(form, ins, outs)
        if problem is None:
            return form
        problems.append(problem[1] if len(forms) == 1 else f"{problem[1]} (form: {form.name})")
    raise NNAPIError("; or ".join(problems), ErrorStatus.INVALID_ARGUMENT, index, kind)


def check_enum(slot: Slot, position: int, value: int, index: int, kind: int) -> None:
    """Refuse an enum input whose value is not one NNAPI defines (a value read at execution too)."""
    if slot.values and int(value) not in slot.values:
        raise NNAPIError(f"input {position} ({slot.name}) is {value}; NNAPI defines {list(slot.values)}",
                         ErrorStatus.INVALID_ARGUMENT, index, kind)
