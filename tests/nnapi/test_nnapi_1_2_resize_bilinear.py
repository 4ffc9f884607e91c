"""RESIZE_BILINEAR's API level 29 forms against a plain loop written from the Android 10 ``NeuralNetworks.h``:
resizing by scale (``new_width = floor(width * width_scale)``, FLOAT32 scalars beside float32 and uint8 tensors,
FLOAT16 beside float16) and TENSOR_QUANT8_ASYMM tensors (the output quantized like the input), in both layouts.

The reference interpolates in float64 between the four neighbours of source ``(y * (height / new_height),
x * (width / new_width))`` (the ratio first, as Android's reference computes it), those past the last row or column clamped to it; uint8 results are the interpolated raw
values rounded to nearest, halves to even (an upscale by 2 puts many outputs on a half)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import F16T, F32T, Q8, Out, Tensor, boolean, collect_garbage, f16, f32, i32, refused, run  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType
LAYOUTS = pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])


def reference(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """float64 bilinear interpolation of NHWC ``x`` to ``out_h`` x ``out_w``, element by element."""
    n, h, w, c = x.shape
    out = np.zeros((n, out_h, out_w, c))
    for b, y, xx, k in np.ndindex(out.shape):
        sy, sx = y * (h / out_h), xx * (w / out_w)  # Android's reference: the position times in / out
        y0, x0 = math.floor(sy), math.floor(sx)
        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
        dy, dx = sy - y0, sx - x0
        top = (1 - dx) * float(x[b, y0, x0, k]) + dx * float(x[b, y0, x1, k])
        bottom = (1 - dx) * float(x[b, y1, x0, k]) + dx * float(x[b, y1, x1, k])
        out[b, y, xx, k] = (1 - dy) * top + dy * bottom
    return out


def to_layout(a: np.ndarray, nchw: bool) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2)) if nchw else a


def layout_tail(nchw: bool, flag: bool) -> list:
    return [boolean(nchw)] if nchw or flag else []


def check(got: np.ndarray, want: np.ndarray, dtype) -> None:
    if dtype == np.uint8:
        np.testing.assert_array_equal(got, np.rint(want).astype(np.uint8))
    elif dtype == np.float16:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 ** -10, atol=2 ** -24)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def data(rng, shape, dtype) -> np.ndarray:
    if dtype == np.uint8:
        x = rng.integers(0, 256, shape).astype(np.uint8)
        x.flat[0], x.flat[-1] = 0, 255  # the ends of the range
        return x
    return (rng.standard_normal(shape) * 3).astype(dtype)


KINDS = {np.float32: (F32T, f32), np.float16: (F16T, f16), np.uint8: (Q8, f32)}
DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8], ids=["f32", "f16", "q8"])


@LAYOUTS
@DTYPES
def test_resize_bilinear_by_scale_takes_floor_of_extent_times_scale(dtype, nchw):
    rng = np.random.default_rng(5 + 2 * nchw + list(KINDS).index(dtype) * 7)
    kind, scalar = KINDS[dtype]
    quant = (0.5, 7) if dtype == np.uint8 else (0.0, 0)
    done = 0
    while done < 4:
        n, h, w, c = (int(d) for d in rng.integers(1, 6, 4))
        ws, hs = (float(rng.choice([0.5, 0.7, 1.0, 1.5, 2.0, 2.5, 3.0])) for _ in range(2))
        out_w = math.floor(np.float32(w) * np.float32(np.dtype(dtype).type(ws) if dtype == np.float16 else ws))
        out_h = math.floor(np.float32(h) * np.float32(np.dtype(dtype).type(hs) if dtype == np.float16 else hs))
        if out_w < 1 or out_h < 1:
            continue
        x = data(rng, (n, h, w, c), dtype)
        want = reference(x, out_h, out_w)
        got = run(OP.RESIZE_BILINEAR, [Tensor(to_layout(x, nchw), *quant), scalar(ws), scalar(hs),
                                       *layout_tail(nchw, done % 2 == 1)],
                  [Out(kind, to_layout(want, nchw).shape, *quant)])[0]
        check(got, to_layout(want, nchw), dtype)
        done += 1


@LAYOUTS
def test_uint8_resize_bilinear_by_shape_rounds_the_interpolated_raw_values_to_nearest(nchw):
    rng = np.random.default_rng(23 + nchw)
    shapes = [((1, 2, 2, 3), 4, 4), ((2, 3, 1, 2), 6, 1)]  # upscales by 2: outputs on halves
    shapes += [((int(rng.integers(1, 3)), *(int(d) for d in rng.integers(1, 7, 3))), int(rng.integers(1, 9)),
                int(rng.integers(1, 9))) for _ in range(4)]
    for shape, out_h, out_w in shapes:
        x = data(rng, shape, np.uint8)
        want = reference(x, out_h, out_w)
        quant = (float(rng.choice([0.1, 0.5, 3.0])), int(rng.integers(0, 256)))
        got = run(OP.RESIZE_BILINEAR, [Tensor(to_layout(x, nchw), *quant), i32(out_w), i32(out_h),
                                       *layout_tail(nchw, False)], [Out(Q8, to_layout(want, nchw).shape, *quant)])[0]
        check(got, to_layout(want, nchw), np.uint8)


def test_uint8_resize_bilinear_with_an_output_quantized_otherwise_is_refused():
    x = np.zeros((1, 2, 2, 1), np.uint8)
    message = refused(OP.RESIZE_BILINEAR, [Tensor(x, 0.5, 3), i32(4), i32(4)], [Out(Q8, (1, 4, 4, 1), 0.25, 3)])
    assert "quantization" in message
