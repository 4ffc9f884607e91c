"""``load``: a ``.mlmodel`` file as the model that runs it (a neural network, or a pipeline of them)."""
from __future__ import annotations

from .model import CoreMLModel, _parse
from .pipeline import PIPELINES, PipelineModel


def load(source, nhwc: bool = True) -> CoreMLModel | PipelineModel:
    """Import a ``.mlmodel`` file (path) or an already parsed ``Model_pb2.Model`` (``nhwc``: see ``CoreMLModel``):
    a ``CoreMLModel``, or a ``PipelineModel`` for a pipeline of neural networks."""
    spec = _parse(source)
    if spec.WhichOneof("Type") in PIPELINES:
        return PipelineModel(spec, nhwc=nhwc)
    return CoreMLModel(spec, nhwc=nhwc)
