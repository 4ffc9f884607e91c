"""Convolutions writing straight into the slice of the concatenation along C that alone reads them (DeepLab's
atrous spatial pyramid: ``lowering.concat_chains.early_slot``): the concatenation's output is made at the first such
convolution from the channels its inputs' layers state, the convolutions (1x1 and dilated 3x3, a batchnorm and ReLU
folded in) write their slices, and the concatenation copies only the others -- an upsampled pooling made before,
a batchnorm held on CoreML's layout. The numbers are a float64 reference's, and the bytes those of the same model
with ``OPENVX_NN_CONCAT_SLICES=0`` (every input copied)."""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import batchnorm_parameters, builder, predict_twice


def _pyramid(rng, c: int, h: int, w: int, widths: list[int], rate: int, pool_first: bool):
    """The builder and a float64 reference of ``x``: a 1x1 and a dilated 3x3 branch (conv, batchnorm, ReLU), a
    batchnorm of ``x`` and the image pooling (global average, 1x1 conv, nearest upsampling; made first or last),
    concatenated as ``[one, atrous, pooled, plain]``, and a 1x1 projection to ``y``."""
    a1, a2, a3 = widths
    b = builder({"x": (c, h, w)}, ["y"])
    wp = (rng.standard_normal((a3, c, 1, 1)) * 0.5).astype(np.float32)

    def pooling():
        b.add_pooling("pool", 1, 1, 1, 1, "AVERAGE", "VALID", "x", "p", is_global=True)
        b.add_convolution("pconv", c, a3, 1, 1, 1, 1, "valid", 1, wp.transpose(2, 3, 1, 0), None, False,
                          input_name="p", output_name="q")
        b.add_upsample("up", h, w, "q", "pooled")
    if pool_first:
        pooling()
    w1 = (rng.standard_normal((a1, c, 1, 1)) * 0.5).astype(np.float32)
    bias1 = rng.standard_normal(a1).astype(np.float32)
    bn1 = batchnorm_parameters(rng, a1)
    b.add_convolution("one", c, a1, 1, 1, 1, 1, "valid", 1, w1.transpose(2, 3, 1, 0), bias1, True,
                      input_name="x", output_name="c1")
    b.add_batchnorm("bn1", a1, *bn1, input_name="c1", output_name="n1", epsilon=1e-5)
    b.add_activation("relu1", "RELU", "n1", "r1")
    w2 = (rng.standard_normal((a2, c, 3, 3)) * 0.5).astype(np.float32)
    bn2 = batchnorm_parameters(rng, a2)
    b.add_convolution("atrous", c, a2, 3, 3, 1, 1, "valid", 1, w2.transpose(2, 3, 1, 0), None, False,
                      input_name="x", output_name="c2", dilation_factors=[rate, rate], padding_top=rate,
                      padding_bottom=rate, padding_left=rate, padding_right=rate)
    b.add_batchnorm("bn2", a2, *bn2, input_name="c2", output_name="n2", epsilon=1e-5)
    b.add_activation("relu2", "RELU", "n2", "r2")
    bn3 = batchnorm_parameters(rng, c)
    b.add_batchnorm("bn3", c, *bn3, input_name="x", output_name="plain", epsilon=1e-5)
    if not pool_first:  # its channels stated by its layers when the first branch writes its slice
        pooling()
    b.add_elementwise("cat", ["r1", "r2", "pooled", "plain"], "cat", mode="CONCAT")
    total = a1 + a2 + a3 + c
    wy = (rng.standard_normal((3, total, 1, 1)) * 0.3).astype(np.float32)
    b.add_convolution("project", total, 3, 1, 1, 1, 1, "valid", 1, wy.transpose(2, 3, 1, 0), None, False,
                      input_name="cat", output_name="y")

    def reference(x):
        x = x.astype(np.float64)
        pooled = np.einsum("oc,c->o", wp[:, :, 0, 0].astype(np.float64), x.mean(axis=(1, 2)))
        pooled = np.broadcast_to(pooled[:, None, None], (a3, h, w))
        one = ref.conv2d(x, w1.astype(np.float64), bias1.astype(np.float64), (1, 1), (1, 1), (0, 0, 0, 0), 1)
        atrous = ref.conv2d(x, w2.astype(np.float64), None, (1, 1), (rate, rate), (rate,) * 4, 1)
        cat = np.concatenate([ref.batchnorm(one, bn1, True), ref.batchnorm(atrous, bn2, True), pooled, ref.batchnorm(x, bn3, False)])
        return ref.conv2d(cat, wy.astype(np.float64), None, (1, 1), (1, 1), (0, 0, 0, 0), 1)

    return b, reference


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(4))
def test_branch_convolutions_write_their_concatenation_slices_with_the_numbers_and_bytes_of_copies(tmp_path,
                                                                                                   monkeypatch, seed):
    rng = np.random.default_rng([5290, seed])
    c, h, w = (int(v) for v in rng.integers(1, 9, 3))
    widths = [int(rng.choice([5, 17, 24, 32])), int(rng.choice([5, 17, 24, 33])), int(rng.integers(1, 9))]
    b, reference = _pyramid(rng, c, h, w, widths, int(rng.integers(1, 4)), seed % 2 == 0)
    x = (rng.standard_normal((c, h, w)) * 2).astype(np.float32)
    monkeypatch.delenv("OPENVX_NN_CONCAT_SLICES", raising=False)
    y, hows, runs = predict_twice(tmp_path, b, x)
    want = reference(x)
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert runs >= 1, "the graph did not run from its native plan"
    for conv in ("one", "atrous"):
        assert hows[conv].endswith("into the concatenation's slice"), hows[conv]
    copies = int(hows["cat"].split(" x ")[0])  # the batchnorm's and the upsampling's, unless it wrote its slice
    assert copies <= 2 and f"{4 - copies} written there" in hows["cat"], hows["cat"]
    monkeypatch.setenv("OPENVX_NN_CONCAT_SLICES", "0")
    copied, hows, _ = predict_twice(tmp_path, b, x)
    assert int(hows["cat"].split(" x ")[0]) >= 3 and "slice" not in hows["one"] + hows["atrous"], hows
    np.testing.assert_array_equal(y.view(np.int32), copied.view(np.int32))
