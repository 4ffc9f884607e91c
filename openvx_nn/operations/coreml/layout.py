"""CoreML data-movement kernels: reshape, permute, strided slice, pad, tile, reorganise, and the conversions
between CoreML's channel-major blobs and NHWC."""
from __future__ import annotations

import math

import numpy as np

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend import chw_layout
from ...kernels.frontend import rearrange as k
from ...kernels.openvx import transpose
from .common import (
    ENUM,
    F32,
    INT32,
    declared_output,
    describe,
    enum_value,
    float_input,
    output,
    same_output,
    scalar,
    tensor,
    values,
)

PAD_MODES = ("constant", "reflect", "replicate")
REORGANIZE_MODES = ("space_to_depth", "depth_to_space", "pixel_shuffle")


def _validate_reshape(v: Validation) -> None:
    x = float_input(v, 0)
    declared_output(v, 1, math.prod(x.dims))


def _native_reshape(p, state):
    """The reshape as a native entry: the input seen in the output's shape (the same elements in the same linear
    order) copied by the transpose kernel's copy, so a graph with a flatten before its classifier, or a
    concatenation's copies into views, still runs from C. None when that view of the input needs a copy (a
    strided view, e.g. a crop)."""
    try:
        x = np.reshape(p[0].array, p[1].array.shape, order="F", copy=False)
    except ValueError:
        return None
    return transpose.native_entry(x, p[1].array, 0, 0)


describe(10, "reshape", (tensor("input"), output()), _validate_reshape,
         lambda p, state: k.reshape_copy(p[0].array, p[1].array), native=_native_reshape)


def _validate_permute(v: Validation) -> None:
    x = float_input(v, 0)
    axes = values(v, 1)
    v.require(sorted(axes) == list(range(x.rank)), 1, Status.VX_ERROR_INVALID_VALUE,
              f"axes {axes} are not a permutation of 0..{x.rank - 1}")
    v.state["axes"] = axes
    same_output(v, 2, [x.dims[a] for a in axes])


def _native_permute(p, state):
    """The permute as a native entry: the copy of the input's transposed view (the reshape's copy), so that
    attention heads and channel shuffles do not keep a graph from C."""
    return transpose.native_entry(np.transpose(p[0].array, tuple(state["axes"])), p[2].array, 0, 0)


describe(11, "permute", (tensor("input"), tensor("axes", static=True), output()), _validate_permute,
         lambda p, state: k.permute(p[0].array, p[2].array, state["axes"]), native=_native_permute)


def _validate_slice(v: Validation) -> None:
    x = float_input(v, 0)
    begin, step = values(v, 1), values(v, 2)
    dims = declared_output(v, 3)
    ok = len(begin) == len(step) == len(dims) == x.rank and all(
        s != 0 and 0 <= b < n and 0 <= b + (m - 1) * s < n for b, s, m, n in zip(begin, step, dims, x.dims))
    v.require(ok, 1, Status.VX_ERROR_INVALID_VALUE,
              f"begin {begin} step {step} for output {list(dims)} leave the input {list(x.dims)}")
    v.state.update(begin=begin, step=step)


def _native_slice(p, state):
    """The slice as a native entry: the copy of the input's strided view (steps may be negative)."""
    x, out = p[0].array, p[3].array
    return transpose.native_entry(k.strided_view(x, state["begin"], state["step"], out.shape), out, 0, 0)


describe(12, "slice", (tensor("input"), tensor("begin", static=True), tensor("step", static=True), output()),
         _validate_slice, lambda p, state: k.strided_slice(p[0].array, p[3].array, state["begin"], state["step"]),
         native=_native_slice)


def _validate_pad(v: Validation) -> None:
    x = float_input(v, 0)
    before = values(v, 1)
    v.state["mode"] = mode = enum_value(v, 2, PAD_MODES, "padding mode")
    dims = declared_output(v, 4)
    ok = len(before) == len(dims) == x.rank and all(0 <= b <= n - s for b, n, s in zip(before, dims, x.dims))
    if ok and mode == "reflect":
        ok = all(b < s and n - s - b < s for b, n, s in zip(before, dims, x.dims))
    v.require(ok, 1, Status.VX_ERROR_INVALID_VALUE,
              f"padding {before} from {list(x.dims)} to {list(dims)} is impossible in mode {mode}")
    v.state["before"] = before


describe(13, "pad", (tensor("input"), tensor("before", static=True), scalar("mode", ENUM), scalar("value", F32),
                     output()), _validate_pad,
         lambda p, state: k.pad(p[0].array, p[4].array, state["before"], state["mode"], p[3].value))


def _validate_tile(v: Validation) -> None:
    x = float_input(v, 0)
    dims = declared_output(v, 1)
    v.require(len(dims) == x.rank and all(n % s == 0 for n, s in zip(dims, x.dims)), 1,
              Status.VX_ERROR_INVALID_DIMENSION, f"output {list(dims)} is not a whole tiling of {list(x.dims)}")


describe(14, "tile", (tensor("input"), output()), _validate_tile, lambda p, state: k.tile(p[0].array, p[1].array))


def _validate_reorganize(v: Validation) -> None:
    x = float_input(v, 0)
    block = v.scalar(1)
    v.state["mode"] = mode = enum_value(v, 2, REORGANIZE_MODES, "mode")
    v.require(x.rank >= 3 and block >= 1, 1, Status.VX_ERROR_INVALID_VALUE,
              f"block size {block} on {list(x.dims)} (need rank 3 or more and block >= 1)")
    w, h, c = x.dims[:3]
    if mode == "space_to_depth":
        v.require(w % block == 0 and h % block == 0, 1, Status.VX_ERROR_INVALID_VALUE,
                  f"block size {block} does not divide width {w} and height {h}")
        dims = (w // block, h // block, c * block * block)
    else:
        v.require(c % (block * block) == 0, 1, Status.VX_ERROR_INVALID_VALUE,
                  f"block size {block} squared does not divide {c} channels")
        dims = (w * block, h * block, c // (block * block))
    same_output(v, 3, dims + x.dims[3:])


describe(15, "reorganize", (tensor("input"), scalar("block_size", INT32), scalar("mode", ENUM), output()),
         _validate_reorganize, lambda p, state: k.reorganize(p[0].array, p[3].array, p[1].value, state["mode"]))


# -- channel-major <-> NHWC: the edges of a region run on the NHWC float engines -------------------------------
def _nhwc_dims(chw: tuple[int, ...]) -> tuple[int, ...]:
    """The NHWC dims ``[C, W, H, N]`` of a blob of CoreML dims ``[W, H, C, *lead]`` (``N`` the product of lead)."""
    return (chw[2], chw[0], chw[1], math.prod(chw[3:]))


def _validate_to_nhwc(v: Validation) -> None:
    x = float_input(v, 0)
    v.require(x.rank >= 3, 0, Status.VX_ERROR_INVALID_DIMENSION, f"input {list(x.dims)} must be [W, H, C, *batch]")
    want = _nhwc_dims(tuple(x.dims))
    dims = tuple(v.declared(1).dims)
    v.require(dims == want, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"output dims {list(dims)} must be [C, W, H, N] = {list(want)} for input {list(x.dims)}")
    v.output(1, dims, F32, 0)


def _validate_to_chw(v: Validation) -> None:
    x = float_input(v, 0)
    dims = tuple(v.declared(1).dims)
    v.require(len(dims) >= 3, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"output dims {list(dims)} must be declared [W, H, C, *batch]")
    # [C, W, H, N], or [C, N] for a 1 x 1 plane (a fully connected layer's output)
    fits = tuple(x.dims) == _nhwc_dims(dims) or (dims[:2] == (1, 1) and tuple(x.dims) == (dims[2], math.prod(dims[3:])))
    v.require(fits, 0, Status.VX_ERROR_INVALID_DIMENSION,
              f"input dims {list(x.dims)} are not the NHWC [C, W, H, N] of output {list(dims)}")
    v.output(1, dims, F32, 0)


def _shaped(array, shape: tuple[int, ...]):
    """``array`` (a tensor's array) as the C-contiguous ``shape`` over the same memory, None when it is a strided
    view (a CoreML crop or split) that has none."""
    view = array.T.view()
    try:
        view.shape = shape
    except AttributeError:
        return None
    return view if view.flags.c_contiguous else None


def _shapes(to_nhwc: bool, p) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The [N, C, H, W] / [N, H, W, C] shapes of the input's and the output's arrays."""
    chw = p[0].array if to_nhwc else p[1].array
    w, h, c = chw.shape[:3]
    n = math.prod(chw.shape[3:])
    planes, pixels = (n, c, h, w), (n, h, w, c)
    return (planes, pixels) if to_nhwc else (pixels, planes)


def _prepare_layout(to_nhwc: bool):
    def prepare(p, state):
        into, out = _shapes(to_nhwc, p)
        source, target = _shaped(p[0].array, into), _shaped(p[1].array, out)
        if source is not None and target is not None:
            return chw_layout.bind(to_nhwc, source, target)
        # a strided view (a crop, a split) is gathered into or scattered from a contiguous copy
        inner = (np.empty(into, np.float32) if source is None else source,
                 np.empty(out, np.float32) if target is None else target)
        copy, raw_in, raw_out = chw_layout.bind(to_nhwc, *inner), p[0].array.T, p[1].array.T

        def run() -> None:
            if source is None:
                inner[0][...] = raw_in.reshape(into)
            copy()
            if target is None:
                raw_out[...] = inner[1].reshape(raw_out.shape)
        return run
    return prepare


def _native_layout(to_nhwc: bool):
    def native(p, state):
        into, out = _shapes(to_nhwc, p)
        source, target = _shaped(p[0].array, into), _shaped(p[1].array, out)
        return None if source is None or target is None else chw_layout.native_layout(to_nhwc, source, target)
    return native


def _layout(to_nhwc: bool, index: int, name: str, validate) -> None:
    prepare = _prepare_layout(to_nhwc)
    describe(index, name, (tensor("input"), output()), validate, lambda p, state: prepare(p, state)(), prepare,
             _native_layout(to_nhwc))


_layout(True, 16, "to_nhwc", _validate_to_nhwc)
_layout(False, 17, "to_chw", _validate_to_chw)
