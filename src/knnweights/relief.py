"""The Relief family: Relief, ReliefF, I-RELIEF and MulRel on the shared neighbour engine.

One engine, several variants (as CORElearn does): the neighbours (nearest, k nearest
per class, kernel-soft), the sample weighting (priors, outlier probabilities) and the
iteration (once, or re-weighted neighbours) are the axes; distances, neighbour search
and margin vectors all come from :mod:`knnweights.neighbors`.
"""

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from .base import BaseWeighter, normalize_weights, warn_max_iter
from .neighbors import hard_margin_vectors, nearest_by_class, nearest_hits_misses, soft_margins

__all__ = ["Relief", "ReliefF", "IRelief", "MulRel", "range_normalize"]


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
