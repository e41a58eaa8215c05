"""The Relief family: Relief, ReliefF, SURF, MultiSURF, I-RELIEF and MulRel on the shared neighbour engine.

One engine, several variants (as CORElearn does): the neighbours (nearest, k nearest
per class, all within a distance threshold, kernel-soft), the sample weighting (priors, outlier probabilities) and the
iteration (once, or re-weighted neighbours) are the axes; distances, neighbour search
and margin vectors all come from :mod:`knnweights.engine.neighbors`.
"""

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ..engine import _kernels
from ..engine._config import get_config
from ..engine.neighbors import (
    _coef_phi_rows,
    distance_chunks,
    hard_margin_vectors,
    nearest_by_class,
    nearest_hits_misses,
    soft_margins,
    weighted_distances,
)
from ._base import BaseWeighter, normalize_weights, warn_max_iter

__all__ = ["Relief", "ReliefF", "IRelief", "MulRel", "SURF", "MultiSURF", "range_normalize"]


def range_normalize(X):
    """Divide each feature by its range (max - min); constant features stay 0-difference.

    This is Relief's ``diff(A, I1, I2) = |I1_A - I2_A| / (max A - min A)``
    (Robnik-Sikonja & Kononenko 2003, eq. 2), applied once to the data.
    """
    rng = X.max(axis=0) - X.min(axis=0)
    return X / np.where(rng > 0, rng, 1.0)


def _sample_rows(n, n_iter, random_state):
    if n_iter is None:
        return np.arange(n)
    return check_random_state(random_state).randint(0, n, size=n_iter)


def relieff_margins(Z, codes, n_neighbors=1, rows=None, w=None, metric="manhattan", per_class=True):
    """Mean ReliefF margin vector over the query ``rows`` (Kononenko 1994, ReliefF).

    For each query ``R`` of class ``c``: the ``k`` nearest hits and, for every other
    class ``C``, its ``k`` nearest misses; the margin vector is
    ``sum_C P(C)/(1 - P(c)) * mean_k diff(R, M_k(C)) - mean_k diff(R, H_k)``.
    With ``per_class=False`` the ``k`` nearest misses are taken among all misses
    (Relief's rule), unweighted.  ``w`` weights the distance that picks neighbours
    (MulRel); ``None`` is unweighted.

    Returns
    -------
    ndarray of shape (d,), the mean over the queries.
    """
    n = Z.shape[0]
    rows = np.arange(n) if rows is None else rows
    k = n_neighbors
    if not per_class:
        nb = nearest_hits_misses(Z, codes, w, k, metric, rows=rows)
        return hard_margin_vectors(Z, nb.hit_idx, nb.miss_idx, "manhattan", rows=rows) / rows.size
    n_classes = int(codes.max()) + 1
    idx, _ = nearest_by_class(Z, codes, w, k, metric, n_classes=n_classes, rows=rows)
    prior = np.bincount(codes, minlength=n_classes) / n
    own = codes[rows]
    # coefficient of each (query, class, neighbour): -1/k for hits, P(C)/(1-P(own))/k for misses
    coef = prior[None, :] / (1.0 - prior[own])[:, None]
    coef[np.arange(rows.size), own] = -1.0
    coef = np.repeat(coef[:, :, None] / k, k, axis=2)
    coef[idx < 0] = 0.0
    empty = np.empty((rows.size, 0), np.int64)
    z = hard_margin_vectors(Z, empty, idx.reshape(rows.size, -1), "manhattan", hit_coef=np.empty((rows.size, 0)),
                            miss_coef=coef.reshape(rows.size, -1), rows=rows)
    return z / rows.size


class _ReliefBase(BaseWeighter):
    _metric = "manhattan"

    def _normalized(self, X):
        return range_normalize(X) if self.normalize else X


class Relief(_ReliefBase):
    """RELIEF (Kira & Rendell 1992).

    For each instance ``R`` the nearest hit ``H`` and nearest miss ``M`` (over all
    other classes); ``W[A] += diff(A, R, M) - diff(A, R, H)``, averaged over the
    instances, with ``diff`` the range-normalised absolute difference.  By default
    every sample is an instance once (deterministic); ``n_iter`` draws that many
    instances at random instead (the original sampled form).

    Parameters
    ----------
    n_iter : int or None, default=None
        ``None``: all samples, deterministic; otherwise the number of sampled instances.
    normalize : bool, default=True
        Range-normalise the differences (Kira & Rendell's ``diff``).
    random_state : int, RandomState or None
        Used only when ``n_iter`` is set.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``max(scores_, 0)``.
    scores_ : ndarray of shape (n_features,)
        The raw (signed) Relief weights.
    metric_ : str
        ``"manhattan"``.

    References
    ----------
    K. Kira and L. Rendell, "A practical approach to feature selection", ICML 1992.
    """

    _parameter_constraints = {
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_iter=None, normalize=True, random_state=None):
        self.n_iter = n_iter
        self.normalize = normalize
        self.random_state = random_state

    def _fit(self, X, y):
        Z = self._normalized(X)
        rows = _sample_rows(X.shape[0], self.n_iter, self.random_state)
        self.scores_ = relieff_margins(Z, y, 1, rows, per_class=False)
        return self.scores_


class ReliefF(_ReliefBase):
    """RELIEF-F (Kononenko 1994), as Robnik-Sikonja & Kononenko (2003) define it.

    For each instance ``R`` of class ``c``: its ``k`` nearest hits ``H_j`` and, for
    each other class ``C``, its ``k`` nearest misses ``M_j(C)``;

        W[A] += - sum_j diff(A, R, H_j) / (m k)
                + sum_{C != c} P(C) / (1 - P(c)) sum_j diff(A, R, M_j(C)) / (m k)

    (Robnik-Sikonja & Kononenko 2003, Fig. 3), ``diff`` the range-normalised
    absolute difference and neighbours by the Manhattan distance of the diffs.

    Parameters
    ----------
    n_neighbors : int, default=10
        ``k``; must not exceed the number of hits of the smallest class.
    n_iter : int or None, default=None
        ``None``: every sample is an instance (``m = n``, deterministic).
    normalize : bool, default=True
    random_state : int, RandomState or None

    Attributes
    ----------
    feature_importances_, scores_, metric_ : as :class:`Relief`.

    References
    ----------
    I. Kononenko, "Estimating attributes: analysis and extensions of RELIEF", ECML 1994.
    M. Robnik-Sikonja and I. Kononenko, "Theoretical and empirical analysis of ReliefF
    and RReliefF", Machine Learning 53, 2003.
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "normalize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_neighbors=10, n_iter=None, normalize=True, random_state=None):
        self.n_neighbors = n_neighbors
        self.n_iter = n_iter
        self.normalize = normalize
        self.random_state = random_state

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y)
        Z = self._normalized(X)
        rows = _sample_rows(X.shape[0], self.n_iter, self.random_state)
        self.scores_ = relieff_margins(Z, y, self.n_neighbors, rows, per_class=True)
        return self.scores_


class IRelief(BaseWeighter):
    """I-RELIEF (Sun 2007): iterative Relief with kernel-soft neighbours and outliers.

    With the current weights ``w`` and the weighted Manhattan distance, hits and
    misses are soft: ``P(h | n) ∝ exp(-d_w(x_n, x_h) / sigma)`` over hits, likewise
    over misses; the probability that ``x_n`` is an outlier is
    ``o_n = sum_m exp(-d_nm/sigma) / sum_{j != n} exp(-d_nj/sigma)``.  Then (Sun 2007,
    eqs. 14-16)

        v = (1/n) sum_n (1 - o_n) z_n,    w = (v)+ / ||(v)+||_2,

    ``z_n`` the soft margin vector, repeated from ``w = 1/sqrt(d)`` (unit norm) until
    ``||w_t+1 - w_t||_2 < tol`` or ``max_iter`` (then a ``ConvergenceWarning``).

    Parameters
    ----------
    sigma : float, default=1.0
        Kernel width.
    max_iter : int, default=50
    tol : float, default=1e-6
    normalize : bool, default=False
        Range-normalise features first (off: I-RELIEF uses the data as given).

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,), unit L2 norm
    n_iter_ : int
    cost_history_ : list of float
        ``||w_t+1 - w_t||_2`` per iteration (I-RELIEF has no explicit objective).
    metric_ : ``"manhattan"``

    References
    ----------
    Y. Sun, "Iterative RELIEF for feature weighting: algorithms, theories, and
    applications", IEEE TPAMI 29(6), 2007.
    """

    _metric = "manhattan"
    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "normalize": ["boolean"],
    }

    def __init__(self, sigma=1.0, max_iter=50, tol=1e-6, normalize=False):
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.normalize = normalize

    @staticmethod
    def _inlier_probability(log_hit_mass, log_miss_mass):
        # 1 - o_n, with o_n = miss mass / (hit + miss mass), in log space
        return -np.expm1(log_miss_mass - np.logaddexp(log_hit_mass, log_miss_mass))

    def _fit(self, X, y):
        Z = range_normalize(X) if self.normalize else X
        d = X.shape[1]
        w = np.full(d, 1.0 / np.sqrt(d))
        self.cost_history_ = []
        for it in range(1, self.max_iter + 1):
            sm = soft_margins(Z, y, w, self.sigma, "manhattan", sample_weight=self._inlier_probability)
            w_new = normalize_weights(sm.z / X.shape[0], "l2")
            if not w_new.any():
                break
            step = float(np.linalg.norm(w_new - w))
            self.cost_history_.append(step)
            w = w_new
            if step < self.tol:
                break
        else:
            warn_max_iter(self, self.max_iter)
        self.n_iter_ = it
        return w


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

    Parameters
    ----------
    n_neighbors : int, default=1
    n_rounds : int, default=100
        Outer rounds (the paper's setting).
    normalize : bool, default=True
        Range-normalised differences, as :class:`Relief`.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
    n_iter_ : int
        Rounds run.
    cost_history_ : list of float
        ``||w_t+1 - w_t||_2`` per round.
    metric_ : ``"manhattan"``
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left")],
        "normalize": ["boolean"],
    }

    def __init__(self, n_neighbors=1, n_rounds=100, normalize=True):
        self.n_neighbors = n_neighbors
        self.n_rounds = n_rounds
        self.normalize = normalize

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y)
        Z = self._normalized(X)
        w = None
        self.cost_history_ = []
        for it in range(1, self.n_rounds + 1):
            w_new = normalize_weights(relieff_margins(Z, y, self.n_neighbors, None, w=w, per_class=False), "l2")
            if not w_new.any():  # no positive margin under these neighbours: keep the last weights
                w_new = np.zeros(X.shape[1]) if w is None else w
                break
            step = float(np.linalg.norm(w_new - (w if w is not None else 0)))
            self.cost_history_.append(step)
            w = w_new
            if step == 0.0:
                break
        self.n_iter_ = it
        return w_new


# -- SURF and MultiSURF: every instance within a distance threshold is a neighbour -------------------------------------
# n x n (or block x n) arrays alive at once (distances, coefficients and their temporaries), in 8-byte units
_RADIUS_BLOCK_ARRAYS = 6


def _multisurf_thresholds(D, start):
    """``T_i = mean_i - std_i / 2`` over the ``n - 1`` distances from ``i`` (rows ``start:`` of a block)."""
    n = D.shape[1]
    rows = np.arange(D.shape[0])
    mean = D.sum(axis=1, dtype=np.float64) / (n - 1)
    dev = D - mean[:, None]
    dev[rows, start + rows] = 0.0  # the sample itself is not among the n - 1 distances
    return mean - np.sqrt(np.einsum("ij,ij->i", dev, dev) / (n - 1)) / 2.0


def _in_radius(D, T, start):
    near = D < T[:, None]
    rows = np.arange(D.shape[0])
    near[rows, start + rows] = False
    return near


def _radius_coefficients(near, own, codes, prior, multiclass):
    """Coefficients ``P[i, j]`` of the in-radius neighbours: ``-1/h_i`` on hits, class-weighted on misses."""
    b, n_classes = near.shape[0], prior.size
    rows = np.arange(b)
    counts = np.stack([np.count_nonzero(near[:, codes == c], axis=1) for c in range(n_classes)], axis=1)
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
    return np.where(near, coef[:, codes], 0.0)


def _symmetric_distances(Z):
    """The full Manhattan distance matrix, each pair computed once (:func:`weighted_distances`)."""
    return weighted_distances(Z, metric="manhattan")


def _fold_pairs(P):
    """``P + P^T`` with each unordered pair given to one of its two rows, ``(n - 1) / 2`` pairs a row.

    ``sum_ij P_ij phi(z_i - z_j)`` is then a sum over half the pairs; giving pair ``(i, j)``
    to row ``i`` when ``j - i mod n`` is in the first half (instead of the upper triangle)
    keeps the rows, hence the threads of the kernel, equally loaded (compiled:
    ``_kernels.fold_pairs``).
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    return _kernels.fold_pairs(P, np.empty_like(P))


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
        P = _fold_pairs(_radius_coefficients(_in_radius(D, T, 0), codes, codes, prior, multiclass))
        del D
        z = _coef_phi_rows(Z, Z, P.astype(Z.dtype, copy=False), 0).sum(axis=0, dtype=np.float64)
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
        near = _in_radius(D, T[start:stop], start)
        P = _radius_coefficients(near, codes[start:stop], codes, prior, multiclass).astype(Z.dtype, copy=False)
        per_sample[start:stop] = _coef_phi_rows(Z[start:stop], Z, P, 0)
    return per_sample.sum(axis=0, dtype=np.float64) / n, T


class _RadiusReliefBase(_ReliefBase):
    _parameter_constraints = {
        "normalize": ["boolean"],
        "multiclass": [StrOptions({"prior", "rebate"})],
    }

    def __init__(self, normalize=True, multiclass="prior"):
        self.normalize = normalize
        self.multiclass = multiclass

    def _fit(self, X, y):
        Z = self._normalized(X)
        self.scores_, thresholds = radius_margins(Z, y, self._rule, self.multiclass)
        self._store_thresholds(thresholds)
        return self.scores_


class SURF(_RadiusReliefBase):
    """SURF, Spatially Uniform ReliefF (Greene et al. 2009).

    The neighbours of instance ``i`` are all ``j != i`` closer than one threshold ``T``,
    the mean distance: with ``diff(A, I1, I2) = |I1_A - I2_A| / (max A - min A)`` and
    ``d_ij = sum_A diff(A, x_i, x_j)`` (Manhattan on range-normalised data),

        T = (1 / n^2) sum_{i, j} d_ij          (zero diagonal included, as ReBATE/skrebate;
                                                 the off-diagonal mean is n T / (n - 1))
        N_i = {j != i : d_ij < T}              (strict, ties excluded)

    and, with ``h_i`` hits and ``m_i(C)`` misses of each class ``C`` in ``N_i``,

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

    _rule = "mean"

    def _store_thresholds(self, thresholds):
        self.threshold_ = float(thresholds[0])


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

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``max(scores_, 0)``.
    scores_ : ndarray of shape (n_features,)
        The signed MultiSURF weights.
    thresholds_ : ndarray of shape (n_samples,)
        ``T_i`` of each training sample.
    metric_ : str
        ``"manhattan"``.

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

    _rule = "mean-std/2"

    def _store_thresholds(self, thresholds):
        self.thresholds_ = thresholds
