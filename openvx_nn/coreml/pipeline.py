"""Pipeline models (``pipeline``, ``pipelineClassifier``, ``pipelineRegressor``): their models run in order, each
reading its inputs by name from the pipeline's inputs and the outputs of the models before it; the pipeline gives
the features its description names. Each model is a neural network (plain, classifier or regressor: its own
graphs, ``CoreMLModel``) or a pipeline; any other model type is refused at load, naming it. A classifier's label
and probabilities pass through as its ``predict`` gives them."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import CoreMLError
from .model import KINDS, CoreMLModel

PIPELINES = ("pipeline", "pipelineClassifier", "pipelineRegressor")


class PipelineModel:
    """A pipeline of neural networks; ``predict`` as ``CoreMLModel``'s, ``models`` the stages in order."""

    def __init__(self, spec, nhwc: bool = True):
        self.spec = spec
        self.kind = spec.WhichOneof("Type")
        if self.kind not in PIPELINES:
            raise CoreMLError(f"model type '{self.kind}' is not a pipeline (expected one of {', '.join(PIPELINES)})")
        stages = getattr(spec, self.kind)
        stages = stages if self.kind == "pipeline" else stages.pipeline
        self.inputs = {f.name: f for f in spec.description.input}
        self.outputs = {f.name: f for f in spec.description.output}
        self.models: list = []
        available = set(self.inputs)
        for i, sub in enumerate(stages.models):
            kind = sub.WhichOneof("Type")
            if kind in PIPELINES:
                model = PipelineModel(sub, nhwc)
            elif kind in KINDS:
                model = CoreMLModel(sub, nhwc=nhwc)
            else:
                self.close()
                raise CoreMLError(f"model {i} of the {self.kind} is of type '{kind}'; a pipeline runs neural "
                                  f"networks ({', '.join(KINDS)}) and pipelines of them")
            missing = [f.name for f in sub.description.input if f.name not in available]
            if missing:
                self.close()
                raise CoreMLError(f"model {i} of the {self.kind} reads '{missing[0]}', which neither the pipeline's "
                                  "inputs nor an earlier model give")
            available.update(f.name for f in sub.description.output)
            self.models.append(model)
        if not self.models:
            raise CoreMLError(f"the {self.kind} holds no model")
        missing = [name for name in self.outputs if name not in available]
        if missing:
            self.close()
            raise CoreMLError(f"the {self.kind}'s output '{missing[0]}' is given by none of its models")

    @property
    def layers(self) -> list:
        """Every stage's layers, in order."""
        return [info for model in self.models for info in model.layers]

    def predict(self, inputs: Mapping[str, Any], bench: bool = False) -> dict[str, Any]:
        unknown = set(inputs) - set(self.inputs)
        if unknown:
            raise CoreMLError(f"unknown input(s) {sorted(unknown)} (the model takes {sorted(self.inputs)})")
        values: dict[str, Any] = dict(inputs)
        for model in self.models:
            values.update(model.predict({name: values[name] for name in model.inputs if name in values}, bench))
        return {name: values[name] for name in self.outputs}

    def timings(self) -> list[tuple[str, str, float, float]]:
        """Every stage's node timings (``CoreMLModel.timings``), in order."""
        return [row for model in self.models for row in model.timings()]

    def reset_timings(self) -> None:
        for model in self.models:
            model.reset_timings()

    def close(self) -> None:
        for model in self.models:
            model.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
