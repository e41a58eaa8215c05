"""The kNN vote (class_votes, majority_class) and its tie rules, as WeightedKNN, SQP-FW and the top-m curve use it."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from knnweights.classifiers import WeightedKNN
from knnweights.classifiers._weighted_knn import (
    class_votes,
    majority_class,
    predict_weighted_knn,
    predict_weighted_knn_ks,
)
from knnweights.evaluation.compare import _top_curve


def test_tie_rules_decide_between_equally_distant_candidates():
    # one query; the nearest candidate is of class 1, then two at distance 1.0: class 1 in an earlier column
    # than class 0. With k=2 "order" takes the earlier column (2 votes for class 1), "class" the lower class
    # (one vote each, and a tie of votes goes to the lowest class)
    dist = np.array([[1.0, 1.0, 0.5]])
    codes = np.array([1, 0, 1])
    by_order = class_votes(dist, codes, 2, 2, ties="order")
    by_class = class_votes(dist, codes, 2, 2, ties="class")
    np.testing.assert_array_equal(by_order, [[0.0, 2.0]])
    np.testing.assert_array_equal(by_class, [[1.0, 1.0]])
    classes = np.array(["a", "b"])
    assert majority_class(by_order, classes)[0] == "b"
    assert majority_class(by_class, classes)[0] == "a"
    # a tie of votes goes to the first class even when the nearest neighbour is of another one
    assert majority_class(class_votes(np.array([[0.2, 0.1]]), np.array([0, 1]), 2, 2), classes)[0] == "a"
    # per-query codes (a search's neighbour lists) and k = every candidate
    np.testing.assert_array_equal(class_votes(np.array([[0.0, 0.0, 0.0]]), np.array([[2, 2, 0]]), 3, 3), [[1, 0, 2]])
    with pytest.raises(ValueError, match="ties"):
        class_votes(dist, codes, 2, 2, ties="index")


def _tie_problem():
    """A query at 0 with a class-1 sample at distance 0.09 and, at distance 1, a class-1 sample (index 0) and a
    class-0 sample (index 1): the second neighbour is decided by the tie rule."""
    X_train = np.array([[1.0], [-1.0], [0.3], [5.0], [-6.0]])
    codes = np.array([1, 0, 1, 0, 0])
    return X_train, codes, np.zeros((1, 1)), np.ones(1)


def test_sqpfw_prediction_sends_equal_distances_to_the_lower_class():
    X_train, codes, Xq, w = _tie_problem()
    classes = np.array([10, 20])
    # SQP-FW's rule: index 1 (class 0) is the second neighbour, one vote each, the tie of votes to class 0
    assert predict_weighted_knn(X_train, codes, Xq, w, 2, 2, classes)[0] == 10
    # the training-index rule on the same distances takes index 0 (class 1): two votes for class 1
    dist = ((Xq - X_train.T) ** 2) * w
    assert majority_class(class_votes(dist, codes, 2, 2, ties="order"), classes)[0] == 20
    assert predict_weighted_knn(X_train, codes, Xq, w, 1, 2, classes)[0] == 20
    assert predict_weighted_knn(X_train, codes, Xq, w, 3, 2, classes)[0] == 20  # both tied samples vote


def test_several_k_equal_one_call_per_k_on_ties():
    X_train, codes, Xq, w = _tie_problem()
    classes = np.array([10, 20])
    ks = (1, 2, 3, 4, 5)
    got = predict_weighted_knn_ks(X_train, codes, Xq, w, ks, 2, classes)
    assert [int(p[0]) for p in got] == [20, 10, 20, 10, 10]
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
@pytest.mark.parametrize("d", [4, 24])  # scikit-learn's tree search and its brute-force search
def test_weighted_knn_predictions_are_scikit_learns_on_tied_data(metric, d):
    # binary features: many equal distances, where the neighbour search's own order and the vote rule decide
    rng = np.random.RandomState(d)
    X = rng.randint(0, 2, size=(200, d)).astype(np.float64)
    y = rng.choice(np.array(["b", "a", "c"]), size=200)
    Q = rng.randint(0, 2, size=(120, d)).astype(np.float64)
    for k in (1, 2, 4, 7):
        clf = WeightedKNN(_Unweighted(metric), n_neighbors=k).fit(X, y)
        pred = clf.predict(Q)
        np.testing.assert_array_equal(pred, clf.knn_.predict(Q))
        proba = clf.predict_proba(Q)
        np.testing.assert_array_equal(pred, clf.classes_[np.argmax(proba, axis=1)])
