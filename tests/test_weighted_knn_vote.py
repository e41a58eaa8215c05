"""The kNN search and vote (class_votes, majority_class, KNNClassifier), as WeightedKNN, SQP-FW and the
top-m curve use them: one tie rule for equally distant training samples, the lower index first."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from knnweights.classifiers import KNNClassifier, KNNRegressor, WeightedKNN
from knnweights.classifiers._weighted_knn import (
    class_votes,
    majority_class,
    predict_weighted_knn,
    predict_weighted_knn_ks,
)
from knnweights.evaluation.compare import _top_curve


def test_votes_count_the_listed_neighbours_and_a_tie_of_votes_goes_to_the_first_class():
    codes = np.array([1, 0, 1])
    np.testing.assert_array_equal(class_votes(np.array([[2, 0], [1, -1]]), codes, 2), [[0.0, 2.0], [1.0, 0.0]])
    classes = np.array(["a", "b"])
    assert majority_class(class_votes(np.array([[2, 1]]), codes, 2), classes)[0] == "a"  # one vote each


def _tie_problem():
    """A query at 0 with a class-1 sample at distance 0.09 and, at distance 1, a class-1 sample (index 0) and a
    class-0 sample (index 1): the second neighbour is decided by the tie rule."""
    X_train = np.array([[1.0], [-1.0], [0.3], [5.0], [-6.0]])
    codes = np.array([1, 0, 1, 0, 0])
    return X_train, codes, np.zeros((1, 1)), np.ones(1)


def test_equal_distances_go_to_the_lower_training_index():
    X_train, codes, Xq, w = _tie_problem()
    classes = np.array([10, 20])
    # index 0 (class 1) is the second neighbour: two votes for class 1
    assert predict_weighted_knn(X_train, codes, Xq, w, 2, 2, classes)[0] == 20
    assert predict_weighted_knn(X_train, codes, Xq, w, 1, 2, classes)[0] == 20
    assert predict_weighted_knn(X_train, codes, Xq, w, 3, 2, classes)[0] == 20  # both tied samples vote
    # mirrored: the tie's lower index is now the class-0 sample
    assert predict_weighted_knn(-X_train[[1, 0, 2, 3, 4]], codes[[1, 0, 2, 3, 4]], Xq, w, 2, 2, classes)[0] == 10
    idx, _ = KNNClassifier(3).fit(X_train, classes[codes]).kneighbors(Xq)
    np.testing.assert_array_equal(idx, [[2, 0, 1]])


def test_several_k_equal_one_call_per_k_on_ties():
    X_train, codes, Xq, w = _tie_problem()
    classes = np.array([10, 20])
    ks = (1, 2, 3, 4, 5)
    got = predict_weighted_knn_ks(X_train, codes, Xq, w, ks, 2, classes)
    assert [int(p[0]) for p in got] == [20, 20, 20, 10, 10]
    for k, pred in zip(ks, got, strict=True):
        np.testing.assert_array_equal(pred, predict_weighted_knn(X_train, codes, Xq, w, k, 2, classes))


def test_top_curve_breaks_distance_ties_by_training_index():
    X_train, codes, Xq, _ = _tie_problem()
    classes = np.array([10, 20])
    # one feature, k=2: the earlier training index (class 1) is the second neighbour, so class 20 is predicted
    acc = _top_curve(X_train, classes[codes], Xq, np.array([20]), np.zeros(1), [1], 2)
    assert acc == [100.0]


class _Unweighted(BaseEstimator):
    """A stand-in weighter: the features as they are, with a chosen metric."""

    def __init__(self, metric="manhattan"):
        self.metric = metric

    def fit(self, X, y):
        self.metric_ = self.metric
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        return np.asarray(X, dtype=np.float64)


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
def test_weighted_knn_votes_the_k_smallest_exact_distances_ties_by_index(metric):
    # binary features: exact integer distances with many ties, where only the tie rule decides
    rng = np.random.RandomState(3)
    X = rng.randint(0, 2, size=(200, 12)).astype(np.float64)
    y = rng.choice(np.array(["b", "a", "c"]), size=200)
    Q = rng.randint(0, 2, size=(120, 12)).astype(np.float64)
    D = np.abs(Q[:, None, :] - X[None]).sum(axis=2)  # the Hamming distance; its square ranks alike
    order = np.argsort(D, axis=1, kind="stable")
    classes, codes = np.unique(y, return_inverse=True)
    for k in (1, 2, 4, 7):
        clf = WeightedKNN(_Unweighted(metric), n_neighbors=k).fit(X, y)
        ref = majority_class(class_votes(order[:, :k], codes, 3), classes)
        np.testing.assert_array_equal(clf.predict(Q), ref)
        np.testing.assert_array_equal(clf.predict(Q), clf.knn_.predict(Q))
        np.testing.assert_array_equal(clf.predict(Q), classes[np.argmax(clf.predict_proba(Q), axis=1)])


@pytest.mark.parametrize("metric", ["manhattan", "euclidean"])
def test_plain_knn_equals_scikit_learns_without_ties(metric):
    rng = np.random.RandomState(0)
    X, Q = rng.normal(size=(150, 5)), rng.normal(size=(80, 5))
    y = rng.randint(0, 3, size=150)
    for k in (1, 5):
        ours = KNNClassifier(k, metric=metric).fit(X, y)
        sk = KNeighborsClassifier(k, metric=metric).fit(X, y)
        np.testing.assert_array_equal(ours.predict(Q), sk.predict(Q))
        np.testing.assert_allclose(ours.predict_proba(Q), sk.predict_proba(Q))
        dist, idx = sk.kneighbors(Q)
        got_idx, got_dist = ours.kneighbors(Q)
        np.testing.assert_array_equal(got_idx, idx)
        np.testing.assert_allclose(got_dist, dist, rtol=1e-12)
        t = rng.normal(size=150)
        for weights in ("uniform", "distance"):
            np.testing.assert_allclose(KNNRegressor(k, weights=weights, metric=metric).fit(X, t).predict(Q),
                                       KNeighborsRegressor(k, weights=weights, metric=metric).fit(X, t).predict(Q),
                                       rtol=1e-12)


def test_distance_weighted_regression_at_a_training_sample_takes_its_target():
    X = np.array([[0.0], [0.0], [1.0], [2.0]])
    t = np.array([1.0, 3.0, 10.0, 20.0])
    assert KNNRegressor(3, weights="distance").fit(X, t).predict([[0.0]]).tolist() == [2.0]


def test_more_neighbours_than_training_samples_is_an_error():
    with pytest.raises(ValueError, match="n_neighbors <= n_samples_fit"):
        KNNClassifier(5).fit(np.zeros((3, 2)), [0, 1, 0]).predict(np.zeros((1, 2)))
