"""knnweights.engine._dask: the address, the connection and its errors, joblib and feature ranges on a cluster."""

import joblib
import numpy as np
import pytest

from knnweights.engine import _dask
from knnweights.exceptions import SchedulerError


def test_scheduler_address_prefers_the_argument(monkeypatch):
    monkeypatch.delenv(_dask.ENV_VAR, raising=False)
    assert _dask.scheduler_address(None) is None
    monkeypatch.setenv(_dask.ENV_VAR, " tcp://10.1.2.3:8786 ")
    assert _dask.scheduler_address(None) == "tcp://10.1.2.3:8786"
    assert _dask.scheduler_address("tcp://127.0.0.1:1") == "tcp://127.0.0.1:1"


def test_no_address_runs_locally(monkeypatch):
    monkeypatch.delenv(_dask.ENV_VAR, raising=False)
    with _dask.use_scheduler(None) as client:
        assert client is None
        assert "Dask" not in type(joblib.parallel.get_active_backend()[0]).__name__


def test_unreachable_scheduler_is_a_one_line_error():
    pytest.importorskip("dask.distributed")
    with pytest.raises(SchedulerError, match="cannot reach the dask scheduler at 'tcp://127.0.0.1:9'") as exc:
        _dask.connect("tcp://127.0.0.1:9", timeout=1.0)
    assert "\n" not in str(exc.value)


def _worker_address(_):
    from distributed import get_worker  # optional: dask

    return get_worker().address


def _column_sums(src, a, b, scale):
    return np.asarray(src)[:, a:b].sum(axis=0) * scale


def test_joblib_and_feature_ranges_run_on_the_workers():
    distributed = pytest.importorskip("dask.distributed")
    X = np.arange(30.0).reshape(3, 10)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  protocol="tcp", host="127.0.0.1") as cluster:
        with _dask.use_scheduler(cluster.scheduler_address) as client:
            assert "Dask" in type(joblib.parallel.get_active_backend()[0]).__name__
            workers = set(client.scheduler_info()["workers"])
            where = joblib.Parallel(n_jobs=2)(joblib.delayed(_worker_address)(t) for t in range(4))
            assert set(where) <= workers and len(workers) == 2
        for scatter in (True, False):
            ranges = _dask.FeatureRanges(X, cluster.scheduler_address, scatter=scatter)
            try:
                assert ranges.ranges == [(0, 5), (5, 10)]
                parts = ranges.map(_column_sums, lambda f0, f1: (2.0,))
            finally:
                ranges.close()
            np.testing.assert_array_equal(np.concatenate(parts), X.sum(axis=0) * 2.0)


def test_scheduler_without_workers_is_refused():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None, protocol="tcp",
                                  host="127.0.0.1") as cluster:
        with pytest.raises(SchedulerError, match="has no workers"):
            _dask.FeatureRanges(np.zeros((2, 3)), cluster.scheduler_address)
