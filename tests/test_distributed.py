"""The same grid gives bit-identical results serially, with n_jobs=2 and on a dask cluster."""

import joblib
import numpy as np
import pytest

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


def test_dask_local_cluster_equals_serial(serial, tmp_path, where_method):
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
                           "where": where_method}
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


# -- --scheduler: an existing cluster reached through its address, as a user's would be ---------------------------
def test_use_scheduler_without_address_runs_locally(monkeypatch):
    from knnweights.evaluation.distributed import ENV_VAR, scheduler_address, use_scheduler

    monkeypatch.delenv(ENV_VAR, raising=False)
    with use_scheduler(None) as client:
        assert client is None
        assert "Dask" not in type(joblib.parallel.get_active_backend()[0]).__name__
    monkeypatch.setenv(ENV_VAR, "tcp://10.1.2.3:8786")
    assert scheduler_address(None) == "tcp://10.1.2.3:8786"
    assert scheduler_address("tcp://127.0.0.1:1") == "tcp://127.0.0.1:1"  # the option wins over the variable


def test_unreachable_scheduler_is_one_line_exit_2(tmp_path, capsys, monkeypatch, write_expression_csv):
    pytest.importorskip("distributed")
    from knnweights.cli import main
    from knnweights.engine import _dask

    monkeypatch.setattr(_dask, "CONNECT_TIMEOUT", 1.0)

    path = tmp_path / "genes.csv"
    write_expression_csv(path, n=30, d=20)
    # a closed port on loopback: refused at once
    rc = main(["evaluate", str(path), "--target", "diagnosis", "--id-col", "sample", "--methods", "ReliefF",
               "--cv", "2x1", "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9", "--no-progress"])
    err = [e for e in capsys.readouterr().err.strip().splitlines() if e.startswith("knnweights")]
    assert rc == 2 and len(err) == 1 and "cannot reach the dask scheduler at 'tcp://127.0.0.1:9'" in err[0]


def test_evaluate_on_scheduler_equals_serial(tmp_path, capsys, monkeypatch, where_method, write_expression_csv):
    distributed = pytest.importorskip("distributed")
    import pandas as pd

    from knnweights.cli import main
    from knnweights.evaluation.distributed import ENV_VAR, use_scheduler

    path = tmp_path / "genes.csv"
    write_expression_csv(path, n=40, d=60)
    argv = ["evaluate", str(path), "--target", "diagnosis", "--id-col", "sample", "--drop", "batch",
            "--methods", "ReliefF,Relief", "--cv", "2x2", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "serial")]) == 0
    capsys.readouterr()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  protocol="tcp", host="127.0.0.1") as cluster:
        address = cluster.scheduler_address
        assert main([*argv, "--out", str(tmp_path / "dask"), "--scheduler", address]) == 0
        assert f"on the dask scheduler at {address}" in capsys.readouterr().err
        # the environment variable reaches the same cluster
        monkeypatch.setenv(ENV_VAR, address)
        assert main([*argv, "--out", str(tmp_path / "env")]) == 0
        assert f"on the dask scheduler at {address}" in capsys.readouterr().err
        # and the cells really run on its workers
        with use_scheduler(address) as client:
            workers = set(client.scheduler_info()["workers"])
            rows = run_grid({"where": where_method}, {"toy": _grid()[1]["toy"]}, protocol=RepeatedCV(2, 2),
                            random_state=7, as_frame=False)
        assert len(workers) == 2 and {r["worker"] for r in rows} <= workers
    timing = ["fit_time", "score_time"]
    serial = pd.read_csv(tmp_path / "serial" / "results.csv").drop(columns=timing, errors="ignore")
    for d in ("dask", "env"):
        other = pd.read_csv(tmp_path / d / "results.csv").drop(columns=timing, errors="ignore")
        pd.testing.assert_frame_equal(serial, other)
    assert (pd.read_csv(tmp_path / "serial" / "pairwise.csv")
            .equals(pd.read_csv(tmp_path / "dask" / "pairwise.csv")))


def test_select_on_scheduler_equals_local(tmp_path, capsys, write_expression_csv):
    distributed = pytest.importorskip("distributed")
    import pandas as pd

    from knnweights.cli import main

    path = tmp_path / "genes.csv"
    write_expression_csv(path, n=36, d=16, n_planted=3, n_constant=1)
    argv = ["select", str(path), "--target", "diagnosis", "--id-col", "sample", "--drop", "batch",
            "--methods", "ReliefF", "--cv", "3x1", "--inner", "3", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    capsys.readouterr()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                                  protocol="tcp", host="127.0.0.1") as cluster:
        address = cluster.scheduler_address
        assert main([*argv, "--out", str(tmp_path / "dask"), "--scheduler", address]) == 0
        assert f"on the dask scheduler at {address}" in capsys.readouterr().err
        # the outer splits and the inner search's fits ran as the cluster's tasks
        assert {"_outer_split", "_fold_scores"} <= {p for k in cluster.scheduler.task_prefixes
                                                     for p in ("_outer_split", "_fold_scores") if p in k}
    for name in ("choices.csv", "summary.csv", "features.csv"):  # the same choices, estimates and features
        local = pd.read_csv(tmp_path / "local" / name)
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "dask" / name), local, check_exact=False, rtol=1e-9)
    assert len(pd.read_csv(tmp_path / "local" / "choices.csv")) == 3
