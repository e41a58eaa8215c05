"""MDM's deterministic work budget ``max_work``: where it binds, the weights are feasible and reproducible."""

import types

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from knnweights._solvers import lp_ipm, mdm_lp
from knnweights._solvers.mdm_lp import solve_mdm
from knnweights.weighters.mdm import MDM


def _data(n=90, d=12, seed=1, shift=3.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    X[:, 0] += shift * y
    X[:, 1] -= shift * (y == 1)
    return X, y


def _distances(X, w):
    return (((X[:, None, :] - X[None, :, :]) ** 2) * w).sum(-1)


@pytest.fixture(scope="module")
def exact():
    X, y = _data()
    return X, y, MDM(soft=False, lazy=True, n_init=1, max_work=None).fit(X, y)


def test_unlimited_fit_is_the_full_lp_optimum(exact):
    X, y, m = exact
    assert m.stop_reason_ == "optimal" and m.work_ > 0
    Xs = (X - X.mean(0)) / X.std(0)
    full = solve_mdm(Xs, y, soft=False, lazy=False)
    assert m.objective_ == pytest.approx(full.fun, rel=1e-7)


@pytest.mark.parametrize("soft", [False, True])
def test_small_budget_binds_with_warning_and_a_feasible_point(exact, soft, capsys):
    X, y, opt = exact
    C = 0.05
    budget = 0.3 * opt.work_
    with pytest.warns(ConvergenceWarning, match=r"max_work=.*GFLOP.*best feasible point.*max_work=None"):
        m = MDM(soft=soft, C=C, lazy=True, n_init=1, max_work=budget, verbose=1).fit(X, y)
    assert m.stop_reason_ == "max_work"
    assert "max_work=" in capsys.readouterr().out
    # the IPM never starts work past the budget; only the scans after the last solve are counted on top
    assert m.work_ <= budget + 3 * 2 * X.shape[0] ** 2 * X.shape[1] / 1e9
    w, r, xi = m.feature_importances_, m.radius_, m.slacks_
    D = _distances(X, w)
    same = y[:, None] == y[None, :]
    off = ~np.eye(len(y), dtype=bool)
    assert D[~same].min() >= 1.0 - 1e-9  # eq. 6 / 12 for every pair of different labels
    assert np.all(D[same & off] <= (r + xi[:, None] * np.ones(len(y)))[same & off] * (1 + 1e-9))  # eq. 7 / 13
    assert m.objective_ == pytest.approx(r + (C * xi.sum() if soft else 0.0), rel=1e-12)
    if not soft:
        assert m.objective_ > opt.objective_ * (1 + 1e-6)  # stopped early: above the optimum


def test_budget_that_does_not_bind_changes_nothing(exact):
    X, y, opt = exact
    m = MDM(soft=False, lazy=True, n_init=1, max_work=opt.work_ * 1.001).fit(X, y)
    assert m.stop_reason_ == "optimal"
    np.testing.assert_array_equal(m.feature_importances_, opt.feature_importances_)


def test_budget_stop_is_deterministic_and_ignores_the_clock(exact, monkeypatch):
    X, y, opt = exact
    kw = dict(soft=False, lazy=True, n_init=1, max_work=0.5 * opt.work_)
    with pytest.warns(ConvergenceWarning):
        a = MDM(**kw).fit(X, y)
    # a clock that jumps at random: a budget (unlike a time limit) must stop at the same iterate
    # (in both modules that read it: the lazy loop and the interior point)
    rng = np.random.default_rng(0)
    reads = {}

    def fake_clock(module):
        def perf_counter():
            reads[module] = reads.get(module, 0) + 1
            return float(rng.uniform(0, 1e6))
        return types.SimpleNamespace(perf_counter=perf_counter)

    for module in (mdm_lp, lp_ipm):
        monkeypatch.setattr(module, "time", fake_clock(module))
    with pytest.warns(ConvergenceWarning):
        b = MDM(**kw).fit(X, y)
    assert reads.get(mdm_lp, 0) > 0 and reads.get(lp_ipm, 0) > 0  # the fake clock was the one read
    assert a.stop_reason_ == b.stop_reason_ == "max_work"
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    assert a.objective_ == b.objective_ and a.lp_iterations_ == b.lp_iterations_ and a.work_ == b.work_


def test_budget_stop_does_not_depend_on_the_thread_count(exact):
    import numba
    from threadpoolctl import threadpool_limits

    X, y, opt = exact
    kw = dict(soft=False, lazy=True, n_init=1, max_work=0.5 * opt.work_)
    with pytest.warns(ConvergenceWarning):
        a = MDM(**kw).fit(X, y)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        with threadpool_limits(1), pytest.warns(ConvergenceWarning):
            b = MDM(**kw).fit(X, y)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    assert a.work_ == b.work_
