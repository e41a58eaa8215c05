"""Continuous targets for the Relief family: RReliefF and scikit-rebate's continuous-endpoint rule."""

import numpy as np
import pytest
from scipy import stats

from knnweights import SURF, IRelief, MulRel, MultiSURF, Relief, ReliefF
from knnweights.weighters._relief_margins import range_normalize


def _interaction(n=200, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X[:, 0] * X[:, 1] + 0.05 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=10), ReliefF(rank_sigma=4.0), Relief(), SURF(), MultiSURF()],
                         ids=["RReliefF", "RReliefF-rank", "Relief", "SURF", "MultiSURF"])
def test_product_target_ranked_first_where_filters_fail(est):
    X, y = _interaction()
    est.fit(X, y)
    assert est.target_type_ == "continuous"
    assert set(np.argsort(-est.scores_)[:2]) == {0, 1}
    # the univariate filters do not put both interacting features first
    pearson = np.abs([stats.pearsonr(X[:, j], y)[0] for j in range(X.shape[1])])
    spearman = np.abs([stats.spearmanr(X[:, j], y)[0] for j in range(X.shape[1])])
    assert set(np.argsort(-pearson)[:2]) != {0, 1}
    assert set(np.argsort(-spearman)[:2]) != {0, 1}


def _rrelieff_reference(X, y, k, sigma=None):
    """RReliefF by its pseudo code (Robnik-Sikonja & Kononenko 2003, Sec. 2.3), one loop per instance."""
    Z = range_normalize(X)
    n, d = Z.shape
    span = y.max() - y.min()
    ndc, nda, ndcda = 0.0, np.zeros(d), np.zeros(d)
    for i in range(n):
        dist = np.abs(Z - Z[i]).sum(axis=1)
        dist[i] = np.inf
        nn = np.lexsort((np.arange(n), dist))[:k]
        w = np.full(k, 1.0 / k) if sigma is None else np.exp(-((np.arange(1, k + 1) / sigma) ** 2))
        w = w / w.sum()
        for j, wj in zip(nn, w, strict=True):
            dc = abs(y[i] - y[j]) / span
            da = np.abs(Z[i] - Z[j])
            ndc += dc * wj
            nda += da * wj
            ndcda += dc * da * wj
    return ndcda / ndc - (nda - ndcda) / (n - ndc)


@pytest.mark.parametrize("sigma", [None, 3.0])
def test_rrelieff_matches_pseudo_code(sigma):
    X, y = _interaction(n=60, d=5, seed=1)
    got = ReliefF(n_neighbors=7, rank_sigma=sigma).fit(X, y).scores_
    np.testing.assert_allclose(got, _rrelieff_reference(X, y, 7, sigma), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Relief().fit(X, y).scores_, _rrelieff_reference(X, y, 1), rtol=1e-10, atol=1e-12)


def _radius_reference(X, y, rule):
    """scikit-rebate's continuous-endpoint rule, written from its definition, one loop per instance."""
    Z = range_normalize(X)
    n, d = Z.shape
    D = np.abs(Z[:, None, :] - Z[None, :, :]).sum(axis=2)
    s_y = np.std(y, ddof=1)
    W = np.zeros(d)
    for i in range(n):
        others = np.delete(D[i], i)
        T = D.sum() / n**2 if rule == "mean" else others.mean() - others.std() / 2
        near = [j for j in range(n) if j != i and D[i, j] < T]
        hits = [j for j in near if abs(y[i] - y[j]) < s_y]
        misses = [j for j in near if abs(y[i] - y[j]) >= s_y]
        if hits:
            W -= np.abs(Z[i] - Z[hits]).mean(axis=0) / n
        if misses:
            W += np.abs(Z[i] - Z[misses]).mean(axis=0) / n
    return W


@pytest.mark.parametrize("cls,rule", [(SURF, "mean"), (MultiSURF, "mean-std/2")])
def test_radius_rule_matches_definition(cls, rule):
    X, y = _interaction(n=50, d=4, seed=2)
    np.testing.assert_allclose(cls().fit(X, y).scores_, _radius_reference(X, y, rule), rtol=1e-10, atol=1e-12)


def test_radius_rule_matches_skrebate():
    skrebate = pytest.importorskip("skrebate")
    X, y = _interaction(n=40, d=4, seed=3)
    for ours, theirs in ((SURF(), skrebate.SURF(n_features_to_select=4)),
                         (MultiSURF(), skrebate.MultiSURF(n_features_to_select=4))):
        theirs.label_type = "continuous"
        theirs.fit(X, y)
        np.testing.assert_allclose(ours.fit(X, y).scores_, theirs.feature_importances_, rtol=1e-8, atol=1e-10)


def test_target_detection_and_override():
    X, y = _interaction(n=60, d=4)
    counts = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(float)  # integer-valued floats: classes
    assert ReliefF(n_neighbors=3).fit(X, counts).target_type_ == "classes"
    assert ReliefF(target_type="continuous").fit(X, counts).target_type_ == "continuous"
    with pytest.raises(ValueError, match="continuous target.*Relief, ReliefF, SURF, MultiSURF"):
        ReliefF(target_type="classes").fit(X, y)
    with pytest.raises(ValueError, match="defined for class labels only.*ReliefF.*IRelief"):
        MulRel().fit(X, y)
    assert IRelief().fit(X, y).target_type_ == "continuous"
    with pytest.raises(ValueError, match="continuous target"):
        IRelief(target_type="classes").fit(X, y)
    with pytest.raises(ValueError, match="constant"):
        ReliefF(target_type="continuous").fit(X, np.ones(60))
    with pytest.raises(NotImplementedError, match="ties='include'"):
        ReliefF(ties="include").fit(X, y)


def test_classification_scores_unchanged_by_new_options():
    X, y = _interaction(n=80, d=5)
    yc = (y > 0).astype(int)
    for cls in (Relief, ReliefF, SURF, MultiSURF):
        a = cls().fit(X, yc)
        b = cls(pvalues=True, target_type="classes").fit(X, yc)
        np.testing.assert_array_equal(a.scores_, b.scores_)
        assert a.target_type_ == "classes" and not hasattr(a, "pvalues_") and b.pvalues_.shape == (5,)


def test_discrete_features_and_missing_values_continuous_target():
    rng = np.random.default_rng(4)
    n = 120
    X = rng.integers(0, 3, size=(n, 6)).astype(float)
    y = X[:, 0] * (X[:, 1] - 1) + 0.1 * rng.normal(size=n)
    for est in (ReliefF(discrete_features=True), MultiSURF(discrete_features="auto")):
        assert set(np.argsort(-est.fit(X, y).scores_)[:2]) == {0, 1}
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.05] = np.nan
    est = ReliefF(missing="diff", discrete_features=True).fit(Xm, y)
    assert np.all(np.isfinite(est.scores_)) and set(np.argsort(-est.scores_)[:2]) == {0, 1}
    with pytest.raises(NotImplementedError, match="permutation_pvalues"):
        ReliefF(missing="diff", pvalues=True).fit(Xm, y)


@pytest.mark.parametrize("cls", [SURF, MultiSURF, ReliefF])
def test_blocked_equals_one_block(cls):
    from knnweights import config_context

    X, y = _interaction(n=90, d=6, seed=5)
    a = cls(pvalues=True).fit(X, y)
    with config_context(working_memory=0.05):
        b = cls(pvalues=True).fit(X, y)
    np.testing.assert_allclose(a.scores_, b.scores_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(a.pvalues_, b.pvalues_, rtol=1e-8, atol=1e-12)


def test_n_instances_samples_the_continuous_target_and_the_pvalues():
    rng = np.random.RandomState(0)
    X = rng.randn(200, 6)
    yc = X[:, 0] * X[:, 1] + 0.1 * rng.randn(200)
    yb = (X[:, 0] > 0).astype(int)
    full = ReliefF(n_neighbors=5).fit(X, yc).scores_
    sampled = ReliefF(n_neighbors=5, n_instances=20, random_state=0).fit(X, yc).scores_
    assert not np.allclose(full, sampled)  # 20 instances scored, not all 200
    exact = ReliefF(n_neighbors=5, n_instances=200).fit(X, yc).scores_  # m >= n: every instance, exact
    np.testing.assert_allclose(exact, full, rtol=1e-5, atol=1e-8)
    p_full = ReliefF(n_neighbors=5, pvalues=True).fit(X, yb).pvalues_
    p_sampled = ReliefF(n_neighbors=5, n_instances=20, random_state=0, pvalues=True).fit(X, yb).pvalues_
    assert not np.allclose(p_full, p_sampled)
    for est, y in ((MultiSURF(n_instances=20, random_state=0), yc),
                   (MultiSURF(n_instances=20, random_state=0, pvalues=True), yb)):
        with pytest.raises(NotImplementedError, match="n_instances"):
            est.fit(X, y)


def test_univariate_tests_never_return_nan():
    from knnweights.significance import univariate_tests

    rng = np.random.RandomState(1)
    X = rng.randn(30, 4)
    X[:, 2] = 1.0  # constant: statistic 0, p = 1
    out = univariate_tests(X, X[:, 0] + 0.1 * rng.randn(30), continuous=True)
    for stat, p in out.values():
        assert np.all(np.isfinite(stat)) and np.all(np.isfinite(p)) and p[2] == 1.0
    with pytest.raises(ValueError, match="constant"):
        univariate_tests(X, np.ones(30), continuous=True)
    X[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        univariate_tests(X, X[:, 0], continuous=True)


def test_irelief_continuous_reduces_to_the_class_iteration_on_a_0_1_outcome():
    # g = |y_i - y_j| / range is the miss indicator when y is 0 / 1: the graded iteration is
    # Sun's class iteration, computed by different code (NumPy log-softmax vs the compiled kernel)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(90, 6))
    yb = (X[:, 0] - X[:, 2] > 0).astype(int)
    a = IRelief().fit(X, yb)
    b = IRelief(target_type="continuous").fit(X, yb.astype(float))
    assert a.target_type_ == "classes" and b.target_type_ == "continuous"
    np.testing.assert_allclose(b.feature_importances_, a.feature_importances_, rtol=1e-9, atol=1e-12)
    assert a.n_iter_ == b.n_iter_


def test_irelief_continuous_finds_main_effects_and_an_interaction():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 8))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=120)
    w = IRelief().fit(X, y).feature_importances_
    assert list(np.argsort(-w)[:2]) == [0, 1]
    y = X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=120)  # no marginal correlation with either feature
    est = IRelief().fit(X, y)
    assert set(np.argsort(-est.feature_importances_)[:2]) == {2, 3}
    assert est.cost_history_[-1] < est.tol
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.05] = np.nan
    w = IRelief(missing="diff").fit(Xm, y).feature_importances_
    assert np.all(np.isfinite(w)) and set(np.argsort(-w)[:2]) == {2, 3}
