"""A C program builds conv -> relu -> max pool -> fully connected -> softmax in
Q7.8 with the typed constructors, and again with generic nodes numbered as the
seed says; both must equal the chain of plain references."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import compile_c, run_c
from conv_reference import reference_convolution
from kernel_testing import Q78, random_values
from layer_references import fully_connected_ref, pooling_ref
from nonlinear_reference import reference_activation, reference_softmax

SOURCE = Path(__file__).resolve().parent / "c" / "nn_network.c"


def _reference(x, cw, cb, fw, fb):
    conv = reference_convolution(x, cw, cb, (12, 12, 4), (1, 1), (1, 1), (0, 0), Q78, (8, 8, 8, 8), True, True)
    act = reference_activation(conv, "relu", 0.0, 0.0, Q78, Q78)
    pooled = pooling_ref(act, (6, 6, 4), Q78, True, 2, 2, 0, 0, 2, 2)
    fc = fully_connected_ref(pooled.reshape((144, 1), order="F"), fw, fb, Q78, True, True, 8, 8, 8, 8)
    return reference_softmax(fc.reshape(10), 0, Q78, Q78)


@pytest.mark.parametrize("seed", range(3))
def test_c_network_matches_the_reference_in_typed_and_generic_form(tmp_path, seed):
    rng = np.random.default_rng([51, seed])
    x = random_values(rng, Q78, (12, 12, 2))
    cw = (random_values(rng, Q78, (3, 3, 2, 4)) // 16).astype(np.int16)   # keep activations in range
    cb = random_values(rng, Q78, (4,))
    fw = (random_values(rng, Q78, (144, 10)) // 64).astype(np.int16)
    fb = random_values(rng, Q78, (10,))
    data = tmp_path / "data.bin"
    data.write_bytes(b"".join(np.asfortranarray(a).tobytes(order="F") for a in (x, cw, cb, fw, fb)))
    exe = compile_c(SOURCE, "nn_network")
    expected = _reference(x, cw, cb, fw, fb)
    for mode in ("typed", "generic"):
        out = tmp_path / f"{mode}.bin"
        result = run_c(exe, str(data), str(out), mode)
        assert result.returncode == 0, result.stderr
        got = np.frombuffer(out.read_bytes(), np.int16)
        assert np.array_equal(got, expected), (mode, got, expected)
    assert expected.sum() > 0
