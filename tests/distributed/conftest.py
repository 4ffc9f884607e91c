"""One loopback Dask cluster per test module that asks for it: 2 worker processes of 1 thread."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="the dask extra (pip install .[dask]) is not installed")
    import cloudpickle
    import distributed_helpers

    # Workers cannot import the test helpers by name: ship them by value.
    cloudpickle.register_pickle_by_value(distributed_helpers)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster, timeout="120s") as c:
        c.wait_for_workers(2, timeout=120)
        yield c
    cloudpickle.unregister_pickle_by_value(distributed_helpers)
