"""NNAPI 1.2's region operations as OpenVX kernels: ROI_ALIGN, ROI_POOLING, AXIS_ALIGNED_BBOX_TRANSFORM and
HEATMAP_MAX_KEYPOINT.

Boxes are read as real values: float16 and float32 as they are, TENSOR_QUANT16_ASYMM (bits in an INT16 tensor)
by its scale and zero point. Results are computed in float64 and rounded once to the output type (uint8 and
uint16: half to even, clamped). ROI max pooling runs the OpenVX ROI pooling kernel (the Fast R-CNN bins) on
the corners ``detection.pooling_corners`` rounds, image by image.

ROIs (and HEATMAP_MAX_KEYPOINT's boxes) an operation before chose by their data (BOX_WITH_NMS_LIMIT's, GENERATE_PROPOSALS') come in tensors holding
the most rows that can come; the optional ``rows`` input (INT32 [1], the count that operation wrote) says how
many lead: only those are read, and the output's rows past them are zeros. A count of 0 is the header's empty ROIs.
"""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import asymmetric, detection, keypoints
from ...kernels.openvx.roi_pooling import roi_pooling
from .common import F32, I32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

F16, I16, U16 = np.dtype(np.float16), np.dtype(np.int16), np.dtype(np.uint16)
BOX_BITS = (I16, U16)
"""A TENSOR_QUANT16_ASYMM: uint16 to the lowering, its bits in int16 to the validator and the run."""
FEATURES = (F16, F32, U8)


def real(args: Args, name: str, signed: bool = False) -> np.ndarray:
    """Tensor ``name``'s real values in float64 (16-bit quantized values in an int16 array, by their quantization:
    TENSOR_QUANT16_ASYMM's uint16 bits, or with ``signed`` TENSOR_QUANT16_SYMM's int16)."""
    a = args[name]
    if a.dtype in BOX_BITS:
        bits = a if signed else a.view(np.uint16)
        return (bits.astype(np.float64) - args[f"{name}_zero_point"]) * args[f"{name}_scale"]
    return asymmetric.dequantize(a, args.quant(name))


def store(args: Args, name: str, values: np.ndarray) -> None:
    out = args[name]
    if out.dtype == I16:
        detection.store_quant16(values, out, args[f"{name}_scale"], args[f"{name}_zero_point"])
    else:
        asymmetric.store(values, out, args.quant(name))


def _rois(args: Args) -> int:
    """Checks the ROIs and their batch indices against each other; their count."""
    rois = rank_in(args, "rois", (2,))
    dtype_in(args, "rois", (F16, F32, *BOX_BITS))
    require(rois[1] == 4, "rois", f"rois has shape {list(rois)}, expected [num_rois, 4]")
    batches = rank_in(args, "batches", (1,))
    dtype_in(args, "batches", (I32,))
    require(batches[0] == rois[0], "batches", f"{batches[0]} batch indices for {rois[0]} ROIs")
    return rois[0]


def rows_in(args: Args) -> None:
    """Checks the optional ``rows`` input: an INT32 [1] tensor."""
    if args.get("rows") is not None:
        dtype_in(args, "rows", (I32,))
        require(tuple(args["rows"].shape) == (1,), "rows", f"rows has shape {list(args['rows'].shape)}, "
                "expected [1]")


def used_rows(args: Args, rows: int) -> int:
    """How many of the ``rows`` leading rows hold ROIs: all of them, or the ``rows`` input's value (else the run
    fails naming it)."""
    count = args.get("rows")
    if count is None:
        return rows
    n = int(count.reshape(-1)[0])
    if not 0 <= n <= rows:
        raise IndexError(f"the count of ROIs is {n}; the tensors hold 0..{rows}")
    return n


def checked_batches(args: Args, count: int, rows: int | None = None) -> np.ndarray:
    """The first ``rows`` (None: all) batch indices, each in ``0 .. count - 1`` (else the run fails naming it)."""
    batches = np.asarray(args["batches"][:rows], np.int64)
    bad = (batches < 0) | (batches >= count)
    if bad.any():
        raise IndexError(f"batch index {int(batches[bad][0])} is outside 0..{count - 1}")
    return batches


# -- ROI_ALIGN, ROI_POOLING --------------------------------------------------------------------------------------
def _infer_roi(args: Args):
    shape = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", FEATURES)
    n = _rois(args)
    rows_in(args)
    oh, ow = int(args["out_height"]), int(args["out_width"])
    require(oh >= 1 and ow >= 1, "out_height", f"output size {oh} x {ow} must be positive",
            Status.VX_ERROR_INVALID_VALUE)
    require(args["height_ratio"] > 0 and args["width_ratio"] > 0, "height_ratio",
            f"ratios {args['height_ratio']} and {args['width_ratio']} must be positive", Status.VX_ERROR_INVALID_VALUE)
    c = shape[1] if args["nchw"] else shape[3]
    return {"output": ((n, c, oh, ow) if args["nchw"] else (n, oh, ow, c), dtype)}


def _nhwc(args: Args, name: str) -> np.ndarray:
    a = args[name]
    return a.transpose(0, 2, 3, 1) if args["nchw"] else a


def _run_roi_align(args: Args) -> None:
    """out[r] = bins of ROI r, each the mean of bilinearly interpolated sample points (``detection.roi_align``)."""
    x = asymmetric.dequantize(_nhwc(args, "input"), args.quant("input"))
    out = _nhwc(args, "output")
    n = used_rows(args, out.shape[0])
    result = np.zeros(out.shape, np.float64)
    detection.roi_align(x, real(args, "rois")[:n], checked_batches(args, x.shape[0], n), args["height_ratio"],
                        args["width_ratio"], int(args["sampling_h"]), int(args["sampling_w"]), result[:n])
    asymmetric.store(result, out, args.quant("output"))


def _run_roi_pooling(args: Args) -> None:
    """out[r] = the largest value of each Fast R-CNN bin of ROI r's rounded corners (raw values compared)."""
    x, out = _nhwc(args, "input"), _nhwc(args, "output")
    n = used_rows(args, out.shape[0])
    out[n:] = 0
    batches = checked_batches(args, x.shape[0], n)
    corners = detection.pooling_corners(real(args, "rois")[:n], args["height_ratio"], args["width_ratio"])
    kind = np.float32 if x.dtype == F16 else x.dtype  # float16 widened exactly, the maxima narrowed exactly
    for b in np.unique(batches):
        mine = np.flatnonzero(batches == b)
        src = np.ascontiguousarray(x[b].transpose(1, 0, 2), kind)  # [W, H, C]
        pooled = np.empty((out.shape[2], out.shape[1], out.shape[3], len(mine)), kind)
        roi_pooling(src, np.ascontiguousarray(corners[:, mine]), pooled)
        out[mine] = pooled.transpose(3, 1, 0, 2)


ROI_INTS = ("out_height", "out_width", "nchw")
nnapi_kernel(NNAPIKernel("roi_align", 81, ("input", "rois", "batches", "rows?"), ("output",), _infer_roi, _run_roi_align,
                         ints=ROI_INTS + ("sampling_h", "sampling_w"), floats=("height_ratio", "width_ratio"),
                         quantized=("input", "rois", "output")))
nnapi_kernel(NNAPIKernel("roi_pooling", 82, ("input", "rois", "batches", "rows?"), ("output",), _infer_roi, _run_roi_pooling,
                         ints=ROI_INTS, floats=("height_ratio", "width_ratio"), quantized=("input", "rois", "output")))


# -- AXIS_ALIGNED_BBOX_TRANSFORM ---------------------------------------------------------------------------------
def _infer_bbox(args: Args):
    n = _rois(args)
    rows_in(args)
    dtype = np.dtype(args["rois"].dtype)
    deltas = rank_in(args, "deltas", (2,))
    dtype_in(args, "deltas", (U8,) if dtype in BOX_BITS else (dtype,))
    require(deltas[0] == n and deltas[1] % 4 == 0 and deltas[1] > 0, "deltas",
            f"deltas has shape {list(deltas)}, expected [{n}, num_classes * 4]")
    info = rank_in(args, "image_info", (2,))
    dtype_in(args, "image_info", (dtype,))
    require(info[1] == 2 and info[0] >= 1, "image_info", f"image_info has shape {list(info)}, expected [batches, 2]")
    return {"output": (deltas, dtype)}


def _run_bbox(args: Args) -> None:
    """out = each box refined by each class's deltas, clipped to its image (``detection.bbox_transform``)."""
    info = real(args, "image_info")
    result = np.zeros(args["output"].shape, np.float64)
    n = used_rows(args, result.shape[0])
    if n:  # none: the header's empty ROIs
        detection.bbox_transform(real(args, "rois")[:n], real(args, "deltas")[:n],
                                 checked_batches(args, info.shape[0], n), info, result[:n])
    store(args, "output", result)


nnapi_kernel(NNAPIKernel("axis_aligned_bbox_transform", 41, ("rois", "deltas", "batches", "image_info", "rows?"), ("output",),
                         _infer_bbox, _run_bbox, quantized=("rois", "deltas", "image_info", "output")))


# -- HEATMAP_MAX_KEYPOINT ----------------------------------------------------------------------------------------
def _infer_keypoints(args: Args):
    shape = rank_in(args, "heatmaps", (4,))
    dtype = dtype_in(args, "heatmaps", FEATURES)
    n, height, width, keypoints = (shape[0], shape[2], shape[3], shape[1]) if args["nchw"] else shape
    require(height == width and height >= 2, "heatmaps", f"heatmaps of {height} x {width}; they must be square "
            "and at least 2 x 2")
    boxes = rank_in(args, "boxes", (2,))
    box_type = dtype_in(args, "boxes", (U16, I16) if dtype == U8 else (dtype,))
    require(boxes == (n, 4), "boxes", f"boxes has shape {list(boxes)}, expected [{n}, 4]")
    rows_in(args)
    return {"scores": ((n, keypoints), dtype), "keypoints": ((n, keypoints, 2), box_type)}


def _run_keypoints(args: Args) -> None:
    """scores, keypoints = each heatmap's refined maximum and where it lies in its box (``keypoints``)."""
    heatmaps = args["heatmaps"]
    if args["nchw"]:
        heatmaps = heatmaps.transpose(0, 2, 3, 1)
    scores = np.zeros(args["scores"].shape)
    points = np.zeros(args["keypoints"].shape)
    n = used_rows(args, scores.shape[0])
    if n:  # none: the header's empty ROIs
        keypoints.max_keypoints(asymmetric.dequantize(heatmaps[:n], args.quant("heatmaps")), real(args, "boxes")[:n],
                                scores[:n], points[:n])
    asymmetric.store(scores, args["scores"], args.quant("scores"))
    store(args, "keypoints", points)


nnapi_kernel(NNAPIKernel("heatmap_max_keypoint", 56, ("heatmaps", "boxes", "rows?"), ("scores", "keypoints"),
                         _infer_keypoints, _run_keypoints, ints=("nchw",),
                         quantized=("heatmaps", "boxes", "scores", "keypoints")))
