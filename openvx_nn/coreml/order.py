"""Layer order from blob names: every input must be a model input or some layer's
output, and the layers must form no cycle. Layers keep the file's order where
it already respects the dependencies."""
from __future__ import annotations

from collections.abc import Sequence

from .errors import CoreMLError


def layer_order(layers: Sequence, inputs: Sequence[str]) -> list:
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
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(layers):
        ready = [i for i in range(len(layers)) if i not in done and deps[i] <= done]
        if not ready:
            stuck = [layers[i] for i in range(len(layers)) if i not in done]
            names = ", ".join(f"'{layer.name}'" for layer in stuck)
            first = stuck[0]
            raise CoreMLError(f"the layers {names} depend on each other in a cycle", first.name,
                              first.WhichOneof("layer"))
        order.append(ready[0])
        done.add(ready[0])
    return [layers[i] for i in order]
