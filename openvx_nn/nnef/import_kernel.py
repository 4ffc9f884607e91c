"""An NNEF folder as a kernel: what ``vxImportKernelFromURL(context, "nnef", folder)`` returns.

The kernel's parameters are the graph's inputs, then its outputs, in the order of the graph's declaration,
all tensors. A parameter's dims are the NNEF shape in NNEF's order (dims[0] is NNEF's first axis) and its
bytes NNEF's own layout, the packed payload of a ``.dat`` file with NNEF's last axis moving fastest: how
OpenVX applications and Khronos's tests pass NNEF data. The body of a node is the imported model's graph,
run on the node's tensors (a user kernel whose function runs a graph); that graph's objects are the kernel's,
not the application's references, and go with the context.
"""
from __future__ import annotations

import itertools
import os

import numpy as np

from ..core.context import Context
from ..core.enums import Direction, ParameterState, Status, TensorAttr, Type, type_name
from ..core.errors import VXError
from ..core.kernel import Kernel
from ..core.user_kernel import Callbacks, UserKernel
from .errors import NNEFError
from .model import NNEFModel, TensorInfo, load

VX_TYPES = {"scalar": Type.VX_TYPE_FLOAT32, "integer": Type.VX_TYPE_INT32, "logical": Type.VX_TYPE_BOOL}
"""The tensor type of each NNEF type (``logical``: ``vx_bool`` elements, four bytes each, ``vx_false_e`` or
``vx_true_e``; a ``.dat`` file's packed bits are unpacked by whoever copies them in)."""

_NUMBERS = itertools.count(1)


def import_kernel(context: Context, url: str) -> Kernel:
    """The kernel of the NNEF folder ``url``, published in ``context``'s kernel table."""
    try:
        model = load(url, internal=True)
    except NNEFError as err:
        status = Status.VX_ERROR_NOT_SUPPORTED if err.operation is not None else Status.VX_FAILURE
        raise VXError(status, f"cannot import NNEF model {url}: {err}") from None
    params = model.inputs + model.outputs
    name = f"org.openvx_nn.nnef.{os.path.basename(os.path.normpath(url)) or 'graph'}.{next(_NUMBERS)}"
    user = UserKernel(name, context.kernels.allocate_kernel_id(), len(params),
                      Callbacks(_runner(model), _validator(model)))
    for index, info in enumerate(params):
        direction = Direction.VX_INPUT if index < len(model.inputs) else Direction.VX_OUTPUT
        user.add_parameter(index, direction, Type.VX_TYPE_TENSOR, ParameterState.VX_PARAMETER_STATE_REQUIRED)
    user.parameter_metas = [_meta(info) for info in params]  # VX_PARAMETER_META_FORMAT (capi)
    description = user.finalize()
    context.kernels.add(description)
    kernel = Kernel(context, description)
    kernel.model = model  # the graph lives as long as the kernel's handle (and the description's callbacks)
    return kernel


def _meta(info: TensorInfo) -> dict[int, object]:
    return {TensorAttr.VX_TENSOR_NUMBER_OF_DIMS: len(info.shape), TensorAttr.VX_TENSOR_DIMS: tuple(info.shape),
            TensorAttr.VX_TENSOR_DATA_TYPE: VX_TYPES[info.dtype], TensorAttr.VX_TENSOR_FIXED_POINT_POSITION: 0}


def _check(index: int, tensor, info: TensorInfo) -> None:
    dims, data_type = tuple(tensor.dims), tensor.data_type
    if dims != info.shape or data_type != VX_TYPES[info.dtype]:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"parameter {index} (NNEF input '{info.name}') is a tensor {list(dims)} of "
                      f"{type_name(data_type)}; the graph declares {list(info.shape)} of "
                      f"{type_name(VX_TYPES[info.dtype])} (dims in NNEF order)")


def _validator(model: NNEFModel):
    def validate(node, params, metas) -> int:
        for index, info in enumerate(model.inputs):
            try:
                _check(index, params[index], info)
            except VXError as err:  # the kernel's validator reports a status: the log line says why
                node.context.log(node, err.status, f"vxVerifyGraph: {node.describe()}: {err.message}")
                return err.status
        for offset, info in enumerate(model.outputs):
            meta = metas[len(model.inputs) + offset]
            for attribute, value in _meta(info).items():
                meta.set(attribute, value)
        return Status.VX_SUCCESS
    return validate


def _runner(model: NNEFModel):
    def run(node, params) -> int:
        inputs = {info.name: _nnef_values(params[i].array, info) for i, info in enumerate(model.inputs)}
        results = model.predict(inputs)
        for offset, info in enumerate(model.outputs):
            tensor = params[len(model.inputs) + offset]
            flat = np.asarray(results[info.name]).reshape(-1).astype(tensor.array.dtype)
            tensor.array[...] = flat.reshape(tensor.array.shape, order="F")
        return Status.VX_SUCCESS
    return run


def _nnef_values(array: np.ndarray, info: TensorInfo) -> np.ndarray:
    """A parameter's elements in NNEF's shape; a ``vx_bool`` other than ``vx_false_e`` counts as true."""
    values = array.ravel(order="F").reshape(info.shape)
    return values != 0 if info.dtype == "logical" else values
