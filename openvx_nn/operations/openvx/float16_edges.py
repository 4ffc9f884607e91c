"""``VX_TYPE_FLOAT16`` layers and tensor operations as float32 ones with converting edges.

A float16 node owns no arithmetic: at verify it stands a float32 *shadow* in for each of its float16 tensors and
verifies the float32 kernel's description on them (same checks, same messages, the same route: the float engine
for convolution and fully connected, ``chw_pooling`` for pooling...). The shadows are scratch arrays allocated
once; a [static] input (weights, biases) is widened into its shadow at verify and again only after the
application writes it (its write counter, as ``PlannedWeights`` does for float32 weights). A run widens the other
float16 inputs (exact), runs the float32 kernel, and narrows each output once to binary16, rounded to nearest
with ties to even (``kernels/openvx/float16``). The native entry is that sequence of native calls.

A layer that moves little arithmetic per value (pooling, the activations) may name a *direct* route: its float32
kernel run on the float16 tensors themselves, widening and narrowing in its own pass
(``kernels/openvx/float16_layers``: the same bits as the edges). A run takes it wherever it applies (it answers
None elsewhere: strided tensors, overlapping ones) and the edges otherwise. A layer whose float32 route copies its
planar input into channels-last and its output back (convolution, deconvolution on the float engine) may name
*copies* instead: a test of where those copies take the float16 tensors themselves (``chw_layout`` widens
binary16 into its channels-last copy, ``chw_layout`` and ``phase_scatter`` narrow as they place the output), and
there the float32 layer runs on the node's float16 input and output, its [static] inputs from their shadows: no
whole-tensor conversion pass, the same bits.

Formats. The standard gives every tensor of a layer (weights, biases, output) the inputs' data type, and the
element-wise operations share one type too: a node with a float16 tensor takes float16 throughout (ROI pooling's
integer ROIs aside); a float16 beside another type is refused at verify with ``VX_ERROR_INVALID_TYPE``.
ConvertDepth converts between types, so either of its sides may be float16 on its own.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ...core.enums import Direction, Status, Type, type_name
from ...core.errors import VXError
from ...core.signature import KernelDescription
from ...core.validation import Validation

F16, F32 = Type.VX_TYPE_FLOAT16, Type.VX_TYPE_FLOAT32
TENSOR = Type.VX_TYPE_TENSOR


class Shadow:
    """A float32 stand-in for one float16 tensor parameter: the meta-data and storage float32 kernels read."""

    __slots__ = ("array", "data_type", "declared", "dims", "fpp", "virtual", "writes")

    def __init__(self, dims: tuple[int, ...], virtual: bool = False, declared: tuple | None = None):
        self.dims, self.data_type, self.fpp = tuple(dims), F32, 0
        self.virtual, self.declared, self.writes = virtual, declared, 0
        self.array = _storage(self.dims) if not virtual else None

    @property
    def root(self) -> Shadow:
        return self

    def allocate(self, dims, data_type: int, fpp: int, store: bool = False) -> None:
        """What the float32 validator declares of an output (checked against the real output afterwards)."""
        self.dims, self.data_type, self.fpp = tuple(int(d) for d in dims), int(data_type), int(fpp)


def _storage(dims: tuple[int, ...]) -> np.ndarray:
    return np.zeros(dims, np.float32, order="F")  # a tensor's own packed layout (dim 0 fastest)


class _ShadowNode:
    """The node as the float32 validator sees it: the shadows in place of the float16 tensors."""

    def __init__(self, node, params: list):
        self.node, self.params, self.description = node, params, node.description
        self.context, self.graph = node.context, node.graph

    def describe(self) -> str:
        return self.node.describe()


@dataclasses.dataclass
class Edges:
    """A float16 node's shadows and the float32 kernel's state."""

    params: list                      # the float32 kernel's parameters: shadows where the node has float16
    state: dict                       # the float32 validator's state
    inputs: tuple[int, ...]           # float16 inputs widened on every run
    statics: dict[int, int]           # [static] float16 inputs: index -> the write count they were widened at
    outputs: tuple[int, ...]          # float16 outputs, narrowed after every run
    direct: Direct | None = None      # the layer's own float16 route, if it has one

    def mixed(self, p) -> list:
        """The node's parameters with the [static] float16 inputs' shadows in their place (a direct route's)."""
        return [self.params[i] if i in self.statics else q for i, q in enumerate(p)]

    def refresh(self, p) -> None:
        """Widen again the [static] inputs the application wrote since (their shadows count a write)."""
        from ...kernels.openvx import float16
        for i, stamp in self.statics.items():
            writes = p[i].root.writes
            if writes != stamp:
                float16.convert(p[i].array, self.params[i].array, widen=True)
                self.statics[i] = writes
                self.params[i].writes += 1


@dataclasses.dataclass(frozen=True)
class Direct:
    """A layer's float16 route: ``bind(p, state)`` a runner and ``native(p, state)`` a native entry on the node's
    own (float16) parameters and the float32 validator's state, each None where the route does not apply."""

    bind: Callable
    native: Callable


def _data_type(v: Validation, index: int) -> int:
    """An input's data type (a virtual one's as its writer inferred it); an output's as declared (0: unknown)."""
    ref = v.node.params[index]
    if ref.virtual and v.description.params[index].direction != Direction.VX_INPUT:
        return ref.declared[1]  # v.declared(index).data_type, without making the Meta: verify asks per node
    return ref.data_type


def accepting_float16(description: KernelDescription, candidates: tuple[int, ...] | None = None,
                      together: bool = True, direct: Direct | None = None,
                      copies: Callable | None = None) -> KernelDescription:
    """``description`` taking float16 tensors at ``candidates`` (default: every tensor parameter) through float32
    shadows. ``together``: a float16 among them makes them all float16 (else each may be float16 alone).
    ``direct``: the layer's own float16 route, taken where it applies; ``copies(p, state)``: whether the float32
    layer's layout copies take these float16 tensors themselves (module doc)."""
    specs = description.params
    if candidates is None:
        candidates = tuple(i for i, s in enumerate(specs) if s.vx_type == TENSOR)
    original = description
    if copies is not None:
        direct = Direct(bind=lambda p, state: original.bind(p, state) if copies(p, state) else None,
                        native=lambda p, state: original.native(p, state) if copies(p, state) else None)

    def validate(v: Validation) -> None:
        node = v.node
        params = node.params
        present = [i for i in candidates if params[i] is not None]
        halves = [i for i in present if _data_type(v, i) == F16]
        if not halves:
            original.validate(v)
            return
        if together:
            _all_half(v, present, halves[0])
        shadows, statics, inputs, outputs = list(node.params), {}, [], []
        for i in present:
            spec, ref = specs[i], node.params[i]
            if spec.direction == Direction.VX_INPUT:
                if _data_type(v, i) != F16:
                    continue
                shadows[i] = Shadow(v.tensor(i).dims)
                if spec.static:
                    from ...kernels.openvx import float16
                    float16.convert(ref.array, shadows[i].array, widen=True)
                    statics[i] = ref.root.writes
                else:
                    inputs.append(i)
            elif _data_type(v, i) == F16 or (together and ref.virtual and not _data_type(v, i)):
                declared = v.declared(i)
                shadows[i] = Shadow((), virtual=True, declared=(declared.dims, F32, 0))
                outputs.append(i)
        inner = Validation(_ShadowNode(node, shadows))
        try:
            original.validate(inner)
        except VXError as err:
            raise VXError(err.status, err.message, node) from None
        for i in outputs:
            shadow = shadows[i]
            v.output(i, shadow.dims, F16, 0)
            shadow.array = _storage(shadow.dims)
        if "packed" in inner.state:
            v.state["packed"] = inner.state["packed"]
        v.state["half"] = Edges(shadows, inner.state, tuple(inputs), statics, tuple(outputs), direct)

    def execute(p, state) -> None:
        edges = state.get("half")
        if edges is None:
            original.execute(p, state)
            return
        from ...kernels.openvx import float16
        edges.refresh(p)
        run = edges.direct.bind(edges.mixed(p), edges.state) if edges.direct is not None else None
        if run is not None:
            run()
            return
        for i in edges.inputs:
            float16.convert(p[i].array, edges.params[i].array, widen=True)
        original.execute(edges.params, edges.state)
        for i in edges.outputs:
            float16.convert(edges.params[i].array, p[i].array, widen=False)

    def bind(p, state) -> Callable[[], None] | None:
        edges = state.get("half")
        if edges is None:
            return original.bind(p, state) if original.bind is not None else None
        from ...kernels.openvx import float16
        edges.refresh(p)
        own = edges.direct.bind(edges.mixed(p), edges.state) if edges.direct is not None else None
        if own is not None and edges.statics:
            def fresh() -> None:
                edges.refresh(p)  # the shadows' write counts tell the float32 layer to plan its weights again
                own()
            return fresh
        if own is not None:
            return own
        runner = original.bind(edges.params, edges.state) if original.bind is not None else None
        if runner is None:
            def runner() -> None:
                original.execute(edges.params, edges.state)
        calls = ([float16.bind(p[i].array, edges.params[i].array, True) for i in edges.inputs] + [runner]
                 + [float16.bind(edges.params[i].array, p[i].array, False) for i in edges.outputs])

        def run() -> None:
            edges.refresh(p)  # a Python run may follow a write the binding has not seen
            for call in calls:
                call()
        return run

    def native_hook(p, state):
        edges = state.get("half")
        if edges is None:
            return original.native(p, state) if original.native is not None else None
        if original.native is None:
            return None
        from ...kernels.openvx import float16
        from ...kernels.support import native
        edges.refresh(p)
        own = edges.direct.native(edges.mixed(p), edges.state) if edges.direct is not None else None
        if own is not None:
            return own
        middle = original.native(edges.params, edges.state)
        if middle is None:
            return None
        parts = ([float16.native_entry(p[i].array, edges.params[i].array, True) for i in edges.inputs] + [middle]
                 + [float16.native_entry(edges.params[i].array, p[i].array, False) for i in edges.outputs])
        parts = [e for e in parts if e is not None]
        whole = native.sequence(parts)
        if len(parts) == 1:
            return whole
        # the parts' own keep (gang tasks among it) at the top, where the plan looks for layers that lend work
        return native.Entry(whole.address, whole.block, whole.keep + tuple(k for e in parts for k in e.keep))

    return dataclasses.replace(description, validate=validate, execute=execute, bind=bind, native=native_hook)


def _all_half(v: Validation, present: list[int], first: int) -> None:
    """Refuse a float16 tensor beside a tensor of another data type (virtual outputs of unknown type inherit)."""
    for i in present:
        data_type = _data_type(v, i)
        if data_type == F16 or (not data_type and v.ref(i).virtual):
            continue
        name = v.description.params[first].name
        v.fail(i, Status.VX_ERROR_INVALID_TYPE,
               f"data type {type_name(data_type)} does not match the VX_TYPE_FLOAT16 of parameter {first} ({name}): "
               f"the standard takes every tensor of this kernel in one data type (convert with "
               f"vxTensorConvertDepthNode)")
