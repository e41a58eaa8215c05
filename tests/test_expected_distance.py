"""I-M4E's expected-distance rule (eq. 10)."""

import warnings

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import IM4E, config_context
from knnweights.classifiers import ExpectedDistanceClassifier


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    y = np.array(["a", "b", "c"])[(X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)]
    Xq = rng.normal(size=(25, 6))
    w = rng.uniform(0.1, 1.0, size=6)
    return X, y, Xq, w / w.sum()


def test_psi_matches_bruteforce_eq10(data):
    X, y, Xq, w = data
    sigma = 0.3
    clf = ExpectedDistanceClassifier(sigma=sigma, weights=w).fit(X, y)
    psi = clf.expected_distances(Xq)
    D = np.abs(Xq[:, None, :] - X[None, :, :]) @ w
    for c, label in enumerate(clf.classes_):
        Dc = D[:, y == label]
        P = softmax(-Dc / sigma, axis=1)
        np.testing.assert_allclose(psi[:, c], np.sum(P * Dc, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xq), clf.classes_[np.argmin(psi, axis=1)])


def test_small_sigma_is_weighted_1nn(data):
    X, y, Xq, w = data
    clf = ExpectedDistanceClassifier(sigma=1e-9, weights=w).fit(X, y)
    knn = KNeighborsClassifier(n_neighbors=1, metric="manhattan").fit(X * w, y)
    np.testing.assert_array_equal(clf.predict(Xq), knn.predict(Xq * w))
    # and Psi_c is the distance to the nearest sample of class c, no overflow at tiny sigma
    D = np.abs(Xq[:, None, :] - X[None, :, :]) @ w
    nearest = np.column_stack([D[:, y == c].min(axis=1) for c in clf.classes_])
    np.testing.assert_allclose(clf.expected_distances(Xq), nearest, rtol=1e-9)


def test_large_sigma_is_mean_distance_to_each_class(data):
    X, y, Xq, w = data
    clf = ExpectedDistanceClassifier(sigma=1e9, weights=w).fit(X, y)
    D = np.abs(Xq[:, None, :] - X[None, :, :]) @ w
    mean = np.column_stack([D[:, y == c].mean(axis=1) for c in clf.classes_])
    np.testing.assert_allclose(clf.expected_distances(Xq), mean, rtol=1e-6)


def test_weights_from_weighter_fitted_or_not(data):
    X, y, Xq, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        unfitted = IM4E(sigma=0.5, max_iter=20, random_state=0)
        clf = ExpectedDistanceClassifier(sigma=0.5, weights=unfitted).fit(X, y)
        assert not hasattr(unfitted, "feature_importances_")  # a clone was fitted
        fitted = IM4E(sigma=0.5, max_iter=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.weights_, fitted.feature_importances_)
    clf2 = ExpectedDistanceClassifier(sigma=0.5, weights=fitted).fit(X[:30], y[:30])
    assert clf2.weighter_ is fitted  # used as is, not refitted on the new data
    ref = ExpectedDistanceClassifier(sigma=0.5, weights=fitted.feature_importances_).fit(X[:30], y[:30])
    np.testing.assert_array_equal(clf2.predict(Xq), ref.predict(Xq))


def test_uniform_default_and_weight_validation(data):
    X, y, Xq, _ = data
    a = ExpectedDistanceClassifier(sigma=0.4).fit(X, y).expected_distances(Xq)
    b = ExpectedDistanceClassifier(sigma=0.4, weights=np.ones(6)).fit(X, y).expected_distances(Xq)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="shape"):
        ExpectedDistanceClassifier(weights=np.ones(5)).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        ExpectedDistanceClassifier(weights=-np.ones(6)).fit(X, y)


def test_chunked_queries_give_the_same_answer(data):
    X, y, Xq, w = data
    clf = ExpectedDistanceClassifier(sigma=0.2, weights=w).fit(X, y)
    full = clf.expected_distances(Xq)
    with config_context(working_memory=0.0005):  # one query row per block
        np.testing.assert_allclose(clf.expected_distances(Xq), full, rtol=1e-12)
        np.testing.assert_array_equal(clf.predict(Xq), clf.classes_[np.argmin(full, axis=1)])


@parametrize_with_checks([ExpectedDistanceClassifier()])
def test_sklearn_compatible(estimator, check):
    check(estimator)
