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
import warnings

import numpy as np
from scipy.optimize import OptimizeResult, minimize
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from ..engine.linalg import single_thread_blas
from ..engine.neighbors import soft_margins
from ..utils import Interval, StrOptions
from ._base import BaseWeighter, warn_max_iter

__all__ = ["Logo", "logo_inner_objective", "logo_inner_solve", "mean_abs_differences"]


def logo_inner_objective(w, Z, lambda_):
    """Objective and gradient of LOGO's inner problem (Sun et al. 2010, Sec. 3).

    ``f(w) = sum_n log(1 + exp(-w . z_n)) + lambda ||w||_1``; on ``w >= 0`` the l1 norm
    is ``sum(w)``, so ``grad f = -sum_n sigmoid(-w . z_n) z_n + lambda``.

    Parameters
    ----------
    w : ndarray of shape (d,)
        Non-negative weights.
    Z : ndarray of shape (n, d)
        Expected margin vectors ``z_n`` (fixed for the inner problem).
    lambda_ : float
        Weight of the l1 term.

    Returns
    -------
    f : float
        The objective.
    grad : ndarray of shape (d,)
        Its gradient.
    """
    m = Z @ w
    f = float(np.logaddexp(0.0, -m).sum() + lambda_ * w.sum())
    grad = -(Z.T @ expit(-m)) + lambda_
    return f, grad


def _lbfgsb(Z, lambda_, w0, gtol, maxiter):
    """L-BFGS-B on ``min_{w >= 0} f(w)`` over all columns of ``Z`` (one BLAS thread)."""
    with single_thread_blas():  # matrix-vector products of n x d: threads only add overhead
        res = minimize(logo_inner_objective, np.asarray(w0, dtype=np.float64), args=(Z, float(lambda_)), jac=True,
                       method="L-BFGS-B", bounds=[(0.0, None)] * Z.shape[1],
                       options={"gtol": gtol, "ftol": 1e-15, "maxiter": maxiter, "maxcor": 20})
    res.x = np.maximum(res.x, 0.0)
    return res


#: above this many features the inner problem is solved on a working set (``logo_inner_solve``)
_WORKING_SET_MIN_FEATURES = 1000


def logo_inner_solve(Z, lambda_, w0, gtol=1e-9, maxiter=15000):
    """Solve ``min_{w >= 0} sum_n log(1 + exp(-w . z_n)) + lambda sum(w)``.

    LOGO (Sun et al. 2010, Sec. 3) substitutes ``w = v**2`` and runs gradient descent
    in ``v``; both reach the minimiser of the same convex problem, which the
    bound-constrained quasi-Newton method L-BFGS-B finds faster (``tests/test_logo.py``
    checks the two against each other).  ``gtol`` bounds the projected gradient
    (its largest entry) at the returned point, over all ``d`` features.

    With more than 1000 features (``d >> n``: microarrays) the l1 term leaves most
    weights at 0, and the problem is solved on a *working set*: L-BFGS-B over the
    features of non-zero ``w0`` plus the ones whose gradient at the current point
    violates the optimality condition ``g_j >= 0`` at ``w_j = 0`` the most; then the
    full gradient (one product with ``Z^T``) is checked, the violators are added, and
    the solve repeats until no feature outside the set has ``g_j < -gtol``.  The
    features left out are at 0 with ``g_j >= -gtol``, so the returned point meets the
    same projected-gradient bound over all features as a solve over all of them.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Expected margin vectors ``z_n``.
    lambda_ : float
        Weight of the l1 term.
    w0 : ndarray of shape (d,)
        Start (non-negative).
    gtol : float, default=1e-9
        Bound on the projected gradient at the returned point.
    maxiter : int, default=15000
        Most L-BFGS-B iterations per solve.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` the minimiser, ``fun`` its objective, ``nit`` the L-BFGS-B iterations
        (summed over working-set rounds), ``n_rounds`` the working-set rounds (1 for
        the solve over all features), plus the solver's status fields.
    """
    Z = np.asarray(Z, dtype=np.float64)
    n, d = Z.shape
    w = np.maximum(np.asarray(w0, dtype=np.float64), 0.0)
    if d <= _WORKING_SET_MIN_FEATURES:
        res = _lbfgsb(Z, lambda_, w, gtol, maxiter)
        res.n_rounds = 1
        return res
    lambda_ = float(lambda_)
    in_set = w > 0
    nit = 0
    for rounds in range(1, d + 1):
        with single_thread_blas():
            g = logo_inner_objective(w, Z, lambda_)[1]
        viol = np.flatnonzero(~in_set & (g < -gtol))
        if rounds > 1 and viol.size == 0:
            break
        # add the worst violators: at least 10, at most as many as are in the set already
        k = min(viol.size, max(10, int(in_set.sum())))
        if k:
            in_set[viol[np.argpartition(g[viol], k - 1)[:k]] if k < viol.size else viol] = True
        cols = np.flatnonzero(in_set)
        if cols.size == 0:  # w = 0 meets every condition (lambda above every z-column's pull)
            res = OptimizeResult(success=True, status=0, message="w = 0 is optimal", nit=0)
            break
        res = _lbfgsb(np.ascontiguousarray(Z[:, cols]), lambda_, w[cols], gtol, maxiter)
        nit += int(res.nit)
        w = np.zeros(d)
        w[cols] = res.x
    res.x = w
    res.fun = logo_inner_objective(w, Z, lambda_)[0]
    res.jac = g
    res.nit = nit
    res.n_rounds = rounds
    return res


def mean_abs_differences(X):
    """``m_j`` = mean of ``|x_ij - x_kj|`` over all pairs ``i < k`` (exact, by sorting each column).

    With the sorted column ``x_(0) <= ... <= x_(n-1)``, ``sum_{i<k} |x_ik - x_jk|`` is
    ``sum_r (2r - n + 1) x_(r)``.  The mean weighted Manhattan distance between two
    samples under weights ``w`` is then ``w . m``.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Samples.

    Returns
    -------
    m : ndarray of shape (d,)
        The mean absolute difference of each feature.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        return np.zeros(X.shape[1])
    coef = 2.0 * np.arange(n) - n + 1.0
    return (coef @ np.sort(X, axis=0)) / (n * (n - 1) / 2.0)


class Logo(BaseWeighter):
    """LOGO: local-learning-based feature selection (Sun, Todorovic & Goodison 2010).

    With the weights ``w`` of the previous iteration, hits and misses of each sample
    are soft: ``P(x_h = NH(x_n) | w) ∝ exp(-d_w(x_n, x_h) / sigma_t)`` over the hits,
    likewise over the misses (weighted Manhattan distance ``d_w``, kernel
    ``exp(-d / sigma_t)``).  The expected margin vector
    ``z_n = E_miss|x_n - x_m| - E_hit|x_n - x_h|`` then makes the margin linear in ``w``
    and the new weights ``T(w)`` solve the l1-regularised logistic regression

        min_{w >= 0} sum_n log(1 + exp(-w . z_n)) + lambda ||w||_1,

    starting from ``w = 1``; the loop stops when ``||T(w) - w||_2 < tol`` (the paper's
    criterion, ``theta = 0.01``) and returns ``T(w)``, or at ``max_iter`` with a
    ``ConvergenceWarning``.  The paper solves the inner problem by gradient descent on
    ``v`` with ``w = v**2``; here it is solved by L-BFGS-B with the bound ``w >= 0``
    (the same convex problem, so the same minimiser), warm-started from the previous
    weights, on a working set of features when there are more than 1000
    (:func:`logo_inner_solve`).  (Sun et al. 2010, Sec. 3 and its algorithm; equation
    numbers are not quoted because the paper is not among the project's stored papers.)

    **Kernel width.**  ``w`` has no fixed scale in LOGO (the l1 penalty sets it), so the
    weighted distances, and with them the meaning of an absolute ``sigma``, change from
    one data set and one iteration to the next: on wide data the first distances are
    large, ``exp(-d)`` is a hard nearest neighbour, and under it the iteration cycles.  With
    ``sigma_units="mean_distance"`` (default) ``sigma`` is measured in units of the mean
    weighted distance between two samples under the current weights,
    ``sigma_t = sigma * w . m`` (``m_j`` the mean ``|x_ij - x_kj|`` over pairs,
    :func:`mean_abs_differences`), so the neighbourhoods are equally soft on every data
    set and at every iteration.  A fixed point ``w*`` of this loop is exactly a fixed
    point of the paper's loop with the absolute width ``sigma_ = sigma * w* . m``
    (reported after the fit), which the paper proves the iteration converges to for a
    large enough width (its convergence theorem).  The authors' own MATLAB code
    likewise normalises the scale: it starts from weights of unit norm and divides the
    first distances by ``sqrt(d)``.  ``sigma_units="absolute"`` uses ``sigma`` as given.

    **Step control (damping).**  The paper's loop sets ``w_{t+1} = T(w_t)``.  Here,
    when the full steps ``r_t = T(w_t) - w_t`` oscillate (``r_t`` turns back on
    ``r_{t-1}``: their secant ratio ``rho < -0.5``) the step is damped,
    ``w_{t+1} = w_t + a r_t`` with ``a = 1 / (1 - rho)`` (a 2-cycle of the plain loop,
    ``rho = -1``, gets ``a = 1/2``, which cancels it; never below 1/64).  A point with
    ``T(w) = w`` is a fixed point of the damped step for every ``a`` and conversely, so
    damping changes the path, not the fixed points; the stopping test is the paper's, on the full step, and the returned
    weights are ``T(w_t)`` itself.  ``damping=False`` runs the paper's plain iteration.

    Multi-class data: hits are the samples of the same class, misses all the others
    (the paper's binary formulation with "other class" pooled).

    Parameters
    ----------
    sigma : float, default=0.5
        Kernel width of the soft neighbours (``> 0``), in the units of ``sigma_units``.
    sigma_units : {"mean_distance", "absolute"}, default="mean_distance"
        ``"mean_distance"``: ``sigma`` times the mean weighted Manhattan distance between
        two samples under the current weights; ``"absolute"``: ``sigma`` itself.
    lambda_ : float, default=1.0
        l1 regularisation strength (``> 0``; at 0 the inner problem is unbounded on
        separable data); larger values give sparser weights.
    max_iter : int, default=50
        Outer iterations (neighbour re-estimations).
    tol : float, default=1e-2
        Stop when the weights change by less than ``tol`` (Euclidean norm); the
        paper's ``theta = 0.01``.
    damping : bool, default=True
        Damp the outer step when it oscillates (see *Step control*).
    inner_tol : float, default=1e-9
        Bound on the projected gradient of the inner problem at its solution.  While
        the weights still move, the inner problem (rebuilt at the next iteration anyway)
        is solved to ``max(inner_tol, min(0.1 lambda_, 1e-2 * last step))`` only (a
        tenth of the l1 penalty's slope at most); the iteration that meets ``tol`` and
        the last one are solved to ``inner_tol``.
    verbose : int, default=0
        ``> 0``: print per outer iteration the inner objective, the weight change
        ``||T(w) - w||``, the damping factor, the inner L-BFGS-B iterations, the
        non-zero weights, the absolute kernel width and the elapsed seconds.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The weights ``w`` (not normalised: their scale is set by ``lambda_``).
    n_iter_ : int
        Outer iterations run.
    cost_history_ : list of float
        Optimal value of the inner problem at each outer iteration.
    step_history_ : list of float
        ``||T(w_t) - w_t||`` at each outer iteration.
    sigma_ : float
        Absolute kernel width of the last outer iteration.
    stop_reason_ : {"converged", "max_iter", "cycle"}
        ``"cycle"``: stopped at ``max_iter`` with the step no smaller than the
        smallest of the nine before it (the fixed-point iteration oscillates, damping
        included; a larger ``sigma`` smooths the neighbourhoods).
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
    >>> int(np.argmax(Logo().fit(X, y).feature_importances_))
    0
    """

    _algorithm_version = 1

    _metric = "manhattan"
    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "sigma_units": [StrOptions({"mean_distance", "absolute"})],
        "lambda_": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "damping": ["boolean"],
        "inner_tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
    }

    #: the damping factor is halved down to this floor
    _MIN_DAMPING = 1.0 / 64

    def __init__(self, sigma=0.5, sigma_units="mean_distance", lambda_=1.0, max_iter=50, tol=1e-2, damping=True,
                 inner_tol=1e-9, verbose=0):
        self.sigma = sigma
        self.sigma_units = sigma_units
        self.lambda_ = lambda_
        self.max_iter = max_iter
        self.tol = tol
        self.damping = damping
        self.inner_tol = inner_tol
        self.verbose = verbose

    def _width(self, w, m):
        if self.sigma_units == "absolute":
            return float(self.sigma)
        scale = float(w @ m)
        # all weights 0 (or on constant features): every distance is 0 and any width gives
        # the same (uniform) neighbours
        return float(self.sigma) * scale if scale > 0 else float(self.sigma)

    def _step_control(self, r, r_prev, new_step, step, a):
        """The damping ``a`` of the next step from the last two full steps ``r_prev``, ``r``
        (``T(w) - w``) and their secant ratio ``rho = r . r_prev / |r_prev|^2``: when ``r``
        turned back on ``r_prev`` (cosine < -0.5 and ``rho < -0.5``: an oscillation, a
        2-cycle at ``rho = -1``) ``a = min(a, 1 / (1 - rho))``, the step that cancels that
        mode.  Never below ``_MIN_DAMPING``."""
        if not self.damping:
            return a
        if r_prev is not None:
            rr = float(r_prev @ r_prev)
            nr = float(np.linalg.norm(r)) * np.sqrt(rr)
            rho = float(r @ r_prev) / rr if rr > 0 else 0.0
            cos = float(r @ r_prev) / nr if nr > 0 else 0.0
            if cos < -0.5 and rho < -0.5:
                return max(min(a, 1.0 / (1.0 - rho)), self._MIN_DAMPING)
        return a

    def _fit(self, X, y):
        # one BLAS thread for the whole fit, entered once (each entry rescans the loaded
        # libraries; the inner solves enter it again, cheaply, when nested): the
        # inner solves' n x d matrix-vector products gain nothing from threads, and the
        # soft margins run in compiled kernels with their own threads
        with single_thread_blas():
            return self._fit_loop(X, y)

    def _fit_loop(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        # constant features carry no margin (z_nj = 0): start them at 0, where the l1
        # term keeps them
        w = (np.ptp(X, axis=0) > 0).astype(np.float64)
        m = mean_abs_differences(X) if self.sigma_units == "mean_distance" else None
        self.cost_history_ = []
        self.step_history_ = []
        t0 = time.perf_counter()
        if self.verbose:
            print(f"[{type(self).__name__}]")
            print(f"{'Iteration':>10} {'Objective Value':>20} {'Step':>12} {'damping':>8} {'inner it':>9} "
                  f"{'non-zero':>9} {'sigma':>11} {'Time(s)':>10}")
        step = np.inf
        a = 1.0
        r_prev = None
        self.stop_reason_ = "max_iter"
        for it in range(1, self.max_iter + 1):
            self.n_iter_ = it
            sigma_t = self._width(w, m)
            Z = soft_margins(X, y, w, sigma_t, "manhattan", per_sample=True).z
            loose = max(self.inner_tol, min(0.1 * self.lambda_, 1e-2 * step))
            gtol = self.inner_tol if it == self.max_iter else loose
            res = logo_inner_solve(Z, self.lambda_, w, gtol=gtol)
            n_inner = int(res.nit)
            new_step = float(np.linalg.norm(res.x - w))
            if new_step < self.tol and gtol > self.inner_tol:  # the final weights: solved to inner_tol
                res = logo_inner_solve(Z, self.lambda_, res.x, gtol=self.inner_tol)
                n_inner += int(res.nit)
                new_step = float(np.linalg.norm(res.x - w))
            self.cost_history_.append(float(res.fun))
            self.step_history_.append(new_step)
            self.sigma_ = sigma_t
            if new_step < self.tol:
                w = res.x
                self.stop_reason_ = "converged"
            else:
                r = res.x - w
                a, r_prev = self._step_control(r, r_prev, new_step, step, a), r
                # damped step; the last iteration returns T(w) itself (the paper's output)
                w = res.x if it == self.max_iter else w + a * r
            if self.verbose:
                print(f"{it:>10d} {res.fun:>20.6e} {new_step:>12.4e} {a:>8.4g} {n_inner:>9d} "
                      f"{np.count_nonzero(w):>9d} {sigma_t:>11.4g} {time.perf_counter() - t0:>10.2f}")
            step = new_step
            if self.stop_reason_ == "converged":
                break
        else:
            recent = self.step_history_[-10:]
            if len(recent) == 10 and recent[-1] >= min(recent[:-1]):  # the step stopped shrinking
                self.stop_reason_ = "cycle"
                warnings.warn(
                    f"{type(self).__name__} stopped at max_iter={self.max_iter}: the fixed-point iteration "
                    f"oscillates (the change, {step:.3g} > tol={self.tol:g}, stopped shrinking); a larger "
                    "sigma smooths the neighbourhoods.", ConvergenceWarning, stacklevel=3)
            else:
                warn_max_iter(self, self.max_iter)
        return w
