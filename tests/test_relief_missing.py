"""Relief family with missing values (missing="diff"): the definition, recovery, the error path."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import SURF, IRelief, MultiSURF, Relief, ReliefF


def _brute_diff(X, y, disc):
    """diff_f(i, j) for every pair and feature, straight from Kononenko's definition (loops)."""
    n, d = X.shape
    out = np.zeros((n, n, d))
    for f in range(d):
        col = X[:, f]
        known = ~np.isnan(col)
        rng = np.ptp(col[known]) if not disc[f] else 1.0
        rng = rng if rng > 0 else 1.0

        def dist_of(c, col=col, known=known):  # known values of class c (all known values if it has none)
            v = col[known & (y == c)]
            return v if v.size else col[known]

        for i in range(n):
            for j in range(n):
                a, b = col[i], col[j]
                if known[i] and known[j]:
                    out[i, j, f] = float(a != b) if disc[f] else abs(a - b) / rng
                elif known[i] or known[j]:
                    val, other = (a, y[j]) if known[i] else (b, y[i])
                    v = dist_of(other)
                    out[i, j, f] = np.mean(v != val) if disc[f] else np.mean(np.abs(val - v)) / rng
                else:
                    v1, v2 = dist_of(y[i]), dist_of(y[j])
                    if disc[f]:
                        out[i, j, f] = np.mean(v1[:, None] != v2[None, :])
                    else:
                        out[i, j, f] = np.mean(np.abs(v1[:, None] - v2[None, :])) / rng
    return out


def _brute_relieff(X, y, k, disc, per_class=True):
    n, d = X.shape
    diff = _brute_diff(X, y, disc)
    D = diff.sum(-1)
    np.fill_diagonal(D, np.inf)
    classes = np.unique(y)
    prior = np.array([np.mean(y == c) for c in classes])
    w = np.zeros(d)
    for i in range(n):
        ci = np.searchsorted(classes, y[i])
        if not per_class:
            h = np.lexsort((np.arange(n), np.where(y == y[i], D[i], np.inf)))[0]
            m = np.lexsort((np.arange(n), np.where(y != y[i], D[i], np.inf)))[0]
            w += diff[i, m] - diff[i, h]
            continue
        for c, cls in enumerate(classes):
            nn = np.lexsort((np.arange(n), np.where(y == cls, D[i], np.inf)))[:k]
            contrib = diff[i, nn].mean(0)
            w += -contrib if c == ci else prior[c] / (1 - prior[ci]) * contrib
    return w / n


def _with_missing(X, share, seed):
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape) < share] = np.nan
    return X


@pytest.mark.parametrize("share", [0.15, 0.4])  # sparse and dense products for the unknown entries
@pytest.mark.parametrize("disc_cols", [[], [1, 3]])
def test_missing_diff_matches_brute_force_definition(disc_cols, share):
    rng = np.random.default_rng(0)
    n, d = 36, 5
    X = rng.normal(size=(n, d))
    X[:, disc_cols] = rng.integers(0, 3, size=(n, len(disc_cols)))
    y = rng.integers(0, 3, n)
    X = _with_missing(X, share, 1)
    X[:4, 2] = np.nan  # both-unknown pairs too
    disc = np.zeros(d, bool)
    disc[disc_cols] = True
    ref = _brute_relieff(X, y, 3, disc)
    ours = ReliefF(n_neighbors=3, missing="diff", discrete_features=disc_cols or None).fit(X, y).scores_
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    ref1 = _brute_relieff(X, y, 1, disc, per_class=False)
    ours1 = Relief(missing="diff", discrete_features=disc_cols or None).fit(X, y).scores_
    np.testing.assert_allclose(ours1, ref1, atol=1e-12)


@pytest.mark.parametrize("share", [0.1, 0.4])
def test_missing_diff_surf_matches_brute_force_definition(share):
    rng = np.random.default_rng(2)
    n, d = 40, 4
    X = _with_missing(rng.normal(size=(n, d)), share, 3)
    y = rng.integers(0, 2, n)
    diff = _brute_diff(X, y, np.zeros(d, bool))
    D = diff.sum(-1)
    np.fill_diagonal(D, 0.0)  # a sample is at distance 0 from itself
    T = D.sum() / n**2  # SURF: mean over the n x n matrix, zero diagonal included
    ref = np.zeros(d)
    for i in range(n):
        near = (D[i] < T) & (np.arange(n) != i)
        hits, misses = near & (y == y[i]), near & (y != y[i])
        if hits.any():
            ref -= diff[i, hits].mean(0)
        if misses.any():
            ref += diff[i, misses].mean(0)
    est = SURF(missing="diff").fit(X, y)
    np.testing.assert_allclose(est.threshold_, T, rtol=1e-12)
    np.testing.assert_allclose(est.scores_, ref / n, atol=1e-12)


def test_missing_values_refused_by_default_with_the_column_named():
    X = np.random.default_rng(0).normal(size=(20, 3))
    X[4, 1] = np.nan
    y = np.arange(20) % 2
    for est in (Relief(), ReliefF(n_neighbors=3), SURF(), MultiSURF(), IRelief(max_iter=2)):
        with pytest.raises(ValueError, match="NaN in column 1"):
            est.fit(X, y)


def test_infinity_still_refused_with_missing_diff():
    X = np.random.default_rng(0).normal(size=(20, 3))
    X[4, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ReliefF(n_neighbors=3, missing="diff").fit(X, np.arange(20) % 2)


@pytest.mark.parametrize("est", [Relief(missing="diff"), ReliefF(n_neighbors=5, missing="diff"),
                                 SURF(missing="diff"), MultiSURF(missing="diff"),
                                 IRelief(missing="diff", max_iter=20)], ids=lambda e: type(e).__name__)
def test_missing_diff_recovers_informative_features_and_ignores_noise(est):
    rng = np.random.default_rng(4)
    n, d = 300, 12
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    w = est.fit(_with_missing(X, 0.1, 5), y).feature_importances_
    assert set(np.argsort(-w)[:2]) == {0, 1}, w


def test_all_missing_column_gets_zero_weight():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    X[:, 3] = np.nan
    w = ReliefF(n_neighbors=5, missing="diff").fit(X, y).scores_
    assert w[3] == 0.0 and np.argmax(w) == 0


@parametrize_with_checks([ReliefF(n_neighbors=2, missing="diff", discrete_features="auto"),
                          Relief(missing="diff", ties="include"), SURF(missing="diff"),
                          IRelief(missing="diff", max_iter=3)])
def test_sklearn_compatible_with_missing_diff(estimator, check):
    """allow_nan is declared only with missing="diff": sklearn's checks then feed NaN to fit and transform."""
    assert estimator.__sklearn_tags__().input_tags.allow_nan
    check(estimator)


def test_transform_keeps_nan_with_missing_diff():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    X[3, 1] = np.nan
    Xt = ReliefF(n_neighbors=3, missing="diff").fit(X, y).transform(X)
    assert np.isnan(Xt[3, 1]) and np.isfinite(np.delete(Xt.ravel(), 3 * 3 + 1)).all()


def test_missing_diff_irelief_matches_brute_force_two_iterations():
    """Two I-RELIEF updates (the second under non-uniform weights) from the brute-force diff."""
    rng = np.random.default_rng(8)
    n, d, sigma = 30, 4, 0.4
    X = rng.normal(size=(n, d))
    X[:, 3] = rng.integers(0, 3, n)
    y = rng.integers(0, 2, n)
    X = _with_missing(X, 0.15, 9)
    disc = np.array([False, False, False, True])
    diff = _brute_diff(X, y, disc)
    w = np.full(d, 1 / np.sqrt(d))
    for _ in range(2):
        D = diff @ w
        v = np.zeros(d)
        for i in range(n):
            others = np.arange(n) != i
            hit, miss = others & (y == y[i]), others & (y != y[i])
            k = np.exp(-D[i] / sigma)
            a, b = np.where(hit, k, 0) / k[hit].sum(), np.where(miss, k, 0) / k[miss].sum()
            inlier = 1 - k[miss].sum() / k[others].sum()
            v += inlier * (b @ diff[i] - a @ diff[i])
        v /= n
        w = np.maximum(v, 0) / np.linalg.norm(np.maximum(v, 0))
    est = IRelief(sigma=sigma, max_iter=2, tol=0, missing="diff", discrete_features=[3]).fit(X, y)
    np.testing.assert_allclose(est.scores_, v, atol=1e-12)
    np.testing.assert_allclose(est.feature_importances_, w, atol=1e-12)
