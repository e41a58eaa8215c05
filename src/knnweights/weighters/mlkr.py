"""Metric learning for kernel regression with a diagonal metric (Weinberger & Tesauro 2007).

The regression counterpart of :class:`knnweights.NCADiagonal`: the leave-one-out
Nadaraya-Watson estimate with a Gaussian kernel of the learned metric,
``d_w(x, x') = sum_k w_k (x_k - x'_k)**2``, is fitted to a continuous target by
minimising its squared error over the feature weights ``w >= 0`` (``A`` diagonal,
``w = diag(A^T A)``).
"""

import warnings

import numpy as np
from sklearn.utils import check_random_state

from ..engine.neighbors import distance_chunks
from ..utils import validate_params
from ._base import BaseWeighter, warn_max_iter
from ._validation import validate_continuous_fit_data
from .nca import NCADiagonal, _multistart_lbfgsb

__all__ = ["MLKRDiagonal", "mlkr_diagonal_objective"]


def mlkr_diagonal_objective(w, X, y, working_memory=None):
    """MLKR's leave-one-out loss and its gradient in the diagonal weights ``w``.

    With ``k_ij = exp(-d_w(x_i, x_j))`` and ``p_ij = k_ij / sum_{l != i} k_il`` (``p_ii = 0``),
    the kernel regression estimate is ``yhat_i = sum_j p_ij y_j`` and the loss
    ``L(w) = sum_i (y_i - yhat_i)^2`` (Weinberger & Tesauro 2007, eqs. 1-3; the kernel
    width is absorbed in the metric).  As ``d p_ij / d w_k = p_ij (sum_l p_il phi_ilk - phi_ijk)``
    with ``phi_ijk = (x_ik - x_jk)^2``, ``d yhat_i / d w_k = -sum_j p_ij (y_j - yhat_i) phi_ijk``,
    so (their eq. 4 gradient restricted to the diagonal)

        dL/dw_k = sum_ij C_ij phi_ijk,   C_ij = -2 (yhat_i - y_i) p_ij (y_j - yhat_i),

    computed as ``(r + c) . X**2 - 2 diag(X^T C X)`` (``r``, ``c`` the row and column sums
    of ``C``) in row blocks of the distance matrix (:func:`~knnweights.engine.neighbors.distance_chunks`,
    ``O(block x n + n d)`` memory).

    Parameters
    ----------
    w : ndarray of shape (d,)
        Non-negative weights.
    X : ndarray of shape (n, d)
        Samples.
    y : ndarray of shape (n,)
        The continuous target.
    working_memory : float, default=None
        MiB per row block (``None``: the global configuration).

    Returns
    -------
    loss : float
        The objective.
    grad : ndarray of shape (d,)
        Its gradient.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = X.shape[0]
    loss = 0.0
    rc = np.zeros(n)
    cross = np.zeros(X.shape[1])
    for s, e, D in distance_chunks(X, None, np.asarray(w, dtype=np.float64), "sqeuclidean", working_memory,
                                   n_arrays=5):  # D, L, P, C and one temporary, block x n each
        L = -np.asarray(D, dtype=np.float64)
        rows = np.arange(e - s)
        L[rows, s + rows] = -np.inf
        L -= L.max(axis=1, keepdims=True)
        P = np.exp(L)
        P /= P.sum(axis=1, keepdims=True)
        yhat = P @ y
        res = yhat - y[s:e]
        loss += float(res @ res)
        C = -2.0 * res[:, None] * P * (y[None, :] - yhat[:, None])
        rc[s:e] += C.sum(axis=1)
        rc += C.sum(axis=0)
        cross += np.einsum("ik,ik->k", X[s:e], C @ X)
    grad = rc @ (X * X) - 2.0 * cross
    return loss, grad


class MLKRDiagonal(BaseWeighter):
    """MLKR with a diagonal metric (Weinberger & Tesauro 2007): feature weights for kernel regression.

    Minimises the leave-one-out squared error of Gaussian-kernel (Nadaraya-Watson)
    regression, ``L(w) = sum_i (y_i - sum_{j != i} p_ij y_j)^2`` with
    ``p_ij = softmax_{j != i}(-d_w(x_i, x_j))`` (eqs. 1-3), over the diagonal metric
    ``w >= 0`` of the squared Euclidean distance, by L-BFGS-B with the bounds ``w >= 0``
    (the gradient: :func:`mlkr_diagonal_objective`).  The continuous-target twin of
    :class:`NCADiagonal` (same parametrisation, starts and stopping rule); ``y`` is
    always a continuous target.

    Parameters
    ----------
    max_iter : int, default=100
        L-BFGS-B iterations per start (a ``ConvergenceWarning`` when reached).
    tol : float, default=1e-5
        L-BFGS-B ``ftol`` and ``gtol``.
    init : {"scaled", "ones", "random"}, default="scaled"
        First start: ``"scaled"``: ``w = 1 / mean_{i != j} ||x_i - x_j||**2`` (typical
        logit ``-1``: soft kernel neighbourhoods); ``"ones"``: ``w = 1``; ``"random"``:
        ``w_k ~ Uniform(0, 2)``.  Further starts are random around the first's scale.
    n_init : int, default=1
        Starts; the smallest loss is kept.
    random_state : int, RandomState or None
        Seeds the random starts (``init="random"`` and every start after the first).
    verbose : int, default=0
        Print the iteration, the loss, the function evaluations and the elapsed seconds.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``w`` (weights of the squared Euclidean distance).
    objective_ : float
        The leave-one-out squared error ``L(w)`` at the returned weights.
    n_iter_ : int
    cost_history_ : list of float
        ``L`` after each L-BFGS-B iteration of the kept start.
    metric_ : ``"sqeuclidean"``

    References
    ----------
    K. Q. Weinberger and G. Tesauro, "Metric learning for kernel regression", AISTATS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import MLKRDiagonal
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 5)); y = np.sin(2 * X[:, 0]) + 0.05 * rng.normal(size=80)
    >>> int(np.argmax(MLKRDiagonal().fit(X, y).feature_importances_))
    0
    """

    _algorithm_version = 1

    _metric = "sqeuclidean"
    # the same parameters as NCADiagonal: its constraints and its __init__ (which only stores them)
    _parameter_constraints = dict(NCADiagonal._parameter_constraints)
    __init__ = NCADiagonal.__init__

    def fit(self, X, y):
        """Learn the feature weights for the continuous target ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            A continuous (numeric) target.

        Returns
        -------
        self : MLKRDiagonal
            The fitted weighter.
        """
        validate_params(self)
        X, yv = validate_continuous_fit_data(self, X, y)
        self._fit_weights(X, None, lambda X, _: self._fit_continuous(X, yv), stacklevel=3)
        if self._stopped_at_max_iter:
            warn_max_iter(self, self.max_iter)
        return self

    def _fit_continuous(self, X, y):
        rng = check_random_state(self.random_state)
        X = np.asarray(X, dtype=np.float64)
        d = X.shape[1]
        varying = np.ptp(X, axis=0) > 0
        if not varying.any():
            warnings.warn(f"{type(self).__name__}: every feature of X is constant; all weights are 0.", UserWarning,
                          stacklevel=4)
            self.objective_ = float(mlkr_diagonal_objective(np.zeros(d), X, y)[0])
            self.n_iter_, self.cost_history_ = 0, []
            self._stopped_at_max_iter = False
            return np.zeros(d)
        Xv = np.ascontiguousarray(X[:, varying] - X[:, varying].mean(axis=0))
        # the target's scale does not move the optimum: standardised, the tolerances mean the same on any units
        ys = (y - y.mean()) / y.std()
        res, history = _multistart_lbfgsb(self, lambda w: mlkr_diagonal_objective(w, Xv, ys), Xv, rng, "Loss", 1.0)
        self._stopped_at_max_iter = res.nit >= self.max_iter and not res.success
        self.objective_ = float(res.fun) * float(y.var())  # in the units of y^2
        self.n_iter_ = int(res.nit)
        self.cost_history_ = [h * float(y.var()) for h in history]
        w = np.zeros(d)
        w[varying] = np.maximum(res.x, 0.0)
        return w

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.one_d_labels = True
        return tags
