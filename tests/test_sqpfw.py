"""SQP-FW: TN consistency, Theorem 7 local minimality, the fixed-TN closed form, the path."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights._solvers import _active_set_linalg
from knnweights._solvers.active_set import project_simplex, sqpfw_active_set, sqpfw_objective, sqpfw_path
from knnweights.engine.neighbors import indexed_distances, nearest_hits_misses, weighted_distances
from knnweights.weighters.sqpfw import SQPFW


def _data(n=60, d=5, seed=0, n_classes=2):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    score = X[:, 0] + 0.7 * X[:, 1]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int64)
    return X, y


def _c_vector(X, y, w, kappa, lambda_):
    nb = nearest_hits_misses(X, y, w, max(kappa, lambda_), "sqeuclidean")
    h, m = nb.hit_idx[:, kappa - 1], nb.miss_idx[:, lambda_ - 1]
    return ((X - X[h]) ** 2 - (X - X[m]) ** 2).sum(axis=0)


def _fixed_tn_reference(X, y, w, theta, kappa=1, lambda_=1, rtol=1e-9):
    """Independent reference: the convex QP with the target neighbours read off ``w`` held fixed.

    Without ties it is the simplex projection of ``w_bar - (theta/n) c``; target
    neighbours tied at ``w`` add the equalities ``(eps_ij - eps_ij') . w = 0`` (solved by
    scipy's SLSQP).
    """
    n, d = X.shape
    D = weighted_distances(X, w=w, metric="sqeuclidean")
    c, rows = np.zeros(d), []
    for i in range(n):
        for same, k, sign in ((True, kappa, 1.0), (False, lambda_, -1.0)):
            cand = np.flatnonzero((y == y[i]) if same else (y != y[i]))
            cand = cand[cand != i]
            dist = D[i, cand]
            dk = np.sort(dist)[k - 1]
            tied = cand[np.abs(dist - dk) <= rtol * (1 + dk)]
            e = (X[i] - X[tied]) ** 2
            c += sign * e[0]
            rows.extend(e[1:] - e[0])
    w_bar = np.full(d, 1 / d)
    if not rows:
        return project_simplex(w_bar - theta / n * c)
    E = np.array(rows)
    res = minimize(lambda v: theta / n * c @ v + 0.5 * np.sum((v - w_bar) ** 2), w,
                   jac=lambda v: theta / n * c + v - w_bar, method="SLSQP", bounds=[(0, None)] * d,
                   constraints=[{"type": "eq", "fun": lambda v: np.r_[v.sum() - 1, E @ v],
                                 "jac": lambda v: np.vstack([np.ones(d), E])}],
                   options={"ftol": 1e-15, "maxiter": 500})
    return res.x


@pytest.mark.parametrize("big", [False, True])
def test_indexed_distances_matches_numpy(big):
    rng = np.random.RandomState(1)
    n, d, k = (300, 40, 30) if big else (20, 3, 4)
    X = rng.randn(n, d)
    idx = rng.randint(-1, n, size=(n, k))
    v = rng.randn(d)  # any sign: step directions are not weights
    ref = np.where(idx >= 0, np.einsum("ikj,j->ik", (X[:, None, :] - X[idx]) ** 2, v), 0.0)
    np.testing.assert_allclose(indexed_distances(X, idx, v, "sqeuclidean"), ref, rtol=1e-12, atol=1e-12)
    ref1 = np.where(idx >= 0, np.einsum("ikj,j->ik", np.abs(X[:, None, :] - X[idx]), v), 0.0)
    np.testing.assert_allclose(indexed_distances(X, idx, v, "manhattan"), ref1, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kappa,lambda_,theta", [(1, 1, 5.0), (2, 2, 3.0), (1, 3, 50.0)])
def test_solution_is_target_neighbour_consistent(kappa, lambda_, theta):
    X, y = _data(seed=kappa + lambda_)
    est = SQPFW(kappa=kappa, lambda_=lambda_, theta=theta).fit(X, y)
    w = est.feature_importances_
    nb = nearest_hits_misses(X, y, w, max(kappa, lambda_), "sqeuclidean")
    rows = np.arange(X.shape[0])
    for cand, state, tn, k in ((est.hit_candidates_, est.hit_state_, nb.hit_idx, kappa),
                               (est.miss_candidates_, est.miss_state_, nb.miss_idx, lambda_)):
        target = tn[:, k - 1]
        in_eq = ((cand == target[:, None]) & (state == 0)).any(axis=1)
        assert in_eq.all(), "the recomputed target neighbour must be held in [=]"
        D = indexed_distances(X, cand, w, "sqeuclidean")
        dk = indexed_distances(X, target[:, None], w, "sqeuclidean")[:, 0]
        tol = 1e-8 * (1 + dk[:, None])
        assert np.all(np.abs(D - dk[:, None])[state == 0] <= np.broadcast_to(tol, D.shape)[state == 0])
        assert np.all((D < dk[:, None] + tol)[state == -1])
        assert np.all(((D > dk[:, None] - tol) | (cand < 0))[state == 1])
        assert ((state == -1).sum(axis=1) < k).all() and ((state <= 0).sum(axis=1) >= k).all()
    assert rows.size == X.shape[0]


@pytest.mark.parametrize("kappa,lambda_,theta", [(1, 1, 5.0), (2, 2, 20.0)])
def test_local_minimum_under_random_simplex_moves(kappa, lambda_, theta):
    X, y = _data(seed=3)
    est = SQPFW(kappa=kappa, lambda_=lambda_, theta=theta).fit(X, y)
    w = est.feature_importances_
    f0 = sqpfw_objective(X, y, w, theta, kappa, lambda_)
    assert f0 == pytest.approx(est.objective_, rel=1e-10, abs=1e-12)
    rng = np.random.RandomState(0)
    for step in (1e-3, 1e-5):
        for _ in range(30):
            w2 = project_simplex(w + step * rng.randn(w.size))
            assert sqpfw_objective(X, y, w2, theta, kappa, lambda_) >= f0 - 1e-12
    # a larger theta pulls weight off the features the margins penalise: objective strictly below w_bar's
    assert f0 < sqpfw_objective(X, y, np.full(X.shape[1], 1 / X.shape[1]), theta, kappa, lambda_)


def test_cost_history_is_non_increasing():
    X, y = _data(n=80, d=6, seed=4, n_classes=3)
    est = SQPFW(theta=10.0).fit(X, y)
    h = est.cost_history_
    assert est.n_iter_ > 5 and h.size > 5
    assert np.all(np.diff(h) <= 1e-12 * (1 + np.abs(h[:-1])))
    assert h[-1] < h[0]


def test_fixed_target_neighbours_give_simplex_projection():
    X, y = _data(seed=5)
    n, d = X.shape
    w_bar = np.full(d, 1 / d)
    for theta in (0.05, 2.0, 30.0):
        w = SQPFW(theta=theta).fit(X, y).feature_importances_
        # the TNs recomputed at the solution (ties included) define a convex QP it must solve
        np.testing.assert_allclose(w, _fixed_tn_reference(X, y, w, theta), atol=1e-7)
    # with the TNs of w_bar held fixed, small theta is exactly the projection of w_bar - theta c0 / n
    c0 = _c_vector(X, y, w_bar, 1, 1)
    w = sqpfw_active_set(X, y, 1e-3).x
    np.testing.assert_allclose(w, project_simplex(w_bar - 1e-3 / n * c0), atol=1e-12)


def test_path_is_piecewise_linear_and_locally_optimal():
    X, y = _data(n=50, d=4, seed=6)
    n, d = X.shape
    p = SQPFW().path(X, y, thetas=[30.0])
    T, W = p.thetas_, p.weights_
    assert T[0] == 0 and T[-1] == pytest.approx(30.0) and np.all(np.diff(T) >= 0) and len(T) > 3
    np.testing.assert_allclose(W[0], np.full(d, 1 / d))
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-10)
    assert (W >= 0).all()
    # inside every segment: linear in theta, and each point is the simplex projection for its own TNs
    checked = 0
    for k in range(len(T) - 1):
        if T[k + 1] - T[k] < 1e-6:
            continue
        for frac in (0.25, 0.5, 0.75):
            th = T[k] + frac * (T[k + 1] - T[k])
            w = p(th)
            np.testing.assert_allclose(w, (1 - frac) * W[k] + frac * W[k + 1], atol=1e-12)
            np.testing.assert_allclose(w, _fixed_tn_reference(X, y, w, th), atol=1e-7)
            checked += 1
    assert checked >= 3
    # continuity: the only discontinuities are the recorded jumps (repeated theta)
    jumps = np.flatnonzero(np.diff(T) == 0)
    steps = np.abs(np.diff(W, axis=0)).max(axis=1)
    assert np.all(np.delete(steps, jumps) < 1.0)


def test_capped_path_says_where_it_stopped_and_is_the_full_paths_prefix():
    from sklearn.exceptions import ConvergenceWarning

    X, y = _data(n=50, d=4, seed=6)
    full = SQPFW().path(X, y, thetas=[30.0])
    assert full.stop_reason_ == "theta_max" and full.thetas_[-1] == pytest.approx(30.0)
    cap = 5
    with pytest.warns(ConvergenceWarning, match="max_breakpoints=5"):
        short = SQPFW(max_breakpoints=cap).path(X, y, thetas=[30.0])
    assert short.stop_reason_ == "max_breakpoints" and short.theta_max_ == 30.0
    assert short.thetas_[-1] < 30.0
    # the same arithmetic up to the cap: the capped path is a prefix of the full one
    k = len(short.thetas_)
    np.testing.assert_array_equal(short.thetas_, full.thetas_[:k])
    np.testing.assert_array_equal(short.weights_, full.weights_[:k])
    # beyond its end it can only repeat its last weights, which the full path leaves
    assert np.abs(short(30.0) - full(30.0)).max() > 1e-3
    with pytest.raises(ValueError, match="max_breakpoints"):
        SQPFW(max_breakpoints=0).path(X, y)


def test_path_ends_with_a_warning_where_its_active_set_cycles():
    # Tied data (values in {0, 1, 2}): at a degenerate point the path's events change the active set in a
    # loop without moving theta or w. Without the cycle test it looped until the event cap (forever with
    # max_breakpoints=None); now it ends at the cycle, at its last recorded point. Where the cycle is met
    # depends on rounding at degenerate pivots (the CPU's), so only what the path guarantees is asserted.
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.RandomState(276)
    n, d = rng.randint(12, 40), rng.randint(3, 30)
    X = rng.randint(0, 3, size=(n, d)).astype(float)
    y = rng.randint(0, 2, n)
    with pytest.warns(ConvergenceWarning, match=r"cycles at theta=\d"):
        p = sqpfw_path(X, y, 100.0)
    assert p.stop_reason_ == "stalled" and 0 < p.thetas_[-1] < 100.0
    assert np.all(np.diff(p.thetas_) >= 0)
    np.testing.assert_allclose(p.weights_.sum(axis=1), 1.0, atol=1e-10)
    assert p.weights_.min() >= -1e-12
    with pytest.warns(ConvergenceWarning, match="cycles"):  # a cap far above changes nothing
        q = sqpfw_path(X, y, 100.0, max_breakpoints=5000)
    np.testing.assert_array_equal(q.thetas_, p.thetas_)
    np.testing.assert_array_equal(q.weights_, p.weights_)


def test_reproduction_keeps_table1_fingerprints_and_table2_paths_run_to_the_end():
    # Table 1's stored cells were computed with the solver's old fixed cap of 5000 events: at that value
    # the cap stays out of the pickled state (the store fingerprint); Table 2 runs every path to the end.
    import pickle

    from knnweights.reproduce.sqpfw import _SQPFWPathKNN, table1, table2
    from knnweights.reproduce.tables import Config

    cfg = Config(mode="full")
    t1 = next(m for m in table1().methods if m.label == "SQP-FW").build(cfg)
    t2 = next(m for m in table2().methods if "SQP-FW" in m.label).build(cfg)
    assert t1.max_breakpoints == 5000 and set(t1.__getstate__()) == {"thetas", "ks", "tns", "cv"}
    assert t2.max_breakpoints is None and t2.__getstate__()["max_breakpoints"] is None
    back = pickle.loads(pickle.dumps(t1))
    assert isinstance(back, _SQPFWPathKNN) and back.max_breakpoints == 5000 and back.thetas == t1.thetas


def test_working_set_agrees_with_full_run():
    X, y = _data(n=100, d=5, seed=7, n_classes=3)
    full = sqpfw_active_set(X, y, 8.0)
    ws = sqpfw_active_set(X, y, 8.0, working_set=5, refresh_every=7)
    assert full.status == 0 and ws.status == 0
    assert ws.hit_candidates.shape[1] < full.hit_candidates.shape[1]
    np.testing.assert_allclose(ws.x, full.x, atol=1e-10)
    assert ws.fun == pytest.approx(full.fun, rel=1e-10)


def test_recovers_relevant_features():
    rng = np.random.RandomState(8)
    n = 120
    X = rng.randn(n, 10)
    y = ((X[:, 2] > 0) ^ (X[:, 7] > 0)).astype(int)  # XOR: invisible to any single feature
    w = SQPFW(theta=50.0).fit(X, y).feature_importances_
    assert set(np.argsort(w)[-2:]) == {2, 7}
    assert w[[2, 7]].sum() > 0.8


def test_constant_feature_gets_zero():
    X, y = _data(n=60, d=4, seed=9)
    X = np.column_stack([X, np.full(60, 3.0)])
    w = SQPFW(theta=1.0).fit(X, y).feature_importances_
    assert w[-1] == 0 and w.sum() == pytest.approx(1.0)


def test_bad_parameters():
    X, y = _data()
    with pytest.raises(ValueError, match="kappa"):
        SQPFW(kappa=100, small_classes="error").fit(X, y)
    with pytest.warns(UserWarning, match="kappa=100"):  # clamped by default
        SQPFW(kappa=100, max_iter=50).fit(X, y)
    with pytest.raises(ValueError, match="w_bar"):
        SQPFW(w_bar=np.ones(2)).fit(X, y)


@parametrize_with_checks([SQPFW(theta=1.0, max_iter=2000)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_plot_path_draws_one_line_per_feature():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from knnweights.plotting.sqpfw import plot_sqpfw_path

    X, y = _data(n=40, d=3, seed=10)
    p = SQPFW().path(X, y, thetas=[5.0])
    ax = plot_sqpfw_path(p, breakpoints=False)
    assert len(ax.get_lines()) == 3 and ax.get_xlabel() and ax.get_ylabel()
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), p.weights_[:, 1])


@pytest.mark.parametrize("working_set", [None, 20])
def test_regression_against_reference_weights(working_set, sqpfw_regression):
    """The compiled step loop reproduces the weights recorded from the NumPy implementation to 1e-8."""
    m, ref = sqpfw_regression
    for k, (n, d, seed, nc, theta, kappa, lam) in enumerate(m.CASES):
        X, y = m.data(n, d, seed, nc)
        r = sqpfw_active_set(X, y, theta, kappa, lam, working_set=working_set)
        assert r.status == 0
        np.testing.assert_allclose(r.x, ref[f"w{k}"], rtol=0, atol=1e-8, err_msg=str(m.CASES[k]))
        assert r.fun == pytest.approx(float(ref[f"fun{k}"]), rel=1e-9, abs=1e-12)
        assert r.nit == int(ref[f"nit{k}"]) - 1  # the reference also counted the final Theorem 7 check
    for k, (n, d, seed, nc, tmax) in enumerate(m.PATH_CASES):
        X, y = m.data(n, d, seed, nc)
        p = sqpfw_path(X, y, tmax, working_set=working_set)
        np.testing.assert_allclose(p.thetas_, ref[f"path_thetas{k}"], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(p.weights_, ref[f"path_weights{k}"], rtol=0, atol=1e-8)


def test_rollback_drops_discarded_steps_from_history():
    X, y = _data(n=150, d=8, seed=12, n_classes=3)
    full = sqpfw_active_set(X, y, 20.0)
    ws = sqpfw_active_set(X, y, 20.0, working_set=2, refresh_every=10)
    assert ws.n_candidates > 2, "the tiny working set must have been rolled back at least once"
    np.testing.assert_allclose(ws.x, full.x, atol=1e-10)
    h = ws.cost_history
    assert h.size == ws.nit + 1 == full.nit + 1
    assert np.all(np.diff(h) <= 1e-12 * (1 + np.abs(h[:-1])))
    np.testing.assert_allclose(h, full.cost_history, rtol=1e-9, atol=1e-12)


def test_verbose_prints_progress(capsys):
    X, y = _data(n=80, d=6, seed=4, n_classes=3)
    est = SQPFW(theta=10.0, verbose=2, refresh_every=50).fit(X, y)
    out = capsys.readouterr().out
    assert "[SQPFW]" in out and "objective=" in out and "|P|=" in out
    assert f"kept {est.n_iter_:7d}" in out


def test_a_stalled_solve_stops_with_a_warning(monkeypatch):
    # a cycling active set (degenerate ties) must not run forever: force the stall window down
    # to a few steps on a problem that needs more, and check the solve stops with a warning
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    import knnweights._solvers.active_set as aset

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 8))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
    monkeypatch.setattr(aset, "STALL_STEPS", 1)
    monkeypatch.setattr(aset._Problem, "_stall_window", lambda self: 1)
    monkeypatch.setattr(aset._Problem, "_stalled", lambda self, history, h0: len(history) - h0 > 50)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = sqpfw_active_set(X, y, theta=10.0, working_set=5, refresh_every=20)
    assert res.status == 2 and "Stalled" in res.message
    assert any(issubclass(w.category, ConvergenceWarning) and "not decreased" in str(w.message) for w in rec)
    assert np.isclose(res.x.sum(), 1.0) and (res.x >= 0).all()


def test_step_loop_reaches_the_svd_path_only_for_rank_deficient_eqps(monkeypatch):
    """The step loop solves EQP (4) by the Cholesky path and calls the SVD path (compiled on its
    first call) only when the Cholesky rank test fails: never on well-conditioned data, and on data
    whose tie rows are rank deficient (duplicated samples) with the same result as the combined
    compiled solve."""
    import knnweights._solvers._active_set_linalg as kl

    rng = np.random.RandomState(21)
    X = rng.randn(60, 8)
    y = (X[:, 0] + 0.3 * rng.randn(60) > 0).astype(np.int64)
    G = rng.randn(2, 8)
    P = np.arange(8, dtype=np.int64)
    AT = np.column_stack([np.ones(8), rng.randn(8, 3)])
    AT[:, 3] = AT[:, 1] + AT[:, 2]  # a tie row in the span of two others
    AT = np.ascontiguousarray(AT)
    dw, mu, ref_dw, ref_mu = np.zeros((2, 8)), np.empty((2, 4)), np.zeros((2, 8)), np.empty((2, 4))
    # the combined compiled solve first: compiled with the real SVD path, before the counting stand-in
    kl._eqp_multi(G, P, 8, AT, ref_dw, ref_mu)

    calls = []
    svd = kl._eqp_svd

    def counted(*args):
        calls.append(args[3].shape)
        return svd(*args)

    monkeypatch.setattr(kl, "_eqp_svd", counted)
    res = sqpfw_active_set(X, y, 2.0)
    assert res.status == 0 and res.nit > 10 and calls == []
    kl.solve_eqp(G, P, 8, AT, dw, mu)
    assert calls == [(8, 4)]
    np.testing.assert_array_equal(dw, ref_dw)
    np.testing.assert_array_equal(mu, ref_mu)
    assert np.abs(AT.T @ dw.T).max() < 1e-12  # a feasible direction


def test_eqp_semi_normal_equations_match_least_squares():
    """EQP (4) from the Cholesky factor of the Gram matrix (+ refinement) equals an SVD least-squares solve."""

    rng = np.random.RandomState(13)
    d = 40
    for p, m, rank_loss in ((40, 1, False), (40, 12, False), (25, 25, False), (30, 10, True), (8, 12, False)):
        g = rng.randn(d)
        P = np.sort(rng.choice(d, p, replace=False)).astype(np.int64)
        AT = np.column_stack([np.ones(p), rng.rand(p, m - 1) ** 2 - rng.rand(p, m - 1) ** 2])
        if rank_loss:  # a tie row in the span of two others (a redundant TN equality)
            AT[:, -1] = AT[:, 1] - 2 * AT[:, 2]
        dw, mu = np.zeros(d), np.empty(m)
        _active_set_linalg._eqp_multi(g[None], P, p, np.ascontiguousarray(AT), dw[None], mu[None])
        ref_mu = np.linalg.lstsq(AT, -g[P], rcond=3e-7)[0]
        ref_dw = np.zeros(d)
        ref_dw[P] = -(g[P] + AT @ ref_mu)
        np.testing.assert_allclose(dw, ref_dw, atol=1e-12)
        np.testing.assert_allclose(mu, ref_mu, atol=1e-9 * (1 + np.abs(ref_mu).max()))
        assert np.abs(AT.T @ dw[P]).max() < 1e-12 * (1 + np.abs(g).max())  # feasible direction
        assert np.all(dw[np.setdiff1d(np.arange(d), P)] == 0)


def test_pair_matrix_matches_pair_loop():
    from knnweights._solvers import _active_set_kernels as k

    rng = np.random.RandomState(14)
    X = rng.randn(30, 120)
    cand = np.array([np.r_[np.delete(np.arange(30), i), -1] for i in range(30)], dtype=np.int64)
    v = rng.randn(120) * (rng.rand(120) > 0.3)
    nz = np.flatnonzero(v).astype(np.int64)
    ref = np.empty(cand.shape)
    rmax = k._pair_dots(X, cand, v, nz, nz.size, ref)
    Rn = np.empty((30, 30))
    k._pair_matrix(X, v, nz, nz.size, Rn)
    R = np.empty(cand.shape)
    assert k._gather_pairs(Rn, cand, R) == pytest.approx(rmax, rel=1e-12)
    np.testing.assert_allclose(R, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_array_equal(Rn, Rn.T)


def test_incremental_c_equals_fresh_c():
    """``c`` updated per changed representative equals ``c`` recomputed from scratch."""
    from knnweights._solvers import _active_set_kernels as k

    rng = np.random.RandomState(15)
    X = rng.randn(25, 7)
    hc = rng.randint(0, 25, size=(25, 4)).astype(np.int64)
    mc = rng.randint(0, 25, size=(25, 5)).astype(np.int64)
    hrep, mrep = np.zeros(25, np.int64), np.zeros(25, np.int64)
    c = np.empty(7)
    k._c_vector(X, hc, hrep, mc, mrep, c)
    hsamp, msamp = hc[:, 0].copy(), mc[:, 0].copy()
    for _ in range(20):
        hrep[:] = np.where(rng.rand(25) < 0.3, rng.randint(0, 4, 25), hrep)
        mrep[:] = np.where(rng.rand(25) < 0.3, rng.randint(0, 5, 25), mrep)
        k._c_update(X, hc, hrep, hsamp, 1.0, c)
        k._c_update(X, mc, mrep, msamp, -1.0, c)
        fresh = np.empty(7)
        k._c_vector(X, hc, hrep, mc, mrep, fresh)
        np.testing.assert_allclose(c, fresh, rtol=1e-12, atol=1e-12)


def test_all_pairs_product_gives_the_same_steps(monkeypatch, assert_descent_to_local_minimum):
    """Microarray shape (d >> n, whole lists): the matrix-product ratio test takes the pair loop's pivots.

    With d >> n the active set meets degenerate points (tie rows in the span of the active
    ones, slopes at rounding level) where the two summation orders may pick different
    pivots; before the first one the steps agree, and both runs end at a TN-consistent
    local minimum (Theorem 7) with a non-increasing objective.
    """
    import knnweights._solvers.active_set as aset

    rng = np.random.RandomState(16)
    X = rng.randn(30, 150)
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.randn(30) > 0).astype(np.int64)
    monkeypatch.setattr(aset, "GEMM_MIN_P", -1)
    loop = sqpfw_active_set(X, y, 3.0)
    monkeypatch.setattr(aset, "GEMM_MIN_P", 1)
    gemm = sqpfw_active_set(X, y, 3.0)
    assert loop.status == gemm.status == 0 and loop.nit > 500
    np.testing.assert_allclose(gemm.cost_history[:500], loop.cost_history[:500], rtol=1e-10)
    for r in (loop, gemm):  # local minimality under small simplex moves
        assert_descent_to_local_minimum(X, y, r, 3.0, history_tol=1e-12, move=1e-6, min_tol=1e-12)


def test_maintained_gram_factor_follows_insertions_and_deletions():
    """The Cholesky factor updated by column appends / deletions and row (feature) updates /
    downdates equals a fresh Cholesky of the current Gram matrix, and the EQP solved through it
    equals the fresh semi-normal-equation solve."""
    from knnweights._solvers import _active_set_kernels as k

    rng = np.random.RandomState(17)
    d, cap = 90, 60
    pool = rng.rand(d, 200) ** 2 - rng.rand(d, 200) ** 2  # candidate constraint columns (features x cols)
    cols = [0] + list(rng.choice(np.arange(1, 200), 24, replace=False))
    pool[:, 0] = 1.0
    rows = np.sort(rng.choice(d, 70, replace=False))
    U = np.zeros((cap, cap))
    A0 = pool[np.ix_(rows, cols)]
    L0 = np.linalg.cholesky(A0.T @ A0)
    U[:len(cols), :len(cols)] = L0.T
    fm = len(cols)
    events = {"append": 0, "delete": 0, "row+": 0, "row-": 0}
    for _ in range(120):
        ev = rng.randint(4)
        if ev == 0 and fm < 40:  # a tie row joins: append its Gram column
            new = int(rng.choice(np.setdiff1d(np.arange(1, 200), cols)))
            A = pool[np.ix_(rows, cols)]
            a = pool[rows, new]
            assert k._chol_append(U, fm, np.r_[A.T @ a, 0.0], a @ a)
            cols.append(new)
            fm += 1
        elif ev == 1 and fm > 5:  # a tie row leaves (anywhere in the order)
            f = int(rng.randint(1, fm))
            k._chol_delete(U, fm, f)
            del cols[f]
            fm -= 1
        elif ev == 2:  # a feature leaves Z: rank-one update
            out = np.setdiff1d(np.arange(d), rows)
            if out.size == 0:
                continue
            j = int(rng.choice(out))
            assert k._chol_rank1(U, 0, fm, pool[j, cols].copy(), 1.0)
            rows = np.sort(np.r_[rows, j])
        elif rows.size > fm + 5:  # a feature enters Z: rank-one downdate
            j = int(rng.choice(rows))
            assert k._chol_rank1(U, 0, fm, pool[j, cols].copy(), -1.0)
            rows = rows[rows != j]
        else:
            continue
        events[list(events)[ev]] += 1
        A = pool[np.ix_(rows, cols)]
        fresh = np.linalg.cholesky(A.T @ A).T
        np.testing.assert_allclose(np.triu(U[:fm, :fm]), fresh, rtol=0, atol=1e-9 * np.abs(fresh).max())
    assert min(events.values()) >= 10
    # the EQP through the updated factor (columns in a shuffled order) equals the fresh solve
    perm = rng.permutation(fm).astype(np.int64)
    cols_f = [cols[i] for i in perm]
    U2 = np.zeros((cap, cap))
    Af = pool[np.ix_(rows, cols_f)]
    U2[:fm, :fm] = np.linalg.cholesky(Af.T @ Af).T
    for _ in range(5):  # disturb it by delete + re-append so that it is an updated factor
        k._chol_delete(U2, fm, 0)
        c0 = cols_f.pop(0)
        cols_f.append(c0)
        Af = pool[np.ix_(rows, cols_f)]
        k._chol_append(U2, fm - 1, np.r_[Af[:, :-1].T @ Af[:, -1], 0.0], Af[:, -1] @ Af[:, -1])
        perm = np.r_[perm[1:], perm[0]]
    g = rng.randn(d)
    P = rows.astype(np.int64)
    AT = np.ascontiguousarray(pool[np.ix_(rows, cols)])
    B = np.zeros((cap, d))
    B[:fm, :P.size] = AT[:, perm].T
    dw, mu = np.zeros(d), np.empty(fm)
    k._factor_solve(g, P, P.size, B, U2, fm, perm, np.ones(cap), dw, mu)
    ref_dw, ref_mu = np.zeros(d), np.empty(fm)
    _active_set_linalg._eqp_multi(g[None], P, P.size, AT, ref_dw[None], ref_mu[None])
    np.testing.assert_allclose(mu, ref_mu, rtol=0, atol=1e-10 * (1 + np.abs(ref_mu).max()))
    np.testing.assert_allclose(dw, ref_dw, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n, d", [(200, 20), (90, 70)])
def test_maintained_factor_gives_the_same_steps(monkeypatch, n, d):
    """Forcing the maintained Gram factor on (every size) reproduces the fresh-factorisation run:
    the same steps and weights to 1e-8."""
    import knnweights._solvers.active_set as aset

    rng = np.random.RandomState(18)
    X = rng.randn(n, d)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(n) > 0).astype(np.int64)
    monkeypatch.setattr(aset, "MAINT_MIN_P", -1)
    fresh = sqpfw_active_set(X, y, 1.0)
    monkeypatch.setattr(aset, "MAINT_MIN_P", 0)
    kept = sqpfw_active_set(X, y, 1.0)
    assert fresh.nit > 1000 and kept.nit == fresh.nit
    np.testing.assert_allclose(kept.x, fresh.x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(kept.cost_history, fresh.cost_history, rtol=1e-10, atol=1e-12)


def test_work_budget_stops_with_a_feasible_tn_consistent_iterate():
    """``max_work`` stops a fit (warning, ``stop_reason_``) at a repeatable, feasible, TN-consistent iterate
    whose objective lies between the start's and the unbounded fit's; an ample budget changes nothing."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y = _data(n=120, d=30, seed=7)
    full = SQPFW(theta=5.0, max_work=None).fit(X, y)
    assert full.stop_reason_ == "local_minimum" and full.work_ > 0
    ample = SQPFW(theta=5.0, max_work=full.work_ * 1.01).fit(X, y)
    np.testing.assert_array_equal(ample.feature_importances_, full.feature_importances_)
    assert ample.n_iter_ == full.n_iter_ and ample.stop_reason_ == "local_minimum"
    budget = full.work_ / 4
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cut = SQPFW(theta=5.0, max_work=budget).fit(X, y)
    assert any(issubclass(r.category, ConvergenceWarning) and "max_work" in str(r.message) for r in rec)
    assert cut.stop_reason_ == "max_work" and budget <= cut.work_ < full.work_
    assert 0 < cut.n_iter_ < full.n_iter_
    w = cut.feature_importances_
    assert np.isclose(w.sum(), 1.0) and (w >= 0).all()
    h = cut.cost_history_
    assert h.size == cut.n_iter_ + 1 and np.all(np.diff(h) <= 1e-12 * (1 + np.abs(h[:-1])))
    f = sqpfw_objective(X, y, w, 5.0)
    assert full.objective_ - 1e-12 <= f < h[0] and f == pytest.approx(cut.objective_, rel=1e-10, abs=1e-12)
    # TN consistency of the stopped iterate: the held targets are the nearest ones under w
    assert _held_targets_are_nearest(X, y, w, ((cut.hit_candidates_, cut.hit_state_),
                                               (cut.miss_candidates_, cut.miss_state_)))
    again = SQPFW(theta=5.0, max_work=budget).fit(X, y)
    np.testing.assert_array_equal(again.feature_importances_, w)
    assert again.n_iter_ == cut.n_iter_


def _held_targets_are_nearest(X, y, w, lists, k=1):
    """Every sample's [=] members sit at the distance of its k-th nearest hit / miss under ``w``."""
    nb = nearest_hits_misses(X, y, w, k, "sqeuclidean")
    for (cand, state), dk in zip(lists, (nb.hit_dist[:, k - 1], nb.miss_dist[:, k - 1]), strict=True):
        D = ((X[:, None, :] - X[np.maximum(cand, 0)]) ** 2) @ w
        if not (state == 0).any(axis=1).all():
            return False
        if not np.all((np.abs(D - dk[:, None]) <= 1e-8 * (1 + dk[:, None]))[(state == 0) & (cand >= 0)]):
            return False
    return True


@pytest.mark.parametrize("stop", [("max_iter", 13), ("max_iter", 37), ("max_iter", 232), ("max_work", 0.3),
                                  ("max_work", 0.7)])
def test_a_stop_between_refreshes_returns_a_tn_consistent_iterate(stop):
    """With a small working set, a stop between two refreshes (step or work limit) is checked against
    the full lists and gives way to the last checked iterate when a sample outside its list became
    nearer than its target (these stops did, before the check): the held targets are the nearest
    ones, and the history ends at the returned objective."""
    import warnings

    X, y = _data(n=150, d=8, seed=12, n_classes=3)
    full = sqpfw_active_set(X, y, 20.0, working_set=2, refresh_every=40)
    kind, v = stop
    limit = {"max_iter": v} if kind == "max_iter" else {"max_work": v * full.work}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sqpfw_active_set(X, y, 20.0, working_set=2, refresh_every=40, **limit)
    assert res.status == (1 if kind == "max_iter" else 3) and res.nit < full.nit
    assert _held_targets_are_nearest(X, y, res.x, ((res.hit_candidates, res.hit_state),
                                                  (res.miss_candidates, res.miss_state)))
    assert res.cost_history.size == res.nit + 1
    assert res.cost_history[-1] == pytest.approx(sqpfw_objective(X, y, res.x, 20.0), rel=1e-9, abs=1e-12)


def test_small_class_clamps_the_target_rank_with_a_warning():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 6)
    y = np.r_[np.zeros(19, int), np.ones(19, int), 2, 2]  # a class of 2 samples: 1 hit each
    with pytest.warns(UserWarning, match="kappa=3 is larger than the hits of the smallest class"):
        est = SQPFW(kappa=3, theta=1.0).fit(X, y)
    assert est.kappa_ == 1 and est.lambda_fitted_ == 1
    np.testing.assert_allclose(est.feature_importances_, SQPFW(kappa=1, theta=1.0).fit(X, y).feature_importances_)
    with pytest.raises(ValueError, match="kappa=3 is larger than the number of hits of class 2"):
        SQPFW(kappa=3, small_classes="error").fit(X, y)
