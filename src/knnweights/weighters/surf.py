"""SURF (Greene et al. 2009) and MultiSURF (Urbanowicz et al. 2018): every instance within a distance threshold."""

import numbers

import numpy as np

from ..engine import get_config, mixed_kernels
from ..engine._docs import data_doc
from ..engine.neighbors import coef_phi_rows, distance_chunks, on_gpu, weighted_distances
from ..utils import Interval, StrOptions
from ._relief_base import DIFF_CONSTRAINTS, RAMP_CONSTRAINTS, TARGET_CONSTRAINTS, ReliefBase, fill_relief_docstring
from ._relief_margins import RADIUS_BLOCK_ARRAYS, multisurf_thresholds, radius_pairs, sample_rows
from ._relief_regression import ReliefTargetMixin

__all__ = ["SURF", "MultiSURF", "mixed_radius_margins", "radius_margins"]


def _radius_coefficients(D, T, start, own, codes, prior, multiclass, fold=False, symmetric=False):
    """Coefficients ``P[i, j]`` of the in-radius neighbours (:func:`radius_pairs`): ``-1/h_i`` on hits,
    class-weighted on misses."""
    return radius_pairs(D, T, start, own, codes, prior.size,
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
    if n * n * 8 * RADIUS_BLOCK_ARRAYS <= get_config()["working_memory"] * 2**20:
        D = _symmetric_distances(Z)
        if rule == "mean":
            T = np.full(n, D.sum(axis=1, dtype=np.float64).sum() / float(n) ** 2)
        else:
            T = multisurf_thresholds(D, 0)
        P = _radius_coefficients(D, T, 0, codes, codes, prior, multiclass, fold=True, symmetric=not on_gpu())
        del D
        z = coef_phi_rows(Z, Z, P.astype(Z.dtype, copy=False), 0).sum(axis=0, dtype=np.float64)
        return z / n, T

    def blocks():
        return distance_chunks(Z, metric="manhattan", n_arrays=RADIUS_BLOCK_ARRAYS)

    T = np.empty(n)
    if rule == "mean":  # first pass: the mean, from the row sums (summed as in the one-block case)
        for start, stop, D in blocks():
            T[start:stop] = D.sum(axis=1, dtype=np.float64)
        T[:] = T.sum() / float(n) ** 2
    per_sample = np.empty_like(Z)
    for start, stop, D in blocks():
        if rule != "mean":
            T[start:stop] = multisurf_thresholds(D, start)
        P = _radius_coefficients(D, T[start:stop], start, codes[start:stop], codes, prior,
                                 multiclass).astype(Z.dtype, copy=False)
        per_sample[start:stop] = coef_phi_rows(Z[start:stop], Z, P, 0)
    return per_sample.sum(axis=0, dtype=np.float64) / n, T


@data_doc
def mixed_radius_margins(data, codes, rule="mean", multiclass="prior", rows=None):
    """:func:`radius_margins` on Relief's ``diff`` for discrete features and missing values.

    ``data`` is a :class:`knnweights.engine._kernels_mixed.DiffData` (or the ramp ``diff``'s
    :class:`~knnweights.weighters._relief_margins.RampDiff`); distances, thresholds and margin
    terms all use its ``diff``.  When one distance block holds every row, one distance pass
    and the pair-folded coefficients (each pair's diff once; not for a ``data`` with
    ``fold_pairs = False``); otherwise row blocks (SURF: one more distance pass for the
    mean).  ``rows``: score only these instances (against all samples);
    SURF's mean distance is then the mean over their rows of the distance matrix.

    {diff_codes}
    rule : {"mean", "mean-std/2"}, default="mean"
        SURF's or MultiSURF's threshold.
    multiclass : {"prior", "rebate"}, default="prior"
        Weighting of the miss classes (see :class:`SURF`).
    rows : ndarray of int or None, default=None
        The instances scored; ``None``: every sample.

    Returns
    -------
    margin : ndarray of shape (n_features,)
        The mean over the instances.
    thresholds : ndarray of shape (n_instances,)
        ``T_i`` of each instance.
    """
    n = codes.shape[0]
    prior = np.bincount(codes) / n
    every = rows is None
    inst = np.arange(n) if every else np.asarray(rows, dtype=np.int64)
    m = inst.size
    chunks = data.distance_chunks(None if every else inst, n_arrays=RADIUS_BLOCK_ARRAYS)
    s0, e0, D0 = next(chunks)
    if every and e0 == n:  # one block: all distances at once
        T = np.full(n, D0.sum(axis=1, dtype=np.float64).sum() / float(n) ** 2) if rule == "mean" \
            else multisurf_thresholds(D0, 0)
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
    for s, e, D in data.distance_chunks(None if every else inst, n_arrays=RADIUS_BLOCK_ARRAYS):
        if rule != "mean":
            T[s:e] = multisurf_thresholds(D, inst[s:e])
        r = inst[s:e]
        P = _radius_coefficients(D, T[s:e], r, codes[r], codes, prior, multiclass)
        z += data.coef_sum(r, P)
    return z / m, T


class _RadiusReliefBase(ReliefTargetMixin, ReliefBase):
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('target_type', 'pvalues', 'n_instances', 'random_state', 'padj', 'genotype_diff', 'diff',
                         'ramp', 'pvalue_null', 'covariate_reference')
    _parameter_constraints = {
        "normalize": ["boolean"],
        "multiclass": [StrOptions({"prior", "rebate"})],
        **DIFF_CONSTRAINTS,
        **RAMP_CONSTRAINTS,
        **TARGET_CONSTRAINTS,
        "n_instances": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }
    _pair_kind = "radius"

    def __init__(self, normalize=True, multiclass="prior", missing="error", discrete_features=None,
                 discrete_limit=10, target_type="auto", pvalues=False, n_instances=None, random_state=None,
                 padj="bh", genotype_diff=None, diff="linear", ramp=(0.04, 0.1), pvalue_null="outcome",
                 covariate_reference="redraw"):
        self.normalize = normalize
        self.multiclass = multiclass
        self.missing = missing
        self.discrete_features = discrete_features
        self.discrete_limit = discrete_limit
        self.target_type = target_type
        self.pvalues = pvalues
        self.n_instances = n_instances
        self.random_state = random_state
        self.padj = padj
        self.genotype_diff = genotype_diff
        self.pvalue_null = pvalue_null
        self.covariate_reference = covariate_reference
        self.diff = diff
        self.ramp = ramp

    def _fit(self, X, y):
        rows = sample_rows(X.shape[0], None, self.random_state, self.n_instances)
        data = self._weights_data(X, y)  # the ramp: the thresholds and the radius on its distances, the margins too
        if data is None and rows is None:
            self.scores_, thresholds = radius_margins(self._normalized(X), y, self._rule, self.multiclass)
        else:
            if data is None:
                data = mixed_kernels.PlainDiff(self._normalized(X))
            self.scores_, thresholds = mixed_radius_margins(data, y, self._rule, self.multiclass, rows)
        self.instances_ = np.arange(X.shape[0]) if rows is None else rows
        self._store_thresholds(thresholds)
        return self.scores_


@fill_relief_docstring
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
    {ramp_params}
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
    {target_attributes}

    See Also
    --------
    MultiSURF : a per-instance threshold.
    ReliefF : the ``k`` nearest hits and misses.

    Notes
    -----
    {survival_note}
    A continuous target: the same neighbourhoods, scikit-rebate's continuous-endpoint
    rule (a neighbour with ``|y_i - y_j|`` below the standard deviation of ``y`` is a hit,
    else a miss; see
    :func:`~knnweights.weighters._relief_regression.radius_regression_scores`).

    Ties: a neighbourhood is every instance strictly within the threshold, so the
    result never depends on the row order (no ``ties`` option is needed).  A distance
    equal to the threshold is left out, linear or ramp: the threshold is a mean of
    distances, not a neighbour's distance, so no tie tolerance applies to it.

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


@fill_relief_docstring
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
    {ramp_params}
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
    {target_attributes}

    Notes
    -----
    {survival_note}
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
