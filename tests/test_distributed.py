"""The same grid gives bit-identical results serially, with n_jobs=2 and on a dask cluster."""

import joblib
import numpy as np
import pytest
from evalhelpers import WhereMethod

from knnweights import Relief, ReliefF
from knnweights.evaluation import RepeatedCV, RepeatedHoldout, Tuned, run_grid, share_grid, weighted_knn

TIMING = ("fit_time", "score_time")


def _grid():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 24)
    X = rng.normal(size=(48, 5))
    X[:, 0] += 1.5 * y
    methods = {
        "ReliefF": Tuned(weighted_knn(ReliefF(n_neighbors=3)), {"n_neighbors": [1, 3]}, cv=2),
        "Relief": weighted_knn(Relief(n_iter=10)),  # random sampling: the per-cell seed matters
    }
    return methods, {"toy": (X, y)}


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


@pytest.fixture(scope="module")
def serial():
    methods, data = _grid()
    return run_grid(methods, data, protocol=RepeatedCV(2, 2), random_state=7, n_jobs=1, as_frame=False)


def test_n_jobs_2_equals_serial(serial):
    methods, data = _grid()
    par = run_grid(methods, data, protocol=RepeatedCV(2, 2), random_state=7, n_jobs=2, as_frame=False)
    assert _strip(par) == _strip(serial)
    with joblib.parallel_backend("threading", n_jobs=2):
        thr = run_grid(methods, data, protocol=RepeatedCV(2, 2), random_state=7, as_frame=False)
    assert _strip(thr) == _strip(serial)
    # the seeds are not all alike: another root seed changes the random method's results
    other = run_grid({"Relief": methods["Relief"]}, data, protocol=RepeatedCV(2, 2), random_state=8, as_frame=False)
    assert [r["seed"] for r in other] != [r["seed"] for r in serial if r["method"] == "Relief"]


def test_dask_local_cluster_equals_serial(serial, tmp_path):
    distributed = pytest.importorskip("distributed")
    methods, data = _grid()
    # in-process workers talking TCP on loopback only (no other interface is opened)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  protocol="tcp", host="127.0.0.1") as cluster, distributed.Client(cluster) as client:
        with joblib.parallel_backend("dask"):
            rows = run_grid(methods, data, protocol=RepeatedCV(2, 2), random_state=7, as_frame=False,
                            store=tmp_path / "cells.jsonl")
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        holdout_methods = {"ReliefF": Tuned(weighted_knn(ReliefF(n_neighbors=3)),
                                            {"weighter__share": share_grid(0.5, 0.5), "n_neighbors": [1]}),
                           "where": WhereMethod()}
        with joblib.parallel_backend("dask"):
            holdout = run_grid(holdout_methods, {"toy": data["toy"]}, protocol=RepeatedHoldout(2), random_state=7,
                               as_frame=False)
    assert _strip(rows) == _strip(serial)
    # the cells really ran on the cluster's workers
    assert {r["worker"] for r in holdout if r["method"] == "where"} <= workers
    local = run_grid(holdout_methods, {"toy": data["toy"]}, protocol=RepeatedHoldout(2), random_state=7,
                     as_frame=False)
    assert {r["worker"] for r in local if r["method"] == "where"} == {"none"}
    strip = [{k: v for k, v in r.items() if k != "worker"} for r in _strip(holdout)]
    assert strip == [{k: v for k, v in r.items() if k != "worker"} for r in _strip(local)]
