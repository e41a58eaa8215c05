"""P-value adjustments (``padj``) against statsmodels' ``multipletests`` definitions, written out by hand."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone

from knnweights import SURF, ReliefF, permutation_pvalues
from knnweights.significance import adjust_pvalues, bh_qvalues


def _reference(p, method):
    """statsmodels.stats.multitest.multipletests, from its definitions (loops over sorted p)."""
    p = np.asarray(p, float)
    m = p.size
    order = np.argsort(p, kind="stable")
    ps = p[order]
    out = np.empty(m)
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method == "holm":  # step-down: max over j <= i of (m - j + 1) p_(j), 1-based
        adj = [min(1.0, max((m - j) * ps[j] for j in range(i + 1))) for i in range(m)]
    else:  # step-up: min over j >= i of c p_(j) m / j, 1-based
        c = 1.0 if method == "bh" else sum(1.0 / i for i in range(1, m + 1))
        adj = [min(1.0, min(c * ps[j] * m / (j + 1) for j in range(i, m))) for i in range(m)]
    out[order] = adj
    return out


@pytest.mark.parametrize("method", ["bh", "bonferroni", "holm", "by"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_adjust_matches_definitions(method, seed):
    rs = np.random.RandomState(seed)
    p = rs.uniform(size=25) ** 3
    p[3] = p[7]  # a tie
    p[10] = 1.0
    q = adjust_pvalues(p, method)
    assert_allclose(q, _reference(p, method), rtol=1e-14, atol=0)
    assert np.all(q >= p) and np.all(q <= 1)


def test_known_values():
    p = [0.01, 0.04, 0.03, 0.5]
    assert_allclose(adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 1.0])
    assert_allclose(adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.5])
    cm = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert_allclose(adjust_pvalues(p, "by"), np.minimum(np.array([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5]) * cm, 1))


def test_bh_is_bh_qvalues():
    p = np.random.RandomState(0).uniform(size=30)
    assert np.array_equal(adjust_pvalues(p), bh_qvalues(p))


@pytest.mark.parametrize("method", ["bh", "bonferroni", "holm", "by"])
def test_nan_and_range_rejected_like_bh(method):
    for bad in ([0.1, np.nan], [0.1, 1.5], [-0.1, 0.2], [np.inf]):
        with pytest.raises(ValueError, match="finite"):
            adjust_pvalues(bad, method)
    assert adjust_pvalues([], method).size == 0


def test_bad_method():
    with pytest.raises(ValueError):
        adjust_pvalues([0.1], "fdr")


@pytest.fixture
def data():
    rs = np.random.RandomState(0)
    X = rs.normal(size=(60, 6))
    y = (X[:, 0] + 0.5 * rs.normal(size=60) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=5, pvalues=True), SURF(pvalues=True)])
@pytest.mark.parametrize("method", ["bonferroni", "holm", "by"])
def test_estimator_padj(data, est, method):
    X, y = data
    base = clone(est).fit(X, y)
    p, q_bh = base.pvalues_.copy(), base.qvalues_.copy()
    assert np.array_equal(q_bh, bh_qvalues(p))
    other = clone(est).set_params(padj=method).fit(X, y)
    assert np.array_equal(other.pvalues_, p)
    assert_allclose(other.qvalues_, _reference(p, method), rtol=1e-14)


def test_estimator_bad_padj(data):
    X, y = data
    with pytest.raises(ValueError):
        ReliefF(pvalues=True, padj="fdr").fit(*data)


def test_permutation_pvalues_padj(data):
    X, y = data
    res = permutation_pvalues(ReliefF(n_neighbors=5), X, y, n_permutations=9, random_state=0, padj="holm")
    assert_allclose(res.qvalues, _reference(res.pvalues, "holm"), rtol=1e-14)
    with pytest.raises(ValueError):
        permutation_pvalues(ReliefF(), X, y, n_permutations=9, padj="fdr")


def test_padj_fingerprint():
    from knnweights.evaluation.grid import fingerprint_view

    assert fingerprint_view(ReliefF(pvalues=True)) != fingerprint_view(ReliefF(pvalues=True, padj="holm"))
    assert "padj" not in repr(fingerprint_view(ReliefF()))
