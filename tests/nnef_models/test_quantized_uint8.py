"""Quantized graphs as converters write TensorFlow Lite models (uint8 activations and filters, one scale and zero
point each, int32 biases) run their convolutions and pools on the asymmetric uint8 kernels: the codes equal an
integer reference's (exact sums, the multiplier-and-shift requantization), not merely values near them."""
from __future__ import annotations

import re

import numpy as np
import pytest

from openvx_nn import nnef as nn

from .conftest import NEEDS_PARSER, read_dat

pytest.importorskip("nnef", reason=NEEDS_PARSER)


def _grids(folder) -> dict[str, tuple[float, int]]:
    text = (folder / "graph.quant").read_text()
    return {name: (float(np.float32(float(scale))), int(zero)) for name, zero, scale in
            re.findall(r'"(\w+)": zero_point_linear_quantize\(zero_point = (-?\d+), scale = ([0-9.e-]+)', text)}


@pytest.mark.parametrize("seed", range(4))
def test_uint8_convolutions_and_pools_give_the_integer_references_codes(written, seed):
    folder, case = written("quantized_uint8", seed)
    grids = _grids(folder)
    with nn.load(folder) as model:
        lowered = {op.results[0]: op.lowering for op in model.operations}
        results = model.predict({"x": read_dat(folder / "inputs" / "x.dat")})
    assert lowered["c"].startswith("nnapi.conv_2d (uint8")
    assert lowered["d"].startswith("nnapi.depthwise_conv_2d (uint8")
    assert lowered["pooled"].startswith("nnapi.max_pool_2d (uint8")
    assert lowered["mean"].startswith("nnapi.average_pool_2d (uint8")
    assert lowered["dense"].startswith("nnapi.fully_connected (uint8")
    for name in case.outputs:
        scale, zero = grids[name]
        expected = read_dat(folder / "outputs" / f"{name}.dat").astype(np.float64) / scale + zero
        got = results[name].astype(np.float64) / scale + zero
        assert np.array_equal(expected, np.rint(expected)) and np.array_equal(got, np.rint(got))
        codes = np.rint(got).astype(np.int64)
        assert codes.min() >= 0 and codes.max() <= 255
        assert np.array_equal(codes, np.rint(expected).astype(np.int64)), \
            f"'{name}': {np.argwhere(codes != np.rint(expected))[:5].tolist()} differ"


def test_grids_that_are_not_uint8_per_tensor_stay_on_the_float_grid(written):
    """``linear_quantize`` on [-1, 1] (zero between two codes) and an activation without quantization: the
    convolution runs in float32 on the grid, as the spec's fragments define it."""
    folder, _ = written("quantized")
    with nn.load(folder) as model:
        assert model.operations[0].lowering.startswith("coreml.convolution")


def test_a_filter_without_uint8_codes_keeps_the_float_path(tmp_path):
    folder = tmp_path / "float_bias.nnef"
    folder.mkdir()
    (folder / "graph.nnef").write_text(
        "version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 1, 3, 3]);\n"
        "    f = constant<scalar>(shape = [1, 1, 1, 1], value = [0.5]);\n    y = conv(x, f, 0.25);\n}\n")
    (folder / "graph.quant").write_text(
        '"x": zero_point_linear_quantize(zero_point = 128, scale = 0.5, bits = 8, signed = false, '
        'symmetric = false);\n"y": zero_point_linear_quantize(zero_point = 128, scale = 0.5, bits = 8, '
        'signed = false, symmetric = false);\n')
    with nn.load(folder) as model:
        assert not model.operations[0].lowering.startswith("nnapi")


def test_requantization_ties_round_away_from_zero_as_the_uint8_kernels_do(tmp_path):
    """A multiplier of exactly 1/2 (input scale 0.5 times filter scale 0.5 over output scale 0.5): odd sums are
    ties, which the integer kernels round away from zero (the float grid would round them to even)."""
    import nnef
    folder = tmp_path / "ties.nnef"
    folder.mkdir()
    (folder / "graph.nnef").write_text(
        "version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 1, 2, 4]);\n"
        "    f = variable<scalar>(shape = [1, 1, 1, 1], label = 'f');\n    y = conv(x, f, 0.0);\n}\n")
    grid = "zero_point_linear_quantize(zero_point = {}, scale = 0.5, bits = 8, signed = false, symmetric = false)"
    (folder / "graph.quant").write_text(f'"x": {grid.format(128)};\n"f": {grid.format(0)};\n'
                                        f'"y": {grid.format(128)};\n')
    with open(folder / "f.dat", "wb") as f:
        nnef.write_tensor(f, np.ones((1, 1, 1, 1), np.uint8), quantized=True)
    offsets = np.array([-5, -3, -1, 0, 1, 3, 5, 7]).reshape(1, 1, 2, 4)
    expected = [128 + (abs(int(o)) + 1) // 2 * (1 if o > 0 else -1) for o in offsets.ravel()]  # o / 2, ties away
    with nn.load(folder) as model:
        assert model.operations[0].lowering.startswith("nnapi.conv_2d (uint8")
        y = model.predict({"x": (offsets * 0.5).astype(np.float32)})["y"]
    assert (np.rint(y / 0.5) + 128).astype(int).ravel().tolist() == expected
