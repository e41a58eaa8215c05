"""EFW's fast objective and descent (issue 20): the same function, the same iterates, a KKT point."""

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


@pytest.mark.parametrize("neighbors", ["full", "subsample"])
def test_fit_follows_the_plain_projected_gradient_of_efw_objective(neighbors):
    """The lazy-gradient descent on the fast objective takes the steps of the plain one on
    efw_objective (eqs. 1, 2, 4): the same members, the same optimum, the same iteration count."""
    X, y = _data(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a member's own start may stall; step 4 must not
        est = EFW(n_estimators=3, gamma=0.5, neighbors=neighbors, random_state=0, tol=1e-8).fit(X, y)
    Z = base_margins(X, y)
    Zs = [Z[i] if neighbors == "full" else base_margins(X[i], y[i]) for i in est.subsamples_]
    ref = projected_gradient(lambda W: efw_objective(W, Zs, 0.5), est.initial_weights_, 2000, 1e-8)
    assert ref["converged"] and est.residual_ <= 1e-8
    assert ref["nit"] == est.n_iter_
    np.testing.assert_allclose(est.estimator_weights_, ref["x"], atol=1e-9)
    assert est.cost_history_[-1] == pytest.approx(ref["fun"], rel=1e-12)
    # first-order optimality at the returned point, recomputed from scratch
    f, G = efw_objective(est.estimator_weights_, Zs, 0.5)
    assert stationarity_residual(est.estimator_weights_, G).max() <= 1e-8
    assert np.all(np.diff(est.cost_history_) <= 1e-12 * np.abs(est.cost_history_[:-1]))


def test_verbose_prints_progress(capsys):
    X, y = _data(seed=4)
    EFW(n_estimators=2, random_state=0, verbose=2).fit(X, y)
    out = capsys.readouterr().out
    assert "[EFW member 0]" in out and "[EFW joint] iter" in out and "residual" in out
    EFW(n_estimators=2, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
