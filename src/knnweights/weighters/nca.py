"""Neighbourhood components analysis with a diagonal metric (Goldberger et al. 2004).

NCA maximises the expected number of samples that a stochastic nearest-neighbour rule
classifies correctly (leave-one-out).  Restricted to a diagonal ``A``, the learned
metric is ``d_w(x, x') = sum_k w_k (x_k - x'_k)**2`` with ``w = diag(A^T A) >= 0``: a
feature weighting.  Only ``d``-vectors are optimised (scikit-learn's
``NeighborhoodComponentsAnalysis`` works with ``d x d`` matrices).
"""

import numbers
import time
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.utils import check_random_state

from ..engine import get_config
from ..engine.linalg import blas_threads_for_work
from ..engine.neighbors import nca_terms, soft_margins
from ..utils import Interval, StrOptions
from ._base import BaseWeighter, warn_max_iter

__all__ = ["NCADiagonal", "nca_diagonal_objective"]

# below this n^2 d an objective evaluation is small: its matrix products run on one BLAS
# thread (BLAS threads waiting on each other cost more than they share there); above it,
# threads pay off on an idle multi-core machine.
_ONE_THREAD_WORK = 1e9


def _correct_share_weight(log_hit_mass, log_miss_mass):
    # p_i (1 - p_i) with p_i = hit mass / total mass, in log space
    return np.exp(log_hit_mass + log_miss_mass - 2.0 * np.logaddexp(log_hit_mass, log_miss_mass))


def nca_diagonal_objective(w, X, y, working_memory=None, centred=False):
    """NCA objective ``f(w) = sum_i p_i`` and its gradient, for a diagonal metric.

    ``p_ij = exp(-d_w(x_i, x_j)) / sum_{k != i} exp(-d_w(x_i, x_k))`` (``p_ii = 0``),
    ``p_i = sum_{j in C_i} p_ij`` (Goldberger et al. 2004, eqs. 1-3), ``d_w`` the
    weighted squared Euclidean distance.  Differentiating ``log p_ij`` in ``w`` gives
    (eq. 5 restricted to the diagonal)

        df/dw = sum_i sum_j (p_i p_ij - [j in C_i] p_ij) phi(x_i - x_j),

    ``phi(a) = a**2``.  Splitting the softmax over all other samples into its hit part
    (mass ``p_i``) and miss part (mass ``1 - p_i``), ``p_ij = p_i alpha_ij`` for hits and
    ``(1 - p_i) beta_ij`` for misses, with ``alpha`` / ``beta`` the softmax over hits /
    misses alone; the coefficient is then ``-p_i (1 - p_i) alpha_ij`` on hits and
    ``p_i (1 - p_i) beta_ij`` on misses, so

        df/dw = sum_i p_i (1 - p_i) z_i,

    ``z_i`` the soft margin vector of kernel width 1.  On the CPU both ``f`` and the
    gradient come from one pass over row blocks of the distance matrix
    (:func:`knnweights.engine.neighbors.nca_terms`): distances
    ``||a_i||^2 + ||a_j||^2 - 2 a_i . a_j`` on ``A = X sqrt(w)``, the softmax, and the
    first form with ``C_ij = p_ij (p_i - [j in C_i])`` (rows summing to 0, column sums
    ``c``): ``sum_ij C_ij (x_i - x_j)**2 = c . X**2 - 2 diag(X^T C X)``; two BLAS matrix
    products, ``4 n^2 d`` flops, ``O(block x n + n d)`` extra memory; on a GPU device,
    the soft margins ``z_i`` of :func:`knnweights.engine.neighbors.soft_margins`.

    Parameters
    ----------
    w : ndarray of shape (d,)
        Non-negative weights.
    X : ndarray of shape (n, d)
        Samples; float32 runs the matrix products in float32.
    y : ndarray of shape (n,)
        Integer class codes; every class needs at least two samples.
    working_memory : float, default=None
        MiB per row block (``None``: the global configuration).
    centred : bool, default=False
        ``X`` has centred columns already (skips a pass over ``X``; the fit centres once).

    Returns
    -------
    f : float
        The objective ``sum_i p_i``.
    grad : ndarray of shape (d,)
        Its gradient.
    """
    if get_config()["device"] != "cpu":
        sm = soft_margins(X, y, w, 1.0, "sqeuclidean", sample_weight=_correct_share_weight,
                          working_memory=working_memory)
        log_p = sm.log_hit_mass - np.logaddexp(sm.log_hit_mass, sm.log_miss_mass)
        return float(np.exp(log_p).sum()), np.asarray(sm.z, dtype=np.float64)
    p, grad = nca_terms(X, y, w, working_memory=working_memory, centred=centred)
    return float(p.sum()), grad


def _negated(w, X, y):
    # L-BFGS-B minimises: -f and -grad f, over w >= 0 (bounds)
    f, g = nca_diagonal_objective(w, X, y, centred=True)
    return -f, -g


def _multistart_lbfgsb(est, fun, Xv, rng, label, sign):
    """L-BFGS-B over ``w >= 0`` from ``est.n_init`` starts; the best run and its history.

    ``fun(w) -> (value, gradient)`` is minimised.  The first start is ``w = scale`` (``init
    ="scaled"``: ``1 / mean squared pairwise distance``, soft neighbourhoods) or ``w = 1``, the
    others uniform in ``[0, 2 scale]`` (``random_state``); the history records ``sign * value``
    per iteration (printed with ``verbose`` under ``label``).  Used by NCA-diagonal and MLKR.
    """
    dv = Xv.shape[1]
    scale = 1.0
    if est.init == "scaled":
        mean_d = _mean_pairwise_sqdist(Xv)
        scale = 1.0 / mean_d if mean_d > 0 else 1.0
    counter = [0]

    def counted(w):
        counter[0] += 1
        return fun(w)

    name = type(est).__name__
    best = None
    for start in range(est.n_init):
        w0 = np.full(dv, scale) if start == 0 and est.init != "random" else rng.uniform(0.0, 2.0 * scale, size=dv)
        history, t0 = [], time.perf_counter()
        counter[0] = 0
        if est.verbose:
            print(f"[{name}] start {start + 1}/{est.n_init}")
            print(f"{'Iteration':>10} {label:>20} {'f evals':>8} {'Time(s)':>10}")
        record = _recorder(history, est.verbose, t0, counter, sign)
        with blas_threads_for_work(Xv.shape[0] ** 2 * dv, _ONE_THREAD_WORK):
            res = minimize(counted, w0, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * dv, callback=record,
                           options={"maxiter": est.max_iter, "ftol": est.tol, "gtol": est.tol})
        if est.verbose:
            print(f"[{name}] {res.nit} iterations, {label.lower()} {sign * res.fun:.6e}, "
                  f"{time.perf_counter() - t0:.2f} s: {res.message}")
        if best is None or res.fun < best[0].fun:
            best = (res, history)
    return best


def _mean_pairwise_sqdist(X):
    # mean over pairs i != j of ||x_i - x_j||^2 = 2 n / (n - 1) * sum_k var_k, in O(n d)
    n = X.shape[0]
    return 2.0 * n / (n - 1) * float(X.var(axis=0).sum())


def _recorder(history, verbose, start, counter, sign=-1.0):
    # scipy passes the OptimizeResult only to a callback whose sole parameter has this name;
    # sign=-1: the objective of a maximisation run as a minimisation (NCA), +1: the loss itself (MLKR)
    def record(intermediate_result):
        history.append(sign * float(intermediate_result.fun))
        if verbose:
            print(f"{len(history):>10d} {history[-1]:>20.6e} {counter[0]:>8d} {time.perf_counter() - start:>10.2f}")

    return record


class NCADiagonal(BaseWeighter):
    """NCA with a diagonal metric (Goldberger, Roweis, Hinton & Salakhutdinov 2004).

    Maximises the expected leave-one-out accuracy of the stochastic nearest-neighbour
    rule, ``f(w) = sum_i p_i`` with ``p_i = sum_{j in C_i} p_ij`` and
    ``p_ij = softmax_{j != i}(-d_w(x_i, x_j))`` (eqs. 1-3), over the diagonal of
    ``A^T A``, i.e. feature weights ``w >= 0`` of the squared Euclidean distance, by
    L-BFGS-B over ``w`` with the bounds ``w >= 0``.  The gradient is eq. 5 restricted
    to the diagonal (see :func:`nca_diagonal_objective`, whose distances and margin
    sums run as BLAS matrix products in row blocks).  The default start ``"scaled"``
    makes the stochastic neighbourhoods soft (typical logit ``-1``); from there
    L-BFGS-B over ``w`` meets scikit-learn's tolerance in fewer iterations and at a
    higher objective than from ``w = 1``, where on many features the neighbourhoods are
    nearly hard, or over ``a = sqrt(w)`` (scikit-learn's parametrisation).  On few samples and
    many noise features the higher objective can mean memorising the training set with
    the noise features (``f`` close to ``n``), which ``init="ones"`` may stop short of.
    The objective is not concave: with ``n_init > 1`` several starts are run and the
    largest ``f`` is kept (the SQP-FW
    protocol runs 5 random starts; its authors keep the start with the smallest
    training error, this class keeps the largest NCA objective, the smooth version of
    the same leave-one-out accuracy).

    Parameters
    ----------
    max_iter : int, default=100
        L-BFGS-B iterations per start (a ``ConvergenceWarning`` when reached).
    tol : float, default=1e-5
        L-BFGS-B ``ftol`` (relative decrease of ``f``) and ``gtol`` (largest projected
        gradient entry), as scikit-learn's ``NeighborhoodComponentsAnalysis(tol=...)``
        (same objective scale: ``f`` is the unnormalised sum of ``p_i`` in both).
    init : {"scaled", "ones", "random"}, default="scaled"
        First start: ``"ones"``: ``w = 1`` (the unweighted metric); ``"scaled"``:
        ``w = c`` with ``c = 1 / mean_{i != j} ||x_i - x_j||**2`` (computed in ``O(n d)``
        from the feature variances), so the typical logit ``-d_w`` is ``-1`` and the
        stochastic neighbourhoods start soft -- on many noise features this avoids the
        nearly hard neighbours of ``"ones"`` and the local optima they bring;
        ``"random"``: ``w_k ~ Uniform(0, 2)``.  Every further start is random,
        ``w_k ~ Uniform(0, 2 c)``, around the scale ``c`` of the first (``c = 1``
        unless ``"scaled"``).  The paper does not fix an initialisation.
    n_init : int, default=1
        Number of starts.
    random_state : int, RandomState or None
        Seeds the random starts.
    verbose : int, default=0
        ``> 0``: print the iteration, the objective, the function evaluations and the
        elapsed seconds after every L-BFGS-B iteration.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``w``, the diagonal of ``A^T A`` (weights of the squared Euclidean distance).
    objective_ : float
        ``f(w)``, the expected number of correctly classified training samples.
    n_iter_ : int
        L-BFGS-B iterations of the kept start.
    cost_history_ : list of float
        ``f`` after each L-BFGS-B iteration of the kept start.
    metric_ : ``"sqeuclidean"``

    Notes
    -----
    Constant features have no effect on any distance; they are held at weight 0.  When
    every feature is constant there is nothing to learn: all-zero weights and a
    ``UserWarning``.

    References
    ----------
    J. Goldberger, S. Roweis, G. Hinton and R. Salakhutdinov, "Neighbourhood
    components analysis", NIPS 17, 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import NCADiagonal
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 6)); y = (X[:, 0] > 0).astype(int)
    >>> int(np.argmax(NCADiagonal().fit(X, y).feature_importances_))
    0
    """

    _algorithm_version = 1

    _metric = "sqeuclidean"
    _parameter_constraints = {
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [StrOptions({"ones", "scaled", "random"})],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, max_iter=100, tol=1e-5, init="scaled", n_init=1, random_state=None, verbose=0):
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.n_init = n_init
        self.random_state = random_state
        self.verbose = verbose

    def _fit(self, X, y):
        rng = check_random_state(self.random_state)
        X = np.ascontiguousarray(X)
        d = X.shape[1]
        varying = np.ptp(X, axis=0) > 0
        if not varying.any():
            warnings.warn(f"{type(self).__name__}: every feature of X is constant, so no weight changes any "
                          "distance; all weights are 0.", UserWarning, stacklevel=3)
            self.objective_ = float(nca_diagonal_objective(np.zeros(d), X, y)[0])
            self.n_iter_ = 0
            self.cost_history_ = []
            return np.zeros(d)
        # the constant features do not enter the optimisation (their gradient is 0)
        Xv = X[:, varying] if not varying.all() else X
        # centred once (no distance changes): the objective evaluations skip it
        Xv = np.ascontiguousarray(Xv - Xv.mean(axis=0, dtype=np.float64).astype(Xv.dtype))
        res, history = _multistart_lbfgsb(self, lambda w: _negated(w, Xv, y), Xv, rng, "Objective Value", -1.0)
        if res.nit >= self.max_iter and not res.success:
            warn_max_iter(self, self.max_iter)
        self.objective_ = -float(res.fun)
        self.n_iter_ = int(res.nit)
        self.cost_history_ = history
        w = np.zeros(d)
        w[varying] = np.maximum(res.x, 0.0)
        return w
