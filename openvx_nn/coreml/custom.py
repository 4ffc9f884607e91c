"""Custom layers (``CustomLayerParams``): CoreML leaves their arithmetic to the application, which names a class
(``className``). Here the application provides it in one of two ways, looked up in this order when a graph is built:

- in Python, ``register_custom_layer(className, function, shapes=None)``: the layer becomes one node of a kernel
  description made for it, whose run calls ``function(inputs, parameters, weights)`` with the input blobs as
  float32 arrays in CoreML order, the layer's ``parameters`` map as a dict of Python values (double, string, int,
  long and bool become float, str, int, int and bool) and its ``weights`` as 1-D float32 arrays; it returns one
  array per output (or one array for a single output). ``shapes(input_shapes, parameters)`` gives the output
  shapes when the graph is built (default: every output has the first input's shape); a returned array of another
  shape, or the wrong number of them, fails the run naming the class;
- a kernel in the context's kernel table named ``className`` (``vxAddUserKernel`` from C, a kernel module loaded
  with ``vxLoadKernels``, ``Context.add_kernel``): its parameters are the layer's inputs then its outputs, FLOAT32
  tensors in OpenVX order (dims reversed), each output shaped as the first input; the parameters map and the
  weights are not passed.

A custom layer whose class is found neither way is refused with a ``CoreMLError`` naming the class."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Shapes = Callable[[list, dict], Sequence[Sequence[int]]]


@dataclass(frozen=True)
class CustomLayer:
    """A class registered from Python: its function and, optionally, how its output shapes follow its inputs'."""

    function: Callable
    shapes: Shapes | None = None


_LAYERS: dict[str, CustomLayer] = {}
_LOCK = threading.Lock()


def register_custom_layer(class_name: str, function: Callable, shapes: Shapes | None = None) -> None:
    """Run custom layers of ``class_name`` with ``function`` (the module docstring gives the contract); a second
    registration of a class replaces the first for graphs built after it."""
    if not isinstance(class_name, str) or not class_name:
        raise ValueError(f"class_name must be a non-empty string, got {class_name!r}")
    if not callable(function) or (shapes is not None and not callable(shapes)):
        raise TypeError("function (and shapes, when given) must be callable")
    with _LOCK:
        _LAYERS[class_name] = CustomLayer(function, shapes)


def unregister_custom_layer(class_name: str) -> None:
    """Forget ``class_name``'s Python function (graphs built before keep it)."""
    with _LOCK:
        _LAYERS.pop(class_name, None)


def registered(class_name: str) -> CustomLayer | None:
    with _LOCK:
        return _LAYERS.get(class_name)


def parameters(p) -> dict[str, object]:
    """The layer's ``parameters`` map as Python values."""
    out = {}
    for key, value in p.parameters.items():
        which = value.WhichOneof("value")
        out[key] = None if which is None else getattr(value, which)
    return out


def outputs_of(class_name: str, result, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """``result`` (what the function returned) as one float32 array per output of ``shapes``; else ValueError."""
    arrays = [result] if isinstance(result, np.ndarray) or np.isscalar(result) else list(result)
    if len(arrays) != len(shapes):
        raise ValueError(f"custom layer class '{class_name}' returned {len(arrays)} array(s); the layer has "
                         f"{len(shapes)} output(s)")
    out = []
    for i, (array, shape) in enumerate(zip(arrays, shapes)):
        a = np.asarray(array, np.float32)
        if a.shape != tuple(shape):
            raise ValueError(f"custom layer class '{class_name}' returned output {i} of shape {list(a.shape)}; "
                             f"its shape is {list(shape)}")
        out.append(a)
    return out
