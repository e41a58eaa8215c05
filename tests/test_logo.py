"""LOGO: the inner l1-logistic problem against finite differences, an independent
solver and its KKT conditions; the outer fixed point; recovery of informative features."""

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import Logo
from knnweights.engine.neighbors import soft_margins
from knnweights.weighters.logo import logo_inner_objective, logo_inner_solve, mean_abs_differences

# many small kernel and BLAS calls: one thread each (see conftest.one_thread)
pytestmark = pytest.mark.usefixtures("one_thread")


def _margins(n=50, d=8, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = rng.normal(size=(n, d))
    X[:, :2] += 1.5 * y[:, None]
    return X, y, soft_margins(X, y, np.ones(d), 2.0, "manhattan", per_sample=True).z


def _projected_gradient(w, g):
    # minimisation over w >= 0: g_j = 0 where w_j > 0, g_j >= 0 where w_j = 0
    return np.where(w > 0, g, np.minimum(g, 0.0))


def _informative_problem(n=200, n_informative=5, n_noise=100, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_informative + n_noise))
    y = (X[:, :n_informative].sum(axis=1) > 0).astype(int)
    return X, y


@parametrize_with_checks([Logo(sigma=2.0, max_iter=5)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.mark.parametrize("lambda_", [0.1, 1.0, 10.0])
def test_inner_gradient_matches_finite_differences(lambda_):
    _, _, Z = _margins()
    w0 = np.random.RandomState(1).uniform(0.1, 2.0, Z.shape[1])
    err = check_grad(lambda w: logo_inner_objective(w, Z, lambda_)[0],
                     lambda w: logo_inner_objective(w, Z, lambda_)[1], w0, epsilon=1e-7)
    assert err <= 1e-5 * max(1.0, np.linalg.norm(logo_inner_objective(w0, Z, lambda_)[1]))


def test_inner_objective_is_the_l1_logistic_loss():
    _, _, Z = _margins(n=20, d=4)
    w = np.array([0.5, 0.0, 2.0, 1.0])
    expected = sum(np.log1p(np.exp(-z @ w)) for z in Z) + 0.7 * np.abs(w).sum()
    assert logo_inner_objective(w, Z, 0.7)[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("lambda_", [0.5, 3.0])
def test_inner_solve_matches_the_papers_v_squared_parametrisation(lambda_):
    # LOGO's own route: w = v**2, unconstrained minimisation in v (BFGS here)
    _, _, Z = _margins()

    def in_v(v):
        f, g = logo_inner_objective(v * v, Z, lambda_)
        return f, 2.0 * v * g

    ref = minimize(in_v, np.ones(Z.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    res = logo_inner_solve(Z, lambda_, np.ones(Z.shape[1]))
    assert res.fun <= ref.fun + 1e-9 * abs(ref.fun)
    assert res.fun == pytest.approx(ref.fun, rel=1e-8)
    np.testing.assert_allclose(res.x, ref.x ** 2, atol=1e-4)


def test_inner_solution_satisfies_kkt():
    _, _, Z = _margins(d=12)
    res = logo_inner_solve(Z, 2.0, np.ones(Z.shape[1]))
    g = logo_inner_objective(res.x, Z, 2.0)[1]
    assert np.all(res.x >= 0)
    assert np.max(np.abs(_projected_gradient(res.x, g))) < 1e-7
    assert (res.x == 0).any() and (res.x > 0).any()  # both kinds of KKT condition are exercised


def test_zero_is_optimal_exactly_above_the_critical_lambda():
    # at w = 0 the gradient is lambda - sum_n z_n / 2: w = 0 is optimal iff lambda >= max_j sum_n z_nj / 2
    _, _, Z = _margins()
    lam_c = 0.5 * Z.sum(axis=0).max()
    assert lam_c > 0
    assert not logo_inner_solve(Z, 1.01 * lam_c, np.ones(Z.shape[1])).x.any()
    assert logo_inner_solve(Z, 0.99 * lam_c, np.ones(Z.shape[1])).x.any()


def test_one_outer_iteration_solves_the_inner_problem_at_unit_weights():
    X, y, _ = _margins(d=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = Logo(sigma=2.0, sigma_units="absolute", lambda_=1.5, max_iter=1).fit(X, y)
    w = est.feature_importances_
    Z = soft_margins(X, y, np.ones(X.shape[1]), 2.0, "manhattan", per_sample=True).z
    f, g = logo_inner_objective(w, Z, 1.5)
    assert np.max(np.abs(_projected_gradient(w, g))) < 1e-7
    assert est.cost_history_ == [pytest.approx(f, rel=1e-12)]


def test_converged_weights_are_a_fixed_point():
    X, y, _ = _margins(n=60, d=10)
    est = Logo(sigma=5.0, sigma_units="absolute", lambda_=1.0, max_iter=200, tol=1e-8).fit(X, y)
    w = est.feature_importances_
    Z = soft_margins(X, y, w, 5.0, "manhattan", per_sample=True).z
    w_next = logo_inner_solve(Z, 1.0, w).x
    assert np.linalg.norm(w_next - w) < 1e-6
    # and w solves the inner problem built on its own neighbours (KKT)
    g = logo_inner_objective(w, Z, 1.0)[1]
    assert np.max(np.abs(_projected_gradient(w, g))) < 1e-4
    assert est.n_iter_ == len(est.cost_history_) > 1


def test_recovers_informative_features_among_100_noise():
    X, y = _informative_problem()
    est = Logo().fit(X, y)  # defaults: sigma = half the mean distance
    w = est.feature_importances_
    assert est.stop_reason_ == "converged"
    assert set(np.argsort(-w)[:5]) == set(range(5))
    assert w[:5].min() > 3 * w[5:].max()


def test_constant_feature_gets_zero_weight():
    X, y, _ = _margins(n=40, d=4)
    X = np.column_stack([X, np.full(40, -2.0)])
    w = Logo(sigma=2.0).fit(X, y).feature_importances_
    assert w[-1] == 0.0 and np.all(np.isfinite(w)) and w[:2].min() > 0


def test_float32_input():
    X, y, _ = _margins(n=40, d=6)
    w64 = Logo(sigma=2.0).fit(X, y).feature_importances_
    est = Logo(sigma=2.0).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(est.feature_importances_, w64, rtol=1e-3, atol=1e-4)
    assert est.transform(X.astype(np.float32)).dtype == np.float32


def test_max_iter_warns():
    X, y, _ = _margins()
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        Logo(max_iter=1, tol=0.0).fit(X, y)


def test_verbose_prints_every_outer_iteration(capsys):
    X, y, _ = _margins(n=40, d=6)
    est = Logo(sigma=5.0, verbose=1).fit(X, y)
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(rows) == est.n_iter_
    assert [float(r[1]) for r in rows] == pytest.approx(est.cost_history_, rel=1e-6)
    assert float(rows[-1][2]) < est.tol  # the logged step of the last iteration met tol


def test_loose_early_inner_solves_reach_the_exact_loops_fixed_point():
    # the outer loop with every inner problem solved to 1e-9 (the paper's loop) against the
    # default one (inexact inner solves while the weights move): the same fixed point
    X, y, _ = _margins(n=60, d=10, seed=2)
    w = np.ones(X.shape[1])
    for _ in range(200):
        Z = soft_margins(X, y, w, 5.0, "manhattan", per_sample=True).z
        w_new = logo_inner_solve(Z, 1.0, w, gtol=1e-9).x
        done = np.linalg.norm(w_new - w) < 1e-8
        w = w_new
        if done:
            break
    est = Logo(sigma=5.0, sigma_units="absolute", lambda_=1.0, max_iter=200, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(est.feature_importances_, w, atol=1e-5)


def test_mean_abs_differences_matches_brute_force():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(17, 5)) * [1, 10, 0.1, 0, 3]
    iu = np.triu_indices(17, 1)
    ref = np.abs(X[:, None, :] - X[None, :, :])[iu].mean(axis=0)
    np.testing.assert_allclose(mean_abs_differences(X), ref, rtol=1e-12, atol=1e-15)


def _wide_margins(n=40, d=2500, seed=4):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = rng.normal(size=(n, d))
    X[:, :6] += 1.0 * y[:, None]
    return soft_margins(X, y, np.ones(d), 300.0, "manhattan", per_sample=True).z


@pytest.mark.parametrize("lambda_", [0.5, 2.0])
def test_working_set_inner_solve_meets_kkt_over_all_features(lambda_):
    # d = 2500 > 1000: solved on a working set; the projected gradient over ALL features
    # must meet the bound, and the optimum must equal a plain L-BFGS-B over all features
    Z = _wide_margins()
    res = logo_inner_solve(Z, lambda_, np.ones(Z.shape[1]), gtol=1e-8)
    g = logo_inner_objective(res.x, Z, lambda_)[1]
    assert res.n_rounds > 1
    # the features left at 0 (most of them never in the working set) meet g_j >= -gtol;
    # the support is solved to L-BFGS-B's accuracy (it may stop on its ftol first)
    assert g[res.x == 0].min() >= -1e-8
    assert np.max(np.abs(_projected_gradient(res.x, g))) < 1e-6
    assert 0 < np.count_nonzero(res.x) < 200
    full = minimize(logo_inner_objective, np.ones(Z.shape[1]), args=(Z, lambda_), jac=True, method="L-BFGS-B",
                    bounds=[(0, None)] * Z.shape[1], options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20000})
    assert res.fun <= full.fun + 1e-8 * abs(full.fun)
    assert res.fun == pytest.approx(logo_inner_objective(res.x, Z, lambda_)[0], rel=1e-14)


def test_working_set_inner_solve_returns_zero_above_the_critical_lambda():
    Z = _wide_margins()
    lam_c = 0.5 * Z.sum(axis=0).max()
    assert not logo_inner_solve(Z, 1.01 * lam_c, np.zeros(Z.shape[1])).x.any()
    assert logo_inner_solve(Z, 0.99 * lam_c, np.zeros(Z.shape[1])).x.any()


def test_relative_width_fixed_point_is_the_papers_fixed_point_at_sigma_():
    # sigma in units of the mean weighted distance: the converged w is a fixed point of the
    # paper's map with the absolute width sigma_ = sigma * w . m
    X, y, _ = _margins(n=60, d=10, seed=1)
    X[:, 3] *= 50.0  # scales differ by feature: the width must follow the weighted distances
    est = Logo(sigma=0.5, tol=1e-8, max_iter=200).fit(X, y)
    w = est.feature_importances_
    assert est.stop_reason_ == "converged"
    width = 0.5 * w @ mean_abs_differences(X)
    assert est.sigma_ == pytest.approx(width, rel=1e-6)
    Z = soft_margins(X, y, w, width, "manhattan", per_sample=True).z
    assert np.linalg.norm(logo_inner_solve(Z, 1.0, w).x - w) < 1e-6


def test_relative_width_is_invariant_to_the_units_of_the_data():
    # X -> c X with lambda -> c lambda maps every inner problem's w to w / c and leaves the
    # distances unchanged; with the width in mean-distance units the first iteration (at
    # w = 1) is invariant too, so the whole fit is; an absolute width is not
    X, y, _ = _margins(n=50, d=6, seed=5)
    w1 = Logo(tol=1e-6, max_iter=200).fit(X, y).feature_importances_
    w2 = Logo(lambda_=1000.0, tol=1e-9, max_iter=200).fit(1000.0 * X, y).feature_importances_  # tol in w's units
    np.testing.assert_allclose(1000.0 * w2, w1, rtol=1e-4, atol=1e-6)
    a1 = Logo(sigma=2.0, sigma_units="absolute", max_iter=1).fit(X, y).feature_importances_
    a2 = Logo(sigma=2.0, sigma_units="absolute", lambda_=1000.0, max_iter=1).fit(1000.0 * X, y).feature_importances_
    assert not np.allclose(1000.0 * a2, a1, rtol=1e-2)


def _cycling_problem():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 15))
    return X, (X[:, :3].sum(axis=1) > 0).astype(int)


def test_damping_settles_where_the_plain_iteration_cycles_at_a_paper_fixed_point():
    X, y = _cycling_problem()
    with pytest.warns(ConvergenceWarning):
        plain = Logo(sigma=0.1, damping=False, max_iter=30).fit(X, y)
    assert plain.stop_reason_ == "max_iter" and min(plain.step_history_[-10:]) > 0.1  # it keeps jumping
    est = Logo(sigma=0.1, max_iter=50).fit(X, y)
    assert est.stop_reason_ == "converged" and est.n_iter_ < 30
    # one more undamped (paper) step from the result stays within tol
    w = est.feature_importances_
    Z = soft_margins(X, y, w, 0.1 * w @ mean_abs_differences(X), "manhattan", per_sample=True).z
    assert np.linalg.norm(logo_inner_solve(Z, 1.0, w).x - w) < 2 * est.tol
    assert set(np.argsort(-w)[:3]) == {0, 1, 2}


def test_oscillation_ends_with_a_cycle_warning():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 20))
    y = (X[:, :3].sum(axis=1) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="oscillates"):
        est = Logo(sigma=0.01, max_iter=20).fit(X, y)
    assert est.stop_reason_ == "cycle" and est.n_iter_ == 20


def test_damping_changes_the_path_not_the_fixed_point():
    # plain paper iteration against the default damped one, both to a tight tol: the same
    # weights, and the damped one needs no more iterations
    X, y = _informative_problem(n=150, n_noise=20, seed=3)
    plain = Logo(damping=False, tol=1e-7, max_iter=300).fit(X, y)
    est = Logo(tol=1e-7, max_iter=300).fit(X, y)
    assert plain.stop_reason_ == est.stop_reason_ == "converged"
    np.testing.assert_allclose(est.feature_importances_, plain.feature_importances_, atol=1e-5)
    assert est.n_iter_ <= plain.n_iter_


def test_step_control_damps_oscillations_only():
    est = Logo()
    r0 = np.array([1.0, 2.0, 0.5])
    n0 = np.linalg.norm(r0)
    assert est._step_control(-r0, r0, n0, n0, 1.0) == pytest.approx(0.5)  # 2-cycle: a = 1 / (1 - (-1))
    assert est._step_control(-0.6 * r0, r0, 0.6 * n0, n0, 1.0) == pytest.approx(1 / 1.6)
    assert est._step_control(0.5 * r0, r0, 0.5 * n0, n0, 0.5) == 0.5  # contracting: unchanged
    assert est._step_control(np.array([4.0, -2.0, 0.0]), r0, 4.5, n0, 0.5) == 0.5  # grew, no oscillation: kept
    assert est._step_control(-r0, r0, n0, n0, Logo._MIN_DAMPING) == Logo._MIN_DAMPING
    assert Logo(damping=False)._step_control(-r0, r0, n0, n0, 1.0) == 1.0
