"""Simba and G-flip: G-flip's early-stopping sorted scan against a brute-force G-flip,
verbose progress output, Simba's margin sum against brute force."""

import numpy as np
import pytest

from knnweights import GFlip, Simba
from knnweights.weighters import simba as simba_module

pytestmark = pytest.mark.usefixtures("one_thread")


def _brute_gflip(X, y, utility, beta, max_iter, random_state):
    """Fig. 2 of Gilad-Bachrach et al. (2004) with full recomputation (tiny data only)."""
    rng = np.random.RandomState(random_state)
    n, d = X.shape
    F = np.zeros(d, dtype=bool)
    same = y[:, None] == y[None, :]
    eye = np.eye(n, dtype=bool)

    def e(mask):
        D = (((X[:, None, :] - X[None, :, :]) ** 2) * mask).sum(axis=2)
        nh = np.where(same & ~eye, D, np.inf).min(axis=1)
        nm = np.where(~same, D, np.inf).min(axis=1)
        theta = 0.5 * (np.sqrt(nm) - np.sqrt(nh))
        u = {"linear": theta, "zero-one": (theta > 0).astype(float),
             "sigmoid": 1.0 / (1.0 + np.exp(-beta * theta))}[utility]
        return u.sum()

    current = e(F)
    history = []
    for _ in range(max_iter):
        changed = False
        for j in rng.permutation(d):
            G = F.copy()
            G[j] = not G[j]
            cand = e(G)
            if cand > current + 1e-9 * max(1.0, abs(current)):
                F, current, changed = G, cand, True
        history.append(current)
        if not changed:
            break
    return F, history


@pytest.mark.parametrize("utility", ["linear", "zero-one", "sigmoid"])
@pytest.mark.parametrize("list_len, batch", [(64, True), (2, True), (64, False)])
def test_gflip_sorted_scan_equals_brute_force(utility, list_len, batch, monkeypatch):
    # short lists (2) force the full-row fallback; duplicated rows give zero distances;
    # batch=False: one candidate per compiled call (the path of large n)
    monkeypatch.setattr(simba_module, "_GFLIP_LIST", list_len)
    if not batch:
        monkeypatch.setattr(simba_module._jit, "SERIAL_WORK", 0)
    rng = np.random.RandomState(3)
    X = rng.normal(size=(40, 12))
    y = rng.randint(0, 3, 40)
    X[:, :2] += 1.5 * y[:, None]
    X[:4], y[:4] = X[4:8], y[4:8]
    est = GFlip(utility=utility, beta=2.0, random_state=7).fit(X, y)
    F, history = _brute_gflip(X, y, utility, 2.0, 20, 7)
    np.testing.assert_array_equal(est.support_, F)
    np.testing.assert_allclose(est.cost_history_, history, rtol=1e-9)
    assert 0 < est.support_.sum() < X.shape[1] and est.n_iter_ == len(history) > 1


def test_gflip_verbose_prints_every_pass(capsys):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, 6))
    y = (X[:, 0] > 0).astype(int)
    est = GFlip(verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(rows) == est.n_iter_
    assert [float(r[1]) for r in rows] == pytest.approx(est.cost_history_, rel=1e-6)
    assert int(rows[-1][3]) == est.support_.sum()


def test_simba_margin_and_verbose(capsys):
    rng = np.random.RandomState(1)
    X = rng.normal(size=(50, 5))
    y = (X[:, 1] > 0).astype(int)
    est = Simba(n_init=3, random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    margins = [float(ln.split()[1]) for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(margins) == 3 and est.margin_ == pytest.approx(max(margins), rel=1e-6)
    # brute-force sum of hypothesis margins at the returned weights
    w = est.feature_importances_
    D = np.sqrt((((X[:, None, :] - X[None, :, :]) ** 2) * w).sum(axis=2))
    np.fill_diagonal(D, np.inf)
    same = y[:, None] == y[None, :]
    ref = 0.5 * (np.where(~same, D, np.inf).min(axis=1) - np.where(same, D, np.inf).min(axis=1)).sum()
    assert est.margin_ == pytest.approx(ref, rel=1e-9)
    assert np.argmax(w) == 1


def test_gflip_batch_scan_switches_to_whole_rows_with_the_same_result():
    # stale 2-nearest lists after removals (large slack): every row falls back to a full
    # scan, so the batch kernel switches to whole rows; the accepted candidate and its
    # value must equal those of whole-row scans from the start
    from knnweights.engine import kernels as _kernels

    rng = np.random.RandomState(5)
    n, d = 30, 10
    X = rng.normal(size=(n, d))
    y = rng.randint(0, 2, n).astype(np.int64)
    cols = np.ascontiguousarray(X.T)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    K = 2
    order = np.zeros((n, K), np.int64)
    list_d = np.zeros((n, K))
    sorted_d0 = np.empty((n, K))
    slack = np.zeros(n)
    _kernels.gflip_sort_rows(D, order, list_d, sorted_d0, slack)
    F = np.ones(d, dtype=bool)
    for j in (0, 1):  # remove two features without rebuilding the lists
        _kernels.gflip_flip(D, cols[j], -1.0, slack, order, list_d)
        F[j] = False
    perm = rng.permutation(d).astype(np.int64)
    out = np.empty(n)
    _kernels.gflip_margins(D, cols[0], 0.0, y, 0, 1.0, out)
    current = out.sum()
    for start in range(d):
        a = _kernels.gflip_scan_candidates(D, cols, perm, start, F, current, y, order, list_d, sorted_d0, slack, 0,
                                           1.0, True, 10**9)
        b = _kernels.gflip_scan_candidates(D, cols, perm, start, F, current, y, order, list_d, sorted_d0, slack, 0,
                                           1.0, False, 10**9)
        assert a[0] == b[0] and (a[1] == b[1] or (np.isnan(a[1]) and np.isnan(b[1])))
        # whole rows after the first candidate: at most one candidate's list-plus-row work more
        assert a[2] <= b[2] + n * (K + n)


@pytest.mark.parametrize("n, K", [(12, 11), (60, 7), (400, 128)])
def test_gflip_lists_are_the_k_nearest_by_distance_then_index(n, K):
    from knnweights.engine.kernels import gflip_sort_rows

    rng = np.random.default_rng(n)
    D = rng.integers(0, 4, (n, n)).astype(float)  # few values: many equal distances
    D = D + D.T
    order = np.zeros((n, K), np.int64)
    sorted_d0, list_d, slack = np.empty((n, K)), np.empty((n, K)), np.ones(n)
    gflip_sort_rows(D, order, list_d, sorted_d0, slack)
    for i in range(n):
        row = D[i].copy()
        row[i] = np.inf
        expected = np.lexsort((np.arange(n), row))[:K]
        np.testing.assert_array_equal(order[i], expected)
        np.testing.assert_array_equal(sorted_d0[i], row[expected])
    np.testing.assert_array_equal(list_d, sorted_d0)
    assert not slack.any()
