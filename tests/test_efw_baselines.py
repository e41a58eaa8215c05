"""SVM-RFE as a weighter."""

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights.weighters.efw_baselines import SVMRFE, _linear_svc_coef, rank_weights


@parametrize_with_checks([SVMRFE(step=0.5)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=40, d=7, seed=0):
    rng = np.random.RandomState(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.randn(n, d)
    X[:, 0] += 1.5 * y
    X[:, 1] -= 1.0 * y
    return X, y


def _brute_force_rfe(X, y, C=1.0):
    """Guyon et al.'s loop written out: drop argmin w_j^2 of a linear SVM, one at a time."""
    Xs = StandardScaler().fit_transform(X)
    alive = list(range(X.shape[1]))
    rank = np.empty(X.shape[1], int)
    while alive:
        if len(alive) == 1:
            rank[alive[0]] = 1
            break
        w = SVC(kernel="linear", C=C).fit(Xs[:, alive], y).coef_.ravel()
        j = alive[int(np.argmin(w ** 2))]
        rank[j] = len(alive)
        alive.remove(j)
    return rank


def test_ranking_equals_guyon_loop():
    X, y = _data()
    est = SVMRFE(C=0.5, step=1).fit(X, y)
    np.testing.assert_array_equal(est.elimination_ranking_, _brute_force_rfe(X, y, C=0.5))
    # one at a time: the total ranking_ and the weights order the features as the elimination does
    np.testing.assert_array_equal(est.ranking_, est.elimination_ranking_)
    np.testing.assert_array_equal(np.argsort(-est.feature_importances_), np.argsort(est.ranking_))
    assert set(np.argsort(est.ranking_)[:2]) == {0, 1}


def test_rank_weights_and_constant_feature():
    np.testing.assert_allclose(rank_weights([1, 3, 2, 3]), [1.0, 1 / 3, 2 / 3, 1 / 3])
    X, y = _data()
    X[:, 4] = 2.0
    w = SVMRFE().fit(X, y).feature_importances_
    assert w[4] == 0 and np.all(np.delete(w, 4) > 0)


def test_chunked_steps_tie_within_a_chunk():
    X, y = _data(d=8)
    r = SVMRFE(step=4).fit(X, y).elimination_ranking_
    assert np.bincount(r).max() > 1


def test_integer_step_equals_sklearn_rfe():
    from sklearn.feature_selection import RFE

    X, y = _data(n=60, d=11, seed=3)
    y = np.arange(60) % 3  # three classes: one-vs-one criteria summed
    X[:, 2] += y
    Xs = StandardScaler().fit_transform(X)
    for step in (1, 3):
        ref = RFE(SVC(kernel="linear", C=1.0), n_features_to_select=1, step=step).fit(Xs, y).ranking_
        np.testing.assert_array_equal(SVMRFE(step=step).fit(X, y).elimination_ranking_, ref)


def test_fractional_step_removes_a_share_of_the_remaining():
    X, y = _data(n=40, d=30, seed=1)
    est = SVMRFE(step=0.25, verbose=0).fit(X, y)
    # 30 -> 23 -> 18 -> 14 -> 11 -> 9 -> 7 -> 6 -> 5 -> 4 -> 3 -> 2 -> 1: floor(share), at least 1
    sizes, m = [], 30
    while m > 1:
        sizes.append(m)
        m -= max(1, min(int(0.25 * m), m - 1))
    assert est.n_iter_ == len(sizes) == 12
    counts = np.bincount(est.elimination_ranking_)[1:]
    np.testing.assert_array_equal(counts[::-1][:-1], -np.diff(sizes + [1]))  # then the survivor
    assert est.elimination_ranking_[0] == 1  # the strongest planted feature survives
    # the default keeps 20000 features to about a hundred SVM fits
    rounds, m = 0, 20000
    while m > 1:
        m -= SVMRFE()._n_remove(m)
        rounds += 1
    assert rounds < 110


def test_verbose_prints_rounds(capsys):
    X, y = _data(d=6)
    est = SVMRFE(step=1, verbose=1).fit(X, y)
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines() if ln.strip()[:1].isdigit()]
    assert len(rows) == est.n_iter_ == 5
    assert [int(r[1]) for r in rows] == [6, 5, 4, 3, 2]


def test_gram_path_equals_the_linear_kernel_path():
    from knnweights import config_context

    X, y = _data(n=50, d=25, seed=4)
    a = SVMRFE(step=0.2).fit(X, y)
    with config_context(working_memory=1e-4):  # no room for the n x n Gram matrix
        b = SVMRFE(step=0.2).fit(X, y)
    np.testing.assert_array_equal(a.elimination_ranking_, b.elimination_ranking_)
    assert a.n_iter_ == b.n_iter_ > 5


@pytest.mark.parametrize("n_classes", [3, 4])
def test_one_vs_one_coefficients_equal_scikit_learns(n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(60, 7))
    y = np.arange(60) % n_classes
    X[:, 0] += y  # overlapping classes: many support vectors, of every class
    svm = SVC(kernel="linear", C=0.5).fit(X, y)
    ours = _linear_svc_coef(svm, svm.support_vectors_)
    assert ours.shape == (n_classes * (n_classes - 1) // 2, 7)
    np.testing.assert_allclose(ours, svm.coef_, rtol=1e-12, atol=1e-12)  # the public coef_ of the linear kernel
    # and on the precomputed Gram matrix SVMRFE fits, against scikit-learn's own (private) rule
    from sklearn.svm._base import _one_vs_one_coef  # the reference only

    gram = SVC(kernel="precomputed", C=0.5).fit(X @ X.T, y)
    sv = X[gram.support_]
    reference = np.vstack(_one_vs_one_coef(gram.dual_coef_, gram.n_support_, sv))
    np.testing.assert_allclose(_linear_svc_coef(gram, sv), reference, rtol=1e-12, atol=1e-12)
    assert np.abs(reference).max() > 0.1
