"""map_batches in this process (no Dask): batches in order, a padded short last batch, errors that
name the batch, and a package that does not import Dask."""
from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
from distributed_helpers import BATCH, ITEMS, digits_build, digits_raw, relu_build, relu_data

from openvx_nn.api import Context
from openvx_nn.demo import classify, load_model
from openvx_nn.demo.model import Q78
from openvx_nn.distributed import Batch, BatchError, batches, map_batches


def test_batches_cover_the_items_in_order_with_a_short_last_one():
    plan = batches(ITEMS, BATCH)
    assert [(b.start, b.stop) for b in plan] == [(s, min(s + BATCH, ITEMS)) for s in range(0, ITEMS, BATCH)]
    assert plan[-1].size == ITEMS % BATCH == 4 and [b.index for b in plan] == list(range(len(plan)))
    assert batches(0, BATCH) == [] and str(plan[2]) == "batch 2 (items 32:48)"
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        batches(10, 0)


def test_an_unverified_network_is_verified_and_maps_every_item():
    data = relu_data()
    out = map_batches(relu_build, data, BATCH)
    assert out.dtype == np.int16 and out.shape == data.shape
    assert np.array_equal(out, np.maximum(data, 0))   # ReLU on Q7.8 raw values is exact


def test_a_nested_list_is_taken_as_an_array_and_still_never_cast():
    with pytest.raises(BatchError, match=r"batch 0 \(items 0:16\): dtype int64 differs from the input tensor's int16"):
        map_batches(relu_build, relu_data(items=20).tolist(), BATCH)


def test_digits_outputs_match_the_demo_loop_including_the_padded_last_batch():
    probabilities = map_batches(digits_build, digits_raw(), BATCH)
    assert probabilities.shape == (10, ITEMS)
    with Context() as ctx:
        expected, _ = classify(ctx, load_model(), Q78, batch=BATCH, limit=ITEMS)
    assert np.array_equal(probabilities.argmax(axis=0), expected)


@pytest.mark.parametrize("spoil, message", [
    (lambda d: d.astype(np.float32), r"batch 0 \(items 0:16\): dtype float32 differs from the input tensor's int16"),
    (lambda d: d[:2], r"batch 0 \(items 0:16\): shape \(2, 2, 16\) differs from the expected \(3, 2, 16\)"),
    (lambda d: d[..., 0], r"batch 0 \(items 0:2\): shape \(3, 2\) differs"),
])
def test_data_of_the_wrong_dtype_or_shape_raises_an_error_naming_the_batch(spoil, message):
    with pytest.raises(BatchError, match=message):
        map_batches(relu_build, spoil(relu_data()), BATCH)


def test_a_batch_size_other_than_the_input_tensors_last_dim_is_refused():
    with pytest.raises(ValueError, match="batch_size 8 differs from the last dimension of the input tensor"):
        map_batches(relu_build, relu_data(), 8)


def test_a_build_that_does_not_return_three_objects_is_refused():
    with pytest.raises(TypeError, match=r"build must return \(graph, input tensor, output tensor\)"):
        map_batches(lambda ctx: ctx.graph(), relu_data(), BATCH)


def test_an_output_without_the_batch_on_its_last_dim_is_refused():
    def build(ctx):
        g, x, _ = relu_build(ctx)
        return g, x, ctx.tensor(shape=(5,), dtype=np.int16)

    with pytest.raises(ValueError, match="input's batch dimension 16 differs from the output's 5"):
        map_batches(build, relu_data(), BATCH)


def test_a_local_run_releases_every_object_it_made_even_on_a_bad_batch():
    with Context() as ctx:
        before = ctx.references
        map_batches(digits_build, digits_raw(20), BATCH)
        with pytest.raises(BatchError):
            map_batches(relu_build, relu_data().astype(np.int32), BATCH)
        assert ctx.references == before


def test_the_batch_error_survives_pickling_as_dask_ships_it():
    error = pickle.loads(pickle.dumps(BatchError(Batch(3, 48, 64), "dtype float64 differs")))
    assert isinstance(error, BatchError) and str(error) == "batch 3 (items 48:64): dtype float64 differs"
    assert error.batch == Batch(3, 48, 64)


def test_importing_the_package_and_its_commands_does_not_import_dask():
    code = ("import sys, openvx_nn, openvx_nn.cli, openvx_nn.distributed, openvx_nn.runner; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
