"""Checks of a CoreML spec before any layer is lowered, so that a model breaking its specification is refused
with a ``CoreMLError`` naming the layer, the field and the allowed values, not run as something it is not.

Two kinds of rule. Every enum field anywhere in the model is checked against the values its enum defines: a
protobuf enum field holds any integer, and a lowering that reads an undefined value would take it for a default
(``validate_enums``). Then the sizes the lowerings compute with: declared feature shapes, and per layer type the
strides, kernel sizes, dilations, channel counts, target shapes and axes the specification requires positive
or of a fixed length (``LAYER_RULES``); one table, one function per layer type that has such fields.
The lowerings keep the checks that need the shapes of the blobs (ranks, channel counts, axes against a rank) and
a few older ones of single fields (LRN's ``localSize``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

from google.protobuf.descriptor import FieldDescriptor

from ..api.graph_builder import INT32_MAX, MAX_RANK, shape_problem
from .errors import CoreMLError

UNTYPED = ("the layer's type is unset or unknown (a field of none of the specification's layer types; a file of a "
           "later specification?)")
NO_INPUTS = {"loadConstant", "loadConstantND", "fillStatic", "rangeStatic", "randomNormalStatic",
             "randomUniformStatic", "randomBernoulliStatic", "custom"}
"""Layer types that may take no input (the specification's static sources)."""
MIN_INPUTS = {"reshapeLike": 2, "broadcastToLike": 2, "cropResize": 2, "dot": 2, "gather": 2, "gatherND": 2,
              "gatherAlongAxis": 2, "scatter": 3, "scatterND": 3, "scatterAlongAxis": 3, "whereBroadcastable": 3,
              "sliceBySize": 2, "reverseSeq": 2, "reshapeDynamic": 2, "broadcastToDynamic": 2, "sliceDynamic": 2,
              "NonMaximumSuppression": 2}
NETWORKS = ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor")


def validate(spec) -> None:
    """Refuse ``spec`` (a parsed ``Model_pb2.Model`` holding a neural network) when it breaks a rule above."""
    validate_enums(spec)
    validate_features(spec)
    network = getattr(spec, spec.WhichOneof("Type"))
    validate_layers(network.layers, in_body=False)


def validate_layers(layers, in_body: bool) -> None:
    """Each layer's counts of inputs and outputs and its rules, nested networks included (``in_body``: inside a
    loop's body, where ``loopBreak`` and ``loopContinue`` may be)."""
    for layer in layers:
        kind = layer.WhichOneof("layer")
        if kind is None:
            raise CoreMLError(UNTYPED, layer.name, "none")
        if kind in CONTROL_FLOW:
            _validate_control(layer, kind, in_body)
            continue
        least = 0 if kind in NO_INPUTS else MIN_INPUTS.get(kind, 1)
        if len(layer.input) < least or not layer.output:
            raise CoreMLError(f"{len(layer.input)} input(s) and {len(layer.output)} output(s); this layer type "
                              f"takes at least {least} input(s) and 1 output", layer.name, kind)
        rule = LAYER_RULES.get(kind)
        problem = None if rule is None else next(rule(getattr(layer, kind), len(layer.input)), None)
        if problem is not None:
            raise CoreMLError(problem, layer.name, kind)


CONTROL_FLOW = {"branch": (1, 1), "loop": (0, 1), "loopBreak": (0, 0), "loopContinue": (0, 0)}
"""The control-flow layers (``control.py``) and the inputs each takes (least, most); none has outputs."""


def _validate_control(layer, kind: str, in_body: bool) -> None:
    least, most = CONTROL_FLOW[kind]
    if not least <= len(layer.input) <= most or layer.output:
        takes = f"{least}" if least == most else f"{least} or {most}"
        raise CoreMLError(f"{len(layer.input)} input(s) and {len(layer.output)} output(s); this layer type takes "
                          f"{takes} input(s) and no output", layer.name, kind)
    if kind in ("loopBreak", "loopContinue"):
        if not in_body:
            raise CoreMLError("this layer is outside every loop's bodyNetwork (the seed allows it only there)",
                              layer.name, kind)
        return
    params = getattr(layer, kind)
    if kind == "branch":
        validate_layers(params.ifBranch.layers, in_body)
        validate_layers(params.elseBranch.layers, in_body)
        return
    condition = len(params.conditionNetwork.layers) > 0
    if condition and not params.conditionVar:
        raise CoreMLError("the loop has a conditionNetwork but no conditionVar naming the blob it produces",
                          layer.name, kind)
    if not condition and not layer.input and params.maxLoopIterations == 0:
        raise CoreMLError("the loop has no condition: no conditionNetwork, no iteration-count input and "
                          "maxLoopIterations 0", layer.name, kind)
    if condition and not any(params.conditionVar in sub.output for sub in _all_layers(params.conditionNetwork)):
        raise CoreMLError(f"the conditionNetwork produces no blob '{params.conditionVar}' (conditionVar)",
                          layer.name, kind)
    validate_layers(params.conditionNetwork.layers, in_body=False)
    validate_layers(params.bodyNetwork.layers, in_body=True)


def _all_layers(network):
    """Every layer of ``network`` and of the networks nested in it."""
    for layer in network.layers:
        yield layer
        kind = layer.WhichOneof("layer")
        if kind == "branch":
            yield from _all_layers(layer.branch.ifBranch)
            yield from _all_layers(layer.branch.elseBranch)
        elif kind == "loop":
            yield from _all_layers(layer.loop.conditionNetwork)
            yield from _all_layers(layer.loop.bodyNetwork)


# -- enums ---------------------------------------------------------------------------------------------
def validate_enums(spec) -> None:
    """Every enum value set anywhere in ``spec`` is one its enum defines."""
    for field, value in spec.ListFields():
        if field.name not in NETWORKS:
            _refuse(_undefined_in(field, value, ""), "model: ")
            continue
        for layer in value.layers:  # a layer's values are reported under its name
            problem = next(_undefined(layer, ""), None)
            if problem is not None:
                raise CoreMLError(problem, layer.name, layer.WhichOneof("layer") or "none")
        for sub, sub_value in value.ListFields():
            if sub.name != "layers":
                _refuse(_undefined_in(sub, sub_value, ""), f"{field.name}: ")


def _refuse(problems: Iterator[str], where: str) -> None:
    problem = next(problems, None)
    if problem is not None:
        raise CoreMLError(where + problem)


def _undefined(message, path: str) -> Iterator[str]:
    """A description of each undefined enum value in ``message`` and below it."""
    for field, value in message.ListFields():
        yield from _undefined_in(field, value, path)


def _undefined_in(field: FieldDescriptor, value, path: str) -> Iterator[str]:
    name = f"{path}{field.name}"
    if field.type == FieldDescriptor.TYPE_ENUM:
        defined = field.enum_type.values_by_number
        for v in (value if field.is_repeated else (value,)):
            if v not in defined:
                allowed = ", ".join(f"{n} ({defined[n].name})" for n in sorted(defined))
                yield f"{name} is {v}, which {field.enum_type.name} does not define (allowed: {allowed})"
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.GetOptions().map_entry:
            return
        if field.is_repeated:
            for i, item in enumerate(value):
                yield from _undefined(item, f"{name}[{i}].")
        else:
            yield from _undefined(value, f"{name}.")


# -- features ----------------------------------------------------------------------------------------
def validate_features(spec) -> None:
    """Declared input and output shapes: every dimension from 1 to 2**31 - 1, a rank OpenVX holds, a size
    within ``MAX_BLOB_BYTES``; a rank-5 model's multi-array inputs are [C] or [C, H, W] (the specification's
    RANK5_ARRAY_MAPPING)."""
    network = getattr(spec, spec.WhichOneof("Type"))
    exact = network.arrayInputShapeMapping == 1
    for role, features in (("input", spec.description.input), ("output", spec.description.output)):
        for feature in features:
            kind = feature.type.WhichOneof("Type")
            if kind == "multiArrayType":
                shape = [int(d) for d in feature.type.multiArrayType.shape]
                if role == "input" and not exact and len(shape) not in (1, 3):
                    raise CoreMLError(f"input '{feature.name}' has shape {shape}: a rank-5 model's multi-array "
                                      "inputs are [C] or [C, H, W] (arrayInputShapeMapping RANK5_ARRAY_MAPPING)")
            elif kind == "imageType":
                image = feature.type.imageType
                shape = [int(image.height), int(image.width)]
            else:
                continue
            problem = shape_problem(shape)
            if problem is not None:
                raise CoreMLError(f"{role} '{feature.name}' has shape {shape}: {problem}")


# -- layer parameters -------------------------------------------------------------------------------
Rule = Callable[[object, int], Iterator[str]]


def _values(p, name: str) -> list[int]:
    return [int(v) for v in getattr(p, name)]


def _positive(p, *names: str, low: int = 1) -> Iterator[str]:
    """Each named scalar field from ``low`` to 2**31 - 1."""
    for name in names:
        v = int(getattr(p, name))
        if not low <= v <= INT32_MAX:
            yield f"{name} is {v}, which does not fit the allowed range {low}..{INT32_MAX}"


def _list(p, name: str, lengths: Sequence[int] = (0, 2), low: int = 1, high: int = INT32_MAX) -> Iterator[str]:
    """A repeated integer field with one of ``lengths`` values, each from ``low`` to ``high``."""
    values = _values(p, name)
    if len(values) not in lengths:
        yield f"{name} has {len(values)} values {values}; allowed {_counts(lengths)} values"
    for v in values:
        if not low <= v <= high:
            yield f"{name} holds {v}, which does not fit the allowed range {low}..{high}"
            return


def _counts(lengths: Sequence[int]) -> str:
    if isinstance(lengths, range):
        return f"{lengths.start} to {lengths.stop - 1}"
    return " or ".join(map(str, lengths))


def _edges(amounts, name: str) -> Iterator[str]:
    """Border amounts of a padding: none or one pair per spatial axis [H, W], each within INT32."""
    edges = amounts.borderAmounts
    if len(edges) not in (0, 2):
        yield f"{name}.borderAmounts has {len(edges)} entries; allowed 0 or 2 ([H, W])"
    for e in edges:
        for v in (int(e.startEdgeSize), int(e.endEdgeSize)):
            if v > INT32_MAX:
                yield f"{name}.borderAmounts holds {v}, which does not fit the allowed range 0..{INT32_MAX}"
                return


def _window(p, padding_field: str) -> Iterator[str]:
    yield from _list(p, "kernelSize")
    yield from _list(p, "stride")
    kind = p.WhichOneof(padding_field)
    if kind == "valid":
        yield from _edges(p.valid.paddingAmounts, "valid.paddingAmounts")
    elif kind == "includeLastPixel":
        yield from _list(p.includeLastPixel, "paddingAmounts", low=0)


def _convolution(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "outputChannels")
    yield from _positive(p, "kernelChannels", "nGroups", low=0)
    yield from _window(p, "ConvolutionPaddingType")
    yield from _list(p, "dilationFactor")
    yield from _list(p, "outputShape")


def _pooling(p, inputs: int) -> Iterator[str]:
    if not p.globalPooling:
        yield from _window(p, "PoolingPaddingType")


def _inner_product(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "inputChannels", "outputChannels")


def _batchnorm(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "channels")


def _upsample(p, inputs: int) -> Iterator[str]:
    yield from _list(p, "scalingFactor")
    factors = list(p.fractionalScalingFactor)
    if len(factors) not in (0, 2) or any(not (math.isfinite(f) and f > 0) for f in factors):
        yield f"fractionalScalingFactor is {factors}; allowed none or 2 positive finite values"


def _resize(p, inputs: int) -> Iterator[str]:
    yield from _list(p, "targetSize")


def _recurrent(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "inputVectorSize", "outputVectorSize")


def _embedding(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "inputDim", "outputChannels")


def _embedding_nd(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "vocabSize", "embeddingSize")


def _reorganize(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "blockSize", low=2)


def _slice(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "stride", low=0)  # 0: unset, a step of 1


def _permute(p, inputs: int) -> Iterator[str]:
    yield from _list(p, "axis", (0, 4), low=0, high=3)


def _shape(name: str, lengths: Sequence[int] | None = None) -> Rule:
    def rule(p, inputs: int) -> Iterator[str]:
        values = _values(p, name)
        yield from _list(p, name, lengths or (len(values),))
        problem = shape_problem(values, f"{name} value") if values else None
        if problem is not None:
            yield f"{name} {values}: {problem}"
    return rule


def _reshape_static(p, inputs: int) -> Iterator[str]:
    values = _values(p, "targetShape")
    if not values or values.count(-1) > 1 or any(not (d == -1 or 1 <= d <= INT32_MAX) for d in values):
        yield f"targetShape is {values}; allowed dimensions from 1 to {INT32_MAX} and at most one -1"


def _rank_preserving_reshape(p, inputs: int) -> Iterator[str]:
    values = _values(p, "targetShape")
    if values.count(-1) > 1 or any(not -1 <= d <= INT32_MAX for d in values):
        yield f"targetShape is {values}; allowed dimensions from 0 (kept) to {INT32_MAX} and at most one -1"


def _expand_dims(p, inputs: int) -> Iterator[str]:
    axes = _values(p, "axes")
    if not axes or len(set(axes)) != len(axes):
        yield f"axes is {axes}; allowed one or more distinct axes"


def _tile(p, inputs: int) -> Iterator[str]:
    if inputs == 1:
        yield from _list(p, "reps", range(1, MAX_RANK + 1))


def _batched_matmul(p, inputs: int) -> Iterator[str]:
    if inputs == 1:
        yield from _positive(p, "weightMatrixFirstDimension", "weightMatrixSecondDimension")


def _split_nd(p, inputs: int) -> Iterator[str]:
    yield from _list(p, "splitSizes", range(2**16))


def _constant_pad(p, inputs: int) -> Iterator[str]:
    yield from _list(p, "padAmounts", range(2 * MAX_RANK + 1), low=0)


def _padding(p, inputs: int) -> Iterator[str]:
    yield from _edges(p.paddingAmounts, "paddingAmounts")


def _crop(p, inputs: int) -> Iterator[str]:
    yield from _edges(p.cropAmounts, "cropAmounts")
    yield from _list(p, "offset", low=0)


def _sliding_windows(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "windowSize", "step")


def _positive_size(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "size")


def _one_hot(p, inputs: int) -> Iterator[str]:
    if inputs == 1:
        yield from _positive(p, "oneHotVectorSize")


def _top_k(p, inputs: int) -> Iterator[str]:
    if inputs == 1:
        yield from _positive(p, "K")


def _range_static(p, inputs: int) -> Iterator[str]:
    values = (p.startValue, p.endValue, p.stepSizeValue)
    if not all(map(math.isfinite, values)) or p.stepSizeValue == 0:
        yield (f"startValue {p.startValue}, endValue {p.endValue} and stepSizeValue {p.stepSizeValue} must be "
               "finite, the step not 0")
    elif math.ceil((p.endValue - p.startValue) / p.stepSizeValue) < 1:
        yield f"the range from {p.startValue} to {p.endValue} by {p.stepSizeValue} holds no value"


def _pooling3d(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "kernelDepth", "kernelHeight", "kernelWidth", "strideDepth", "strideHeight",
                         "strideWidth")
    yield from _custom_padding(p)


def _convolution3d(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "outputChannels", "inputChannels", "nGroups", "kernelDepth", "kernelHeight",
                         "kernelWidth", "strideDepth", "strideHeight", "strideWidth", "dilationDepth",
                         "dilationHeight", "dilationWidth")
    yield from _custom_padding(p)


def _custom_padding(p) -> Iterator[str]:
    yield from _positive(p, *(f"customPadding{e}" for e in ("Front", "Back", "Top", "Bottom", "Left", "Right")),
                         low=0)


def _distribution(kind: str) -> Rule:
    """A random layer's parameters: a finite mean and standard deviation at least 0, finite bounds in order, a
    probability in 0..1; a static one's outputShape of rank 1 to 6, each size at least 1."""
    def rule(p, inputs: int) -> Iterator[str]:
        if kind == "normal" and not (math.isfinite(p.mean) and math.isfinite(p.stdDev) and p.stdDev >= 0):
            yield f"mean {p.mean} and stdDev {p.stdDev} must be finite, stdDev at least 0"
        if kind == "uniform" and not (math.isfinite(p.minVal) and math.isfinite(p.maxVal) and p.minVal <= p.maxVal):
            yield f"minVal {p.minVal} and maxVal {p.maxVal} must be finite, minVal at most maxVal"
        if kind == "bernoulli" and not 0 <= p.prob <= 1:
            yield f"prob {p.prob} is outside 0..1"
        if hasattr(p, "outputShape"):
            yield from _shape("outputShape", range(1, MAX_RANK + 1))(p, inputs)
    return rule


def _categorical(p, inputs: int) -> Iterator[str]:
    yield from _positive(p, "numSamples")
    if not (math.isfinite(p.temperature) and p.temperature > 0):
        yield f"temperature {p.temperature} must be finite and above 0"
    if not (math.isfinite(p.eps) and p.eps >= 0):
        yield f"eps {p.eps} must be finite and at least 0"


LAYER_RULES: dict[str, Rule] = {
    "convolution": _convolution, "pooling": _pooling, "innerProduct": _inner_product, "batchnorm": _batchnorm,
    "upsample": _upsample, "resizeBilinear": _resize, "cropResize": _resize,
    "simpleRecurrent": _recurrent, "gru": _recurrent, "uniDirectionalLSTM": _recurrent,
    "biDirectionalLSTM": _recurrent, "embedding": _embedding, "embeddingND": _embedding_nd,
    "reorganizeData": _reorganize, "slice": _slice, "permute": _permute,
    "reshape": _shape("targetShape", (3, 4)), "loadConstant": _shape("shape", (3,)),
    "loadConstantND": _shape("shape", range(1, MAX_RANK + 1)),
    "fillStatic": _shape("targetShape", range(1, MAX_RANK + 1)),
    "broadcastToStatic": _shape("targetShape", range(1, MAX_RANK + 1)),
    "layerNormalization": _shape("normalizedShape", range(1, MAX_RANK + 1)),
    "reshapeStatic": _reshape_static, "rankPreservingReshape": _rank_preserving_reshape,
    "expandDims": _expand_dims, "tile": _tile, "batchedMatmul": _batched_matmul, "splitND": _split_nd,
    "constantPad": _constant_pad, "padding": _padding, "crop": _crop,
    "slidingWindows": _sliding_windows, "oneHot": _one_hot, "topK": _top_k, "sliceBySize": _positive_size,
    "rangeStatic": _range_static, "pooling3d": _pooling3d, "convolution3d": _convolution3d,
    **{f"random{name}{form}": _distribution(name.lower()) for name in ("Normal", "Uniform", "Bernoulli")
       for form in ("Static", "Like", "Dynamic")},
    "categoricalDistribution": _categorical,
}
