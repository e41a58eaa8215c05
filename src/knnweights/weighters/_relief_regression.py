"""Continuous targets and p-values for the Relief family (the hooks its estimators mix in).

* :func:`rrelieff_scores`: RReliefF (Robnik-Sikonja & Kononenko 2003, Sec. 2.3, its pseudo code), the
  regression form of ReliefF (and of Relief, with one neighbour).
* :func:`radius_regression_scores`: SURF / MultiSURF with scikit-rebate's continuous-endpoint
  rule (a neighbour is a "hit" when its target is within one standard deviation).
* :class:`ReliefTargetMixin`: the ``fit`` of those classes: detects a continuous ``y`` (as
  :func:`sklearn.utils.multiclass.type_of_target`, overridable by ``target_type``) or a survival
  outcome (a structured ``y``, scored as the continuous outcome of its martingale residuals,
  :mod:`._relief_survival`), runs the regression form, and sets ``pvalues_`` / ``qvalues_`` when
  ``pvalues=True`` (STIR for classes, the NPDR-style regression of pair differences for a continuous target; the
  statistics live in :mod:`knnweights.significance`).

Distances, neighbour selection and the pair sums all run on the shared engine
(:mod:`knnweights.engine.neighbors`, :mod:`knnweights.engine._kernels_mixed`), with the same
missing-value (``missing="diff"``) and discrete-feature options as the class targets.
"""

import warnings

import numpy as np

from ..engine import mixed_kernels as _kernels_mixed
from ..engine._docs import data_doc
from ..engine.genotypes import ByteDiff, is_byte_input
from ..engine.neighbors import hard_margin_vectors
from ..engine.neighbors import on_gpu as _on_gpu
from ..utils import validate_params
from ._relief_covariate_moments import covariate_moment_pvalues
from ._relief_covariates import check_covariates, covariate_pvalues, refuse_covariates
from ._relief_margins import (
    RADIUS_BLOCK_ARRAYS,
    RampDiff,
    in_radius,
    multisurf_thresholds,
    radius_pairs,
    range_normalize,
    sample_rows,
    select_block,
)
from ._relief_pvalues import PairMoments, adjust_pvalues
from ._relief_survival import check_survival_target, is_survival_target, martingale_residuals
from ._validation import is_continuous_target, validate_continuous_fit_data

__all__ = ["ReliefTargetMixin", "rrelieff_scores", "radius_regression_scores", "TARGET_DOC", "PVALUES_DOC"]

TARGET_DOC = """target_type : {"auto", "classes", "continuous", "survival"}, default="auto"
        ``"auto"``: ``y`` is a survival outcome when it is a structured array with the
        fields ``event`` and ``time``, a continuous target when scikit-learn's
        ``type_of_target`` says ``"continuous"`` (floats that are not all integers), class
        labels otherwise; ``"continuous"`` forces the regression form (e.g. integer counts),
        ``"classes"`` refuses a continuous ``y``, ``"survival"`` requires a survival
        outcome.  A survival outcome is scored as the continuous outcome of its martingale
        residuals under a Cox model without covariates (``martingale_residuals_``; see
        :mod:`knnweights.weighters._relief_survival`)."""

PVALUES_DOC = """pvalues : bool or {"mantel", "pseudo-t"}, default=False
        Also compute ``pvalues_`` (one-sided, "the feature's neighbour differences are
        larger across the outcome than within it") and their Benjamini-Hochberg
        ``qvalues_``, from the covariance of each feature's pair differences with the
        outcome's over neighbour pairs: for classes STIR's hit / miss contrast, for a
        continuous target NPDR's regression (see
        :class:`knnweights.significance.PairMoments`).  ``True`` or ``"mantel"``: against
        the distribution of that statistic when the outcome (with ``pvalue_null="feature"``:
        the feature's values) is permuted over the samples, the pairs held fixed (through
        its exact mean, variance and third moment; pairs that share a sample are correlated,
        and this null accounts for it).  The pairs are the
        fit's when it finds them without the outcome (SURF / MultiSURF's radius, the ``k``
        nearest for a continuous target); for Relief / ReliefF on classes, whose hits and
        misses are chosen by the labels, they are each instance's nearest instances, as
        many as it has hits and misses (``k`` per class), so that the permutation null is
        exact.  ``"pseudo-t"``: the published STIR / NPDR t-test on the fit's own pairs,
        taken as independent (too small p-values under the null).  Costs one more
        neighbour pass.  Not available with missing values (use
        :func:`knnweights.permutation_pvalues`).
    padj : {"bh", "bonferroni", "holm", "by"}, default="bh"
        The adjustment of ``qvalues_`` (:func:`knnweights.significance.adjust_pvalues`):
        Benjamini-Hochberg, Bonferroni, Holm or Benjamini-Yekutieli; ``qvalues_`` holds the adjusted
        p-values of that method.
    pvalue_null : {"outcome", "feature"}, default="outcome"
        What the ``"mantel"`` reference permutes over the samples, the pairs held fixed:
        ``"outcome"``, the outcome (the null "the outcome is unrelated to every feature");
        ``"feature"``, the feature's own values (the null "this feature is unrelated to the
        outcome and to the other features"), which still holds for a noise feature when other
        features carry signal, where the outcome permutation misleads (neighbours then share
        outcomes: too many small p-values for classes); exact up to the feature's own part in
        the distances, which makes it conservative, less so as features are added.  See
        :class:`knnweights.significance.PairMoments` and the guide's "Which permutation".
        About the same cost; not with ``pvalues="pseudo-t"`` nor with ``covariates``.
    covariate_reference : {"redraw", "moments"}, default="redraw"
        The reference of the ``"mantel"`` p-values with ``fit(..., covariates=C)``: ``"redraw"``,
        outcomes redrawn given the covariates, at most 999 times (Monte Carlo p-values, exactly
        valid, none below 0.001; :mod:`knnweights.weighters._relief_covariates`); ``"moments"``
        (class labels only), the same reference's exact mean, variance and third moment and the
        saddlepoint tail of the unadjusted p-values: no floor, and one pass over the pairs
        instead of the redraws (:mod:`knnweights.weighters._relief_covariate_moments`)."""


def _diff_data(est, X, codes):
    """The estimator's ``diff`` data: the ramp's ``RampDiff`` with ``diff="ramp"``,
    :class:`~_kernels_mixed.DiffData` when discrete features or missing values ask for it, else
    :class:`~_kernels_mixed.PlainDiff` of the (normalised) ``X``."""
    data = est._weights_data(X, codes)
    return _kernels_mixed.PlainDiff(est._normalized(X)) if data is None else data


def _nearest(data, codes, k, rows, per_class):
    """``(n_rows, C, k)`` neighbour indices: per class (``per_class``) or ``C = 2`` (hits, misses);
    with one class (``codes`` all 0) the hits are the ``k`` nearest samples.  Equal distances (the
    engine's tie rule): lower index."""
    every = rows is None
    nr = data.n if every else rows.size
    rows_all = np.arange(data.n) if every else rows
    n_classes = int(codes.max()) + 1
    idx = np.empty((nr, n_classes if per_class else 2, k), np.int64)
    T = data.tie_tolerance()
    for s, e, D in data.distance_chunks(None if every else rows):
        r = np.ascontiguousarray(rows_all[s:e])
        idx[s:e] = select_block(np.ascontiguousarray(D), r, codes, k, per_class, n_classes, T)[0]
    return rows_all, idx


def _index_sum(data, rows, idx, coef):
    """``sum_r sum_t coef[r, t] diff(rows[r], idx[r, t])`` (shape ``(d,)``) on the shared kernels."""
    if isinstance(data, _kernels_mixed.PlainDiff):
        empty = np.empty((rows.size, 0), np.int64)
        return hard_margin_vectors(data.Z, empty, idx, "manhattan", hit_coef=np.empty((rows.size, 0)),
                                   miss_coef=coef, rows=rows)
    return data.index_sum(rows, idx, coef)


def rank_weights(k, sigma):
    """RReliefF's neighbour weights ``d(i, j)`` over the ``k`` nearest, by rank (1 = nearest).

    ``sigma=None``: ``1/k`` each.  Else ``d1(i, j) = exp(-(rank(R_i, I_j) / sigma)^2)``
    normalised to sum 1 (Robnik-Sikonja & Kononenko 2003, Sec. 2.3, the exponentially
    decreasing influence of farther neighbours).

    Parameters
    ----------
    k : int
        Number of neighbours.
    sigma : float or None
        Rank scale; ``None``: equal weights.

    Returns
    -------
    weights : ndarray of shape (k,)
        The weight of each rank, summing to 1.
    """
    if sigma is None:
        return np.full(k, 1.0 / k)
    d1 = np.exp(-((np.arange(1, k + 1) / float(sigma)) ** 2))
    return d1 / d1.sum()


@data_doc
def rrelieff_scores(data, y, k, rows=None, sigma=None):
    """RReliefF weights (Robnik-Sikonja & Kononenko 2003, Sec. 2.3, the pseudo code of RReliefF).

    For each instance ``R_i`` (the ``rows``, all by default) and its ``k`` nearest
    instances ``I_j`` (Relief's ``diff`` distance, self excluded, ties by the lower index),
    with neighbour weights ``d(i, j)`` (:func:`rank_weights`, summing to 1) and
    ``diff(tau, R, I) = |y_R - y_I| / (max y - min y)``::

        N_dC     = sum_ij diff(tau, R_i, I_j) d(i, j)
        N_dA[A]  = sum_ij diff(A, R_i, I_j) d(i, j)
        N_dCdA[A] = sum_ij diff(tau, R_i, I_j) diff(A, R_i, I_j) d(i, j)
        W[A] = N_dCdA[A] / N_dC - (N_dA[A] - N_dCdA[A]) / (m - N_dC)

    the estimate of ``P_diffC|diffA P_diffA / P_diffC - (1 - P_diffC|diffA) P_diffA / (1 - P_diffC)``
    with ``m`` instances.

    {diff_target}
    k : int
        Nearest neighbours per instance.
    rows : ndarray of int or None, default=None
        The instances; ``None``: every sample.
    sigma : float or None, default=None
        Rank scale of the neighbour weights (:func:`rank_weights`).

    Returns
    -------
    scores : ndarray of shape (n_features,)
        The RReliefF weights ``W``.
    """
    zeros = np.zeros(data.n, np.int64)
    rows, idx = _nearest(data, zeros, k, rows, per_class=False)
    idx = np.ascontiguousarray(idx[:, 0])  # the k nearest (all "hits" of the one class)
    valid = idx >= 0
    span = float(np.ptp(y))
    dy = np.where(valid, np.abs(y[rows][:, None] - y[np.maximum(idx, 0)]) / span, 0.0)
    found = valid.sum(axis=1)
    dw = np.zeros(idx.shape)
    for f in np.unique(found):  # fewer than k found only when n - 1 < k
        sel = found == f
        if f:
            dw[sel, :f] = rank_weights(int(f), sigma)
    m = float(rows.size)
    n_dc = float((dw * dy).sum())
    n_da = _index_sum(data, rows, idx, dw)
    n_dcda = _index_sum(data, rows, idx, dw * dy)
    first = n_dcda / n_dc if n_dc > 0 else np.zeros_like(n_dcda)
    second = (n_da - n_dcda) / (m - n_dc) if m - n_dc > 0 else np.zeros_like(n_dcda)
    return first - second


def _radius_thresholds(data, rule):
    """SURF's ``T`` (one value, repeated) or MultiSURF's ``T_i``, as :func:`.surf.radius_margins`."""
    n = data.n
    T = np.empty(n)
    for s, e, D in data.distance_chunks(n_arrays=RADIUS_BLOCK_ARRAYS):
        T[s:e] = D.sum(axis=1, dtype=np.float64) if rule == "mean" else multisurf_thresholds(D, s)
    if rule == "mean":
        T[:] = T.sum() / float(n) ** 2
    return T


def _hit_miss_table(counts):
    """``(b, 2)``: ``-1/h_i`` for a hit and ``1/m_i`` for a miss from the ``(b, 2)`` counts (0 with none)."""
    counts = counts.astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.stack([-np.where(counts[:, 0] > 0, 1.0 / counts[:, 0], 0.0),
                         np.where(counts[:, 1] > 0, 1.0 / counts[:, 1], 0.0)], axis=1)


@data_doc
def radius_regression_scores(data, y, rule, thresholds=None):
    """SURF / MultiSURF scores for a continuous target, scikit-rebate's continuous-endpoint rule.

    The neighbourhood ``N_i`` is the class-target one (``d_ij < T_i``, see :class:`.surf.SURF`
    and :class:`.surf.MultiSURF`); a neighbour ``j`` is a *hit* when
    ``|y_i - y_j| < s_y`` (``s_y`` the sample standard deviation of ``y``, ``ddof=1``), else
    a *miss*; with ``h_i`` hits and ``m_i`` misses::

        W[A] = (1/n) sum_i [ - 1/h_i sum_{hits j} diff(A, x_i, x_j) + 1/m_i sum_{misses j} diff(A, x_i, x_j) ]

    (a term with no neighbour left out).

    {diff_target}
    rule : {"mean", "mean-std/2"}
        SURF's or MultiSURF's threshold.
    thresholds : ndarray of shape (n_samples,) or None, default=None
        Thresholds computed already; ``None``: from ``data``.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        The weights ``W``.
    thresholds : ndarray of shape (n_samples,)
        ``T_i``.
    """
    n = data.n
    chunks = data.distance_chunks(n_arrays=RADIUS_BLOCK_ARRAYS)
    first = next(chunks)
    if first[1] - first[0] == n:  # one block: the thresholds from the same distances (one pass)
        blocks = [first]
        if thresholds is None:
            D = first[2]
            thresholds = (np.full(n, D.sum(axis=1, dtype=np.float64).sum() / float(n) ** 2) if rule == "mean"
                          else multisurf_thresholds(D, 0))
    else:
        blocks = data.distance_chunks(n_arrays=RADIUS_BLOCK_ARRAYS)
        if thresholds is None:
            thresholds = _radius_thresholds(data, rule)
    T = thresholds
    s_y = float(np.std(y, ddof=1))
    # the one block of PlainDiff on the CPU: the compiled symmetric distances
    plain = isinstance(data, _kernels_mixed.PlainDiff) and not _on_gpu()
    z = np.zeros(data.d)
    for s, e, D in blocks:
        rows = np.arange(s, e)
        z += data.coef_sum(rows, radius_pairs(D, T[s:e], s, y[s:e], y, 2, _hit_miss_table, kind=1, s=s_y,
                                               fold=e - s == n, symmetric=plain))
    return z / n, T


def _covariate_search_data(est, X, codes, covariates):
    """The ``diff`` data of ``X`` with the covariates as further columns (categorical ones discrete), on
    which ``neighbors_with_covariates=True`` finds the p-values' pairs."""
    values, categorical = covariates[0], covariates[1]
    X = np.asarray(X, dtype=np.float64)
    disc = np.concatenate([np.asarray(getattr(est, "discrete_features_", np.zeros(X.shape[1], bool)), bool),
                           categorical])
    ramp = est._ramp_thresholds()
    if ramp is not None:  # the ramp diff: the covariates' columns take it too (a categorical one its 0/1 mismatch)
        return RampDiff(np.hstack([X, values]), *ramp, disc)
    _, normalize, divisor = est._reading(X)
    if divisor is not None:  # allele sharing's fixed scale on X; the covariates range-normalised as by default
        X, values, normalize = X / divisor, range_normalize(np.asarray(values, dtype=np.float64)), False
    Xa = np.hstack([X, values])
    M = _kernels_mixed.build_mixed(Xa, codes, int(codes.max()) + 1, disc, normalize, dtype=np.float64)
    return _kernels_mixed.DiffData(M)


def _pair_moments(est, data, outcome, kind, method, search=None):
    """The neighbour pairs of ``est``'s p-values (``PVALUES_DOC``) in a
    :class:`~knnweights.significance.PairMoments`; found on ``search`` (default: ``data``)."""
    moments = PairMoments(data)
    moments.set_outcome(outcome, kind)
    _refuse_sampled_radius(est, "pvalues=True")
    if est._pair_kind == "radius":  # the radius: found without the outcome
        if search is None:
            search = data
            T = np.full(data.n, est.threshold_) if hasattr(est, "threshold_") else est.thresholds_
        else:  # the radius rule on the distances with the covariates
            T = _radius_thresholds(search, est._rule)
        for s, e, D in search.distance_chunks(n_arrays=RADIUS_BLOCK_ARRAYS):
            moments.add_dense(np.arange(s, e), in_radius(D, T[s:e], s))
        return moments
    search = data if search is None else search
    n = data.n
    k = 1 if est._pair_kind == "relief" else min(int(est.n_neighbors), n - 1)
    rows = _scored_rows(est, n)
    rows = None if rows is None else np.unique(rows)  # each pair once: an instance sampled twice counts once
    zeros = np.zeros(n, np.int64)
    if kind == "classes" and method == "pseudo-t":  # STIR's: the fit's hits and misses, chosen by the labels
        rows, idx = _nearest(search, outcome, k, rows, per_class=est._pair_kind == "relieff")
    else:  # as many nearest instances as the fit has hits and misses, found without the labels
        per = 1 if kind == "continuous" else (int(outcome.max()) + 1 if est._pair_kind == "relieff" else 2)
        rows, idx = _nearest(search, zeros, min(k * per, n - 1), rows, per_class=False)
        idx = idx[:, 0]
    moments.add_index(rows, idx)
    return moments


def _scored_rows(est, n):
    """The instances ``est`` scores (``None``: all), as its class-target fit samples them."""
    return sample_rows(n, getattr(est, "n_iter", None), getattr(est, "random_state", None),
                  getattr(est, "n_instances", None))


def _refuse_sampled_radius(est, what):
    if est._pair_kind == "radius" and getattr(est, "n_instances", None) is not None:
        raise NotImplementedError(
            f"{type(est).__name__}(n_instances=...) with {what} is not implemented: its neighbourhoods are scored "
            "over every instance; leave n_instances=None, or use knnweights.permutation_pvalues.")


class ReliefTargetMixin:
    """``fit`` for the Relief classes with a continuous-target form and p-values.

    A class sets ``_pair_kind`` (``"relief"``, ``"relieff"`` or ``"radius"``) and has the
    parameters ``target_type`` and ``pvalues``, or overrides ``_continuous_scores`` (then
    ``pvalues`` is optional).  Class targets run the class's own ``_fit`` unchanged; a
    continuous target runs ``_continuous_scores``.
    """

    def fit(self, X, y, covariates=None, neighbors_with_covariates=False):
        """Learn the feature weights for class labels or a continuous target.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training samples (or a byte genotype matrix: class labels or a continuous target).
        y : array-like of shape (n_samples,)
            Class labels of any type, or a continuous target (see ``target_type``).
        covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
            Adjust ``pvalues_`` (and ``qvalues_``) for these (needs ``pvalues``): NPDR's
            regression of each feature's neighbour-pair differences on the outcome's and the
            covariates' pair differences (a numeric covariate ``|c_i - c_j|``, a categorical one
            -- pandas category, object, string or bool -- ``[c_i != c_j]``), the outcome's
            coefficient tested against outcomes redrawn given the covariates (a survival
            outcome: from a Cox model on them; see
            :mod:`knnweights.weighters._relief_covariates`).  The neighbours are found on ``X``
            alone and the weights do not change.  One row per sample, in ``X``'s order, no
            missing values.
        neighbors_with_covariates : bool, default=False
            Find the p-values' neighbour pairs on ``X`` and the covariates together (each covariate
            one more column of the ``diff`` distance: range-normalised with ``normalize``, a 0/1
            mismatch when categorical, a numeric one's ramp with ``diff="ramp"``), so that pairs are
            also close in the covariates; the
            weights still use ``X`` alone.  The pairs are found without the outcome either way,
            which keeps the reference exact.

        Returns
        -------
        self : estimator
            The fitted weighter.
        """
        validate_params(self)
        for attr in ("pvalues_", "qvalues_", "target_type_"):
            self.__dict__.pop(attr, None)
        self._fit_covariates = None
        if neighbors_with_covariates and covariates is None:
            raise ValueError(f"{type(self).__name__}.fit: neighbors_with_covariates=True needs covariates=C.")
        if covariates is not None:
            if not getattr(self, "pvalues", False):
                raise refuse_covariates(self)
            n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
            self._fit_covariates = check_covariates(covariates, n_rows, type(self).__name__, X) + (
                bool(neighbors_with_covariates),)
        # the body stays in fit (no helper frame), so warnings' stacklevels point at the user's call
        try:
            self.__dict__.pop("martingale_residuals_", None)
            if self.target_type == "survival" or (self.target_type == "auto" and is_survival_target(y)):
                return self._fit_survival(X, y)
            if is_survival_target(y):
                raise ValueError(f"{type(self).__name__}: y is a structured array (a survival outcome) but "
                                 f"target_type={self.target_type!r}; use target_type='survival' or 'auto'.")
            if is_byte_input(X):  # genotype bytes: the Relief base's byte path (classes or continuous, pvalues_)
                if neighbors_with_covariates:
                    raise NotImplementedError(
                        f"{type(self).__name__}.fit: neighbors_with_covariates=True is not implemented for genotype "
                        "bytes (the search distance would need the covariates beside the byte blocks); leave it "
                        "False (pairs found on the genotypes) or give X as floats.")
                super().fit(X, y)
                self.target_type_ = "continuous" if is_continuous_target(y, self.target_type) else "classes"
                return self
            if is_continuous_target(y, self.target_type):
                X, yv = validate_continuous_fit_data(self, X, y)
                self.target_type_ = "continuous"
                return self._fit_weights(X, None, lambda X, _: self._continuous_scores(X, yv), stacklevel=3)
            X, codes = self._validate_fit_data(X, y)
            self.target_type_ = "classes"
            return self._fit_weights(X, codes, self._fit_classes, stacklevel=3)
        finally:
            del self._fit_covariates

    def _fit_survival(self, X, y):
        """A survival outcome: the continuous form on the martingale residuals of the null Cox model."""
        name = type(self).__name__
        event, time = check_survival_target(y, f"{name}.fit")
        if is_byte_input(X):
            raise NotImplementedError(f"{name} on genotype bytes scores class labels and continuous targets; for a "
                                      "survival outcome give X as floats.")
        M = martingale_residuals(time, event)
        if not np.ptp(M) > 0:
            raise ValueError(f"{name}.fit: the survival outcome's martingale residuals are all equal (every sample "
                             "has the event at the same time); nothing to relate the features to.")
        X, yv = validate_continuous_fit_data(self, X, M)
        self.target_type_ = "survival"
        self.martingale_residuals_ = yv
        self._fit_survival_outcome = (time, event)  # the covariates' reference redraws it (covariate_pvalues)
        try:
            return self._fit_weights(X, None, lambda X, _: self._continuous_scores(X, yv), stacklevel=4)
        finally:
            del self._fit_survival_outcome

    def _check_pvalue_data(self, data):
        missing = (isinstance(data, _kernels_mixed.DiffData) and data.M.has_missing) or (
            isinstance(data, ByteDiff) and data.has_missing)
        if self.pvalues and missing:
            raise NotImplementedError(
                f"{type(self).__name__}(pvalues=True) is not defined with missing values (the pair moments of "
                "the expected diff are not those of a diff); use knnweights.permutation_pvalues instead.")

    def _set_pvalues(self, data, outcome, kind, X=None):
        method = "pseudo-t" if self.pvalues == "pseudo-t" else "mantel"
        covariates = getattr(self, "_fit_covariates", None)
        null = getattr(self, "pvalue_null", "outcome")
        if null == "feature" and method == "pseudo-t":
            raise ValueError(f"{type(self).__name__}: pvalue_null='feature' is a permutation reference and "
                             "pvalues='pseudo-t' has none; use pvalues=True with it.")
        if null == "feature" and covariates is not None:
            raise NotImplementedError(
                f"{type(self).__name__}.fit: pvalue_null='feature' with covariates is not implemented: permuting a "
                "feature breaks its tie to the covariates, so the reference would not be that of a feature null "
                "given them. Use pvalue_null='outcome' with covariates.")
        search = None
        if covariates is not None and covariates[3]:
            codes = outcome if kind == "classes" else np.zeros(data.n, np.int64)
            search = _covariate_search_data(self, X, codes, covariates)
        moments = _pair_moments(self, data, outcome, kind, method, search)
        if covariates is None:
            self.pvalues_ = moments.pvalues(method, null)
        elif method == "mantel" and getattr(self, "covariate_reference", "redraw") == "moments":
            if kind != "classes":
                raise NotImplementedError(
                    f"{type(self).__name__}: covariate_reference='moments' is defined for class labels (their "
                    "redrawn classes' moments have a closed form); use covariate_reference='redraw' for a "
                    f"{'survival' if getattr(self, '_fit_survival_outcome', None) else 'continuous'} outcome.")
            self.pvalues_ = covariate_moment_pvalues(moments, outcome, covariates)
        else:
            self.pvalues_ = covariate_pvalues(moments, outcome, kind, covariates, method,
                                              getattr(self, "random_state", None),
                                              survival=getattr(self, "_fit_survival_outcome", None))
        self.qvalues_ = adjust_pvalues(self.pvalues_, getattr(self, "padj", "bh"))

    def _fit_classes(self, X, codes):
        w = self._fit(X, codes)
        if getattr(self, "pvalues", False):
            data = _diff_data(self, X, codes)  # the pairs' differences in the weights' diff
            self._check_pvalue_data(data)
            self._set_pvalues(data, codes, "classes", X)
        return w

    def _continuous_scores(self, X, y):
        if getattr(self, "ties", "index") != "index":
            raise NotImplementedError(
                f"{type(self).__name__}: ties={self.ties!r} is defined for class targets only; use ties='index' "
                "with a continuous target.")
        _refuse_sampled_radius(self, "a continuous target")
        codes = np.zeros(X.shape[0], np.int64)  # one class: the missing-value tables use all samples
        data = _diff_data(self, X, codes)  # neighbours (or the radius) and sums in the weights' diff
        self._check_pvalue_data(data)
        if self._pair_kind == "radius":
            scores, T = radius_regression_scores(data, y, self._rule)
            self._store_thresholds(T)
        else:
            k = 1 if self._pair_kind == "relief" else int(self.n_neighbors)
            if k > X.shape[0] - 1:
                msg = f"n_neighbors={k} is larger than the number of other samples ({X.shape[0] - 1})."
                if getattr(self, "small_classes", "clamp") != "clamp":
                    raise ValueError(msg + f" Use n_neighbors <= {X.shape[0] - 1}.")
                warnings.warn(msg + " Clamped: all of them are used; set small_classes='error' to raise instead.",
                              UserWarning, stacklevel=5)
                k = X.shape[0] - 1
            rows = _scored_rows(self, X.shape[0])
            scores = rrelieff_scores(data, y, k, rows, getattr(self, "rank_sigma", None))
        if self.pvalues:
            self._set_pvalues(data, y, "continuous", X)
        self.scores_ = scores
        return scores
