"""NNEF models (Khronos's Neural Network Exchange Format) on OpenVX graphs.

``load(folder)`` reads ``graph.nnef`` and its ``.dat`` files with Khronos's parser (the ``nnef`` extra, used for
parsing and shape inference only) and lowers every operation onto nodes of one verified graph; NNEF's tensors
(first axis slowest) are our tensors with the dims reversed, as CoreML's are. ``predict({name: array})`` runs
it. The C entry ``vxImportKernelFromURL(context, "nnef", folder)`` gives the same graph as a kernel
(``import_kernel``); ``docs/nnef.md`` says how to convert ONNX and TensorFlow Lite models.
"""
from .batched import build_batched, run_options
from .errors import NNEFError
from .model import NNEFModel, OperationInfo, TensorInfo, load

__all__ = ["NNEFError", "NNEFModel", "OperationInfo", "TensorInfo", "build_batched", "load", "run_options"]
