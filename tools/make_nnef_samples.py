"""Write one NNEF folder per operation family: ``graph.nnef``, a ``.dat`` file per variable, and the test data
beside them, ``inputs/<name>.dat`` and ``outputs/<name>.dat`` (expected outputs from the NumPy references of
``nnef_references.py``, written from the NNEF specification). The C and Python tests import these folders.

    python tools/make_nnef_samples.py OUT_DIR [--seed N] [FAMILY ...]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nnef_references as ref


@dataclass
class Case:
    """One family's folder: the graph's text, its variables (by label), inputs and expected outputs."""

    text: str
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    variables: dict[str, np.ndarray] = field(default_factory=dict)
    quant: str = ""  # graph.quant, when the graph is quantized


def _graph(inputs, outputs, body: str) -> str:
    return f"version 1.0;\n\ngraph G( {', '.join(inputs)} ) -> ( {', '.join(outputs)} )\n{{\n{body}}}\n"


def _ext(name, shape, kind="scalar"):
    return f"    {name} = external<{kind}>(shape = {list(shape)});\n"


def _var(name, array):
    return f"    {name} = variable<scalar>(shape = {list(array.shape)}, label = '{name}');\n"


def _f32(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def convolution(rng) -> Case:
    n, c, h, w = 1, 4, int(rng.integers(7, 11)), int(rng.integers(7, 11))
    x = _f32(rng, n, c, h, w)
    f1, b1 = _f32(rng, 6, c, 3, 3), _f32(rng, 1, 6)
    f2 = _f32(rng, 6, c // 2, 3, 2)
    f3, b3 = _f32(rng, c, 1, 3, 3), _f32(rng, 1, c)
    f4 = _f32(rng, 2, c, 3, 3)
    variables = {"f1": f1, "b1": b1, "f2": f2, "f3": f3, "b3": b3, "f4": f4}
    body = _ext("x", x.shape) + "".join(_var(k, v) for k, v in variables.items()) + (
        "    dense = conv(x, f1, b1, stride = [2, 2]);\n"
        "    grouped = conv(x, f2, 0.5, padding = [(1, 0), (2, 1)], dilation = [2, 1], groups = 2);\n"
        "    depthwise = conv(x, f3, b3, groups = 0);\n"
        "    replicated = conv(x, f4, 0.0, padding = [(1, 1), (1, 1)], border = 'replicate');\n"
        "    reflected = conv(x, f4, 0.0, padding = [(2, 1), (1, 2)], border = 'reflect', stride = [1, 2]);\n")
    outputs = {
        "dense": ref.conv(x, f1, b1, stride=[2, 2]),
        "grouped": ref.conv(x, f2, 0.5, padding=[(1, 0), (2, 1)], dilation=[2, 1], groups=2),
        "depthwise": ref.conv(x, f3, b3, groups=0),
        "replicated": ref.conv(x, f4, 0.0, padding=[(1, 1), (1, 1)], border="replicate"),
        "reflected": ref.conv(x, f4, 0.0, padding=[(2, 1), (1, 2)], border="reflect", stride=[1, 2]),
    }
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs, variables)


def deconvolution(rng) -> Case:
    x = _f32(rng, 1, 4, int(rng.integers(3, 6)), int(rng.integers(3, 6)))
    f1, b1 = _f32(rng, 4, 3, 3, 3), _f32(rng, 1, 3)
    f2 = _f32(rng, 4, 1, 2, 3)
    variables = {"f1": f1, "b1": b1, "f2": f2}
    body = _ext("x", x.shape) + "".join(_var(k, v) for k, v in variables.items()) + (
        "    up = deconv(x, f1, b1, stride = [2, 2]);\n"
        "    cropped = deconv(x, f1, 0.0, padding = [(1, 0), (0, 1)], stride = [1, 2]);\n"
        "    grouped = deconv(x, f2, 0.25, groups = 0, stride = [2, 1]);\n"
        "    dilated = deconv(x, f1, b1, padding = [(2, 1), (0, 1)], stride = [2, 1], dilation = [2, 3]);\n"
        "    dilated_grouped = deconv(x, f2, 0.0, groups = 0, dilation = [3, 2]);\n")
    outputs = {
        "up": ref.deconv(x, f1, b1, stride=[2, 2]),
        "cropped": ref.deconv(x, f1, 0.0, padding=[(1, 0), (0, 1)], stride=[1, 2]),
        "grouped": ref.deconv(x, f2, 0.25, groups=0, stride=[2, 1]),
        "dilated": ref.deconv(x, f1, b1, padding=[(2, 1), (0, 1)], stride=[2, 1], dilation=[2, 3]),
        "dilated_grouped": ref.deconv(x, f2, 0.0, groups=0, dilation=[3, 2]),
    }
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs, variables)


def pooling(rng) -> Case:
    x = _f32(rng, 2, 3, int(rng.integers(6, 10)), int(rng.integers(6, 10)))
    x[0, 0, 0, 0] = -5.0  # an edge value a max over zero padding must not see
    lines, outputs = [], {}
    for kind, op in (("max", "max_pool"), ("avg", "avg_pool"), ("rms", "rms_pool"), ("box", "box")):
        for border in ("ignore", "constant", "replicate", "reflect"):
            if kind == "max" or border != "ignore" or kind != "box":
                name = f"{kind}_{border}"
                lines.append(f"    {name} = {op}(x, size = [1, 1, 3, 2], stride = [1, 1, 2, 1], "
                             f"border = '{border}', padding = [(0, 0), (0, 0), (1, 1), (1, 0)]);\n")
                outputs[name] = ref.pool(x, kind, [3, 2], [2, 1], None, [(1, 1), (1, 0)], border)
    lines.append("    auto_max = max_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore');\n")
    outputs["auto_max"] = ref.pool(x, "max", [3, 3], [2, 2], None, None, "ignore")
    lines.append("    auto_avg = avg_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);\n")
    outputs["auto_avg"] = ref.pool(x, "avg", [2, 2], [2, 2], None, None, "constant")
    return Case(_graph(["x"], outputs, _ext("x", x.shape) + "".join(lines)), {"x": x}, outputs)


def linear(rng) -> Case:
    n, c, m = int(rng.integers(1, 4)), int(rng.integers(3, 9)), int(rng.integers(2, 7))
    x, a, b = _f32(rng, n, c), _f32(rng, 3, c, 5), _f32(rng, 3, m, 5)
    w, bias = _f32(rng, m, c), _f32(rng, 1, m)
    variables = {"w": w, "bias": bias}
    body = _ext("x", x.shape) + _ext("a", a.shape) + _ext("b", b.shape) + _var("w", w) + _var("bias", bias) + (
        "    fc = linear(x, w, bias);\n"
        "    product = matmul(x, w, transposeB = true);\n"
        "    batched = matmul(a, b, transposeB = true);\n"
        "    gram = matmul(a, a, transposeA = true);\n")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    outputs = {"fc": x @ w.T.astype(np.float64) + bias, "product": x.astype(np.float64) @ w.T,
               "batched": a64 @ b64.transpose(0, 2, 1), "gram": a64.transpose(0, 2, 1) @ a64}
    return Case(_graph(["x", "a", "b"], outputs, body), {"x": x, "a": a, "b": b}, outputs, variables)


def elementwise(rng) -> Case:
    shape = (2, 3, int(rng.integers(2, 6)), int(rng.integers(2, 6)))
    x, y = _f32(rng, *shape), _f32(rng, *shape, low=0.5, high=2.0)
    x.flat[0], x.flat[1] = 0.0, -0.0
    bias = _f32(rng, 1, 3)
    body = _ext("x", shape) + _ext("y", shape) + _var("bias", bias) + (
        "    added = add(x, bias);\n    difference = sub(1.5, x);\n    product = mul(x, y);\n"
        "    quotient = div(x, y);\n    power = pow(y, 1.5);\n    smaller = min(x, y);\n    larger = max(x, 0.25);\n"
        "    less = lt(x, y);\n    equal = eq(x, 0.0);\n    either = or(less, equal);\n"
        "    chosen = select(less, x, y);\n    parametric = prelu(x, bias);\n    clamped = clamp(x, -0.5, 0.5);\n"
        "    negated = neg(x);\n"
        "    reciprocal = rcp(y);\n    exponential = exp(x);\n    logarithm = log(y);\n    absolute = abs(x);\n"
        "    signs = sign(x);\n    floors = floor(mul(x, 3.0));\n    ceilings = ceil(mul(x, 3.0));\n"
        "    root = sqrt(y);\n    inverse_root = rsqrt(y);\n    square = sqr(x);\n    copied = copy(x);\n")
    x64, y64, b64 = x.astype(np.float64), y.astype(np.float64), bias.astype(np.float64).reshape(1, 3, 1, 1)
    less, equal = x64 < y64, x64 == 0.0
    outputs = {
        "added": x64 + b64, "difference": 1.5 - x64, "product": x64 * y64, "quotient": x64 / y64,
        "power": y64 ** 1.5, "smaller": np.minimum(x64, y64), "larger": np.maximum(x64, 0.25), "less": less,
        "equal": equal, "either": less | equal, "chosen": np.where(less, x64, y64),
        "parametric": np.where(x64 < 0, b64 * x64, x64),
        "clamped": np.minimum(np.maximum(x64, -0.5), 0.5), "negated": -x64, "reciprocal": 1 / y64,
        "exponential": np.exp(x64), "logarithm": np.log(y64), "absolute": np.abs(x64), "signs": np.sign(x64),
        "floors": np.floor(x64 * 3.0), "ceilings": np.ceil(x64 * 3.0), "root": np.sqrt(y64),
        "inverse_root": 1 / np.sqrt(y64), "square": x64 * x64, "copied": x64,
    }
    return Case(_graph(["x", "y"], outputs, body), {"x": x, "y": y}, outputs, {"bias": bias})


def activation(rng) -> Case:
    x = _f32(rng, 2, 5, 3, int(rng.integers(2, 6)), low=-4, high=4)
    x.flat[0] = 0.0
    body = _ext("x", x.shape) + (
        "    rectified = relu(x);\n    logistic = sigmoid(x);\n    hyperbolic = tanh(x);\n"
        "    exponential_linear = elu(x, alpha = 0.7);\n    leaky = leaky_relu(x, alpha = 0.1);\n"
        "    probabilities = softmax(x, axes = [1]);\n    soft = softplus(x);\n")
    v = x.astype(np.float64)
    outputs = {"rectified": np.maximum(v, 0), "logistic": 1 / (1 + np.exp(-v)), "hyperbolic": np.tanh(v),
               "exponential_linear": np.where(v < 0, 0.7 * (np.exp(v) - 1), v), "leaky": np.where(v < 0, 0.1 * v, v),
               "probabilities": ref.softmax(v, 1), "soft": np.log(np.exp(v) + 1)}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs)


def normalization(rng) -> Case:
    c = int(rng.integers(2, 6))
    x = _f32(rng, 2, c, 3, 4)
    mean, var, offset, scale = _f32(rng, 1, c), _f32(rng, 1, c, low=0.1, high=2), _f32(rng, 1, c), _f32(rng, 1, c)
    variables = {"mean": mean, "variance": var, "offset": offset, "scale": scale}
    body = _ext("x", x.shape) + "".join(_var(k, v) for k, v in variables.items()) + (
        "    normalized = batch_normalization(x, mean, variance, offset, scale, epsilon = 0.001);\n"
        "    across = local_response_normalization(x, size = [1, 3, 1, 1], alpha = 0.5, beta = 0.75, bias = 2.0);\n"
        "    square = local_response_normalization(x, size = [1, 1, 3, 3], alpha = 0.25, beta = 0.5);\n")
    r = lambda a: a.astype(np.float64).reshape(1, c, 1, 1)
    outputs = {"normalized": (x - r(mean)) / np.sqrt(r(var) + 0.001) * r(scale) + r(offset),
               "across": ref.local_response_normalization(x, [1, 3, 1, 1], 0.5, 0.75, 2.0),
               "square": ref.local_response_normalization(x, [1, 1, 3, 3], 0.25, 0.5, 1.0)}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs, variables)


def shapes(rng) -> Case:
    x = _f32(rng, 2, 6, 3, int(rng.integers(4, 7)))
    body = _ext("x", x.shape) + (
        "    flat = reshape(x, shape = [2, -1]);\n    turned = transpose(x, axes = [0, 2, 3, 1]);\n"
        "    lifted = unsqueeze(x, axes = [0]);\n    dropped = squeeze(lifted, axes = [0]);\n"
        "    joined = concat([x, turned_back], axis = 1);\n    turned_back = transpose(turned, axes = [0, 3, 1, 2]);\n"
        "    [first, second] = split(x, axis = 1, ratios = [1, 2]);\n"
        "    padded = pad(x, padding = [(0, 0), (0, 0), (1, 2), (2, 1)], value = 0.5);\n"
        "    reflected = pad(x, padding = [(0, 0), (0, 0), (1, 1), (2, 1)], border = 'reflect');\n"
        "    replicated = pad(x, padding = [(0, 0), (1, 0), (0, 2), (1, 1)], border = 'replicate');\n"
        "    window = slice(x, axes = [1, 3], begin = [1, 1], end = [5, -1]);\n")
    body = body.replace("    joined = concat([x, turned_back], axis = 1);\n    turned_back = transpose(turned, axes = "
                        "[0, 3, 1, 2]);\n", "    turned_back = transpose(turned, axes = [0, 3, 1, 2]);\n"
                        "    joined = concat([x, turned_back], axis = 1);\n")
    v = x.astype(np.float64)
    outputs = {"flat": v.reshape(2, -1), "turned": v.transpose(0, 2, 3, 1), "dropped": v,
               "joined": np.concatenate([v, v], axis=1), "first": v[:, :2], "second": v[:, 2:],
               "padded": np.pad(v, ((0, 0), (0, 0), (1, 2), (2, 1)), constant_values=0.5),
               "reflected": np.pad(v, ((0, 0), (0, 0), (1, 1), (2, 1)), mode="reflect"),
               "replicated": np.pad(v, ((0, 0), (1, 0), (0, 2), (1, 1)), mode="edge"),
               "window": v[:, 1:5, :, 1:-1]}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs)


def reduction(rng) -> Case:
    x = _f32(rng, 2, 4, 3, int(rng.integers(2, 6)))
    body = _ext("x", x.shape) + (
        "    total = sum_reduce(x, axes = [2, 3]);\n    average = mean_reduce(x, axes = [1]);\n"
        "    smallest = min_reduce(x, axes = [3]);\n    largest = max_reduce(x, axes = [1, 2]);\n"
        "    index = argmax_reduce(x, axes = [1]);\n    lowest = argmin_reduce(x, axes = [3]);\n"
        "    positive = gt(x, 0.0);\n    some = any_reduce(positive, axes = [2]);\n"
        "    every = all_reduce(positive, axes = [1, 3]);\n")
    v = x.astype(np.float64)
    outputs = {"total": v.sum(axis=(2, 3), keepdims=True), "average": v.mean(axis=1, keepdims=True),
               "smallest": v.min(axis=3, keepdims=True), "largest": v.max(axis=(1, 2), keepdims=True),
               "index": np.argmax(v, axis=1)[:, None].astype(np.int32),
               "lowest": np.argmin(v, axis=3)[..., None].astype(np.int32),
               "some": (v > 0).any(axis=2, keepdims=True), "every": (v > 0).all(axis=(1, 3), keepdims=True)}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs)


def upsampling(rng) -> Case:
    x = _f32(rng, 1, 2, int(rng.integers(2, 5)), int(rng.integers(2, 5)))
    body = _ext("x", x.shape) + (
        "    nearest = nearest_upsample(x, factor = [2, 3]);\n"
        "    aligned = multilinear_upsample(x, factor = [2, 2], method = 'aligned');\n"
        "    symmetric = multilinear_upsample(x, factor = [2, 2], method = 'symmetric', border = 'replicate');\n"
        "    asymmetric = multilinear_upsample(x, factor = [2, 2], method = 'asymmetric', border = 'replicate');\n"
        "    symmetric_zeros = multilinear_upsample(x, factor = [2, 3], method = 'symmetric', border = 'constant');\n"
        "    asymmetric_zeros = multilinear_upsample(x, factor = [3, 2], method = 'asymmetric', "
        "border = 'constant');\n")
    outputs = {"nearest": np.repeat(np.repeat(x, 2, axis=2), 3, axis=3).astype(np.float64),
               "aligned": ref.upsample_linear(x, [2, 2], "aligned"),
               "symmetric": ref.upsample_linear(x, [2, 2], "symmetric"),
               "asymmetric": ref.upsample_linear(x, [2, 2], "asymmetric"),
               "symmetric_zeros": ref.upsample_linear(x, [2, 3], "symmetric", "constant"),
               "asymmetric_zeros": ref.upsample_linear(x, [3, 2], "asymmetric", "constant")}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs)


def logical(rng) -> Case:
    """``logical`` inputs and outputs (``vx_bool`` tensors through the C import): a mask chooses, combines and
    counts; sizes not a multiple of eight, so the last byte of each ``.dat`` file is partly padding."""
    shape = (1, 2, int(rng.integers(2, 5)), int(rng.integers(3, 6)) | 1)
    mask, x = rng.random(shape) < 0.5, _f32(rng, *shape)
    mask.flat[0], mask.flat[-1] = True, False
    body = _ext("mask", shape, "logical") + _ext("x", shape) + (
        "    chosen = select(mask, x, 0.0);\n    both = and(mask, gt(x, 0.0));\n    inverted = not(mask);\n"
        "    some = any_reduce(mask, axes = [3]);\n")
    x64 = x.astype(np.float64)
    outputs = {"chosen": np.where(mask, x64, 0.0), "both": mask & (x64 > 0.0), "inverted": ~mask,
               "some": mask.any(axis=3, keepdims=True)}
    return Case(_graph(["mask", "x"], outputs, body), {"mask": mask, "x": x}, outputs)


def statistics(rng) -> Case:
    """``moments``, ``tile`` and ``softmax`` over adjacent axes."""
    shape = (2, 3, int(rng.integers(2, 5)), int(rng.integers(2, 6)))
    x = _f32(rng, *shape, low=-2.0, high=2.0)
    body = _ext("x", shape) + ("    mean, variance = moments(x, axes = [2, 3]);\n"
                               "    tiled = tile(x, repeats = [1, 2, 1, 3]);\n"
                               "    spread = softmax(x, axes = [1, 2, 3]);\n    planes = softmax(x, axes = [2, 3]);\n")
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(2, 3), keepdims=True)
    outputs = {"mean": mean, "variance": ((x64 - mean) ** 2).mean(axis=(2, 3), keepdims=True),
               "tiled": np.tile(x64, (1, 2, 1, 3)), "spread": ref.softmax(x64, (1, 2, 3)),
               "planes": ref.softmax(x64, (2, 3))}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs)


def quantized(rng) -> Case:
    """A quantized graph: uint8 filter integers (``linear_quantize``, the values per the spec's dequantization),
    activations rounded to their grids (``linear_quantize``, ``zero_point_linear_quantize``)."""
    x = _f32(rng, 1, 3, int(rng.integers(5, 8)), int(rng.integers(5, 8)))
    codes = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    bias = _f32(rng, 1, 4)
    body = _ext("x", x.shape) + "    filter = variable<scalar>(shape = [4, 3, 3, 3], label = 'filter');\n" + \
        _var("bias", bias) + ("    c = conv(x, filter, bias);\n    r = relu(c);\n"
                              "    pooled = avg_pool(r, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);\n")
    quant = ('"x": linear_quantize(min = -1.0, max = 1.0, bits = 8);\n'
             '"filter": linear_quantize(min = -0.5, max = 0.5, bits = 8);\n'
             '"c": linear_quantize(min = -3.0, max = 3.0, bits = 8);\n'
             '"pooled": zero_point_linear_quantize(zero_point = 3, scale = 0.0125, bits = 8, signed = false, '
             'symmetric = false);\n')
    xq = ref.min_max_quantize(x, -1.0, 1.0, 8)
    w = codes.astype(np.float64) * (1.0 / 255) - 0.5  # the spec's dequantization of unsigned codes on [-0.5, 0.5]
    c = ref.min_max_quantize(ref.conv(xq, w, bias), -3.0, 3.0, 8)
    pooled = ref.zero_point_quantize(ref.pool(np.maximum(c, 0), "avg", [2, 2], [2, 2]), 3, 0.0125, 8)
    return Case(_graph(["x"], ["pooled"], body), {"x": x}, {"pooled": pooled}, {"filter": codes, "bias": bias},
                quant)


def quantized_uint8(rng) -> Case:
    """A graph as converters write TensorFlow Lite models: uint8 activations and filters with a scale and zero
    point each, int32 biases at the input scale times the filter scale. Expected convolution codes from integer
    sums and NNAPI's requantization (the maximum of codes after them), written as the values they stand for;
    the average is the spec's, rounded to its grid."""
    h, w = int(rng.integers(6, 10)), int(rng.integers(6, 10))
    # sums of 27 products of ~70 x ~70 codes, then of 9 and of ~16 of ~45 x ~70: result scales that spread them
    # over ~40 codes
    sx, sw, sc, sv, sd, sf, se = (float(np.float32(s)) for s in (0.02, 0.01, 0.125, 0.25, 8.0, 0.01, 64.0))
    zx, zw, zc, zd, zv, zf, ze = (int(z) for z in rng.integers(60, 200, 7))
    xq = rng.integers(0, 256, (1, 3, h, w))
    xq.flat[:4] = [0, 255, zx, zx + 1]
    wq, dq = rng.integers(0, 256, (4, 3, 3, 3)), rng.integers(0, 256, (4, 1, 3, 3))
    bq = rng.integers(-2000, 2000, (1, 4))
    x = ((xq - zx) * sx).astype(np.float32)
    acc = ref.conv((xq - zx).astype(np.float64), (wq - zw).astype(np.float64), bq.astype(np.float64),
                   padding=[(1, 1), (1, 1)])
    cq = ref.nnapi_requantize(np.rint(acc).astype(np.int64), sx * sw / sc, zc)
    acc = ref.conv((cq - zc).astype(np.float64), (dq - zv).astype(np.float64), 0.0, stride=[2, 2],
                   padding=[(1, 1), (1, 1)], groups=0)
    depthwise_q = ref.nnapi_requantize(np.rint(acc).astype(np.int64), sc * sv / sd, zd)
    pooled_q = np.asarray(ref.pool(depthwise_q.astype(np.float64), "max", [2, 2], [2, 2], padding=None,
                                   border="ignore")).astype(np.int64)
    mean_q = ref.grid_average(cq, zc, [3, 3], [1, 1], [(1, 1), (1, 1)])  # the spec's average on the grid
    flat_q = pooled_q.reshape(1, -1)
    fq, fbq = rng.integers(0, 256, (8, flat_q.shape[1])), rng.integers(-3000, 3000, (1, 8))
    dense_q = ref.nnapi_requantize((flat_q - zd) @ (fq - zf).T + fbq, sd * sf / se, ze)
    body = _ext("x", x.shape) + (
        "    filter = variable<scalar>(shape = [4, 3, 3, 3], label = 'filter');\n"
        "    bias = variable<scalar>(shape = [1, 4], label = 'bias');\n"
        "    dw = variable<scalar>(shape = [4, 1, 3, 3], label = 'dw');\n"
        "    c = conv(x, filter, bias, padding = [(1, 1), (1, 1)]);\n"
        "    d = conv(c, dw, 0.0, padding = [(1, 1), (1, 1)], stride = [2, 2], groups = 0);\n"
        "    pooled = max_pool(d, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = 'ignore');\n"
        "    mean = avg_pool(c, size = [1, 1, 3, 3], padding = [(0, 0), (0, 0), (1, 1), (1, 1)], "
        "border = 'ignore');\n"
        f"    fc = variable<scalar>(shape = [8, {flat_q.shape[1]}], label = 'fc');\n"
        "    fc_bias = variable<scalar>(shape = [1, 8], label = 'fc_bias');\n"
        "    flat = reshape(pooled, shape = [1, -1]);\n    dense = linear(flat, fc, fc_bias);\n")

    def grid(name, zero, scale, bits=8, signed="false"):
        return (f'"{name}": zero_point_linear_quantize(zero_point = {zero}, scale = {scale!r}, bits = {bits}, '
                f'signed = {signed}, symmetric = false);\n')
    quant = (grid("x", zx, sx) + grid("filter", zw, sw) + grid("bias", 0, sx * sw, 32, "true") + grid("c", zc, sc)
             + grid("dw", zv, sv) + grid("d", zd, sd) + grid("pooled", zd, sd) + grid("mean", zc, sc)
             + grid("flat", zd, sd) + grid("fc", zf, sf) + grid("fc_bias", 0, sd * sf, 32, "true")
             + grid("dense", ze, se))
    outputs = {"pooled": (pooled_q - zd) * sd, "mean": (mean_q - zc) * sc, "c": (cq - zc) * sc,
               "dense": (dense_q - ze) * se}
    variables = {"filter": wq.astype(np.uint8), "bias": bq.astype(np.int32), "dw": dq.astype(np.uint8),
                 "fc": fq.astype(np.uint8), "fc_bias": fbq.astype(np.int32)}
    return Case(_graph(["x"], outputs, body), {"x": x}, outputs, variables, quant)


FAMILIES = {f.__name__: f for f in (convolution, deconvolution, pooling, linear, elementwise, activation,
                                    normalization, shapes, reduction, upsampling, quantized, logical,
                                    quantized_uint8, statistics)}
TYPES = {np.dtype(np.bool_): "logical", np.dtype(np.int32): "integer"}


def _stored(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    return array if array.dtype in TYPES else array.astype(np.float32)


def write(folder: Path, case: Case) -> None:
    """The case's folder: graph.nnef, the variables' .dat files, inputs/ and outputs/."""
    import nnef
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.nnef").write_text(case.text)
    if case.quant:
        (folder / "graph.quant").write_text(case.quant)
    for label, array in case.variables.items():
        array = np.asarray(array)
        with open(folder / f"{label}.dat", "wb") as f:  # integer variables are a quantized graph's codes
            nnef.write_tensor(f, array, quantized=True) if array.dtype.kind in "iu" else \
                nnef.write_tensor(f, array.astype(np.float32))
    for sub, arrays in (("inputs", case.inputs), ("outputs", case.outputs)):
        (folder / sub).mkdir(exist_ok=True)
        for name, array in arrays.items():
            with open(folder / sub / f"{name}.dat", "wb") as f:
                nnef.write_tensor(f, _stored(array))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("families", nargs="*", metavar="FAMILY", help=f"of {', '.join(FAMILIES)} (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    unknown = [name for name in args.families if name not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown} (expected of {', '.join(FAMILIES)})")
    for name in args.families or FAMILIES:
        write(args.out / name, FAMILIES[name](np.random.default_rng([args.seed, list(FAMILIES).index(name)])))
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
