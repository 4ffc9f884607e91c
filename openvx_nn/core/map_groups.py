"""A rewrite at verify: the one-map convolutions that write a depthwise layer, map by map, run as one call.

The NN extension has no groups: a depthwise layer of C maps is written as C convolutions of one input map each,
node c reading map c of a tensor X through a view and writing map c of a tensor Y through a view. Run one by
one, C nodes pay C calls and C bindings. When every map of X and Y is covered exactly once by such nodes of the
same geometry, the first of them in execution order computes every map in one call (the weights and biases of
the members gathered in map order; ``takes_maps`` of the kernel description), and the others do nothing. The
arithmetic of each map is unchanged (the kernel computes map c from input map c with map c's weights, in the
same order), so the bytes are those of the nodes run apart.

Kept apart where that could differ: some other node writes X after the first member or writes Y at all, or
reads Y before the last member runs.

A float32 group counts in the plan's layouts (``rewrites``) as one access of X and one of Y by its first member, a
node that takes channels-last (the members' views are part of it), when the NHWC depthwise kernel can take its
maps; then X and Y may be laid out channels-last like the tensors between the engine's other layers.
"""
from __future__ import annotations

from .regions import region

GROUP = "map_group"
"""``node.state`` key on the first member: the members in map order."""
LEADER = "map_leader"
"""``node.state`` key on the other members: the first member, whose call computes their maps."""
BOUND = "map_group_bound"
"""``node.state`` key on the first member: whether its last binding computes every map (else each runs alone)."""
ROUTE = "map_group_route"
"""``node.state`` key on the first member of a float32 group: the kernel its last binding took (:data:`PLANES` or
:data:`CHANNELS_LAST`)."""
PLANES, CHANNELS_LAST = "planes", "channels_last"


def _map_of(box, root) -> int | None:
    """The map a view covers whole but for one map of dim 2, or None."""
    if box is None or len(box) != len(root.dims) or len(box) < 3:
        return None
    for axis, ((low, high), extent) in enumerate(zip(box, root.dims)):
        if axis == 2:
            if high != low + 1:
                return None
        elif (low, high) != (0, extent):
            return None
    return box[2][0]


def merge(order: list, nodes: list, uses: dict, report) -> None:
    """Mark the groups (module doc) in the nodes' state; ``report.merged`` counts the nodes that do nothing."""
    step = {id(n): s for s, n in enumerate(order)}
    groups: dict[tuple, dict[int, object]] = {}
    for node in order:
        hook = node.description.takes_maps
        key = None if hook is None else hook(node.params, node.state)
        if key is None:
            continue
        x_root, x_box = region(node.params[0])
        y_root, y_box = region(node.params[-1])
        c = _map_of(x_box, x_root)
        if c is None or c != _map_of(y_box, y_root) or x_root is y_root:
            continue
        members = groups.setdefault((id(x_root), id(y_root), key), {})
        if c in members:
            members[-1] = None  # a map twice: no group
        members[c] = node
    for (x_id, y_id, _), members in groups.items():
        if -1 in members:
            continue
        ordered = [members[c] for c in sorted(members)]
        x_root, y_root = region(ordered[0].params[0])[0], region(ordered[0].params[-1])[0]
        if sorted(members) != list(range(x_root.dims[2])) or y_root.dims[2] != x_root.dims[2] or len(ordered) < 2:
            continue
        first = min(step[id(n)] for n in ordered)
        last = max(step[id(n)] for n in ordered)
        own = {id(n) for n in ordered}
        x_uses, y_uses = uses.get(x_id), uses.get(y_id)
        if x_uses is None or y_uses is None or x_uses.others or y_uses.others:
            continue
        if any(step[id(nodes[a.position])] > first for a in x_uses.writes):
            continue
        if any(id(nodes[a.position]) not in own for a in y_uses.writes):
            continue
        if any(step[id(nodes[a.position])] <= last for a in y_uses.reads):
            continue
        leader = min(ordered, key=lambda n: step[id(n)])
        leader.state[GROUP] = ordered
        for n in ordered:
            if n is not leader:
                n.state[LEADER] = leader
        report.merged += len(ordered) - 1


def leads(node) -> bool:
    return node.state.get(GROUP) is not None


def merged(node) -> bool:
    """Whether ``node``'s map is computed by its group's first member (as that member's last binding found)."""
    leader = node.state.get(LEADER)
    return leader is not None and bool(leader.state.get(BOUND))


def bind_group(node, bind_single):
    """The first member's call: every map, or (when the kernel cannot take the group on these arrays) its own
    map alone, by ``bind_single()``; ``(runner, native entry)``. Records which in ``state[BOUND]``."""
    members = node.state[GROUP]
    node.state[BOUND] = True  # while binding the group (an activation fused into it is the group's)
    found = node.description.bind_maps([m.params for m in members], node.state)
    if found is None:
        node.state[BOUND] = False
        return bind_single()
    return found

