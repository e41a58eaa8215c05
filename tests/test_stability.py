"""Stability (EFW paper eqs. 18, 19) and the accuracy-against-top-features curve."""

import joblib
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from knnweights import Relief
from knnweights.evaluation.stability import (
    rank_features,
    spearman_similarity,
    stability,
    stability_of,
    subsample_rankings,
)
from knnweights.evaluation.topfeatures import feature_order, top_feature_curve


def test_hand_computed_example():
    R = np.array([[1, 2, 3, 4], [2, 1, 3, 4], [4, 3, 2, 1]])
    # eq. 19: 1 - 6 sum d^2 / (d (d^2 - 1)), d = 4 -> denominators 60
    # pairs: sum d^2 = 2, 20, 18 -> 0.8, -1.0, -0.8; mean over the 3 pairs = -1/3
    assert stability(R) == pytest.approx(-1 / 3)
    assert stability(R[:2]) == pytest.approx(0.8)


def test_identical_rankings_give_one():
    r = rank_features(np.random.RandomState(0).rand(7))
    assert stability(np.vstack([r] * 5)) == pytest.approx(1.0)


def test_ranks_largest_weight_first_with_average_ties():
    np.testing.assert_array_equal(rank_features([0.5, 0.1, 0.9, 0.1]), [2, 3.5, 1, 3.5])


def test_matches_scipy_spearman_with_ties():
    rng = np.random.RandomState(1)
    W = rng.randint(0, 4, size=(5, 12)).astype(float)  # many ties
    ref = np.mean([spearmanr(W[i], W[j]).statistic for i in range(5) for j in range(i + 1, 5)])
    assert stability(weights=W) == pytest.approx(ref)
    assert spearman_similarity(rank_features(W[0]), rank_features(W[1])) == pytest.approx(
        spearmanr(W[0], W[1]).statistic)


def test_all_tied_ranking_has_no_order():
    assert spearman_similarity([2, 2, 2], [2, 2, 2]) == 1.0
    assert spearman_similarity([2, 2, 2], [1, 2, 3]) == 0.0


def test_needs_exactly_one_input():
    with pytest.raises(ValueError, match="exactly one"):
        stability()
    with pytest.raises(ValueError, match="exactly one"):
        stability(np.eye(3), weights=np.eye(3))


def _data(n=60, d=8, seed=0):
    rng = np.random.RandomState(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.rand(n, d)
    X[:, :2] += 0.7 * y[:, None]
    return X, y


def test_weighter_stability_equals_manual_refits_and_parallel():
    X, y = _data()
    splits = StratifiedShuffleSplit(n_splits=4, train_size=0.9, test_size=None, random_state=5)
    W = np.vstack([Relief().fit(X[tr], y[tr]).feature_importances_ for tr, _ in splits.split(X, y)])
    R = subsample_rankings(Relief(), X, y, n_subsamples=4, random_state=5)
    np.testing.assert_array_equal(R, rank_features(W))
    s1 = stability_of(Relief(), X, y, n_subsamples=4, random_state=5)
    with joblib.parallel_backend("threading"):  # process workers cost seconds to start
        s2 = stability(weighter=Relief(), X=X, y=y, n_subsamples=4, random_state=5, n_jobs=2)
    assert s1 == pytest.approx(s2) == pytest.approx(stability(weights=W))
    assert 0 < s1 < 1


def test_top_feature_curve_fits_weighter_on_training_folds_only():
    X, y = _data(n=50, d=6)
    grid = [1, 2, 6, 10]
    res = top_feature_curve(Relief(), X, y, grid, cv=5, random_state=0)
    np.testing.assert_array_equal(res.n_features, [1, 2, 6, 6])
    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)
    for f, (tr, te) in enumerate(folds):
        sc = MinMaxScaler().fit(X[tr])
        w = Relief().fit(sc.transform(X[tr]), y[tr]).feature_importances_  # training part only
        np.testing.assert_allclose(res.weights[f], w)
        top = feature_order(w)[:2]
        acc = SVC(kernel="linear", C=1.0).fit(sc.transform(X[tr])[:, top], y[tr]).score(
            sc.transform(X[te])[:, top], y[te])
        assert res.scores[f, 1] == pytest.approx(acc)
    # informative top-2 beat the single top feature + noise
    assert res.mean[1] >= res.mean[0] - 0.05
    np.testing.assert_allclose(res.mean, res.scores.mean(axis=0))


def test_top_feature_curve_parallel_same_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from knnweights.plotting.topfeatures import plot_top_feature_curves

    X, y = _data(n=40, d=5)
    a = top_feature_curve(Relief(), X, y, [1, 3], cv=4, random_state=1, classifier=clone(SVC(kernel="linear")))
    with joblib.parallel_backend("threading"):
        b = top_feature_curve(Relief(), X, y, [1, 3], cv=4, random_state=1, n_jobs=2)
    np.testing.assert_allclose(a.scores, b.scores)
    path = tmp_path / "top.png"
    ax = plot_top_feature_curves({"Relief": a}, title="toy", path=path)
    assert path.stat().st_size > 1000
    assert ax.get_xlabel() and ax.get_ylabel()
