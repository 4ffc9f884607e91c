"""More rank-N layers: comparisons and logic, inverse trigonometric functions, Copy,
Tile, Stack, SplitND, SliceStatic (the seed's examples), Reverse, ConstantPad
(both modes, the seed's examples), ArgMax/ArgMin, RankPreservingReshape,
ReshapeLike, BroadcastTo, Fill, EmbeddingND."""
from __future__ import annotations

import numpy as np
import pytest

from .harness import close, run


@pytest.mark.parametrize("method,kwargs,op", [
    ("add_equal", {}, np.equal), ("add_not_equal", {}, np.not_equal), ("add_less_than", {}, np.less),
    ("add_less_than", {"use_less_than_equal": True}, np.less_equal), ("add_greater_than", {}, np.greater),
    ("add_greater_than", {"use_greater_than_equal": True}, np.greater_equal)])
def test_comparisons_of_two_inputs_and_with_alpha(tmp_path, rng, method, kwargs, op):
    a = rng.integers(0, 3, (2, 3)).astype(np.float32)
    b = rng.integers(0, 3, (1, 3)).astype(np.float32)

    def add(bb):
        getattr(bb, method)("two", ["a", "b"], "y", **kwargs)
        getattr(bb, method)("one", ["a"], "z", alpha=1.0, **kwargs)

    out, _ = run(tmp_path, {"a": a, "b": b}, ["y", "z"], add, exact=True)
    close(out["y"], op(a, b).astype(float))
    close(out["z"], op(a, 1.0).astype(float))


@pytest.mark.parametrize("mode", ["AND", "OR", "XOR", "NOT"])
def test_logical_layers(tmp_path, rng, mode):
    a = rng.integers(0, 2, (3, 4)).astype(np.float32) * 2.5
    b = rng.integers(0, 2, (3, 4)).astype(np.float32)
    names = ["a"] if mode == "NOT" else ["a", "b"]
    out, _ = run(tmp_path, {"a": a, "b": b} if mode != "NOT" else {"a": a}, ["y"],
                 lambda bb: bb.add_logical("l", names, "y", mode), exact=True)
    ta, tb = a != 0, b != 0
    want = {"AND": ta & tb, "OR": ta | tb, "XOR": ta ^ tb, "NOT": ~ta}[mode]
    close(out["y"], want.astype(float))


@pytest.mark.parametrize("op,low,high", [("asin", -0.9, 0.9), ("acos", -0.9, 0.9), ("atan", -3, 3),
                                         ("asinh", -3, 3), ("acosh", 1.1, 4), ("atanh", -0.9, 0.9)])
def test_inverse_trigonometric_layers(tmp_path, rng, op, low, high):
    x = rng.uniform(low, high, (2, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: getattr(b, f"add_{op}")("u", "x", "y"), exact=True)
    numpy_name = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
                  "atanh": "arctanh"}[op]
    close(out["y"], getattr(np, numpy_name)(x.astype(np.float64)))


def test_copy_tile_stack(tmp_path, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    z = rng.standard_normal((2, 3)).astype(np.float32)

    def add(b):
        b.add_copy("copy", "x", "c")
        b.add_tile("tile", "x", "t", reps=[2, 1, 3])
        b.add_stack("stack", ["x", "z"], "s", axis=1)

    out, _ = run(tmp_path, {"x": x, "z": z}, ["c", "t", "s"], add, exact=True)
    close(out["c"], x)
    close(out["t"], np.tile(x, (2, 1, 3)))
    close(out["s"], np.stack([x, z], axis=1))


def test_split_nd_equal_and_sized(tmp_path, rng):
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)

    def add(b):
        b.add_split_nd("even", "x", ["a", "b"], axis=1, num_splits=2)
        b.add_split_nd("sized", "x", ["c", "d", "e"], axis=-2, split_sizes=[1, 2, 3])

    out, _ = run(tmp_path, {"x": x}, ["a", "b", "c", "d", "e"], add, exact=True)
    close(out["a"], x[:, :3])
    close(out["b"], x[:, 3:])
    close(out["c"], x[:, :1])
    close(out["d"], x[:, 1:3])
    close(out["e"], x[:, 3:])


@pytest.mark.parametrize("squeeze", [None, [False, True, False]])
def test_slice_static_matches_the_seed_examples(tmp_path, rng, squeeze):
    x = rng.standard_normal((5, 5, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_slice_static(
        "s", "x", "y", [1, 2, 3], [3, -3, 2], [2, 2, 2], [True, False, True], [False, True, True], squeeze),
        exact=True)
    close(out["y"], x[:3:2, 2::2, ::2] if squeeze is None else x[:3:2, 2, ::2])


def test_reverse_and_negative_slices(tmp_path, rng):
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)

    def add(b):
        b.add_reverse("r", "x", "r", [True, False, True])
        b.add_slice_static("s", "x", "s", [-1, 0, 0], [0, 4, 2], [-2, 1, 1], [False, True, True],
                           [True, True, True])

    out, _ = run(tmp_path, {"x": x}, ["r", "s"], add, exact=True)
    close(out["r"], x[::-1, :, ::-1])
    close(out["s"], x[::-2])


@pytest.mark.parametrize("given", [False, True])
def test_constant_pad_matches_the_seed_examples(tmp_path, rng, given):
    x = rng.standard_normal((20, 10, 5)).astype(np.float32)
    amounts = [0, 0, 17, 0, 0, 14] if given else [0, 0, 3, 4, 0, 9]
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_constant_pad(
        "p", ["x"], "y", value=-2.0, pad_to_given_output_size_mode=given, pad_amounts=amounts), exact=True)
    widths = ((0, 0), (7, 0), (0, 9)) if given else ((0, 0), (3, 4), (0, 9))
    assert out["y"].shape == (20, 17, 14)
    close(out["y"], np.pad(x, widths, constant_values=-2.0))


@pytest.mark.parametrize("method,keep", [("add_argmax", True), ("add_argmin", False)])
def test_arg_max_and_min(tmp_path, rng, method, keep):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: getattr(b, method)("a", "x", "y", axis=-2, keepdims=keep),
                 exact=True)
    want = (np.argmax if method == "add_argmax" else np.argmin)(x, axis=1)
    close(out["y"], np.expand_dims(want, 1) if keep else want)


def test_reshapes_broadcasts_and_fills(tmp_path, rng):
    x = rng.standard_normal((4, 1, 6)).astype(np.float32)
    like = np.zeros((2, 12), np.float32)

    def add(b):
        b.add_rank_preserving_reshape("rp", "x", "rp", [0, 2, -1])
        b.add_reshape_like("rl", ["x", "like"], "rl")
        b.add_broadcast_to_static("bs", "x", "bs", [2, 4, 3, 6])
        b.add_fill_like("fl", "like", "fl", 0.5)
        b.add_fill_static("fs", "fs", [2, 2], 3.0)

    out, _ = run(tmp_path, {"x": x, "like": like}, ["rp", "rl", "bs", "fl", "fs"], add, exact=True)
    close(out["rp"], x.reshape(4, 2, 3))
    close(out["rl"], x.reshape(2, 12))
    close(out["bs"], np.broadcast_to(x, (2, 4, 3, 6)))
    close(out["fl"], np.full((2, 12), 0.5))
    close(out["fs"], np.full((2, 2), 3.0))


def test_embedding_nd(tmp_path, rng):
    w = rng.standard_normal((3, 7)).astype(np.float32)  # [embeddingSize, vocabSize]
    bias = rng.standard_normal(3).astype(np.float32)
    idx = np.array([[[6], [0]], [[2], [2]]], np.float32)  # (2, 2, 1)
    out, _ = run(tmp_path, {"x": idx}, ["y"], lambda b: b.add_embedding_nd("e", "x", "y", 7, 3, w, bias), exact=True)
    close(out["y"], w[:, idx[..., 0].astype(int)].transpose(1, 2, 0) + bias)
