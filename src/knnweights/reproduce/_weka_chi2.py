"""WEKA's chi-square attribute evaluator, the selector of I-M4E Table 4.

The I-M4E paper selects "the best 2000 features" with "the Chi-square attribute selector
in Weka" (``ChiSquaredAttributeEval`` with the ``Ranker`` search). That evaluator does not
score the numeric values themselves: it first discretises every attribute with WEKA's
supervised ``Discretize`` filter (Fayyad & Irani's MDL splitting, with the "better
encoding" that ``ChiSquaredAttributeEval`` switches on) and then scores the contingency
table of bins x classes by Pearson's chi-square (no Yates correction). An attribute the
MDL criterion leaves in one bin scores 0. :func:`weka_chi_squared` computes those scores
(a ``score_func`` for :class:`sklearn.feature_selection.SelectKBest`); scikit-learn's
``chi2`` on min-max scaled values ranks genes by a different statistic.

The steps, as WEKA (3.x) performs them:

* sort the attribute's values; missing values (NaN) go last and take no part in the splits;
* ``cutPointsForSubset``: among the boundaries between distinct values, the one with the
  lowest class entropy conditioned on the two sides (first such boundary on ties) is the
  candidate; it is kept if its gain is positive and passes Fayyad & Irani's MDL test
  ``gain > (log2(C) + log2(3^k - 2) - (k H - k1 H1 - k2 H2)) / N``, where ``C`` is the number
  of boundaries in the subset (the better encoding), ``k, k1, k2`` the numbers of classes
  present and ``H, H1, H2`` the entropies in bits; then both sides are split recursively;
* a value ``v`` falls in the first bin whose cut point ``c`` has ``v <= c``;
* missing values are merged into the bins in proportion to the bins' sizes (WEKA's default
  ``missingMerge``); the chi-square sums ``(O - E)^2 / E`` over the non-empty rows and columns.

The entropies use WEKA's ``x ln x`` forms, so near-equal candidate splits are decided as
WEKA decides them. ``Ranker`` orders the scores with a quicksort whose order among equal
scores is an implementation detail; :class:`~sklearn.feature_selection.SelectKBest` breaks
such ties by taking the higher column index, which is what a stable ascending sort read
backwards (``Ranker``'s reversal) gives.

References: Fayyad, U. M. and Irani, K. B. (1993), Multi-interval discretization of
continuous-valued attributes for classification learning, IJCAI, 1022-1027; Bei, Y. and
Hong, P., I-M4E paper, Table 4 and its text (`papers/im4e-bei-hong-margin-quality.txt`).
"""

import numpy as np
from scipy.stats import chi2 as _chi2_dist
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

from ..engine.jit import full_1d, full_2d, njit
from ..utils import check_finite_columns, check_numeric_columns, check_target

__all__ = ["weka_chi_squared", "mdl_cut_points"]


@njit(cache=True, nogil=True)
def _xlnx(x):
    # WEKA's ContingencyTables.lnFunc: 0 below 1e-6
    return 0.0 if x < 1e-6 else x * np.log(x)


@njit(cache=True, nogil=True)
def _entropy(counts):
    # WEKA's ContingencyTables.entropy, in bits
    s = 0.0
    r = 0.0
    for c in counts:
        r -= _xlnx(c)
        s += c
    if abs(s) < 1e-6:
        return 0.0
    return (r + _xlnx(s)) / (s * np.log(2.0))


@njit(cache=True, nogil=True)
def _split_entropy(left, right):
    # WEKA's ContingencyTables.entropyConditionedOnRows for the two rows (left, right), in bits
    r = 0.0
    sl = 0.0
    sr = 0.0
    for c in range(left.shape[0]):
        r += _xlnx(left[c]) + _xlnx(right[c])
        sl += left[c]
        sr += right[c]
    r -= _xlnx(sl) + _xlnx(sr)
    total = sl + sr
    if abs(total) < 1e-6:
        return 0.0
    return -r / (total * np.log(2.0))


@njit(cache=True, nogil=True)
def _n_present(counts):
    k = 0
    for c in counts:
        if c > 0:
            k += 1
    return k


@njit(cache=True, nogil=True)
def _best_split(sv, sl, lo, hi, n_classes):
    """One step of WEKA's ``cutPointsForSubset`` on ``sv[lo:hi]``: the accepted split index or -1."""
    if hi - lo < 2:
        return -1
    prior = full_1d(n_classes, 0.0, np.float64)
    for i in range(lo, hi):
        prior[sl[i]] += 1.0
    left = full_1d(n_classes, 0.0, np.float64)
    right = prior.copy()
    h_prior = _entropy(prior)
    best_h = h_prior
    best = -1
    n_cuts = 0
    for i in range(lo, hi - 1):
        left[sl[i]] += 1.0
        right[sl[i]] -= 1.0
        if sv[i] < sv[i + 1]:
            h = _split_entropy(left, right)
            if h < best_h:
                best_h = h
                best = i
            n_cuts += 1
    gain = h_prior - best_h
    if best < 0 or gain <= 0:
        return -1
    left[:] = 0.0
    for i in range(lo, best + 1):
        left[sl[i]] += 1.0
    right = prior - left
    n = float(hi - lo)
    k = _n_present(prior)
    delta = np.log2(3.0 ** k - 2.0) - (k * h_prior - _n_present(right) * _entropy(right)
                                       - _n_present(left) * _entropy(left))
    if not gain > (np.log2(float(n_cuts)) + delta) / n:
        return -1
    return best


@njit(cache=True, nogil=True)
def _cut_points(sv, sl, m, n_classes, out):
    """WEKA's recursive MDL splitting of ``sv[:m]`` (sorted, no NaN), with an explicit stack (numba's
    cache cannot hold recursive functions); the increasing cut points go to ``out``, their number is returned."""
    stack = np.empty((m + 1, 2), np.int64)
    stack[0, 0] = 0
    stack[0, 1] = m
    top = 1
    k = 0
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        b = _best_split(sv, sl, lo, hi, n_classes)
        if b < 0:
            continue
        out[k] = (sv[b] + sv[b + 1]) / 2.0
        k += 1
        stack[top, 0] = lo
        stack[top, 1] = b + 1
        stack[top + 1, 0] = b + 1
        stack[top + 1, 1] = hi
        top += 2
    out[:k].sort()
    return k


@njit(cache=True, nogil=True)
def _gene_cuts(col, y, n_classes, cuts):
    """Sort one attribute (NaN last), split its ``m`` present values: ``(sorted values, their labels, m, k)``
    with the ``k`` cut points in ``cuts[:k]``."""
    order = np.argsort(col, kind="mergesort")  # NaN sort last
    sv = col[order]
    sl = y[order]
    m = col.shape[0]
    while m > 0 and np.isnan(sv[m - 1]):
        m -= 1
    k = _cut_points(sv, sl, m, n_classes, cuts)
    return sv, sl, m, k


@njit(cache=True, nogil=True)
def _scores(X, y, n_classes, stat, dof):
    n, d = X.shape
    cuts = np.empty(n, np.float64)
    for j in range(d):
        sv, sl, m, k = _gene_cuts(X[:, j], y, n_classes, cuts)
        tab = full_2d(k + 1, n_classes, 0.0, np.float64)
        for i in range(m):
            b = 0
            while b < k and sv[i] > cuts[b]:
                b += 1
            tab[b, sl[i]] += 1.0
        if m < n:  # missing values, merged into the bins in proportion to their sizes (missingMerge)
            miss = full_1d(n_classes, 0.0, np.float64)
            for i in range(m, n):
                miss[sl[i]] += 1.0
            if m > 0:
                rows = tab.sum(axis=1)
                for b in range(k + 1):
                    for c in range(n_classes):
                        tab[b, c] += rows[b] / m * miss[c]
        rs = tab.sum(axis=1)
        cs = tab.sum(axis=0)
        tot = rs.sum()
        chi = 0.0
        nr = 0
        nc = 0
        for b in range(k + 1):
            if rs[b] > 1e-6:
                nr += 1
        for c in range(n_classes):
            if cs[c] > 1e-6:
                nc += 1
        for b in range(k + 1):
            if rs[b] > 1e-6:
                for c in range(n_classes):
                    if cs[c] > 1e-6:
                        e = cs[c] * rs[b] / tot
                        if e > 0:
                            chi += (e - tab[b, c]) ** 2 / e
        stat[j] = chi
        dof[j] = max(nr - 1, 0) * max(nc - 1, 0)


def _check(X, y):
    check_numeric_columns(X)
    check_finite_columns(X, allow_nan=True)
    check_target(y)
    X, y = check_X_y(X, y, dtype=np.float64, ensure_all_finite="allow-nan", y_numeric=False)
    check_classification_targets(y)
    classes, yi = np.unique(y, return_inverse=True)
    return np.ascontiguousarray(X), yi.astype(np.int64), len(classes)


def weka_chi_squared(X, y):
    """Chi-square scores of WEKA's ``ChiSquaredAttributeEval`` (MDL-discretised attributes).

    A ``score_func`` for :class:`sklearn.feature_selection.SelectKBest`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric attributes; NaN marks a missing value (WEKA's ``?``).
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        Pearson's chi-square of each attribute's bins x classes table; 0 where the MDL
        criterion keeps one bin.
    pvalues : ndarray of shape (n_features,)
        Upper tail of the chi-square distribution with ``(bins - 1) (classes - 1)`` degrees
        of freedom (1 where that is 0).
    """
    X, yi, n_classes = _check(X, y)
    stat = np.zeros(X.shape[1])
    dof = np.zeros(X.shape[1])
    _scores(X, yi, n_classes, stat, dof)
    p = np.ones_like(stat)
    pos = dof > 0
    p[pos] = _chi2_dist.sf(stat[pos], dof[pos])
    return stat, p

weka_chi_squared._algorithm_version = 1


def mdl_cut_points(x, y):
    """Cut points of WEKA's supervised ``Discretize`` (Fayyad & Irani MDL, better encoding) for one attribute.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        The attribute's values; NaN marks a missing value.
    y : array-like of shape (n_samples,)
        Class labels.

    Returns
    -------
    ndarray
        The increasing cut points (empty: one bin). A value ``v`` is in bin ``j`` for the
        first cut point ``c_j`` with ``v <= c_j`` (the last bin when there is none).
    """
    X, yi, n_classes = _check(np.asarray(x, dtype=np.float64).reshape(-1, 1), y)
    out = np.empty(max(X.shape[0], 1))
    k = _gene_cuts(X[:, 0], yi, n_classes, out)[3]
    return out[:k].copy()
