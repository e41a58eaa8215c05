"""MLKR with a diagonal metric and weighted kNN regression."""

import numpy as np
import pytest
from sklearn.model_selection import KFold, cross_val_score
from sklearn.neighbors import KNeighborsRegressor

from knnweights import MLKRDiagonal, ReliefF, WeightedKNNRegressor
from knnweights.weighters.mlkr import mlkr_diagonal_objective


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.1 * rng.normal(size=40)
    for w in (rng.uniform(0.05, 0.5, 6), np.full(6, 0.01), np.array([2.0, 1e-4, 0.3, 1.0, 1e-4, 0.1])):
        _, g = mlkr_diagonal_objective(w, X, y)
        h = 1e-6
        fd = np.array([(mlkr_diagonal_objective(w + h * e, X, y)[0] - mlkr_diagonal_objective(w - h * e, X, y)[0])
                       / (2 * h) for e in np.eye(6)])
        assert np.max(np.abs(fd - g)) <= 1e-6 * max(1.0, np.max(np.abs(g)))


def test_objective_is_leave_one_out_kernel_regression_error():
    rng = np.random.default_rng(1)
    X, y, w = rng.normal(size=(15, 3)), rng.normal(size=15), np.array([0.5, 1.0, 0.2])
    D = ((X[:, None, :] - X[None, :, :]) ** 2 * w).sum(axis=2)
    K = np.exp(-D)
    np.fill_diagonal(K, 0.0)
    yhat = K @ y / K.sum(axis=1)
    assert mlkr_diagonal_objective(w, X, y, working_memory=0.001)[0] == pytest.approx(((y - yhat) ** 2).sum())


def test_five_relevant_of_hundred_weighted_knn_beats_plain():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 100))
    y = X[:, :5].sum(axis=1) + 0.3 * rng.normal(size=300)
    cv = KFold(3, shuffle=True, random_state=0)
    plain = -cross_val_score(KNeighborsRegressor(), X, y, cv=cv, scoring="neg_root_mean_squared_error").mean()
    model = WeightedKNNRegressor(MLKRDiagonal(max_iter=50))
    weighted = -cross_val_score(model, X, y, cv=cv, scoring="neg_root_mean_squared_error").mean()
    assert weighted < 0.75 * plain
    w = MLKRDiagonal(max_iter=50).fit(X, y).feature_importances_
    assert set(np.argsort(-w)[:5]) == set(range(5))


def test_regressor_with_relief_forces_continuous_target():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(150, 8))
    y = np.round(4 * X[:, 0] * X[:, 1])  # integer-valued: classes for ReliefF alone
    model = WeightedKNNRegressor(ReliefF(n_neighbors=10)).fit(X, y)
    assert model.weighter_.target_type_ == "continuous"
    assert model.predict(X[:5]).shape == (5,)
    with pytest.raises(ValueError, match="constant"):
        MLKRDiagonal().fit(X, np.ones(150))
