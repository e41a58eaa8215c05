"""SBMLR: the fixed point alpha = N_W / E_W, the inner problem's L1 optimality conditions
(checked with an independent softmax gradient), recovery of planted features."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from knnweights import SBMLR, WEIGHTERS
from knnweights.weighters.sbmlr import solve_l1_multinomial, sparsest_representative


def _planted(n=200, d=30, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    if n_classes == 2:
        y = (X[:, 0] - X[:, 3] + 0.5 * rng.randn(n) > 0).astype(int)
    else:
        y = np.digitize(X[:, 1] + X[:, 5] + 0.3 * rng.randn(n), [-0.7, 0.7])
    return X, y


def _objective_and_grad(W, Xa, y, alpha):
    """E_D + alpha ||W||_1 and dE_D/dW, written out per sample (independent of the module)."""
    n, c = Xa.shape[0], W.shape[1]
    A = Xa @ W
    A = A - A.max(axis=1, keepdims=True)
    P = np.exp(A) / np.exp(A).sum(axis=1, keepdims=True)
    ed = -np.log(P[np.arange(n), y]).sum()
    T = np.zeros((n, c))
    T[np.arange(n), y] = 1
    return ed + alpha * np.abs(W).sum(), Xa.T @ (P - T)


def _full_W(est):
    return np.vstack([est.coef_, est.intercept_[None, :]])


def test_sbmlr_meets_its_fixed_point_and_the_l1_optimality_conditions():
    X, y = _planted()
    est = SBMLR().fit(X, y)
    W = _full_W(est)
    nnz, l1 = np.count_nonzero(W), np.abs(W).sum()
    assert est.fixed_point_ == "exact" and est.n_nonzero_ == nnz
    np.testing.assert_allclose(est.alpha_, nnz / l1, rtol=1e-6)  # alpha = N_W / E_W
    Xa = np.hstack([X, np.ones((len(X), 1))])
    _, G = _objective_and_grad(W, Xa, y, est.alpha_)
    a = est.alpha_
    nz = W != 0
    # KKT of min E_D + alpha ||W||_1: g = -alpha sign(w) on the support, |g| <= alpha off it
    assert np.abs(G[nz] + a * np.sign(W[nz])).max() <= 1e-6 * a
    assert np.abs(G[~nz]).max() <= a * (1 + 1e-6)
    assert 0 < nnz < W.size  # sparse, not the degenerate W = 0


def test_sbmlr_inner_solution_is_a_minimum_against_random_perturbations():
    X, y = _planted(n=120, d=10, n_classes=3, seed=1)
    Xa = np.hstack([X, np.ones((len(X), 1))])
    T = np.eye(3)[y]
    alpha = 4.0
    W, resid = solve_l1_multinomial(Xa, T, alpha)
    assert resid <= 1e-8
    f0, _ = _objective_and_grad(W, Xa, y, alpha)
    rng = np.random.RandomState(0)
    for _ in range(50):
        f, _ = _objective_and_grad(W + 1e-3 * rng.randn(*W.shape), Xa, y, alpha)
        assert f >= f0 - 1e-9


def test_sbmlr_recovers_the_planted_features():
    for n_classes, planted in [(2, {0, 3}), (3, {1, 5})]:
        X, y = _planted(n=240, d=25, n_classes=n_classes, seed=2)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            # a fixed point cut by a support change warns (its gap), and is still a result
            warnings.filterwarnings("ignore", "SBMLR found no exact fixed point", ConvergenceWarning)
            w = SBMLR().fit(X, y).feature_importances_
        assert set(np.argsort(w)[-2:]) == planted
        assert w[list(planted)].min() > 3 * np.delete(w, list(planted)).max()


def test_sbmlr_without_exact_fixed_point_stops_at_the_support_change():
    # N_W is an integer: alpha - N_W / E_W may change sign across a change of the support
    X, y = _planted(n_classes=3)
    est = SBMLR().fit(X, y)
    W = _full_W(est)
    gap = est.alpha_ - est.n_nonzero_ / np.abs(W).sum()
    if est.fixed_point_ == "exact":
        assert abs(gap) <= 1e-6 * est.alpha_
    else:
        assert est.fixed_point_ == "support_change" and gap > 0
        # just below alpha_ the support is larger and alpha < N_W / E_W there
        Xa = np.hstack([X, np.ones((len(X), 1))])
        W2, _ = solve_l1_multinomial(Xa, np.eye(3)[y], est.alpha_ * (1 - 1e-6))
        assert np.count_nonzero(W2) > est.n_nonzero_
        assert est.alpha_ * (1 - 1e-6) < np.count_nonzero(W2) / np.abs(W2).sum()


def test_sparsest_representative_keeps_the_loss_and_zeroes_one_weight_per_pair():
    W = np.array([[0.7, -0.7], [0.0, 1.5], [0.2, 0.9]])
    S = sparsest_representative(W)
    np.testing.assert_allclose(S[:, 0] - S[:, 1], W[:, 0] - W[:, 1])  # same logits' differences
    assert np.count_nonzero(S) == 4 and np.abs(S).sum() <= np.abs(W).sum() + 1e-12
    np.testing.assert_array_equal(sparsest_representative(np.ones((2, 3))), np.ones((2, 3)))


def test_sbmlr_is_registered_and_scale_of_features_matters_as_documented():
    assert WEIGHTERS["SBMLR"] is SBMLR
    X, y = _planted(n=150, d=8)
    est = SBMLR(fit_intercept=False).fit(X, y)
    assert np.all(est.intercept_ == 0) and est.coef_.shape == (8, 2)
    np.testing.assert_allclose(est.feature_importances_, (est.coef_ ** 2).sum(axis=1))


def test_verbose_and_max_iter_warning(capsys):
    X, y = _planted(n=100, d=6)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        SBMLR(max_iter=1, verbose=1).fit(X, y)
    assert "[SBMLR] iter   1" in capsys.readouterr().out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_returned_point_meets_the_fixed_point_to_tol_or_warns(seed):
    # 150 x 25, three informative features: the fixed point is often cut by a support change
    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning

    X, y = make_classification(150, 25, n_informative=3, n_redundant=0, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SBMLR().fit(X, y)
    W = np.vstack([est.coef_, est.intercept_])  # N_W and E_W count the bias row
    target = np.count_nonzero(W) / np.abs(W).sum()
    warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    if abs(est.alpha_ - target) > est.tol * est.alpha_:
        assert est.fixed_point_ == "support_change"
        assert any("no exact fixed point" in str(w.message) for w in warned)
    else:
        assert est.fixed_point_ == "exact" and not warned
