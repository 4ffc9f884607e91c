"""Activation and unary-function layers: the NN extension's activation layer where
its function is exactly CoreML's, the pointwise kernel for the rest."""
from __future__ import annotations

import numpy as np

from ...core.enums import NNActivation
from ...operations.coreml.elementwise import POINTWISE_FUNCTIONS
from ..builder import Blob, GraphBuilder
from ..weights import load_weights
from . import nhwc
from .common import single
from .registry import fuses, lowers

A = NNActivation
UNARY = {0: "sqrt", 1: "rsqrt", 2: "inverse", 3: "power", 4: "exp", 5: "log", 6: "abs", 7: "threshold"}


def scalar_activation(params) -> tuple[str, float, float] | None:
    """(pointwise function, alpha, beta) of an ``ActivationParams`` without per-channel
    parameters, or None (PReLU, parametric softplus, unset)."""
    kind = params.WhichOneof("NonlinearityType")
    p = getattr(params, kind) if kind else None
    table = {"linear": ("linear", "alpha", "beta"), "ReLU": ("relu",), "leakyReLU": ("leaky_relu", "alpha"),
             "thresholdedReLU": ("thresholded_relu", "alpha"), "tanh": ("tanh",),
             "scaledTanh": ("scaled_tanh", "alpha", "beta"), "sigmoid": ("sigmoid",),
             "sigmoidHard": ("sigmoid_hard", "alpha", "beta"), "ELU": ("elu", "alpha"), "softsign": ("softsign",),
             "softplus": ("softplus",)}
    if kind not in table:
        return None
    name, *fields = table[kind]
    values = [float(getattr(p, f)) for f in fields] + [0.0, 0.0]
    return name, values[0], values[1]


def pointwise(g: GraphBuilder, x: Blob, name: str, function: str, scale=1.0, shift=0.0, alpha=0.0, beta=0.0,
              epsilon=0.0, alpha_c=None, beta_c=None) -> str:
    out = g.output(name, x.shape)
    g.coreml("pointwise", (x.tensor, g.enum(POINTWISE_FUNCTIONS.index(function)),
                           g.floats([scale, shift, alpha, beta, epsilon]),
                           None if alpha_c is None else g.constant(alpha_c),
                           None if beta_c is None else g.constant(beta_c), out))
    return f"coreml.pointwise({function})"


def vx_activation(g: GraphBuilder, x: Blob, name: str, function: int, a: float = 0.0, b: float = 0.0) -> str:
    out = g.output(name, x.shape)
    g.node("org.khronos.nn_extension.activation_layer", (x.tensor, g.enum(function), g.f32(a), g.f32(b), out))
    return f"vxActivationLayer({A(function).name.replace('VX_NN_ACTIVATION_', '').lower()})"


def openvx_function(kind: str, p) -> tuple[int, float, float] | None:
    """(OpenVX activation, a, b) computing CoreML's activation ``kind`` of parameters ``p`` exactly, or None."""
    simple = {"ReLU": (A.VX_NN_ACTIVATION_RELU, 0.0, 0.0), "sigmoid": (A.VX_NN_ACTIVATION_LOGISTIC, 0.0, 0.0),
              "softplus": (A.VX_NN_ACTIVATION_SOFTRELU, 0.0, 0.0),
              "tanh": (A.VX_NN_ACTIVATION_HYPERBOLIC_TAN, 1.0, 1.0)}
    if kind in simple:
        return simple[kind]
    if kind in ("scaledTanh", "linear") and p.alpha > 0 and p.beta > 0:
        function = A.VX_NN_ACTIVATION_HYPERBOLIC_TAN if kind == "scaledTanh" else A.VX_NN_ACTIVATION_LINEAR
        return function, float(p.alpha), float(p.beta)
    return None


@lowers("activation")
def activation(g: GraphBuilder, layer, params) -> str:
    single(g, layer, held=True)
    kind = params.WhichOneof("NonlinearityType")
    if kind is None:
        raise g.fail("the activation names no function")
    p = getattr(params, kind)
    exact = openvx_function(kind, p)
    scalar = scalar_activation(params) if exact is None else None
    if g.nhwc_route and (exact is not None or scalar is not None):  # element-wise of scalar parameters
        how = nhwc.activation(g, layer, *exact) if exact is not None else \
            nhwc.pointwise(g, layer, POINTWISE_FUNCTIONS.index(scalar[0]), scalar[0], scalar[1], scalar[2])
        if how is not None:
            return how
    x = single(g, layer)
    name = layer.output[0]
    if exact is not None:
        return vx_activation(g, x, name, *exact)
    if kind in ("PReLU", "parametricSoftplus"):
        channels = x.shape[-3] if x.rank >= 3 else 1
        alpha = load_weights(p.alpha, (_count(g, p.alpha, channels),), "alpha")
        if kind == "PReLU":
            return pointwise(g, x, name, "leaky_relu", alpha_c=alpha)
        beta = load_weights(p.beta, (_count(g, p.beta, channels),), "beta")
        return pointwise(g, x, name, "parametric_softplus", alpha_c=alpha, beta_c=beta)
    function, alpha, beta = scalar
    return pointwise(g, x, name, function, alpha=alpha, beta=beta)


@fuses("gate")
def gated(g: GraphBuilder, layer, gate) -> str:
    """A multiply of ``x`` by its own activation (``fusion.Gate``: a swish, a hard swish, one behind a thresholded
    ReLU, whose threshold takes epsilon's place) as one pointwise pass; in NHWC when ``x`` is held there."""
    if g.nhwc_route and gate.x in g.nhwc:
        x = g.nhwc[gate.x]
        g.coreml("pointwise", (x.tensor, g.enum(POINTWISE_FUNCTIONS.index(gate.function)),
                               g.floats([1.0, 0.0, gate.alpha, gate.beta, gate.at]), None, None,
                               g.nhwc_output(layer.output[0], x.shape, x.tensor.dims)))
        return f"coreml.pointwise({gate.function}) (NHWC)"
    return pointwise(g, g.blob(gate.x), layer.output[0], gate.function, alpha=gate.alpha, beta=gate.beta,
                     epsilon=gate.at)


def _count(g: GraphBuilder, wp, channels: int) -> int:
    n = max(len(wp.floatValue), len(wp.float16Value) // 2, len(wp.rawValue) // 4)
    if n not in (1, channels):
        raise g.fail(f"per-channel parameter has {n} values; the input has {channels} channels")
    return n


@lowers("unary")
def unary(g: GraphBuilder, layer, params) -> str:
    x = single(g, layer)
    function = UNARY.get(params.type)
    if function is None:
        raise g.fail(f"unary operation {params.type} is not defined")
    return pointwise(g, x, layer.output[0], function, params.scale, params.shift, params.alpha, 0.0, params.epsilon)


ND_UNARY = {"ceil": "ceil", "floor": "floor", "sign": "sign", "round": "round", "exp2": "exp2", "sin": "sin",
            "cos": "cos", "tan": "tan", "sinh": "sinh", "cosh": "cosh", "erf": "erf", "tanh": "tanh", "asin": "asin",
            "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
            "logicalNot": "logical_not"}


@lowers(*ND_UNARY)
def unary_nd(g: GraphBuilder, layer, params) -> str:
    return pointwise(g, single(g, layer), layer.output[0], ND_UNARY[layer.WhichOneof("layer")])


@lowers("clip")
def clip(g: GraphBuilder, layer, params) -> str:
    return pointwise(g, single(g, layer), layer.output[0], "clip", alpha=params.minVal, beta=params.maxVal)


@lowers("clampedReLU")
def clamped_relu(g: GraphBuilder, layer, params) -> str:
    return pointwise(g, single(g, layer), layer.output[0], "clamped_relu", alpha=params.alpha, beta=params.beta)


GELU = {0: "gelu_exact", 1: "gelu_tanh", 2: "gelu_sigmoid"}


@lowers("gelu")
def gelu(g: GraphBuilder, layer, params) -> str:
    return pointwise(g, single(g, layer), layer.output[0], GELU[params.mode])


def affine(g: GraphBuilder, x: Blob, name: str, scale: np.ndarray, shift: np.ndarray) -> str:
    """y = scale[c] * x + shift[c] along the channel axis."""
    return pointwise(g, x, name, "affine", alpha_c=scale, beta_c=shift)
