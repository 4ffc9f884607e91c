"""map_batches on a loopback LocalCluster (2 worker processes): the same bits as one process, in
order; one build per worker; a worker killed mid-run; a bad batch named; run --scheduler."""
from __future__ import annotations

import os

import numpy as np
import pytest
from distributed_helpers import (
    BATCH,
    ITEMS,
    digits_build,
    digits_raw,
    kill_worker_in_batch,
    relu_build,
    relu_data,
    spoil_block,
)

from openvx_nn.distributed import BatchError, cache_stats, map_batches

distributed = pytest.importorskip("distributed", reason="the dask extra (pip install .[dask]) is not installed")
da = pytest.importorskip("dask.array", reason="the dask extra (pip install .[dask]) is not installed")


@pytest.fixture(scope="module")
def client():
    """A loopback cluster of 2 worker processes of 1 thread, for the whole module."""
    import cloudpickle
    import distributed_helpers

    # Workers cannot import the test helpers by name: ship them by value.
    cloudpickle.register_pickle_by_value(distributed_helpers)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster, timeout="120s") as c:
        c.wait_for_workers(2, timeout=120)
        yield c
    cloudpickle.unregister_pickle_by_value(distributed_helpers)


@pytest.fixture(scope="module")
def expected():
    """The single-process outputs of the digits network."""
    return map_batches(digits_build, digits_raw(), BATCH)


def test_results_are_bit_identical_to_one_process_and_in_order(client, expected):
    out = map_batches(digits_build, digits_raw(), BATCH, client)
    assert isinstance(out, da.Array)
    assert out.chunks == ((10,), (BATCH,) * (ITEMS // BATCH) + (ITEMS % BATCH,))
    result = out.compute()
    assert result.dtype == expected.dtype and np.array_equal(result, expected)


def test_a_dask_array_input_unverified_network_and_short_last_batch(client):
    data = relu_data(seed=1)
    out = map_batches(relu_build, da.from_array(data, chunks=(3, 2, 37)), BATCH, client).compute()
    assert np.array_equal(out, np.maximum(data, 0))


def test_each_worker_builds_the_network_once_and_reuses_it_for_every_batch(client):
    def batches_run(stats):
        return sum(ran for per_worker in stats.values() for _, ran in per_worker.values())

    before = client.run(cache_stats)
    map_batches(relu_build, relu_data(seed=2), BATCH, client).compute()
    map_batches(relu_build, relu_data(seed=3), BATCH, client).compute()
    after = client.run(cache_stats)
    assert all(builds == 1 for per_worker in after.values() for builds, _ in per_worker.values()), after
    assert batches_run(after) - batches_run(before) == 2 * len(range(0, ITEMS, BATCH))


def test_a_wrong_dtype_is_refused_before_any_batch_runs(client):
    with pytest.raises(BatchError, match=r"batch 0 \(items 0:16\): dtype float64 differs"):
        map_batches(relu_build, relu_data().astype(np.float64), BATCH, client)


def test_a_dask_array_of_unknown_chunk_sizes_is_refused_with_the_remedy(client):
    data = da.from_array(relu_data(), chunks=(3, 2, BATCH))
    masked = data[..., data[0, 0, :] > 0]   # a boolean mask leaves the batch axis's length unknown
    with pytest.raises(ValueError, match=r"unknown chunk sizes .*compute_chunk_sizes\(\)"):
        map_batches(relu_build, masked, BATCH, client)


def test_a_bad_block_discovered_on_a_worker_raises_an_error_naming_its_batch(client):
    data = da.from_array(relu_data(), chunks=(3, 2, BATCH)).map_blocks(spoil_block, 2, dtype=np.int16)
    out = map_batches(relu_build, data, BATCH, client)
    with pytest.raises(BatchError, match=r"batch 2 \(items 32:48\): dtype float32 differs from the input tensor's int16"):
        out.compute()


def test_run_command_on_a_given_scheduler_writes_the_same_labels(client, expected, tmp_path, capsys):
    from openvx_nn.cli import main
    images = tmp_path / "images.npy"
    np.save(images, digits_raw().astype(np.float32) / 256)   # Q7.8 values back to reals: exact
    code = main(["run", "--model", "digits", "--input", str(images), "--output", str(tmp_path / "labels.npy"),
                 "--batch", str(BATCH), "--scheduler", client.scheduler.address])
    assert code == 0
    assert np.array_equal(np.load(tmp_path / "labels.npy"), expected.argmax(axis=0))
    captured = capsys.readouterr()
    assert f"{ITEMS}/{ITEMS} images" in captured.err and "the Dask scheduler at tcp://" in captured.out


def test_a_worker_killed_mid_run_is_replaced_and_the_results_are_complete_and_identical(client, expected, tmp_path):
    # Last in the module: the replacement worker starts with no compiled native entries, and a later test would
    # wait on it to compile them again (tens of seconds).
    marker = tmp_path / "killed"
    pids = set(client.run(os.getpid).values())
    data = da.from_array(digits_raw(), chunks=(8, 8, 1, BATCH)).map_blocks(
        kill_worker_in_batch, str(marker), 4, dtype=np.int16, meta=np.empty((0,) * 4, np.int16))
    result = map_batches(digits_build, data, BATCH, client).compute()
    assert marker.exists() and int(marker.read_text()) in pids   # a worker died inside batch 4's task
    assert np.array_equal(result, expected)
    client.wait_for_workers(2, timeout=120)                      # the nanny restarted it
    assert int(marker.read_text()) not in set(client.run(os.getpid).values())
