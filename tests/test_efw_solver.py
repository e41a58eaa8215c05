"""EFW's fast objective and descent: the same function, the same iterates, a KKT point."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from knnweights import EFW
from knnweights.weighters.efw import (
    _MemberLoss,
    base_margins,
    efw_objective,
    ensemble_subsamples,
    project_sphere_orthant,
    projected_gradient,
    stationarity_residual,
)


def _data(n=70, d=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("gamma", [0.0, 0.7])
def test_member_loss_equals_efw_objective_dense_and_sparse_weights(shared, gamma):
    X, y = _data()
    subs = ensemble_subsamples(y, 4, 0.8, random_state=1)
    Z = base_margins(X, y)
    Zs = [Z[i] for i in subs] if shared else [base_margins(X[i], y[i]) for i in subs]
    loss = _MemberLoss(Z if shared else Zs, subs, 1.0 / 4, gamma)
    rng = np.random.default_rng(2)
    for density in (1.0, 0.2):  # 0.2: the margins over the support only
        W = project_sphere_orthant(rng.random((4, X.shape[1])) * (rng.random((4, X.shape[1])) < density))
        f_ref, G_ref = efw_objective(W, Zs, gamma)
        f, G = loss(W)
        assert f == pytest.approx(f_ref, rel=1e-13)
        np.testing.assert_allclose(G, G_ref, rtol=1e-12, atol=1e-15 * np.abs(G_ref).max())
        # one member alone (step 3), unscaled
        f1, G1 = loss.member(2, 1.0)(W[2:3])
        f1_ref, G1_ref = efw_objective(W[2:3], Zs[2:3], 0.0)
        assert f1 == pytest.approx(f1_ref, rel=1e-13)
        np.testing.assert_allclose(G1, G1_ref, rtol=1e-12, atol=1e-15 * np.abs(G1_ref).max())


def _tangent_curvature(fun, W, h=1e-6):
    """Smallest eigenvalue of the Lagrangian's Hessian on the tangent space of {w_k >= 0, ||w_k|| = 1} at ``W``."""
    _, G = fun(W)
    on = np.argwhere(W > 0)
    cols = []
    for k, j in on:  # Hessian columns over the support, by central differences of the gradient
        E = np.zeros_like(W)
        E[k, j] = h
        cols.append((fun(W + E)[1] - fun(W - E)[1])[tuple(on.T)] / (2 * h))
    H = (np.array(cols) + np.array(cols).T) / 2 - np.diag(np.sum(G * W, axis=1)[on[:, 0]])
    blocks = []
    for k in range(W.shape[0]):  # tangent directions: on member k's support, orthogonal to w_k
        rows = np.flatnonzero(on[:, 0] == k)
        Q = np.linalg.qr(np.c_[W[k, on[rows, 1]], np.eye(rows.size)[:, :-1]])[0][:, 1:]
        B = np.zeros((len(on), rows.size - 1))
        B[rows] = Q
        blocks.append(B)
    B = np.hstack(blocks)
    return np.linalg.eigvalsh(B.T @ H @ B)[0]


@pytest.mark.parametrize("neighbors", ["full", "subsample"])
def test_fit_follows_the_plain_projected_gradient_of_efw_objective(neighbors):
    """The lazy-gradient descent on the fast objective takes the plain one's steps on efw_objective (eqs. 1, 2, 4):
    both stop at a residual <= tol, within tol ||G|| / mu of the optimum (mu: the tangent-space curvature)."""
    tol = 1e-8
    X, y = _data(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a member's own start may stall; step 4 must not
        est = EFW(n_estimators=3, gamma=0.5, neighbors=neighbors, random_state=0, tol=tol).fit(X, y)
    Z = base_margins(X, y)
    Zs = [Z[i] if neighbors == "full" else base_margins(X[i], y[i]) for i in est.subsamples_]

    def fun(W):
        return efw_objective(W, Zs, 0.5)

    ref = projected_gradient(fun, est.initial_weights_, 2000, tol)
    assert ref["converged"] and est.residual_ <= tol
    # the same steps while rounding cannot matter; the last Barzilai-Borwein step comes from gradient differences
    # of the order of tol, so the stop may fall one iteration apart
    assert abs(ref["nit"] - est.n_iter_) <= 1
    n = min(len(ref["history"]), len(est.cost_history_))
    np.testing.assert_allclose(est.cost_history_[:n], ref["history"][:n], rtol=1e-12)
    f, G = fun(ref["x"])
    mu = _tangent_curvature(fun, ref["x"])
    assert mu > 0  # a strict local minimum
    assert np.linalg.norm(est.estimator_weights_ - ref["x"]) <= 2 * tol * np.linalg.norm(G) / mu
    # L's difference is second order in the weights' ((tol ||G||)^2 / mu, ~1e-15): only its rounding shows
    assert est.cost_history_[-1] == pytest.approx(ref["fun"], rel=1e-12)
    # first-order optimality at the returned point, recomputed from scratch
    f, G = efw_objective(est.estimator_weights_, Zs, 0.5)
    assert stationarity_residual(est.estimator_weights_, G).max() <= tol
    assert np.all(np.diff(est.cost_history_) <= 1e-12 * np.abs(est.cost_history_[:-1]))


def test_verbose_prints_progress(capsys):
    X, y = _data(seed=4)
    EFW(n_estimators=2, random_state=0, verbose=2).fit(X, y)
    out = capsys.readouterr().out
    assert "[EFW member 0]" in out and "[EFW joint] iter" in out and "residual" in out
    EFW(n_estimators=2, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
