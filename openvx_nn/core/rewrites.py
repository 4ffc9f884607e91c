"""The plan's rewrites at verify: depthwise layers written map by map run as one call (``map_groups``),
activations fused into the layer before them, the layout of virtual tensors, and residual sums fused into the
convolution before them (``epilogue_fusion``). The pass list is :func:`run`;
kernels only obey what it wrote into their nodes' state.

Layout. An OpenVX tensor ``[W, H, C, *batch]`` is planar (W fastest: one plane per map). The float engine reads
and writes channels-last (``[N, H, W, C]``, C fastest), so a layer on planar tensors copies its input in and its
result back. A virtual tensor no application can read, so its bytes may be in either order: tensors joined by
element-wise nodes (which compute the same on any order, as long as all their tensors share it) form a class,
and a class is channels-last when every member is a whole virtual root (float32, or an integer type below) of at
least three dims, with more than one map and more than one pixel (else both orders are the same bytes), and when
its accesses by nodes that take channels-last (the engine's layers) outnumber those by nodes that take planes only
(a conversion each).
A node that takes planes only and meets a channels-last tensor runs on a planar stand-in, with the conversion
bound beside it (:mod:`compiled`); a node that takes either order with the same bytes (``EITHER_ORDER``: the
float32 pooling layer) casts no vote and follows the layout its tensors get, converting itself only where its two
sides differ; a tensor an application can see (non-virtual, a graph parameter, a view) is never channels-last, so
its bytes and layout are the application's. The maps of a virtual root read or written through views by a
depthwise layer written map by map (``map_groups``) are one access of the whole root by the group's call.

The integer engine's tensors (U8, S8, Q7.8) are channels-last only in a class that no planes-only node touches:
the correlation engine's convolutions take either order (a channels-last input is packed by copying each pixel's
channel run, a channels-last output stored pixel-major as the micro-kernel's tiles come: no 8x8 transposes on
either side), element-wise nodes any order; where the integer pooling layer, fully connected layer or a depthwise
group meets the class, the class stays planar and the convolutions at that edge convert as they do on planes,
in 8x8 block transposes (a planar stand-in's conversion would be an element-wise strided copy; ResNet-18's
residual stream, which meets its two pooling layers, was not measured faster so on a loaded machine).

Fusion. An activation the float engine's epilogue computes as a clamp (``relu``, ``brelu``), reading a whole
virtual float32 tensor that only a convolution writes and nothing else reads, is done by the convolution: it
writes the activation's output through the clamp, and the activation's call does nothing. The same holds for an
integer activation whose table is a clip of the raw input (relu, or brelu, between equal formats) after an
integer convolution that saturates: the epilogue saturates to the clip's bounds instead of the type's (the
convolution says which layers take it: ``takes_epilogue``). The clamp is the
activation's own (a NaN stored as ``0x7FC00000``, as the activation layer stores it; ``-0.0`` cannot occur in the
engine's sums from ``+0.0``), so the bytes are those of the two nodes run apart. Whether the activation still is such a clamp is asked again at each binding (its
scalars may be written after verify); when it is not, both nodes run apart on the tensors verify gave them.

Residual sums. A convolution whose output only a tensor add reads (ResNet's ``conv -> add(skip) -> relu``) may
compute the add, and the clamp activation after it, in its epilogue (:mod:`epilogue_fusion`, after the layouts:
every tensor of the chain channels-last).

Activations after a convolution. A convolution with no fused activation may compute the PRELU, swish, hard swish
or other ``float_activation`` function that alone reads its output, and an add of a skip before it, in its
epilogue (:mod:`activation_epilogue`, last).

``$OPENVX_NN_REWRITES=0`` (read at each verify; :data:`ENABLED` in tests) turns them all off.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from . import activation_epilogue, channel_chains, epilogue_fusion, gated_products, map_groups
from .enums import Direction, Type
from .regions import Access, region

CHANNELS_LAST = "channels_last"
"""A tensor's bytes as ``[N, H, W, C]`` (C fastest) instead of OpenVX's planes."""
TAKES_CHANNELS_LAST = "takes_channels_last"
"""A parameter role (``KernelDescription.layouts``): the node reads or writes either order, its own is
channels-last (the float engine's layers)."""
GROUP_VIEW = "group_view"
"""A parameter role: a view that is part of the access of its depthwise group's first member (``map_groups``),
which takes channels-last; counted once, by that member."""
EITHER_ORDER = "either_order"
"""A parameter role: the node reads or writes either order natively with the same bytes (the float32 pooling
layer): it follows its neighbours (no vote), and converts itself only where its two sides differ."""
ANY_SAME = "any_same"
"""A parameter role: the node computes the same bytes in any order, the same order for all such parameters
(element-wise nodes without broadcasting)."""

LAYOUT = "layout"
"""``node.state`` key: {parameter index: CHANNELS_LAST} for the parameters whose tensors are channels-last."""
CONVERT = "convert"
"""``node.state`` key: the parameter indices of a planes-only node whose tensors are channels-last."""
EPILOGUE = "epilogue"
"""``node.state`` key on a convolution: the activation node fused into it."""
FUSED = "fused_into"
"""``node.state`` key on an activation: the node that computes it."""

ENABLED = os.environ.get("OPENVX_NN_REWRITES", "").strip() != "0"
"""Whether verify rewrites (module doc); off only to compare, e.g. in tests that the bytes are the same."""

_F32, _TENSOR = int(Type.VX_TYPE_FLOAT32), int(Type.VX_TYPE_TENSOR)
_INTEGER = frozenset(int(t) for t in (Type.VX_TYPE_UINT8, Type.VX_TYPE_INT8, Type.VX_TYPE_INT16))
"""The integer engine's tensor types (U8, S8, Q7.8): channels-last where no planes-only node meets them (module
doc), when :data:`INTEGER_CHANNELS_LAST`."""
INTEGER_CHANNELS_LAST = os.environ.get("OPENVX_NN_INTEGER_CHANNELS_LAST", "").strip() != "0"
"""On unless ``OPENVX_NN_INTEGER_CHANNELS_LAST=0`` (to compare): with the engine's pixel-major stores as whole-run
byte copies, ResNet-18 U8 from C is faster with it (one thread, CPU time; docs/benchmarks.md); the same bytes
either way (``tests/test_integer_layouts.py``)."""
_IN, _OUT = int(Direction.VX_INPUT), int(Direction.VX_OUTPUT)


@dataclass
class Report:
    """What the rewrites of one verify did: the channels-last tensors, the fused (convolution, activation)
    pairs, and how many layout conversions the plan does per run (the engine's layers on planar tensors, copying
    in or out, and the planes-only nodes on channels-last ones)."""

    channels_last: list = field(default_factory=list)
    fused: list = field(default_factory=list)
    conversions: int = 0
    merged: int = 0
    """Nodes whose map of a depthwise layer another node's call computes (``map_groups``)."""
    residual: list = field(default_factory=list)
    """(convolution, add, activation or None) chains a convolution's epilogue computes (``epilogue_fusion``)."""
    activations: list = field(default_factory=list)
    """(convolution, add or None, activation) chains whose activation a convolution's epilogue computes after the
    clamp (``activation_epilogue``)."""
    channel_chains: list = field(default_factory=list)
    """Lists of element-wise nodes by one value per channel, run as one pass by the first (``channel_chains``)."""
    bordered: list = field(default_factory=list)
    """(tensor, border) of the virtual tensors held inside zero-bordered buffers (``bordered_tensors``)."""


def enabled() -> bool:
    return ENABLED and os.environ.get("OPENVX_NN_REWRITES", "").strip() != "0"


def _is_tensor(p) -> bool:
    return p is not None and getattr(p, "vx_type", None) == _TENSOR


def _accesses(order: list) -> dict[int, list]:
    """Every tensor parameter of ``order``'s nodes by ``id`` of its root: (node, index, tensor)."""
    found: dict[int, list] = {}
    get = found.get
    for node in order:
        for i, p in enumerate(node.params):
            if p is not None and getattr(p, "vx_type", None) == _TENSOR:  # _is_tensor, inline: once per parameter
                root = p.root
                entry = get(id(root))
                if entry is None:
                    found[id(root)] = [(node, i, p)]
                else:
                    entry.append((node, i, p))
    return found


clamp_of = epilogue_fusion.clamp_of


def epilogue(state: dict) -> tuple[object, float, float] | None:
    """(output tensor, low, high) of the activation fused into a convolution with ``state``, while it is fused
    (:func:`clamp_of` is asked again: its scalars may have been written; a depthwise layer written map by map
    takes it only while its first member's call computes every map), else None."""
    if epilogue_fusion.CHAIN in state:  # a residual sum fused too
        return epilogue_fusion.epilogue(state)
    activation = state.get(EPILOGUE)
    if activation is None or (map_groups.GROUP in state and not state.get(map_groups.BOUND)):
        return None
    clamp = clamp_of(activation)
    return None if clamp is None else (activation.params[_output_index(activation)], *clamp)


def fused(node) -> bool:
    """Whether ``node``'s work is done by another node's call (:func:`epilogue`)."""
    if epilogue_fusion.MEMBER in node.state:
        return epilogue_fusion.fused(node)
    producer = node.state.get(FUSED)
    return producer is not None and epilogue(producer.state) is not None


def _output_index(node) -> int:
    return next(i for i, s in enumerate(node.description.params) if s.direction == _OUT)


def _roles(node) -> dict[int, str]:
    hook = node.description.layouts
    return {} if hook is None else hook(node.params, node.state)


def _producer(root, touching: list, reader) -> tuple | None:
    """(the node whose call writes all of ``root``, the index it writes it at, ids of the roots it reads) when
    ``reader`` alone reads ``root``: one node writing it whole, or a depthwise layer written map by map that
    ``map_groups`` runs as its first member's call; else None."""
    writers = [(n, i, p) for n, i, p in touching if n.description.params[i].direction == _OUT]
    readers = [n for n, i, _ in touching if n.description.params[i].direction == _IN]
    if readers != [reader] or len(writers) + 1 != len(touching) or not writers:
        return None
    if len(writers) == 1 and writers[0][2] is root:
        n, k, _ = writers[0]
        return n, k, {id(p.root) for p in n.params if _is_tensor(p) and p is not root}
    first = writers[0][0]
    leader = first.state.get(map_groups.LEADER, first)
    members = leader.state.get(map_groups.GROUP)
    if members is None or sorted(id(n) for n, _, _ in writers) != sorted(id(m) for m in members):
        return None
    k = writers[0][1]
    reads = {id(p.root) for m in members for i, p in enumerate(m.params) if _is_tensor(p) and i != k}
    return leader, k, reads


def _fuse(order: list, accesses: dict[int, list], shown: set[int], positions: dict, uses: dict,
          report: Report) -> None:
    """Each clamp activation onto the convolution that alone writes its input (module doc)."""
    for node in order:  # the cheap tests first: most activations have no producer taking an epilogue
        if node.description.epilogue is None:
            continue
        t = node.params[0]
        root = t.root
        if t is not root or not root.virtual or id(root) in shown:
            continue
        touching = accesses.get(id(root), [])
        if all(n.description.takes_epilogue is None for n, _, _ in touching):  # the producer is one of them
            continue
        found = _producer(root, touching, node)
        if found is None:
            continue
        producer, k, inputs = found
        takes = producer.description.takes_epilogue
        if takes is None or takes(producer.params, producer.state) != k or producer.state.get(EPILOGUE):
            continue
        if clamp_of(node) is None:
            continue
        out = node.params[_output_index(node)]
        if out.data_type != root.data_type or tuple(out.dims) != tuple(root.dims) or id(out.root) in inputs:
            continue
        producer.state[EPILOGUE] = node
        node.state[FUSED] = producer
        out_root, box = region(out)
        entry = uses.get(id(out_root))
        if entry is not None:  # the producer writes the output now: its lifetime in the arena starts there
            entry.writes.append(Access(positions[producer], k, out, box))
        report.fused.append((producer, node))


def _find(parent: dict[int, int], a: int) -> int:
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def _whole(node, i: int, p, root, roles: dict) -> bool:
    """Whether ``node`` accesses ``root`` whole at parameter ``i``: as itself, or through the view of a depthwise
    group that takes channels-last (the group's call accesses the whole root)."""
    if p is root:
        return True
    role = roles[id(node)].get(i)
    if role == GROUP_VIEW or role != TAKES_CHANNELS_LAST or not map_groups.leads(node):
        return role == GROUP_VIEW
    return all(roles[id(m)].get(i) == GROUP_VIEW for m in node.state[map_groups.GROUP] if m is not node)


def _eligible(root, touching: list, shown: set[int], roles: dict) -> bool:
    """Whether ``root`` may be channels-last: whole, virtual, no graph parameter, float32 or an integer type, the
    orders differ, and every node reads or writes it (none both) whole (:func:`_whole`)."""
    if not (root.virtual and root.parent is None and id(root) not in shown
            and (root.data_type == _F32 or (INTEGER_CHANNELS_LAST and root.data_type in _INTEGER))
            and _differs(root)):
        return False
    for n, i, p in touching:  # one loop for both tests: verify runs this once per tensor
        if (p is not root and not _whole(n, i, p, root, roles)) or n.description.params[i].direction not in (_IN, _OUT):
            return False
    return True


def _layouts(order: list, accesses: dict[int, list], shown: set[int], report: Report) -> None:
    """Choose each class's layout (module doc) and tell the nodes."""
    declared = {id(node): _roles(node) for node in order}
    if not any(role == TAKES_CHANNELS_LAST or role == EITHER_ORDER for found in declared.values()
               for role in found.values()):
        return  # no class can be chosen nor any layer convert: every tensor keeps OpenVX's order (a chain of
        # element-wise nodes), and the passes below would only find that out tensor by tensor
    roots = {key: touching[0][2].root for key, touching in accesses.items()}
    eligible = {key for key, touching in accesses.items() if _eligible(roots[key], touching, shown, declared)}
    for node in order:  # a fused pair's producer writes the activation's output in its input's layout
        producer = node.state.get(FUSED)
        if producer is not None:
            pair = {id(node.params[0].root), id(node.params[_output_index(node)].root)}
            k = producer.description.takes_epilogue(producer.params, producer.state)
            if not pair <= eligible or _roles(producer).get(k) != TAKES_CHANNELS_LAST:  # or in planes only
                eligible -= pair
    roles = {}
    parent = {key: key for key in eligible}
    for node in order:
        found = declared[id(node)]
        params = node.params
        same = [id(params[i].root) for i, role in found.items() if role == ANY_SAME and _is_tensor(params[i])]
        if not eligible.issuperset(same):  # meets a tensor that keeps OpenVX's order: planes only
            found = {i: role for i, role in found.items() if role != ANY_SAME}
            same = []
        roles[id(node)] = found
        for other in same[1:]:
            a, b = _find(parent, same[0]), _find(parent, other)
            if a != b:
                parent[b] = a
    classes: dict[int, list[int]] = {}
    for key in eligible:
        classes.setdefault(_find(parent, key), []).append(key)
    chosen: set[int] = set()
    for members in classes.values():
        takes = planes = 0
        for key in members:
            for n, i, _ in accesses[key]:
                role = roles[id(n)].get(i)
                takes += role == TAKES_CHANNELS_LAST
                planes += role is None
        integer = any(roots[key].data_type != _F32 for key in members)  # no planar stand-ins: none may convert
        if takes > planes and not (integer and planes):
            chosen.update(members)
    sides: dict[int, list[bool]] = {}  # a group's first member: which of its sides are channels-last
    either: dict[int, list[bool]] = {}  # a node taking either order: which of its differing sides are
    for key, touching in accesses.items():
        last = key in chosen
        if last:
            report.channels_last.append(roots[key])
        differs = _differs(roots[key])
        for n, i, p in touching:
            role = roles[id(n)].get(i)
            if not last and role != TAKES_CHANNELS_LAST and role != EITHER_ORDER:
                continue  # nothing below applies (most accesses of an element-wise chain)
            if p is not roots[key] and role == TAKES_CHANNELS_LAST and map_groups.leads(n):
                sides.setdefault(id(n), []).append(last)
            if role == EITHER_ORDER and differs:
                either.setdefault(id(n), []).append(last)
            if last and role is None:
                n.state.setdefault(CONVERT, []).append(i)
                report.conversions += 1
            elif last:
                n.state.setdefault(LAYOUT, {})[i] = CHANNELS_LAST
            elif role == TAKES_CHANNELS_LAST and differs and not map_groups.leads(n):
                report.conversions += 1
    # a group reads and writes planes on the plane kernel, channels-last on the NHWC one; one side of each
    # converts (float_layers.Convolution.bind_maps)
    report.conversions += sum(any(found) and not all(found) for found in sides.values())
    report.conversions += sum(any(found) and not all(found) for found in either.values())


def _differs(root) -> bool:
    """Whether the two orders differ for this tensor: at least three dims, more than one map and pixel."""
    dims = tuple(root.dims)
    return len(dims) >= 3 and dims[2] > 1 and dims[0] * dims[1] > 1


def run(order: list, nodes: list, uses: dict, parameters: Iterable[tuple[object, int]]) -> Report:
    """The rewrites of a verified graph, in order: depthwise layers written map by map run as one call
    (``map_groups``), fusion, layouts, then residual sums in the convolution's epilogue (``epilogue_fusion``). ``order`` is the execution order of
    ``nodes``, ``uses`` the verifier's accesses by root (a fused convolution's new write is added there, so the
    memory plan sees it), ``parameters`` the graph parameters (their tensors stay as the application sees them)."""
    report = Report()
    if not enabled():  # nothing rewritten: every engine layer on a tensor whose orders differ copies
        report.conversions = sum(role == TAKES_CHANNELS_LAST and _differs(node.params[i].root)
                                 for node in order for i, role in _roles(node).items())
        return report
    shown = {id(region(node.params[i])[0]) for node, i in parameters if node.params[i] is not None}
    accesses = _accesses(order)
    positions = {node: k for k, node in enumerate(nodes)}
    map_groups.merge(order, nodes, uses, report)
    _fuse(order, accesses, shown, positions, uses, report)
    _layouts(order, accesses, shown, report)
    epilogue_fusion.run(order, nodes, uses, shown, accesses, _laid_out_last, report)
    gated_products.fuse(order, accesses, shown, positions, uses, report)
    activation_epilogue.fuse(order, nodes, uses, shown, accesses, report)
    channel_chains.fuse(order, nodes, uses, shown, accesses, activation_epilogue.CLAIMS, report)
    return report


def _laid_out_last(node, indices) -> bool:
    """Whether the layouts gave these parameters of ``node`` channels-last (on the node's own call)."""
    layout = node.state.get(LAYOUT, {})
    return not node.state.get(CONVERT) and all(layout.get(i) == CHANNELS_LAST for i in indices)


class PlanarStandIn:
    """Planar float32 storage standing in for a channels-last tensor in a node that takes planes only: the node
    binds to it as to a tensor, and the conversion bound beside the node fills it or empties it."""

    vx_type = _TENSOR
    virtual = False
    parent = None
    alive = True

    def __init__(self, tensor):
        self.tensor = tensor
        self.dims, self.data_type, self.fpp = tensor.dims, tensor.data_type, tensor.fpp
        self.array = np.zeros(tuple(tensor.dims), np.float32, order="F")

    @property
    def root(self):
        return self

    def describe(self) -> str:
        return f"planar copy of {self.tensor.describe()}"


def converted(node, bind_call):
    """``node``'s call bound on planar stand-ins for its channels-last tensors (``state[CONVERT]``), with the
    conversions around it: ``bind_call(params) -> (runner, native entry or None)`` binds the node; returns
    the same pair for the whole."""
    from ..kernels.frontend import chw_layout
    from ..kernels.openvx.float_layers import pixels
    from ..kernels.support import native
    params = list(node.params)
    before, after = [], []  # (to channels-last, planar array, channels-last array)
    for i in node.state.get(CONVERT, ()):
        stand_in = PlanarStandIn(params[i])
        nhwc, planes = pixels(params[i].array), stand_in.array.T  # [N, H, W, C] and [*batch, C, H, W]
        planes = planes.reshape(nhwc.shape[0], *planes.shape[-3:])
        (after if node.description.params[i].direction == _OUT else before).append((planes, nhwc))
        params[i] = stand_in
    runner, entry = bind_call(params)
    ins = [chw_layout.bind(False, nhwc, planes) for planes, nhwc in before]
    outs = [chw_layout.bind(True, planes, nhwc) for planes, nhwc in after]

    def run() -> None:
        for call in ins:
            call()
        runner()
        for call in outs:
            call()
    if entry is None:
        return run, None
    parts = ([chw_layout.native_layout(False, nhwc, planes) for planes, nhwc in before] + [entry]
             + [chw_layout.native_layout(True, planes, nhwc) for planes, nhwc in after])
    if any(p is None for p in parts):
        return run, None
    whole = native.sequence(parts)
    # the parts' own keep at the top, where the plan looks for layers that lend work to helpers
    return run, native.Entry(whole.address, whole.block, whole.keep + tuple(k for p in parts for k in p.keep))


def nothing() -> None:
    """The call of a node whose work another node's call does."""


_NO_ENTRY: list = []


def no_entry():
    """A native entry that does nothing (a fused activation's step in a native plan)."""
    if not _NO_ENTRY:
        from ..kernels.support import native
        _NO_ENTRY.append(native.sequence([]))
    return _NO_ENTRY[0]
