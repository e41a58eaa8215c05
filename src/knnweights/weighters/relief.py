"""Relief (Kira & Rendell 1992) and ReliefF (Kononenko 1994): the nearest hit and miss, or ``k`` per class."""

import numbers

import numpy as np

from ..engine import mixed_kernels
from ..engine._docs import data_doc
from ..utils import Interval, StrOptions
from ._relief_base import DIFF_CONSTRAINTS, RAMP_CONSTRAINTS, TARGET_CONSTRAINTS, ReliefBase, fill_relief_docstring
from ._relief_margins import margin_coefficients, ramp_relieff_margins, relieff_margins, sample_rows, select_block
from ._relief_regression import ReliefTargetMixin

__all__ = ["Relief", "ReliefF", "mixed_relieff_margins"]


@data_doc
def mixed_relieff_margins(data, codes, n_neighbors=1, rows=None, per_class=True, miss_weighting="prior",
                          ties="index"):
    """:func:`relieff_margins` on Relief's ``diff`` for discrete features and missing values.

    ``data`` is a :class:`knnweights.engine._kernels_mixed.DiffData`: the neighbours are
    found with ``d(i, j) = sum_f diff_f(i, j)`` and the margins use the same ``diff``
    (Robnik-Sikonja & Kononenko 2003, Sec. 2.1, 2.6).  ``ties="index"`` takes the lower
    sample index among equidistant neighbours; ``ties="include"`` averages over the
    neighbours tied at the ``k``-th distance (:func:`mixed_kernels.tie_coefficients`),
    so the result does not depend on the row order.  Chunked by the ``working_memory``
    budget; everything per pair is compiled.

    {diff_codes}
    n_neighbors : int, default=1
        ``k``.
    rows : ndarray of int or None, default=None
        The queries; ``None``: every sample.
    per_class : bool, default=True
        ReliefF's misses of every other class, else Relief's nearest misses.
    miss_weighting : {"prior", "equal"}, default="prior"
        ``a(C)`` with ``per_class``.
    ties : {"index", "include"}, default="index"
        Neighbours tied at the ``k``-th distance.

    Returns
    -------
    margin : ndarray of shape (n_features,)
        The mean margin vector over the queries.
    """
    n = codes.shape[0]
    every = rows is None
    rows = np.arange(n) if every else np.asarray(rows, dtype=np.int64)
    k = int(n_neighbors)
    n_classes, coef_all = margin_coefficients(codes, rows, per_class, miss_weighting)
    z = np.zeros(data.d)
    T = data.tie_tolerance()
    for s, e, D in data.distance_chunks(None if every else rows, n_arrays=3 if ties == "include" else 1):
        r = np.ascontiguousarray(rows[s:e])
        b = e - s
        D = np.ascontiguousarray(D)
        idx, dist = select_block(D, r, codes, k, per_class, n_classes, T)
        coef = coef_all[s:e]
        if ties == "include":
            P = np.empty((b, n), np.float64)
            kth_idx = np.ascontiguousarray(idx[:, :, k - 1])
            mixed_kernels.tie_coefficients(D.astype(np.float64, copy=False), r, codes[r], codes,
                                            np.ascontiguousarray(dist[:, :, k - 1], dtype=np.float64), kth_idx,
                                            np.ascontiguousarray(T[r]), T, np.ascontiguousarray(coef), k,
                                            not per_class, P)
            z += data.coef_sum(r, P)
        else:
            found = (idx >= 0).sum(axis=2)
            c = np.repeat(coef[:, :, None] / np.maximum(found, 1)[:, :, None], k, axis=2)
            c[idx < 0] = 0.0
            z += data.index_sum(r, idx.reshape(b, -1), c.reshape(b, -1))
    return z / rows.size


@fill_relief_docstring
class Relief(ReliefTargetMixin, ReliefBase):
    """RELIEF (Kira & Rendell 1992).

    For each instance ``R`` the nearest hit ``H`` and nearest miss ``M`` (over all
    other classes); ``W[A] += diff(A, R, M) - diff(A, R, H)``, averaged over the
    instances, with ``diff`` the range-normalised absolute difference.  By default
    every sample is an instance once (deterministic); ``n_iter`` draws that many
    instances at random instead (the original sampled form).

    Parameters
    ----------
    n_iter : int or None, default=None
        ``m`` instances drawn *with* replacement (Kira & Rendell's iterations); prefer
        ``n_instances`` (distinct instances, a smaller variance).
    normalize : bool, default=True
        Range-normalise the differences (Kira & Rendell's ``diff``).
    random_state : int, RandomState or None
        Used only when ``n_instances`` (or ``n_iter``) is set.
    {n_instances}
    {diff_params}
    {ramp_params}
    ties : {"index", "include"}, default="index"
        Equidistant neighbours: ``"index"`` takes the one with the lower sample index
        (deterministic, but it depends on the row order, which matters on discrete
        data); ``"include"`` averages over all neighbours tied at the nearest distance,
        so permuting the rows leaves the weights unchanged.
    {target_params}

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``max(scores_, 0)``.
    scores_ : ndarray of shape (n_features,)
        The raw (signed) Relief weights.
    discrete_features_ : ndarray of bool, shape (n_features,)
        The features scored as discrete.
    metric_ : str
        ``"manhattan"``.
    {target_attributes}

    Notes
    -----
    {survival_note}
    A continuous target: RReliefF with the one nearest neighbour
    (:func:`~knnweights.weighters._relief_regression.rrelieff_scores` with ``k = 1``).

    References
    ----------
    K. Kira and L. Rendell, "A practical approach to feature selection", ICML 1992.
    """

    _algorithm_version = 1
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('target_type', 'pvalues', 'n_instances', 'diff', 'ramp', 'padj', 'genotype_diff',
                         'pvalue_null', 'covariate_reference')

    _parameter_constraints = {
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
        **DIFF_CONSTRAINTS,
        **RAMP_CONSTRAINTS,
        "ties": [StrOptions({"index", "include"})],
        **TARGET_CONSTRAINTS,
        "n_instances": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }
    _pair_kind = "relief"

    def __init__(self, n_iter=None, normalize=True, random_state=None, missing="error", discrete_features=None,
                 discrete_limit=10, ties="index", target_type="auto", pvalues=False, n_instances=None, diff="linear",
                 ramp=(0.04, 0.1), padj="bh", genotype_diff=None, pvalue_null="outcome",
                 covariate_reference="redraw"):
        self.n_iter = n_iter
        self.n_instances = n_instances
        self.normalize = normalize
        self.random_state = random_state
        self.missing = missing
        self.discrete_features = discrete_features
        self.discrete_limit = discrete_limit
        self.ties = ties
        self.target_type = target_type
        self.pvalues = pvalues
        self.diff = diff
        self.ramp = ramp
        self.padj = padj
        self.genotype_diff = genotype_diff
        self.pvalue_null = pvalue_null
        self.covariate_reference = covariate_reference

    def _fit(self, X, y):
        rows = sample_rows(X.shape[0], self.n_iter, self.random_state, self.n_instances)
        ramp = self._check_ramp(X)
        if ramp is not None:
            disc = mixed_kernels.discrete_mask(X, self.discrete_features, self.discrete_limit)
            self.discrete_features_ = disc
            self.scores_ = ramp_relieff_margins(X, y, 1, rows, False, "prior", *ramp, disc)
            return self.scores_
        data = self._diff_data(X, y, force=self.ties == "include")
        if data is None:
            self.scores_ = relieff_margins(self._normalized(X), y, 1, rows, per_class=False)
        else:
            self.scores_ = mixed_relieff_margins(data, y, 1, rows, per_class=False, ties=self.ties)
        return self.scores_


@fill_relief_docstring
class ReliefF(ReliefTargetMixin, ReliefBase):
    """RELIEF-F (Kononenko 1994), as Robnik-Sikonja & Kononenko (2003) define it.

    For each instance ``R`` of class ``c``: its ``k`` nearest hits ``H_j`` and, for
    each other class ``C``, its ``k`` nearest misses ``M_j(C)``;

        W[A] += - sum_j diff(A, R, H_j) / (m k)
                + sum_{C != c} a(C) sum_j diff(A, R, M_j(C)) / (m k)

    with ``a(C) = P(C) / (1 - P(c))`` (Robnik-Sikonja & Kononenko 2003, Fig. 3), ``diff``
    the range-normalised absolute difference and neighbours by the Manhattan distance
    of the diffs.  A class with fewer than ``k`` candidates (hits: class size - 1)
    contributes the mean over all of them (``k`` clamped per class, with a warning).

    Parameters
    ----------
    n_neighbors : int, default=10
        ``k``.
    n_iter : int or None, default=None
        ``m`` instances drawn *with* replacement (Kira & Rendell's iterations); prefer
        ``n_instances`` (distinct instances, a smaller variance).
    normalize : bool, default=True
        Range-normalise the differences (Relief's ``diff``), so that features in large
        units do not dominate the distances and the weights.
    random_state : int, RandomState or None
        Used only when ``n_instances`` (or ``n_iter``) is set.
    {n_instances}
    {diff_params}
    {ramp_params}
    ties : {"index", "include"}, default="index"
        Neighbours tied at the ``k``-th distance: ``"index"`` takes the lower sample
        indices first (deterministic, but it depends on the row order, which matters on
        discrete data, where most neighbour lists tie); ``"include"`` gives those strictly
        closer weight ``1/k`` each and shares the remaining ``(k - n_closer)/k`` equally
        among all tied ones (the mean over every order of the ties), so permuting the
        rows leaves the weights unchanged.
    miss_weighting : {"prior", "equal"}, default="prior"
        ``a(C)``: ``"prior"`` is ReliefF's ``P(C) / (1 - P(c))``; ``"equal"`` is
        ``1 / (K - 1)`` for ``K`` classes (skrebate's ReliefF).  Same for two classes.
    small_classes : {"clamp", "error"}, default="clamp"
        ``n_neighbors`` above a class's hits: ``"clamp"`` uses all of them (with a
        ``UserWarning``); ``"error"`` raises a ``ValueError``.
    {target_params}
    rank_sigma : float or None, default=None
        Continuous target only: ``None`` weighs the ``k`` nearest equally (``1/k``);
        a float ``sigma`` weighs them by rank, ``exp(-(rank / sigma)^2)`` normalised
        (RReliefF's distance-weighted neighbours).

    Attributes
    ----------
    feature_importances_, scores_, discrete_features_, metric_ : as :class:`Relief`.
    pvalues_, qvalues_ : ndarray of shape (n_features,)
        With ``pvalues=True``: one-sided p-values (STIR for classes, NPDR-style for a
        continuous target) and their adjusted p-values (``padj``; Benjamini-Hochberg q-values by
        default).
    {target_attributes}

    Notes
    -----
    {survival_note}
    A continuous target is scored by RReliefF (Robnik-Sikonja & Kononenko 2003, Sec. 2.3,
    the RReliefF pseudo code): the probabilities of a different prediction, a different feature value and
    both, estimated over the ``k`` nearest neighbours (see
    :func:`~knnweights.weighters._relief_regression.rrelieff_scores`).

    References
    ----------
    I. Kononenko, "Estimating attributes: analysis and extensions of RELIEF", ECML 1994.
    M. Robnik-Sikonja and I. Kononenko, "Theoretical and empirical analysis of ReliefF
    and RReliefF", Machine Learning 53, 2003.
    """

    _algorithm_version = 1
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('target_type', 'pvalues', 'rank_sigma', 'n_instances', 'diff', 'ramp', 'padj',
                         'genotype_diff', 'pvalue_null', 'covariate_reference')

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
        **DIFF_CONSTRAINTS,
        **RAMP_CONSTRAINTS,
        "ties": [StrOptions({"index", "include"})],
        "miss_weighting": [StrOptions({"prior", "equal"})],
        "small_classes": [StrOptions({"clamp", "error"})],
        **TARGET_CONSTRAINTS,
        "rank_sigma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_instances": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }
    _pair_kind = "relieff"

    def __init__(self, n_neighbors=10, n_iter=None, normalize=True, random_state=None, missing="error",
                 discrete_features=None, discrete_limit=10, ties="index", miss_weighting="prior",
                 small_classes="clamp", target_type="auto", pvalues=False, rank_sigma=None, n_instances=None,
                 diff="linear", ramp=(0.04, 0.1), padj="bh", genotype_diff=None, pvalue_null="outcome",
                 covariate_reference="redraw"):
        self.n_neighbors = n_neighbors
        self.n_instances = n_instances
        self.n_iter = n_iter
        self.normalize = normalize
        self.random_state = random_state
        self.missing = missing
        self.discrete_features = discrete_features
        self.discrete_limit = discrete_limit
        self.ties = ties
        self.miss_weighting = miss_weighting
        self.small_classes = small_classes
        self.target_type = target_type
        self.pvalues = pvalues
        self.rank_sigma = rank_sigma
        self.diff = diff
        self.ramp = ramp
        self.padj = padj
        self.genotype_diff = genotype_diff
        self.pvalue_null = pvalue_null
        self.covariate_reference = covariate_reference

    def _fit(self, X, y):
        ramp = self._check_ramp(X)
        self._check_n_neighbors(self.n_neighbors, y,
                                clamp="small_classes='error'" if self.small_classes == "clamp" else None)
        rows = sample_rows(X.shape[0], self.n_iter, self.random_state, self.n_instances)
        if ramp is not None:
            disc = mixed_kernels.discrete_mask(X, self.discrete_features, self.discrete_limit)
            self.discrete_features_ = disc
            self.scores_ = ramp_relieff_margins(X, y, self.n_neighbors, rows, True, self.miss_weighting, *ramp, disc)
            return self.scores_
        data = self._diff_data(X, y, force=self.ties == "include")
        if data is None:
            self.scores_ = relieff_margins(self._normalized(X), y, self.n_neighbors, rows, per_class=True,
                                           miss_weighting=self.miss_weighting)
        else:
            self.scores_ = mixed_relieff_margins(data, y, self.n_neighbors, rows, per_class=True,
                                                 miss_weighting=self.miss_weighting, ties=self.ties)
        return self.scores_
