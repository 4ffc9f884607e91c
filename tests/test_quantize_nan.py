"""``quantize`` refuses NaN (an arbitrary integer would reach the model as if it were data) and saturates
infinities like any value beyond the type."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.api import quantize


@pytest.mark.parametrize("dtype, fpp", [(np.int16, 8), (np.int8, 7), (np.uint8, 0)])
def test_nan_is_an_error_naming_where_it_is(dtype, fpp):
    values = np.zeros((3, 4))
    values[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"real holds 1 NaN value\(s\), the first at index \(2, 1\)"):
        quantize(values, dtype, fpp)


def test_infinities_saturate_and_float_targets_keep_nan():
    info = np.iinfo(np.int16)
    assert quantize([np.inf, -np.inf], np.int16, 8).tolist() == [info.max, info.min]
    assert np.isnan(quantize([np.nan], np.float32)).all()
