"""HKNN and CKNN against brute-force per-query references, and the estimator contract."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights.classifiers import CKNN, HKNN


def _class_neighbors(Xtr, ytr, x, c, K):
    Xc = Xtr[ytr == c]
    order = np.argsort(((Xc - x) ** 2).sum(axis=1), kind="stable")
    return Xc[order[: min(K, len(Xc))]]


def _hknn_reference(Xtr, ytr, Xte, K, lam):
    """Per query: ridge-penalised least squares solved by lstsq on the stacked system."""
    classes = np.unique(ytr)
    D = np.empty((len(Xte), len(classes)))
    for q, x in enumerate(Xte):
        for ci, c in enumerate(classes):
            N = _class_neighbors(Xtr, ytr, x, c, K)
            center = N.mean(axis=0)
            V = (N - center).T  # d x K
            A = np.vstack([V, np.sqrt(lam) * np.eye(V.shape[1])])
            rhs = np.concatenate([x - center, np.zeros(V.shape[1])])
            a = np.linalg.lstsq(A, rhs, rcond=None)[0]
            D[q, ci] = np.linalg.norm(x - center - V @ a)
    return D


def _cknn_reference(Xtr, ytr, Xte, K):
    """Per query: the convex-hull distance by SLSQP."""
    classes = np.unique(ytr)
    D = np.empty((len(Xte), len(classes)))
    for q, x in enumerate(Xte):
        for ci, c in enumerate(classes):
            N = _class_neighbors(Xtr, ytr, x, c, K)
            k = len(N)
            res = minimize(
                lambda a, x=x, N=N: 0.5 * np.sum((x - a @ N) ** 2),
                np.full(k, 1 / k),
                jac=lambda a, x=x, N=N: -(N @ (x - a @ N)),
                method="SLSQP",
                bounds=[(0, None)] * k,
                constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1}],
                options={"ftol": 1e-15, "maxiter": 500},
            )
            D[q, ci] = np.linalg.norm(x - res.x @ N)
    return D


def _data(seed, n=60, d=4, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    Xte = rng.normal(size=(25, d))
    return X, y, Xte


@pytest.mark.parametrize("K, lam", [(1, 0.5), (3, 0.0), (5, 0.1), (8, 2.0), (4, 0.0)])
def test_hknn_equals_brute_force(K, lam):
    X, y, Xte = _data(K)
    clf = HKNN(n_neighbors=K, alpha=lam).fit(X, y)
    D = clf.class_distances(Xte)
    ref = _hknn_reference(X, y, Xte, K, lam)
    np.testing.assert_allclose(D, ref, rtol=1e-7, atol=1e-7)
    np.testing.assert_array_equal(clf.predict(Xte), np.unique(y)[ref.argmin(axis=1)])


@pytest.mark.parametrize("K", [1, 3, 6])
def test_cknn_equals_brute_force(K):
    X, y, Xte = _data(10 + K, d=3)
    clf = CKNN(n_neighbors=K).fit(X, y)
    D = clf.class_distances(Xte)
    ref = _cknn_reference(X, y, Xte, K)
    # the exact solver can only be closer than SLSQP, and not by more than its tolerance
    assert np.all(D <= ref + 1e-9)
    np.testing.assert_allclose(D, ref, atol=1e-5)
    srt = np.sort(ref, axis=1)
    clear = srt[:, 1] - srt[:, 0] > 1e-4  # queries inside two hulls tie at distance 0
    assert clear.sum() >= 10
    np.testing.assert_array_equal(clf.predict(Xte)[clear], np.unique(y)[ref.argmin(axis=1)][clear])


def test_string_labels_and_small_class():
    X, y, Xte = _data(3, n=30)
    labels = np.array(["a", "b", "c"])[y]
    Xs, ls = X[:-3], labels[:-3]
    Xs = np.vstack([Xs, X[:1] + 5.0])
    ls = np.append(ls, "z")  # one-sample class: uses its single sample
    for clf in (HKNN(n_neighbors=4, alpha=0.1), CKNN(n_neighbors=4)):
        pred = clf.fit(Xs, ls).predict(np.vstack([Xte, X[:1] + 5.0]))
        assert set(pred) <= set(ls)
        assert pred[-1] == "z"


@pytest.mark.parametrize("cls", [HKNN, CKNN])
def test_class_of_two_samples_warns_clamps_or_raises(cls):
    X, y, Xte = _data(3, n=30)
    X, y = np.vstack([X, X[:2] + 5.0]), np.append(y, [7, 7])
    with pytest.warns(UserWarning, match="n_neighbors=5 is larger than the number of samples of class 7.*Clamped"):
        clf = cls(n_neighbors=5).fit(X, y)
    assert clf.predict(X[-2:] + 0.01).tolist() == [7, 7]
    ref = (_hknn_reference(X, y, Xte, 5, 1.0) if cls is HKNN else _cknn_reference(X, y, Xte, 5))
    np.testing.assert_allclose(clf.class_distances(Xte), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="n_neighbors=5 is larger than the number of samples of class 7"):
        cls(n_neighbors=5, small_classes="error").fit(X, y)


def test_cknn_distance_is_zero_inside_hull_and_hknn_affine_hull_zero():
    # three neighbours of class 0 form a triangle containing the query; class 1 far away
    X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [10.0, 10.0], [11.0, 10.0], [10.0, 11.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    q = np.array([[0.5, 0.5], [-1.0, -1.0]])
    Dc = CKNN(n_neighbors=3).fit(X, y).class_distances(q)
    np.testing.assert_allclose(Dc[0, 0], 0.0, atol=1e-12)
    np.testing.assert_allclose(Dc[1, 0], np.sqrt(2.0), atol=1e-12)
    Dh = HKNN(n_neighbors=3, alpha=0.0).fit(X, y).class_distances(q)
    np.testing.assert_allclose(Dh[:, 0], 0.0, atol=1e-9)  # the affine hull is the plane


def test_hknn_large_penalty_tends_to_centroid_distance():
    X, y, Xte = _data(4)
    D = HKNN(n_neighbors=5, alpha=1e12).fit(X, y).class_distances(Xte)
    ref = np.empty_like(D)
    for q, x in enumerate(Xte):
        for c in range(3):
            ref[q, c] = np.linalg.norm(x - _class_neighbors(X, y, x, c, 5).mean(axis=0))
    np.testing.assert_allclose(D, ref, rtol=1e-6)


@parametrize_with_checks([HKNN(n_neighbors=3, alpha=0.5), CKNN(n_neighbors=3)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
