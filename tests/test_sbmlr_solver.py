"""SBMLR's faster solvers: the secant steps reach the plain iteration's fixed point,
the active-set Newton solve from W = 0 reaches an independent solver's minimiser."""

import numpy as np
import pytest
from scipy.optimize import minimize

from knnweights import SBMLR
from knnweights.weighters.sbmlr import l1_kkt_residual, multinomial_loss_grad, solve_l1_multinomial


def _wide(n=50, d=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = (X[:, 0] - X[:, 3] + X[:, 7] + 0.3 * rng.randn(n) > 0).astype(int)
    return X, y


def _T(y, c):
    return np.eye(c)[y]


def test_inner_solve_from_zero_on_wide_data_matches_an_independent_minimiser():
    X, y = _wide()
    Xa = np.hstack([X, np.ones((X.shape[0], 1))])
    T = _T(y, 2)
    _, G0 = multinomial_loss_grad(np.zeros((Xa.shape[1], 2)), Xa, T)
    alpha = 0.05 * np.abs(G0).max()  # small alpha, many more features than samples
    W, resid = solve_l1_multinomial(Xa, T, alpha, tol=1e-9)
    assert resid <= 1e-9
    _, G = multinomial_loss_grad(W, Xa, T)
    assert l1_kkt_residual(W, G, alpha) <= 1e-9
    # an independent solver: L-BFGS-B on the split W = P - N, to a tight tolerance
    p = Xa.shape[1] * 2

    def split(v):
        Wv = v[:p].reshape(-1, 2) - v[p:].reshape(-1, 2)
        f, Gv = multinomial_loss_grad(Wv, Xa, T)
        return f + alpha * v.sum(), np.concatenate([(Gv + alpha).ravel(), (alpha - Gv).ravel()])

    r = minimize(split, np.zeros(2 * p), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * p),
                 options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 30})
    W_ref = r.x[:p].reshape(-1, 2) - r.x[p:].reshape(-1, 2)
    f = multinomial_loss_grad(W, Xa, T)[0] + alpha * np.abs(W).sum()
    f_ref = multinomial_loss_grad(W_ref, Xa, T)[0] + alpha * np.abs(W_ref).sum()
    assert f <= f_ref + 1e-9 * abs(f_ref)
    # the same minimiser up to the shift that leaves E_D unchanged (two classes: w_j1 + w_j2)
    np.testing.assert_allclose(W[:, 0] - W[:, 1], W_ref[:, 0] - W_ref[:, 1], atol=1e-4)


def _plain_fixed_point(Xa, T, alpha, iters=400):
    """alpha <- N_W / E_W with the inner problem solved from scratch each time (the old loop)."""
    for _ in range(iters):
        W, _ = solve_l1_multinomial(Xa, T, alpha, tol=1e-10)
        new = np.count_nonzero(W) / np.abs(W).sum()
        if abs(new - alpha) <= 1e-12 * alpha:
            break
        alpha = new
    return alpha, W


@pytest.mark.parametrize("seed", [1, 5, 7])
def test_secant_fixed_point_equals_the_plain_iteration(seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(120, 10)
    y = (X[:, 0] - X[:, 3] + 0.8 * rng.randn(120) > 0).astype(int)
    est = SBMLR(tol=1e-10).fit(X, y)
    if est.fixed_point_ != "exact":
        pytest.skip("no exact fixed point on these data")
    Xa = np.hstack([X, np.ones((120, 1))])
    T = _T(y, 2)
    _, G0 = multinomial_loss_grad(np.zeros((11, 2)), Xa, T)
    alpha_ref, W_ref = _plain_fixed_point(Xa, T, 1e-2 * np.abs(G0).max())
    assert est.alpha_ == pytest.approx(alpha_ref, rel=1e-7)
    W = np.vstack([est.coef_, est.intercept_[None, :]])
    # the same minimiser up to the shift of a feature's two weights that leaves E_D unchanged
    np.testing.assert_allclose(W[:, 0] - W[:, 1], W_ref[:, 0] - W_ref[:, 1], atol=1e-6)
    assert np.count_nonzero(W) == np.count_nonzero(W_ref)
    # the fixed point alpha = N_W / E_W holds at the returned weights
    assert est.alpha_ == pytest.approx(est.n_nonzero_ / np.abs(W).sum(), rel=1e-9)
    assert est.kkt_residual_ <= 1e-7
    assert est.n_iter_ <= 20  # the plain iteration converges linearly (~0.86 per step on Leukemia)


def test_working_set_solve_meets_the_whole_problems_optimality_conditions_from_a_poor_start():
    # 3 classes, 1200 columns: the polish alone fails from this start (many wrong non-zero
    # weights), so the working-set loop runs; its result must meet the KKT conditions of the
    # WHOLE problem (columns never in the working set included) and equal the full L-BFGS-B path
    rng = np.random.RandomState(3)
    n, d = 60, 1200
    X = rng.randn(n, d)
    y = np.argmax(X[:, :3] + 0.5 * rng.randn(n, 3), axis=1)
    Xa = np.hstack([X, np.ones((n, 1))])
    T = _T(y, 3)
    _, G0 = multinomial_loss_grad(np.zeros((Xa.shape[1], 3)), Xa, T)
    alpha = 0.08 * np.abs(G0).max()
    W0 = 0.05 * rng.randn(Xa.shape[1], 3) * (rng.rand(Xa.shape[1], 1) < 0.3)
    W, resid = solve_l1_multinomial(Xa, T, alpha, W0=W0, tol=1e-9, max_iter=5)
    _, G = multinomial_loss_grad(W, Xa, T)
    assert resid <= 1e-9 and l1_kkt_residual(W, G, alpha) <= 1e-9
    W_full, resid_full = solve_l1_multinomial(Xa, T, alpha, W0=W0, tol=1e-9, max_iter=5, working_set=False)
    assert resid_full <= 1e-9
    f = multinomial_loss_grad(W, Xa, T)[0] + alpha * np.abs(W).sum()
    f_full = multinomial_loss_grad(W_full, Xa, T)[0] + alpha * np.abs(W_full).sum()
    assert abs(f - f_full) <= 1e-9 * abs(f_full)
    # identical up to the per-feature shift over classes that leaves E_D unchanged
    np.testing.assert_allclose(W - W.mean(1, keepdims=True), W_full - W_full.mean(1, keepdims=True), atol=1e-5)
