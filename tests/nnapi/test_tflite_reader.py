"""``openvx_nn.nnapi.tflite``: small ``.tflite`` files, one operator each (written here with LiteRT's schema),
mapped onto NNAPI and run by us, against LiteRT's own reference kernels on the same file.

Float outputs agree within float32 rounding of sums taken in another order; quantized ones (uint8, and int8
run as uint8 moved by 128) byte for byte, NNAPI's requantization being TFLite's.  Refusals name the operator
and its index.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert")

from benchmarks.tflite_models import Writer
from openvx_nn.nnapi import NNAPIError, tflite

FLOAT_TOLERANCE = 2e-5
"""Largest |ours - LiteRT| over max(1, largest |LiteRT|)."""


class Var:
    """A model input of ``shape`` filled with uniform values in [low, high) (quantized tensors: all codes)."""

    def __init__(self, shape, low: float = -2.0, high: float = 2.0):
        self.shape, self.low, self.high = tuple(shape), low, high


def litert(model: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    interpreter = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    for detail, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]


def options(w: Writer, name: str, **fields):
    """(the BuiltinOptions code, the options object) of the schema's ``name`` table."""
    table = getattr(w.s, name + "T")()
    for key, value in fields.items():
        setattr(table, key, value)
    return getattr(w.s.BuiltinOptions, name), table


def one_operator(code, inputs: list, out_shape, option=None, kind: str = "FLOAT32", q=None, out_q=None,
                 seed: int = 0):
    """A model of one operator: ``inputs`` are ``Var`` (model inputs of type ``kind``, quantized by ``q``) or
    arrays (constants of their dtype); returns (file bytes, the input arrays)."""
    w = Writer()
    types = w.s.TensorType
    rng = np.random.default_rng(seed)
    indexes, feeds, model_inputs = [], [], []
    for item in inputs:
        if isinstance(item, Var):
            k = w.tensor(item.shape, getattr(types, kind), **(q or {}))
            if kind == "FLOAT32":
                x = rng.uniform(item.low, item.high, item.shape).astype(np.float32)
            else:
                info = np.iinfo(np.uint8 if kind == "UINT8" else np.int8)
                x = rng.integers(info.min, info.max + 1, item.shape).astype(info.dtype)
            feeds.append(x)
            model_inputs.append(k)
        elif isinstance(item, tuple):  # (array, quantization keywords)
            array, quant = item
            k = w.tensor(array.shape, _kind(w, array), array, **quant)
        else:
            k = w.tensor(item.shape, _kind(w, item), item)
        indexes.append(k)
    out = w.tensor(out_shape, getattr(types, kind), **(out_q or {}))
    w.operator(code, indexes, out, *(option or ()))
    return w.serialize(model_inputs, [out], "case"), feeds


def _kind(w: Writer, array: np.ndarray) -> int:
    return {np.float32: w.s.TensorType.FLOAT32, np.float16: w.s.TensorType.FLOAT16, np.int32: w.s.TensorType.INT32,
            np.uint8: w.s.TensorType.UINT8, np.int8: w.s.TensorType.INT8}[array.dtype.type]


def assert_matches_litert(model: bytes, feeds: list[np.ndarray], ours_model: bytes | None = None,
                          steps: int = 0) -> None:
    """``ours_model`` (default: ``model``) through our mapping against ``model`` in LiteRT; integers within
    ``steps`` LSB (0: the same bytes)."""
    ours = tflite.load(ours_model or model).compile()(*feeds)
    theirs = litert(model, feeds)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        if a.dtype.kind == "f":
            worst = float(np.max(np.abs(a.astype(np.float64) - b))) / max(1.0, float(np.max(np.abs(b))))
            assert worst <= FLOAT_TOLERANCE, worst
        else:
            off = np.abs(a.astype(np.int64) - b)
            assert off.max() <= steps and np.mean(off == 0) >= 0.95, (off.max(), np.mean(off == 0))


def code(name: str) -> int:
    from ai_edge_litert import schema_py_generated as s
    return getattr(s.BuiltinOperator, name)


def weights(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("seed", range(4))
def test_conv_2d_and_depthwise_over_random_geometries_match_litert(seed):
    rng = np.random.default_rng(seed)
    size, cin, cout = int(rng.integers(5, 12)), int(rng.integers(1, 6)), int(rng.integers(1, 7))
    kernel, stride, pad = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(0, 2))
    dilation = int(rng.integers(1, 3)) if stride == 1 else 1
    act = int(rng.integers(0, 4))
    w = Writer()
    out = -(-size // stride) if pad == 0 else (size - dilation * (kernel - 1) - 1) // stride + 1
    conv = options(w, "Conv2DOptions", padding=pad, strideW=stride, strideH=stride, fusedActivationFunction=act,
                   dilationWFactor=dilation, dilationHFactor=dilation)
    bias = weights(rng, (cout,)) if seed % 2 else np.zeros(cout, np.float32)
    inputs = [Var((1, size, size, cin)), weights(rng, (cout, kernel, kernel, cin)), bias]
    model, feeds = one_operator(code("CONV_2D"), inputs, (1, out, out, cout), conv, seed=seed)
    # an even seed omits the bias (index -1) on our side; LiteRT's reference kernel wants one: zeros
    assert_matches_litert(model, feeds, model if seed % 2 else _omit_bias(model))
    multiplier = 1 + seed % 2
    dw = options(w, "DepthwiseConv2DOptions", padding=pad, strideW=stride, strideH=stride, depthMultiplier=multiplier,
                 fusedActivationFunction=act, dilationWFactor=dilation, dilationHFactor=dilation)
    model, feeds = one_operator(code("DEPTHWISE_CONV_2D"), [Var((1, size, size, cin)),
                                weights(rng, (1, kernel, kernel, cin * multiplier)), weights(rng, (cin * multiplier,))],
                                (1, out, out, cin * multiplier), dw, seed=seed)
    assert_matches_litert(model, feeds)


def _omit_bias(model: bytes) -> bytes:
    """The one operator's bias input replaced by -1 (omitted)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s
    m = s.ModelT.InitFromPackedBuf(model, 0)
    m.subgraphs[0].operators[0].inputs = list(m.subgraphs[0].operators[0].inputs)[:2] + [-1]
    builder = flatbuffers.Builder(1024)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def test_float16_weights_behind_dequantize_are_widened_as_constants():
    rng = np.random.default_rng(3)
    w = Writer()
    t = w.s.TensorType
    x = w.tensor((1, 6, 6, 3), t.FLOAT32)
    half = w.tensor((4, 3, 3, 3), t.FLOAT16, weights(rng, (4, 3, 3, 3), np.float16))
    wide = w.tensor((4, 3, 3, 3), t.FLOAT32)
    b16 = w.tensor((4,), t.FLOAT16, weights(rng, (4,), np.float16))
    b32 = w.tensor((4,), t.FLOAT32)
    out = w.tensor((1, 6, 6, 4), t.FLOAT32)
    w.operator(code("DEQUANTIZE"), [half], wide)
    w.operator(code("DEQUANTIZE"), [b16], b32)
    w.operator(code("CONV_2D"), [x, wide, b32], out, *options(w, "Conv2DOptions", padding=0, strideW=1, strideH=1))
    model = w.serialize([x], [out], "fp16")
    loaded = tflite.load(model)
    from openvx_nn.nnapi import OperationType
    assert [op.type for op in loaded.model.to_hal().operations] == [OperationType.CONV_2D]
    assert_matches_litert(model, [rng.uniform(-1, 1, (1, 6, 6, 3)).astype(np.float32)])
    assert len(loaded.kept) >= 2  # the widened arrays are referenced, not copied


def test_the_files_constants_are_writable_views_of_one_buffer_read_from_a_path_or_bytes(tmp_path):
    # NNAPI's lowering reads a writable constant in place (CONSTANT_REFERENCE) and copies a read-only one: the
    # reader keeps the file in one writable buffer, so the weights are held once, not twice.
    from openvx_nn.nnapi.tflite import flatbuffer
    rng = np.random.default_rng(4)
    model, feeds = one_operator(code("CONV_2D"), [Var((1, 5, 5, 2)), weights(rng, (3, 3, 3, 2), np.float32),
                                                  weights(rng, (3,), np.float32)], (1, 3, 3, 3),
                                options(Writer(), "Conv2DOptions", padding=1, strideW=1, strideH=1))
    path = tmp_path / "conv.tflite"
    path.write_bytes(model)
    for source in (model, path, str(path), memoryview(model)):
        constants = [t.data for t in flatbuffer.read(source).tensors if t.data is not None]
        assert len(constants) == 2 and all(c.flags.writeable for c in constants)
        buffers = {id(_root(c)) for c in constants}
        assert len(buffers) == 1 and isinstance(_root(constants[0]), bytearray)
    assert_matches_litert(model, feeds)


def _root(array: np.ndarray):
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


def test_fully_connected_with_and_without_kept_dimensions_matches_litert():
    rng = np.random.default_rng(4)
    w = Writer()
    fc = options(w, "FullyConnectedOptions", fusedActivationFunction=1)
    assert_matches_litert(*one_operator(code("FULLY_CONNECTED"), [Var((3, 8)), weights(rng, (5, 8)),
                                                                 weights(rng, (5,))], (3, 5), fc))
    keep = options(w, "FullyConnectedOptions", keepNumDims=True)
    assert_matches_litert(*one_operator(code("FULLY_CONNECTED"), [Var((1, 2, 8)), weights(rng, (5, 8)),
                                                                 weights(rng, (5,))], (1, 2, 5), keep))


@pytest.mark.parametrize("name", ["MAX_POOL_2D", "AVERAGE_POOL_2D", "L2_POOL_2D"])
@pytest.mark.parametrize("pad,stride,kernel", [(0, 2, 2), (1, 1, 3), (0, 2, 3)])
def test_pools_match_litert(name, pad, stride, kernel):
    w = Writer()
    size = 7
    out = -(-size // stride) if pad == 0 else (size - kernel) // stride + 1
    pool = options(w, "Pool2DOptions", padding=pad, strideW=stride, strideH=stride, filterWidth=kernel,
                   filterHeight=kernel, fusedActivationFunction=1 if name == "AVERAGE_POOL_2D" else 0)
    low = 0.0 if name == "L2_POOL_2D" else -2.0
    assert_matches_litert(*one_operator(code(name), [Var((1, size, size, 3), low)], (1, out, out, 3), pool))


@pytest.mark.parametrize("name", ["ADD", "MUL", "SUB", "DIV"])
def test_binary_operations_broadcast_and_fuse_activations_like_litert(name):
    rng = np.random.default_rng(5)
    w = Writer()
    option = options(w, name.capitalize() + "Options", fusedActivationFunction=3)
    constant = rng.uniform(0.5, 2, (1, 1, 4)).astype(np.float32)
    assert_matches_litert(*one_operator(code(name), [Var((1, 3, 5, 4)), constant], (1, 3, 5, 4), option))
    assert_matches_litert(*one_operator(code(name), [Var((2, 3, 4)), Var((2, 3, 4), 0.5, 2)], (2, 3, 4),
                                        options(w, name.capitalize() + "Options")))


@pytest.mark.parametrize("name", ["MAXIMUM", "MINIMUM", "PRELU"])
def test_pairs_match_litert(name):
    rng = np.random.default_rng(6)
    second = rng.standard_normal((1, 1, 4)).astype(np.float32)
    assert_matches_litert(*one_operator(code(name), [Var((1, 3, 5, 4)), second], (1, 3, 5, 4)))


@pytest.mark.parametrize("name,low", [("RELU", -2), ("RELU6", -8), ("RELU_N1_TO_1", -2), ("LOGISTIC", -6),
                                      ("TANH", -3), ("EXP", -3), ("LOG", 0.1), ("ABS", -2), ("NEG", -2),
                                      ("SQRT", 0.0), ("RSQRT", 0.1), ("SIN", -3), ("FLOOR", -3),
                                      ("L2_NORMALIZATION", -2), ("HARD_SWISH", -5)])
def test_unary_operations_match_litert(name, low):
    high = 8 if name == "RELU6" else 5 if name == "HARD_SWISH" else 3
    assert_matches_litert(*one_operator(code(name), [Var((1, 4, 5, 6), low, high)], (1, 4, 5, 6)))


def test_leaky_relu_softmax_and_block_moves_match_litert():
    w = Writer()
    x = Var((1, 4, 6, 8))
    assert_matches_litert(*one_operator(code("LEAKY_RELU"), [x], (1, 4, 6, 8), options(w, "LeakyReluOptions",
                                                                                         alpha=0.2)))
    assert_matches_litert(*one_operator(code("SOFTMAX"), [Var((3, 7))], (3, 7), options(w, "SoftmaxOptions",
                                                                                          beta=1.5)))
    assert_matches_litert(*one_operator(code("DEPTH_TO_SPACE"), [x], (1, 8, 12, 2),
                                        options(w, "DepthToSpaceOptions", blockSize=2)))
    assert_matches_litert(*one_operator(code("SPACE_TO_DEPTH"), [x], (1, 2, 3, 32),
                                        options(w, "SpaceToDepthOptions", blockSize=2)))


def test_pads_reshapes_and_concatenation_match_litert():
    w = Writer()
    paddings = np.array([[0, 0], [1, 2], [0, 3], [1, 0]], np.int32)
    assert_matches_litert(*one_operator(code("PAD"), [Var((1, 3, 4, 2)), paddings], (1, 6, 7, 3)))
    assert_matches_litert(*one_operator(code("PADV2"), [Var((1, 3, 4, 2)), paddings, np.array([0.5], np.float32)],
                                        (1, 6, 7, 3)))
    shape = np.array([2, -1], np.int32)
    assert_matches_litert(*one_operator(code("RESHAPE"), [Var((1, 2, 3, 4)), shape], (2, 12),
                                        options(w, "ReshapeOptions", newShape=[2, -1])))
    assert_matches_litert(*one_operator(code("EXPAND_DIMS"), [Var((2, 3)), np.array([1], np.int32)], (2, 1, 3)))
    assert_matches_litert(*one_operator(code("SQUEEZE"), [Var((1, 3, 1, 4))], (3, 4),
                                        options(w, "SqueezeOptions", squeezeDims=[0, 2])))
    assert_matches_litert(*one_operator(code("CONCATENATION"), [Var((1, 2, 3, 4)), Var((1, 2, 3, 5))], (1, 2, 3, 9),
                                        options(w, "ConcatenationOptions", axis=-1)))
    assert_matches_litert(*one_operator(code("TRANSPOSE"), [Var((2, 3, 4)), np.array([2, 0, 1], np.int32)],
                                        (4, 2, 3)))


def test_resizes_reductions_and_strided_slice_match_litert():
    w = Writer()
    size = np.array([7, 9], np.int32)
    assert_matches_litert(*one_operator(code("RESIZE_BILINEAR"), [Var((1, 4, 5, 3)), size], (1, 7, 9, 3),
                                        options(w, "ResizeBilinearOptions")))
    assert_matches_litert(*one_operator(code("RESIZE_NEAREST_NEIGHBOR"), [Var((1, 4, 5, 3)), size], (1, 7, 9, 3),
                                        options(w, "ResizeNearestNeighborOptions")))
    axes = np.array([1, 2], np.int32)
    for name in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"):
        for keep in (False, True):
            out = (1, 1, 1, 3) if keep else (1, 3)
            assert_matches_litert(*one_operator(code(name), [Var((1, 4, 5, 3), 0.5, 1.5), axes], out,
                                                options(w, "ReducerOptions", keepDims=keep)))
    # a MEAN over height and width maps to a whole-map AVERAGE_POOL_2D (above); over other axes to MEAN
    assert_matches_litert(*one_operator(code("MEAN"), [Var((2, 4, 5, 3)), np.array([-1, 0], np.int32)], (4, 5),
                                        options(w, "ReducerOptions", keepDims=False)))
    bounds = [np.array(v, np.int32) for v in ([0, 1, 0], [1, 4, 6], [1, 2, 2])]
    assert_matches_litert(*one_operator(code("STRIDED_SLICE"), [Var((1, 5, 6))] + bounds, (2, 3),
                                        options(w, "StridedSliceOptions", beginMask=4, endMask=0,
                                                shrinkAxisMask=1)))


def test_transpose_conv_matches_litert():
    rng = np.random.default_rng(7)
    w = Writer()
    shape = np.array([1, 8, 8, 3], np.int32)
    option = options(w, "TransposeConvOptions", padding=0, strideW=2, strideH=2)
    model, feeds = one_operator(code("TRANSPOSE_CONV"), [shape, weights(rng, (3, 3, 3, 2)), Var((1, 4, 4, 2)),
                                                         weights(rng, (3,))], (1, 8, 8, 3), option)
    # the one model input is the third operator input: feed order is the model's
    assert_matches_litert(model, feeds)


def quant(scale: float, zero: int) -> dict:
    return {"scales": [scale], "zero_points": [zero]}


def test_uint8_convolution_pool_and_add_match_litert_byte_for_byte():
    rng = np.random.default_rng(8)
    w = Writer()
    q_in, q_out = quant(0.05, 120), quant(0.09, 110)
    filt = (rng.integers(0, 256, (4, 3, 3, 2)).astype(np.uint8), quant(0.01, 130))
    bias = (rng.integers(-500, 500, (4,)).astype(np.int32), quant(0.05 * 0.01, 0))
    conv = options(w, "Conv2DOptions", padding=0, strideW=1, strideH=2, fusedActivationFunction=1)
    assert_matches_litert(*one_operator(code("CONV_2D"), [Var((1, 7, 6, 2)), filt, bias], (1, 4, 6, 4), conv,
                                        kind="UINT8", q=q_in, out_q=q_out))
    pool = options(w, "Pool2DOptions", padding=1, strideW=2, strideH=2, filterWidth=2, filterHeight=2)
    assert_matches_litert(*one_operator(code("MAX_POOL_2D"), [Var((1, 6, 6, 3))], (1, 3, 3, 3), pool,
                                        kind="UINT8", q=q_in, out_q=q_in))
    assert_matches_litert(*one_operator(code("ADD"), [Var((1, 4, 4, 3)), Var((1, 4, 4, 3))], (1, 4, 4, 3),
                                        options(w, "AddOptions"), kind="UINT8", q=q_in, out_q=q_out))


def test_int8_per_channel_convolutions_run_as_uint8_and_match_litert_within_one_step():
    """Per-channel filters: NNAPI's requantization (a multiplier per channel from float32 scales) lands one
    step from TFLite's reference on a few values; uint8 per-tensor layers agree byte for byte."""
    rng = np.random.default_rng(9)
    w = Writer()
    q_in, q_out = quant(0.04, -5), quant(0.1, 3)
    scales = rng.uniform(0.005, 0.02, 4)
    filt = (rng.integers(-127, 128, (4, 3, 3, 2)).astype(np.int8), {"scales": scales, "zero_points": [0] * 4})
    bias = (rng.integers(-300, 300, (4,)).astype(np.int32), {"scales": 0.04 * scales, "zero_points": [0] * 4})
    conv = options(w, "Conv2DOptions", padding=0, strideW=1, strideH=1)
    assert_matches_litert(*one_operator(code("CONV_2D"), [Var((1, 5, 5, 2)), filt, bias], (1, 5, 5, 4), conv,
                                        kind="INT8", q=q_in, out_q=q_out), steps=1)
    dw_filter = (rng.integers(-127, 128, (1, 3, 3, 4)).astype(np.int8),
                 {"scales": scales, "zero_points": [0] * 4, "axis": 3})
    dw = options(w, "DepthwiseConv2DOptions", padding=1, strideW=1, strideH=1, depthMultiplier=1)
    assert_matches_litert(*one_operator(code("DEPTHWISE_CONV_2D"), [Var((1, 5, 5, 4)), dw_filter, bias],
                                        (1, 3, 3, 4), dw, kind="INT8", q=q_in, out_q=q_out), steps=1)


def test_operators_nnapi_1_2_cannot_express_are_refused_by_name_and_index():
    w = Writer()
    model, _ = one_operator("MyCustomOp", [Var((1, 4))], (1, 4))
    with pytest.raises(tflite.Unsupported, match=r"operator 0 \(CUSTOM:MyCustomOp\)"):
        tflite.load(model)
    half_pixel = options(w, "ResizeBilinearOptions", halfPixelCenters=True)
    model, _ = one_operator(code("RESIZE_BILINEAR"), [Var((1, 2, 2, 1)), np.array([4, 4], np.int32)], (1, 4, 4, 1),
                            half_pixel)
    with pytest.raises(tflite.Unsupported, match=r"operator 0 \(RESIZE_BILINEAR\): half_pixel_centers"):
        tflite.load(model)
    tanh = options(w, "AddOptions", fusedActivationFunction=4)
    model, _ = one_operator(code("ADD"), [Var((1, 4)), Var((1, 4))], (1, 4), tanh)
    with pytest.raises(tflite.Unsupported, match=r"operator 0 \(ADD\): fused activation 4"):
        tflite.load(model)
    with pytest.raises(NNAPIError, match="TFL3"):
        tflite.load(b"not a flatbuffer at all")


@pytest.mark.parametrize("activation", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_an_activation_after_an_add_becomes_its_fused_activation_unless_the_sum_is_read_elsewhere(activation):
    from openvx_nn.nnapi import OperationType
    rng = np.random.default_rng(11)
    for shared in (False, True):
        w = Writer()
        t = w.s.TensorType
        a, b = w.tensor((1, 4, 5, 3), t.FLOAT32), w.tensor((1, 4, 5, 3), t.FLOAT32)
        total, out = w.tensor((1, 4, 5, 3), t.FLOAT32), w.tensor((1, 4, 5, 3), t.FLOAT32)
        w.operator(code("ADD"), [a, b], total, *options(w, "AddOptions"))
        w.operator(code(activation), [total], out)
        outputs = [out]
        if shared:  # the sum is read by a second operator: the activation stays an operation
            doubled = w.tensor((1, 4, 5, 3), t.FLOAT32)
            w.operator(code("MUL"), [total, total], doubled, *options(w, "MulOptions"))
            outputs.append(doubled)
        model = w.serialize([a, b], outputs, "fold")
        kinds = [op.type for op in tflite.load(model).model.to_hal().operations]
        assert (OperationType.ADD in kinds) and (len(kinds) == (3 if shared else 1)), kinds
        feeds = [rng.uniform(-3, 3, (1, 4, 5, 3)).astype(np.float32) for _ in range(2)]
        assert_matches_litert(model, feeds)


@pytest.mark.parametrize("seed", range(6))
def test_an_activation_after_a_float_convolution_or_dense_layer_folds_into_it_with_the_same_bytes(seed):
    """CONV_2D, DEPTHWISE_CONV_2D (3x3: a window, not the 1x1 scale and shift) or FULLY_CONNECTED with no fused
    activation, then RELU, RELU6 or RELU_N1_TO_1, over random shapes: folded, one operation and the bytes of the
    same model whose convolution output is also a model output (the activation then stays its own operation);
    both within float32 rounding of LiteRT's reference kernels running them apart."""
    from openvx_nn.nnapi import OperationType
    rng = np.random.default_rng(40 + seed)
    name = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")[seed % 3]
    activation = ("RELU", "RELU6", "RELU_N1_TO_1")[int(rng.integers(0, 3))]
    size, cin, cout = int(rng.integers(3, 14)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
    if name == "FULLY_CONNECTED":
        in_shape, out_shape, filter_shape = (size, cin), (size, cout), (cout, cin)
    elif name == "CONV_2D":
        in_shape, out_shape, filter_shape = (1, size, size, cin), (1, size, size, cout), (cout, 3, 3, cin)
    else:
        in_shape, out_shape, filter_shape = (1, size, size, cin), (1, size, size, cin), (1, 3, 3, cin)
    filter_values, bias_values = weights(rng, filter_shape), weights(rng, (out_shape[-1],))
    results = []
    for shared in (False, True):
        w = Writer()
        t = w.s.TensorType
        table, fields = {"FULLY_CONNECTED": ("FullyConnectedOptions", {}),
                         "CONV_2D": ("Conv2DOptions", {"padding": 0, "strideW": 1, "strideH": 1}),
                         "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions", {"padding": 0, "strideW": 1, "strideH": 1,
                                                                          "depthMultiplier": 1})}[name]
        opts = options(w, table, **fields)
        kernel = w.tensor(filter_shape, t.FLOAT32, filter_values)
        x = w.tensor(in_shape, t.FLOAT32)
        b = w.tensor(bias_values.shape, t.FLOAT32, bias_values)
        summed, out = w.tensor(out_shape, t.FLOAT32), w.tensor(out_shape, t.FLOAT32)
        w.operator(code(name), [x, kernel, b], summed, *opts)
        w.operator(code(activation), [summed], out)
        model = w.serialize([x], [out, summed] if shared else [out], "fold")
        kinds = [op.type for op in tflite.load(model).model.to_hal().operations]
        assert len(kinds) == (2 if shared else 1), kinds
        assert getattr(OperationType, name) in kinds
        feeds = [np.random.default_rng(seed).uniform(-3, 3, in_shape).astype(np.float32)]
        results.append(tflite.load(model).compile()(*feeds)[0])
        assert_matches_litert(model, feeds)
    assert np.array_equal(results[0].view(np.uint32), results[1].view(np.uint32))


def test_a_one_by_one_depthwise_convolution_runs_as_a_per_channel_scale_and_shift():
    from openvx_nn.nnapi import OperationType
    rng = np.random.default_rng(12)
    w = Writer()
    for padding, act in ((1, 0), (0, 3)):
        dw = options(w, "DepthwiseConv2DOptions", padding=padding, strideW=1, strideH=1, depthMultiplier=1,
                     fusedActivationFunction=act)
        inputs = [Var((1, 9, 7, 8)), weights(rng, (1, 1, 1, 8)), weights(rng, (8,))]
        model, feeds = one_operator(code("DEPTHWISE_CONV_2D"), inputs, (1, 9, 7, 8), dw)
        kinds = [op.type for op in tflite.load(model).model.to_hal().operations]
        assert kinds == [OperationType.MUL, OperationType.ADD]
        assert_matches_litert(model, feeds)
        zero_bias, _ = one_operator(code("DEPTHWISE_CONV_2D"), inputs[:2] + [np.zeros(8, np.float32)], (1, 9, 7, 8),
                                    dw)
        omitted = _omit_bias(zero_bias)
        assert [op.type for op in tflite.load(omitted).model.to_hal().operations] == [OperationType.MUL]
        assert_matches_litert(zero_bias, feeds, omitted)
