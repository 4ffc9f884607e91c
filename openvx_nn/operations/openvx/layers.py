"""Fully connected, pooling, ROI pooling, softmax, local response normalization
and activation layers of the NN extension: signatures, validators, executors.

Kernel parameters follow the typed constructors' argument order (the seed
numbers ROI pooling explicitly: #0 input_data, #1 input_rois, #2 the
``vx_nn_roi_pool_params_t`` scalar, #3 output_arr).
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ...core.compat import sample_conventions
from ...core.datatypes import FLOAT_TYPES, dtype_of
from ...core.enums import (
    ConvertPolicy,
    NNActivation,
    NNKernel,
    NNNorm,
    NNPooling,
    NNRounding,
    NNType,
    RoundPolicy,
    Status,
    Type,
)
from ...core.kernels import register
from ...core.rewrites import ANY_SAME
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.validation import Validation
from ..geometry import fit_stride, window_problem
from .common import ROUND_POLICIES, declared_extent, nn_input, output_format, policy, static_tensor
from .convolution import binding, natively
from .float16_edges import Direct, accepting_float16

LIBRARY = 1  # VX_LIBRARY_KHR_NN_EXTENSION
T, S = Type.VX_TYPE_TENSOR, Type.VX_TYPE_SCALAR
ENUM, SIZE, F32 = Type.VX_TYPE_ENUM, Type.VX_TYPE_SIZE, Type.VX_TYPE_FLOAT32
INTEGER_ROI_TYPES = (Type.VX_TYPE_UINT8, Type.VX_TYPE_INT8, Type.VX_TYPE_INT16, Type.VX_TYPE_INT32)


def _in(name, vx_type=T, scalar_type=Type.VX_TYPE_INVALID, optional=False, static=False):
    return ParamSpec(name, IN, vx_type, optional, scalar_type, static)


def _out(name="outputs"):
    return ParamSpec(name, OUT, T)


def _flat(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``array`` reshaped in OpenVX order (dim 0 fastest), a view whenever possible."""
    return array.reshape(shape, order="F")


def _write_through(out: np.ndarray, shape: tuple[int, ...], fill) -> None:
    """Let ``fill`` write a reshaped ``out``; copy back when the reshape had to copy."""
    view = _flat(out, shape)
    fill(view)
    if not np.shares_memory(view, out):
        out[...] = view.reshape(out.shape, order="F")


# -- fully connected ---------------------------------------------------------------
def _validate_fully_connected(v: Validation) -> None:
    x = nn_input(v, 0, 1)
    w = static_tensor(v, 1, x, "weights")
    # [#IFM, #OFM], or (a superset of the text) [kx, ky, #IFM_maps, #OFM] and any other split of #IFM
    # over leading dims, flattened like the input's [width, height, #IFM] (dim 0 fastest).
    v.require(w.rank >= 2, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"weights must have 2 or more dims [..., #OFM], got {list(w.dims)}")
    ifm, ofm = math.prod(w.dims[:-1]), w.dims[-1]
    layouts = []                     # candidate batch dims, one per matching input layout
    if x.dims[0] == ifm:
        layouts.append(x.dims[1:])   # [#IFM, #batches...]
    if x.rank >= 3 and x.dims[0] * x.dims[1] * x.dims[2] == ifm:
        layouts.append(x.dims[3:])   # [width, height, #IFM, #batches...]
    if not layouts:
        v.fail(1, Status.VX_ERROR_INVALID_DIMENSION,
               f"weights {list(w.dims)} expect {ifm} inputs; the input {list(x.dims)} gives neither dims[0] = {ifm} "
               f"nor dims[0]*dims[1]*dims[2] = {ifm}")
    # Both layouts can fit (e.g. [1, 1, 1, 2] with one input): the declared output decides.
    declared = v.declared(5).dims
    batch = next((b for b in layouts if (ofm,) + tuple(b) == tuple(declared)), layouts[0])
    b = static_tensor(v, 2, x, "biases")
    if b is not None:
        v.require(tuple(b.dims) == (ofm,), 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"biases dims {list(b.dims)}, expected [{ofm}]")
    overflow = policy(v, 3)
    rounding = policy(v, 4, ROUND_POLICIES, "rounding policy")
    data_type, fpp = output_format(v, 5, x, rescales=True)
    v.output(5, (ofm,) + tuple(batch), data_type, fpp)
    v.state.update(ifm=ifm, ofm=ofm, batch=math.prod(batch),
                   saturate=overflow == ConvertPolicy.VX_CONVERT_POLICY_SATURATE,
                   nearest=rounding == RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN)
    _plan_fully_connected(v)


def _plan_fully_connected(v: Validation) -> None:
    """The layer's route, decided at verify: the float engine for float32 (``float_layers``), else the SIMD
    engine's (None: the dot-product kernels run)."""
    from ...kernels.engine.correlation import Arithmetic
    from ...kernels.openvx import float_layers
    from ...kernels.openvx.fully_connected import prepare_fully_connected
    from .convolution import PlannedWeights
    ifm, ofm, batch = v.state["ifm"], v.state["ofm"], v.state["batch"]
    v.state["float"] = v.tensor(0).data_type == F32 and float_layers.chosen() and ifm * ofm * batch > 0
    if v.state["float"]:
        v.state["flat"] = lambda x, out: _flat_views(x, out, (ifm, batch), (ofm, batch))
        v.state["planned"] = PlannedWeights(lambda w: float_layers.FullyConnected(w, batch), v.ref(1),
                                            lambda t: _flat(t.array, (ifm, ofm)))
        return
    arithmetic = Arithmetic(v.state["saturate"], v.state["nearest"], v.tensor(0).fpp, v.tensor(1).fpp,
                            v.tensor(2).fpp if v.present(2) else 0, v.node.params[5].fpp)
    has_bias, batch = v.present(2), v.state["batch"]
    shape = (v.state["ifm"], v.state["ofm"])
    v.state["planned"] = PlannedWeights(lambda w: prepare_fully_connected(w, has_bias, batch, arithmetic),
                                        v.ref(1), lambda t: _flat(t.array, shape))


def _weights(p, state) -> np.ndarray:
    """The weights as [#IFM, #OFM] (N-D weights flattened like the input)."""
    return _flat(p[1].array, (state["ifm"], state["ofm"]))


def _flat_views(x: np.ndarray, out: np.ndarray, x_shape: tuple[int, int], out_shape: tuple[int, int]):
    """(input, output) flattened to ``[#IFM, B]`` and ``[#OFM, B]`` as views, or None when either reshape copies."""
    fx, fout = _flat(x, x_shape), _flat(out, out_shape)
    if not (np.may_share_memory(fx, x) and np.may_share_memory(fout, out)):
        return None
    return fx, fout


def _run_fully_connected(p, state) -> None:
    from ...kernels.openvx.fully_connected import execute_fully_connected, fully_connected
    x = _flat(p[0].array, (state["ifm"], state["batch"]))
    bias = None if p[2] is None else p[2].array
    route = state["planned"].current(p[1])
    if state.get("float"):
        if np.may_share_memory(p[5].array, p[0].array) or (bias is not None and np.may_share_memory(p[5].array, bias)):
            x, bias = x.copy(), None if bias is None else bias.copy()
        _write_through(p[5].array, (state["ofm"], state["batch"]), lambda out: route.bind(x, bias, out)())
        return
    if route is not None:
        _write_through(p[5].array, (state["ofm"], state["batch"]),
                       lambda out: execute_fully_connected(route, x, bias, out))
        return
    fpps = {"fpp_x": p[0].fpp, "fpp_w": p[1].fpp, "fpp_b": 0 if p[2] is None else p[2].fpp, "fpp_out": p[5].fpp}
    _write_through(p[5].array, (state["ofm"], state["batch"]),
                   lambda out: fully_connected(x, _weights(p, state), bias, out, state["saturate"], state["nearest"],
                                               isa="generic", **fpps))


def _bound_fully_connected(p, state):
    """The layer bound once (``fully_connected.bind_fully_connected``); None when a flattened input or output
    had to be copied (reshaping a strided view), or when the layer cannot be bound."""
    from ...kernels.engine.correlation import Arithmetic
    from ...kernels.openvx.fully_connected import bind_fully_connected
    x = _flat(p[0].array, (state["ifm"], state["batch"]))
    out = _flat(p[5].array, (state["ofm"], state["batch"]))
    if not (np.may_share_memory(x, p[0].array) and np.may_share_memory(out, p[5].array)):
        return None
    arithmetic = Arithmetic(state["saturate"], state["nearest"], p[0].fpp, p[1].fpp, 0 if p[2] is None else p[2].fpp,
                            p[5].fpp)
    return bind_fully_connected(state["planned"].current(p[1]), x, _weights(p, state),
                                None if p[2] is None else p[2].array, out, arithmetic)


register(accepting_float16(KernelDescription(
    "org.khronos.nn_extension.fully_connected_layer", NNKernel.VX_KERNEL_FULLY_CONNECTED_LAYER, LIBRARY,
    (_in("inputs"), _in("weights", static=True), _in("biases", optional=True, static=True),
     _in("overflow_policy", S, ENUM, static=True), _in("rounding_policy", S, ENUM, static=True), _out()),
    _validate_fully_connected, _run_fully_connected, bind=binding(_bound_fully_connected, _run_fully_connected),
    native=natively(_bound_fully_connected))))


# -- pooling -------------------------------------------------------------------------
POOLING_TYPES = (NNPooling.VX_NN_POOLING_MAX, NNPooling.VX_NN_POOLING_AVG)
DS_ROUNDING = (NNRounding.VX_NN_DS_SIZE_ROUNDING_FLOOR, NNRounding.VX_NN_DS_SIZE_ROUNDING_CEILING)


def _validate_pooling(v: Validation) -> None:
    x = nn_input(v, 0, 3)
    kind = policy(v, 1, POOLING_TYPES, "pooling type")
    size, pad = (v.scalar(2), v.scalar(3)), (v.scalar(4), v.scalar(5))
    ds = policy(v, 6, DS_ROUNDING, "down-scale rounding")
    strides, sizes = [], []
    for axis in (0, 1):
        name, index = "xy"[axis], 2 + axis
        v.require(size[axis] >= 1, index, Status.VX_ERROR_INVALID_VALUE,
                  f"pooling_size_{name} must be at least 1, got {size[axis]}")
        problem = window_problem(x.dims[axis], pad[axis], size[axis])
        if problem is not None:
            v.fail(index, Status.VX_ERROR_INVALID_VALUE, f"pooling {name} axis: {problem}")
        v.require(pad[axis] < size[axis], 4 + axis, Status.VX_ERROR_INVALID_VALUE,
                  f"pooling_padding_{name} {pad[axis]} must be smaller than the window ({size[axis]})")
        v.require(x.dims[axis] + 2 * pad[axis] >= size[axis], index, Status.VX_ERROR_INVALID_DIMENSION,
                  f"window {size[axis]} exceeds the padded input {x.dims[axis] + 2 * pad[axis]}")
        ceiling = ds == NNRounding.VX_NN_DS_SIZE_ROUNDING_CEILING
        stride, want = fit_stride(v, 7, axis, declared_extent(v, 7, axis), x.dims[axis], pad[axis], size[axis], ceiling,
                                  f"window {size[axis]}")
        strides.append(stride)
        sizes.append(want)
    data_type, fpp = output_format(v, 7, x, rescales=False)
    v.output(7, (sizes[0], sizes[1]) + x.dims[2:], data_type, fpp)
    v.state.update(max_pool=kind == NNPooling.VX_NN_POOLING_MAX, size=size, pad=pad, stride=tuple(strides))


def _pooling_layouts(p, state) -> dict[int, str]:
    """A float32 pool on the plane kernel's arithmetic reads and writes either order with the same bytes
    (``chw_pooling.pool_pixels``): it follows the layout its neighbours give its tensors (``core.rewrites``)."""
    from ...core.rewrites import EITHER_ORDER
    from ...kernels.openvx.float_layers import chosen
    if p[0].data_type != F32 or p[7].data_type != F32 or not (state["max_pool"] or chosen()):
        return {}
    return {0: EITHER_ORDER, 7: EITHER_ORDER}


def _pooling_sides(p, state) -> tuple[bool, bool] | None:
    """(input, output) channels-last when the plan laid out either so (a side whose two orders are the same
    bytes, packed, counts as either), else None: the plane route."""
    from ...core import rewrites
    layout = state.get(rewrites.LAYOUT, {})
    sides = [layout.get(i) == rewrites.CHANNELS_LAST for i in (0, 7)]
    if not any(sides):
        return None
    for k, i in enumerate((0, 7)):
        dims, array = tuple(p[i].dims), p[i].array
        sides[k] = sides[k] or ((dims[0] * dims[1] == 1 or dims[2] == 1) and array.T.flags.c_contiguous)
    return sides[0], sides[1]


def _run_pooling(p, state) -> None:
    from ...kernels.openvx.pooling import bind_channels_last, pooling
    sides = _pooling_sides(p, state)
    if sides is not None:
        bind_channels_last(p[0].array, p[7].array, sides, *_pooling_geometry(state))()
        return
    pooling(p[0].array, p[7].array, state["max_pool"], *state["size"], *state["pad"], *state["stride"])


def _bind_pooling(p, state):
    """The bound runner; None (run unbound) when input and output overlap: that needs a copy per run."""
    from ...kernels.openvx.pooling import bind_channels_last, prepare
    x, out = p[0].array, p[7].array
    sides = _pooling_sides(p, state)
    if sides is not None:
        return bind_channels_last(x, out, sides, *_pooling_geometry(state))
    if np.may_share_memory(out, x):
        return None
    return prepare(x, out, state["max_pool"], *state["size"], *state["pad"], *state["stride"])


def _native_pooling(p, state):
    from ...kernels.openvx.pooling import native_channels_last, native_entry
    sides = _pooling_sides(p, state)
    if sides is not None:
        return native_channels_last(p[0].array, p[7].array, sides, *_pooling_geometry(state))
    return native_entry(p[0].array, p[7].array, state["max_pool"], *state["size"], *state["pad"], *state["stride"])


def _pooling_geometry(state) -> tuple:
    return (state["max_pool"], *state["size"], *state["pad"], *state["stride"])


HALF_POOLING = Direct(
    bind=lambda p, state: _float16_layers().bind_pooling(p[0].array, p[7].array, *_pooling_geometry(state)),
    native=lambda p, state: _float16_layers().native_pooling(p[0].array, p[7].array, *_pooling_geometry(state)))
"""Float16 pooling reading and writing binary16 in the plane kernel's own pass."""


def _float16_layers():
    from ...kernels.openvx import float16_layers
    return float16_layers


register(accepting_float16(KernelDescription(
    "org.khronos.nn_extension.pooling_layer", NNKernel.VX_KERNEL_POOLING_LAYER, LIBRARY,
    (_in("inputs"), _in("pooling_type", S, ENUM, static=True), _in("pooling_size_x", S, SIZE, static=True),
     _in("pooling_size_y", S, SIZE, static=True), _in("pooling_padding_x", S, SIZE, static=True),
     _in("pooling_padding_y", S, SIZE, static=True), _in("rounding", S, ENUM, static=True), _out()),
    _validate_pooling, _run_pooling, bind=_bind_pooling, native=_native_pooling, layouts=_pooling_layouts),
    direct=HALF_POOLING))


# -- softmax ---------------------------------------------------------------------------
def softmax_axis(rank: int) -> int:
    """The seed's rule: 1-D and 2-D along dim 0 (dim 1 is the batch); from 3-D on,
    dims are [width, height, classes, batch...] and the classes are dim 2."""
    return 0 if rank <= 2 else 2


def _validate_softmax(v: Validation) -> None:
    x = nn_input(v, 0, 1)
    data_type, fpp = output_format(v, 1, x, rescales=True)
    v.output(1, x.dims, data_type, fpp)
    v.state["axis"] = softmax_axis(x.rank)


def _run_softmax(p, state) -> None:
    from ...kernels.openvx.softmax import softmax
    softmax(p[0].array, p[1].array, state["axis"], fpp_in=p[0].fpp, fpp_out=p[1].fpp)


def _native_softmax(p, state):
    from ...kernels.openvx.softmax import native_entry
    return native_entry(p[0].array, p[1].array, state["axis"], fpp_in=p[0].fpp, fpp_out=p[1].fpp)


register(accepting_float16(KernelDescription(
    "org.khronos.nn_extension.softmax_layer", NNKernel.VX_KERNEL_SOFTMAX_LAYER, LIBRARY,
    (_in("inputs"), _out()), _validate_softmax, _run_softmax, native=_native_softmax)))


# -- local response normalization -------------------------------------------------------
NORM_TYPES = (NNNorm.VX_NN_NORMALIZATION_SAME_MAP, NNNorm.VX_NN_NORMALIZATION_ACROSS_MAPS)
LRN_SIZES = (3, 5, 7)


def _positive(v: Validation, index: int, name: str) -> float:
    value = v.scalar(index)
    v.require(math.isfinite(value) and value > 0, index, Status.VX_ERROR_INVALID_VALUE,
              f"{name} must be a positive number, got {value}")
    return value


def _validate_lrn(v: Validation) -> None:
    x = nn_input(v, 0, 3)
    kind = policy(v, 1, NORM_TYPES, "normalization type")
    size = v.scalar(2)
    v.require(size in LRN_SIZES, 2, Status.VX_ERROR_INVALID_VALUE,
              f"normalization_size {size} is invalid (expected 3, 5 or 7)")
    for index, name in ((3, "alpha"), (4, "beta"), (5, "bias")):
        _positive(v, index, name)
    data_type, fpp = output_format(v, 6, x, rescales=True)
    v.output(6, x.dims, data_type, fpp)
    v.state["across"] = kind == NNNorm.VX_NN_NORMALIZATION_ACROSS_MAPS


def _run_lrn(p, state) -> None:
    from ...kernels.openvx.normalization import local_response_normalization
    local_response_normalization(p[0].array, p[6].array, state["across"], p[2].value, p[3].value, p[4].value,
                                 p[5].value, fpp_in=p[0].fpp, fpp_out=p[6].fpp)


def _native_lrn(p, state):
    from ...kernels.openvx.normalization import native_entry
    return native_entry(p[0].array, p[6].array, state["across"], p[2].value, p[3].value, p[4].value, p[5].value,
                        fpp_in=p[0].fpp, fpp_out=p[6].fpp)


register(accepting_float16(KernelDescription(
    "org.khronos.nn_extension.local_response_normalization_layer",
    NNKernel.VX_KERNEL_LOCAL_RESPONSE_NORMALIZATION_LAYER, LIBRARY,
    (_in("inputs"), _in("type", S, ENUM, static=True), _in("normalization_size", S, SIZE, static=True),
     _in("alpha", S, F32, static=True), _in("beta", S, F32, static=True), _in("bias", S, F32, static=True),
     _out()),
    _validate_lrn, _run_lrn, native=_native_lrn)))


# -- activation --------------------------------------------------------------------------
A = NNActivation
FUNCTIONS = {A.VX_NN_ACTIVATION_LOGISTIC: ("logistic", ()), A.VX_NN_ACTIVATION_HYPERBOLIC_TAN: ("tanh", "ab"),
             A.VX_NN_ACTIVATION_RELU: ("relu", ()), A.VX_NN_ACTIVATION_BRELU: ("brelu", "a"),
             A.VX_NN_ACTIVATION_SOFTRELU: ("softrelu", ()), A.VX_NN_ACTIVATION_ABS: ("abs", ()),
             A.VX_NN_ACTIVATION_SQUARE: ("square", ()), A.VX_NN_ACTIVATION_SQRT: ("sqrt", ()),
             A.VX_NN_ACTIVATION_LINEAR: ("linear", "ab")}
"""Each function's kernel name and the parameters it uses (which must be positive)."""


def _validate_activation(v: Validation) -> None:
    x = nn_input(v, 0, 1)
    function = policy(v, 1, FUNCTIONS.keys(), "activation function")
    for letter in FUNCTIONS[function][1]:
        _positive(v, 2 if letter == "a" else 3, letter)
    data_type, fpp = output_format(v, 4, x, rescales=True)
    v.output(4, x.dims, data_type, fpp)
    v.state["function"] = FUNCTIONS[function][0]


_kernel = None
"""``kernels.openvx.activation``, imported on first use: an import statement in each hook cost about a
microsecond a node at every verify and binding of a long graph."""


def _activation_kernel():
    global _kernel
    if _kernel is None:
        from ...kernels.openvx import activation
        _kernel = activation
    return _kernel


def _run_activation(p, state) -> None:
    _activation_kernel().activation(p[0].array, p[4].array, state["function"], p[2].value, p[3].value,
               fpp_in=p[0].fpp, fpp_out=p[4].fpp)


def _activation_made(p, state, make: str):
    """The activation kernel's ``make`` ("prepare": the bound runner, "native_entry") for the node; None when input
    and output overlap (that needs a copy per run)."""
    kernel = _activation_kernel()
    x, out = p[0].array, p[4].array
    if kernel.detach_from(out, x) is not x:
        return None
    return getattr(kernel, make)(x, out, state["function"], p[2].value, p[3].value, fpp_in=p[0].fpp,
                                 fpp_out=p[4].fpp)


def _bind_activation(p, state):
    """The bound runner; None (run unbound) when input and output overlap."""
    return _activation_made(p, state, "prepare")


def _native_activation(p, state):
    """The native entry; None when input and output overlap or the tensor is empty."""
    return _activation_made(p, state, "native_entry")


def _activation_layouts(p, state) -> dict[int, str]:
    """Element-wise: any layout, the same for input and output (``core.rewrites``)."""
    return {0: ANY_SAME, 4: ANY_SAME}


def _activation_clamp(p, state) -> tuple[float, float] | None:
    """The clamp a float32 ``relu`` or ``brelu`` is (``min(a, max(0, x))`` with NaN passing, as the float
    engine's epilogue computes it), for the plan to fuse into the convolution before it; for integer tensors of
    one type, the raw ``(lo, hi)`` where the activation's table is ``clip(raw, lo, hi)`` (``activation.clamp``:
    relu, or brelu, between equal formats); None otherwise."""
    if p[0].data_type not in FLOAT_TYPES and p[0].data_type == p[4].data_type:
        return _activation_kernel().clamp(state["function"], p[2].value, p[3].value, dtype_of(p[0].data_type), p[0].fpp, p[4].fpp)
    if p[0].data_type != F32 or p[4].data_type != F32:
        return None
    if state["function"] == "relu":
        return 0.0, math.inf
    if state["function"] == "brelu":
        return 0.0, float(p[2].value)
    return None


def _activation_gate(p, state) -> tuple[str, float, float] | None:
    """The float32 function a float32 logistic, tanh or softrelu computes (``float_activation``'s), for the plan
    to fuse into the product that reads it (``core.gated_products``); None otherwise."""
    if p[0].data_type != F32 or p[4].data_type != F32:
        return None
    return _activation_kernel().float32_function(state["function"], p[2].value, p[3].value)


HALF_ACTIVATION = Direct(
    bind=lambda p, state: _float16_layers().bind_activation(p[0].array, p[4].array, state["function"], p[2].value,
                                                            p[3].value),
    native=lambda p, state: _float16_layers().native_activation(p[0].array, p[4].array, state["function"],
                                                                p[2].value, p[3].value))
"""Float16 activations (those the float32 layer evaluates exactly) converting in the kernel's own pass."""


register(accepting_float16(KernelDescription(
    "org.khronos.nn_extension.activation_layer", NNKernel.VX_KERNEL_ACTIVATION_LAYER, LIBRARY,
    (_in("inputs"), _in("function", S, ENUM, static=True), _in("a", S, F32, static=True),
     _in("b", S, F32, static=True), _out()),
    _validate_activation, _run_activation, bind=_bind_activation, native=_native_activation,
    layouts=_activation_layouts, epilogue=_activation_clamp, gate_function=_activation_gate),
    direct=HALF_ACTIVATION))


# -- ROI pooling ---------------------------------------------------------------------------
ROI_PARAMS = struct.Struct("<i")  # vx_nn_roi_pool_params_t


def _validate_roi_pooling(v: Validation) -> None:
    x = nn_input(v, 0, 3, 4)
    rois = v.tensor(1)
    v.require(rois.data_type in INTEGER_ROI_TYPES, 1, Status.VX_ERROR_INVALID_TYPE,
              f"ROIs hold integer pixel coordinates; {rois.describe()} is not an integer tensor")
    v.require(rois.rank == x.rank - 1 and rois.dims[0] == 4, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"ROIs must be [4, roi_count{', #batches' if x.rank == 4 else ''}] for a {x.rank}-D input, "
              f"got {list(rois.dims)}")
    if x.rank == 4:
        v.require(rois.dims[2] == x.dims[3], 1, Status.VX_ERROR_INVALID_DIMENSION,
                  f"ROIs have {rois.dims[2]} batches, the input {x.dims[3]}")
    (pool_type,) = ROI_PARAMS.unpack(v.scalar_bytes(2))
    v.one_of(2, pool_type, (NNPooling.VX_NN_POOLING_MAX,), "pool_type (only max pooling is defined)")
    width, height = declared_extent(v, 3, 0), declared_extent(v, 3, 1)
    v.require(width > 0 and height > 0, 3, Status.VX_ERROR_INVALID_DIMENSION,
              "the output's pooled width and height must be given (they cannot be inferred)")
    data_type, fpp = output_format(v, 3, x, rescales=False)
    v.output(3, (width, height, x.dims[2], rois.dims[1]) + x.dims[3:], data_type, fpp)
    v.state["sample"] = sample_conventions(v.node.context)  # malformed ROIs: zeros (docs/decisions.md)


def _run_roi_pooling(p, state) -> None:
    from ...kernels.openvx.roi_pooling import roi_pooling
    roi_pooling(p[0].array, p[1].array, p[3].array, sample=state.get("sample", False))


def _native_roi_pooling(p, state):
    from ...kernels.openvx.roi_pooling import native_entry
    return native_entry(p[0].array, p[1].array, p[3].array, sample=state.get("sample", False))


register(accepting_float16(KernelDescription(
    "org.khronos.nn_extension.roi_pooling_layer", NNKernel.VX_KERNEL_ROI_POOLING_LAYER, LIBRARY,
    (_in("input_data"), _in("input_rois"), _in("roi_pool_params", S, NNType.VX_TYPE_NN_ROI_POOL_PARAMS, static=True),
     _out("output_arr")),
    _validate_roi_pooling, _run_roi_pooling, native=_native_roi_pooling), candidates=(0, 3)))


