"""``support.vector_width.wide_vectors``: a marked loop vectorizes at 512 bits on an AVX-512 CPU, and the marked
loops give the bits of the unmarked ones."""
from __future__ import annotations

import re

import numba
import numpy as np
import pytest

from openvx_nn.kernels.engine import isa
from openvx_nn.kernels.frontend import float_activation as fa
from openvx_nn.kernels.support.vector_width import wide_vectors


@numba.njit(error_model="numpy")
def _marked(x, y):
    wide_vectors()
    for i in range(x.size):
        y[i] = fa.swish32(x[i])


@numba.njit(error_model="numpy")
def _plain(x, y):
    for i in range(x.size):
        y[i] = fa.swish32(x[i])


def _registers(function, name: str) -> int:
    return sum(len(re.findall(name, text)) for text in function.inspect_asm().values())


def test_marked_and_plain_loops_give_the_same_bits():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(4099).astype(np.float32) * 40,
                        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -150.5], np.float32)])
    a, b = np.full_like(x, 7.0), np.full_like(x, 9.0)
    _marked(x, a)
    _plain(x, b)
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.skipif(isa.float_lanes() != 16, reason="the CPU has no AVX-512: the mark changes nothing")
def test_a_marked_loop_uses_512_bit_registers():
    x = np.ones(64, np.float32)
    _marked(x, np.empty_like(x))
    assert _registers(_marked, "zmm") > 0
