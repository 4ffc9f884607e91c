"""The CoreML model fuzzer: protobuf-aware mutants of a few seed models, each loaded and run in its own child.

Seeds: a small CNN (convolution, batchnorm, activation, pooling, inner product, softmax), a model of the later
spec's rank-N layers, a recurrent one (LSTM, GRU, simple RNN) and the shipped sample. A mutant changes one to
three things of a copy of a seed's spec: an integer field set to 0, -1 or a huge value, an enum field to a value
its enum does not define, a bool flipped, a float made 0, negative, NaN or infinite, a repeated field shortened,
lengthened or cleared, weights truncated, an input's shape changed, a layer's input renamed, a layer duplicated
or removed, a name changed. ``Mutant.invalid`` is True only where the change certainly breaks the specification
(an undefined enum value, a stride or kernel size of 0, weights of the wrong count, an input dimension below 1):
such a model must be refused.

Usage: ``python tests/fuzz/coreml_fuzz.py --count 10000 --seed 1 --workers 2 --timeout 30``; it prints the summary
line (counts per outcome, ``tests/fuzz/mutants.py``) and every mutant that ended in a bad column.
"""
from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import Mutant, campaign, serial_library

serial_library()  # before the library is imported: a fork copies only the calling thread

import numpy as np
from google.protobuf.descriptor import FieldDescriptor as FD

HUGE_INTS = (2**31 - 1, 2**31, 2**32 + 1, 2**62, 2**63 - 1)
SIGNED = {FD.TYPE_INT32: 31, FD.TYPE_INT64: 63, FD.TYPE_SINT32: 31, FD.TYPE_SINT64: 63, FD.TYPE_SFIXED32: 31,
          FD.TYPE_SFIXED64: 63}
UNSIGNED = {FD.TYPE_UINT32: 32, FD.TYPE_UINT64: 64, FD.TYPE_FIXED32: 32, FD.TYPE_FIXED64: 64}
FLOATS = (FD.TYPE_FLOAT, FD.TYPE_DOUBLE)
WEIGHTS = "WeightParams"
# Fields whose value 0 (or less) certainly breaks the spec: window geometry and sizes the spec requires positive.
POSITIVE = {("ConvolutionLayerParams", "stride"), ("ConvolutionLayerParams", "kernelSize"),
            ("ConvolutionLayerParams", "dilationFactor"), ("ConvolutionLayerParams", "outputChannels"),
            ("PoolingLayerParams", "stride"), ("PoolingLayerParams", "kernelSize"),
            ("InnerProductLayerParams", "inputChannels"), ("InnerProductLayerParams", "outputChannels"),
            ("BatchnormLayerParams", "channels"), ("UpsampleLayerParams", "scalingFactor"),
            ("SimpleRecurrentLayerParams", "inputVectorSize"), ("SimpleRecurrentLayerParams", "outputVectorSize"),
            ("GRULayerParams", "inputVectorSize"), ("GRULayerParams", "outputVectorSize"),
            ("UniDirectionalLSTMLayerParams", "inputVectorSize"),
            ("UniDirectionalLSTMLayerParams", "outputVectorSize"), ("ArrayFeatureType", "shape"),
            ("TileLayerParams", "reps")}


# -- seeds -------------------------------------------------------------------------------------
def _builder(inputs, outputs, exact=False, output_shapes=None):
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder
    shapes = output_shapes or {}
    ins = [(n, datatypes.Array(*s)) for n, s in inputs.items()]
    outs = [(n, None) for n in outputs] if exact else \
        [(n, datatypes.Array(*shapes.get(n, (1, 1, 1)))) for n in outputs]
    return NeuralNetworkBuilder(ins, outs, disable_rank5_shape_mapping=exact)


def _cnn(rng):
    b = _builder({"x": (3, 8, 8)}, ["probs"])
    r = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.3
    b.add_convolution("conv1", 3, 4, 3, 3, 1, 1, "same", 1, r(3, 3, 3, 4), r(4), True, input_name="x",
                      output_name="c1")
    b.add_batchnorm("bn1", 4, r(4) + 1, r(4), r(4), np.abs(r(4)) + 0.5, "c1", "b1")
    b.add_activation("relu1", "RELU", "b1", "a1")
    b.add_pooling("pool1", 2, 2, 2, 2, "MAX", "VALID", "a1", "p1")
    b.add_convolution("conv2", 4, 6, 3, 3, 2, 2, "valid", 1, r(3, 3, 4, 6), None, False,
                      input_name="p1", output_name="c2", dilation_factors=[1, 1])
    b.add_activation("lrelu", "LEAKYRELU", "c2", "a2", params=[0.1])
    b.add_pooling("pool2", 2, 2, 1, 1, "AVERAGE", "SAME", "a2", "p2")
    b.add_upsample("up", 2, 2, "p2", "u2", "NN")
    b.add_pooling("gpool", 1, 1, 1, 1, "AVERAGE", "VALID", "u2", "g", is_global=True)
    b.add_flatten("flat", 0, "u2", "f")
    b.add_inner_product("fc", r(5, 6 * 2 * 2), r(5), 6 * 2 * 2, 5, True, "f", "logits")
    b.add_softmax("sm", "logits", "probs")
    return b.spec


def _classic(rng):
    b = _builder({"x": (4, 8, 8)}, ["y", "z"])
    b.add_padding("pad", 1, 1, 2, 0, 0.5, "x", "px")                 # [4, 10, 10]
    b.add_crop("crop", 1, 1, 1, 1, [], ["px"], "cx")                 # [4, 8, 8]
    b.add_reorganize_data("s2d", "cx", "rx", "SPACE_TO_DEPTH", 2)    # [16, 4, 4]
    b.add_lrn("lrn", "rx", "lx", 1e-4, 0.75, 5, 1.0)
    b.add_mvn("mvn", "lx", "mx", True, True, 1e-5)
    b.add_split("split", "mx", ["s1", "s2"])                         # 2 x [8, 4, 4]
    b.add_elementwise("mul", ["s1", "s2"], "ex", "MULTIPLY")
    b.add_scale("scale", rng.standard_normal(8).astype(np.float32), np.ones(8, np.float32), True, "ex", "scx",
                shape_scale=[8], shape_bias=[8])
    b.add_slice("slice", "scx", "slx", "width", 0, 3, 1)            # [8, 4, 3]
    b.add_elementwise("cat", ["slx", "slx"], "cat", "CONCAT")       # [16, 4, 3]
    b.add_permute("perm", (0, 2, 3, 1), "cat", "pm")                # [4, 3, 16]
    b.add_reshape("rsh", "pm", "rs", (16, 12, 1), 0)
    b.add_resize_bilinear("rb", "rs", "rb", 6, 2)
    b.add_load_constant("const", "k", rng.standard_normal(16 * 6 * 2).astype(np.float32), (16, 6, 2))
    b.add_elementwise("addk", ["rb", "k"], "ak", "ADD")
    b.add_l2_normalize("l2", "ak", "y")
    b.add_reduce("red", "cat", "rd", "HW", "AVG")                # [16, 1, 1]
    b.add_unary("un", "rd", "z", "exp")
    return b.spec


def _nd(rng):
    b = _builder({"x": (2, 3, 4)}, ["y", "z"], exact=True)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)
    b.add_transpose("tr", [0, 2, 1], "x", "t")                      # [2, 4, 3]
    b.add_expand_dims("ex", "t", "e", axes=[0])                     # [1, 2, 4, 3]
    b.add_squeeze("sq", "e", "s", axes=[0])                         # [2, 4, 3]
    b.add_reshape_static("rs", "s", "rsh", [4, 6])                  # [4, 6]
    b.add_split_nd("sp", "rsh", ["h1", "h2"], axis=1, num_splits=2)  # 2 x [4, 3]
    b.add_concat_nd("cat", ["h1", "h2"], "cc", axis=0)              # [8, 3]
    b.add_batched_mat_mul("mm", ["cc"], "m", weight_matrix_rows=3, weight_matrix_columns=5, W=r(3, 5), bias=r(5))
    b.add_softmax_nd("smx", "m", "sm", axis=-1)                     # [8, 5]
    b.add_slice_static("sl", "sm", "sl", [1, 0], [7, 5], [2, 1], [False, False], [False, False])
    b.add_tile("tile", "sl", "tl", [1, 2])                          # [3, 10]
    b.add_gelu("gelu", "tl", "gl", mode="TANH_APPROXIMATION")
    b.add_reduce_sum("red", "gl", "y", axes=[-1], keepdims=True)    # [3, 1]
    b.add_unary("un", "x", "ux", mode="abs")
    b.add_add_broadcastable("add", ["ux", "x"], "ad")
    b.add_constant_pad("pad", ["ad"], "pd", value=1.0, pad_amounts=[0, 0, 1, 1, 0, 2])
    b.add_flatten_to_2d("f2", "pd", "z", axis=1)
    return b.spec


def _recurrent(rng):
    hidden, size = 4, 3
    b = _builder({"x": (size,)}, ["y"], output_shapes={"y": (2,)})
    m = lambda n, rows, cols: [rng.standard_normal((rows, cols)).astype(np.float32) * 0.5 for _ in range(n)]
    v = lambda n: [rng.standard_normal(hidden).astype(np.float32) for _ in range(n)]
    b.add_simple_rnn("rnn", m(1, hidden, hidden)[0], m(1, hidden, size)[0], v(1)[0], hidden, size, "TANH", ["x"],
                     ["r"], True, False)
    b.add_gru("gru", m(3, hidden, hidden), m(3, hidden, hidden), v(3), hidden, hidden, ["r"], ["g"], output_all=True)
    b.add_unilstm("lstm", m(4, hidden, hidden), m(4, hidden, hidden), v(4), hidden, hidden, ["g"], ["l"],
                  peep=v(3), output_all=True, forget_bias=True, cell_clip_threshold=5.0)
    b.add_bidirlstm("bi", m(4, hidden, hidden), m(4, hidden, hidden), v(4), m(4, hidden, hidden),
                    m(4, hidden, hidden), v(4), hidden, hidden, ["l"], ["bl"], output_all=False)
    b.add_inner_product("fc", rng.standard_normal((2, 2 * hidden)).astype(np.float32), None, 2 * hidden, 2, False,
                        "bl", "y")
    return b.spec


def _image(rng):
    b = _builder({"x": (3, 6, 6)}, ["y"])
    b.add_convolution("conv", 3, 2, 3, 3, 1, 1, "same", 1, rng.standard_normal((3, 3, 3, 2)).astype(np.float32),
                      None, False, input_name="x", output_name="c")
    b.add_activation("relu", "RELU", "c", "y")
    b.set_pre_processing_parameters(image_input_names=["x"], is_bgr=False, red_bias=-0.5, green_bias=-0.25,
                                    blue_bias=0.1, image_scale=1 / 255)
    return b.spec


def _sample(rng):
    from coremltools.proto import Model_pb2

    import openvx_nn.coreml as cm
    spec = Model_pb2.Model()
    spec.ParseFromString(cm.SAMPLE_MODEL.read_bytes())
    return spec


SEEDS = {"cnn": _cnn, "classic": _classic, "image": _image, "nd": _nd, "recurrent": _recurrent, "sample": _sample}


def seeds() -> dict[str, object]:
    rng = np.random.default_rng(0)
    return {name: make(rng) for name, make in SEEDS.items()}


# -- mutations -----------------------------------------------------------------------------------
def _places(message, path=()) -> Iterator[tuple[tuple, object, object]]:
    """(path, message, field) of every field set in ``message`` and its sub-messages, plus the unset scalar
    fields of each message that holds a set one (a mutation may set what the seed left at its default)."""
    for field in message.DESCRIPTOR.fields:
        if field.type == FD.TYPE_MESSAGE:
            if field.is_repeated:
                value = getattr(message, field.name)
                if field.message_type.GetOptions().map_entry:
                    continue
                yield path + (field.name,), message, field
                for i, item in enumerate(value):
                    yield from _places(item, path + (f"{field.name}[{i}]",))
            elif message.HasField(field.name):
                yield from _places(getattr(message, field.name), path + (field.name,))
        else:
            yield path + (field.name,), message, field


def _int_values(field, current) -> list[int]:
    bits = SIGNED.get(field.type)
    values = [0, 1, 2, 3, 7, 100, current + 1, current - 1 if current else 5] + list(HUGE_INTS)
    if bits is not None:
        values += [-1, -2, -(2**bits)]
        limit = (-(2**bits), 2**bits - 1)
    else:
        limit = (0, 2**UNSIGNED[field.type] - 1)
        values += [limit[1]]
    return [v for v in values if limit[0] <= v <= limit[1]]


def _is_positive_rule(message, field) -> bool:
    if message.DESCRIPTOR.name == "PoolingLayerParams" and message.globalPooling:
        return False  # a global pooling's window is the whole input: kernelSize and stride are not read
    return (message.DESCRIPTOR.name, field.name) in POSITIVE


def _undefined_enum(message) -> bool:
    """Whether ``message`` or a message in it holds an enum value its enum does not define."""
    for field, value in message.ListFields():
        if field.type == FD.TYPE_ENUM:
            values = value if field.is_repeated else [value]
            if any(v not in field.enum_type.values_by_number for v in values):
                return True
        elif field.type == FD.TYPE_MESSAGE and not field.message_type.GetOptions().map_entry and \
                any(_undefined_enum(item) for item in (value if field.is_repeated else [value])):
            return True
    return False


def _scalar(rng: random.Random, message, field) -> tuple[str, bool]:
    """Mutate one non-message field of ``message``; returns (what, whether the model is certainly invalid)."""
    name = f"{message.DESCRIPTOR.name}.{field.name}"
    repeated = field.is_repeated
    if field.type == FD.TYPE_ENUM:
        defined = sorted(field.enum_type.values_by_number)
        if rng.random() < 0.6:
            value = rng.choice([max(defined) + 1, 999, -1, 2**31 - 1, min(defined) - 7])
            invalid = True
        else:
            value, invalid = rng.choice(defined), False
        if repeated:
            values = getattr(message, field.name)
            if not values:
                values.append(value)
            else:
                values[rng.randrange(len(values))] = value
        else:
            setattr(message, field.name, value)
        return f"{name} = {value}", invalid
    if repeated:
        values = getattr(message, field.name)
        choice = rng.random()
        if message.DESCRIPTOR.name == WEIGHTS and len(values):  # weights of the wrong count
            cut = rng.randrange(len(values))
            del values[cut:]
            return f"{name} truncated to {cut} values", True
        if choice < 0.25 and len(values):
            del values[rng.randrange(len(values))]
            return f"{name}: one value dropped", False
        if choice < 0.4:
            del values[:]
            return f"{name} cleared", False
        sample = _value(rng, field, values[0] if len(values) else None)
        if sample is None:
            return f"{name} left", False
        if choice < 0.6 or not len(values):
            values.append(sample)
            return f"{name} += [{sample!r}]", False
        i = rng.randrange(len(values))
        values[i] = sample
        bad = field.type not in FLOATS and _is_positive_rule(message, field) and sample < 1
        return f"{name}[{i}] = {sample!r}", bad
    if field.type == FD.TYPE_BYTES:
        data = getattr(message, field.name)
        cut = rng.randrange(len(data) + 1)
        setattr(message, field.name, data[:cut])
        return f"{name} truncated to {cut} bytes", message.DESCRIPTOR.name == WEIGHTS and 0 < cut < len(data)
    value = _value(rng, field, getattr(message, field.name))
    if value is None:
        return f"{name} left", False
    setattr(message, field.name, value)
    bad = field.type not in FLOATS and field.type != FD.TYPE_BOOL and _is_positive_rule(message, field) and \
        value < 1
    return f"{name} = {value!r}", bad


def _value(rng: random.Random, field, current):
    if field.type == FD.TYPE_BOOL:
        return not current
    if field.type in FLOATS:
        return rng.choice([0.0, -1.0, 1e38, -1e38, math.nan, math.inf, -math.inf, 1e-30, 2.5])
    if field.type == FD.TYPE_STRING:
        return rng.choice(["", "x", "y", "probs", "nonexistent", "a" * 300, "\u00e9t\u00e9", "c1"])
    if field.type in SIGNED or field.type in UNSIGNED:
        return rng.choice(_int_values(field, int(current or 0)))
    return None


def _structural(rng: random.Random, spec) -> tuple[str, bool]:
    """Change the layer graph or the declared inputs; returns (what, certainly invalid)."""
    network = getattr(spec, spec.WhichOneof("Type"))
    layers = network.layers
    choice = rng.randrange(7)
    if choice == 0 and len(layers) > 1:
        i = rng.randrange(len(layers))
        name = layers[i].name
        del layers[i]
        return f"layer '{name}' removed", False
    if choice == 1 and len(layers):
        i = rng.randrange(len(layers))
        layers.add().CopyFrom(layers[i])
        return f"layer '{layers[i].name}' duplicated", False
    if choice == 2 and len(layers) > 1:
        i, j = rng.sample(range(len(layers)), 2)
        a, b = type(layers[i])(), type(layers[j])()
        a.CopyFrom(layers[i]), b.CopyFrom(layers[j])
        layers[i].CopyFrom(b), layers[j].CopyFrom(a)
        return f"layers {i} and {j} swapped", False
    if choice == 3 and len(layers):
        layer = layers[rng.randrange(len(layers))]
        names = [n for other in layers for n in other.output] + [f.name for f in spec.description.input]
        if len(layer.input):
            k = rng.randrange(len(layer.input))
            layer.input[k] = rng.choice(names + ["missing"])
            return f"layer '{layer.name}' input {k} = '{layer.input[k]}'", False
        layer.input.append(rng.choice(names))
        return f"layer '{layer.name}' given an input", False
    if choice == 4 and len(layers):
        layer = layers[rng.randrange(len(layers))]
        if rng.random() < 0.5 and len(layer.output):
            layer.output.append(rng.choice([f"{layer.output[0]}_2", layer.output[0]]))
            return f"layer '{layer.name}' given another output", False
        layer.input.append(layer.input[0] if len(layer.input) else "x")
        return f"layer '{layer.name}' given another input", False
    features = spec.description.input
    if choice == 5 and len(features):
        feature = features[rng.randrange(len(features))]
        if feature.type.WhichOneof("Type") == "multiArrayType":
            shape = feature.type.multiArrayType.shape
            dim = rng.choice([0, -1, -5, 2**31, 2**40, 2**62, 1, 2, 7, 3])
            how = rng.random()
            if how < 0.6 and len(shape):
                i = rng.randrange(len(shape))
                shape[i] = dim
                return f"input '{feature.name}' dim {i} = {dim}", dim < 1
            if how < 0.8:
                shape.append(max(dim, 1))
                return f"input '{feature.name}' given another dim", False
            if len(shape):
                del shape[-1]
                return f"input '{feature.name}' lost its last dim", False
        if feature.type.WhichOneof("Type") == "imageType" and len(network.preprocessing):
            image = feature.type.imageType
            size = (1 if image.colorSpace == 10 else 3) * image.height * image.width
            count = rng.choice([size, size - 1, size + 3, 0]) if size < 2**20 else 4
            pre = network.preprocessing[0]
            pre.meanImage.meanImage[:] = [0.5] * count
            return f"input '{feature.name}' given a mean image of {count} values", count != size
        return f"input '{feature.name}' left", False
    if len(layers):  # a layer of another type: its parameters all defaults
        layer = layers[rng.randrange(len(layers))]
        kinds = [f.name for f in layer.DESCRIPTOR.oneofs_by_name["layer"].fields]
        kind = rng.choice(["convolution", "pooling", "innerProduct", "softmax", "reshapeStatic", "expandDims",
                           "upsample", "slice", "lrn", "padding", "reduce", rng.choice(kinds)])
        getattr(layer, kind).SetInParent()
        return f"layer '{layer.name}' made a default {kind}", False
    return "nothing", False


def _weight(message, field) -> float:
    """How often a field is picked: the integers and enums the lowerings compute with most, a weight array's
    values sometimes, its other fields (update flags, quantized forms) rarely."""
    if message.DESCRIPTOR.name == WEIGHTS:
        return 1.0 if field.name == "floatValue" else 0.1
    if field.type == FD.TYPE_ENUM or field.type in SIGNED or field.type in UNSIGNED:
        return 3.0
    return 1.0


def mutate(seed_spec, rng: random.Random) -> tuple[object, str, bool]:
    """A mutated copy of ``seed_spec``: (spec, how, certainly invalid)."""
    spec = type(seed_spec)()
    spec.CopyFrom(seed_spec)
    hows, invalid = [], False
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if rng.random() < 0.25:
            how, bad = _structural(rng, spec)
        else:
            network = getattr(spec, spec.WhichOneof("Type"))
            roots = list(network.layers) if rng.random() < 0.85 and len(network.layers) else \
                [network, spec.description]
            places = [(path, message, field) for path, message, field in _places(rng.choice(roots))
                      if field.type != FD.TYPE_MESSAGE]
            if not places:
                continue
            path, message, field = rng.choices(places, [_weight(m, f) for _, m, f in places])[0]
            how, bad = _scalar(rng, message, field)
            how = ".".join(path[:-1]) + ": " + how
        hows.append(how)
        invalid = invalid or bad
    # A later change may undo an earlier one (the field set again, the layer removed or given another type):
    # with several, only an undefined enum value still in the final spec certainly breaks it.
    if len(hows) > 1:
        invalid = _undefined_enum(spec)
    return spec, "; ".join(hows), invalid


def mutants(count: int, seed: int) -> Iterator[Mutant]:
    rng = random.Random(seed)
    specs = seeds()
    names = sorted(specs)
    for index in range(count):
        name = names[index % len(names)]
        spec, how, invalid = mutate(specs[name], rng)
        yield Mutant(index, f"{name}: {how}", spec.SerializeToString(), invalid)


# -- running -------------------------------------------------------------------------------------
def _inputs(model) -> dict[str, np.ndarray]:
    from openvx_nn.coreml.model import feature_shape
    rng = np.random.default_rng(0)
    return {name: rng.standard_normal(feature_shape(feature)).astype(np.float32)
            for name, feature in model.inputs.items()}


def run(mutant: Mutant) -> None:
    from coremltools.proto import Model_pb2

    import openvx_nn.coreml as cm
    spec = Model_pb2.Model()
    spec.ParseFromString(mutant.data)
    model = cm.load(spec)
    model.predict(_inputs(model))


def documented() -> tuple[type, ...]:
    import openvx_nn.coreml as cm
    return (cm.CoreMLError,)


def warm_up() -> None:
    """Load and run every seed once here, so that the children inherit compiled kernels instead of compiling."""
    import openvx_nn.coreml as cm
    for spec in seeds().values():
        for nhwc in (True, False):
            model = cm.load(spec, nhwc=nhwc)
            model.predict(_inputs(model))


def fuzz(count: int, seed: int = 1, workers: int = 2, timeout: float = 30.0, progress=None):
    warm_up()
    return campaign(mutants(count, seed), run, documented(), timeout=timeout, workers=workers, progress=progress)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)

    start = time.monotonic()

    def progress(summary):
        done = sum(summary.counts.values())
        if done % 500 == 0:
            summary.seconds = time.monotonic() - start  # the campaign sets it only at the end
            print(summary.line(f"coreml (so far, seed {args.seed})"), flush=True)

    summary = fuzz(args.count, args.seed, args.workers, args.timeout, progress)
    print(summary.line("coreml"), flush=True)
    for index, how, outcome, detail in summary.bad:
        print(f"  #{index} {outcome}: {how}\n      {detail}")
    return 0 if summary.clean else 1


if __name__ == "__main__":
    sys.exit(main())
