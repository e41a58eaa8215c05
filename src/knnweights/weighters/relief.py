"""The Relief family: Relief, ReliefF, SURF, MultiSURF, I-RELIEF and MulRel on the shared neighbour engine.

One engine, several variants (as CORElearn does): the neighbours (nearest, k nearest
per class, all within a distance threshold, kernel-soft), the sample weighting (priors, outlier probabilities) and the
iteration (once, or re-weighted neighbours) are the axes; distances, neighbour search
and margin vectors all come from :mod:`knnweights.engine.neighbors`.
"""

import numbers
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..engine import get_config, kernels, mixed_kernels
from ..engine.neighbors import (
    coef_phi_rows,
    distance_chunks,
    entropy_from_log,
    hard_margin_vectors,
    nearest_by_class,
    nearest_hits_misses,
    on_gpu,
    row_log_softmax,
    soft_margins,
    weighted_distances,
)
from ..utils import Interval, StrOptions
from ._base import BaseWeighter, check_finite_columns, normalize_weights
from ._relief_regression import PVALUES_DOC, TARGET_DOC, ReliefTargetMixin

__all__ = ["Relief", "ReliefF", "IRelief", "MulRel", "SURF", "MultiSURF", "range_normalize"]


def range_normalize(X):
    """Divide each feature by its range (max - min); constant features stay 0-difference.

    This is Relief's ``diff(A, I1, I2) = |I1_A - I2_A| / (max A - min A)``
    (Robnik-Sikonja & Kononenko 2003, eq. 2), applied once to the data.
    """
    rng = X.max(axis=0) - X.min(axis=0)
    return X / np.where(rng > 0, rng, 1.0)


def _sample_rows(n, n_iter, random_state, n_instances=None):
    """The instances scored: all rows (``None``), ``n_instances`` distinct rows drawn without
    replacement (all of them, exact, when ``n_instances >= n``), or ``n_iter`` draws with
    replacement."""
    if n_instances is not None:
        if n_iter is not None:
            raise ValueError("n_iter and n_instances both set: give one (n_instances: m distinct instances; "
                             "n_iter: m draws with replacement).")
        if n_instances >= n:
            return None
        return np.sort(check_random_state(random_state).choice(n, size=n_instances, replace=False))
    if n_iter is None:
        return None
    return check_random_state(random_state).randint(0, n, size=n_iter)


_N_INSTANCES_DOC = """n_instances : int or None, default=None
        Relief's ``m``: score from ``m`` instances drawn at random without replacement
        (``random_state``) against all rows, ``O(m n d)`` instead of ``O(n^2 d)``, memory
        ``O(block x n)``.  ``None`` (or ``m >= n``): every sample, exact and deterministic.
        The estimate is the mean of ``m`` of the ``n`` per-instance margin vectors ``z_i``,
        so its variance is ``var_i(z_if) / m * (n - m) / (n - 1)`` per feature (the
        finite-population correction: 0 at ``m = n``); the standard error falls as
        ``1 / sqrt(m)`` (measured in benchmarks/bench_genomics.md)."""


def relieff_margins(Z, codes, n_neighbors=1, rows=None, w=None, metric="manhattan", per_class=True,
                    miss_weighting="prior"):
    """Mean ReliefF margin vector over the query ``rows`` (Kononenko 1994, ReliefF).

    For each query ``R`` of class ``c``: the ``k`` nearest hits and, for every other
    class ``C``, its ``k`` nearest misses; the margin vector is
    ``sum_C a(C) * mean_k diff(R, M_k(C)) - mean_k diff(R, H_k)`` with
    ``a(C) = P(C)/(1 - P(c))`` (``miss_weighting="prior"``) or ``1/(K - 1)`` (``"equal"``).
    A class with fewer than ``k`` candidates contributes the mean over all of them (the
    per-class clamp).  With ``per_class=False`` the ``k`` nearest misses are taken among
    all misses (Relief's rule), unweighted.  ``w`` weights the distance that picks
    neighbours (MulRel); ``None`` is unweighted.  Ties: the lower sample index first.

    Returns
    -------
    ndarray of shape (d,), the mean over the queries.
    """
    n = Z.shape[0]
    rows = np.arange(n) if rows is None else rows
    k = n_neighbors
    if not per_class:
        nb = nearest_hits_misses(Z, codes, w, k, metric, rows=rows)
        # 1/k each, or 1/(number found) where fewer than k hits / misses exist (the clamp)
        hit_coef = np.repeat(1.0 / np.maximum((nb.hit_idx >= 0).sum(axis=1), 1)[:, None], k, axis=1)
        miss_coef = np.repeat(1.0 / np.maximum((nb.miss_idx >= 0).sum(axis=1), 1)[:, None], k, axis=1)
        return hard_margin_vectors(Z, nb.hit_idx, nb.miss_idx, "manhattan", hit_coef=hit_coef, miss_coef=miss_coef,
                                   rows=rows) / rows.size
    n_classes = int(codes.max()) + 1
    idx, _ = nearest_by_class(Z, codes, w, k, metric, n_classes=n_classes, rows=rows)
    coef = _class_coefficients(codes, rows, n_classes, miss_weighting)
    found = (idx >= 0).sum(axis=2)  # k, or fewer for a class with fewer candidates
    coef = np.repeat(coef[:, :, None] / np.maximum(found, 1)[:, :, None], k, axis=2)
    coef[idx < 0] = 0.0
    empty = np.empty((rows.size, 0), np.int64)
    z = hard_margin_vectors(Z, empty, idx.reshape(rows.size, -1), "manhattan", hit_coef=np.empty((rows.size, 0)),
                            miss_coef=coef.reshape(rows.size, -1), rows=rows)
    return z / rows.size


def _class_coefficients(codes, rows, n_classes, miss_weighting):
    """``(n_rows, K)``: -1 for the own class, the miss-class weight ``a(C)`` for the others."""
    own = codes[rows]
    if miss_weighting == "equal":
        coef = np.full((rows.size, n_classes), 1.0 / (n_classes - 1))
    else:
        prior = np.bincount(codes, minlength=n_classes) / codes.shape[0]
        coef = prior[None, :] / (1.0 - prior[own])[:, None]
    coef[np.arange(rows.size), own] = -1.0
    return coef


def select_block(D, rows, codes, k, per_class, n_classes, T):
    """The ``k`` nearest of the rows ``rows`` of a distance block ``D`` (the sample itself left out):
    per class (``per_class``; ``(b, n_classes, k)``) or hits and misses (``(b, 2, k)``), indices and
    distances, ``-1`` / ``inf`` where fewer exist; equal distances (the engine's tie rule, ``T`` the
    data's per-row tolerances) to the lower index."""
    b = rows.size
    T_rows = np.ascontiguousarray(T[rows])
    if per_class:
        idx = np.empty((b, n_classes, k), np.int64)
        dist = np.empty((b, n_classes, k), D.dtype)
        kernels.select_neighbors(D, rows, codes[rows], codes, n_classes, k, T_rows, T, idx, dist)
        return idx, dist
    hi, hd = np.empty((b, k), np.int64), np.empty((b, k), D.dtype)
    mi, md = np.empty((b, k), np.int64), np.empty((b, k), D.dtype)
    kernels.select_hits_misses(D, rows, codes[rows], codes, k, T_rows, T, hi, hd, mi, md)
    return np.stack([hi, mi], axis=1), np.stack([hd, md], axis=1)


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
    """
    n = codes.shape[0]
    every = rows is None
    rows = np.arange(n) if every else np.asarray(rows, dtype=np.int64)
    k = int(n_neighbors)
    n_classes = int(codes.max()) + 1
    if per_class:
        coef_all = _class_coefficients(codes, rows, n_classes, miss_weighting)
    else:
        coef_all = np.tile(np.array([-1.0, 1.0]), (rows.size, 1))
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


_DIFF_PARAMS_DOC = """missing : {"error", "diff"}, default="error"
        ``"error"``: ``NaN`` in ``X`` is refused (one-line error naming the column).
        ``"diff"``: a missing value is scored with Kononenko's (1994) ``diff`` for unknown
        values, as Robnik-Sikonja & Kononenko (2003, Sec. 2.6) use it: with one value
        unknown, the probability that the two values differ given the other instance's
        class (discrete: ``1 - P(x | c)``; continuous: the expected range-normalised
        difference to that class's known values), with both unknown
        ``1 - sum_v P(v | c_1) P(v | c_2)`` (continuous: the expected difference of two
        draws); the probabilities are the class-conditional frequencies of the known
        values.  Neighbours are found with the same ``diff``.
    discrete_features : {"auto"}, bool, array-like of bool or int, or None, default=None
        Features scored as discrete: ``diff`` is 0 for equal and 1 for different values
        (never range-normalised), continuous features keep the range-normalised
        difference, and the distance is the sum of both (the mixed-data distance of
        Relief).  ``None`` (default): every feature continuous (no change for
        continuous data); ``True``: all discrete; ``"auto"``: the features with at most
        ``discrete_limit`` distinct known values; else a boolean mask or indices.
    discrete_limit : int, default=10
        The distinct-value threshold of ``discrete_features="auto"`` (``<=`` is discrete:
        skrebate's ``discrete_threshold=10`` convention)."""


class _ReliefBase(BaseWeighter):
    _metric = "manhattan"
    #: takes a uint8 / int8 genotype matrix without a float copy (:mod:`knnweights.engine.genotypes`)
    _byte_input = True

    def fit(self, X, y):
        """Learn the feature weights (see :meth:`BaseWeighter.fit`).

        ``X`` may also be a ``uint8`` / ``int8`` genotype matrix (values ``0..15``; unknown:
        a negative ``int8``, the ``uint8`` value 255 or a masked entry; with
        ``missing="diff"``): it is scored in bytes, feature block by feature block, with the
        same weights as its float copy (:mod:`knnweights.engine.genotypes`).
        """
        from ..engine import genotypes

        if genotypes.is_byte_input(X):
            return genotypes.fit_relief_bytes(self, X, y)
        return super().fit(X, y)

    @property
    def _allow_nan(self):
        """NaN passes input validation when ``missing="diff"`` (read by BaseWeighter)."""
        return getattr(self, "missing", "error") == "diff"

    def _normalized(self, X):
        return range_normalize(X) if self.normalize else X

    def _diff_data(self, X, codes, force=False):
        """``None`` on the plain path (continuous, complete, not forced), else the
        :class:`~knnweights.engine._kernels_mixed.DiffData` of ``X``; sets ``discrete_features_``."""
        from ..engine.genotypes import GenotypeMatrix

        if isinstance(X, GenotypeMatrix):  # bytes: always the diff tables, in feature blocks
            self.discrete_features_ = X.discrete_mask(self.discrete_features, self.discrete_limit)
            return X.diff_data(codes, self.discrete_features_, self.normalize)
        disc = mixed_kernels.discrete_mask(X, self.discrete_features, self.discrete_limit)
        self.discrete_features_ = disc
        has_nan = X.dtype.kind == "f" and bool(np.isnan(X).any())
        if not (disc.any() or has_nan or force):
            return None
        M = mixed_kernels.build_mixed(X, codes, int(codes.max()) + 1, disc, self.normalize, dtype=X.dtype)
        return mixed_kernels.DiffData(M)

    def transform(self, X):
        """Rescale ``X`` by the weights (as :meth:`BaseWeighter.transform`); with
        ``missing="diff"`` a ``NaN`` stays ``NaN`` (``0 * NaN`` included)."""
        if not self._allow_nan:
            return super().transform(X)
        check_is_fitted(self, "feature_importances_")
        check_finite_columns(X, allow_nan=True)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")
        return X * self.feature_importances_.astype(X.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan
        return tags


_DIFF_CONSTRAINTS = {
    "missing": [StrOptions({"error", "diff"})],
    "discrete_features": [StrOptions({"auto"}), "array-like", "boolean", None],
    "discrete_limit": [Interval(numbers.Integral, 1, None, closed="left")],
}


def _doc(cls):
    cls.__doc__ = cls.__doc__.replace("    {diff_params}", "    " + _DIFF_PARAMS_DOC).replace(
        "    {target_params}", "    " + TARGET_DOC + "\n    " + PVALUES_DOC).replace(
        "    {n_instances}", "    " + _N_INSTANCES_DOC).replace("    {target_type}", "    " + TARGET_DOC)
    return cls


_TARGET_CONSTRAINTS = {"target_type": [StrOptions({"auto", "classes", "continuous"})],
                       "pvalues": ["boolean", StrOptions({"mantel", "pseudo-t"})]}


@_doc
class Relief(ReliefTargetMixin, _ReliefBase):
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

    Notes
    -----
    A continuous target: RReliefF with the one nearest neighbour
    (:func:`~knnweights.weighters._relief_regression.rrelieff_scores` with ``k = 1``).

    References
    ----------
    K. Kira and L. Rendell, "A practical approach to feature selection", ICML 1992.
    """

    _algorithm_version = 1
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('target_type', 'pvalues', 'n_instances')

    _parameter_constraints = {
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
        **_DIFF_CONSTRAINTS,
        "ties": [StrOptions({"index", "include"})],
        **_TARGET_CONSTRAINTS,
        "n_instances": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }
    _pair_kind = "relief"

    def __init__(self, n_iter=None, normalize=True, random_state=None, missing="error", discrete_features=None,
                 discrete_limit=10, ties="index", target_type="auto", pvalues=False, n_instances=None):
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

    def _fit(self, X, y):
        rows = _sample_rows(X.shape[0], self.n_iter, self.random_state, self.n_instances)
        data = self._diff_data(X, y, force=self.ties == "include")
        if data is None:
            self.scores_ = relieff_margins(self._normalized(X), y, 1, rows, per_class=False)
        else:
            self.scores_ = mixed_relieff_margins(data, y, 1, rows, per_class=False, ties=self.ties)
        return self.scores_


@_doc
class ReliefF(ReliefTargetMixin, _ReliefBase):
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
        continuous target) and their Benjamini-Hochberg q-values.
    target_type_ : {"classes", "continuous"}

    Notes
    -----
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
    _added_parameters = ('target_type', 'pvalues', 'rank_sigma', 'n_instances')

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
        **_DIFF_CONSTRAINTS,
        "ties": [StrOptions({"index", "include"})],
        "miss_weighting": [StrOptions({"prior", "equal"})],
        "small_classes": [StrOptions({"clamp", "error"})],
        **_TARGET_CONSTRAINTS,
        "rank_sigma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_instances": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }
    _pair_kind = "relieff"

    def __init__(self, n_neighbors=10, n_iter=None, normalize=True, random_state=None, missing="error",
                 discrete_features=None, discrete_limit=10, ties="index", miss_weighting="prior",
                 small_classes="clamp", target_type="auto", pvalues=False, rank_sigma=None, n_instances=None):
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

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y,
                                clamp="small_classes='error'" if self.small_classes == "clamp" else None)
        rows = _sample_rows(X.shape[0], self.n_iter, self.random_state, self.n_instances)
        data = self._diff_data(X, y, force=self.ties == "include")
        if data is None:
            self.scores_ = relieff_margins(self._normalized(X), y, self.n_neighbors, rows, per_class=True,
                                           miss_weighting=self.miss_weighting)
        else:
            self.scores_ = mixed_relieff_margins(data, y, self.n_neighbors, rows, per_class=True,
                                                 miss_weighting=self.miss_weighting, ties=self.ties)
        return self.scores_


def _auto_sigma(data, w, n_sample=500):
    """I-RELIEF's ``sigma="auto"``: the median, over (up to ``n_sample`` evenly spaced) samples, of
    the distance to the nearest other sample at a positive distance, under the initial weights.

    A kernel width on the scale of the nearest-neighbour distances: it follows the units
    (with ``normalize=False``) and the dimension of the data, so it needs no tuning to
    them.  When this rule was chosen it was compared, on planted-feature data
    (expression-like 80 x 1000, Gaussian 300 x 105), with widths 10-40 times smaller (the
    gap between the 1st and 10th neighbour, the spread of the distances): it recovered as
    many planted features or more and converged in 5 iterations where those needed 20-50
    (tests/test_relief.py keeps the expression-like case as a test).
    """
    n = data.n
    rows = np.unique(np.linspace(0, n - 1, min(n, n_sample)).astype(np.int64))
    near = np.empty(rows.size)
    for s, e, D in data.distance_chunks(rows=rows, w=w):
        D = np.array(D, dtype=np.float64)
        D[np.arange(e - s), rows[s:e]] = np.inf
        D[D <= 0] = np.inf  # duplicates (frequent on discrete data) are not a scale
        near[s:e] = D.min(axis=1)
    near = near[np.isfinite(near)]
    sigma = float(np.median(near)) if near.size else 1.0
    return sigma if sigma > 0 else 1.0


@_doc
class IRelief(ReliefTargetMixin, _ReliefBase):
    """I-RELIEF (Sun 2007): iterative Relief with kernel-soft neighbours and outliers.

    With the current weights ``w`` and the weighted Manhattan distance, hits and
    misses are soft: ``P(h | n) ∝ exp(-d_w(x_n, x_h) / sigma)`` over hits, likewise
    over misses; the probability that ``x_n`` is an outlier is
    ``o_n = sum_m exp(-d_nm/sigma) / sum_{j != n} exp(-d_nj/sigma)``.  Then (Sun 2007,
    eqs. 14-16)

        v = (1/n) sum_n (1 - o_n) z_n,    w = (v)+ / ||(v)+||_2,

    ``z_n`` the soft margin vector, repeated from ``w = 1/sqrt(d)`` (unit norm) until
    ``||w_t+1 - w_t||_2 < tol`` or ``max_iter`` (then a ``ConvergenceWarning`` that names
    the likely cause).

    A continuous target (not in Sun 2007; the same iteration with RReliefF's graded
    "different outcome" of Robnik-Sikonja & Kononenko 2003, Sec. 2.3): each pair counts as a
    miss with weight ``g_nj = |y_n - y_j| / (max y - min y)`` and as a hit with weight
    ``1 - g_nj``, so ``P(m | n) ∝ g_nm exp(-d_nm/sigma)``, ``P(h | n) ∝ (1 - g_nh)
    exp(-d_nh/sigma)`` over all other samples and ``o_n = sum_j g_nj exp(-d_nj/sigma) /
    sum_j exp(-d_nj/sigma)``, the kernel-expected outcome difference of ``x_n``'s
    neighbours.  With ``g`` in ``{0, 1}`` (two classes coded 0 / 1) this is the class
    iteration above, to rounding.

    One iteration is one pass over the distances and one over the margin terms; when the
    ``n x n`` matrices fit the working memory the distances are computed once per pair and
    the outlier-weighted coefficients are folded (``P + P^T``), so the margin pass also
    visits each pair once.

    Parameters
    ----------
    sigma : float or "auto", default="auto"
        Kernel width.  ``"auto"``: computed once from the data under the initial weights
        ``1/sqrt(d)``, the median over samples of the distance to the nearest other sample
        (at a positive distance; up to 500 evenly spaced samples); it follows the units and
        the dimension of the data, so the default needs no tuning.  The value used is
        ``sigma_``.  A number is a width in the data's units.
    max_iter : int, default=50
        Most iterations; reaching it warns (``ConvergenceWarning``).
    tol : float, default=1e-6
        The iteration stops once the step ``||w_t+1 - w_t||_2`` is below it.
    normalize : bool, default=True
        Range-normalise the differences (Relief's ``diff``, as every Relief class);
        ``normalize=False`` uses the data as given.
    {diff_params}
    verbose : int, default=0
        Print one line per iteration (step, effective number of hits per sample).
    {target_type}

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,), unit L2 norm
    scores_ : ndarray of shape (n_features,)
        ``v`` of the last iteration (signed).
    sigma_ : float
        The kernel width used.
    n_iter_ : int
    cost_history_ : list of float
        ``||w_t+1 - w_t||_2`` per iteration (I-RELIEF has no explicit objective).
    discrete_features_ : ndarray of bool
    metric_ : ``"manhattan"``
    target_type_ : {"classes", "continuous"}

    References
    ----------
    M. Robnik-Sikonja and I. Kononenko, "Theoretical and empirical analysis of ReliefF and
    RReliefF", Machine Learning 53, 2003 (the graded outcome difference).

    Y. Sun, "Iterative RELIEF for feature weighting: algorithms, theories, and
    applications", IEEE TPAMI 29(6), 2007.
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "normalize": ["boolean"],
        **_DIFF_CONSTRAINTS,
        "verbose": ["verbose"],
        "target_type": _TARGET_CONSTRAINTS["target_type"],
    }
    _added_parameters = ('target_type',)

    def __init__(self, sigma="auto", max_iter=50, tol=1e-6, normalize=True, missing="error",
                 discrete_features=None, discrete_limit=10, verbose=0, target_type="auto"):
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.normalize = normalize
        self.missing = missing
        self.discrete_features = discrete_features
        self.discrete_limit = discrete_limit
        self.verbose = verbose
        self.target_type = target_type

    @staticmethod
    def _inlier_probability(log_hit_mass, log_miss_mass):
        # 1 - o_n, with o_n = miss mass / (hit + miss mass), in log space
        return -np.expm1(log_miss_mass - np.logaddexp(log_hit_mass, log_miss_mass))

    def _margin_sum(self, data, y, w, sigma, ent_h):
        """``sum_n (1 - o_n) z_n`` under ``w``; fills the hit entropies ``ent_h``."""
        n = data.n
        if on_gpu() and isinstance(data, mixed_kernels.PlainDiff):
            sm = soft_margins(data.Z, y, w, sigma, "manhattan", sample_weight=self._inlier_probability)
            ent_h[:] = sm.hit_entropy
            return sm.z
        lh, lm, ent_m = np.empty(n), np.empty(n), np.empty(n)
        z = np.zeros(data.d)
        for s, e, D in data.distance_chunks(w=w, n_arrays=6):
            P = np.empty(D.shape, dtype=np.float64)
            kernels.soft_coefficients(np.ascontiguousarray(D, dtype=np.float64), y[s:e], y, s, 1.0 / sigma, P,
                                       lh[s:e], lm[s:e], ent_h[s:e], ent_m[s:e])
            P *= self._inlier_probability(lh[s:e], lm[s:e])[:, None]
            if e - s == n:  # the whole matrix: each pair's margin term once
                P = _fold_pairs(P)
            z += data.coef_sum(np.arange(s, e), P)
        return z

    def _margin_sum_continuous(self, data, y, w, sigma, ent_h):
        """``sum_n (1 - o_n) z_n`` for a continuous ``y`` (pairs graded by ``g = diff(y)``)."""
        span = float(np.ptp(y))
        z = np.zeros(data.d)
        for s, e, D in data.distance_chunks(w=w, n_arrays=10):  # D, G, A, the logits, the probabilities, temporaries
            rows = np.arange(s, e)
            G = np.abs(y[s:e, None] - y[None, :]) / span
            A = np.asarray(D, dtype=np.float64) * (-1.0 / sigma)
            A[rows - s, rows] = -np.inf  # not its own neighbour
            with np.errstate(divide="ignore"):
                Lm = A + np.log(G)
                Lh = A + np.log1p(-G)
            lm, log_pm = row_log_softmax(Lm)
            lh, log_ph = row_log_softmax(Lh)
            ent_h[s:e] = entropy_from_log(log_ph)
            Pm = np.exp(log_pm) - np.exp(log_ph)
            Pm *= self._inlier_probability(lh, lm)[:, None]
            z += data.coef_sum(rows, Pm)
        return z

    def _continuous_scores(self, X, y):
        data = self._diff_data(X, np.zeros(X.shape[0], np.int64))
        return self._iterate(X, y, data, self._margin_sum_continuous)

    def _fit(self, X, y):
        return self._iterate(X, y, self._diff_data(X, y), self._margin_sum)

    def _iterate(self, X, y, data, margin_sum):
        """Sun's fixed-point iteration ``w = (v)+ / ||(v)+||_2`` with ``v = margin_sum(...) / n``."""
        if data is None:
            data = mixed_kernels.PlainDiff(self._normalized(X))
        d = X.shape[1]
        w = np.full(d, 1.0 / np.sqrt(d))
        sigma = _auto_sigma(data, w) if isinstance(self.sigma, str) else float(self.sigma)
        self.sigma_ = sigma
        self.cost_history_ = []
        ent_h = np.empty(X.shape[0])
        converged = False
        v = np.zeros(d)
        for it in range(1, self.max_iter + 1):
            v = margin_sum(data, y, w, sigma, ent_h) / X.shape[0]
            w_new = normalize_weights(v, "l2")
            if not w_new.any():
                self._warn_no_positive_margin(sigma, ent_h)
                break
            step = float(np.linalg.norm(w_new - w))
            self.cost_history_.append(step)
            w = w_new
            if self.verbose:
                print(f"[IRelief] iteration {it:3d}: step {step:.3e}, sigma {sigma:.3g}, "
                      f"effective hits {np.mean(np.exp(ent_h)):.3g}")
            if step < self.tol:
                converged = True
                break
        if not converged and it == self.max_iter and w_new.any():
            self._warn_max_iter(sigma, ent_h)
        self.n_iter_ = it
        self.scores_ = v
        return w

    def _sigma_hint(self):
        return "sigma='auto' (the default, from the data's neighbour distances)" if not isinstance(
            self.sigma, str) else "a larger sigma"

    def _warn_max_iter(self, sigma, ent_h):
        eff = float(np.mean(np.exp(ent_h)))
        name = type(self).__name__
        if eff < 1.5:
            msg = (f"{name} stopped at max_iter={self.max_iter} before the weights converged. Likely cause: "
                   f"sigma={sigma:.3g} is small for these distances (about {eff:.2g} effective hits per sample: "
                   f"the kernel neighbours are nearly hard and switch between iterations). Use "
                   f"{self._sigma_hint()}, or normalize=True if the features have large ranges.")
        else:
            msg = (f"{name} stopped at max_iter={self.max_iter} before the weights converged "
                   f"(last step {self.cost_history_[-1]:.3g}, tol={self.tol}; sigma={sigma:.3g}, about {eff:.3g} "
                   "effective hits per sample); increase max_iter or tol.")
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)

    def _warn_no_positive_margin(self, sigma, ent_h):
        eff = float(np.mean(np.exp(ent_h)))
        warnings.warn(
            f"{type(self).__name__}: no feature has a positive mean margin under the current weights, so the "
            f"weights are all zero (sigma={sigma:.3g}, about {eff:.3g} effective hits per sample). If sigma is "
            "large for these distances every neighbour counts alike; try sigma='auto' or a smaller sigma, "
            "or check that the features carry information about y.", UserWarning, stacklevel=3)


class MulRel(_ReliefBase):
    """MulRel: Relief repeated with the target neighbours of the previous weights.

    Takeuchi & Sugiyama (SQP-FW paper, Sec. 5) define it to mitigate Relief's
    TN-weight inconsistency: "we repeat the Relief procedure using the TNs defined by
    the learned weights in the previous loop".  Round 1 is plain Relief (unweighted
    nearest hit and miss); each later round finds the ``n_neighbors`` nearest hits and
    misses under the weighted Manhattan distance of the previous round's weights and
    recomputes ``w = (mean z)+ / ||(mean z)+||_2``.  The paper runs a fixed number of
    outer rounds (100); the procedure need not converge (the neighbours can keep
    switching), so ``n_rounds`` rounds are run and the last weights returned, stopping
    early only at an exact fixed point (weights that reproduce themselves).

    The definition itself can end in a 2-cycle whose two ends rank different
    relevant features first, so that the last round's weights depend on the parity
    of ``n_rounds``: with hard nearest neighbours searched under the previous
    weights, the more weight a feature gets, the nearer its target hit *and* miss
    lie in that feature and the smaller its next margin (Relief's TN-weight
    inconsistency, which the repetition was meant to mitigate); two relevant features
    can then take turns at the top, the other one falling below noise features, where
    ReliefF and I-RELIEF rank both first (an example in ``benchmarks/issue49_defaults.md``).
    Such a fit warns (``ConvergenceWarning``, ``stop_reason_ ==
    "cycle"``); ``cycle_weights_`` holds both ends.  Soft neighbours (:class:`IRelief`)
    or a damped iteration (:class:`LHRelief`) do not cycle there.

    Parameters
    ----------
    n_neighbors : int, default=1
        Nearest hits and misses per instance in every round (1: Relief's nearest hit
        and miss).
    n_rounds : int, default=100
        Outer rounds (the paper's setting).
    normalize : bool, default=True
        Range-normalised differences, as :class:`Relief`.
    small_classes : {"clamp", "error"}, default="clamp"
        ``n_neighbors`` above a class's hits: ``"clamp"`` uses all of them (with a
        ``UserWarning``); ``"error"`` raises a ``ValueError``.
    verbose : int, default=0
        Print one line per round (the step ``||w_t+1 - w_t||_2`` and the elapsed time).

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
    n_iter_ : int
        Rounds run.
    cost_history_ : list of float
        ``||w_t+1 - w_t||_2`` per round.
    stop_reason_ : {"converged", "no_positive_margin", "n_rounds", "cycle"}
        An exact fixed point; no positive margin (the last weights kept); ``n_rounds``
        run without reaching a fixed point; the same with the last rounds alternating
        between two weight vectors (over the last rounds, the median of
        ``||w_t - w_t-2|| / ||w_t - w_t-1||`` below 0.7).  The last two warn (``ConvergenceWarning``).
    cycle_weights_ : ndarray of shape (2, n_features) or None
        With ``stop_reason_ == "cycle"``: the last two rounds' weights (the cycle's
        two ends; the second is ``feature_importances_``); otherwise ``None``.
    metric_ : ``"manhattan"``
    """

    _algorithm_version = 1
    _byte_input = False

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left")],
        "normalize": ["boolean"],
        "small_classes": [StrOptions({"clamp", "error"})],
        "verbose": ["verbose"],
    }

    def __init__(self, n_neighbors=1, n_rounds=100, normalize=True, small_classes="clamp", verbose=0):
        self.n_neighbors = n_neighbors
        self.n_rounds = n_rounds
        self.normalize = normalize
        self.small_classes = small_classes
        self.verbose = verbose

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y,
                                clamp="small_classes='error'" if self.small_classes == "clamp" else None)
        Z = self._normalized(X)
        w = None
        history = []  # every round's weights, for the 2-cycle test
        self.cost_history_ = []
        self.stop_reason_ = "n_rounds"
        self.cycle_weights_ = None
        t0 = time.perf_counter()
        for it in range(1, self.n_rounds + 1):
            w_new = normalize_weights(relieff_margins(Z, y, self.n_neighbors, None, w=w, per_class=False), "l2")
            if not w_new.any():  # no positive margin under these neighbours: keep the last weights
                w_new = np.zeros(X.shape[1]) if w is None else w
                self.stop_reason_ = "no_positive_margin"
                if self.verbose:
                    print(f"[MulRel] round {it:3d}: no positive margin, the last weights kept")
                break
            step = float(np.linalg.norm(w_new - (w if w is not None else 0)))
            self.cost_history_.append(step)
            w = w_new
            history = history[-(2 * _CYCLE_ROUNDS):] + [w]
            if self.verbose:
                print(f"[MulRel] round {it:3d}: step {step:.3e}, non-zero weights {np.count_nonzero(w)}, "
                      f"{time.perf_counter() - t0:.2f} s")
            if step == 0.0:
                self.stop_reason_ = "converged"
                break
        self.n_iter_ = it
        if self.stop_reason_ == "n_rounds" and _two_cycle(history):
            self.stop_reason_ = "cycle"
            self.cycle_weights_ = np.vstack(history[-2:])
        if self.stop_reason_ in ("n_rounds", "cycle"):
            extra = ""
            if self.stop_reason_ == "cycle":
                a, b = (int(np.argmax(v)) for v in self.cycle_weights_)
                extra = (f" The last rounds alternate between two weight vectors (a 2-cycle, see cycle_weights_; led "
                         f"by feature {a} and by feature {b}): the result depends on the parity of n_rounds. IRelief "
                         "(soft neighbours) or LHRelief (damped) do not cycle this way.")
            warnings.warn(f"MulRel ran n_rounds={self.n_rounds} rounds without reaching a fixed point (last step "
                          f"{self.cost_history_[-1]:.3g}).{extra}", ConvergenceWarning, stacklevel=3)
        return w_new


#: rounds (pairs) of MulRel's 2-cycle test
_CYCLE_ROUNDS = 3


def _two_cycle(history):
    """The last rounds alternate: each iterate is nearer the one two rounds back than the
    one before it (median of ``||w_t - w_t-2|| / ||w_t - w_t-1||`` over the last rounds
    below 0.7; a steady approach gives about 2, a random walk about 1.4)."""
    if len(history) < 2 * _CYCLE_ROUNDS + 1:
        return False
    ratios = []
    for t in range(len(history) - 2 * _CYCLE_ROUNDS + 1, len(history)):
        step = float(np.linalg.norm(history[t] - history[t - 1]))
        if step == 0.0:
            return False
        ratios.append(float(np.linalg.norm(history[t] - history[t - 2])) / step)
    return float(np.median(ratios)) < 0.7


# -- SURF and MultiSURF: every instance within a distance threshold is a neighbour -------------------------------------
# n x n (or block x n) arrays alive at once (distances, coefficients and their temporaries), in 8-byte units
_RADIUS_BLOCK_ARRAYS = 6


def _self_columns(start, b):
    """The column of each row's own sample: ``start + 0..b-1``, or the given row indices."""
    return start + np.arange(b) if np.isscalar(start) else np.asarray(start)


def _multisurf_thresholds(D, start):
    """``T_i = mean_i - std_i / 2`` over the ``n - 1`` distances from ``i`` (rows ``start:`` of a
    block, or the samples ``start`` when it is an array).  Computed a few rows at a time (each row's
    sums alone, so the same values), with no temporary as large as ``D``."""
    b, n = D.shape
    self_cols = _self_columns(start, b)
    mean = D.sum(axis=1, dtype=np.float64) / (n - 1)
    sq = np.empty(b)
    step = max(1, _THRESHOLD_ELEMENTS // max(n, 1))
    for s in range(0, b, step):
        e = min(b, s + step)
        dev = D[s:e] - mean[s:e, None]
        dev[np.arange(e - s), self_cols[s:e]] = 0.0  # the sample itself is not among the n - 1 distances
        sq[s:e] = np.einsum("ij,ij->i", dev, dev)
    return mean - np.sqrt(sq / (n - 1)) / 2.0


#: elements of the temporary block of :func:`_multisurf_thresholds`
_THRESHOLD_ELEMENTS = 2**17


def _in_radius(D, T, start):
    near = D < T[:, None]
    rows = np.arange(D.shape[0])
    near[rows, _self_columns(start, rows.size)] = False
    return near


def _radius_pairs(D, T, start, lab_rows, lab_cols, n_groups, table_fn, kind=0, s=0.0, fold=False,
                  symmetric=False):
    """Coefficients ``P[i, j]`` of the in-radius pairs of a distance block (``d_ij < T_i``, ``j`` not the
    sample itself; rows ``start``... or the samples ``start``): one compiled pass counts each row's
    neighbours per group, one writes ``P``.

    A pair's group is the neighbour's class (``kind=0``; ``lab_cols`` the class codes) or, for a
    continuous target (``kind=1``), 0 when ``|y_i - y_j| < s`` and 1 otherwise; ``table_fn(counts)``
    gives the coefficient of each row and group from the ``(b, n_groups)`` counts.  ``fold``: ``D``
    is the whole matrix and ``P`` comes pair-folded (as :func:`_fold_pairs` of the unfolded ``P``);
    ``symmetric``: that matrix is exactly symmetric (the CPU kernel's distances within one set).
    """
    D = np.ascontiguousarray(D)
    T = np.ascontiguousarray(T, dtype=np.float64)
    self_cols = np.ascontiguousarray(_self_columns(start, D.shape[0]), dtype=np.int64)
    lab_rows = np.ascontiguousarray(lab_rows, dtype=np.float64)
    lab_cols = np.ascontiguousarray(lab_cols, dtype=np.float64)
    counts = np.empty((D.shape[0], n_groups), np.int64)
    kernels.radius_counts(D, T, self_cols, lab_rows, lab_cols, float(s), kind, counts)
    table = np.ascontiguousarray(table_fn(counts), dtype=np.float64)
    return kernels.radius_coefficients(D, T, self_cols, lab_rows, lab_cols, float(s), kind, table, bool(fold),
                                        bool(fold and symmetric), np.empty(D.shape, np.float64))


def _radius_coefficients(D, T, start, own, codes, prior, multiclass, fold=False, symmetric=False):
    """Coefficients ``P[i, j]`` of the in-radius neighbours (:func:`_radius_pairs`): ``-1/h_i`` on hits,
    class-weighted on misses."""
    return _radius_pairs(D, T, start, own, codes, prior.size,
                         lambda counts: _radius_class_table(counts, own, prior, multiclass), fold=fold,
                         symmetric=symmetric)


def _radius_class_table(counts, own, prior, multiclass):
    """``(b, K)``: the coefficient of a neighbour of each class from the per-class neighbour counts."""
    b, n_classes = counts.shape
    rows = np.arange(b)
    counts = counts.astype(np.float64)
    hits = counts[rows, own]
    miss_counts = counts.copy()
    miss_counts[rows, own] = 0.0
    present = miss_counts > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if multiclass == "prior":
            # ReliefF's P(C) / (1 - P(c)), renormalised over the miss classes found in the radius
            class_weight = np.where(present, prior[None, :], 0.0)
            class_weight /= class_weight.sum(axis=1, keepdims=True)
            coef = np.where(present, class_weight / miss_counts, 0.0)
        else:
            # ReBATE: class C's mean weighted by (K - 1) (m_i(C) / m_i)^2, i.e. (K - 1) m_i(C) / m_i^2 a neighbour
            total = miss_counts.sum(axis=1, keepdims=True)
            coef = np.where(present, (n_classes - 1) * miss_counts / total**2, 0.0)
        coef[rows, own] = np.where(hits > 0, -1.0 / hits, 0.0)
    return coef


def _symmetric_distances(Z):
    """The full Manhattan distance matrix, each pair computed once (:func:`weighted_distances`)."""
    return weighted_distances(Z, metric="manhattan")


def _fold_pairs(P):
    """``P + P^T`` with each unordered pair given to one of its two rows, ``(n - 1) / 2`` pairs a row.

    ``sum_ij P_ij phi(z_i - z_j)`` is then a sum over half the pairs; giving pair ``(i, j)``
    to row ``i`` when ``j - i mod n`` is in the first half (instead of the upper triangle)
    keeps the rows, hence the threads of the kernel, equally loaded (compiled:
    ``kernels.fold_pairs``).
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    return kernels.fold_pairs(P, np.empty_like(P))


def radius_margins(Z, codes, rule="mean", multiclass="prior"):
    """Mean margin vector when the neighbours are all samples within a threshold distance (SURF family).

    For each instance ``i`` of class ``c``, with ``h_i`` hits and ``m_i(C)`` misses of class
    ``C`` at Manhattan distance ``d_ij < T_i`` (``j != i``), the margin vector is
    ``sum_C a_i(C) / m_i(C) sum_{misses of C} |z_i - z_j| - 1/h_i sum_{hits} |z_i - z_j|``;
    the class weights ``a_i(C)`` are set by ``multiclass`` (see :class:`SURF`).  A term with
    no neighbour is left out.

    When the ``n x n`` matrices fit the configured ``working_memory`` they are built once,
    each pair's distance and difference computed once (both are symmetric); otherwise
    row blocks, with one more pass over the distances for SURF's mean.  The two give the
    same neighbourhoods (bit-identical distances and thresholds) and scores equal up to
    the order of the floating-point sums.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        The (range-normalised) data.
    codes : ndarray of shape (n,)
        Integer class codes.
    rule : {"mean", "mean-std/2"}
        ``T_i`` = the mean of the ``n x n`` distance matrix (SURF) or ``mean_i - std_i / 2``
        over the distances from ``i`` (MultiSURF).
    multiclass : {"prior", "rebate"}

    Returns
    -------
    margin : ndarray of shape (d,)
        The mean over the instances.
    thresholds : ndarray of shape (n,)
        ``T_i``.
    """
    Z = np.ascontiguousarray(Z)
    n = Z.shape[0]
    prior = np.bincount(codes) / n
    if n * n * 8 * _RADIUS_BLOCK_ARRAYS <= get_config()["working_memory"] * 2**20:
        D = _symmetric_distances(Z)
        if rule == "mean":
            T = np.full(n, D.sum(axis=1, dtype=np.float64).sum() / float(n) ** 2)
        else:
            T = _multisurf_thresholds(D, 0)
        P = _radius_coefficients(D, T, 0, codes, codes, prior, multiclass, fold=True, symmetric=not on_gpu())
        del D
        z = coef_phi_rows(Z, Z, P.astype(Z.dtype, copy=False), 0).sum(axis=0, dtype=np.float64)
        return z / n, T

    def blocks():
        return distance_chunks(Z, metric="manhattan", n_arrays=_RADIUS_BLOCK_ARRAYS)

    T = np.empty(n)
    if rule == "mean":  # first pass: the mean, from the row sums (summed as in the one-block case)
        for start, stop, D in blocks():
            T[start:stop] = D.sum(axis=1, dtype=np.float64)
        T[:] = T.sum() / float(n) ** 2
    per_sample = np.empty_like(Z)
    for start, stop, D in blocks():
        if rule != "mean":
            T[start:stop] = _multisurf_thresholds(D, start)
        P = _radius_coefficients(D, T[start:stop], start, codes[start:stop], codes, prior,
                                 multiclass).astype(Z.dtype, copy=False)
        per_sample[start:stop] = coef_phi_rows(Z[start:stop], Z, P, 0)
    return per_sample.sum(axis=0, dtype=np.float64) / n, T


def mixed_radius_margins(data, codes, rule="mean", multiclass="prior", rows=None):
    """:func:`radius_margins` on Relief's ``diff`` for discrete features and missing values.

    ``data`` is a :class:`knnweights.engine._kernels_mixed.DiffData`; distances and margin
    terms both use its ``diff``.  When the ``n x n`` matrices fit the working memory, one
    distance pass and the pair-folded coefficients (each pair's diff once; not for a
    ``data`` with ``fold_pairs = False``); otherwise row blocks (SURF: one more distance
    pass for the mean).  ``rows``: score only these instances (against all samples);
    SURF's mean distance is then the mean over their rows of the distance matrix.
    """
    n = codes.shape[0]
    prior = np.bincount(codes) / n
    every = rows is None
    inst = np.arange(n) if every else np.asarray(rows, dtype=np.int64)
    m = inst.size
    chunks = data.distance_chunks(None if every else inst, n_arrays=_RADIUS_BLOCK_ARRAYS)
    s0, e0, D0 = next(chunks)
    if every and e0 == n:  # one block: all distances at once
        T = np.full(n, D0.sum(axis=1, dtype=np.float64).sum() / float(n) ** 2) if rule == "mean" \
            else _multisurf_thresholds(D0, 0)
        P = _radius_coefficients(D0, T, 0, codes, codes, prior, multiclass, fold=getattr(data, "fold_pairs", True))
        del D0
        return data.coef_sum(np.arange(n), P) / n, T
    T = np.empty(m)
    if rule == "mean":
        T[s0:e0] = D0.sum(axis=1, dtype=np.float64)
        for s, e, D in chunks:
            T[s:e] = D.sum(axis=1, dtype=np.float64)
        T[:] = T.sum() / (float(m) * n)
    del D0, chunks
    z = np.zeros(data.d)
    for s, e, D in data.distance_chunks(None if every else inst, n_arrays=_RADIUS_BLOCK_ARRAYS):
        if rule != "mean":
            T[s:e] = _multisurf_thresholds(D, inst[s:e])
        r = inst[s:e]
        P = _radius_coefficients(D, T[s:e], r, codes[r], codes, prior, multiclass)
        z += data.coef_sum(r, P)
    return z / m, T


class _RadiusReliefBase(ReliefTargetMixin, _ReliefBase):
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('target_type', 'pvalues', 'n_instances', 'random_state')
    _parameter_constraints = {
        "normalize": ["boolean"],
        "multiclass": [StrOptions({"prior", "rebate"})],
        **_DIFF_CONSTRAINTS,
        **_TARGET_CONSTRAINTS,
        "n_instances": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }
    _pair_kind = "radius"

    def __init__(self, normalize=True, multiclass="prior", missing="error", discrete_features=None,
                 discrete_limit=10, target_type="auto", pvalues=False, n_instances=None, random_state=None):
        self.normalize = normalize
        self.multiclass = multiclass
        self.missing = missing
        self.discrete_features = discrete_features
        self.discrete_limit = discrete_limit
        self.target_type = target_type
        self.pvalues = pvalues
        self.n_instances = n_instances
        self.random_state = random_state

    def _fit(self, X, y):
        rows = _sample_rows(X.shape[0], None, self.random_state, self.n_instances)
        data = self._diff_data(X, y)
        if data is None and rows is None:
            self.scores_, thresholds = radius_margins(self._normalized(X), y, self._rule, self.multiclass)
        else:
            if data is None:
                data = mixed_kernels.PlainDiff(self._normalized(X))
            self.scores_, thresholds = mixed_radius_margins(data, y, self._rule, self.multiclass, rows)
        self.instances_ = np.arange(X.shape[0]) if rows is None else rows
        self._store_thresholds(thresholds)
        return self.scores_


@_doc
class SURF(_RadiusReliefBase):
    """SURF, Spatially Uniform ReliefF (Greene et al. 2009).

    The neighbours of instance ``i`` are all ``j != i`` closer than one threshold ``T``,
    the mean distance: with ``diff(A, I1, I2) = |I1_A - I2_A| / (max A - min A)`` and
    ``d_ij = sum_A diff(A, x_i, x_j)`` (Manhattan on range-normalised data)::

        T = (1 / n^2) sum_{i, j} d_ij          (zero diagonal included, as ReBATE/skrebate;
                                                 the off-diagonal mean is n T / (n - 1))
        N_i = {j != i : d_ij < T}              (strict, ties excluded)

    and, with ``h_i`` hits and ``m_i(C)`` misses of each class ``C`` in ``N_i``::

        W[A] = (1/n) sum_i [ - 1/h_i sum_{hits j in N_i} diff(A, x_i, x_j)
                             + sum_{C != c_i} a_i(C) / m_i(C) sum_{misses j of C in N_i} diff(A, x_i, x_j) ]

    where a term without neighbours is left out (an instance with none adds nothing).
    With two classes ``a_i(C) = 1``: ``-mean hit diff + mean miss diff``, the binary
    scores of skrebate's ``SURF`` exactly.  With more classes, ``multiclass`` chooses:

    - ``"prior"`` (default): ReliefF's prior weighting (as :class:`ReliefF`),
      ``a_i(C) = P(C) / sum_{C' present} P(C')`` over the miss classes present in
      ``N_i``, which is ``P(C) / (1 - P(c_i))`` when all are.  The class weights sum to 1.
    - ``"rebate"``: ReBATE/skrebate's rule, ``a_i(C) = (K - 1) (m_i(C) / m_i)^2`` with
      ``m_i = sum_C m_i(C)`` and ``K`` classes (each class's summed diffs weighted by its
      share of the radius' misses, then divided by ``m_i``).  These weights sum to at
      least 1, exactly 1 only when all ``K - 1`` miss classes are equally represented in
      ``N_i``: a class seen alone counts ``K - 1`` times.  Gives skrebate's multiclass
      ``feature_importances_``; ``"prior"`` differs from it only with three classes or more.

    Computed in the input's float dtype (float32 stays float32; the sums over instances
    in float64).  When the ``n x n`` matrices fit the configured ``working_memory`` each
    pair's distance and diff is computed once (both are symmetric); otherwise in row
    blocks of the distance matrix (memory ``O(block x n + n d)``), with the same
    neighbourhoods and scores equal up to the order of the floating-point sums.

    Parameters
    ----------
    normalize : bool, default=True
        Range-normalise the differences (Relief's ``diff``).
    multiclass : {"prior", "rebate"}, default="prior"
        Weighting of the miss classes for three or more classes (see above).
    {diff_params}
    {target_params}
    {n_instances}
        SURF's threshold is then the mean distance over the sampled instances' rows.
    random_state : int, RandomState or None
        Used only when ``n_instances`` is set.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``max(scores_, 0)``.
    scores_ : ndarray of shape (n_features,)
        The signed SURF weights ``W``.
    threshold_ : float
        ``T``.
    metric_ : str
        ``"manhattan"``.

    See Also
    --------
    MultiSURF : a per-instance threshold.
    ReliefF : the ``k`` nearest hits and misses.

    Notes
    -----
    A continuous target: the same neighbourhoods, scikit-rebate's continuous-endpoint
    rule (a neighbour with ``|y_i - y_j|`` below the standard deviation of ``y`` is a hit,
    else a miss; see
    :func:`~knnweights.weighters._relief_regression.radius_regression_scores`).

    Ties: a neighbourhood is every instance strictly within the threshold, so the
    result never depends on the row order (no ``ties`` option is needed).

    References
    ----------
    C. S. Greene, N. M. Penrod, J. Kiralis and J. H. Moore, "Spatially Uniform ReliefF
    (SURF) for computationally-efficient filtering of gene-gene interactions",
    BioData Mining 2:5, 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import SURF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 5))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> int(np.argmax(SURF().fit(X, y).feature_importances_))
    0
    """

    _algorithm_version = 1

    _rule = "mean"

    def _store_thresholds(self, thresholds):
        self.threshold_ = float(thresholds[0])


@_doc
class MultiSURF(_RadiusReliefBase):
    """MultiSURF (Urbanowicz et al. 2018): SURF with a threshold per instance.

    The neighbours of instance ``i`` are the ``j != i`` with ``d_ij < T_i``, where

        T_i = mean_i - std_i / 2,

    the mean and population standard deviation of the ``n - 1`` distances from ``i`` to
    the other instances (Manhattan on range-normalised data); the "dead band" of half a
    standard deviation leaves out the middle-distance instances.  The scores are SURF's
    formula with these neighbourhoods (see :class:`SURF`, including ``multiclass``):
    binary scores equal skrebate's ``MultiSURF``.  MultiSURF scores only the near
    neighbours (unlike MultiSURF*, no far scoring).

    Parameters
    ----------
    normalize : bool, default=True
        Range-normalise the differences (Relief's ``diff``).
    multiclass : {"prior", "rebate"}, default="prior"
        Weighting of the miss classes for three or more classes (see :class:`SURF`).
    {diff_params}
    {target_params}
    {n_instances}
    random_state : int, RandomState or None
        Used only when ``n_instances`` is set.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``max(scores_, 0)``.
    scores_ : ndarray of shape (n_features,)
        The signed MultiSURF weights.
    thresholds_ : ndarray of shape (n_instances_,)
        ``T_i`` of each scored instance (every training sample unless ``n_instances``).
    instances_ : ndarray of int
        The rows scored (all samples, or the ``n_instances`` drawn).
    metric_ : str
        ``"manhattan"``.

    Notes
    -----
    A continuous target: as :class:`SURF` (scikit-rebate's continuous-endpoint rule).

    References
    ----------
    R. J. Urbanowicz, R. S. Olson, P. Schmitt, M. Meeker and J. H. Moore, "Benchmarking
    Relief-based feature selection methods for bioinformatics data mining", Journal of
    Biomedical Informatics 85, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import MultiSURF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 5))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> int(np.argmax(MultiSURF().fit(X, y).feature_importances_))
    0
    """

    _algorithm_version = 1

    _rule = "mean-std/2"

    def _store_thresholds(self, thresholds):
        self.thresholds_ = thresholds
