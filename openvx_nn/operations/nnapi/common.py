"""How an NNAPI kernel is described once and registered as an OpenVX kernel.

An ``NNAPIKernel`` names its tensors (inputs, then outputs), its INT32 and
FLOAT32 scalars, and which tensors carry an asymmetric quantization (each
adds a FLOAT32 ``<name>_scale`` and an INT32 ``<name>_zero_point`` scalar at
the end of the signature).  Its ``infer`` gives every output's NNAPI shape
and dtype from the inputs' (raising ``ShapeError``); the OpenVX validator and
the NNAPI lowering both call it, so the rules are written once.

Tensors are NHWC as NNAPI defines them: an NNAPI shape ``[N, H, W, C]`` is
the OpenVX dims ``(C, W, H, N)`` over the same memory, so a kernel sees
``array.T`` (C-ordered, NNAPI-shaped) without a copy.
"""
from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.bordered_tensors import BORDERS
from ...core.datatypes import dtype_of
from ...core.enums import Status, Type
from ...core.errors import VXError
from ...core.kernels import register
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.tensor import Tensor
from ...core.validation import Validation
from ...kernels.engine import gang

VENDOR_USER, LIB_NNAPI = 0xFFE, 1
VX_TYPES = {np.dtype(np.float32): Type.VX_TYPE_FLOAT32, np.dtype(np.uint8): Type.VX_TYPE_UINT8,
            np.dtype(np.int32): Type.VX_TYPE_INT32, np.dtype(np.float16): Type.VX_TYPE_FLOAT16,
            np.dtype(np.int16): Type.VX_TYPE_INT16, np.dtype(np.int8): Type.VX_TYPE_INT8,
            np.dtype(np.bool_): Type.VX_TYPE_UINT8, np.dtype(np.uint16): Type.VX_TYPE_INT16}
"""The OpenVX tensor type of each NNAPI dtype. OpenVX tensors have no boolean and no uint16 element: a
TENSOR_BOOL8 lives in a UINT8 tensor (bytes 0 and 1), a TENSOR_QUANT16_ASYMM's bits in an INT16 tensor, so
their kernels see uint8 and int16 arrays (``.view(np.bool_)``, ``.view(np.uint16)`` read them as NNAPI's)."""
F32, U8, I32 = np.dtype(np.float32), np.dtype(np.uint8), np.dtype(np.int32)


class ShapeError(ValueError):
    """A rule of an NNAPI kernel broken by parameter ``param``."""

    def __init__(self, param: str, message: str, status: int = Status.VX_ERROR_INVALID_DIMENSION):
        super().__init__(message)
        self.param = param
        self.status = status


@dataclass(frozen=True)
class TensorSpec:
    """What ``infer`` sees of a tensor: its NNAPI shape and dtype."""

    shape: tuple[int, ...]
    dtype: np.dtype


class Args:
    """A node's values by name: tensors (arrays at run time, ``TensorSpec`` at inference; None when an
    optional one is absent) and scalars."""

    def __init__(self, tensors: dict[str, Any], scalars: dict[str, Any], roots: dict[str, Any] | None = None,
                 memo: dict | None = None):
        self.tensors = tensors
        self.scalars = scalars
        self._roots = roots or {}
        self._memo = memo

    def shared(self, tag: str, make: Callable[[], Any]) -> Any:
        """``make()``, made once for the node's runner and its native entry (bound one after the other) while
        the weights (:data:`PACKED`: values and memory) and the scalars stay as they are."""
        if self._memo is None:
            return make()
        stamp = (tuple(self.scalars.items()), tuple(
            (self.writes(name), self.tensors[name].__array_interface__["data"][0])
            for name in PACKED if self.tensors.get(name) is not None))
        found = self._memo.get(tag)
        if found is None or found[0] != stamp:
            found = self._memo[tag] = (stamp, make())
        return found[1]

    def writes(self, name: str) -> int:
        """How often tensor ``name``'s data has been written (grows with every write; 0 when unknown): a
        ``prepare`` compares it per run to know when what it packed at bind time is stale."""
        root = self._roots.get(name)
        return 0 if root is None else root.writes

    def root(self, name: str) -> Any:
        """The root tensor of ``name`` (its ``writes`` is the count above), None when unknown: a runner that
        checks it on every call reads the attribute itself."""
        return self._roots.get(name)

    def __getitem__(self, name: str) -> Any:
        return self.tensors[name] if name in self.tensors else self.scalars[name]

    def get(self, name: str) -> Any:
        return self.tensors.get(name)

    def quant(self, name: str) -> tuple[float, int] | None:
        """(scale, zero point) of a uint8 tensor, None for a float one."""
        t = self.tensors.get(name)
        if t is None or np.dtype(t.dtype) != U8 or f"{name}_scale" not in self.scalars:
            return None
        return float(self.scalars[f"{name}_scale"]), int(self.scalars[f"{name}_zero_point"])


def require(condition: bool, param: str, message: str, status: int = Status.VX_ERROR_INVALID_DIMENSION) -> None:
    if not condition:
        raise ShapeError(param, message, status)


def dtype_in(args: Args, name: str, allowed: tuple[np.dtype, ...]) -> np.dtype:
    dtype = np.dtype(args[name].dtype)
    require(dtype in allowed, name, f"{name} has element type {dtype}, expected one of "
            f"{', '.join(str(a) for a in allowed)}", Status.VX_ERROR_INVALID_TYPE)
    return dtype


def rank_in(args: Args, name: str, ranks: tuple[int, ...]) -> tuple[int, ...]:
    shape = tuple(args[name].shape)
    require(len(shape) in ranks, name, f"{name} has shape {list(shape)}, expected rank "
            f"{' or '.join(str(r) for r in ranks)}")
    return shape


@dataclass(frozen=True)
class NNAPIKernel:
    op: str
    index: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    infer: Callable[[Args], dict[str, tuple[tuple[int, ...], np.dtype]]]
    run: Callable[[Args], None]
    ints: tuple[str, ...] = ()
    floats: tuple[str, ...] = ()
    quantized: tuple[str, ...] = ()
    # Optional: Args of the node's arrays and scalars -> a no-argument runner with everything a call
    # needs resolved (packed weights, requantization constants, scratch). Called when the graph binds
    # the node (after verify, again when a tensor's storage changes); scalars are the operation's
    # parameters, read then. Without it every run calls ``run``.
    prepare: Callable[[Args], Callable[[], None]] | None = None
    # Optional, beside ``prepare``: Args (as ``prepare`` gets them) -> the node's call as a native entry
    # (``kernels.support.native.Entry``: run from C without the GIL), or None when this binding has none. What
    # it packs from the ``PACKED`` inputs (weights) is guarded: a write to one rebinds the node.
    native: Callable[[Args], object] | None = None
    # Inputs beyond ``PACKED`` that ``native`` packs at bind (a recurrent cell's weights): guarded the same way.
    packed: tuple[str, ...] = ()
    # Optional, for a product (``core/gated_products.py``): the description's ``takes_gate`` hook, and (parameter
    # objects, state, native) -> the node's runner (``native``: its entry) computing the gate the plan fused into
    # it, or None while none is fused (then the node runs as its other hooks say).
    takes_gate: Callable[[list, dict], tuple[int, ...]] | None = None
    gated: Callable[[list, dict, bool], object] | None = None
    # Optional (``core/activation_epilogue.py``): the description's hooks of those names, and, for a convolution,
    # (parameter objects, state, native) -> its runner (``native``: its entry) computing the chain fused into it,
    # or None while none is (then the node runs as its other hooks say).
    takes_activation: Callable[[list, dict], tuple[int, bool] | None] | None = None
    activation_epilogue: Callable[[list, dict], tuple | None] | None = None
    residual_sum: Callable[[list, dict], int | None] | None = None
    # Optional (``core/channel_chains.py``): the description's hook of that name.
    channel_step: Callable[[list, dict], tuple[str, int, int, int] | None] | None = None
    chained: Callable[[list, dict, bool], object] | None = None
    # Optional (``core/bordered_tensors.py``): the description's ``takes_borders`` hook, and (parameter objects,
    # state, native) -> the node's runner (``native``: its entry) on the zero-bordered buffers the plan gave it.
    takes_borders: Callable[[list, dict], tuple | None] | None = None
    bordered: Callable[[list, dict, bool], object] | None = None

    @property
    def name(self) -> str:
        return f"org.openvx_nn.nnapi.{self.op}"

    @property
    def enum(self) -> int:
        """``(VX_ID_USER << 20) | (1 << 12) | index`` as the C ``vx_enum`` (int32) holds it: negative."""
        value = (VENDOR_USER << 20) | (LIB_NNAPI << 12) | self.index
        return value - (1 << 32) if value >= 1 << 31 else value

    @property
    def tensor_names(self) -> list[str]:
        return [n.rstrip("?") for n in self.inputs + self.outputs]

    @property
    def scalar_names(self) -> list[tuple[str, int]]:
        quant = [(f"{q}_{s}", t) for q in self.quantized
                 for s, t in (("scale", Type.VX_TYPE_FLOAT32), ("zero_point", Type.VX_TYPE_INT32))]
        return ([(n, Type.VX_TYPE_INT32) for n in self.ints] + [(n, Type.VX_TYPE_FLOAT32) for n in self.floats]
                + quant)

    def params(self) -> tuple[ParamSpec, ...]:
        tensors = [ParamSpec(n.rstrip("?"), IN, Type.VX_TYPE_TENSOR, n.endswith("?")) for n in self.inputs]
        tensors += [ParamSpec(n.rstrip("?"), OUT, Type.VX_TYPE_TENSOR, n.endswith("?")) for n in self.outputs]
        # A prepared kernel reads its scalars once, at bind time: they are [static] (set before verify).
        scalars = [ParamSpec(n, IN, Type.VX_TYPE_SCALAR, scalar_type=t, static=self.prepare is not None)
                   for n, t in self.scalar_names]
        return tuple(tensors + scalars)

    def index_of(self, name: str) -> int:
        names = self.tensor_names + [n for n, _ in self.scalar_names]
        return names.index(name) if name in names else 0


def _validator(k: NNAPIKernel) -> Callable[[Validation], None]:
    n_in = len(k.inputs)

    def validate(v: Validation) -> None:
        tensors: dict[str, Any] = {}
        for i, name in enumerate(k.inputs):
            meta = v.tensor(i)
            tensors[name.rstrip("?")] = None if meta is None else TensorSpec(
                tuple(reversed(meta.dims)), dtype_of(meta.data_type))
        for j, name in enumerate(k.outputs):
            if v.present(n_in + j):
                declared = v.declared(n_in + j)
                if declared.dims and all(declared.dims) and declared.data_type:
                    tensors[name.rstrip("?")] = TensorSpec(tuple(reversed(declared.dims)),
                                                           dtype_of(declared.data_type))
        scalars = {name: v.scalar(len(k.tensor_names) + j) for j, (name, _) in enumerate(k.scalar_names)}
        for q in k.quantized:
            if tensors.get(q) is None or np.dtype(tensors[q].dtype) != U8:
                continue
            scale, zero = scalars[f"{q}_scale"], scalars[f"{q}_zero_point"]
            v.require(scale > 0 and 0 <= zero <= 255, k.index_of(f"{q}_scale"), Status.VX_ERROR_INVALID_VALUE,
                      f"quantization of {q} (scale {scale}, zero point {zero}) is invalid")
        try:
            result = k.infer(Args(tensors, scalars))
        except ShapeError as err:
            v.fail(k.index_of(err.param), err.status, str(err))
        if k.native is not None:
            _plan_native(k, v)
        for j, name in enumerate(k.outputs):
            name = name.rstrip("?")
            if v.present(n_in + j) and name in result:
                shape, dtype = result[name]
                v.output(n_in + j, tuple(reversed(shape)), VX_TYPES[np.dtype(dtype)], 0)
            elif not v.present(n_in + j) and not k.outputs[j].endswith("?"):
                v.fail(n_in + j, Status.VX_ERROR_INVALID_PARAMETERS, f"output {name} is required")
    return validate


PACKED = ("filter", "bias")
"""Inputs a native entry may pack at bind time (weights): ``state["packed"]`` lists their parameter indexes,
whose write counters then guard the node's native plan and binding like a [static] parameter's."""


def _plan_native(k: NNAPIKernel, v: Validation) -> None:
    """Which inputs this node packs at bind (``state["packed"]``), and whether their values hold still during a
    run (``state["steady"]``): not a virtual tensor, not one another node of the graph writes. Guards are read
    before a run, and a virtual tensor's writes are not counted: a node whose weights move during runs has no
    native entry, and its runner is the executor (which reads them per call)."""
    packed = tuple(i for i, name in enumerate(k.inputs)
                   if (name.rstrip("?") in PACKED or name.rstrip("?") in k.packed) and v.present(i))
    node = id(v.node)
    writers = _writers(v.node.graph) if packed else {}
    written = any(w != node for i in packed for w in writers.get(id(v.ref(i).root), ()))
    v.state["packed"] = packed
    v.state["steady"] = not written and not any(v.ref(i).root.virtual for i in packed)


_WRITERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""graph -> (a weak reference to the plan it held when the index was made, the index): see ``_writers``. The
index holds ids only: a value that held the graph's nodes would keep its weak key, the graph, alive for ever."""


def _writers(graph: Any) -> dict[int, list[int]]:
    """The ids of the nodes of ``graph`` that write each tensor root (by ``id``), indexed once per verify, so that
    a graph's validation stays linear in its nodes. A verify starts by invalidating the graph, which gives it a
    new plan object, as does every change of its nodes or their parameters: the plan the index was made under
    tells whether it still holds (and while it does, the graph holds the nodes and roots the ids name)."""
    found = _WRITERS.get(graph)
    if found is not None and found[0]() is graph.plan:
        return found[1]
    writers: dict[int, list[int]] = {}
    for node in graph.nodes:
        for spec, p in zip(node.description.params, node.params):
            if spec.direction == OUT and isinstance(p, Tensor):
                writers.setdefault(id(p.root), []).append(id(node))
    _WRITERS[graph] = (weakref.ref(graph.plan), writers)
    return writers


def _args(k: NNAPIKernel, p: list, state: dict | None = None) -> Args:
    """The node's values by name: arrays NNAPI-shaped (``array.T``), scalars' values (with the node's
    ``state``: also the tensors' write counts and a memo, for ``prepare`` and ``native``)."""
    names = k.tensor_names
    tensors = {name: (None if p[i] is None else p[i].array.T) for i, name in enumerate(names)}
    scalars = {name: p[len(names) + j].value for j, (name, _) in enumerate(k.scalar_names)}
    if state is None:
        return Args(tensors, scalars)
    return Args(tensors, scalars, {name: p[i].root for i, name in enumerate(names) if p[i] is not None},
                state.setdefault("memo", {}))


def _guarded(k: NNAPIKernel, call: Callable[[], None], state: dict) -> Callable[[], None]:
    """``call`` with its data-dependent failures (a lookup out of range) turned into ``VXError``."""
    def run() -> None:
        try:
            call()
        except (ValueError, IndexError) as err:
            state["error"] = str(err)
            raise VXError(Status.VX_FAILURE, f"{k.name}: {err}") from None
    return run


def _fused_call(k: NNAPIKernel, p: list, state: dict, native: bool):
    """The node's call (``native``: entry) computing what the plan fused into it, or None."""
    if k.channel_step is not None:
        from ...core import channel_chains
        members = channel_chains.chain(state)
        if members is not None:
            return _chain_call(members, native)
    if k.chained is not None:
        from ...core import activation_epilogue
        if activation_epilogue.epilogue(state) is not None:
            return k.chained(p, state, native) if state.get("steady", True) or not native else None
    if k.bordered is not None and state.get(BORDERS):
        return k.bordered(p, state, native)
    return None if k.gated is None else k.gated(p, state, native)


def _chain_call(members: list, native: bool):
    """The first step's call (``native``: its entry) computing every step of its chain (``core/channel_chains``)
    in one pass: ``kernels/frontend/channel_chain``."""
    from ...core import channel_chains
    from ...kernels.frontend import channel_chain
    codes = {"mul": channel_chain.MUL, "add": channel_chain.ADD, "prelu": channel_chain.PRELU}
    steps = []
    for node in members:
        name, _, vector, _ = channel_chains.step_of(node)
        steps.append((codes[name], node.params[vector].array.T))
    first, last = channel_chains.step_of(members[0]), channel_chains.step_of(members[-1])
    x, out = members[0].params[first[1]].array.T, members[-1].params[last[3]].array.T
    return (channel_chain.native_entry if native else channel_chain.bind)(x, out, steps)


def _executor(k: NNAPIKernel) -> Callable[[list, dict], None]:
    def execute(p: list, state: dict) -> None:
        runner = _fused_call(k, p, state, False)
        if runner is not None:
            runner()
            return
        args = _args(k, p)
        _guarded(k, lambda: k.run(args), state)()
    return execute


def _binder(k: NNAPIKernel) -> Callable[[list, dict], Callable[[], None]] | None:
    if k.prepare is None:
        return None

    def bind(p: list, state: dict) -> Callable[[], None] | None:
        runner = _fused_call(k, p, state, False)
        if runner is not None:
            return runner
        if state.get("steady") is False:
            return None  # weights computed during the run: read per call (the executor)
        return _guarded(k, k.prepare(_args(k, p, state)), state)
    return bind


def _native(k: NNAPIKernel) -> Callable[[list, dict], object] | None:
    if k.native is None:
        return None

    def native(p: list, state: dict) -> object:
        if k.channel_step is not None:
            from ...core import channel_chains
            if channel_chains.chain(state) is not None:  # its entry (None: the runner computes the chain)
                return _fused_call(k, p, state, True)
        if k.chained is not None:
            from ...core import activation_epilogue
            if activation_epilogue.epilogue(state) is not None:  # its entry, or None: the runner computes the chain
                return _fused_call(k, p, state, True)
        if k.gated is not None:
            from ...core import gated_products
            if gated_products.gate(state) is not None:  # its entry, or None: the runner computes the gate
                return k.gated(p, state, True)
        if k.bordered is not None and state.get(BORDERS):
            return k.bordered(p, state, True)
        return k.native(_args(k, p, state)) if state.get("steady") else None
    return native


def lend_helpers(calls: tuple) -> bool:
    """Whether a native run of ``calls`` (a graph's compiled plan) has a layer that shares its chunks with the
    helper threads; then :func:`summon_helpers` before each run (C cannot start them)."""
    return any(gang.lends(call.native) for call in calls)


def summon_helpers() -> None:
    """The helpers this process may lend now, spinning in the gang when a native run starts."""
    gang.summon_spare()


class Lending:
    """Whether a graph's native runs lend their layers to the helpers, decided by timing runs both ways.

    On an idle machine a helper finishes a shared layer with the caller in little more than half the time. On a
    machine busier than its cores, a helper the OS preempts mid-chunk holds the layer up for a time slice: ResNet-18
    ran 2.5x slower lending than alone under a load of 4 on 2 cores. So the two ways are compared: both in turns of
    two runs until ``SAMPLES`` ratios are timed, then the faster, but for a turn of two runs the other way every
    ``EXPLORE`` runs, so that a change of load is seen (farther apart while the trials clearly confirm the way
    taken: ``EXPLORE_MOST``).

    The first run of a turn is not timed: it pays for the change of way (helpers woken from their queue, the other
    way's caches), and timing it made lending tried from runs alone look slower than it is, so a graph once decided
    for running alone stayed there (NNAPI's float MobileNet at half speed in one benchmark process of three). Each
    timed run is paired with the last timed run of the other way, two or three runs before (a shared machine's speed
    drifts over seconds: times taken far apart compare the machine, not the ways), and a run right after a timed run
    of its way counts the lesser of the two times (a helper preempted for a time slice stalls a lending run fivefold
    now and then: two such stalls among five pairs had turned a graph to running alone). The last ``SAMPLES``
    ratios decide: lending, unless ``ALONE_BY`` of them say it is more than 10% slower (``ALONE_ABOVE``). A run
    alone closes the gang (``gang.closed``: a helper still spinning from a lending run must not join it), and the
    run before a turn of lending summons the helpers.

    A run begun more than ``IDLE`` seconds after the last one ended, where that one was not, counts as the first of
    its turn: the helpers have left the gang and their cores idled (on a shared machine the first lending run after
    a pause took 2-6x its steady time; three such runs among five pairs turned NNAPI's float MobileNet to running
    alone in a benchmark whose turns alternate with another runtime's). A graph always run after a pause is timed
    on those runs, both ways alike. Likewise a graph decided for running alone has its helpers spin through the
    ``WARM`` runs before each trial of lending (a helper that joins a lending run from a cold core stalls each layer
    waiting for its chunk: trial runs took 1.5-4x the time alone, then 0.5x once warm), and those runs alone are
    not timed (a core spinning beside them makes them faster than alone)."""

    EXPLORE = 16
    """Runs from one turn of trial of the other way to the next, at first and after a trial whose pair was not clear."""
    EXPLORE_MOST = 256
    """Runs between trials at most: each trial whose pair clearly confirms the way taken (``CLEAR``) doubles the
    distance to the next, up to this, and to ``EXPLORE_SECONDS`` of runs. A trial costs two runs the slower way:
    every 16 runs, a large model lending on an idle machine (the converted U-Net, 12 ms lending, 22 alone) lost 11 %
    of its runs' time to them, two slow runs in every 16 on two cores."""
    EXPLORE_SECONDS = 1.0
    """The longest stretch of runs (by the way taken's last run time) between trials: a change of load (another
    program taking a core) is seen within about a second."""
    CLEAR = math.log(1.25)
    """The log ratio beyond which a trial's pair clearly confirms the way taken: lending at most 0.8 of the time
    alone, or running alone at most 0.8 of the time lending."""
    SAMPLES = 5
    ALONE_ABOVE = math.log(1.1)
    """The log ratio (lending time / time alone) above which a pair counts for running alone. A run with a helper is
    the faster way on an idle machine, and the harm lending guards against is large (2.5x under a load of 4 on 2
    cores); but in a benchmark alternating with another runtime the timed pairs of NNAPI's float MobileNet gave
    ratios of 0.82-1.27, mostly 0.85-0.99, so a median decided at 1.0 turned some processes to running alone, 1.25x
    slower there."""
    ALONE_BY = 4
    """How many of the last ``SAMPLES`` pairs must count for running alone. On this 2-core VM some lending runs get
    no help now and then (ratios of 0.83-2.05 among the usual 0.5-0.6, in 20 benchmark processes of MobileNet v2),
    and a median of five (three such) had turned two of 15 benchmark processes to running alone, 1.7x slower; four
    in five is some 12 times rarer, and two good trials of lending bring a graph back where three had been needed.
    Under a load of 4 on the 2 cores the pairs scatter (0.17-2.09): there the median and four in five measured alike
    (MobileNet v2 11.4-11.8 ms against 11.8-11.9), and where lending stayed slower pair after pair (1.34-1.36) five
    in five turned the graph alone."""
    IDLE = 0.002  # seconds: about gang.LINGER_CYCLES, how long helpers stay ready after a run
    WARM = 2

    SKIPPED = 2
    """Turns in a row whose second run the pause rule left untimed, after which it gives way (such runs are timed
    until a turn's second run comes without a pause again): in a benchmark alternating call by call with another
    runtime, runs came two back to back, the first after a pause, out of step with the turns of two runs, so no run
    was ever timed and the graph took turns alone and lending for good (NNAPI's uint8 MobileNet v1 at 3.3 ms, 2.3
    lending)."""

    __slots__ = ("_decision", "_ended", "_interval", "_last", "_next", "_ratios", "_runs", "_skipped", "_span",
                 "_timed")

    def __init__(self) -> None:
        self._runs = 0
        self._ratios: list[float] = []  # log(lending time / alone time) of the last SAMPLES pairs
        self._decision: bool | None = None  # fewer than ALONE_BY above ALONE_ABOVE, kept as they change (read twice
        # a run)
        self._timed: list[float | None] = [None, None]  # each way's last timed run not yet paired: [alone, lending]
        self._last: tuple[bool, float, bool, bool] | None = None  # the previous run: (way, time, timed, after a
        # pause); None: none, or it raised
        self._ended = -1e9  # when the previous run ended (time.perf_counter)
        self._skipped = 0  # turns in a row left untimed by the pause rule
        self._next: int | None = None  # the first run of the next turn of trial (set once the first turns end)
        self._interval = self.EXPLORE  # runs from that trial to the one after it
        self._span = 0.0  # the last run's time of the way taken

    def _lend(self, run: int) -> bool:
        """Whether run number ``run`` (from 1) lends."""
        if len(self._ratios) < self.SAMPLES:
            return (run - 1) // 2 % 2 == 0  # lending twice, alone twice, ...
        if self._next is None:  # the first trial: the first multiple of EXPLORE from here
            self._next = -(-run // self.EXPLORE) * self.EXPLORE
        return self.lends != (self._next <= run <= self._next + 1)

    def _after_trial(self, ratio: float | None) -> None:
        """Schedule the next trial once a turn of trial has run, ``ratio`` the pair its last run timed (None: none):
        farther off when that clearly confirmed the way taken (``EXPLORE_MOST``), at ``EXPLORE`` runs otherwise."""
        clear = ratio is not None and (ratio < -self.CLEAR if self.lends else ratio > self.CLEAR)
        most = min(self.EXPLORE_MOST, int(self.EXPLORE_SECONDS / max(self._span, 1e-6)))
        self._interval = max(self.EXPLORE, min(2 * self._interval, most)) if clear else self.EXPLORE
        self._next += self._interval

    def run(self, process: Callable[[], int]) -> int:
        """``process()`` (a graph's run), lending or not; its status."""
        self._runs += 1
        lend = self._lend(self._runs)
        last, self._last = self._last, None  # a run that raises is not timed, nor the next
        start = time.perf_counter()
        paused = start - self._ended > self.IDLE
        warmed = not lend and self._trial_within(self.WARM)
        same_way = last is not None and last[0] == lend and not warmed
        steady = same_way and (last[3] or not paused)
        if same_way:  # a turn's second run after a pause counts; one without resets (the pause rule holds again)
            self._skipped = 0 if steady else self._skipped + 1
        second = steady or (same_way and self._skipped > self.SKIPPED)
        if lend:
            summon_helpers()  # C cannot start them: they spin in the gang while the native run lasts
            with gang.held():
                status = process()
        elif warmed:  # alone, the helpers spinning beside the run (not in it), ready for the trial of lending
            summon_helpers()
            with gang.closed(), gang.held():
                status = process()
        else:
            with gang.closed():  # truly alone: a helper still spinning from the last run must not join
                status = process()
        self._ended = time.perf_counter()
        elapsed = self._ended - start
        self._last = (lend, elapsed, second, paused)
        paired = None
        if lend == self._decision:
            self._span = elapsed
        if second:
            if last[2]:
                elapsed = min(elapsed, last[1])  # the way taken run after run: one stalled run does not count
            other = self._timed[not lend]
            if other is not None:
                lending, alone = (elapsed, other) if lend else (other, elapsed)
                paired = math.log(max(lending, 1e-9) / max(alone, 1e-9))
                self._ratios.append(paired)
                del self._ratios[:-self.SAMPLES]
                self._decision = sum(r > self.ALONE_ABOVE for r in self._ratios) < self.ALONE_BY
                self._timed[not lend] = None  # each timed run is paired once
            self._timed[lend] = elapsed
        if self._next is not None and self._runs >= self._next + 1:
            self._after_trial(paired)
        if not lend and (self._lend(self._runs + 1) or self._trial_within(self.WARM + 1)):
            summon_helpers()  # a run lends soon: helpers awake for it, as for a run after a lending one
            gang.linger()
        return status

    def _trial_within(self, runs: int) -> bool:
        """Whether the graph is decided for running alone (past the first turns) and one of the next ``runs`` runs
        tries lending."""
        if self._decision is not False or len(self._ratios) < self.SAMPLES:
            return False
        return any(self._lend(self._runs + k) for k in range(1, runs + 1))

    @classmethod
    def of(cls, plan: Any) -> Lending | None:
        """A new ``Lending`` for a graph's compiled ``plan`` when its native run has layers to lend, else None."""
        return cls() if plan.native is not None and lend_helpers(plan.calls) else None

    @property
    def lends(self) -> bool | None:
        """Whether runs lend now (None until a pair of runs is timed)."""
        return self._decision


NNAPI_KERNELS: dict[str, NNAPIKernel] = {}


def nnapi_kernel(k: NNAPIKernel) -> NNAPIKernel:
    """Register ``k`` as an OpenVX kernel (``org.openvx_nn.nnapi.<op>``) and remember it for the lowering."""
    register(KernelDescription(k.name, k.enum, LIB_NNAPI, k.params(), _validator(k), _executor(k),
                               doc=(k.run.__doc__ or "").strip(), bind=_binder(k), native=_native(k),
                               takes_gate=k.takes_gate, takes_activation=k.takes_activation,
                               activation_epilogue=k.activation_epilogue, residual_sum=k.residual_sum,
                               channel_step=k.channel_step, takes_borders=k.takes_borders))
    NNAPI_KERNELS[k.op] = k
    return k
