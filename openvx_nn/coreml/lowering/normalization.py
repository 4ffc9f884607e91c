"""Normalisation layers: batchnorm (a per-channel affine, or statistics computed
from the input), mean-variance, L2, LRN (the NN extension's), softmax (the NN
extension's along C; ours along any axis), reduce, layer normalization and the
later spec's Reduce* family."""
from __future__ import annotations

import numpy as np

from ...core.enums import NNNorm, NNPooling, NNRounding, NNType
from ...operations.coreml.elementwise import POINTWISE_FUNCTIONS
from ...operations.coreml.statistics import NORMALIZE_MODES, REDUCE_OPERATIONS
from ..blob import axis as vx_axis
from ..builder import Blob, GraphBuilder
from ..weights import load_weights
from .activation import pointwise
from .common import need_rank, single
from .convolution import CONV_PARAMS, FLOOR, NEAREST, SATURATE
from .registry import fuses, lowers


def normalize(g: GraphBuilder, x, name: str, cm_axes, mode: str, epsilon: float, gamma=None, beta=None) -> str:
    axes = sorted(vx_axis(a, x.rank) for a in cm_axes)
    out = g.output(name, x.shape)
    g.coreml("normalize", (x.tensor, g.ints(axes), g.enum(NORMALIZE_MODES.index(mode)), g.f32(epsilon),
                           None if gamma is None else g.constant(gamma),
                           None if beta is None else g.constant(beta), out))
    return f"coreml.normalize({mode})"


def _checked(g: GraphBuilder, layer, p, x: Blob) -> tuple[np.ndarray, np.ndarray]:
    """(gamma, beta) of a batchnorm of input ``x``, its rank and channel count checked."""
    need_rank(g, x, 3)
    c = int(p.channels)
    if c != x.shape[-3]:
        raise g.fail(f"channels is {c}, the input {list(x.shape)} has {x.shape[-3]}")
    return load_weights(p.gamma, (c,), "gamma").astype(np.float64), load_weights(p.beta, (c,), "beta").astype(np.float64)


def _stored(p, gamma: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scale, shift) of a batchnorm of stored statistics."""
    c = gamma.size
    mean = load_weights(p.mean, (c,), "mean").astype(np.float64)
    var = load_weights(p.variance, (c,), "variance").astype(np.float64)
    scale = gamma / np.sqrt(var + p.epsilon)
    return scale, beta - mean * scale


def _stored_affine(g: GraphBuilder, bn, name: str, function: str) -> str:
    """The per-channel ``function`` (``affine`` or ``affine_relu``) of batchnorm ``bn``'s stored statistics into
    blob ``name``: on the NHWC tensor when the input is held there (channel axis 0: each pixel's channels side by
    side), else on CoreML's layout."""
    source = bn.input[0]
    x = g.held(source)
    gamma, beta = _checked(g, bn, bn.batchnorm, x)
    scale, shift = _stored(bn.batchnorm, gamma, beta)
    held = g.nhwc.get(source)
    if held is not None and len(held.tensor.dims) == 4:
        g.coreml("pointwise", (held.tensor, g.enum(POINTWISE_FUNCTIONS.index(function)),
                               g.floats([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), g.constant(scale), g.constant(shift),
                               g.nhwc_output(name, held.shape)))
        return f"coreml.pointwise({function}) (NHWC)"
    return pointwise(g, g.blob(source), name, function, alpha_c=scale, beta_c=shift)


@lowers("batchnorm")
def batchnorm(g: GraphBuilder, layer, p) -> str:
    single(g, layer, held=True)
    if not p.computeMeanVar:
        return _stored_affine(g, layer, layer.output[0], "affine") + " (folded batchnorm)"
    x = single(g, layer)
    gamma, beta = _checked(g, layer, p, x)
    c = gamma.size
    axes = (-1, -2) if p.instanceNormalization else tuple(a for a in range(-x.rank, 0) if a != -3)
    return normalize(g, x, layer.output[0], axes, "standardize", p.epsilon,
                     gamma.reshape(c, 1, 1), beta.reshape(c, 1, 1))


@fuses("affine_relu")
def batchnorm_relu(g: GraphBuilder, layer, pair) -> str:
    """A batchnorm of stored statistics and the ReLU that alone reads it (``fusion.ActivatedAffine``) as one
    per-channel pass: ``max(scale[c] * x + shift[c], 0)`` (the plan checked both layers' input and output counts)."""
    g.layer = (pair.layer.name, "batchnorm")  # the checks name the batchnorm
    how = _stored_affine(g, pair.layer, layer.output[0], "affine_relu")
    g.layer = (layer.name, "activation")
    return how + f" with batchnorm '{pair.layer.name}' folded in"


@lowers("mvn")
def mvn(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    axes = (-1, -2, -3) if p.acrossChannels else (-1, -2)
    return normalize(g, x, layer.output[0], axes, "standardize" if p.normalizeVariance else "center", p.epsilon)


def _scale_weights(g: GraphBuilder, p, x: Blob) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(gamma, beta or None) of ``scale`` parameters ``p`` as CoreML-order arrays broadcasting over ``x`` (the
    ``scale`` lowering's shapes: one value, one per channel, or ``[C, H, W]`` of ones where they broadcast);
    None where they do not broadcast over ``x`` as it is."""
    found = []
    for weights, shape, what in ((p.scale, p.shapeScale, "scale"), (p.bias, p.shapeBias, "bias")):
        if what == "bias" and not p.hasBias:
            found.append(None)
            continue
        shape = tuple(int(s) for s in shape) or (1,)
        if len(shape) == 1 and shape[0] > 1:
            shape = (shape[0], 1, 1)
        if len(shape) > x.rank or any(s not in (1, d) for s, d in zip(shape[::-1], x.shape[::-1])):
            return None
        found.append(load_weights(weights, shape, what))
    return found[0], found[1]


@fuses("normalized_scale")
def normalized_scale(g: GraphBuilder, layer, pair, check: bool = False):
    """A ``scale`` layer and the ``mvn`` it alone reads (``fusion.NormalizedScale``: a converted layer normalization)
    as one normalize pass with the scale as gamma and the bias as beta, rounded once. ``check``: only whether the
    scale's shapes allow it (asked when the ``mvn`` is reached; else both are lowered apart)."""
    mvn = pair.layer
    if check:
        x = g.held(mvn.input[0])  # its shape only: a blob held channels-last is converted by the lowering below
        return x.rank >= 3 and _scale_weights(g, layer.scale, x) is not None
    x = single(g, mvn)
    p = mvn.mvn
    gamma, beta = _scale_weights(g, layer.scale, x)
    axes = (-1, -2, -3) if p.acrossChannels else (-1, -2)
    how = normalize(g, x, layer.output[0], axes, "standardize" if p.normalizeVariance else "center", p.epsilon,
                    gamma, beta)
    return how + f" with mvn '{mvn.name}' folded in"


@lowers("l2normalize")
def l2normalize(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axes = (-1, -2, -3) if x.rank >= 3 else (-1,)
    return normalize(g, x, layer.output[0], axes, "l2", p.epsilon)


@lowers("layerNormalization")
def layer_normalization(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    shape = tuple(int(d) for d in p.normalizedShape)
    if not shape or x.shape[-len(shape):] != shape:
        raise g.fail(f"normalizedShape {list(shape)} is not the end of the input shape {list(x.shape)}")
    gamma = load_weights(p.gamma, shape, "gamma")
    beta = load_weights(p.beta, shape, "beta")
    return normalize(g, x, layer.output[0], tuple(range(-len(shape), 0)), "standardize", p.eps, gamma, beta)


@lowers("lrn")
def lrn(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    size = int(p.localSize)
    if size < 1:
        raise g.fail(f"localSize {size} must be at least 1")
    if size > 2**31 - 1:
        raise g.fail(f"localSize {size} does not fit the allowed range 1..{2**31 - 1}")
    out = g.output(layer.output[0], x.shape)
    if size in (3, 5, 7) and p.alpha > 0 and p.beta > 0 and p.k > 0:
        g.node("org.khronos.nn_extension.local_response_normalization_layer",
               (x.tensor, g.enum(NNNorm.VX_NN_NORMALIZATION_ACROSS_MAPS), g.size(size), g.f32(p.alpha),
                g.f32(p.beta), g.f32(p.k), out))
        return "vxLocalResponseNormalizationLayer(across maps)"
    # Other sizes and parameters: the window sums of squares are a 1x1 convolution with a band
    # of ones (channels c - (size-1)//2 .. c + size//2), then x * (k + alpha/size * s)^-beta.
    c = x.shape[-3]
    first = np.arange(c) - (size - 1) // 2
    band = ((np.arange(c)[None, :] >= first[:, None]) & (np.arange(c)[None, :] < first[:, None] + size))
    squares, sums, scale = (Blob(g.temp(x.shape), x.shape) for _ in range(3))
    g.coreml("pointwise", (x.tensor, g.enum(POINTWISE_FUNCTIONS.index("power")), g.floats([1, 0, 2, 0, 0]),
                           None, None, squares.tensor))
    raw = CONV_PARAMS.pack(0, 0, SATURATE, NEAREST, FLOOR, 0, 0)
    g.node("org.khronos.nn_extension.convolution_layer",
           (squares.tensor, g.constant(band.astype(np.float32).reshape(c, c, 1, 1)), None,
            g.scalar_struct(NNType.VX_TYPE_NN_CONVOLUTION_PARAMS, raw), sums.tensor))
    g.coreml("pointwise", (sums.tensor, g.enum(POINTWISE_FUNCTIONS.index("power")),
                           g.floats([p.alpha / size, p.k, -p.beta, 0, 0]), None, None, scale.tensor))
    g.node("org.khronos.openvx.tensor_multiply", (x.tensor, scale.tensor, g.f32(1.0), g.enum(SATURATE),
                                                  g.enum(NEAREST), out))
    return "coreml.pointwise(square), vxConvolutionLayer(channel band), coreml.pointwise(power), vxTensorMultiply"


def softmax_along(g: GraphBuilder, x, name: str, cm_axis: int) -> str:
    axis = vx_axis(cm_axis, x.rank)
    if (x.rank >= 3 and axis == 2) or (x.rank == 1 and axis == 0):
        g.node("org.khronos.nn_extension.softmax_layer", (x.tensor, g.output(name, x.shape)))
        return "vxSoftmaxLayer"
    g.coreml("softmax", (x.tensor, g.i32(axis), g.output(name, x.shape)))
    return "coreml.softmax"


@lowers("softmax")
def softmax(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    return softmax_along(g, x, layer.output[0], -3 if x.rank >= 3 else -1)


@lowers("softmaxND")
def softmax_nd(g: GraphBuilder, layer, p) -> str:
    return softmax_along(g, single(g, layer), layer.output[0], int(p.axis))


def reduce(g: GraphBuilder, x, name: str, cm_axes, operation: str, epsilon: float, keep: bool) -> str:
    axes = sorted({vx_axis(a, x.rank) for a in cm_axes})
    cm = {x.rank - 1 - a for a in axes}
    if keep:
        shape = tuple(1 if i in cm else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in cm) or (1,)
    if operation == "mean" and axes == [0, 1] and x.rank >= 3:
        return _global_average(g, x, name, shape)
    g.coreml("reduce", (x.tensor, g.ints(axes), g.enum(REDUCE_OPERATIONS.index(operation)), g.f32(epsilon),
                        g.output(name, shape)))
    return f"coreml.reduce({operation})"


def _global_average(g: GraphBuilder, x, name: str, shape) -> str:
    """The mean over H and W (a converted ``x.mean((2, 3))``) is global average pooling: the NN extension's
    pooling layer over the whole plane (its float32 sum, and its native entry), then the kept or dropped axes
    as a reshape (the same elements in the same order)."""
    pooled = g.temp(x.shape[:-2] + (1, 1))
    g.node("org.khronos.nn_extension.pooling_layer",
           (x.tensor, g.enum(NNPooling.VX_NN_POOLING_AVG), g.size(x.shape[-1]), g.size(x.shape[-2]), g.size(0),
            g.size(0), g.enum(NNRounding.VX_NN_DS_SIZE_ROUNDING_FLOOR), pooled))
    g.coreml("reshape", (pooled, g.output(name, shape)))
    return "vxPoolingLayer(avg) over the whole plane, then coreml.reshape"


REDUCE_MODES = {0: "sum", 1: "mean", 2: "prod", 3: "logsum", 4: "sumsquare", 5: "l1", 6: "l2", 7: "max", 8: "min",
                9: "argmax"}
REDUCE_AXES = {0: (-3, -2, -1), 1: (-2, -1), 2: (-3,), 3: (-2,), 4: (-1,)}


@lowers("reduce")
def reduce_layer(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    operation = REDUCE_MODES.get(p.mode)
    axes = REDUCE_AXES.get(p.axis)
    if operation is None or axes is None:
        raise g.fail(f"reduce mode {p.mode} over axis {p.axis} is not defined")
    if operation == "argmax" and len(axes) != 1:
        raise g.fail("ARGMAX reduces a single axis (C, H or W)")
    return reduce(g, x, layer.output[0], axes, operation, p.epsilon, keep=True)


REDUCE_ND = {"reduceSum": "sum", "reduceMean": "mean", "reduceProd": "prod", "reduceL1": "l1", "reduceL2": "l2",
             "reduceMax": "max", "reduceMin": "min", "reduceSumSquare": "sumsquare", "reduceLogSum": "logsum",
             "reduceLogSumExp": "logsumexp"}


@lowers(*REDUCE_ND)
def reduce_nd(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axes = tuple(range(x.rank)) if p.reduceAll else tuple(int(a) for a in p.axes)
    if not axes:
        raise g.fail("no axes to reduce (set axes or reduceAll)")
    return reduce(g, x, layer.output[0], axes, REDUCE_ND[layer.WhichOneof("layer")], 0.0, p.keepDims)
