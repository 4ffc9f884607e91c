"""Convolution and deconvolution layers of the NN extension: signatures,
validators (with the seed's stride / upscale inference) and executors.

Kernel parameters as the seed numbers them: #0 inputs, #1 weights [static],
#2 biases [static, optional], #3 the parameter struct (a scalar made by
``vxCreateScalarWithSize``), #4 outputs.
"""
from __future__ import annotations

import functools
import struct
from collections.abc import Callable

import numpy as np

from ...core.enums import ConvertPolicy, NNKernel, NNRounding, NNType, RoundPolicy, Status, Type
from ...core.kernels import register
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.tensor import Tensor
from ...core.validation import Validation
from ..geometry import Conventions, deconvolution_upscale, effective_kernel, fit_stride, window_problem
from .common import CONVERT_POLICIES, ROUND_POLICIES, declared_extent, nn_input, output_format, static_tensor
from .float16_edges import accepting_float16

LIBRARY = 1  # VX_LIBRARY_KHR_NN_EXTENSION
T, S = Type.VX_TYPE_TENSOR, Type.VX_TYPE_SCALAR
CONV_PARAMS = struct.Struct("<QQiii4xQQ")   # vx_nn_convolution_params_t, 48 bytes
DECONV_PARAMS = struct.Struct("<QQiiQQ")    # vx_nn_deconvolution_params_t, 40 bytes
DS_ROUNDING = (NNRounding.VX_NN_DS_SIZE_ROUNDING_FLOOR, NNRounding.VX_NN_DS_SIZE_ROUNDING_CEILING)


def _signature(params_type: int) -> tuple[ParamSpec, ...]:
    return (ParamSpec("inputs", IN, T), ParamSpec("weights", IN, T, static=True),
            ParamSpec("biases", IN, T, optional=True, static=True),
            ParamSpec("params", IN, S, scalar_type=params_type, static=True),
            ParamSpec("outputs", OUT, T))


def _policies(v: Validation, overflow: int, rounding: int) -> None:
    v.one_of(3, overflow, CONVERT_POLICIES, "overflow_policy")
    v.one_of(3, rounding, ROUND_POLICIES, "rounding_policy")


def _weights(v: Validation, x):
    w = static_tensor(v, 1, x, "weights")
    v.require(w.rank == 4, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"weights must be 4-D [kernel_x, kernel_y, #IFM, #OFM], got {list(w.dims)}")
    v.require(w.dims[2] == x.dims[2], 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"weights have {w.dims[2]} input feature maps, the input has {x.dims[2]}")
    return w


def _biases(v: Validation, x, shapes: list[tuple[int, ...]]) -> None:
    """Optional biases: one per OFM, or (convolution) one per OFM and output location."""
    b = static_tensor(v, 2, x, "biases")
    if b is not None:
        v.require(tuple(b.dims) in shapes, 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"biases dims {list(b.dims)} are not " + " or ".join(str(list(s)) for s in shapes))


def _validate_convolution(v: Validation) -> None:
    x = nn_input(v, 0, 3)
    raw = v.scalar_bytes(3)
    pad_x, pad_y, overflow, rounding, ds_rounding, dil_x, dil_y = CONV_PARAMS.unpack(raw)
    _policies(v, overflow, rounding)
    v.one_of(3, ds_rounding, DS_ROUNDING, "down_scale_size_rounding")
    ceiling = ds_rounding == NNRounding.VX_NN_DS_SIZE_ROUNDING_CEILING
    w = _weights(v, x)
    strides, sizes = [], []
    for axis, pad, dil in ((0, pad_x, dil_x), (1, pad_y, dil_y)):
        k_eff = effective_kernel(w.dims[axis], dil)
        problem = window_problem(x.dims[axis], pad, k_eff)
        if problem is not None:
            v.fail(3, Status.VX_ERROR_INVALID_VALUE, f"{'xy'[axis]} axis (padding {pad}, dilation {dil}): {problem}")
        v.require(x.dims[axis] + 2 * pad >= k_eff, 1, Status.VX_ERROR_INVALID_DIMENSION,
                  f"the {'xy'[axis]} kernel spans {k_eff} inputs (dilation {dil}) but the padded input "
                  f"has {x.dims[axis] + 2 * pad}")
        stride, want = fit_stride(v, 4, axis, declared_extent(v, 4, axis), x.dims[axis], pad, k_eff, ceiling,
                                  f"kernel span {k_eff}")
        strides.append(stride)
        sizes.append(want)
    _biases(v, x, [(w.dims[3],), (sizes[0], sizes[1], w.dims[3])])
    data_type, fpp = output_format(v, 4, x, rescales=True)
    v.output(4, (sizes[0], sizes[1], w.dims[3]) + x.dims[3:], data_type, fpp)
    conventions = Conventions.at_verify(v)
    v.state.update(pad=(pad_x, pad_y), stride=tuple(strides), dilation=(dil_x, dil_y),
                   origin={"origin_x": conventions.tap_origin(dil_x), "origin_y": conventions.tap_origin(dil_y)},
                   saturate=overflow == ConvertPolicy.VX_CONVERT_POLICY_SATURATE,
                   nearest=rounding == RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN)
    _plan_convolution(v)


_UNPLANNED = object()


class PlannedWeights:
    """A layer's route, planned from its [static] weights at verify and again only after they are written.

    ``make(weights)`` is the layer's planner, ``read(tensor)`` the weights array it takes. The weights
    tensor's write counter (bumped on its root by every copy, unmap, swap, allocation and node output)
    says when the values may have changed: no per-call comparison of the weights, no snapshot of them.
    A ValueError from the planner (a layer beyond the exact accumulator) is not a verify error today:
    it is raised when the node runs, as it always was.
    """

    def __init__(self, make: Callable[[np.ndarray], object], weights: Tensor,
                 read: Callable[[Tensor], np.ndarray] = lambda t: t.array):
        self._make, self._read = make, read
        self._stamp = weights.root.writes
        try:
            self._route = make(read(weights))
        except ValueError:
            self._route = _UNPLANNED

    def current(self, weights: Tensor):
        stamp = weights.root.writes
        if self._route is _UNPLANNED or stamp != self._stamp:
            self._route = self._make(self._read(weights))
            self._stamp = stamp
        return self._route


def _arithmetic(v: Validation):
    from ...kernels.engine.correlation import Arithmetic
    fpp_b = v.tensor(2).fpp if v.present(2) else 0
    return Arithmetic(v.state["saturate"], v.state["nearest"], v.tensor(0).fpp, v.tensor(1).fpp, fpp_b,
                      v.node.params[4].fpp)  # the output's meta-data is settled by now


def _plan_convolution(v: Validation) -> None:
    """The layer's route, chosen once: float32 layers the float engine takes (``float_layers``) go there, every
    other layer to the correlation engine (``correlation.prepare``)."""
    from ...kernels.engine.correlation import convolution_window, prepare
    from ...kernels.openvx import float_layers
    x_shape, out_shape = v.tensor(0).dims, v.node.params[4].dims
    origin = v.state["origin"]
    bias_shape = tuple(v.tensor(2).dims) if v.present(2) else None
    v.state["float"] = float_layers.convolution_fits(
        tuple(x_shape), v.ref(1).array, bias_shape, tuple(out_shape), v.state["dilation"],
        (origin["origin_x"], origin["origin_y"]), v.ref(1).array.dtype) and v.tensor(0).data_type == Type.VX_TYPE_FLOAT32
    if v.state["float"]:
        pad, stride, dilation = v.state["pad"], v.state["stride"], v.state["dilation"]
        v.state["planned"] = PlannedWeights(lambda w: float_layers.Convolution(w, pad, stride, dilation), v.ref(1))
        return
    window = convolution_window(*v.state["pad"], *v.state["stride"], *v.state["dilation"], origin["origin_x"],
                                origin["origin_y"])
    arithmetic, has_bias = _arithmetic(v), v.present(2)
    v.state["planned"] = PlannedWeights(
        lambda w: prepare(w, has_bias, x_shape, out_shape, window, arithmetic), v.ref(1))


def _layouts(p, state) -> dict[int, str]:
    """The layouts a float32 layer on the engine takes (``core.rewrites``): its input and output channels-last as
    well as planar, except the output of a one-map layer on the plane kernel (``float_layers``); a depthwise layer
    written map by map whose group the NHWC depthwise kernel can take (``float_layers``): its first member takes
    both sides channels-last (one access of each root), the others' views are part of that access."""
    from ...core import map_groups
    from ...core.rewrites import GROUP_VIEW, TAKES_CHANNELS_LAST
    if not state.get("float"):
        return _integer_layouts(p, state)
    leader = state.get(map_groups.LEADER)
    if _group_takes_channels_last(state if leader is None else leader.state):
        return {0: GROUP_VIEW, 4: GROUP_VIEW} if leader is not None else {0: TAKES_CHANNELS_LAST,
                                                                            4: TAKES_CHANNELS_LAST}
    planes = getattr(state["planned"].current(p[1]), "planes", None) is not None
    return {0: TAKES_CHANNELS_LAST} if planes else {0: TAKES_CHANNELS_LAST, 4: TAKES_CHANNELS_LAST}


def _integer_layouts(p, state) -> dict[int, str]:
    """An integer layer on the correlation engine reads and writes either order (``integer_io``): its input and
    output channels-last as well as planar; a map of a depthwise group (``map_groups``) takes planes only."""
    from ...core import map_groups
    from ...core.rewrites import TAKES_CHANNELS_LAST
    if map_groups.GROUP in state or map_groups.LEADER in state:
        return {}
    return {0: TAKES_CHANNELS_LAST, 4: TAKES_CHANNELS_LAST}


def integer_io(p, state, index: int, array: np.ndarray | None = None) -> np.ndarray:
    """Parameter ``index``'s array (or ``array``, laid out as it: a fused activation's output) as the correlation
    engine takes it, ``(W, H, C, *batch)``: OpenVX's own, or, where the plan laid the tensor out channels-last
    (``core.rewrites``), a view of its channels-last bytes in those axes (the engine packs its channel runs and
    stores pixel-major: no transposes)."""
    from ...core import rewrites
    a = p[index].array if array is None else array
    if state.get(rewrites.LAYOUT, {}).get(index) != rewrites.CHANNELS_LAST:
        return a
    from ...kernels.openvx.float_layers import pixels
    nhwc = pixels(a)  # [N, H, W, C] of the same bytes
    return nhwc.transpose(2, 1, 3, 0).reshape(a.shape)


def _group_takes_channels_last(state) -> bool:
    """Whether a group's first member (``state``) has maps in whole vectors of the NHWC depthwise kernel."""
    from ...core import map_groups
    from ...kernels.frontend import float_depthwise
    members = state.get(map_groups.GROUP)
    return members is not None and bool(state.get("float")) and float_depthwise.bias_last_fits(len(members), 1)


def _takes_epilogue(p, state) -> int | None:
    """A float32 layer on the engine writes its output through a clamp (an activation fused into it); so does an
    integer layer that saturates (its epilogue saturates to the clamp's raw bounds: :func:`_integer_output`),
    unless it is part of a depthwise layer written map by map."""
    from ...core import map_groups
    if state.get("float"):
        return 4
    integer = state.get("saturate") and map_groups.GROUP not in state and map_groups.LEADER not in state
    return 4 if integer and p[0].data_type != Type.VX_TYPE_FLOAT32 else None


def _integer_output(p, state) -> tuple[np.ndarray, tuple[int, int] | None]:
    """An integer layer's output array and the raw clamp its epilogue saturates to: the activation's output and
    bounds where the plan fused one into it (``core.rewrites``), else its own output and None."""
    from ...core import rewrites
    fused = rewrites.epilogue(state)
    if fused is None:
        return integer_io(p, state, 4), None
    return integer_io(p, state, 4, fused[0].array), (int(fused[1]), int(fused[2]))


def _takes_borders(p, state) -> tuple[int | None, bool] | None:
    """(the padding with which the layer reads its input from a zero-bordered buffer, whether it writes its output
    into one) for ``core.bordered_tensors``: a float32 layer on the engine (not a map of a depthwise layer, not on
    the plane kernel) writes either; it reads one undilated, its windows inside the padded input (no extent
    rounded past it); else None."""
    from ...core import map_groups
    if not state.get("float") or map_groups.GROUP in state or map_groups.LEADER in state or state.get("flat"):
        return None
    if getattr(state["planned"].current(p[1]), "planes", None) is not None:
        return None
    x, w, out = p[0].dims, p[1].dims, p[4].dims
    pads, strides = state["pad"], state["stride"]
    inside = all((out[a] - 1) * strides[a] + w[a] <= x[a] + 2 * pads[a] for a in (0, 1))
    reads = tuple(state["dilation"]) == (0, 0) and inside
    return (max(pads) if reads else None), True


def _takes_maps(p, state):
    """The geometry of a layer of one input map and one output map that can run with the other maps of a
    depthwise layer written map by map (``core.map_groups``): float32 on the plane kernel, or U8 or S8 on the
    uint8 depthwise kernel (``integer_depthwise``); None for other layers."""
    if tuple(p[1].dims[2:]) != (1, 1):
        return None
    if not state.get("float"):
        return _integer_maps(p, state)
    if getattr(state["planned"].current(p[1]), "planes", None) is None:
        return None
    return (tuple(state["pad"]), tuple(state["stride"]), tuple(p[1].dims), p[2] is not None, tuple(p[0].dims),
            tuple(p[4].dims))


def _integer_maps(p, state):
    """The geometry and arithmetic of a one-map integer layer the uint8 depthwise kernel computes bit for bit
    (``integer_depthwise.exact_shift``), or None."""
    from ...kernels.openvx import integer_depthwise
    dtype = {Type.VX_TYPE_UINT8: np.uint8, Type.VX_TYPE_INT8: np.int8}.get(p[0].data_type)
    if dtype is None or any(t is not None and t.data_type != p[0].data_type for t in (p[1], p[2], p[4])):
        return None
    if tuple(state["dilation"]) != (0, 0) or any(state["origin"].values()):
        return None
    if p[2] is not None and tuple(p[2].dims) != (1,):
        return None
    fpps = (p[0].fpp, p[1].fpp, 0 if p[2] is None else p[2].fpp, p[4].fpp)
    k = integer_depthwise.exact_shift(dtype, state["saturate"], p[1].dims[0] * p[1].dims[1], p[2] is not None,
                                      *fpps)
    if k is None:
        return None
    return ("integer", int(p[0].data_type), tuple(state["pad"]), tuple(state["stride"]), tuple(p[1].dims), p[2] is not None, tuple(p[0].dims),
            tuple(p[4].dims), fpps)


def _bind_maps(members: list, state: dict):
    """Every map of a depthwise layer written map by map in one call of the plane kernel: the members' weights
    ``[kx, ky, 1, 1]`` and biases gathered in map order into one layer of C output maps on the C-map input
    (the kernel computes output map c from input map c), reading the input's root and writing the output's
    root whole; None where the plane kernel cannot take these arrays. Where the plan laid a side out
    channels-last, the layer runs on the NHWC depthwise kernel (or the planes between conversions:
    ``float_layers.Convolution.bind_maps``; ``state[map_groups.ROUTE]`` says which)."""
    from ...core import map_groups, rewrites
    from ...core.regions import region
    from ...kernels.openvx import float_layers
    if not state.get("float"):
        return _bind_integer_maps(members, state)
    first = members[0]
    fused = rewrites.epilogue(state)  # an activation fused into the layer: its output, through its clamp
    x = region(first[0])[0].array
    out, clamp = (region(first[4])[0].array, None) if fused is None else (fused[0].array, fused[1:])
    w = np.concatenate([np.asarray(p[1].array, np.float32) for p in members], axis=3)
    bias = None if first[2] is None else np.concatenate([np.asarray(p[2].array, np.float32).reshape(1)
                                                         for p in members])
    layer = float_layers.Convolution(w, state["pad"], state["stride"])
    layout = state.get(rewrites.LAYOUT, {})
    sides = (layout.get(0) == rewrites.CHANNELS_LAST, layout.get(4) == rewrites.CHANNELS_LAST)
    if any(sides):
        runner, entry, nhwc = layer.bind_maps(x, bias, out, sides, clamp)
        state[map_groups.ROUTE] = map_groups.CHANNELS_LAST if nhwc else map_groups.PLANES
        return runner, entry
    state[map_groups.ROUTE] = map_groups.PLANES
    if not layer.on_planes(x, bias, out):
        return None
    entry = layer.native(x, bias, out, (False, False), clamp)
    return layer.bind(x, bias, out, (False, False), clamp), entry


def _bind_integer_maps(members: list, state: dict):
    """Every map of a U8 or S8 depthwise layer written map by map in one call of the uint8 depthwise kernel
    (``integer_depthwise``): the members' windows and biases gathered in map order, the bias aligned to the
    products' fixed point position; None where the kernel cannot take these arrays."""
    from ...core.regions import region
    from ...kernels.openvx import integer_depthwise
    first = members[0]
    fpp_x, fpp_w, fpp_b, fpp_out = _integer_maps(first, state)[-1]
    x, out = region(first[0])[0].array, region(first[4])[0].array
    w = np.stack([np.asarray(p[1].array)[:, :, 0, 0] for p in members], axis=2)
    bias = None if first[2] is None else np.array(
        [int(np.asarray(p[2].array).reshape(-1)[0]) << (fpp_x + fpp_w - fpp_b) for p in members], np.int64)
    layer = integer_depthwise.Depthwise(w, bias, fpp_out - fpp_x - fpp_w, state["pad"], state["stride"], x.shape,
                                        out.shape)
    runner = layer.bind(x, out)
    return None if runner is None else (runner, layer.native(x, out))


def bound_runner(bound, weights: Tensor, fallback: Callable[[], None]) -> Callable[[], None] | None:
    """The Python path's runner of a layer bound once (``kernels.engine.prepared.Bound``): its native entry,
    called through ctypes, unless the weights were written since (``fallback`` plans again) or the layer is
    worth sharing with helper threads now (``fallback``: the per-call route, which lends chunks)."""
    if bound is None:
        return None
    from ...kernels.support import native
    stamp, entry = weights.root.writes, bound.entry

    def run() -> None:
        if weights.root.writes != stamp or bound.worth_sharing():
            fallback()
            return
        status = native.run(entry)
        if status:
            raise RuntimeError(f"the layer's native entry failed with status {status}")
    return run


def _overlaps(p, out_index: int, out: np.ndarray | None = None) -> bool:
    """Whether an input shares memory with the output (the Python path copies it per run: no bound entry)."""
    out = p[out_index].array if out is None else out
    return any(q is not None and np.may_share_memory(out, q.array) for q in p[:3])


def _bound_convolution(p, state):
    from ...kernels.engine.prepared import bind
    out, clamp = _integer_output(p, state)
    if _overlaps(p, 4, out):
        return None
    return bind(state["planned"].current(p[1]), integer_io(p, state, 0), None if p[2] is None else p[2].array, out,
                clamp)


def _bound_deconvolution(p, state):
    from ...kernels.openvx.deconvolution import bind_deconvolution
    if _overlaps(p, 4):
        return None
    return bind_deconvolution(state["planned"].current(p[1]), p[0].array, None if p[2] is None else p[2].array,
                              p[4].array)


def natively(bound_of):
    """A kernel's ``native`` hook from its binder: the bound entry (None: the node runs from Python); a layer
    planned on the float engine (``state["float"]``) gives the engine's entry (``float_layers``)."""
    def hook(p, state):
        if state.get("float"):
            io = _float_io(p, state)
            return None if io is None else state["planned"].current(p[1]).native(*io)
        bound = bound_of(p, state)
        return None if bound is None else bound.entry
    return hook


def binding(bound_of, run):
    """A kernel's ``bind`` hook from its binder and its executor (the fallback); a layer planned on the float
    engine runs the engine's bound call, bound again only after its weights are written."""
    def hook(p, state):
        if state.get("float"):
            return _float_runner(p, state)
        return bound_runner(bound_of(p, state), p[1], functools.partial(run, p, state))
    return hook


def _float_io(p, state, copy_inputs: bool = False):
    """(input, bias, output, layouts, clamp[, residual]) as the float engine's adapter takes them: the layer's own
    arrays (a fully connected layer's flattened to ``[#IFM, B]`` and ``[#OFM, B]``, ``state["flat"]``), the
    output being that of an activation (or a residual add) the plan fused into the layer (``core.rewrites``), the
    layouts the plan chose for the input and output (channels-last or not), the clamp of the fused activation,
    and the skip tensor a convolution's epilogue adds (``core.epilogue_fusion``). None when an input
    overlaps the output (unless ``copy_inputs``: then they are copied) or a flattened view had to copy."""
    from ...core import bordered_tensors, epilogue_fusion, rewrites
    fused = rewrites.epilogue(state)
    out_t, clamp = (p[-1], None) if fused is None else (fused[0], fused[1:])
    skip_t = epilogue_fusion.residual(state)
    found = [bordered_tensors.of(state, t) for t in (p[0], out_t, skip_t)]
    borders = tuple(border for border, _ in found)
    # a tensor the plan holds in a zero-bordered buffer (``core.bordered_tensors``): the buffer, [N, H, W, C]
    x, out, skip = (t if t is None or buffer is None else buffer for t, (_, buffer) in
                    zip((p[0].array, out_t.array, None if skip_t is None else skip_t.array), found))
    bias = None if p[2] is None else p[2].array
    if any(a is not None and np.may_share_memory(out, a) for a in (x, bias, p[1].array, skip)):
        if not copy_inputs:
            return None
        x, bias = x.copy(order="K"), None if bias is None else bias.copy()
        skip = None if skip is None else skip.copy(order="K")
    layouts = state.get(rewrites.LAYOUT, {})
    channels_last = (layouts.get(0) == rewrites.CHANNELS_LAST, layouts.get(len(p) - 1) == rewrites.CHANNELS_LAST)
    flat = state.get("flat")
    if flat is None:
        return (x, bias, out, channels_last, clamp, skip) + ((borders,) if any(borders) else ())
    views = flat(x, out)
    return None if views is None else (views[0], bias, views[1], channels_last, clamp)


def _float_runner(p, state) -> Callable[[], None] | None:
    """The Python path's runner of a layer on the float engine (None when the input overlaps the output: the
    executor copies it per call)."""
    io = _float_io(p, state)
    if io is None:
        return None
    weights, planned = p[1], state["planned"]
    bound = {"stamp": weights.root.writes, "call": planned.current(weights).bind(*io)}

    def run() -> None:
        if weights.root.writes != bound["stamp"]:
            bound["stamp"] = weights.root.writes
            bound["call"] = planned.current(weights).bind(*io)
        bound["call"]()
    return run


def _inputs(p):
    from ...kernels.engine.correlation import detach_inputs
    x, _, bias = detach_inputs(p[4].array, p[0].array, p[1].array, None if p[2] is None else p[2].array)
    return x, bias


def _run_convolution(p, state) -> None:
    from ...kernels.engine.correlation import detach_inputs, execute
    if state.get("float"):
        state["planned"].current(p[1]).bind(*_float_io(p, state, copy_inputs=True))()
        return
    out, clamp = _integer_output(p, state)
    x, _, bias = detach_inputs(out, integer_io(p, state, 0), p[1].array, None if p[2] is None else p[2].array)
    execute(state["planned"].current(p[1]), x, bias, out)
    if clamp is not None:  # saturated to the type, then to the clamp's bounds within it: saturated to those
        np.clip(out, *clamp, out=out)


def _validate_deconvolution(v: Validation) -> None:
    x = nn_input(v, 0, 3)
    pad_x, pad_y, overflow, rounding, a_x, a_y = DECONV_PARAMS.unpack(v.scalar_bytes(3))
    _policies(v, overflow, rounding)
    w = _weights(v, x)
    upscales, sizes = [], []
    for axis, pad, a in ((0, pad_x, a_x), (1, pad_y, a_y)):
        k, name = w.dims[axis], "xy"[axis]
        problem = window_problem(x.dims[axis], pad, k, a + 1)
        if problem is not None:
            v.fail(3, Status.VX_ERROR_INVALID_VALUE, f"{name} axis (padding {pad}, a {a}): {problem}")
        v.require(k >= pad - 1, 3, Status.VX_ERROR_INVALID_VALUE,
                  f"padding_{name} {pad} is too large for kernel_{name} {k} (kernel_{name} >= padding_{name} - 1)")
        want = declared_extent(v, 4, axis) or (x.dims[axis] - 1) * (a + 1) - 2 * pad + k + a
        up = deconvolution_upscale(x.dims[axis], pad, k, a, want)
        if up is None:
            smallest = (x.dims[axis] - 1) * (a + 1) - 2 * pad + k + a
            v.fail(4, Status.VX_ERROR_INVALID_DIMENSION,
                   f"no upscale > a_{name}={a} gives an output {'width' if axis == 0 else 'height'} of {want} "
                   f"from {x.dims[axis]} inputs (out = (in-1)*upscale - 2*{pad} + {k} + {a}; "
                   f"upscale {a + 1} gives {smallest})")
        upscales.append(up)
        sizes.append(want)
    _biases(v, x, [(w.dims[3],), (sizes[0], sizes[1], w.dims[3])])  # per location: a superset of the text
    data_type, fpp = output_format(v, 4, x, rescales=True)
    v.output(4, (sizes[0], sizes[1], w.dims[3]) + x.dims[3:], data_type, fpp)
    conventions = Conventions.at_verify(v)
    v.state.update(pad=(pad_x, pad_y), upscale=tuple(upscales), a=(a_x, a_y),
                   bound={"bound_x": conventions.deconvolution_bound(x.dims[0], upscales[0]),
                          "bound_y": conventions.deconvolution_bound(x.dims[1], upscales[1])},
                   saturate=overflow == ConvertPolicy.VX_CONVERT_POLICY_SATURATE,
                   nearest=rounding == RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN)
    _plan_deconvolution(v)


def _plan_deconvolution(v: Validation) -> None:
    """The layer's route, chosen once: float32 layers the float engine takes (``float_deconvolution.fits``) run
    their phases there, every other layer runs them on the correlation engine (``prepare_deconvolution``)."""
    from ...kernels.openvx import float_deconvolution
    from ...kernels.openvx.deconvolution import prepare_deconvolution
    x_shape, out_shape = tuple(v.tensor(0).dims), tuple(v.node.params[4].dims)
    (pad_x, pad_y), upscales = v.state["pad"], v.state["upscale"]
    bounds = (v.state["bound"]["bound_x"], v.state["bound"]["bound_y"])
    w = v.ref(1).array
    bias_shape = tuple(v.tensor(2).dims) if v.present(2) else None
    v.state["float"] = v.tensor(0).data_type == Type.VX_TYPE_FLOAT32 and float_deconvolution.fits(
        x_shape, w.shape, bias_shape, out_shape, (pad_x, pad_y), upscales, bounds, w.dtype)
    if v.state["float"]:
        v.state["planned"] = PlannedWeights(
            lambda w: float_deconvolution.Deconvolution(w, (pad_x, pad_y), upscales, x_shape, out_shape), v.ref(1))
        return
    arithmetic, has_bias = _arithmetic(v), v.present(2)
    v.state["planned"] = PlannedWeights(
        lambda w: prepare_deconvolution(w, has_bias, x_shape, out_shape, (pad_x, pad_y), tuple(upscales), arithmetic,
                                        bounds=bounds), v.ref(1))


def _run_deconvolution(p, state) -> None:
    from ...kernels.openvx.deconvolution import execute_deconvolution
    if state.get("float"):
        state["planned"].current(p[1]).bind(*_float_io(p, state, copy_inputs=True))()
        return
    x, bias = _inputs(p)
    execute_deconvolution(state["planned"].current(p[1]), x, bias, p[4].array)


def _half_copies(p, state) -> bool:
    """Whether a float16 layer runs as the float32 one on its own input and output (``float16_edges``): on the
    float engine (not the one-map plane kernel), its input and output packed planar and apart: the layout copies
    widen and narrow (``float16_layers.engine_copies``)."""
    from ...kernels.openvx import float16_layers
    return bool(state.get("float")) and getattr(state["planned"].current(p[1]), "planes", None) is None \
        and float16_layers.engine_copies(p[0].array, p[4].array)


register(accepting_float16(KernelDescription("org.khronos.nn_extension.convolution_layer", NNKernel.VX_KERNEL_CONVOLUTION_LAYER,
                           LIBRARY, _signature(NNType.VX_TYPE_NN_CONVOLUTION_PARAMS),
                           _validate_convolution, _run_convolution,
                           bind=binding(_bound_convolution, _run_convolution),
                           native=natively(_bound_convolution), layouts=_layouts,
                           takes_epilogue=_takes_epilogue, takes_maps=_takes_maps, bind_maps=_bind_maps,
                           takes_borders=_takes_borders), copies=_half_copies))
register(accepting_float16(KernelDescription("org.khronos.nn_extension.deconvolution_layer",
                           NNKernel.VX_KERNEL_DECONVOLUTION_LAYER, LIBRARY,
                           _signature(NNType.VX_TYPE_NN_DECONVOLUTION_PARAMS),
                           _validate_deconvolution, _run_deconvolution,
                           bind=binding(_bound_deconvolution, _run_deconvolution),
                           native=natively(_bound_deconvolution)), copies=_half_copies))
