"""Layer order from blob names: every input must be a model input or some layer's
output, and the layers must form no cycle. Layers keep the file's order where
it already respects the dependencies."""
from __future__ import annotations

import heapq
from collections.abc import Sequence

from .errors import CoreMLError


def layer_order(layers: Sequence, inputs: Sequence[str]) -> list:
    inputs = set(inputs)
    producers: dict[str, list[int]] = {}
    for index, layer in enumerate(layers):
        for name in layer.output:
            producers.setdefault(name, []).append(index)
    deps: list[set[int]] = []
    for index, layer in enumerate(layers):
        needs = set()
        for name in layer.input:
            if name in producers:
                earlier = [p for p in producers[name] if p < index]
                needs.add(earlier[-1] if earlier else producers[name][0])
            elif name not in inputs:
                raise CoreMLError(f"input '{name}' is produced by no layer and is no model input",
                                  layer.name, layer.WhichOneof("layer"))
        deps.append(needs)
    # Kahn's algorithm with the smallest ready index first: the file's order wherever it is valid, and
    # linear in the layers and their inputs (a converted model has thousands of layers).
    users: list[list[int]] = [[] for _ in layers]
    waiting = [len(needs) for needs in deps]
    for index, needs in enumerate(deps):
        for need in needs:
            users[need].append(index)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for user in users[index]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    if len(order) < len(layers):
        placed = set(order)
        stuck = [layers[i] for i in range(len(layers)) if i not in placed]
        names = ", ".join(f"'{layer.name}'" for layer in stuck)
        first = stuck[0]
        raise CoreMLError(f"the layers {names} depend on each other in a cycle", first.name,
                          first.WhichOneof("layer"))
    return [layers[i] for i in order]
