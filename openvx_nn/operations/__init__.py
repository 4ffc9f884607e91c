"""Kernel descriptions (name, enum, signature, validator, executor) of every kernel the library provides,
one sub-package per family: ``openvx`` (the standard's kernels), ``nnapi`` and ``coreml`` (the front ends'
operations); ``geometry`` is the output-size arithmetic they share. Importing this package registers them."""
from . import nnapi  # noqa: F401, I001  (registration order: NNAPI, OpenVX, CoreML)
from . import openvx  # noqa: F401

# isort: split
from . import coreml  # noqa: F401
