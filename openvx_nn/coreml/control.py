"""Control flow: ``branch``, ``loop``, ``loopBreak`` and ``loopContinue``.

A network holding them runs as a program of steps. The layers between two control-flow layers form a segment,
built as one ordinary verified graph per signature of input shapes (so its layers stay on the fast engines);
the host runs the segments in order over a dict of blobs by name, and at a control-flow layer reads the
condition or the count from that dict and runs the nested network's program: a branch's ``ifBranch`` or
``elseBranch`` once, a loop's ``conditionNetwork`` and ``bodyNetwork`` once per iteration. Nested networks
read and write the enclosing network's blobs by name, so a blob the body rewrites (a ``copy`` onto an earlier
name) is carried to the next iteration and seen after the loop.
"""
from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import CoreMLError

CONTROL = frozenset({"branch", "loop", "loopBreak", "loopContinue"})
KEYED = {"rangeDynamic": (0, 1, 2), "reshapeDynamic": (1,), "sliceDynamic": (1, 2, 3, 4, 5, 6), "fillDynamic": (0,),
         "broadcastToDynamic": (1,), "randomNormalDynamic": (0,), "randomUniformDynamic": (0,),
         "randomBernoulliDynamic": (0,), "NonMaximumSuppression": (2, 3, 4), "topK": (1,), "cumSum": (1,),
         "oneHot": (1,)}
"""Layers whose output shape is given by the values of some inputs (these positions): each such layer that has one
of them starts a segment, and that segment's graph is built per signature of those inputs' values as well as of
its inputs' shapes (the lowering reads the values in ``GraphBuilder.values``)."""
COUNTED = frozenset({"whereNonZero"})
"""Layers whose output length is known only once they ran: each ends a segment; its graph writes the output at its
largest length and the number of rows it filled (``count_blob``), and the host keeps that many rows."""
TRUE_ABOVE = 1e-6
"""A condition blob is true when its magnitude is above this (coremltools' reading of the branch predicate);
the seed says only that the input is the predicate."""


def has_control_flow(network) -> bool:
    return any(layer.WhichOneof("layer") in CONTROL for layer in network.layers)


LOAD_KNOWN = frozenset({"loadConstant", "loadConstantND", "fillStatic", "fillLike", "rangeStatic", "getShape"})
"""Layers whose output value is known when their graph is built (``GraphBuilder.values``)."""


def known_blobs(network) -> frozenset[str]:
    """Blobs every writer of which (at any nesting depth) is a ``LOAD_KNOWN`` layer: a layer reading one as its
    shape has the value when its graph is built, and needs no segment of its own."""
    writers: dict[str, set[str]] = {}

    def walk(layers) -> None:
        for layer in layers:
            kind = layer.WhichOneof("layer")
            for name in layer.output:
                writers.setdefault(name, set()).add(kind)
            if kind == "branch":
                walk(layer.branch.ifBranch.layers)
                walk(layer.branch.elseBranch.layers)
            elif kind == "loop":
                walk(layer.loop.conditionNetwork.layers)
                walk(layer.loop.bodyNetwork.layers)
    walk(network.layers)
    return frozenset(name for name, kinds in writers.items() if kinds <= LOAD_KNOWN)


def keyed(layer, known: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The inputs of ``layer`` whose values give its output shape (``KEYED``), in order, without repeats; none when
    every one is ``known`` when the graph is built."""
    positions = KEYED.get(layer.WhichOneof("layer"), ())
    names = tuple(dict.fromkeys(layer.input[i] for i in positions if i < len(layer.input)))
    return () if all(name in known for name in names) else names


def needs_program(network) -> bool:
    """Whether ``network`` runs as a program of segments: it has control flow, or a layer whose output shape
    depends on data (``KEYED``, ``COUNTED``; nested ones sit under control flow)."""
    known = known_blobs(network)
    return any(layer.WhichOneof("layer") in CONTROL | COUNTED or keyed(layer, known) for layer in network.layers)


def count_blob(name: str) -> str:
    """The blob holding how many rows of ``name`` (a ``COUNTED`` layer's output) the run filled."""
    return f"{name}#count"


class Signal(enum.Enum):
    """How a program ended: ran to its end, or stopped by ``loopBreak`` / ``loopContinue``."""

    END = 0
    BREAK = 1
    CONTINUE = 2


@dataclass(eq=False)
class Segment:
    """Consecutive ordinary layers, built as one graph. ``inputs``: the blobs it reads from outside (before any of
    its layers writes them); ``outputs``: the blobs it writes that anything else may read."""

    layers: list
    inputs: tuple[str, ...] = ()
    produced: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    index: int = 0
    keyed: tuple[str, ...] = ()
    """Inputs whose values, not only shapes, select the segment's graph (a ``KEYED`` layer's shape inputs)."""
    trims: tuple[tuple[str, str], ...] = ()
    """(blob, its count blob) of a ``COUNTED`` layer ending the segment: the host keeps that many rows."""


@dataclass(eq=False)
class Control:
    """A control-flow layer; ``programs``: (ifBranch, elseBranch) or (conditionNetwork, bodyNetwork)."""

    layer: object
    kind: str
    programs: tuple[list, ...] = ()


@dataclass
class Flow:
    """The compiled program of a network with control flow and every segment in it."""

    program: list
    segments: list[Segment] = field(default_factory=list)
    once: set[str] = field(default_factory=set)
    """Blobs exactly one layer anywhere writes (and no model input is): a value one of them has at load is its
    value in every run, so a segment built later may read it there (``segments.py``)."""
    known: dict[str, object] = field(default_factory=dict)
    """Values known at load of ``once`` blobs, found as segments are built."""
    static: frozenset[str] = frozenset()
    """Blobs only ``LOAD_KNOWN`` layers write (``known_blobs``)."""


def compile_flow(network, model_inputs: Sequence[str], wanted: Sequence[str]) -> Flow:
    """Split ``network`` (and its nested networks) into segments and control steps; decide each segment's inputs
    and outputs. A blob read somewhere and written nowhere (nor a model input) is refused here, at load."""
    flow = Flow([], static=known_blobs(network))
    flow.program = _split(network.layers, flow, flow.static)
    reads: dict[str, set[int]] = {}  # blob -> the segments reading it from outside (-1: a control layer, the model)
    written: set[str] = set(model_inputs)
    for segment in flow.segments:
        seen: set[str] = set()
        inputs = []
        for layer in segment.layers:
            for name in layer.input:
                if name not in seen and name not in inputs:
                    inputs.append(name)
            seen.update(layer.output)
        segment.inputs = tuple(inputs)
        segment.produced = tuple(dict.fromkeys(o for layer in segment.layers for o in layer.output))
        first, last = segment.layers[0], segment.layers[-1]
        segment.keyed = keyed(first, flow.static)
        if last.WhichOneof("layer") in COUNTED:
            segment.trims = tuple((name, count_blob(name)) for name in last.output[:1])
        written.update(segment.produced)
        for name in inputs:
            reads.setdefault(name, set()).add(segment.index)
    writes = Counter(name for segment in flow.segments for layer in segment.layers for name in layer.output)
    flow.once = {name for name, count in writes.items() if count == 1} - set(model_inputs)
    for name in [*_control_reads(flow.program), *wanted]:
        reads.setdefault(name, set()).add(-1)
    for segment in flow.segments:
        segment.outputs = tuple(n for n in segment.produced if reads.get(n, set()) - {segment.index}
                                or n in segment.inputs)  # read elsewhere, or carried to its next run
        segment.outputs += tuple(count for name, count in segment.trims if name in segment.outputs)
    for segment in flow.segments:
        for layer in segment.layers:
            for name in layer.input:
                if name not in written:
                    raise CoreMLError(f"input '{name}' is produced by no layer and is no model input",
                                      layer.name, layer.WhichOneof("layer"))
    for name in _control_reads(flow.program):
        if name not in written:
            raise CoreMLError(f"blob '{name}' is produced by no layer and is no model input")
    return flow


def _split(layers, flow: Flow, known: frozenset[str]) -> list:
    program: list = []
    run: list = []

    def close_run() -> None:
        if run:
            segment = Segment(list(run), index=len(flow.segments))
            flow.segments.append(segment)
            program.append(segment)
            run.clear()
    for layer in layers:
        kind = layer.WhichOneof("layer")
        if keyed(layer, known):  # its shape inputs come from outside the segment it starts
            close_run()
        if kind not in CONTROL:
            run.append(layer)
            if kind in COUNTED:  # nothing after it in its segment may read the output before the host trims it
                close_run()
            continue
        close_run()
        params = getattr(layer, kind)
        if kind == "branch":
            programs = (_split(params.ifBranch.layers, flow, known), _split(params.elseBranch.layers, flow, known))
        elif kind == "loop":
            programs = (_split(params.conditionNetwork.layers, flow, known),
                        _split(params.bodyNetwork.layers, flow, known))
        else:
            programs = ()
        program.append(Control(layer, kind, programs))
    close_run()
    return program


def _control_reads(program) -> list[str]:
    names = []
    for step in program:
        if isinstance(step, Control):
            names.extend(step.layer.input)
            if step.kind == "loop" and step.layer.loop.conditionVar:
                names.append(step.layer.loop.conditionVar)
            for sub in step.programs:
                names.extend(_control_reads(sub))
    return names


RunSegment = Callable[[Segment, dict], None]
"""Runs one segment: reads its inputs from the blob dict, writes its outputs into it."""


def run_program(program: list, blobs: dict[str, np.ndarray], run_segment: RunSegment) -> Signal:
    for step in program:
        if isinstance(step, Segment):
            missing = [n for n in step.inputs if n not in blobs]
            if missing:
                layer = next(layer for layer in step.layers if missing[0] in layer.input)
                raise CoreMLError(f"input '{missing[0]}' has not been produced by this point of the run (its "
                                  "producer is in a branch not taken or a loop that ran no iteration)",
                                  layer.name, layer.WhichOneof("layer"))
            run_segment(step, blobs)
            continue
        kind = step.kind
        if kind == "loopBreak":
            return Signal.BREAK
        if kind == "loopContinue":
            return Signal.CONTINUE
        if kind == "branch":
            taken = step.programs[0] if _truth(step.layer, step.layer.input[0], blobs) else step.programs[1]
            signal = run_program(taken, blobs, run_segment)
            if signal is not Signal.END:  # a break or continue inside a branch ends the enclosing loop's body
                return signal
        else:
            _run_loop(step, blobs, run_segment)
    return Signal.END


def _scalar(layer, name: str, blobs: dict[str, np.ndarray]) -> float:
    value = blobs.get(name)
    if value is None:
        raise CoreMLError(f"blob '{name}' has not been produced by this point of the run", layer.name,
                          layer.WhichOneof("layer"))
    if value.size != 1:
        raise CoreMLError(f"blob '{name}' has shape {list(value.shape)}; the layer reads it as a scalar (one "
                          "value)", layer.name, layer.WhichOneof("layer"))
    return float(value.reshape(-1)[0])


def _truth(layer, name: str, blobs: dict[str, np.ndarray]) -> bool:
    return abs(_scalar(layer, name, blobs)) > TRUE_ABOVE  # NaN: false


def _limit(layer, has_condition: bool, blobs: dict[str, np.ndarray]) -> float:
    """The loop's iteration limit: its input's value when it has one, else ``maxLoopIterations``; ``inf`` for a
    while loop (case 2: a condition network, no input, ``maxLoopIterations`` 0). Validation refuses a loop with
    none of the three."""
    if layer.input:
        value = _scalar(layer, layer.input[0], blobs)
        if not (math.isfinite(value) and value >= 0 and value == int(value)):
            raise CoreMLError(f"the iteration count '{layer.input[0]}' is {value}; it must be a non-negative "
                              "integer", layer.name, "loop")
        return int(value)
    if has_condition and layer.loop.maxLoopIterations == 0:
        return math.inf
    return int(layer.loop.maxLoopIterations)


def _run_loop(step: Control, blobs: dict[str, np.ndarray], run_segment: RunSegment) -> None:
    """The seed's pseudo-code: the condition network runs before the first iteration and after each one (its
    blobs stay visible), the count is checked with it; ``loopContinue`` ends an iteration, ``loopBreak`` the
    loop."""
    layer = step.layer
    condition, body = step.programs
    var = layer.loop.conditionVar
    limit = _limit(layer, bool(condition), blobs)
    written = _writes(step.programs)
    shapes = {name: blobs[name].shape for name in written if name in blobs}

    def ran() -> None:  # a blob keeps its shape across iterations: each segment's graph is built for one
        for name in written:
            value = blobs.get(name)
            if value is None:
                continue
            before = shapes.setdefault(name, value.shape)
            if before != value.shape:
                raise CoreMLError(f"blob '{name}' changes shape from {list(before)} to {list(value.shape)} in the "
                                  "loop; a blob the loop writes keeps its shape across iterations", layer.name,
                                  "loop")

    def proceed() -> bool:
        if not condition:
            return True
        run_program(condition, blobs, run_segment)
        ran()
        return _truth(layer, var, blobs)
    iteration = 0
    go = proceed()
    while go and iteration < limit:
        signal = run_program(body, blobs, run_segment)
        ran()
        iteration += 1
        if signal is Signal.BREAK:
            break
        go = proceed()


def _writes(programs) -> tuple[str, ...]:
    """The blobs the segments of ``programs`` (and the programs nested in them) write."""
    names: dict[str, None] = {}
    for program in programs:
        for step in program:
            if isinstance(step, Segment):
                names.update(dict.fromkeys(step.outputs))
            else:
                names.update(dict.fromkeys(_writes(step.programs)))
    return tuple(names)


def layer_kinds(program) -> list[tuple[object, str]]:
    """Every layer of ``program`` and its nested programs, in file order, with how it runs (control layers)."""
    out = []
    for step in program:
        if isinstance(step, Segment):
            out.extend((layer, "") for layer in step.layers)
            continue
        layer = step.layer
        if step.kind == "branch":
            out.append((layer, f"host: takes ifBranch when |'{layer.input[0]}'| > {TRUE_ABOVE}, else elseBranch"))
        elif step.kind == "loop":
            out.append((layer, "host: runs the condition and body networks' graphs per iteration"))
        else:
            out.append((layer, f"host: ends the enclosing loop's {'iteration' if 'Cont' in step.kind else 'run'}"))
        for sub in step.programs:
            out.extend(layer_kinds(sub))
    return out
