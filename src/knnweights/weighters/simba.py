"""Simba and G-flip (Gilad-Bachrach, Navot & Tishby 2004): hypothesis-margin weighting."""

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ..engine import _kernels
from ..engine.neighbors import weighted_distances
from ._base import BaseWeighter, warn_max_iter

__all__ = ["Simba", "GFlip"]


class Simba(BaseWeighter):
    """Simba: stochastic gradient ascent on the sum of hypothesis margins.

    The margin of ``x`` under weights ``w`` is
    ``theta(x) = 1/2 (||x - nearmiss(x)||_w - ||x - nearhit(x)||_w)`` with
    ``||z||_w = sqrt(sum_i w_i^2 z_i^2)``.  Starting from ``w = 1``, each step takes
    an instance and moves ``w`` along the gradient of its margin (Gilad-Bachrach,
    Navot & Tishby 2004, Fig. 1; the gradient is their eq. (5)); the result is
    ``w^2 / ||w^2||_inf``, used as weights of the squared Euclidean distance.

    Parameters
    ----------
    n_passes : int, default=1
        Passes over the data, each in a fresh random order (``T = n_passes * n`` steps).
    n_init : int, default=1
        Random starting orders; the run with the largest sum of margins is kept (the
        SQP-FW protocol uses 5).
    random_state : int, RandomState or None

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,), max 1
    metric_ : ``"sqeuclidean"``
    margin_ : float
        Sum of the hypothesis margins of the kept run.

    References
    ----------
    R. Gilad-Bachrach, A. Navot and N. Tishby, "Margin based feature selection -
    theory and algorithms", ICML 2004.
    """

    _metric = "sqeuclidean"
    _parameter_constraints = {
        "n_passes": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_passes=1, n_init=1, random_state=None):
        self.n_passes = n_passes
        self.n_init = n_init
        self.random_state = random_state

    def _fit(self, X, y):
        rng = check_random_state(self.random_state)
        X = np.ascontiguousarray(X, dtype=np.float64)
        best, best_margin = None, -np.inf
        for _ in range(self.n_init):
            w = np.ones(X.shape[1])
            order = np.concatenate([rng.permutation(X.shape[0]) for _ in range(self.n_passes)]).astype(np.int64)
            _kernels.simba_pass(X, y, order, w)
            w2 = w * w
            m = w2.max()
            w2 = w2 / m if m > 0 else w2
            margin = _sum_hypothesis_margins(X, y, w2)
            if margin > best_margin:
                best, best_margin = w2, margin
        self.margin_ = float(best_margin)
        return best


def _sum_hypothesis_margins(X, y, w):
    D = np.sqrt(np.maximum(weighted_distances(X, None, w, "sqeuclidean"), 0))
    np.fill_diagonal(D, np.inf)
    same = y[:, None] == y[None, :]
    nh = np.where(same, D, np.inf).min(axis=1)
    nm = np.where(~same, D, np.inf).min(axis=1)
    ok = np.isfinite(nh) & np.isfinite(nm)
    return float(0.5 * (nm[ok] - nh[ok]).sum())


class GFlip(BaseWeighter):
    """G-flip: greedy feature flip maximising the sum of leave-one-out hypothesis margins.

    The evaluation of a feature set ``F`` is ``e(F) = sum_x u(theta_F(x))`` with
    ``theta_F(x) = 1/2 (||x - nearmiss(x)|| - ||x - nearhit(x)||)`` over the features
    of ``F`` (``x`` left out of its own neighbours).  Starting from ``F = {}``, each
    pass visits the features in a random order and flips each one in or out of
    ``F`` when that increases ``e``; it stops after a pass without a flip or at
    ``max_iter`` passes (Gilad-Bachrach, Navot & Tishby 2004, Fig. 2).

    Parameters
    ----------
    utility : {"linear", "zero-one", "sigmoid"}, default="linear"
    beta : float, default=1.0
        Slope of the sigmoid utility.
    max_iter : int, default=20
    random_state : int, RandomState or None

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        1 for the selected features, 0 otherwise (all zero when no feature set has a
        positive evaluation gain: then no feature helps the 1-NN margin).
    support_ : ndarray of bool
    n_iter_ : int
    cost_history_ : list of float
        ``e(F)`` after each pass.
    metric_ : ``"sqeuclidean"``

    Notes
    -----
    Keeps the ``n x n`` matrix of squared distances over ``F`` (updated per flip in
    O(n^2)); a pass costs O(d n^2) compiled operations.
    """

    _metric = "sqeuclidean"
    _parameter_constraints = {
        "utility": [StrOptions({"linear", "zero-one", "sigmoid"})],
        "beta": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, utility="linear", beta=1.0, max_iter=20, random_state=None):
        self.utility = utility
        self.beta = beta
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, y):
        rng = check_random_state(self.random_state)
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        u = {"linear": 0, "zero-one": 1, "sigmoid": 2}[self.utility]
        D = np.zeros((n, n))
        F = np.zeros(d, dtype=bool)
        buf = np.empty(n)
        cols = np.ascontiguousarray(X.T)
        current = _kernels.gflip_margins(D, cols[0], 0.0, y, u, float(self.beta), buf).sum()
        self.cost_history_ = []
        for it in range(1, self.max_iter + 1):
            changed = False
            for j in rng.permutation(d):
                sign = -1.0 if F[j] else 1.0
                cand = _kernels.gflip_margins(D, cols[j], sign, y, u, float(self.beta), buf).sum()
                if cand > current + 1e-12 * max(1.0, abs(current)):
                    diff = cols[j][:, None] - cols[j][None, :]
                    D += sign * diff * diff
                    np.maximum(D, 0.0, out=D)
                    F[j] = not F[j]
                    current = cand
                    changed = True
            self.cost_history_.append(float(current))
            if not changed:
                break
        else:
            warn_max_iter(self, self.max_iter, "the feature set")
        self.n_iter_ = it
        self.support_ = F
        return F.astype(np.float64)
