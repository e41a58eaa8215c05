"""WEKA's chi-square attribute evaluator (I-M4E Table 4's selector): worked cases, an
independent plain-Python reference of Fayyad & Irani's MDL splitting, invariances."""
import math

import numpy as np
import pytest
from sklearn.feature_selection import SelectKBest

from knnweights.reproduce._weka_chi2 import mdl_cut_points, weka_chi_squared


def _h(counts):
    n = sum(counts)
    return -sum(c / n * math.log2(c / n) for c in counts if c > 0) if n else 0.0


def _ref_cuts(pairs, n_classes):
    """Fayyad & Irani (1993) with the "better encoding" (C = number of boundaries), written plainly."""
    if len(pairs) < 2:
        return []
    n = len(pairs)
    prior = [sum(1 for _, c in pairs if c == k) for k in range(n_classes)]
    best, best_h, boundaries = None, _h(prior), 0
    for i in range(n - 1):
        if pairs[i][0] < pairs[i + 1][0]:
            boundaries += 1
            left = [sum(1 for _, c in pairs[:i + 1] if c == k) for k in range(n_classes)]
            right = [p - q for p, q in zip(prior, left, strict=True)]
            h = ((i + 1) * _h(left) + (n - i - 1) * _h(right)) / n
            if h < best_h - 1e-12:
                best, best_h = i, h
    if best is None:
        return []
    left = [sum(1 for _, c in pairs[:best + 1] if c == k) for k in range(n_classes)]
    right = [p - q for p, q in zip(prior, left, strict=True)]
    k, k1, k2 = (sum(1 for c in v if c > 0) for v in (prior, left, right))
    delta = math.log2(3 ** k - 2) - (k * _h(prior) - k1 * _h(left) - k2 * _h(right))
    if not _h(prior) - best_h > (math.log2(boundaries) + delta) / n:
        return []
    cut = (pairs[best][0] + pairs[best + 1][0]) / 2
    return _ref_cuts(pairs[:best + 1], n_classes) + [cut] + _ref_cuts(pairs[best + 1:], n_classes)


def _ref_chi2(x, y, n_classes):
    ok = ~np.isnan(x)
    pairs = sorted(zip(x[ok].tolist(), y[ok].tolist(), strict=True), key=lambda t: t[0])
    cuts = _ref_cuts(pairs, n_classes)
    tab = np.zeros((len(cuts) + 1, n_classes))
    for v, c in pairs:
        tab[int(np.searchsorted(cuts, v, side="left")), c] += 1
    miss = np.bincount(y[~ok], minlength=n_classes).astype(float)
    if miss.sum():
        tab += np.outer(tab.sum(1) / tab.sum(), miss)
    tab = tab[tab.sum(1) > 0][:, tab.sum(0) > 0]
    e = np.outer(tab.sum(1), tab.sum(0)) / tab.sum()
    return cuts, float(((tab - e) ** 2 / e).sum())


def test_a_clean_split_is_one_cut_and_scores_n():
    x = np.arange(1.0, 9.0)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(mdl_cut_points(x, y), [4.5])
    s, p = weka_chi_squared(x[:, None], y)
    assert s[0] == pytest.approx(8.0)  # a perfect 2 x 2 table: chi-square = n
    assert p[0] < 0.01


def test_the_mdl_test_rejects_an_unconvincing_split():
    # the best boundary of an alternating sequence gains little: one bin, score 0, p-value 1
    x = np.arange(1.0, 7.0)
    y = np.array([0, 1, 0, 1, 0, 1])
    assert mdl_cut_points(x, y).size == 0
    s, p = weka_chi_squared(x[:, None], y)
    assert s[0] == 0.0 and p[0] == 1.0
    # a constant column has no boundary at all
    s, _ = weka_chi_squared(np.ones((6, 1)), y)
    assert s[0] == 0.0


def test_three_bins_on_three_separated_classes():
    x = np.r_[np.linspace(0, 1, 10), np.linspace(5, 6, 10), np.linspace(10, 11, 10)]
    y = np.repeat([0, 1, 2], 10)
    cuts = mdl_cut_points(x, y)
    np.testing.assert_allclose(cuts, [3.0, 8.0])
    s, _ = weka_chi_squared(x[:, None], y)
    assert s[0] == pytest.approx(2 * 30.0)  # a diagonal 3 x 3 table: n (min(r, c) - 1)


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_a_plain_reference(seed):
    rng = np.random.default_rng(seed)
    n, d, n_classes = 40, 30, 2 + seed % 2
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, d)) + 1.5 * (y[:, None] == np.arange(d) % n_classes) * (np.arange(d) < 10)
    X = np.round(X, 1)  # ties between values: boundaries are not n - 1
    X[rng.random((n, d)) < 0.05] = np.nan
    s, _ = weka_chi_squared(X, y)
    n_cut = 0
    for j in range(d):
        cuts, ref = _ref_chi2(X[:, j], y, n_classes)
        if not np.isnan(X[:, j]).any():
            np.testing.assert_allclose(mdl_cut_points(X[:, j], y), cuts, rtol=0, atol=0)
        assert s[j] == pytest.approx(ref, rel=1e-10, abs=1e-12), j
        n_cut += len(cuts) > 0
    assert 5 <= n_cut < d  # the informative columns split, most noise columns stay in one bin


def test_scores_do_not_depend_on_monotone_rescaling_or_label_names():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(50, 12))
    y = (X[:, 0] + 0.5 * rng.normal(size=50) > 0).astype(int)
    s, _ = weka_chi_squared(X, y)
    s2, _ = weka_chi_squared(np.exp(3 * X) + 10, np.where(y == 1, "tumour", "normal"))
    np.testing.assert_allclose(s, s2)
    assert s[0] > 0 and s[0] == s.max()


def test_selectkbest_breaks_equal_scores_by_the_highest_index():
    # the reading documented in the module: WEKA's Ranker leaves equal merits to its quicksort
    x0 = np.r_[np.zeros(10), np.ones(10)]
    y = np.repeat([0, 1], 10)
    X = np.c_[x0, np.ones((20, 4))]
    sel = SelectKBest(weka_chi_squared, k=3).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), [0, 3, 4])


def test_bad_input_is_refused_with_the_shared_messages():
    with pytest.raises(ValueError, match="infinity"):
        weka_chi_squared(np.array([[1.0, np.inf], [2.0, 3.0]]), [0, 1])
    with pytest.raises(ValueError, match="class labels"):
        weka_chi_squared(np.ones((2, 1)), [0.0, np.nan])
