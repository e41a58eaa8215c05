"""Fixtures shared by the tests: data generators, fast weighter settings, recording estimators for the
evaluation harness and checks of an SQP-FW run.

The estimator classes live at this module's top level so that joblib / dask workers can unpickle them.
"""

import importlib.util
import json
import os
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as _hsettings
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

import knnweights
from knnweights._solvers.active_set import project_simplex, sqpfw_objective
from knnweights.weighters._base import BaseWeighter


def _informative_problem(n=120, n_informative=5, n_noise=100, n_classes=2, random_state=0):
    """Labels set by the first ``n_informative`` features; the rest is noise."""
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, n_informative + n_noise))
    score = X[:, :n_informative].sum(axis=1)
    if n_classes == 2:
        y = (score > 0).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


@pytest.fixture(scope="session")
def informative_problem():
    """``informative_problem(n, n_informative, n_noise, n_classes, random_state) -> (X, y)``: labels set by the
    first ``n_informative`` features, the rest noise."""
    return _informative_problem


@pytest.fixture
def problem():
    return _informative_problem()


@pytest.fixture(scope="module")
def one_thread():
    """Numba and BLAS on one thread: for tests making many tiny kernel / BLAS calls,
    where starting threads costs more than the work on a loaded machine."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    with threadpool_limits(1):
        yield
    numba.set_num_threads(previous)


# fast settings per weighter for the suites that loop over knnweights.WEIGHTERS
# (they check the contract and robustness, not accuracy)
FAST = {
    "IM4E": {"max_iter": 10},
    "IRelief": {"max_iter": 5},
    "MulRel": {"n_rounds": 3},
    "GFlip": {"max_iter": 3},
    "ReliefF": {"n_neighbors": 1},
    "LHRelief": {"n_neighbors": 1, "max_iter": 5},
    "EFW": {"n_estimators": 2, "max_iter": 50},
    "ERelief": {"n_estimators": 2},
    "Logo": {"max_iter": 5},
    "NCADiagonal": {"max_iter": 15},
    "SQPFW": {"max_iter": 200},
    "SVMRFE": {"step": 0.5},
}


def _fast_weighter(name, **overrides):
    """``knnweights.WEIGHTERS[name]`` with the FAST settings (and overrides), seeded."""
    cls = knnweights.WEIGHTERS[name]
    valid = cls().get_params()
    params = {k: v for k, v in {**FAST.get(name, {}), **overrides}.items() if k in valid}
    est = cls(**params)
    if "random_state" in valid:
        est.set_params(random_state=0)
    return est


@pytest.fixture(scope="session")
def fast_weighter():
    """``fast_weighter(name, **overrides)``: ``knnweights.WEIGHTERS[name]`` with the FAST settings (and the
    overrides), seeded."""
    return _fast_weighter


# hypothesis profiles: `ci` (the default: the suite keeps its time) and `thorough`
# (`python -m pytest tests/test_reliability.py --hypothesis-profile thorough`: >= 10,000
# generated cases over every weighter and classifier); the per-test case count is
# `max_examples` (KNNWEIGHTS_HYPOTHESIS_EXAMPLES overrides it)
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_hsettings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, suppress_health_check=_QUIET,
                            print_blob=True)
_hsettings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=_QUIET,
                            print_blob=True)
_hsettings.load_profile("ci")


# -- a user's file for the command line -------------------------------------------------------------


def _write_expression_csv(path, n=80, d=300, seed=0, n_planted=10, n_constant=5):
    """A gene-expression-like CSV: sample ids, a string label, a string batch, constant genes, NaNs, planted genes.

    Expression is log-normal (raw scale, as such files come); the tumour samples have
    the first ``n_planted`` genes multiplied by 8; the last ``n_constant`` genes are constant;
    about 0.2 % of the values are missing.  Returns the planted gene names.
    """
    rng = np.random.default_rng(seed)
    y = np.array(["tumour", "normal"])[rng.permutation(np.arange(n) % 2)]
    X = rng.lognormal(5.0, 1.0, size=(n, d))
    X[:, :n_planted] *= np.where(y == "tumour", 8.0, 1.0)[:, None]
    X[:, d - n_constant:] = 7.0
    genes = [f"g{j:04d}" for j in range(d)]
    df = pd.DataFrame(X, columns=genes)
    df.insert(0, "sample", [f"S{i:03d}" for i in range(n)])
    df.insert(1, "diagnosis", y)
    df["batch"] = rng.choice(["B1", "B2"], n)
    df[genes] = df[genes].mask(rng.random((n, d)) < 0.002)
    df.loc[3, "g0000"] = np.nan  # a planted gene with a hole
    df.to_csv(path, index=False)
    return genes[:n_planted]


@pytest.fixture(scope="session")
def write_expression_csv():
    """``write_expression_csv(path, n=80, d=300, seed=0, n_planted=10, n_constant=5)``: writes a gene-expression-like
    CSV (sample ids, a string label ``diagnosis``, a string ``batch``, planted, constant and missing values) and
    returns the planted gene names."""
    return _write_expression_csv


# -- recording estimators for the evaluation harness -------------------------------------------------


class RecordingWeighter(BaseWeighter):
    """A weighter that appends the rows it is fitted on (and its seed) to a JSON-lines log.

    Weights: absolute difference of the class means per feature (deterministic, cheap).
    """

    _metric = "manhattan"
    _parameter_constraints = {"log_path": [str, None], "random_state": ["random_state"]}

    def __init__(self, log_path=None, random_state=None):
        self.log_path = log_path
        self.random_state = random_state

    def _fit(self, X, y):
        if self.log_path is not None:
            line = json.dumps({"seed": self.random_state, "rows": X.tolist()}) + "\n"
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(line)
        m0, m1 = X[y == 0].mean(axis=0), X[y == 1].mean(axis=0)
        return np.abs(m0 - m1)


def _read_fit_log(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


class FlakyMethod:
    """A callable method: 1-NN accuracy; raises in the cell whose seed is ``fail_seed`` while ``marker`` exists.

    Every call appends the cell seed to ``log`` so a test can count the cells run.
    """

    def __init__(self, marker, log, fail_seed):
        self.marker = marker
        self.log = log
        self.fail_seed = fail_seed

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        if random_state == self.fail_seed and os.path.exists(self.marker):
            raise RuntimeError("injected failure")
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(f"{random_state}\n")
        acc = KNeighborsClassifier(1).fit(X_train, y_train).score(X_test, y_test)
        return {"accuracy": acc, "n_train_seen": int(len(y_train))}


class LeakyMethod:
    """Negative control: fits the weighter on training AND test rows (a leak the checker must see)."""

    def __init__(self, weighter):
        self.weighter = weighter

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        w = clone(self.weighter).set_params(random_state=random_state)
        w.fit(np.vstack([X_train, X_test]), np.concatenate([y_train, y_test]))
        return 1.0


class WhereMethod:
    """A callable method that records the dask worker it ran on (``"none"`` outside dask)."""

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        try:
            from distributed import get_worker  # optional: dask

            where = get_worker().address
        except (ImportError, ValueError):
            where = "none"
        return {"accuracy": KNeighborsClassifier(1).fit(X_train, y_train).score(X_test, y_test), "worker": where}


@pytest.fixture(scope="session")
def recording_weighter():
    """The class ``RecordingWeighter(log_path=None, random_state=None)``: logs the rows of every fit."""
    return RecordingWeighter


@pytest.fixture(scope="session")
def read_fit_log():
    """``read_fit_log(path)``: the entries a RecordingWeighter logged (``[]`` when it never fitted)."""
    return _read_fit_log


@pytest.fixture(scope="session")
def flaky_method():
    """The class ``FlakyMethod(marker, log, fail_seed)``: a method that fails in one cell on demand."""
    return FlakyMethod


@pytest.fixture(scope="session")
def leaky_method():
    """The class ``LeakyMethod(weighter)``: a method that fits its weighter on the test rows too."""
    return LeakyMethod


@pytest.fixture
def where_method():
    """A method that records the dask worker each cell ran on."""
    return WhereMethod()


# -- SQP-FW ---------------------------------------------------------------------------------------


def _assert_descent_to_local_minimum(X, y, r, theta, *, history_tol, move, min_tol, seed=0, trials=20):
    h = r.cost_history
    assert np.all(np.diff(h) <= history_tol * (1 + np.abs(h[:-1])))
    assert r.fun == pytest.approx(sqpfw_objective(X, y, r.x, theta), rel=1e-9)
    slack = min_tol[1] * abs(r.fun) if isinstance(min_tol, tuple) else min_tol
    rng = np.random.RandomState(seed)
    for _ in range(trials):
        w2 = project_simplex(r.x + move * rng.randn(r.x.size))
        assert sqpfw_objective(X, y, w2, theta) >= r.fun - slack


@pytest.fixture(scope="session")
def assert_descent_to_local_minimum():
    """``assert_descent_to_local_minimum(X, y, r, theta, *, history_tol, move, min_tol, seed=0, trials=20)``:
    the kept steps of the SQP-FW result ``r`` never raise the objective, ``r.fun`` is the objective at ``r.x``,
    and small random moves on the simplex (``move`` in size) do not lower it by more than ``min_tol`` (relative
    to ``|r.fun|`` when given as ``("rel", tol)``)."""
    return _assert_descent_to_local_minimum


@pytest.fixture(scope="session")
def sqpfw_regression():
    """``(cases, reference)``: ``tests/data/make_sqpfw_regression.py`` (``CASES``, ``PATH_CASES`` and
    ``data(n, d, seed, n_classes)``) and the SQP-FW weights recorded on those cases (``sqpfw_regression.npz``)."""
    data = Path(__file__).parent / "data"
    spec = importlib.util.spec_from_file_location("make_sqpfw_regression", data / "make_sqpfw_regression.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    return cases, np.load(data / "sqpfw_regression.npz")
