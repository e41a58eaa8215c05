"""I-RELIEF with the ramp ``diff`` (``IRelief(diff="ramp")``) against plain loops from Sun (2007), eqs. 14-16."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from ramp_reference import ramp_diff_function
from sklearn.exceptions import ConvergenceWarning

from knnweights import IRelief


def _reference(X, y, t_eq, t_diff, sigma, n_iter, disc=(), continuous=False):
    """``n_iter`` I-RELIEF iterations from ``w = 1 / sqrt(d)``, the ramp diff in the distances and the margins:
    ``(w, v, sigma)``; ``sigma=None`` is ``"auto"`` (the median distance to the nearest other sample at a positive
    distance, under the initial weights)."""
    n, d = X.shape
    diff = ramp_diff_function(X, t_eq, t_diff, disc)
    A = [[diff(i, j) for j in range(n)] for i in range(n)]
    w = np.full(d, 1.0 / np.sqrt(d))
    if sigma is None:
        sigma = float(np.median([min(float(w @ A[i][j]) for j in range(n) if j != i and float(w @ A[i][j]) > 0)
                                 for i in range(n)]))
    span = np.ptp(y)
    v = np.zeros(d)
    for _ in range(n_iter):
        v = np.zeros(d)
        for i in range(n):
            others = [j for j in range(n) if j != i]
            K = {j: np.exp(-float(w @ A[i][j]) / sigma) for j in others}
            if continuous:  # a pair is a miss with weight g and a hit with weight 1 - g
                g = {j: abs(y[i] - y[j]) / span for j in others}
            else:
                g = {j: float(y[j] != y[i]) for j in others}
            miss_mass = sum(g[j] * K[j] for j in others)
            hit_mass = sum((1 - g[j]) * K[j] for j in others)
            outlier = miss_mass / (miss_mass + hit_mass)
            z = sum(g[j] * K[j] / miss_mass * A[i][j] for j in others) - sum(
                (1 - g[j]) * K[j] / hit_mass * A[i][j] for j in others)
            v += (1 - outlier) * z
        v /= n
        pos = np.maximum(v, 0.0)
        w = pos / np.linalg.norm(pos)
    return w, v, sigma


def _data(continuous=False, disc=()):
    rs = np.random.RandomState(1)
    X = rs.normal(size=(30, 4))
    y = rs.randint(0, 3, size=30)
    X[:, 0] += y
    for f in disc:
        X[:, f] = rs.randint(0, 3, size=30)
    if continuous:
        y = X[:, 0] + 0.5 * rs.normal(size=30)
    return X, y


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a few iterations only
        return IRelief(diff="ramp", **params).fit(X, y)


@pytest.mark.parametrize("ramp", [(0.04, 0.1), (0.1, 0.5)])
@pytest.mark.parametrize("n_iter", [1, 3])
def test_irelief_ramp_iterations_match_reference(ramp, n_iter):
    X, y = _data()
    est = _fit(X, y, ramp=ramp, sigma=0.7, max_iter=n_iter, tol=0.0)
    w, v, _ = _reference(X, y, *ramp, 0.7, n_iter)
    assert est.n_iter_ == n_iter
    assert_allclose(est.feature_importances_, w, rtol=1e-10, atol=1e-14)
    assert_allclose(est.scores_, v, rtol=1e-10, atol=1e-14)


def test_irelief_ramp_auto_sigma_and_discrete_feature():
    X, y = _data(disc=(3,))
    est = _fit(X, y, ramp=(0.05, 0.3), max_iter=2, tol=0.0, discrete_features=[3])
    w, v, sigma = _reference(X, y, 0.05, 0.3, None, 2, disc=(3,))
    assert_allclose(est.sigma_, sigma, rtol=1e-12)
    assert_allclose(est.feature_importances_, w, rtol=1e-10, atol=1e-14)
    assert_allclose(est.scores_, v, rtol=1e-10, atol=1e-14)


def test_irelief_ramp_continuous_target_matches_reference():
    X, y = _data(continuous=True)
    est = _fit(X, y, ramp=(0.04, 0.2), sigma=0.5, max_iter=2, tol=0.0)
    assert est.target_type_ == "continuous"
    w, v, _ = _reference(X, y, 0.04, 0.2, 0.5, 2, continuous=True)
    assert_allclose(est.feature_importances_, w, rtol=1e-10, atol=1e-14)
    assert_allclose(est.scores_, v, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("continuous", [False, True])
def test_irelief_ramp_0_1_is_linear(continuous):
    """``ramp=(0, 1)`` is the linear ``diff`` on range-normalised data: the same fixed point."""
    X, y = _data(continuous=continuous)
    lin = IRelief().fit(X, y)
    ramp = _fit(X, y, ramp=(0.0, 1.0))
    assert ramp.n_iter_ == lin.n_iter_
    assert_allclose(ramp.sigma_, lin.sigma_, rtol=1e-12)
    assert_allclose(ramp.feature_importances_, lin.feature_importances_, rtol=1e-9, atol=1e-12)


def test_irelief_ramp_refusals():
    X, y = _data()
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(NotImplementedError, match="missing"):
        IRelief(diff="ramp", missing="diff").fit(Xn, y)
    with pytest.raises(ValueError, match="genotype_diff"):
        IRelief(diff="ramp", genotype_diff="additive").fit(X, y)
    with pytest.raises(ValueError, match="t_eq"):
        IRelief(diff="ramp", ramp=(0.3, 0.1)).fit(X, y)
