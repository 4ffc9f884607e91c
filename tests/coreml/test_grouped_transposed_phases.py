"""CoreML's transposed convolutions of more than one group, each of ``PHASE_GROUP_CHANNELS`` channels or more, run
on the float engine's phase route (one phase plan a group, ``operations/coreml/convolution``), as one-group ones
do, not on ``grouped_convolution``'s col2im; the
results match the scattering reference written from the seed's text (``references.deconv2d``) over randomized
groups, strides, kernels and crops, on whole tensors and on channel windows of larger ones with batch dims."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import grouped_convolution
from openvx_nn.kernels.frontend.grouped_convolution import Geometry
from openvx_nn.operations.coreml.convolution import PHASE_GROUP_CHANNELS, _phases

from . import references as ref
from .harness import builder, close, load, weights


@pytest.fixture
def no_col2im(monkeypatch):
    """The grouped col2im route refused: a transposed layer that reached it fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a transposed convolution took grouped_convolution's col2im route")
    monkeypatch.setattr(grouped_convolution, "_transposed_plan", refuse)


@pytest.mark.parametrize("trial", range(8))
def test_grouped_deconvolution_runs_on_the_phases_and_matches_the_reference(tmp_path, no_col2im, trial):
    rng = np.random.default_rng(5100 + trial)
    groups = int(rng.choice([2, 3]))
    cg, og = (int(rng.integers(PHASE_GROUP_CHANNELS, PHASE_GROUP_CHANNELS + 3)) for _ in range(2))
    c, o = groups * cg, groups * og
    h, w = int(rng.integers(2, 7)), int(rng.integers(2, 7))
    k = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    wt = rng.standard_normal((k[0], k[1], c, og)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    full = [(h - 1) * s[0] + k[0], (w - 1) * s[1] + k[1]]
    extra, output_shape, border = {}, None, "valid"
    if trial % 3 == 2:  # outputs past the full result: the bias alone there
        output_shape = (full[0] + 1, full[1] + 2)
        crop = (0, -1, 0, -2)
    else:
        pads = [int(min(v, (full[i // 2] - 1) // 2)) for i, v in enumerate(rng.integers(0, 3, 4))]
        extra = {"padding_top": pads[0], "padding_bottom": pads[1], "padding_left": pads[2], "padding_right": pads[3]}
        crop = tuple(pads)
    b = builder({"x": x.shape}, ["y"])
    b.add_convolution("deconv", c, o, k[0], k[1], s[0], s[1], border, groups, wt, bias, True, is_deconv=True,
                      output_shape=output_shape, input_name="x", output_name="y", **extra)
    model = load(tmp_path, b, nhwc=False)
    try:
        assert len(model.graph.nodes) == 1
        out = model.predict({"x": x})["y"]
    finally:
        model.close()
    p = b.spec.neuralNetwork.layers[0].convolution
    expected = ref.deconv2d(x.astype(np.float64), weights(p.weights, (c, og, k[0], k[1])), weights(p.bias, (o,)),
                            s, groups, crop)
    close(out, expected)


@pytest.mark.parametrize("seed", range(4))
def test_channel_windows_with_batch_dims_match_the_reference(no_col2im, seed):
    """Views (channel windows of larger tensors) in and out, two batch dims, each item as the reference (the
    phase plans themselves, narrow groups too)."""
    rng = np.random.default_rng(5200 + seed)
    groups, cg, og = int(rng.integers(2, 5)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    c, o = groups * cg, groups * og
    h, w, k, s = int(rng.integers(2, 6)), int(rng.integers(2, 6)), (3, 2), (2, int(rng.integers(1, 4)))
    top, left = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    oh, ow = (h - 1) * s[0] + k[0] - top, (w - 1) * s[1] + k[1] - left - 1
    big_in = rng.standard_normal((w, h, c + 3, 2, 2)).astype(np.float32)
    x = big_in[:, :, 1:1 + c]  # OpenVX order [W, H, C, 2, 2]
    filt = rng.standard_normal((k[1], k[0], og, c)).astype(np.float32)  # OpenVX order of CoreML's [C, O/g, kh, kw]
    bias = rng.standard_normal(o).astype(np.float32)
    big_out = np.full((ow, oh, o + 2, 2, 2), 7, np.float32)
    out = big_out[:, :, 2:]
    _phases(x, filt, bias, out, Geometry(groups, s, (1, 1), (top, left), True))()
    for i in range(2):
        for j in range(2):
            item = x[:, :, :, i, j].T.astype(np.float64)  # [C, H, W]
            want = ref.deconv2d(item, filt.T.astype(np.float64), bias, s, groups,
                                (top, (h - 1) * s[0] + k[0] - top - oh, left, (w - 1) * s[1] + k[1] - left - ow))
            close(out[:, :, :, i, j].T, want)
    assert np.all(big_out[:, :, :2] == 7)
