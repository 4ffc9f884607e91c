"""float32 CONV_2D and MAX/AVERAGE_POOL_2D on the NN extension's own layers.

Those layers take OpenVX's channel-first layout ``(W, H, C, N)`` while NNAPI's
NHWC tensor is ``(C, W, H, N)``: two transposes bring the input in and two
take the result out.  They fit only when the arithmetic is NNAPI's:
symmetric padding, the stride the layer infers from the output size (the
smallest that gives it) equal to NNAPI's, a constant filter and bias, a fused
activation the activation layer has (RELU, RELU6), and for average pooling no
padding (the layer divides by the whole window, NNAPI by the positions
inside).  Otherwise the NNAPI kernels run."""
from __future__ import annotations

from ...core.enums import NNPooling, NNRounding, NNType
from ...core.scalar import Scalar
from ...operations.geometry import infer_stride
from ...operations.openvx.convolution import CONV_PARAMS
from ..enums import OperationType
from .context import CONSTANT, OpContext
from .elementwise import NEAREST, SATURATE, STANDARD_ACTIVATIONS, activation_node

FLOOR = NNRounding.VX_NN_DS_SIZE_ROUNDING_FLOOR
CONV_LAYER = "org.khronos.nn_extension.convolution_layer"
POOL_LAYER = "org.khronos.nn_extension.pooling_layer"
TRANSPOSE = "org.khronos.openvx.tensor_transpose"


def fits(op: OpContext, ints: dict, kernel_hw: tuple[int, int]) -> bool:
    """Symmetric padding, strides the layer would infer, an activation the activation layer has."""
    _, h, w, _ = op.shape(0)
    if ints["pad_left"] != ints["pad_right"] or ints["pad_top"] != ints["pad_bottom"]:
        return False
    if ints.get("activation", 0) not in (0,) + tuple(STANDARD_ACTIVATIONS):
        return False
    for size, pad, k, stride in ((h, ints["pad_top"], kernel_hw[0], ints["stride_h"]),
                                 (w, ints["pad_left"], kernel_hw[1], ints["stride_w"])):
        if stride < 1 or size + 2 * pad < k:
            return False
        out = (size + 2 * pad - k) // stride + 1
        if infer_stride(size, pad, k, out, False) != stride:
            return False
    return True


def _transpose(op: OpContext, source, dims: tuple[int, ...], d1: int, d2: int, target=None):
    swapped = list(dims)
    swapped[d1], swapped[d2] = swapped[d2], swapped[d1]
    target = target if target is not None else op.vx("tmp_dims", swapped)
    op.standard(TRANSPOSE, [source, op.vx("size", d1), op.vx("size", d2), target])
    return target, tuple(swapped)


def _to_whcn(op: OpContext):
    """The NHWC input as a (W, H, C, N) tensor."""
    n, h, w, c = op.shape(0)
    t, dims = _transpose(op, op.vx("in", 0), (c, w, h, n), 0, 1)
    return _transpose(op, t, dims, 1, 2)


def _from_whcn(op: OpContext, tensor, dims: tuple[int, ...], activation: int) -> None:
    """(W, H, C, N) back to NNAPI's output, through the activation layer when one is fused."""
    if activation:
        activated = op.vx("tmp_dims", dims)
        activation_node(op, tensor, STANDARD_ACTIVATIONS[activation], activated)
        tensor = activated
    t, dims = _transpose(op, tensor, dims, 1, 2)
    _transpose(op, t, dims, 0, 1, op.vx("out", 0))


def float_convolution(op: OpContext, ints: dict) -> bool:
    """Lower a checked float32 CONV_2D onto the convolution layer when it fits; False otherwise."""
    o, kh, kw, _ = op.shape(1)
    constant = all(op.present(k) and op.operand(k).lifetime in CONSTANT for k in (1, 2))
    if not constant or not fits(op, ints, (kh, kw)):
        return False
    if op.b.dry:
        return True
    x, dims = _to_whcn(op)
    weights = op.vx("const", ((kw, kh, dims[2], o), op.constant(1).transpose(2, 1, 3, 0)))
    bias = op.vx("const", ((o,), op.constant(2)))
    # overflow and rounding policies do not apply to float32; the struct must still hold valid ones
    params = CONV_PARAMS.pack(ints["pad_left"], ints["pad_top"], SATURATE, NEAREST, FLOOR, 0, 0)
    scalar = Scalar(op.b.context, NNType.VX_TYPE_NN_CONVOLUTION_PARAMS, params)
    op.b.refs.append(scalar)
    n, h, w, _ = op.shape(0)
    out_dims = ((w + 2 * ints["pad_left"] - kw) // ints["stride_w"] + 1,
                (h + 2 * ints["pad_top"] - kh) // ints["stride_h"] + 1, o, n)
    result = op.vx("tmp_dims", out_dims)
    op.standard(CONV_LAYER, [x, weights, bias, scalar, result])
    _from_whcn(op, result, out_dims, ints["activation"])
    return True


def float_pooling(op: OpContext, ints: dict) -> bool:
    """Lower a checked float32 MAX_POOL_2D or AVERAGE_POOL_2D onto the pooling layer when it fits."""
    fh, fw = ints["filter_h"], ints["filter_w"]
    average = op.type == OperationType.AVERAGE_POOL_2D
    if average and any(ints[p] for p in ("pad_left", "pad_right", "pad_top", "pad_bottom")):
        return False
    if ints["pad_left"] >= fw or ints["pad_top"] >= fh or not fits(op, ints, (fh, fw)):
        return False
    if op.b.dry:
        return True
    x, _ = _to_whcn(op)
    n, h, w, c = op.shape(0)
    out_dims = ((w + 2 * ints["pad_left"] - fw) // ints["stride_w"] + 1,
                (h + 2 * ints["pad_top"] - fh) // ints["stride_h"] + 1, c, n)
    result = op.vx("tmp_dims", out_dims)
    kind = NNPooling.VX_NN_POOLING_AVG if average else NNPooling.VX_NN_POOLING_MAX
    op.standard(POOL_LAYER, [x, op.vx("enum", kind), op.vx("size", fw), op.vx("size", fh),
                             op.vx("size", ints["pad_left"]), op.vx("size", ints["pad_top"]),
                             op.vx("enum", FLOOR), result])
    _from_whcn(op, result, out_dims, ints["activation"])
    return True
