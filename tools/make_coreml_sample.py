"""Write ``openvx_nn/coreml/samples/digits.mlmodel``: the demo's digits CNN (float32 weights of
``openvx_nn/demo/digits_lenet.npz``) as a CoreML classifier, the sample model the docs and the tests use.

Input ``image``: [1, 8, 8] (C, H, W) floats in [0, 1]; outputs ``classLabel`` ("0".."9") and ``probs``.
OpenVX orders weights [kx, ky, #IFM, #OFM] and flattens [W, H, C] with x fastest; CoreML's builder takes
convolution weights [kh, kw, #IFM, #OFM] and flattens [C, H, W] with w fastest, the same element order.

    pip install ".[coreml]" && python tools/make_coreml_sample.py
"""
from __future__ import annotations

from pathlib import Path

import coremltools as ct
import numpy as np
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "openvx_nn" / "demo" / "digits_lenet.npz"
OUT = ROOT / "openvx_nn" / "coreml" / "samples" / "digits.mlmodel"


def main() -> None:
    w = dict(np.load(WEIGHTS))
    b = NeuralNetworkBuilder([("image", datatypes.Array(1, 8, 8))], [("probs", datatypes.Array(10))],
                             mode="classifier")
    blob = "image"
    for i, (channels_in, channels_out) in enumerate(((1, 8), (8, 16)), start=1):
        kernel = w[f"f32_conv{i}_w"].transpose(1, 0, 2, 3)  # [kx, ky, in, out] -> [kh, kw, in, out]
        b.add_convolution(f"conv{i}", channels_in, channels_out, 3, 3, 1, 1, "valid", 1, kernel,
                          w[f"f32_conv{i}_b"], True, input_name=blob, output_name=f"conv{i}",
                          padding_top=1, padding_bottom=1, padding_left=1, padding_right=1)
        b.add_activation(f"relu{i}", "RELU", f"conv{i}", f"relu{i}")
        b.add_pooling(f"pool{i}", 2, 2, 2, 2, "MAX", "VALID", f"relu{i}", f"pool{i}")
        blob = f"pool{i}"
    b.add_flatten("flatten", 0, blob, "flat")
    b.add_inner_product("fc", w["f32_fc_w"].T, w["f32_fc_b"], 64, 10, True, "flat", "logits")
    b.add_softmax("softmax", "logits", "probs")
    b.set_class_labels([str(d) for d in range(10)], predicted_feature_name="classLabel", prediction_blob="probs")
    spec = b.spec
    spec.description.metadata.shortDescription = ("openvx-nn's digits demo CNN (8x8 scikit-learn digits) as a "
                                                   "CoreML classifier: conv-relu-pool x2, fully connected, softmax")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    ct.utils.save_spec(spec, str(OUT))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
