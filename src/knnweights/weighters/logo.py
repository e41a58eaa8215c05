"""LOGO (Sun, Todorovic & Goodison 2010): local-learning-based feature selection.

Each outer iteration fixes the soft nearest hits and misses under the current weights
(kernel width ``sigma``, weighted Manhattan distance), which makes every sample's
expected margin linear in ``w``: ``w . z_n``.  The weights then solve an
l1-regularised logistic regression on those margins (the inner problem, a convex
program in ``w >= 0``); the neighbours are recomputed with the new weights and the
two steps alternate until the weights stop changing.
"""

import numbers
import time

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.utils._param_validation import Interval

from ..engine.linalg import single_thread_blas
from ..engine.neighbors import soft_margins
from ._base import BaseWeighter, warn_max_iter

__all__ = ["Logo", "logo_inner_objective", "logo_inner_solve"]


def logo_inner_objective(w, Z, lambda_):
    """Objective and gradient of LOGO's inner problem (Sun et al. 2010, Sec. 3).

    ``f(w) = sum_n log(1 + exp(-w . z_n)) + lambda ||w||_1``; on ``w >= 0`` the l1 norm
    is ``sum(w)``, so ``grad f = -sum_n sigmoid(-w . z_n) z_n + lambda``.

    Parameters
    ----------
    w : ndarray of shape (d,), non-negative
    Z : ndarray of shape (n, d)
        Expected margin vectors ``z_n`` (fixed for the inner problem).
    lambda_ : float

    Returns
    -------
    f : float
    grad : ndarray of shape (d,)
    """
    m = Z @ w
    f = float(np.logaddexp(0.0, -m).sum() + lambda_ * w.sum())
    grad = -(Z.T @ expit(-m)) + lambda_
    return f, grad


def logo_inner_solve(Z, lambda_, w0, gtol=1e-9, maxiter=15000):
    """Solve ``min_{w >= 0} sum_n log(1 + exp(-w . z_n)) + lambda sum(w)`` with L-BFGS-B.

    LOGO (Sun et al. 2010, Sec. 3) substitutes ``w = v**2`` and runs gradient descent
    in ``v``; both reach the minimiser of the same convex problem, which the
    bound-constrained quasi-Newton method finds faster (``tests/test_logo.py`` checks
    the two against each other).  ``gtol`` bounds the
    projected gradient at the returned point.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` the minimiser, ``fun`` its objective, plus the solver's status fields.
    """
    Z = np.asarray(Z, dtype=np.float64)
    with single_thread_blas():  # matrix-vector products of n x d: threads only add overhead
        res = minimize(logo_inner_objective, np.asarray(w0, dtype=np.float64), args=(Z, float(lambda_)), jac=True,
                       method="L-BFGS-B", bounds=[(0.0, None)] * Z.shape[1],
                       options={"gtol": gtol, "ftol": 1e-15, "maxiter": maxiter, "maxcor": 20})
    res.x = np.maximum(res.x, 0.0)
    return res


class Logo(BaseWeighter):
    """LOGO: local-learning-based feature selection (Sun, Todorovic & Goodison 2010).

    With the weights ``w`` of the previous iteration, hits and misses of each sample
    are soft: ``P(x_h = NH(x_n) | w) ∝ exp(-d_w(x_n, x_h) / sigma)`` over the hits,
    likewise over the misses (weighted Manhattan distance ``d_w``, kernel
    ``exp(-d / sigma)``).  The expected margin vector
    ``z_n = E_miss|x_n - x_m| - E_hit|x_n - x_h|`` then makes the margin linear in ``w``
    and the new weights solve the l1-regularised logistic regression

        min_{w >= 0} sum_n log(1 + exp(-w . z_n)) + lambda ||w||_1,

    starting from ``w = 1`` and repeated until ``||w_t - w_{t-1}||_2 < tol`` or
    ``max_iter`` (then a ``ConvergenceWarning``).  The paper solves it by gradient
    descent on ``v`` with ``w = v**2``; here it is solved by L-BFGS-B with the bound
    ``w >= 0`` (the same convex problem, so the same minimiser), warm-started from the
    previous weights.  (Sun et al. 2010, Sec. 3 and its algorithm; equation numbers are
    not quoted because the paper is not among the project's stored papers.)  The
    paper proves convergence of the outer iteration for a large enough ``sigma``; with
    a small ``sigma`` (nearly hard neighbours on high-dimensional data) the iteration
    can cycle and stops at ``max_iter`` with a warning.

    Multi-class data: hits are the samples of the same class, misses all the others
    (the paper's binary formulation with "other class" pooled).

    Parameters
    ----------
    sigma : float, default=1.0
        Kernel width of the soft neighbours (``> 0``).
    lambda_ : float, default=1.0
        l1 regularisation strength (``> 0``; at 0 the inner problem is unbounded on
        separable data); larger values give sparser weights.
    max_iter : int, default=50
        Outer iterations (neighbour re-estimations).
    tol : float, default=1e-2
        Stop when the weights change by less than ``tol`` (Euclidean norm); the
        paper's ``theta = 0.01``.
    inner_tol : float, default=1e-9
        Bound on the projected gradient of the inner problem at its solution.  While
        the weights still move, the inner problem (rebuilt at the next iteration anyway)
        is solved to ``max(inner_tol, min(0.1 lambda_, 1e-2 * last step))`` only (a
        tenth of the l1 penalty's slope at most); the iteration that meets ``tol`` and
        the last one are solved to ``inner_tol``.
    verbose : int, default=0
        ``> 0``: print per outer iteration the inner objective, the weight change, the
        inner L-BFGS-B iterations, the non-zero weights and the elapsed seconds.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The weights ``w`` (not normalised: their scale is set by ``lambda_``).
    n_iter_ : int
        Outer iterations run.
    cost_history_ : list of float
        Optimal value of the inner problem at each outer iteration.
    metric_ : ``"manhattan"``

    Notes
    -----
    Constant features have ``z_nj = 0`` for every sample; they start at weight 0 and the
    l1 term keeps them there.  Each outer iteration costs one ``O(n^2 d)`` pass of
    compiled kernels (the soft margins, in row blocks) and holds the ``(n, d)`` margins.

    References
    ----------
    Y. Sun, S. Todorovic and S. Goodison, "Local-learning-based feature selection for
    high-dimensional data analysis", IEEE TPAMI 32(9):1610-1626, 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import Logo
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 6)); y = (X[:, 0] > 0).astype(int)
    >>> int(np.argmax(Logo(sigma=1.0, lambda_=1.0).fit(X, y).feature_importances_))
    0
    """

    _metric = "manhattan"
    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "lambda_": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "inner_tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
    }

    def __init__(self, sigma=1.0, lambda_=1.0, max_iter=50, tol=1e-2, inner_tol=1e-9, verbose=0):
        self.sigma = sigma
        self.lambda_ = lambda_
        self.max_iter = max_iter
        self.tol = tol
        self.inner_tol = inner_tol
        self.verbose = verbose

    def __sklearn_is_fitted__(self):
        # the parameter ``lambda_`` ends in "_", which would fool check_is_fitted
        return hasattr(self, "feature_importances_")

    def _fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        # constant features carry no margin (z_nj = 0): start them at 0, where the l1
        # term keeps them
        w = (np.ptp(X, axis=0) > 0).astype(np.float64)
        self.cost_history_ = []
        t0 = time.perf_counter()
        if self.verbose:
            print(f"[{type(self).__name__}]")
            print(f"{'Iteration':>10} {'Objective Value':>20} {'Step':>12} {'inner it':>9} {'non-zero':>9} "
                  f"{'Time(s)':>10}")
        step = np.inf
        for it in range(1, self.max_iter + 1):
            self.n_iter_ = it
            Z = soft_margins(X, y, w, self.sigma, "manhattan", per_sample=True).z
            loose = max(self.inner_tol, min(0.1 * self.lambda_, 1e-2 * step))
            gtol = self.inner_tol if it == self.max_iter else loose
            res = logo_inner_solve(Z, self.lambda_, w, gtol=gtol)
            n_inner = int(res.nit)
            new_step = float(np.linalg.norm(res.x - w))
            if new_step < self.tol and gtol > self.inner_tol:  # the final weights: solved to inner_tol
                res = logo_inner_solve(Z, self.lambda_, res.x, gtol=self.inner_tol)
                n_inner += int(res.nit)
                new_step = float(np.linalg.norm(res.x - w))
            step = new_step
            w = res.x
            self.cost_history_.append(float(res.fun))
            if self.verbose:
                print(f"{it:>10d} {res.fun:>20.6e} {step:>12.4e} {n_inner:>9d} {np.count_nonzero(w):>9d} "
                      f"{time.perf_counter() - t0:>10.2f}")
            if step < self.tol:
                break
        else:
            warn_max_iter(self, self.max_iter)
        return w
