"""The dense interior point of the MDM LP solver, its exact vertex recovery, and the lazy MDM built on them."""

import time
import types

import numpy as np
import pytest
from scipy.optimize import linprog

from knnweights._solvers import lp_ipm, mdm_lp
from knnweights._solvers.lp_ipm import _DenseRelaxation, _IPMState, _vertex, dense_ipm
from knnweights._solvers.mdm_lp import solve_mdm
from knnweights.engine.linalg import single_thread_blas


def _random_lp(m, n, seed):
    """A feasible, bounded ``min c.x, A x <= b, x >= 0``: x0 > 0 is strictly feasible and c > 0."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, n))
    x0 = rng.uniform(0.5, 1.5, size=n)
    b = A @ x0 + rng.uniform(0.1, 1.0, size=m)
    c = rng.uniform(0.1, 1.0, size=n) - 0.05 * (A.T @ np.ones(m)) / m  # some columns want to grow
    c = np.maximum(c, 0.01)
    return A, b, c


@pytest.mark.parametrize("correctors", [0, 2])
@pytest.mark.parametrize("m,n,seed", [(40, 15, 0), (15, 40, 1), (60, 60, 2)])  # column space, row space, square
def test_dense_ipm_and_vertex_match_highs_simplex(m, n, seed, correctors):
    A, b, c = _random_lp(m, n, seed)
    ref = linprog(c, A_ub=A, b_ub=b, bounds=(0, None), method="highs-ds")
    assert ref.status == 0
    with single_thread_blas():
        st, status, iters = dense_ipm(A, b, c, tol=1e-10, correctors=correctors)
    assert status == "optimal" and iters < 60
    assert c @ st.x == pytest.approx(ref.fun, rel=1e-8, abs=1e-10)
    vert = _vertex(A, b, c, st)
    assert vert is not None
    x, lam = vert
    assert c @ x == pytest.approx(ref.fun, rel=1e-10, abs=1e-12)
    # KKT of the returned point: feasible, lam >= 0, reduced costs >= 0, complementary, zero gap
    assert np.all(A @ x <= b + 1e-9) and np.all(x >= 0) and np.all(lam >= 0)
    red = c + A.T @ lam
    assert red.min() >= -1e-9
    assert np.abs(x * red).max() <= 1e-9 and np.abs(lam * (b - A @ x)).max() <= 1e-9
    assert -b @ lam == pytest.approx(c @ x, rel=1e-10, abs=1e-12)
    # a vertex: no more nonzero variables than tight rows
    assert np.count_nonzero(x) <= np.count_nonzero(np.abs(b - A @ x) <= 1e-9)


def test_vertex_refuses_a_wrong_partition():
    A, b, c = _random_lp(30, 10, 3)
    with single_thread_blas():
        st, status, _ = dense_ipm(A, b, c, tol=1e-10)
    # swap the roles of x and z: the partition then names the wrong basic columns
    bad = _IPMState(st.z.copy(), st.s.copy(), st.lam.copy(), st.x.copy())
    out = _vertex(A, b, c, bad)
    if out is not None:  # only acceptable if it really is optimal
        x, _ = out
        ref = linprog(c, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
        assert c @ x == pytest.approx(ref.fun, rel=1e-9)


@pytest.mark.parametrize("window", [0, 3])
def test_degenerate_optimum_goes_to_a_vertex_through_the_simplex_or_the_window(window, monkeypatch):
    # min x1 + x2  s.t.  x1 + x2 >= 1: every point of the segment is optimal; the interior point converges
    # to its middle (2 basic columns, 1 active row): the ratio partition is not square, so the exact vertex
    # needs the simplex fallback (window 0) or a square partition of the k most clearly basic (window 3)
    monkeypatch.setattr(lp_ipm, "_VERTEX_WINDOW", window)
    relax = _DenseRelaxation(np.array([1.0, 1.0]))
    relax.loose = False
    relax.add_rows(np.array([[-1.0, -1.0], [1.0, -2.0]]), np.array([-1.0, 5.0]))
    status, x, lam, fun, _ = relax.solve()
    assert status == "optimal" and fun == pytest.approx(1.0, abs=1e-12)
    assert relax.crossovers == (1 if window == 0 else 0)
    assert np.count_nonzero(x) == 1  # a vertex, not the middle of the segment
    assert lam[0] == pytest.approx(1.0) and lam[1] == pytest.approx(0.0, abs=1e-12)


def test_dense_ipm_stops_at_its_deadline():
    A, b, c = _random_lp(200, 150, 4)
    st, status, iters = dense_ipm(A, b, c, tol=1e-12, deadline=time.perf_counter() - 1.0)
    assert status == "time_limit" and iters == 0


def test_dense_ipm_does_not_start_an_iteration_predicted_to_end_past_its_deadline():
    # the clock predicts 100 s per iteration: with 1 s left no iteration (nor Mehrotra's start) is begun
    A, b, c = _random_lp(40, 60, 0)
    slow = lp_ipm._Clock.flops(40, 60) / 100.0  # flop/s
    st, status, iters = dense_ipm(A, b, c, deadline=time.perf_counter() + 1.0, clock=lp_ipm._Clock(rate=slow))
    assert status == "time_limit" and iters == 0
    # from a state, it stops after the iterations that fit (here: none) and returns that iterate
    st0, status0, _ = dense_ipm(A, b, c, tol=1e-2)
    st, status, iters = dense_ipm(A, b, c, state=st0, deadline=time.perf_counter() + 1.0,
                                  clock=lp_ipm._Clock(rate=slow))
    assert status == "time_limit" and iters == 0 and np.array_equal(st.x, st0.x)
    # a realistic clock lets it finish well within a generous deadline
    st, status, iters = dense_ipm(A, b, c, deadline=time.perf_counter() + 60.0)
    assert status == "optimal" and iters > 3


def test_time_limit_bounds_the_whole_fit_with_a_feasible_point_and_a_warning(capsys, monkeypatch):
    # wide dense-optimum data whose optimum is far beyond the limit: the fit returns soon after the limit
    # (overshoot at most one distance scan when the iteration time is predicted exactly), with eqs. 6-7 satisfied.
    # The clock the solver reads is its own counted work at a fixed rate, so the limit is reached at the same
    # point on any machine and under any load, and the overshoot is measured in counted work.
    from sklearn.exceptions import ConvergenceWarning

    from knnweights.weighters.mdm import MDM

    rate = lp_ipm._Clock().rate  # flop/s: the clock's own prediction is then exact
    counters = []

    class CountedWork(lp_ipm._Work):
        def __init__(self, budget=None):
            super().__init__(budget)
            counters.append(self)

    def work_clock():
        return sum(w.done for w in counters) / rate

    monkeypatch.setattr(lp_ipm, "_Work", CountedWork)
    for module in (lp_ipm, mdm_lp):
        monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=work_clock))
    X, y = _genes(80, 2500, 20, 0)
    n, d = X.shape
    with pytest.warns(ConvergenceWarning, match=r"time_limit=0.4 s.*best feasible point"):
        mdm = MDM(time_limit=0.4, verbose=1).fit(X, y)
    assert mdm.stop_reason_ == "time_limit" and mdm.lp_iterations_ > 0
    assert work_clock() == pytest.approx(mdm.work_ * 1e9 / rate, rel=1e-12)  # every flop counted went to the clock
    assert work_clock() <= 0.4 + 2.0 * n * n * d / rate
    assert "time_limit=0.4 s reached" in capsys.readouterr().out
    w = mdm.feature_importances_
    assert np.all(w >= 0) and np.all(np.isfinite(w))
    D = (((X[:, None, :] - X[None, :, :]) ** 2) * w).sum(-1)
    same = y[:, None] == y[None, :]
    assert D[~same].min() == pytest.approx(1.0, rel=1e-9)
    assert D[same].max() <= mdm.radius_ * (1 + 1e-9) and mdm.objective_ == mdm.radius_


def _genes(n, d, n_planted, seed):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    Z = rng.normal(size=(n, d))
    Z[:, :n_planted] += y[:, None]
    X = np.exp(Z)
    return (X - X.mean(0)) / X.std(0), y


@pytest.mark.parametrize("soft,C", [(False, 1.0), (True, 0.2)])
def test_interior_point_lazy_equals_simplex_lazy_and_full_lp_on_wide_dense_data(soft, C):
    # d >> n with a dense optimum (microarray-like), rows and feature columns generated lazily
    X, y = _genes(30, 150, 5, seed=2)
    full = solve_mdm(X, y, soft=soft, C=C, lazy=False)
    ipm = solve_mdm(X, y, soft=soft, C=C, lazy=True, n_init=1, n_add=3, feature_block=20, method="ipm")
    spx = solve_mdm(X, y, soft=soft, C=C, lazy=True, n_init=1, feature_block=20, method="simplex")
    assert ipm.status == 0 and ipm.converged and ipm.n_rounds >= 2 and ipm.features.size < X.shape[1]
    assert np.count_nonzero(full.w) > 15  # a dense optimum
    assert abs(ipm.fun - full.fun) <= 1e-8 * max(1.0, abs(full.fun))
    assert abs(spx.fun - full.fun) <= 1e-8 * max(1.0, abs(full.fun))
    np.testing.assert_allclose(ipm.w, full.w, rtol=1e-6, atol=1e-9)
    # the returned point is a vertex of the final relaxation: nonzero variables <= tight rows
    I, J = ipm.pairs.T
    D = ((X[I] - X[J]) ** 2) @ ipm.w
    bound = np.where(ipm.kind == 0, 1.0, ipm.r + ipm.xi[I])
    n_tight = np.count_nonzero(np.abs(D - bound) <= 1e-7 * max(1.0, ipm.r))
    assert np.count_nonzero(ipm.w) + (ipm.r > 0) + np.count_nonzero(ipm.xi) <= n_tight
    # the multipliers certify it: sum of the separation multipliers = objective (hard LP, b = -1 there)
    if not soft:
        assert ipm.dual[ipm.kind == 0].sum() == pytest.approx(ipm.fun, rel=1e-7)


def test_loose_rounds_then_exact_last_round_equal_tight_rounds_and_full_lp(monkeypatch):
    # rounds before the last stop the interior point at gap _IPM_TOL_FIRST; the last one is exact (vertex, KKT-checked)
    # and every pair and feature is checked at it: same optimum as tight rounds and as the full LP
    X, y = _genes(40, 120, 6, seed=5)
    full = solve_mdm(X, y, soft=False, lazy=False)
    calls = []
    orig = lp_ipm.dense_ipm

    def spy(*args, **kwargs):
        calls.append(kwargs.get("tol"))
        return orig(*args, **kwargs)

    monkeypatch.setattr(lp_ipm, "dense_ipm", spy)  # the name _DenseRelaxation calls
    loose = solve_mdm(X, y, soft=False, lazy=True, n_init=1, n_add=2, feature_block=30)
    loose_tols = list(calls)
    loose_tol = mdm_lp._IPM_TOL_FIRST
    monkeypatch.setattr(mdm_lp, "_IPM_TOL_FIRST", lp_ipm._IPM_TOL_ROUND)  # read by solve_mdm
    calls.clear()
    tight = solve_mdm(X, y, soft=False, lazy=True, n_init=1, n_add=2, feature_block=30)
    assert loose_tol > 1e-6 and loose_tol not in calls  # really tight rounds this time
    assert loose_tols.count(loose_tol) >= 2 and loose.n_rounds >= 3  # really loose rounds before the last
    assert np.count_nonzero(full.w) > 20  # a dense optimum
    for res in (loose, tight):
        assert res.status == 0 and res.converged
        assert abs(res.fun - full.fun) <= 1e-9 * max(1.0, abs(full.fun))
        np.testing.assert_allclose(res.w, full.w, rtol=1e-6, atol=1e-9)
    assert loose.history[-1] == loose.fun


@pytest.mark.parametrize("age", [1, 2])
def test_pruned_rows_still_give_the_full_lp_optimum(age, monkeypatch):
    # rows inactive at the last `age` relaxations leave the LP (at most once each); the scan of every pair
    # brings back any that is violated later, so the optimum is still the full LP's
    X, y = _genes(50, 40, 4, seed=7)
    full = solve_mdm(X, y, soft=False, lazy=False)
    monkeypatch.setattr(mdm_lp, "_PRUNE_AGE", 0)
    plain = solve_mdm(X, y, soft=False, lazy=True, n_init=1, n_add=2)
    monkeypatch.setattr(mdm_lp, "_PRUNE_AGE", age)
    pruned = solve_mdm(X, y, soft=False, lazy=True, n_init=1, n_add=2)
    assert plain.n_pruned == 0 and pruned.n_pruned > 0
    assert pruned.n_constraints < plain.n_constraints
    for res in (plain, pruned):
        assert res.status == 0 and res.converged
        assert abs(res.fun - full.fun) <= 1e-9 * max(1.0, abs(full.fun))
        np.testing.assert_allclose(res.w, full.w, rtol=1e-6, atol=1e-9)
    # the returned pairs and multipliers still certify the optimum: separation multipliers sum to the objective
    assert pruned.dual.shape == (pruned.n_constraints,)
    assert pruned.dual[pruned.kind == 0].sum() == pytest.approx(pruned.fun, rel=1e-7)


@pytest.mark.parametrize("share", [0.02, 0.4])  # fewer active pairs than samples (direct), more (pair matrix)
def test_reduced_costs_equal_the_brute_force_sum_over_active_pairs(share):
    rng = np.random.default_rng(11)
    n, d = 30, 60
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, size=d)
    I, J = np.triu_indices(n, 1)
    kind = (rng.random(I.size) < 0.5).astype(np.int8)
    dual = np.where(rng.random(I.size) < share, rng.random(I.size), 0.0)
    assert (np.count_nonzero(dual) >= n) == (share > 0.1)
    ref = np.zeros(d)
    for i, j, k, lam in zip(I, J, kind, dual, strict=True):  # the definition, one pair at a time
        ref += lam * (1.0 if k == mdm_lp.COMPACTNESS else -1.0) * (X[i] - X[j]) ** 2
    got = mdm_lp._reduced_costs(X, I, J, kind, dual)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("trans", [False, True])
def test_threaded_normal_matrix_product_is_bit_identical(trans):
    """The large ``dsyrk`` of the normal matrix runs on the caller's BLAS threads with the same bits as one thread
    (OpenBLAS splits the output, not the sums), so MDM's result does not depend on the thread count."""
    rng = np.random.default_rng(3)
    F = rng.lognormal(size=(1100, 900)) if not trans else rng.lognormal(size=(900, 1100))
    assert 1100.0 ** 2 * 900 >= lp_ipm._SYRK_THREADED  # the threaded branch is the one tested
    one = lp_ipm._syrk(F, trans, threads=1)
    two = lp_ipm._syrk(F, trans, threads=2)
    np.testing.assert_array_equal(np.triu(one), np.triu(two))
    ref = F @ F.T if not trans else F.T @ F
    np.testing.assert_allclose(np.triu(one), np.triu(ref), rtol=1e-12)


def test_dense_ipm_iterates_do_not_depend_on_blas_threads(monkeypatch):
    monkeypatch.setattr(lp_ipm, "_SYRK_THREADED", 0.0)  # every product threaded
    A, b, c = _random_lp(70, 90, 4)
    with single_thread_blas():
        assert lp_ipm.blas_thread_count() == 1
        st1, status1, it1 = dense_ipm(A, b, c, tol=1e-10, blas_threads=1)
        st2, status2, it2 = dense_ipm(A, b, c, tol=1e-10, blas_threads=2)
    assert status1 == status2 == "optimal" and it1 == it2
    for v1, v2 in zip((st1.x, st1.s, st1.lam, st1.z), (st2.x, st2.s, st2.lam, st2.z), strict=True):
        np.testing.assert_array_equal(v1, v2)
