"""CoreML layers with absurd paddings, strides, dilations and windows are decided within a second: an error
naming the layer (or the allocation it would need), or a result; never a search over sizes."""
from __future__ import annotations

import time

import numpy as np
import pytest

import openvx_nn.coreml as cm
from openvx_nn.core.errors import VXError

from .harness import builder, load

HUGE = 2**40
W = np.ones((3, 3, 2, 4), np.float32)


def _conv(**options):
    def add(b):
        b.add_convolution("c", 2, 4, 3, 3, options.pop("stride", 1), options.pop("stride", 1), "valid", 1, W, None,
                          False, input_name="x", output_name="y", **options)
    return add


CASES = {
    "convolution padding": _conv(padding_top=HUGE, padding_bottom=HUGE, padding_left=1, padding_right=1),
    "convolution uneven padding": _conv(padding_top=HUGE, padding_bottom=0, padding_left=1, padding_right=1),
    "convolution stride": lambda b: b.add_convolution("c", 2, 4, 3, 3, HUGE, HUGE, "valid", 1, W, None, False,
                                                      input_name="x", output_name="y"),
    "convolution dilation": _conv(dilation_factors=[HUGE, HUGE]),
    "pooling window": lambda b: b.add_pooling("p", HUGE, HUGE, 1, 1, "MAX", "VALID", "x", "y"),
    "pooling stride": lambda b: b.add_pooling("p", 2, 2, HUGE, HUGE, "MAX", "SAME", "x", "y"),
}


def _predict(tmp_path, add) -> None:
    b = builder({"x": (2, 6, 6)}, ["y"])
    add(b)
    model = load(tmp_path, b)
    try:
        model.predict({"x": np.ones((2, 6, 6), np.float32)})
    finally:
        model.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_layer_with_absurd_geometry_is_decided_within_a_second(tmp_path, case):
    # the process's first convolution and pooling compile or load their kernels: not what is timed
    _predict(tmp_path, _conv())
    _predict(tmp_path, lambda b: b.add_pooling("p", 2, 2, 1, 1, "MAX", "SAME", "x", "y"))
    begin = time.perf_counter()
    try:
        _predict(tmp_path, CASES[case])
    except (cm.CoreMLError, VXError) as error:
        assert "does not fit" in str(error) or "cannot allocate" in str(error), str(error)
    assert time.perf_counter() - begin < 1.0
