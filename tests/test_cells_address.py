"""``cells.address``: the address of an element of any array, against NumPy's own ``__array_interface__``."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.core import cells


def _arrays(rng):
    base = rng.integers(0, 100, size=int(rng.integers(2, 40))).astype(rng.choice([np.int64, np.int16, np.float32]))
    yield base
    yield base[int(rng.integers(0, 2)):]  # a view that starts inside
    yield base[::2]  # not contiguous
    yield np.asfortranarray(rng.random((3, 4)))  # contiguous in Fortran order only
    frozen = base.copy()
    frozen.flags.writeable = False
    yield frozen
    yield cells.counter()
    yield cells.aligned(int(rng.integers(1, 20)))


@pytest.mark.parametrize("seed", range(5))
def test_address_is_numpys_data_pointer_plus_the_index(seed):
    rng = np.random.default_rng(seed)
    for array in _arrays(rng):
        for index in (0, array.size - 1):
            assert cells.address(array, index) == array.__array_interface__["data"][0] + index * array.itemsize


def test_address_of_an_empty_array():
    empty = np.zeros(0, np.int64)
    assert cells.address(empty) == empty.__array_interface__["data"][0]
