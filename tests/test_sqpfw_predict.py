"""SQP-FW's weighted-kNN predictions: several k from one neighbour search, bit for bit the per-k ones."""

import numpy as np
import pytest

from knnweights.classifiers._weighted_knn import predict_weighted_knn, predict_weighted_knn_ks


def _per_k_reference(X_train, codes_train, X_query, w, k, n_classes, classes):
    """A plain vote per query: the k smallest (distance, training index) in exact arithmetic (the data are
    small integers and ``w`` binary fractions, so ``Fraction`` gives each distance exactly), a tie of
    votes to the lower class."""
    from fractions import Fraction

    wf = [Fraction(float(v)) for v in w]
    pred = []
    for q in range(X_query.shape[0]):
        exact = [sum(wf[f] * Fraction(float(X_query[q, f] - X_train[j, f])) ** 2 for f in range(len(wf)))
                 for j in range(X_train.shape[0])]
        near = sorted(range(len(exact)), key=lambda j: (exact[j], j))[:k]
        counts = np.bincount(codes_train[near], minlength=n_classes)
        pred.append(classes[int(np.argmax(counts))])
    return np.array(pred)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sparse", [False, True])
def test_batched_k_equals_one_search_per_k(seed, sparse):
    rng = np.random.RandomState(seed)
    n_classes = 4
    # small integer features: many tied distances, where list order and vote ties decide
    X_train = rng.randint(0, 3, size=(80, 6)).astype(np.float64)
    X_query = rng.randint(0, 3, size=(50, 6)).astype(np.float64)
    codes = rng.randint(0, n_classes - 1, size=80)
    codes[:2] = n_classes - 1  # a class with fewer members than the largest k
    classes = np.array([10, 20, 30, 40])
    w = rng.rand(6)
    if sparse:
        w[rng.rand(6) < 0.5] = 0.0
        w[0] = 0.3
    w /= w.sum()
    ks = (1, 2, 3, 5, 7)
    got = predict_weighted_knn_ks(X_train, codes, X_query, w, ks, n_classes, classes)
    for k, pred in zip(ks, got, strict=True):
        ref = _per_k_reference(X_train, codes, X_query, w, k, n_classes, classes)
        np.testing.assert_array_equal(pred, ref)
        np.testing.assert_array_equal(predict_weighted_knn(X_train, codes, X_query, w, k, n_classes, classes), ref)


def test_path_errors_equal_one_prediction_per_theta_and_k():
    from knnweights.evaluation.model_selection import sqpfw_path_errors
    from knnweights.weighters.sqpfw import SQPFW

    rng = np.random.RandomState(0)
    X = rng.randn(90, 5)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(90) > 0).astype(int)
    Xtr, ytr, Xev, yev = X[:60], y[:60], X[60:], y[60:]
    thetas = list(np.logspace(-3, 3, 25)) + [1.0, 1.0]  # repeated thetas share one search
    ks = (1, 3, 5)
    err, W, _ = sqpfw_path_errors(Xtr, ytr, Xev, yev, thetas, ks, kappa=2, lambda_=2)
    Wref = SQPFW(kappa=2, lambda_=2).path(Xtr, ytr, thetas=thetas)(np.asarray(thetas))
    np.testing.assert_array_equal(W, Wref)
    classes = np.unique(ytr)
    for t, w in enumerate(Wref):
        for j, k in enumerate(ks):
            ref = _per_k_reference(Xtr, np.searchsorted(classes, ytr), Xev, w, k, len(classes), classes)
            assert err[t, j] == np.mean(ref != yev)
