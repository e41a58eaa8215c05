"""Covariate-adjusted p-values of class labels from the moments of their reference
(``covariate_reference="moments"``).

The statistic is that of :mod:`._relief_covariates`, ``S = sum_p r_p g_p`` over the neighbour
pairs (``r`` a feature's pair differences residualised on the covariates' pair differences,
``g_p = [y_i != y_j]``), and so is the null: each sample's class drawn independently from its
probabilities given the covariates, ``pi_i`` (:func:`._relief_covariates.class_probabilities`),
the pairs held fixed.  Instead of redrawing the classes, this module takes the reference's
mean, variance and third moment in closed form and its tail from :func:`._relief_pvalues.quadratic_sf`,
the three-moment saddlepoint reference of the unadjusted p-values.  P-values then go below the
redraws' ``1 / (B + 1)``, at the cost of one more pass over the pairs instead of the redraws.

With the one-hot class ``Y_i = pi_i + e_i`` (``E e_i = 0``, ``Cov e_i = V_i = diag(pi_i) - pi_i
pi_i'``) and the pairs as a symmetric matrix ``B`` (``B_ij`` the pair's ``r``, halved for each
direction in which the pair was not found, so that ``S = sum_{i != j} B_ij g_ij``),

    S - E S = L + Q,   L = -2 sum_i alpha_i' e_i,   Q = -sum_{i != j} B_ij e_i' e_j,

with ``alpha_i = sum_j B_ij pi_j``: ``L`` the linear (Hajek) part, ``Q`` a degenerate quadratic
form, uncorrelated with ``L``.  With ``u_i = V_i alpha_i``::

    E S        = sum_{i != j} B_ij (1 - pi_i' pi_j)
    Var L      = 4 sum_i alpha_i' V_i alpha_i
    Var Q      = 2 sum_{i != j} B_ij^2 tr(V_i V_j)
    E L^3      = -8 sum_i E (alpha_i' e_i)^3
    E L^2 Q    = -8 sum_{i != j} B_ij u_i' u_j
    E L Q^2    = -8 sum_{i != j} B_ij^2 E[(alpha_i' e_i) (e_i' e_j)^2]
    E Q^3      = -8 sum_{i, j, k distinct} B_ij B_jk B_ki tr(V_i V_j V_k) - 4 sum_{i != j} B_ij^3 E (e_i' e_j)^3

and the third moment ``E L^3 + 3 E L^2 Q + 3 E L Q^2 + E Q^3``.  Every term is a sum over the
pairs except the triangles, summed as the unadjusted p-values' are (exactly, or from sampled
pairs of neighbours when that is too much work: :func:`knnweights.engine.pair_kernels.weighted_triangles`).
The moments are exact for the reference; the tail is the saddlepoint approximation's.  Only
class labels: a continuous outcome's reference permutes residuals (Freedman & Lane), whose
moments of ``|y_i - y_j|`` have no such closed form.
"""

import numpy as np
from sklearn.utils import Bunch

from ..engine import pair_kernels as _kernels_pairs
from ._relief_covariates import _feature_blocks, _orthonormal_basis, _pair_design, _sample_design, class_probabilities
from ._relief_pvalues import quadratic_sf

__all__ = ["covariate_moment_pvalues", "crt_moments"]

#: the most pair values (entries x features) held in one array, as in :mod:`._relief_covariates`
_ENTRY_VALUES = 2**23


def _entry_rows(indptr, indices, flags):
    """For every entry ``(i, j)`` of the symmetric adjacency: the row of its pair among the listed
    (``flags & 1``) pairs, and the pair's multiplicity over two (``1/2`` found in one direction, 1 in both)."""
    n = indptr.size - 1
    own = (flags & 1) != 0
    rank = np.cumsum(own) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    keys = rows * n + indices
    mirror = np.searchsorted(keys, indices.astype(np.int64) * n + rows)  # the entry (j, i); keys ascend
    entry_row = np.where(own, rank, rank[mirror])
    half_m = ((flags & 1) + ((flags >> 1) & 1)) / 2.0
    return entry_row, half_m, rows


def pair_class_terms(prob, rows, cols):
    """Per entry ``(i, j)``: ``pi_i' pi_j``, ``E (e_i' e_j)^2 = tr(V_i V_j)``, ``E (e_i' e_j)^3`` and the
    vector ``h`` with ``E[(a' e_i) (e_i' e_j)^2] = (V_i a)' h`` for any ``a``.

    ``e_i' e_j = [k = l] - pi_jk - pi_il + pi_i' pi_j`` when sample ``i`` has class ``k`` and ``j`` class
    ``l``, so the second and third moments are sums over the ``C^2`` class pairs.
    """
    Pi, Pj = prob[rows], prob[cols]
    q = np.einsum("ec,ec->e", Pi, Pj)
    C = prob.shape[1]
    m2 = np.zeros(rows.size)
    m3 = np.zeros(rows.size)
    for k in range(C):
        for l in range(C):  # noqa: E741
            x = float(k == l) - Pj[:, k] - Pi[:, l] + q
            w = Pi[:, k] * Pj[:, l]
            m2 += w * x * x
            m3 += w * x * x * x
    h = Pj * (1.0 - Pj) - 2.0 * Pj * (Pi - q[:, None])
    return q, m2, m3, h


def crt_moments(R, entry_row, half_m, indptr, indices, prob, terms, exact_pairs, n_samples):
    """The reference's mean, variance, third moment and its linear part's variance and third moment
    (module docstring), per column of ``B``.

    Parameters
    ----------
    R : ndarray of shape (n_pairs, n_features)
        The listed pairs' values.
    entry_row, half_m : ndarray of shape (n_entries,)
        Per entry of the symmetric adjacency ``(indptr, indices)``, its pair's row of ``R`` and the
        pair's multiplicity over two: ``B_ij = half_m[e] R[entry_row[e]]`` (:func:`_entry_rows`).
    indptr, indices : ndarray
        The adjacency (CSR, sorted rows).
    prob : ndarray of shape (n_samples, n_classes)
        The class probabilities ``pi``.
    terms : tuple
        :func:`pair_class_terms` of the entries.
    exact_pairs, n_samples : int
        The triangle sums' plan (:func:`knnweights.engine.pair_kernels.weighted_triangles`).

    Returns
    -------
    Bunch
        ``mean``, ``var``, ``third``, ``var_linear``, ``third_linear``, each of shape (n_features,).
    """
    n, C = prob.shape
    nf = R.shape[1]
    q, m2, m3, h = terms
    entries = (indptr, indices, np.ascontiguousarray(R), entry_row, half_m)
    alpha = np.empty((n, C, nf))
    _kernels_pairs.entry_class_sums(*entries, prob, alpha)
    abar = np.einsum("ic,icf->if", prob, alpha)
    dev = alpha - abar[:, None, :]
    u = prob[:, :, None] * dev  # V_i alpha_i
    var_l = 4.0 * np.einsum("icf,icf->f", u, alpha)
    third_l = -8.0 * np.einsum("icf,icf->f", u * dev, dev)
    sums = np.empty((n, 5, nf))
    _kernels_pairs.entry_moment_sums(*entries, u, q, m2, m3, np.ascontiguousarray(h), sums)
    mean, b2m2, l2q, lq2, b3m3 = sums.sum(axis=0)
    tri = np.empty((n, nf))
    _kernels_pairs.weighted_triangles(*entries, prob, exact_pairs, n_samples, 0, tri)
    third = third_l - 24.0 * l2q - 24.0 * lq2 - 8.0 * tri.sum(axis=0) - 4.0 * b3m3
    return Bunch(mean=mean, var=var_l + 2.0 * b2m2, third=third, var_linear=var_l, third_linear=third_l)


def covariate_moment_pvalues(moments, outcome, covariates, triangle_work=None):
    """Per-feature one-sided p-values of NPDR's covariate-adjusted pair regression for class labels,
    against the conditional randomisation reference's moments (module docstring).

    Parameters
    ----------
    moments : PairMoments
        The neighbour pairs and the ``diff`` data.
    outcome : ndarray of shape (n_samples,)
        Class codes.
    covariates : tuple
        ``(values, categorical)`` of :func:`._relief_covariates.check_covariates`.
    triangle_work : float, optional
        The triangle sums' budget (default: ``moments.triangle_work``).

    Returns
    -------
    pvalues : ndarray of shape (n_features,)
        One p-value per feature; 1 for a feature (or an outcome) without variation beyond the covariates.
    """
    data = moments.data
    n, d = data.n, data.d
    values, categorical = covariates[:2]
    indptr, indices, flags = moments._graph()
    entry_row, half_m, rows = _entry_rows(indptr, indices, flags)
    own = (flags & 1) != 0
    src = np.ascontiguousarray(rows[own])
    dst = np.ascontiguousarray(indices[own].astype(np.int64))
    U = _orthonormal_basis(_pair_design(values, categorical, src, dst))
    y = np.asarray(outcome)
    g = (y[src] != y[dst]).astype(np.float64)
    rg = g - U @ (U.T @ g)
    g_ok = float(rg @ rg) > 1e-12 * max(float(g @ g), 1e-300)
    prob = np.ascontiguousarray(class_probabilities(y, _sample_design(values, categorical)))
    terms = pair_class_terms(prob, rows, indices.astype(np.int64))
    budget = moments.triangle_work if triangle_work is None else triangle_work
    deg = np.diff(indptr).astype(np.float64)
    if float((deg * (deg - 1) / 2).sum()) * d <= budget:
        exact, samples = np.iinfo(np.int64).max, 0
    else:
        samples = max(256, int(budget / (n * d)))
        exact = samples
    ref = np.zeros((4, d))  # z, skewness, the linear part's share of the variance and third moment
    keep = np.zeros(d, dtype=bool)
    width = int(max(1, min(moments.feature_block, _ENTRY_VALUES // max(indices.size, 1))))
    for f0, f1, cols in _feature_blocks(moments, width):
        A = np.empty((src.size, f1 - f0))
        _kernels_pairs.pair_diffs(*cols, src, dst, A)
        R = A - U @ (U.T @ A)  # r_a: each feature's residual on [1, z]
        ok = g_ok & (np.einsum("pf,pf->f", R, R) > 1e-12 * np.maximum(np.einsum("pf,pf->f", A, A), 1e-300))
        del A
        S = R.T @ g
        mom = crt_moments(R, entry_row, half_m, indptr, indices, prob, terms, exact, samples)
        ok &= np.isfinite(mom.var) & (mom.var > 0)
        var = np.where(ok, mom.var, 1.0)
        ref[:, f0:f1] = ((S - mom.mean) / np.sqrt(var), mom.third / var**1.5, np.clip(mom.var_linear / var, 0, 1),
                         mom.third_linear / var**1.5)
        keep[f0:f1] = ok
    return np.where(keep, quadratic_sf(*ref), 1.0)
