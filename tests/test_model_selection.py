"""Choosing SQP-FW's theta and soft MDM's C by the weighted kNN they feed."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from knnweights.classifiers import WeightedKNN, predict_weighted_knn
from knnweights.evaluation.model_selection import select_C, select_theta, sqpfw_path_errors
from knnweights.weighters import MDM, SQPFW


def _sqpfw_data(n=60, d=4, seed=9):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    score = X[:, 0] + 0.7 * X[:, 1]
    y = (score > np.median(score)).astype(np.int64)
    return np.column_stack([X, np.full(n, 3.0)]), y


def test_path_errors_are_the_weighted_knn_errors_at_every_theta_and_k():
    X, y = _sqpfw_data()
    thetas = np.logspace(-3, 2, 20)
    errors, W, path = sqpfw_path_errors(X[:40], y[:40], X[40:], y[40:], thetas, ks=(1, 3), kappa=1, lambda_=1)
    assert errors.shape == (20, 2) and W.shape == (20, X.shape[1])
    np.testing.assert_array_equal(W, path(thetas))
    classes = np.unique(y[:40])
    for t, w in enumerate(W):
        for j, k in enumerate((1, 3)):  # one kNN per theta and k, the definition
            pred = predict_weighted_knn(X[:40], y[:40], X[40:], w, k, 2, classes)
            assert errors[t, j] == np.mean(pred != y[40:])


def test_select_theta_takes_the_first_smallest_error():
    X, y = _sqpfw_data()
    thetas = np.logspace(-3, 2, 20)
    best, errors, path = select_theta(X[:40], y[:40], X[40:], y[40:], thetas=thetas)
    assert errors.shape == (20,)
    assert best == thetas[np.flatnonzero(errors == errors.min())[0]]
    W = path(thetas)
    assert np.all(W[:, -1] == 0)  # the constant feature stays out of every weight vector
    np.testing.assert_array_equal(path.weights_, SQPFW().path(X[:40], y[:40], thetas).weights_)


def _mdm_data(n=48, d=4, n_classes=3, seed=13, shift=1.5):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    X[:, 0] += shift * y
    X[:, 1] -= shift * (y == 1)
    return X, y


def test_select_C_is_the_grid_search_of_the_weighted_knn():
    X, y = _mdm_data()
    best, search = select_C(X, y, Cs=[1.0, 0.01], cv=3, random_state=0)
    assert len(search.cv_results_["mean_test_score"]) == 2
    folds = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    ref = GridSearchCV(WeightedKNN(MDM(soft=True), n_neighbors=1), {"weighter__C": [0.01, 1.0]}, cv=folds).fit(X, y)
    assert best == pytest.approx(ref.best_params_["weighter__C"])
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
