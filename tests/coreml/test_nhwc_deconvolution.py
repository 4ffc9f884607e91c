"""A transposed convolution whose square kernel is its stride (U-Net's up-sampling) on the NHWC route: a 1 x 1
``nnapi.conv_2d`` to ``k * k`` times the outputs, then ``nnapi.depth_to_space``. Over randomized shapes it gives
the seed's transposed convolution (a plain float64 reference that adds each input pixel's weighted kernel into the
full output) and the CoreML-layout route's numbers, writes into its slice of the concatenation that alone reads
it when the other input is made already (a concatenation that stays in NHWC), and runs from C;
a deconvolution the rearrangement cannot express keeps CoreML's layout."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm

from . import references as ref
from .harness import builder, close, weights


def _model(rng, c, h, w, o, k, groups, bias, c_skip, expose=True, up_first=False, skip_first=True):
    """skip -> 1 x 1 convolution "s"; x -> 3 x 3 convolution (so the deconvolution's input is held in NHWC) ->
    deconvolution "up"; y = concat(s, up) (``up_first``: concat(up, s)); ``expose``: "up" is a model output too
    (else the concatenation alone reads it); ``skip_first``: "s" is made before "up" (else after it)."""
    b = builder({"x": (c, h, w), "skip": (c_skip, h * k, w * k)}, ["y"] + (["up"] if expose else []),
                output_shapes={"y": (c_skip + o, h * k, w * k), "up": (o, h * k, w * k)})
    wa = rng.standard_normal((3, 3, c, c)).astype(np.float32) / 3
    wt = rng.standard_normal((k, k, c, o // groups)).astype(np.float32)
    bt = rng.standard_normal(o).astype(np.float32) if bias else None
    ws = rng.standard_normal((1, 1, c_skip, c_skip)).astype(np.float32)

    def skip_branch():
        b.add_convolution("s", c_skip, c_skip, 1, 1, 1, 1, "valid", 1, ws, None, False, input_name="skip",
                          output_name="s")
    if skip_first:
        skip_branch()
    b.add_convolution("a", c, c, 3, 3, 1, 1, "same", 1, wa, None, False, input_name="x", output_name="a")
    b.add_convolution("up", c, o, k, k, k, k, "valid", groups, wt, bt, bias, is_deconv=True, input_name="a",
                      output_name="up")
    if not skip_first:
        skip_branch()
    b.add_elementwise("y", ["up", "s"] if up_first else ["s", "up"], "y", mode="CONCAT")
    return b


def _reference(spec, x, skip, c, o, k, groups, bias, up_first=False):
    layers = {layer.name: layer.convolution for layer in spec.neuralNetwork.layers if layer.name in ("a", "up", "s")}
    a = ref.conv2d(x.astype(np.float64), weights(layers["a"].weights, (c, c, 3, 3)), None, (1, 1), (1, 1),
                   (1, 1, 1, 1), 1)
    up = ref.deconv2d(a, weights(layers["up"].weights, (c, o // groups, k, k)),
                      weights(layers["up"].bias, (o,)) if bias else None, (k, k), groups, (0, 0, 0, 0))
    c_skip = skip.shape[0]
    s = ref.conv2d(skip.astype(np.float64), weights(layers["s"].weights, (c_skip, c_skip, 1, 1)), None, (1, 1),
                   (1, 1), (0, 0, 0, 0), 1)
    return up, np.concatenate([up, s] if up_first else [s, up])


def _run(tmp_path, b, inputs):
    path = tmp_path / "model.mlmodel"
    save_spec(b.spec, str(path))
    fast, plain = cm.load(path), cm.load(path, nhwc=False)
    try:
        got = [fast.predict(inputs) for _ in range(2)]  # the second run is native: every node has a native entry
        return got, plain.predict(inputs), {layer.name: layer.lowering for layer in fast.layers}, \
            fast.graph.native_runs
    finally:
        fast.close()
        plain.close()


@pytest.mark.parametrize("draw", range(8))
def test_a_deconvolution_of_kernel_equal_to_stride_runs_on_the_nhwc_engines(tmp_path, rng, draw):
    c, o, c_skip = (int(v) for v in rng.integers(1, 13, 3))
    k = int(rng.integers(1, 5))
    h, w = (int(v) for v in rng.integers(1, 10, 2))
    bias, expose, up_first, skip_first = draw % 2 == 0, draw % 4 < 2, draw >= 4, draw != 7
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    skip = rng.standard_normal((c_skip, h * k, w * k)).astype(np.float32)
    b = _model(rng, c, h, w, o, k, 1, bias, c_skip, expose, up_first, skip_first)
    runs, plain, lowered, native_runs = _run(tmp_path, b, {"x": x, "skip": skip})
    up, y = _reference(b.spec, x, skip, c, o, k, 1, bias, up_first)
    for got in runs:
        if expose:
            close(got["up"], up, atol=1e-4)
        close(got["y"], y, atol=1e-4)
    close(runs[0]["y"], plain["y"], atol=1e-4)
    # into the slice only where the concatenation alone reads it and its other input is made already
    into = not expose and skip_first
    where = "NHWC, into the concatenation's slice" if into else "NHWC"
    assert lowered["up"] == f"nnapi.conv_2d 1 x 1 to {k * k} x {o} channels, nnapi.depth_to_space {k} ({where})"
    placed = not skip_first  # "s" made after "up": its convolution writes its slice (``concat_chains.early_slot``)
    assert lowered["s"].endswith("into the concatenation's slice") == placed, lowered["s"]
    assert lowered["y"] == ("1 x coreml.reshape into views along C, 1 written there (NHWC)" if into or placed else
                            "2 x coreml.reshape into views along C (NHWC)"), lowered["y"]
    assert native_runs > 0


def test_a_grouped_deconvolution_keeps_coremls_layout(tmp_path, rng):
    c, o, k, h, w = 4, 6, 2, 3, 5
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    skip = rng.standard_normal((2, h * k, w * k)).astype(np.float32)
    b = _model(rng, c, h, w, o, k, 2, True, 2)
    runs, _, lowered, _ = _run(tmp_path, b, {"x": x, "skip": skip})
    up, y = _reference(b.spec, x, skip, c, o, k, 2, True)
    close(runs[0]["up"], up, atol=1e-4)
    close(runs[0]["y"], y, atol=1e-4)
    assert lowered["up"].startswith("coreml.convolution(transposed, 2 groups)"), lowered["up"]


def test_an_input_written_again_after_the_deconvolution_keeps_the_concatenations_copies(tmp_path, rng):
    """CoreML allows in-place names: a ReLU writing "s" again between the deconvolution and the concatenation
    could change what the concatenation reads after its slice was made, so nothing is written into it early."""
    c, o, k, h, w, c_skip = 3, 5, 2, 4, 3, 2
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    skip = rng.standard_normal((c_skip, h * k, w * k)).astype(np.float32)
    b = _model(rng, c, h, w, o, k, 1, True, c_skip, expose=False)
    layers = b.spec.neuralNetwork.layers
    concat = layers[-1]
    relu = layers.add()
    relu.name = "relu_s"
    relu.activation.ReLU.SetInParent()
    relu.input.append("s")
    relu.output.append("s")
    moved = [type(layer)() for layer in layers]
    for copy, layer in zip(moved, layers):
        copy.CopyFrom(layer)
    del layers[:]
    layers.extend(moved[:-2] + [moved[-1], moved[-2]])  # ..., up, relu_s (in place), concat
    assert [layer.name for layer in layers][-2:] == ["relu_s", concat.name]
    runs, plain, lowered, _ = _run(tmp_path, b, {"x": x, "skip": skip})
    up, y = _reference(b.spec, x, skip, c, o, k, 1, True)
    want = np.concatenate([np.maximum(y[:c_skip], 0.0), up])
    close(runs[0]["y"], want, atol=1e-4)
    close(plain["y"], want, atol=1e-4)
    assert lowered["up"].endswith("(NHWC)") and lowered["y"] == "2 x coreml.reshape into views along C (NHWC)"
