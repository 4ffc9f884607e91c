"""A resampling whose input is held in NHWC and whose output the concatenation along C alone reads (DeepLab's
image-pooling branch: pool -> 1 x 1 convolution -> upsample -> concat beside the atrous branches) runs on the NHWC
route (``coreml.resample_nhwc``), written into its slice of the concatenation when the concatenation's other
inputs are made already, so the concatenation stays in NHWC. Over randomized shapes and every sampling mode it
gives a plain float64 reference of CoreML's sampling grids, and the same bytes as the route before it (the
resampling on CoreML's layout, the concatenation's copies made there: ``fusion.SLOT_WRITERS`` emptied)."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm
from openvx_nn.coreml.lowering import fusion

from . import references as ref
from .harness import builder, close, weights

# (layer, CoreML mode, grid of one axis: input extent, output count -> positions), from NeuralNetwork.proto's text
MODES = {
    "nearest": ("upsample", "NN", None),
    "default": ("upsample", ("BILINEAR", "DEFAULT"),
                lambda n, m: [0.0] if m == 1 else [i * (n - n / m) / (m - 1) for i in range(m)]),
    "corners_true": ("upsample", ("BILINEAR", "ALIGN_CORNERS_TRUE"),
                     lambda n, m: [0.0] if m == 1 else [i * (n - 1) / (m - 1) for i in range(m)]),
    "corners_false": ("upsample", ("BILINEAR", "ALIGN_CORNERS_FALSE"),
                      lambda n, m: [min(max((i + 0.5) * n / m - 0.5, 0.0), n - 1.0) for i in range(m)]),
    "align_endpoints": ("resize", "ALIGN_ENDPOINTS_MODE", None),
}


def _model(rng, c, h, w, o_branch, o_pool, factor, mode, pooled_first, expose, global_pool, relu=False):
    """x -> 3 x 3 convolution "a" (held in NHWC); "b" = 1 x 1 convolution of "a"; "p" = 2 x 2 stride-2 convolution
    of "a" (or a global average pool of "a" then a 1 x 1 convolution: DeepLab's branch); "u" = "p" resampled to
    "a"'s extent; y = concat(b, u). ``pooled_first``: "u" is made before "b"; ``expose``: "u" is a model output;
    ``relu``: a ReLU reads "u" too (model output "r")."""
    ph, pw = (1, 1) if global_pool else (h // factor, w // factor)
    b = builder({"x": (c, h, w)}, ["y"] + (["u"] if expose else []) + (["r"] if relu else []),
                output_shapes={"y": (o_branch + o_pool, h, w), "u": (o_pool, h, w), "r": (o_pool, h, w)})
    wa = rng.standard_normal((3, 3, c, c)).astype(np.float32) / 3
    wb = rng.standard_normal((1, 1, c, o_branch)).astype(np.float32)
    kp = 1 if global_pool else factor
    wp = rng.standard_normal((kp, kp, c, o_pool)).astype(np.float32)
    bp = rng.standard_normal(o_pool).astype(np.float32)
    b.add_convolution("a", c, c, 3, 3, 1, 1, "same", 1, wa, None, False, input_name="x", output_name="a")

    def branch():
        b.add_convolution("b", c, o_branch, 1, 1, 1, 1, "valid", 1, wb, None, False, input_name="a",
                          output_name="b")
    if not pooled_first:
        branch()
    source = "a"
    if global_pool:
        b.add_pooling("g", 1, 1, 1, 1, "AVERAGE", "VALID", "a", "g", is_global=True)
        source = "g"
    b.add_convolution("p", c, o_pool, kp, kp, kp, kp, "valid", 1, wp, bp, True, input_name=source, output_name="p")
    layer, coreml_mode, _ = MODES[mode]
    if layer == "resize":
        b.add_resize_bilinear("u", "p", "u", target_height=h, target_width=w, mode=coreml_mode)
    else:
        sh, sw = (h, w) if global_pool else (factor, factor)
        kind, linear = (coreml_mode, "DEFAULT") if isinstance(coreml_mode, str) else coreml_mode
        b.add_upsample("u", sh, sw, "p", "u", mode=kind, linear_upsample_mode=linear)
    if pooled_first:
        branch()
    b.add_elementwise("y", ["b", "u"], "y", mode="CONCAT")
    if relu:
        b.add_activation("r", "RELU", "u", "r")
    return b, (ph, pw)


def _reference(spec, x, c, o_branch, o_pool, factor, mode, global_pool):
    layers = {layer.name: layer.convolution for layer in spec.neuralNetwork.layers if layer.name in "abp"}
    h, w = x.shape[1:]
    a = ref.conv2d(x.astype(np.float64), weights(layers["a"].weights, (c, c, 3, 3)), None, (1, 1), (1, 1),
                   (1, 1, 1, 1), 1)
    b = ref.conv2d(a, weights(layers["b"].weights, (o_branch, c, 1, 1)), None, (1, 1), (1, 1), (0, 0, 0, 0), 1)
    kp = 1 if global_pool else factor
    source = a.mean(axis=(1, 2), keepdims=True) if global_pool else a
    p = ref.conv2d(source, weights(layers["p"].weights, (o_pool, c, kp, kp)), weights(layers["p"].bias, (o_pool,)),
                   (kp, kp), (1, 1), (0, 0, 0, 0), 1)
    ph, pw = p.shape[1:]
    grid = MODES[mode][2]
    if mode == "nearest":
        u = p[:, [i * ph // h for i in range(h)]][:, :, [j * pw // w for j in range(w)]]
    elif mode == "align_endpoints":
        u = ref.bilinear(p, ref.linspace_grid(ph, h, "ALIGN_ENDPOINTS_MODE"),
                         ref.linspace_grid(pw, w, "ALIGN_ENDPOINTS_MODE"))
    else:
        u = ref.bilinear(p, grid(ph, h), grid(pw, w))
    return u, np.concatenate([b, u])


def _run(tmp_path, b, x):
    path = tmp_path / "model.mlmodel"
    save_spec(b.spec, str(path))
    with cm.load(path) as model:
        runs = [model.predict({"x": x}) for _ in range(2)]  # the second run is native
        lowered = {layer.name: layer.lowering for layer in model.layers}
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes]
        return runs, lowered, kinds, model.graph.native_runs


@pytest.mark.parametrize("slices", [True, False])
@pytest.mark.parametrize("draw", range(10))
def test_an_upsampling_into_a_concatenation_stays_in_nhwc(tmp_path, rng, monkeypatch, draw, slices):
    """With ``OPENVX_NN_CONCAT_SLICES`` on (the default) the 1 x 1 convolution "b" writes its own slice too."""
    if not slices:
        monkeypatch.setenv("OPENVX_NN_CONCAT_SLICES", "0")
    mode = list(MODES)[draw % len(MODES)]
    global_pool = draw in (3, 7)  # DeepLab's image pooling: from a 1 x 1 plane
    factor = int(rng.integers(2, 4))
    c, o_branch, o_pool = (int(v) for v in rng.integers(1, 11, 3))
    h, w = (factor * int(v) for v in rng.integers(1, 6, 2))
    pooled_first, expose = draw % 3 != 0, draw == 9
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    b, _ = _model(rng, c, h, w, o_branch, o_pool, factor, mode, pooled_first, expose, global_pool)
    runs, lowered, kinds, native_runs = _run(tmp_path, b, x)
    u, y = _reference(b.spec, x, c, o_branch, o_pool, factor, mode, global_pool)
    for got in runs:
        close(got["y"], y, atol=1e-4)
        if expose:
            close(got["u"], u, atol=1e-4)
        np.testing.assert_array_equal(got["y"], runs[0]["y"])
    assert native_runs > 0
    into = not pooled_first and not expose
    if expose:  # a model output: not the concatenation's alone, so CoreML's layout as before
        assert lowered["u"].startswith("coreml.resample("), lowered["u"]
    else:
        assert lowered["u"].startswith("coreml.resample_nhwc(") and lowered["u"].endswith(
            ", into the concatenation's slice)" if into else " (NHWC)"), lowered["u"]
        written = int(into) + int(slices)  # the resampling (made after "b") and the convolution "b"
        copies = f"{2 - written} x coreml.reshape into views along C"
        assert lowered["y"] == (f"{copies}, {written} written there (NHWC)" if written else f"{copies} (NHWC)"), \
            lowered["y"]
        assert kinds.count("to_chw") == 1 and kinds.count("to_nhwc") == 1, kinds  # the edges only

    monkeypatch.setattr(fusion, "SLOT_WRITERS", ())  # the route before: the resampling on CoreML's layout
    before, lowered_before, _, _ = _run(tmp_path, b, x)
    assert lowered_before["u"].startswith("coreml.resample("), lowered_before["u"]
    for got in before:
        np.testing.assert_array_equal(got["y"], runs[0]["y"])


def test_a_resampling_read_by_another_layer_too_keeps_coremls_layout(tmp_path, rng):
    """"u" read by the concatenation and a ReLU is not the concatenation's alone: CoreML's layout, as before."""
    c, h, w = 3, 4, 6
    x = rng.standard_normal((c, h, w)).astype(np.float32)
    b, _ = _model(rng, c, h, w, 2, 3, 2, "corners_false", True, False, False, relu=True)
    runs, lowered, _, _ = _run(tmp_path, b, x)
    u, y = _reference(b.spec, x, c, 2, 3, 2, "corners_false", False)
    close(runs[1]["y"], y, atol=1e-4)
    close(runs[1]["r"], np.maximum(u, 0), atol=1e-4)
    assert lowered["u"].startswith("coreml.resample("), lowered["u"]
