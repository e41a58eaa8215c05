"""The Relief family's p-values with the ramp ``diff`` (``diff="ramp", pvalues=True``) against references
written from the definitions: the pair differences are the ramp's, the pairs are found on the ramp distances."""

import itertools
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from pair_reference import default_pairs
from ramp_reference import ramp_diff_function
from scipy import stats
from sklearn.base import clone

from knnweights import SURF, MultiSURF, Relief, ReliefF
from knnweights.significance import quadratic_sf


def _ramp_tensor(X, t_eq, t_diff, disc=()):
    """``A[i, j, f]``: the ramp diff of every pair, from the plain-loop reference."""
    n = X.shape[0]
    diff = ramp_diff_function(X, t_eq, t_diff, disc)
    return np.array([[diff(i, j) for j in range(n)] for i in range(n)])


def _outcome_matrix(y, kind):
    y = np.asarray(y, dtype=float)
    return np.abs(y[:, None] - y[None, :]) / np.ptp(y) if kind == "continuous" else (y[:, None] != y[None, :]) * 1.0


# (estimator, the rule of its default p-value pairs, their number per sample for two classes / a continuous y)
RULES = [(ReliefF(n_neighbors=2), "knn", 4, 2), (Relief(), "knn", 2, 1), (SURF(), "surf", 0, 0),
         (MultiSURF(), "multisurf", 0, 0)]


@pytest.mark.parametrize("disc", [(), (2,)], ids=["continuous", "discrete"])
@pytest.mark.parametrize("kind", ["classes", "continuous"])
@pytest.mark.parametrize("est, rule, k_classes, k_cont", RULES, ids=["ReliefF", "Relief", "SURF", "MultiSURF"])
def test_ramp_pvalues_from_every_permutation(est, rule, k_classes, k_cont, kind, disc):
    """Every permutation of y on 8 samples, the ramp pairs held fixed: ``S = sum_ij C_ij G_pi(i)pi(j)`` with
    ``C_ij = (m_ij + m_ji) / 2 (a_ij - abar)``, ``a`` the ramp diff; its mean, variance, third moment and the
    linear (Hajek) part give the reference p-value, which ``pvalues_`` matches."""
    rng = np.random.default_rng(5)
    n, d, ramp = 8, 3, (0.1, 0.6)
    X = rng.normal(size=(n, d))
    if disc:
        X[:, 2] = rng.integers(0, 3, n)
    y = rng.normal(size=n) if kind == "continuous" else np.array([0, 1, 0, 1, 1, 0, 0, 1])
    A = _ramp_tensor(X, *ramp, disc)
    assert 0 < np.mean(A[..., :2] == 0) < 0.5 and 0 < np.mean(A[..., :2] == 1) < 0.5  # both clips are met
    M = default_pairs(A.sum(axis=2), rule, k_classes if kind == "classes" else k_cont)
    W = np.where(M[:, :, None], A - A[M].mean(axis=0), 0.0)
    C = (W + W.transpose(1, 0, 2)) / 2
    perms = np.array(list(itertools.permutations(range(n))))
    G = _outcome_matrix(y, kind)
    S = np.einsum("bij,ijf->bf", np.stack([G[np.ix_(p, p)] for p in perms]), C)
    mean, var = S.mean(axis=0), S.var(axis=0)
    third = ((S - mean) ** 3).mean(axis=0)
    proj = np.zeros_like(S) - (n - 1) * mean  # sum_i E[S | pi(i)] - (n - 1) E[S]
    for i in range(n):
        for t in range(n):
            sel = perms[:, i] == t
            proj[sel] += S[sel].mean(axis=0)
    ok = np.ptp(A[M], axis=0) > 0  # a feature whose pair differences are all equal: p = 1
    var = np.where(ok, var, 1.0)
    lin, lin3 = proj.var(axis=0) / var, ((proj - proj.mean(axis=0)) ** 3).mean(axis=0) / var**1.5
    ref = np.where(ok, quadratic_sf((S[0] - mean) / np.sqrt(var), third / var**1.5, lin, lin3), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem: clamped neighbours
        got = clone(est).set_params(diff="ramp", ramp=ramp, pvalues=True, discrete_features=list(disc) or None).fit(
            X, y).pvalues_
    assert_allclose(got, ref, rtol=1e-6)


def _fit_pvalues(est, X, y, **fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **fit).pvalues_


@pytest.mark.parametrize("method", [True, "pseudo-t"])
@pytest.mark.parametrize("kind", ["classes", "continuous"])
@pytest.mark.parametrize("est", [ReliefF(n_neighbors=5), Relief(), SURF(), MultiSURF()],
                         ids=["ReliefF", "Relief", "SURF", "MultiSURF"])
def test_ramp_0_1_pvalues_are_the_linear_ones(est, kind, method):
    """``ramp=(0, 1)`` is the linear ``diff`` on range-normalised data: the same pairs, the same p-values."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 4))
    y = X[:, 0] + rng.normal(size=50) if kind == "continuous" else (X[:, 0] + rng.normal(size=50) > 0).astype(int)
    lin = _fit_pvalues(clone(est).set_params(pvalues=method), X, y)
    est = clone(est).set_params(pvalues=method, diff="ramp", ramp=(0.0, 1.0))
    assert_allclose(_fit_pvalues(est, X, y), lin, rtol=1e-12, atol=1e-15)
    assert not np.allclose(_fit_pvalues(est.set_params(ramp=(0.1, 0.3)), X, y), lin)


@pytest.mark.parametrize("with_neighbors", [False, True])
def test_ramp_0_1_covariate_pvalues_are_the_linear_ones(with_neighbors):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    c = rng.normal(size=50)
    y = X[:, 0] + c + rng.normal(size=50)
    fit = {"covariates": c, "neighbors_with_covariates": with_neighbors}
    for method in (True, "pseudo-t"):
        lin = _fit_pvalues(MultiSURF(pvalues=method, random_state=0), X, y, **fit)
        ramp = _fit_pvalues(MultiSURF(pvalues=method, random_state=0, diff="ramp", ramp=(0.0, 1.0)), X, y, **fit)
        assert_allclose(ramp, lin, rtol=1e-12, atol=1e-15)


def test_ramp_covariate_pseudo_t_is_the_pair_regression():
    """NPDR's covariate-adjusted pseudo t with the ramp: over each sample's 3 nearest (ramp distance) the
    ramp diff regressed on ``[1, |c_i - c_j| / range c, |y_i - y_j| / range y]``, the last coefficient's t."""
    rng = np.random.default_rng(4)
    n, ramp = 30, (0.05, 0.3)
    X = rng.normal(size=(n, 3))
    c = rng.normal(size=n)
    y = X[:, 0] + c + 0.5 * rng.normal(size=n)
    got = _fit_pvalues(ReliefF(n_neighbors=3, pvalues="pseudo-t", diff="ramp", ramp=ramp), X, y, covariates=c)
    A = _ramp_tensor(X, *ramp)
    M = default_pairs(A.sum(axis=2), "knn", 3)
    src, dst = np.nonzero(M)
    Z = np.column_stack([np.ones(src.size), np.abs(c[src] - c[dst]) / np.ptp(c), np.abs(y[src] - y[dst]) / np.ptp(y)])
    df = src.size - Z.shape[1]
    ref = []
    for f in range(3):
        a = A[src, dst, f]
        beta, rss = np.linalg.lstsq(Z, a, rcond=None)[:2]
        se = np.sqrt(rss[0] / df * np.linalg.inv(Z.T @ Z)[2, 2])
        ref.append(stats.t.sf(beta[2] / se, df))
    assert_allclose(got, ref, rtol=1e-8)


def test_ramp_pair_differences_are_the_weights_diff():
    """The pair kernels' differences (continuous and discrete features) are the ramp diff of the weights."""
    from knnweights.engine import pair_kernels
    from knnweights.significance import PairMoments
    from knnweights.weighters._relief_margins import RampDiff

    rng = np.random.default_rng(6)
    X = rng.normal(size=(20, 4))
    X[:, 1] = rng.integers(0, 4, 20)
    ramp, disc = (0.1, 0.4), (1,)
    m = PairMoments(RampDiff(X, *ramp, np.isin(np.arange(4), disc)), feature_block=3)
    src, dst = np.repeat(np.arange(20), 20), np.tile(np.arange(20), 20)
    A = np.empty((src.size, 4))
    for f0, f1, cols in m._blocks():
        out = np.empty((src.size, f1 - f0))
        pair_kernels.pair_diffs(*cols, src, dst, out)
        A[:, f0:f1] = out
    assert_allclose(A.reshape(20, 20, 4), _ramp_tensor(X, *ramp, disc), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind", ["classes", "continuous"])
@pytest.mark.parametrize("est", [ReliefF(n_neighbors=10), MultiSURF()], ids=["ReliefF", "MultiSURF"])
def test_ramp_null_pvalues_uniform(est, kind):
    """Noise features, an outcome unrelated to them: the ramp p-values are uniform (the reference is exact)."""
    out = []
    for rep in range(6):
        rng = np.random.default_rng(200 + rep)
        n, d = (50, 25) if rep % 2 else (120, 15)
        X = rng.normal(size=(n, d))
        y = rng.integers(0, 2, n) if kind == "classes" else rng.normal(size=n)
        out.append(_fit_pvalues(clone(est).set_params(diff="ramp", pvalues=True), X, y))
    p = np.concatenate(out)
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert np.mean(p < 0.05) <= 0.1


def test_ramp_feature_null_is_refused():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 3))
    y = rng.integers(0, 2, 30)
    with pytest.raises(NotImplementedError, match="null='outcome'"):
        MultiSURF(pvalues=True, diff="ramp", pvalue_null="feature").fit(X, y)
