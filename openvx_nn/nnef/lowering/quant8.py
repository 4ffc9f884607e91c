"""Quantized windows on the asymmetric uint8 engine.

A ``conv`` (dense or depthwise), ``linear``, ``max_pool`` or ``avg_pool`` whose input, filter and result are 8-bit unsigned
with one scale and zero point each (what converters write for TensorFlow Lite models) runs on NNAPI's quant8
kernels (``org.openvx_nn.nnapi.*`` on ``engine/nhwc`` and ``quant8_pooling``: exact integer sums, one
requantization by NNAPI's multiplier and shift) rather than in float32 on the quantization grid. The graph's
values stay float32 on their grids between operations: a channels-last copy and a quantize node give the
kernel its codes, a dequantize node and a channels-first copy give the result back, exactly (every value is on
a grid). Anything else returns None and runs in float32 on the grid.
"""
from __future__ import annotations

import numpy as np

from ...api.builder_nodes import nnapi_node as node
from ...api.graph_builder import nhwc_dims
from ...core.enums import Type
from ...core.tensor import Tensor
from ..builder import Blob, NNEFBuilder
from ..quantization import MIN_MAX, ZERO_POINT

U8, I32 = Type.VX_TYPE_UINT8, Type.VX_TYPE_INT32
Grid = tuple[float, int]  # (scale as float32, zero point)


def uint8_grid(quant) -> Grid | None:
    """(scale, zero point) of an 8-bit unsigned, per-tensor quantization whose zero is a code; None otherwise."""
    if not quant or int(quant.get("bits", 0)) != 8 or bool(quant.get("signed", False)):
        return None
    kind = quant.get("op-name")
    try:
        if kind in ZERO_POINT:
            scale, zero = _one(quant["scale"]), _one(quant["zero_point"])
        elif kind in MIN_MAX:
            low, high = _one(quant["min"]), _one(quant["max"])
            scale = (high - low) / 255.0
            zero = -low / scale if scale > 0 else -1.0
        else:
            return None
    except (KeyError, ValueError):
        return None
    if not scale > 0 or abs(zero - round(zero)) > 1e-6 or not 0 <= round(zero) <= 255:
        return None
    return float(np.float32(scale)), round(zero)


def _one(value) -> float:
    array = np.asarray(value, np.float64).reshape(-1)
    if array.size != 1:
        raise ValueError("per-channel")
    return float(array[0])


def _grid_of(g: NNEFBuilder, name) -> Grid | None:
    tensor = g.nnef.tensors.get(name) if isinstance(name, str) else None  # a tensor's name, or a number
    return None if tensor is None else uint8_grid(tensor.quantization)


def _codes_in(g: NNEFBuilder, x: Blob, grid: Grid) -> Tensor:
    """``x`` (float32 on ``grid``, NNEF's [N, C, H, W]) as uint8 codes in NHWC."""
    nhwc = g.temp_dims(nhwc_dims(x.shape))
    g.coreml("to_nhwc", (x.tensor, nhwc))
    codes = g.typed(nhwc.dims, U8)
    node(g, "quantize", {"input": nhwc, "output": codes}, {"output_zero_point": grid[1]},
         {"output_scale": grid[0]})
    return codes


def _values_out(g: NNEFBuilder, codes: Tensor, grid: Grid, name: str, shape) -> None:
    """Result ``name`` (NNEF ``shape``) from its NHWC codes: dequantized, back to channels first."""
    real = g.temp_dims(codes.dims)
    node(g, "dequantize", {"input": codes, "output": real}, {"input_zero_point": grid[1]},
         {"input_scale": grid[0]})
    g.coreml("to_chw", (real, g.output(name, shape)))


def _window(before, after, stride) -> dict[str, int]:
    return {"pad_top": before[0], "pad_bottom": after[0], "pad_left": before[1], "pad_right": after[1],
            "stride_h": stride[0], "stride_w": stride[1]}


def _fits(x_shape, kernel, stride, before, after, out_shape) -> bool:
    """NNAPI's output extent ``(in + pads - k) // stride + 1`` is the one NNEF inferred."""
    return all(o == (n + b + a - k) // s + 1 and n + b + a >= k
               for n, k, s, b, a, o in zip(x_shape[2:], kernel, stride, before, after, out_shape[2:]))


def conv(g: NNEFBuilder, op, x: Blob, groups: int, stride, dilation, before, after, border: str,
         out_shape, name: str) -> str | None:
    """A dense or depthwise ``conv`` of uint8 input, filter and result on ``nnapi.conv_2d`` /
    ``depthwise_conv_2d``; None when it is not one (then it runs on the float grid)."""
    channels = x.shape[1]
    grids, w = _operands(g, op, name)
    if grids is None or w.ndim != 4 or border != "constant" or list(dilation) != [1, 1]:
        return None
    depthwise = groups == channels and w.shape[1] == 1 and groups > 1
    if groups != 1 and not depthwise:
        return None
    if not _fits(x.shape, w.shape[2:], stride, before, after, out_shape):
        return None
    bias = _bias(g, op.inputs["bias"], w.shape[0], grids[0][0] * grids[1][0])
    if bias is None:
        return None
    (xs, xz), (ws, wz), (os_, oz) = grids
    if depthwise:
        nnapi_w, kernel = w.transpose(1, 2, 3, 0), "depthwise_conv_2d"  # [1, KH, KW, C * multiplier]
    else:
        nnapi_w, kernel = w.transpose(0, 2, 3, 1), "conv_2d"  # [O, KH, KW, C]
    filt = g.typed(nnapi_w.shape[::-1], U8, nnapi_w.astype(np.uint8))
    bias_tensor = g.typed((w.shape[0],), I32, bias)
    out = g.typed(nhwc_dims(out_shape), U8)
    ints = _window(before, after, stride) | {"activation": 0, "input_zero_point": xz, "filter_zero_point": wz,
                                             "output_zero_point": oz}
    if depthwise:
        ints["depth_multiplier"] = w.shape[0] // channels
    node(g, kernel, {"input": _codes_in(g, x, grids[0]), "filter": filt, "bias": bias_tensor, "output": out}, ints,
         {"input_scale": xs, "filter_scale": ws, "output_scale": os_})
    _values_out(g, out, grids[2], name, out_shape)
    return f"nnapi.{kernel} (uint8: integer sums, NNAPI's requantization)"


def _operands(g: NNEFBuilder, op, name: str):
    """(the input's, filter's and result's grids, the filter's uint8 codes), or (None, None) when any is not."""
    filter_name = str(op.inputs["filter"])
    grids = _grid_of(g, op.inputs["input"]), _grid_of(g, filter_name), _grid_of(g, name)
    tensor = g.nnef.tensors.get(filter_name)
    if None in grids or tensor is None or tensor.data is None:
        return None, None
    w = np.asarray(tensor.data)
    if w.dtype.kind not in "iu" or w.min(initial=0) < 0 or w.max(initial=0) > 255:
        return None, None
    return grids, w


def linear(g: NNEFBuilder, op, x: Blob, name: str, out_shape) -> str | None:
    """``linear`` of uint8 input, filter and result on ``nnapi.fully_connected`` (NNEF's [N, C] is NNAPI's
    layout: no copies, only the quantize and dequantize nodes)."""
    grids, w = _operands(g, op, name)
    if grids is None or x.rank != 2 or w.ndim != 2:
        return None
    bias = _bias(g, op.inputs["bias"], w.shape[0], grids[0][0] * grids[1][0])
    if bias is None:
        return None
    (xs, xz), (ws, wz), (os_, oz) = grids
    codes = g.typed(x.tensor.dims, U8)
    node(g, "quantize", {"input": x.tensor, "output": codes}, {"output_zero_point": xz}, {"output_scale": xs})
    out = g.typed(tuple(reversed(out_shape)), U8)
    node(g, "fully_connected", {"input": codes, "filter": g.typed(w.shape[::-1], U8, w.astype(np.uint8)),
                                "bias": g.typed((w.shape[0],), I32, bias), "output": out},
         {"activation": 0, "input_zero_point": xz, "filter_zero_point": wz, "output_zero_point": oz},
         {"input_scale": xs, "filter_scale": ws, "output_scale": os_})
    node(g, "dequantize", {"input": out, "output": g.output(name, out_shape)}, {"input_zero_point": oz},
         {"input_scale": os_})
    return "nnapi.fully_connected (uint8: integer sums, NNAPI's requantization)"


def _bias(g: NNEFBuilder, value, channels: int, scale: float) -> np.ndarray | None:
    """The bias as int32 codes of scale ``input scale * filter scale`` and zero point 0 (how TensorFlow Lite
    quantizes it); a bias that is not: None."""
    if not isinstance(value, str):
        return np.zeros(channels, np.int32) if float(value) == 0.0 else None
    tensor = g.nnef.tensors.get(str(value))
    if tensor is None or tensor.data is None:
        return None
    data, quant = np.asarray(tensor.data), tensor.quantization
    if data.size not in (1, channels):
        return None
    if data.dtype.kind in "iu" and quant and quant.get("op-name") in ZERO_POINT:
        try:
            zero, step = _one(quant["zero_point"]), _one(quant["scale"])
        except (KeyError, ValueError):
            return None
        if zero != 0 or abs(step - scale) > 1e-6 * scale:
            return None
        return np.broadcast_to(data.reshape(-1), (channels,)).astype(np.int32)
    if data.dtype.kind == "f" and not np.any(data):
        return np.zeros(channels, np.int32)
    return None


def pool(g: NNEFBuilder, op, x: Blob, kind: str, kernel, stride, dilation, before, after, border: str,
         out_shape, name: str) -> str | None:
    """``max_pool`` or ``avg_pool`` (border ``ignore``: NNAPI's average over the window's part inside the input)
    of a uint8 input into a result on the same grid, on ``nnapi.max_pool_2d`` / ``average_pool_2d``."""
    grid_in, grid_out = _grid_of(g, op.inputs["input"]), _grid_of(g, name)
    if grid_in is None or grid_in != grid_out or list(dilation) != [1, 1]:
        return None
    if (kind == "avg" and border != "ignore") or (kind == "max" and border not in ("ignore", "constant")):
        return None
    if kind == "max" and border == "constant" and any(before + after) and grid_in[1] != 0:
        return None  # NNAPI's max pool skips the padding; a constant zero border takes part unless 0 is the least
    if not _fits(x.shape, kernel, stride, before, after, out_shape):
        return None
    out = g.typed(nhwc_dims(out_shape), U8)
    kernel_name = "max_pool_2d" if kind == "max" else "average_pool_2d"
    ints = _window(before, after, stride) | {"filter_h": kernel[0], "filter_w": kernel[1], "activation": 0,
                                             "input_zero_point": grid_in[1], "output_zero_point": grid_out[1]}
    node(g, kernel_name, {"input": _codes_in(g, x, grid_in), "output": out}, ints,
         {"input_scale": grid_in[0], "output_scale": grid_out[0]})
    _values_out(g, out, grid_out, name, out_shape)
    return f"nnapi.{kernel_name} (uint8)"
