"""The rest of the classic layer set against plain references: split, permute,
padding, crop, slice, sequence repeat, reorganize data, upsample, resize bilinear,
crop-resize, unary functions, L2 normalize, LRN, MVN, reduce, dot product,
embedding, load constant."""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import close, run, weights


def test_split_gives_equal_channel_groups(tmp_path, rng):
    x = rng.standard_normal((6, 2, 3)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["a", "b", "c"], lambda b: b.add_split("s", "x", ["a", "b", "c"]))
    for i, name in enumerate("abc"):
        close(out[name], x[2 * i:2 * i + 2])


@pytest.mark.parametrize("axes", [(0, 3, 1, 2), (0, 2, 3, 1), (0, 1, 3, 2)])
def test_permute_reorders_c_h_w(tmp_path, rng, axes):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_permute("p", axes, "x", "y"))
    close(out["y"], np.transpose(x[None], axes)[0])


@pytest.mark.parametrize("kind", ["constant", "reflection", "replication"])
def test_padding_modes(tmp_path, rng, kind):
    x = rng.standard_normal((2, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_padding("p", left=2, right=1, top=0, bottom=3, value=1.5,
                                                                     input_name="x", output_name="y",
                                                                     padding_type=kind))
    widths = ((0, 0), (0, 3), (2, 1))
    want = {"constant": np.pad(x, widths, constant_values=1.5), "reflection": np.pad(x, widths, mode="reflect"),
            "replication": np.pad(x, widths, mode="edge")}[kind]
    close(out["y"], want)


def test_padding_matches_the_seed_example(tmp_path):
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 3, 4)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_padding("p", left=2, top=2, input_name="x",
                                                                     output_name="y", padding_type="reflection"))
    close(out["y"][0], [[11, 10, 9, 10, 11, 12], [7, 6, 5, 6, 7, 8], [3, 2, 1, 2, 3, 4], [7, 6, 5, 6, 7, 8],
                        [11, 10, 9, 10, 11, 12]])


def test_crop_with_amounts_and_with_a_reference_input(tmp_path, rng):
    x = rng.standard_normal((2, 6, 7)).astype(np.float32)
    r = np.zeros((2, 3, 4), np.float32)

    def add(b):
        b.add_crop("c1", left=1, right=2, top=2, bottom=1, offset=None, input_names=["x"], output_name="y")
        b.add_crop("c2", left=0, right=0, top=0, bottom=0, offset=[1, 3], input_names=["x", "r"], output_name="z")

    out, _ = run(tmp_path, {"x": x, "r": r}, ["y", "z"], add)
    close(out["y"], x[:, 2:5, 1:5])
    close(out["z"], x[:, 1:4, 3:7])


@pytest.mark.parametrize("axis,start,end,stride", [("channel", 1, 5, 2), ("height", -4, -1, 1), ("width", 0, -1, 3)])
def test_slice_with_negative_indices_and_strides(tmp_path, rng, axis, start, end, stride):
    x = rng.standard_normal((6, 5, 7)).astype(np.float32)
    def add(b):
        b.add_slice("s", "x", "y", axis, max(start, 0), end, stride)
        b.spec.neuralNetwork.layers[-1].slice.startIndex = start  # the builder refuses negative starts

    out, _ = run(tmp_path, {"x": x}, ["y"], add)
    index = {"channel": 0, "height": 1, "width": 2}[axis]
    n = x.shape[index]
    sl = [slice(None)] * 3
    sl[index] = slice(start % n, end % n, stride)  # [start, end) with -1 meaning N-1
    close(out["y"], x[tuple(sl)])


def test_sequence_repeat_tiles_the_sequence(tmp_path, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)  # [Seq, C]
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_sequence_repeat("r", 3, "x", "y"), shapes={"x": (3,)},
                 output_shapes={"y": (3,)})
    close(out["y"], np.tile(x, (3, 1)))


def test_reorganize_data_matches_the_seed_example_and_inverts(tmp_path):
    x = np.arange(1, 17, dtype=np.float32).reshape(8, 1, 2)

    def add(b):
        b.add_reorganize_data("d2s", "x", "y", "DEPTH_TO_SPACE", 2)
        b.add_reorganize_data("s2d", "y", "z", "SPACE_TO_DEPTH", 2)

    out, _ = run(tmp_path, {"x": x}, ["y", "z"], add)
    close(out["y"], [[[1, 5, 2, 6], [9, 13, 10, 14]], [[3, 7, 4, 8], [11, 15, 12, 16]]])
    close(out["z"], x)


@pytest.mark.parametrize("mode,linear", [("NN", "DEFAULT"), ("BILINEAR", "ALIGN_CORNERS_TRUE"),
                                         ("BILINEAR", "ALIGN_CORNERS_FALSE"), ("BILINEAR", "DEFAULT")])
def test_upsample(tmp_path, rng, mode, linear):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_upsample("u", 2, 3, "x", "y", mode, linear))
    if mode == "NN":
        want = np.repeat(np.repeat(x, 2, axis=1), 3, axis=2)
    else:
        def grid(n, m):  # the seed's LinearUpsampleMode formulas
            i = np.arange(m)
            if linear == "ALIGN_CORNERS_TRUE":
                pts = i * (n - 1) / (m - 1)
            elif linear == "ALIGN_CORNERS_FALSE":
                pts = i * n / m + 0.5 * n / m - 0.5
            else:
                pts = i * (n - n / m) / (m - 1)
            return np.clip(pts, 0, n - 1)
        want = ref.bilinear(x.astype(np.float64), grid(3, 6), grid(4, 12))
    close(out["y"], want)


@pytest.mark.parametrize("mode", ["ALIGN_ENDPOINTS_MODE", "STRICT_ALIGN_ENDPOINTS_MODE", "UPSAMPLE_MODE",
                                  "ROI_ALIGN_MODE"])
def test_resize_bilinear_sampling_modes(tmp_path, rng, mode):
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_resize_bilinear("r", "x", "y", 3, 7, mode))
    close(out["y"], ref.bilinear(x.astype(np.float64), ref.linspace_grid(5, 3, mode), ref.linspace_grid(4, 7, mode)))


def test_crop_resize_with_normalized_corner_boxes(tmp_path, rng):
    x = rng.standard_normal((2, 6, 8)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 0.5]], np.float32).reshape(2, 4, 1, 1)
    out, _ = run(tmp_path, {"x": x, "roi": boxes}, ["y"],
                 lambda b: b.add_crop_resize("cr", ["x", "roi"], "y", 3, 4, "ALIGN_ENDPOINTS_MODE", True),
                 shapes={"x": (2, 6, 8), "roi": (4, 1, 1)})
    want = []
    for y1, x1, y2, x2 in boxes.reshape(2, 4).astype(np.float64):
        ys = np.linspace(y1 * 5, y2 * 5, 3)
        xs = np.linspace(x1 * 7, x2 * 7, 4)
        want.append(ref.bilinear(x.astype(np.float64), ys, xs))
    close(out["y"], np.stack(want))


UNARY = {"SQRT": lambda v, a, e: np.sqrt(v), "RSQRT": lambda v, a, e: 1 / np.sqrt(v + e),
         "INVERSE": lambda v, a, e: 1 / (v + e), "POWER": lambda v, a, e: v ** a, "EXP": lambda v, a, e: np.exp(v),
         "LOG": lambda v, a, e: np.log(v), "ABS": lambda v, a, e: np.abs(v),
         "THRESHOLD": lambda v, a, e: np.maximum(a, v)}


@pytest.mark.parametrize("mode", sorted(UNARY))
def test_unary_functions_shift_and_scale_first(tmp_path, rng, mode):
    x = rng.uniform(0.5, 2.0, (3, 2, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_unary("u", "x", "y", mode, alpha=1.3, shift=0.25,
                                                                   scale=0.75, epsilon=1e-3))
    close(out["y"], UNARY[mode](0.75 * x.astype(np.float64) + 0.25, 1.3, 1e-3))


def test_l2_normalize(tmp_path, rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_l2_normalize("l2", "x", "y", 1e-4))
    x64 = x.astype(np.float64)
    close(out["y"], x64 / np.sqrt(np.sum(x64 * x64) + 1e-4))


@pytest.mark.parametrize("size,k", [(5, 2.0), (3, 1.0), (4, 1.5), (1, 0.5)])
def test_lrn_across_channels(tmp_path, rng, size, k):
    x = rng.standard_normal((6, 3, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_lrn("lrn", "x", "y", 1e-1, 0.75, size, k))
    close(out["y"], ref.lrn(x.astype(np.float64), 1e-1, 0.75, size, k))


@pytest.mark.parametrize("across,variance", [(True, True), (False, True), (False, False)])
def test_mean_variance_normalize(tmp_path, rng, across, variance):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_mvn("mvn", "x", "y", across, variance, 1e-5))
    x64 = x.astype(np.float64)
    axes = (0, 1, 2) if across else (1, 2)
    centred = x64 - x64.mean(axis=axes, keepdims=True)
    want = centred / np.sqrt(x64.var(axis=axes, keepdims=True) + 1e-5) if variance else centred
    close(out["y"], want)


REDUCE = {"sum": np.sum, "avg": np.mean, "prod": np.prod, "sumsquare": lambda v, axis, keepdims: np.sum(
    v * v, axis=axis, keepdims=keepdims), "L1": lambda v, axis, keepdims: np.sum(np.abs(v), axis=axis, keepdims=keepdims),
    "L2": lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims)), "max": np.max, "min": np.min,
    "logsum": lambda v, axis, keepdims: np.log(np.sum(v, axis=axis, keepdims=keepdims) + 1e-6),
    "argmax": lambda v, axis, keepdims: np.expand_dims(np.argmax(v, axis=axis[0]), axis[0]).astype(float)}
AXES = {"CHW": (0, 1, 2), "HW": (1, 2), "C": (0,), "H": (1,), "W": (2,)}


@pytest.mark.parametrize("mode,axis", [(m, a) for m in REDUCE for a in ("CHW", "HW", "C", "H", "W")
                                       if m != "argmax" or len(AXES[a]) == 1][::2] + [("argmax", "H")])
def test_reduce(tmp_path, rng, mode, axis):
    x = rng.uniform(0.5, 1.5, (3, 4, 2)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_reduce("r", "x", "y", axis, mode, 1e-6))
    close(out["y"], REDUCE[mode](x.astype(np.float64), axis=AXES[axis], keepdims=True))


@pytest.mark.parametrize("cosine", [False, True])
def test_dot_product(tmp_path, rng, cosine):
    a, c = rng.standard_normal((5,)).astype(np.float32), rng.standard_normal((5,)).astype(np.float32)
    mode = "COS" if cosine else "DOT"
    out, _ = run(tmp_path, {"a": a, "c": c}, ["y"], lambda b: b.add_elementwise("d", ["a", "c"], "y", mode),
                 output_shapes={"y": (1,)})
    a64, c64 = a.astype(np.float64), c.astype(np.float64)
    want = a64 @ c64 / (np.linalg.norm(a64) * np.linalg.norm(c64)) if cosine else a64 @ c64
    close(out["y"], [want])


def test_embedding_looks_up_rows_and_adds_bias(tmp_path, rng):
    w = rng.standard_normal((4, 10)).astype(np.float32)   # [outputChannels, inputDim]
    bias = rng.standard_normal(4).astype(np.float32)
    idx = np.array([3, 0, 9, 3], np.float32).reshape(4, 1)  # [Seq, 1]
    out, spec = run(tmp_path, {"x": idx}, ["y"], lambda b: b.add_embedding("e", w, bias, 10, 4, True, "x", "y"),
                    shapes={"x": (1,)}, output_shapes={"y": (4,)})
    p = spec.neuralNetwork.layers[0].embedding
    table = weights(p.weights, (4, 10))
    close(out["y"], np.stack([table[:, int(i)] for i in idx[:, 0]]) + weights(p.bias, (4,)))


def test_load_constant_feeds_later_layers(tmp_path, rng):
    x = rng.standard_normal((2, 3, 3)).astype(np.float32)
    k = rng.standard_normal((2, 3, 3)).astype(np.float32)

    def add(b):
        b.add_load_constant("k", "k", k, [2, 3, 3])
        b.add_elementwise("add", ["x", "k"], "y", "ADD")

    out, _ = run(tmp_path, {"x": x}, ["y"], add)
    close(out["y"], x + k)
