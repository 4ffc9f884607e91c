"""A model breaking a rule of the CoreML specification is refused at load with a ``CoreMLError`` naming the layer,
the field and what is allowed (``openvx_nn/coreml/validation.py``); nothing else escapes, and nothing runs as if
the broken field held a default."""
from __future__ import annotations

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import builder

W = np.ones((3, 3, 2, 4), np.float32)


def _conv(b, padding="valid"):
    b.add_convolution("conv", 2, 4, 3, 3, 1, 1, padding, 1, W, None, False, input_name="x", output_name="y")
    return b.spec.neuralNetwork.layers[-1].convolution


def _pool(b):
    b.add_pooling("pool", 2, 2, 1, 1, "MAX", "VALID", "x", "y")
    return b.spec.neuralNetwork.layers[-1].pooling


def _refused(spec, *words: str) -> str:
    with pytest.raises(cm.CoreMLError) as caught:
        model = cm.load(spec)
        try:
            model.predict({f.name: np.ones(cm.model.feature_shape(f), np.float32) for f in spec.description.input})
        finally:
            model.close()
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


def _cnn(mutate) -> object:
    b = builder({"x": (2, 6, 6)}, ["y"])
    mutate(b)
    return b.spec


def _nd(add, mutate, shape=(2, 3)) -> object:
    b = builder({"x": shape}, ["y"], exact=True)
    add(b)
    mutate(b.spec.neuralNetwork.layers[-1])
    return b.spec


# -- enums: every enum field against the values its enum defines ----------------------------------------
def _asymmetry(b):
    _conv(b, "same").same.asymmetryMode = 999


def _upsample_mode(b):
    b.add_upsample("up", 2, 2, "x", "y", "NN")
    b.spec.neuralNetwork.layers[-1].upsample.mode = 999


def _linear_upsample_mode(b):
    b.add_upsample("up", 2, 2, "x", "y", "BILINEAR")
    b.spec.neuralNetwork.layers[-1].upsample.linearUpsampleMode = 7


def _pooling_type(b):
    _pool(b).type = 3


def _unary_type(b):
    b.add_unary("un", "x", "y", "abs")
    b.spec.neuralNetwork.layers[-1].unary.type = -1


def _reduce_mode(b):
    b.add_reduce("red", "x", "y", "CHW", "SUM")
    b.spec.neuralNetwork.layers[-1].reduce.mode = 10


def _reshape_mode(b):
    b.add_reshape("rs", "x", "y", (2, 36, 1), 0)
    b.spec.neuralNetwork.layers[-1].reshape.mode = 2


def _padding_mode_of_the_input(b):
    _conv(b)
    b.spec.description.input[0].type.multiArrayType.dataType = 12345


ENUMS = {
    "SamePadding.asymmetryMode": (_asymmetry, ("'conv'", "same.asymmetryMode is 999", "0 (BOTTOM_RIGHT_HEAVY)")),
    "upsample mode": (_upsample_mode, ("'up'", "mode is 999", "1 (BILINEAR)")),
    "upsample linearUpsampleMode": (_linear_upsample_mode, ("'up'", "linearUpsampleMode is 7",)),
    "pooling type": (_pooling_type, ("'pool'", "type is 3", "2 (L2)")),
    "unary type": (_unary_type, ("'un'", "type is -1", "7 (THRESHOLD)")),
    "reduce mode": (_reduce_mode, ("'red'", "mode is 10", "9 (ARGMAX)")),
    "reshape mode": (_reshape_mode, ("'rs'", "mode is 2", "1 (CHANNEL_LAST)")),
    "an input's data type": (_padding_mode_of_the_input, ("dataType is 12345", "65568 (FLOAT32)")),
}


@pytest.mark.parametrize("case", sorted(ENUMS))
def test_an_undefined_enum_value_is_refused_naming_the_field_and_the_defined_values(case):
    mutate, words = ENUMS[case]
    _refused(_cnn(mutate), *words)


def test_an_undefined_enum_value_in_an_nd_layer_is_refused():
    spec = _nd(lambda b: b.add_gelu("gelu", "x", "y", "EXACT"), lambda layer: setattr(layer.gelu, "mode", 3))
    _refused(spec, "'gelu'", "mode is 3", "2 (SIGMOID_APPROXIMATION)")


# -- window geometry ---------------------------------------------------------------------------------
def _set(getter, field, values):
    def mutate(b):
        params = getter(b)
        del getattr(params, field)[:]
        getattr(params, field).extend(values)
    return mutate


GEOMETRY = {
    "convolution stride 0": (_set(_conv, "stride", [0, 1]), ("'conv'", "stride holds 0", "allowed range 1..")),
    "convolution kernel 0": (_set(_conv, "kernelSize", [3, 0]), ("'conv'", "kernelSize holds 0")),
    "convolution dilation 0": (_set(_conv, "dilationFactor", [0, 0]), ("'conv'", "dilationFactor holds 0")),
    "convolution stride of one value": (_set(_conv, "stride", [2]), ("'conv'", "stride has 1 values",
                                                                      "allowed 0 or 2")),
    "convolution output shape 0": (_set(_conv, "outputShape", [0, 4]), ("'conv'", "outputShape holds 0")),
    "pooling stride 0": (_set(_pool, "stride", [1, 0]), ("'pool'", "stride holds 0")),
    "pooling kernel 0": (_set(_pool, "kernelSize", [0, 2]), ("'pool'", "kernelSize holds 0")),
    "pooling huge stride": (_set(_pool, "stride", [2**40, 1]), ("'pool'", f"stride holds {2**40}")),
}


@pytest.mark.parametrize("case", sorted(GEOMETRY))
def test_a_window_outside_its_range_is_refused(case):
    mutate, words = GEOMETRY[case]
    _refused(_cnn(mutate), *words)


def test_convolution_output_channels_of_0_are_refused():
    _refused(_cnn(lambda b: setattr(_conv(b), "outputChannels", 0)), "'conv'", "outputChannels is 0")


# -- sizes and counts -------------------------------------------------------------------------------------
def _field(add, field, value):
    def mutate(b):
        add(b)
        layer = b.spec.neuralNetwork.layers[-1]
        setattr(getattr(layer, layer.WhichOneof("layer")), field, value)
    return mutate


def _inner_product(b):
    b.add_flatten("f", 0, "x", "f")
    b.add_inner_product("fc", np.ones((3, 72), np.float32), None, 72, 3, False, "f", "y")


def _batchnorm(b):
    ones = np.ones(2, np.float32)
    b.add_batchnorm("bn", 2, ones, ones, ones, ones, "x", "y")


def _lrn(b):
    b.add_lrn("lrn", "x", "y", 1e-4, 0.75, 3, 1.0)


SIZES = {
    "inner product inputChannels": (_field(_inner_product, "inputChannels", 0), ("'fc'", "inputChannels is 0")),
    "inner product outputChannels": (_field(_inner_product, "outputChannels", 0), ("'fc'", "outputChannels is 0")),
    "batchnorm channels": (_field(_batchnorm, "channels", 0), ("'bn'", "channels is 0")),
    "lrn localSize": (_field(_lrn, "localSize", 0), ("'lrn'", "localSize 0 must be at least 1")),
    "lrn huge localSize": (_field(_lrn, "localSize", 2**64 - 1), ("'lrn'", "localSize 18446744073709551615",
                                                                  "allowed range 1..")),
    "upsample scalingFactor": (_set(lambda b: (b.add_upsample("up", 2, 2, "x", "y"),
                                               b.spec.neuralNetwork.layers[-1].upsample)[1], "scalingFactor",
                                    [0, 2]), ("'up'", "scalingFactor holds 0")),
    "reorganize blockSize": (_field(lambda b: b.add_reorganize_data("ro", "x", "y", "SPACE_TO_DEPTH", 2),
                                    "blockSize", 1), ("'ro'", "blockSize is 1", "allowed range 2..")),
    "permute axis": (_set(lambda b: (b.add_permute("pm", (0, 1, 2, 3), "x", "y"),
                                     b.spec.neuralNetwork.layers[-1].permute)[1], "axis", [0, 1, 2, 7]),
                     ("'pm'", "axis holds 7")),
}


@pytest.mark.parametrize("case", sorted(SIZES))
def test_a_size_the_specification_requires_positive_is_refused_at_0(case):
    mutate, words = SIZES[case]
    _refused(_cnn(mutate), *words)


def test_a_recurrent_layer_of_input_size_0_is_refused():
    h, i = 2, 3
    b = builder({"x": (i,)}, ["y"], output_shapes={"y": (h,)})
    b.add_simple_rnn("rnn", np.ones((h, h)), np.ones((h, i)), np.ones(h), h, i, "TANH", ["x"], ["y"])
    b.spec.neuralNetwork.layers[-1].simpleRecurrent.inputVectorSize = 0
    _refused(b.spec, "'rnn'", "inputVectorSize is 0")


def test_weights_of_the_wrong_count_are_refused():
    def truncate(b):
        del _conv(b).weights.floatValue[5:]
    _refused(_cnn(truncate), "'conv'", "weights holds 5 values", "needs 72")


# -- rank-N layers: shapes and axes --------------------------------------------------------------------------
def test_expand_dims_naming_one_axis_twice_is_refused():
    """The same axis written twice, or as -1 and its positive twin, once escaped as StopIteration."""
    spec = _nd(lambda b: b.add_expand_dims("ex", "x", "y", axes=[0]),
               lambda layer: layer.expandDims.axes.extend([-4]))
    _refused(spec, "'ex'", "axes")
    _refused(_nd(lambda b: b.add_expand_dims("ex", "x", "y", axes=[0]),
                 lambda layer: layer.expandDims.axes.extend([0])), "'ex'", "distinct axes")


def test_expand_dims_at_the_last_axis_runs():
    b = builder({"x": (2, 3)}, ["y"], exact=True)
    b.add_expand_dims("ex", "x", "y", axes=[-1])
    model = cm.load(b.spec)
    assert model.predict({"x": np.ones((2, 3), np.float32)})["y"].shape == (2, 3, 1)


@pytest.mark.parametrize("target", [[0, 6], [-2, -3], [-1, -1], []])
def test_a_static_reshape_to_a_target_without_a_size_is_refused(target):
    def mutate(layer):
        del layer.reshapeStatic.targetShape[:]
        layer.reshapeStatic.targetShape.extend(target)
    spec = _nd(lambda b: b.add_reshape_static("rs", "x", "y", [3, 2]), mutate)
    _refused(spec, "'rs'", "targetShape")


def test_tile_reps_of_0_are_refused():
    spec = _nd(lambda b: b.add_tile("tile", "x", "y", [1, 2]), lambda layer: layer.tile.reps.__setitem__(1, 0))
    _refused(spec, "'tile'", "reps holds 0")


def test_a_layer_without_outputs_is_refused():
    spec = _nd(lambda b: b.add_tile("tile", "x", "y", [1, 2]), lambda layer: layer.output.pop())
    _refused(spec, "'tile'", "0 output(s)")


def test_a_two_input_layer_given_one_is_refused():
    b = builder({"x": (2, 3), "z": (3, 2)}, ["y"], exact=True)
    b.add_reshape_like("rl", ["x", "z"], "y")
    b.spec.neuralNetwork.layers[-1].input.pop()
    _refused(b.spec, "'rl'", "at least 2 input(s)")


# -- declared features and blob sizes ----------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, -1, 2**31, 2**62])
def test_an_input_dimension_outside_its_range_is_refused(dim):
    def mutate(b):
        _conv(b)
        b.spec.description.input[0].type.multiArrayType.shape[1] = dim
    _refused(_cnn(mutate), "input 'x'", f"{dim}")


def test_an_input_too_large_for_memory_is_refused():
    def mutate(b):
        _conv(b)
        shape = b.spec.description.input[0].type.multiArrayType.shape
        shape[1], shape[2] = 2**20, 2**20
    _refused(_cnn(mutate), "input 'x'", "bytes")


def test_a_rank_5_model_input_of_rank_2_is_refused():
    def mutate(b):
        _conv(b)
        del b.spec.description.input[0].type.multiArrayType.shape[-1]
    _refused(_cnn(mutate), "input 'x'", "[C] or [C, H, W]")


def test_a_layer_making_a_blob_past_the_size_limit_is_refused_naming_it():
    _refused(_cnn(lambda b: b.add_upsample("up", 2**15, 2**15, "x", "y")), "'up'", "bytes")


def test_float16_weights_of_an_odd_byte_count_are_refused():
    def mutate(b):
        weights = _conv(b).weights
        data = np.ones(72, np.float16).tobytes()[:-1]
        weights.ClearField("floatValue")
        weights.float16Value = data
    _refused(_cnn(mutate), "'conv'", "float16Value has 143 bytes")


def test_a_mean_image_of_the_wrong_size_is_refused():
    b = builder({"x": (3, 4, 4)}, ["y"])
    b.add_activation("relu", "RELU", "x", "y")
    b.set_pre_processing_parameters(image_input_names=["x"], image_scale=1 / 255)
    b.spec.neuralNetwork.preprocessing[0].meanImage.meanImage.extend([0.5] * 47)
    _refused(b.spec, "'x preprocessing'", "meanImage holds 47 values", "needs 48")


def test_a_rank_n_output_of_a_rank_5_model_is_given_in_its_own_shape():
    """A rank-N layer (a reduction to one value) in a rank-5 model: the output keeps the rank the layer gives."""
    b = builder({"x": (3,)}, ["y"], output_shapes={"y": (1,)})
    b.add_reduce_sum("sum", "x", "y", axes=[0, 1, 2, 3, 4], keepdims=False)
    model = cm.load(b.spec)
    np.testing.assert_array_equal(model.predict({"x": np.ones(3, np.float32)})["y"], [3.0])
