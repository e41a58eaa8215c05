"""LH-RELIEF (Cai & Ng 2012): RELIEF margins measured to local hyperplanes of hits and misses."""

import numbers
import warnings

import numpy as np
from sklearn.utils._param_validation import Interval

from .._solvers.simplex_qp import hull_projections
from ..engine.neighbors import nearest_hits_misses
from ._base import BaseWeighter, normalize_weights, warn_max_iter

__all__ = ["LHRelief"]


class LHRelief(BaseWeighter):
    """LH-RELIEF: feature weighting by RELIEF with local-hyperplane margins.

    Each iteration, with the current weights ``w`` (``W = diag(w)``), for every sample
    ``x_n`` (Cai & Ng, Sec. 2.2, Algorithm 2.1):

    1. find its ``k`` nearest hits and ``k`` nearest misses under the weighted
       Manhattan distance ``d_w`` (the paper's distance ``d(x) = sum_i |x_i|`` of eq. 2
       in the feature space scaled by ``w``; with several classes the misses are the
       ``k`` nearest among all other classes);
    2. approximate each set by its local hyperplane (eq. 4), i.e. solve the QP of
       eqs. 5 and 7, ``min_a 1/2 (x_n - H a)^T W (x_n - H a)`` s.t. ``sum a = 1,
       a >= 0``, for the hits (coefficients ``a_n``) and for the misses (``b_n``),
       with the batched exact solver :func:`knnweights._solvers.simplex_qp.solve_simplex_qp`;
    3. form the margin vector (eqs. 6 and 8)
       ``z_n = |x_n - H_miss b_n| - |x_n - H_hit a_n|`` (elementwise);
    4. update as I-RELIEF does (eq. 9 with the I-RELIEF normalisation):
       ``w = max(mean_n z_n, 0) / ||max(mean_n z_n, 0)||_2``.

    It starts from ``w = 1/d`` and stops when ``||w_t+1 - w_t||_2 < tol`` or at
    ``max_iter`` (then a ``ConvergenceWarning``).  If ``mean z`` has no positive entry
    the previous weights are kept and a warning is given.

    Parameters
    ----------
    n_neighbors : int, default=5
        ``k``, the number of nearest hits and of nearest misses spanning each local
        hyperplane.
    max_iter : int, default=50
        ``T`` of Algorithm 2.1.
    tol : float, default=1e-5
        ``epsilon`` of Algorithm 2.1.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The weights (unit L2 norm, ``>= 0``).
    n_iter_ : int
        Iterations run.
    cost_history_ : list of float
        The average margin of eq. 8, ``rho(w_t) = w_t . mean_n z_n``, per iteration.
    step_history_ : list of float
        ``||w_t+1 - w_t||_2`` per iteration (the stopping quantity).
    metric_ : ``"manhattan"``
    classes_ : ndarray

    Notes
    -----
    The paper writes eq. 9 without the normalisation; following I-RELIEF (to which
    the paper refers for Steps 2-3) and the constraint ``||w||_2 = 1, w >= 0`` of its
    eq. 2, ``w`` is the positive part of the mean margin vector scaled to unit L2 norm.
    The hyperplane fit (eq. 5) is a weighted least-squares fit in ``W`` while the
    margin (eq. 8) is measured in the weighted L1 distance, as in the paper.

    References
    ----------
    H. Cai and M. Ng, "Feature weighting by RELIEF based on local hyperplane
    approximation", PAKDD 2012, LNCS 7302, pp. 335-346.

    Examples
    --------
    >>> from knnweights import LHRelief
    >>> from knnweights.datasets import add_irrelevant_features, make_spiral
    >>> X, y = make_spiral(n_per_class=100, turns=1.0, random_state=0)
    >>> X = add_irrelevant_features(3.0 * X, 20, random_state=1)
    >>> est = LHRelief(n_neighbors=5, max_iter=20).fit(X, y)
    >>> sorted(est.feature_importances_.argsort()[-2:].tolist())
    [0, 1]
    """

    _metric = "manhattan"
    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, n_neighbors=5, max_iter=50, tol=1e-5):
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol

    def _margin_vectors(self, X, y, w):
        """``z_n = |x_n - H_miss b_n| - |x_n - H_hit a_n|`` for every sample (eqs. 5-8)."""
        nb = nearest_hits_misses(X, y, w, self.n_neighbors, "manhattan")
        _, hit_proj, _ = hull_projections(X, X, nb.hit_idx, w)
        _, miss_proj, _ = hull_projections(X, X, nb.miss_idx, w)
        return np.abs(X - miss_proj) - np.abs(X - hit_proj)

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y)
        X = np.asarray(X, dtype=np.float64)
        d = X.shape[1]
        w = np.full(d, 1.0 / d)
        self.cost_history_ = []
        self.step_history_ = []
        converged = False
        for it in range(1, self.max_iter + 1):
            self.n_iter_ = it
            z_mean = self._margin_vectors(X, y, w).mean(axis=0)
            self.cost_history_.append(float(w @ z_mean))
            w_new = normalize_weights(z_mean, "l2")
            if not w_new.any():
                warnings.warn(
                    "LHRelief: the mean margin vector has no positive entry (no feature separates the "
                    "local hyperplanes of hits and misses); keeping the previous weights.",
                    UserWarning,
                    stacklevel=3,
                )
                converged = True
                break
            step = float(np.linalg.norm(w_new - w))
            self.step_history_.append(step)
            w = w_new
            if step < self.tol:
                converged = True
                break
        if not converged:
            warn_max_iter(self, self.max_iter)
        return w
