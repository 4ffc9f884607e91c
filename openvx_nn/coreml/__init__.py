"""CoreML NeuralNetwork models (``.mlmodel``) on OpenVX graphs.

``load(path)`` parses the protobuf with coremltools (the ``coreml`` extra, used
for parsing only) and lowers every layer onto nodes of one verified graph: the
NN extension's layers and the tensor operations where CoreML's arithmetic is
theirs, the ``org.openvx_nn.coreml.*`` kernels for the rest. ``build_batched`` gives the
same graph for a batch of items to ``openvx-nn run`` and ``map_batches``.
``register_custom_layer`` gives custom layers of a class their arithmetic (``custom.py``). ``SAMPLE_MODEL`` is a small classifier shipped with the package (the demo's digits CNN, made by
``tools/make_coreml_sample.py``): input ``image`` [1, 8, 8], outputs ``classLabel`` and ``probs``.
"""
from pathlib import Path

from .batched import build_batched, run_options
from .custom import register_custom_layer, unregister_custom_layer
from .errors import CoreMLError
from .loading import load
from .model import CoreMLModel, LayerInfo
from .pipeline import PipelineModel

SAMPLE_MODEL = Path(__file__).resolve().parent / "samples" / "digits.mlmodel"

__all__ = ["SAMPLE_MODEL", "CoreMLError", "CoreMLModel", "LayerInfo", "PipelineModel", "build_batched", "load", "register_custom_layer",
           "run_options", "unregister_custom_layer"]
