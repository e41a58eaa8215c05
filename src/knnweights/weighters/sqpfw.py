"""SQP-FW: target-neighbour-consistent feature weighting (Takeuchi & Sugiyama, NIPS 2011).

The estimator is a thin wrapper around the active-set solver in
:mod:`knnweights._solvers.active_set` (problem (2), EQP (4), Lemmas 5 and 6, Theorem 7) and
its regularisation path.
"""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._solvers.active_set import SQPFWPath, sqpfw_active_set, sqpfw_path
from ..utils import Interval, StrOptions, validate_params
from ._base import BaseWeighter, warn_max_iter, warn_max_work

__all__ = ["SQPFW", "SQPFWPath"]

#: default ``max_work`` of a fit (GFLOP counted by the steps): see the class docstring
_DEFAULT_MAX_WORK = 120.0


class SQPFW(BaseWeighter):
    """Sequential-QP feature weighting with target-neighbour (TN) consistency.

    Solves problem (2) of Takeuchi & Sugiyama (2011),

    ``min_w (theta/n) sum_i [d_w(x_i, x_{h_i}) - d_w(x_i, x_{m_i})] + 1/2 ||w - w_bar||^2``
    s.t. ``sum w = 1, w >= 0``,

    where ``h_i`` / ``m_i`` are the ``kappa``-th nearest hit / ``lambda_``-th nearest
    miss under the weighted squared Euclidean distance ``d_w`` with the *solution's*
    own weights.  Algorithm 1 (an active-set method over ``(w, xi, eta)`` with the sets
    ``H[<], H[=], H[>], M[<], M[=], M[>], Z, P``) solves the equality-constrained QP (4)
    for a step, takes the longest TN-consistent feasible step (Lemma 5), releases the
    active constraint with the largest multiplier allowed by Lemma 6 (with the
    ``kappa`` / ``lambda`` count conditions) and stops at a local minimum (Theorem 7).
    Every iterate is TN consistent.  Constant features take no part (weight 0; the
    default ``w_bar`` is uniform over the non-constant features).

    Parameters
    ----------
    kappa : int, default=1
        Rank of the target hit.
    lambda_ : int, default=1
        Rank of the target miss.
    small_classes : {"clamp", "error"}, default="clamp"
        When ``kappa`` exceeds the hits of the smallest class (or ``lambda_`` the misses
        of the largest), ``"clamp"`` lowers it to what that class has, for every sample
        (the solver's target ranks are one number each), with a warning; ``"error"``
        raises.  The fitted ranks are ``kappa_`` and ``lambda_fitted_``.
    theta : float, default=1.0
        Regularisation parameter (``theta = 0`` gives ``w_bar``).
    w_bar : array-like of shape (n_features,), default=None
        Prior weights; ``None`` is uniform ``1/d``.
    working_set : int, default=None
        Number of nearest candidate hits / misses per sample kept in ``H[>]`` /
        ``M[>]`` (Sec. 3.2); ``None`` means 10 for every ``n`` except when no sample
        has more than 50 hits or misses (then all: no refreshes needed); a list is
        kept whole when it has at most ``2 * working_set`` members; 0 forces all.
        Refreshed (one neighbour search) every ``refresh_every`` steps and at the
        end; the result is the one of the full run (a refresh that finds TN
        consistency broken goes back to the last checkpoint with a doubled working
        set, and the discarded steps leave ``cost_history_`` and ``n_iter_``).
    refresh_every : int, default=None
        Steps between working-set refreshes; ``None`` means ``max(200, n_samples // 2)``
        (a refresh is one ``O(n^2 d)`` neighbour search against ``O(n K d)`` per step, so
        the interval grows with ``n``).
    max_iter : int, default=None
        Maximum number of active-set steps (rolled-back ones included); ``None``
        runs until the local minimum of Theorem 7.
    max_work : float or None, default=120.0
        Budget of a fit in counted work (GFLOP): every step adds the operations of
        its EQP solve and ratio test (a count of the dominant terms from the sizes of
        the sets it visits, the same on every machine, so a budgeted fit is
        repeatable).  The default leaves the fits that reach Theorem 7 on the benchmark
        tables (up to a few hundred samples and features) unaffected.  On wide data the
        method needs far more (every feature leaves ``P`` one step at a time, each step
        costing ``O(n K |P|)``); the budget stops such fits with a ``ConvergenceWarning`` and
        ``stop_reason_ = "max_work"``: the weights are the last iterate, feasible,
        TN consistent and with a lower objective than every earlier one, but not a
        local minimum (with a working set: the last iterate that passed a check
        against the full neighbour lists).  ``None``: no budget.  :meth:`path` is not
        bounded by it.
    max_breakpoints : int or None, default=None
        Cap on the events (breakpoints) of :meth:`path`; ``None`` traces the path up to
        ``max(thetas)`` whatever it takes.  On wide data most events are features
        leaving ``P`` (at least ``n_features`` minus the final support).  A capped path
        ends short of ``max(thetas)`` with a ``ConvergenceWarning`` and ``stop_reason_ =
        "max_breakpoints"``; its weights beyond its end are the last ones, not the
        path's.  Where the path's events change the active set in a loop without moving
        theta or the weights (a degenerate point, e.g. tied distances) it ends there too,
        warned, with ``stop_reason_ = "stalled"``.
    verbose : int, default=0
        Print progress (steps, ``|P|``, ties, objective, work) every 1000 steps;
        ``> 1`` every ``refresh_every`` steps.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
    n_iter_ : int
        Active-set steps kept (one EQP solve each; the final check of Theorem 7
        and steps discarded by a working-set rollback are not counted).
    cost_history_ : ndarray of shape (n_iter_ + 1,)
        Objective (2) at the start and after every kept step (non-increasing).
    hit_candidates_, hit_state_, miss_candidates_, miss_state_ : ndarray of shape (n, K)
        Candidate neighbours per sample and their states ``-1`` (``[<]``), ``0``
        (``[=]``), ``+1`` (``[>]``) at the solution.
    objective_ : float
    n_refresh_ : int
        Working-set refreshes (one neighbour search each).
    stop_reason_ : {"local_minimum", "max_iter", "stalled", "max_work"}
        Why the fit stopped: Theorem 7 holds, or the step limit, a cycling
        degenerate point, or the work budget stopped it (with a warning).
    work_ : float
        Work counted for ``max_work`` (GFLOP).

    References
    ----------
    I. Takeuchi and M. Sugiyama, "Target Neighbor Consistent Feature Weighting for
    Nearest Neighbor Classification", NIPS 24, 2011: problem (2), (3), EQP (4),
    Lemma 5 (step length), Lemma 6 (release rules), Theorem 7 (optimality).

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import SQPFW
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 4); y = (X[:, 0] > 0).astype(int)
    >>> w = SQPFW(theta=20.0).fit(X, y).feature_importances_
    >>> int(np.argmax(w))
    0
    """

    _algorithm_version = 1

    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ("small_classes",)

    _metric = "sqeuclidean"
    _parameter_constraints = {
        "kappa": [Interval(numbers.Integral, 1, None, closed="left")],
        "small_classes": [StrOptions({"clamp", "error"})],
        "lambda_": [Interval(numbers.Integral, 1, None, closed="left")],
        "theta": [Interval(numbers.Real, 0, None, closed="left")],
        "w_bar": ["array-like", None],
        "working_set": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "refresh_every": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_work": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "max_breakpoints": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, kappa=1, lambda_=1, theta=1.0, w_bar=None, working_set=None, refresh_every=None,
                 max_iter=None, max_work=_DEFAULT_MAX_WORK, max_breakpoints=None, verbose=0, small_classes="clamp"):
        self.kappa = kappa
        self.small_classes = small_classes
        self.lambda_ = lambda_
        self.theta = theta
        self.w_bar = w_bar
        self.working_set = working_set
        self.refresh_every = refresh_every
        self.max_iter = max_iter
        self.max_work = max_work
        self.max_breakpoints = max_breakpoints
        self.verbose = verbose

    # -- helpers ---------------------------------------------------------------------
    def _refresh_every(self, X):
        return max(200, X.shape[0] // 2) if self.refresh_every is None else int(self.refresh_every)

    def _target_ranks(self, codes):
        """``(kappa, lambda_)`` as the solver uses them: clamped to the smallest class's hits and the largest
        class's misses under ``small_classes="clamp"`` (with a warning), else checked."""
        counts = np.bincount(np.asarray(codes))
        counts = counts[counts > 0]
        hits, misses = int(counts.min()) - 1, int(codes.shape[0] - counts.max())
        kappa, lam = int(self.kappa), int(self.lambda_)
        if self.small_classes == "clamp":
            if kappa > hits >= 1:
                warnings.warn(f"kappa={kappa} is larger than the hits of the smallest class ({hits}); SQP-FW's target "
                              f"rank is one number for every sample, so kappa={hits} is used (kappa_). Set "
                              "small_classes='error' to raise instead.", UserWarning, stacklevel=4)
                kappa = hits
            if lam > misses >= 1:
                warnings.warn(f"lambda_={lam} is larger than the misses of the largest class ({misses}); "
                              f"lambda_={misses} is used (lambda_fitted_). Set small_classes='error' to raise instead.",
                              UserWarning, stacklevel=4)
                lam = misses
        self._check_n_neighbors(kappa, codes, name="kappa")
        self._check_n_neighbors(lam, codes, need_hits=False, name="lambda_")
        self.kappa_, self.lambda_fitted_ = kappa, lam
        return kappa, lam

    def _setup(self, X, codes):
        self._target_ranks(codes)
        d = X.shape[1]
        active = np.ptp(X, axis=0) > 0
        if self.w_bar is None:
            w_bar = np.full(d, 1.0 / d)
        else:
            w_bar = np.asarray(self.w_bar, dtype=np.float64).ravel()
            if w_bar.shape != (d,) or not np.all(np.isfinite(w_bar)):
                raise ValueError(f"w_bar must be a finite vector of length n_features={d}, got shape {w_bar.shape}")
        ws = self.working_set
        if ws is None:
            counts = np.bincount(np.asarray(codes))
            longest = max(int(counts.max()) - 1, X.shape[0] - int(counts[counts > 0].min()))
            ws = 10 if longest > 50 else 0
        return active, w_bar[active], (ws or None)

    def _fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        active, w_bar, ws = self._setup(X, y)
        w = np.zeros(X.shape[1])
        if not active.any():
            self.n_iter_, self.cost_history_, self.n_refresh_ = 0, np.zeros(1), 0
            self.stop_reason_, self.work_ = "local_minimum", 0.0
            return w
        res = sqpfw_active_set(X[:, active], y, float(self.theta), self.kappa_, self.lambda_fitted_, w_bar,
                               working_set=ws, refresh_every=self._refresh_every(X), max_iter=self.max_iter,
                               verbose=self.verbose, max_work=self.max_work)
        if res.status == 1:
            warn_max_iter(self, self.max_iter)
        elif res.status == 3:
            warn_max_work(self, self.max_work,
                          f"{res.nit} active-set steps, objective {res.fun:.6g}, {int((res.x > 0).sum())} positive "
                          "weights", "feasible and TN consistent", "a local minimum (Theorem 7)")
        self.stop_reason_ = ("local_minimum", "max_iter", "stalled", "max_work")[res.status]
        self.work_ = float(res.work)
        w[active] = res.x
        self.n_iter_ = int(res.nit)
        self.cost_history_ = res.cost_history
        self.objective_ = float(res.fun)
        self.n_refresh_ = int(res.n_refresh)
        self.hit_candidates_, self.hit_state_ = res.hit_candidates, res.hit_state
        self.miss_candidates_, self.miss_state_ = res.miss_candidates, res.miss_state
        return w

    # -- regularisation path -----------------------------------------------------------
    def path(self, X, y, thetas=None):
        """Regularisation path from ``theta = 0`` (solution ``w_bar``) upward.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.
        thetas : array-like, default=None
            The path is traced up to ``max(thetas)`` (default: up to 100, the top of
            the paper's grid); ``path(...)(thetas)`` gives the weights there.

        Returns
        -------
        SQPFWPath
            ``thetas_`` (breakpoints, non-decreasing; a repeated value is a jump),
            ``weights_`` ``(n_breakpoints, n_features)``, callable for interpolation;
            ``stop_reason_``: ``"theta_max"``, or ``"max_breakpoints"`` when the cap
            ended it at ``thetas_[-1] < max(thetas)`` (warned), or ``"stalled"``.
        """
        validate_params(self)
        X, codes = self._validate_fit_data(X, y)
        X = np.asarray(X, dtype=np.float64)
        active, w_bar, ws = self._setup(X, codes)
        theta_max = 100.0 if thetas is None else float(np.max(thetas))
        d = X.shape[1]
        if not active.any():
            return SQPFWPath([0.0, theta_max], np.zeros((2, d)), 0, theta_max)
        p = sqpfw_path(X[:, active], codes, theta_max, self.kappa_, self.lambda_fitted_, w_bar, working_set=ws,
                       refresh_every=self._refresh_every(X), max_breakpoints=self.max_breakpoints,
                       max_iter=self.max_iter, verbose=self.verbose)
        if p.stop_reason_ == "max_breakpoints":
            warnings.warn(f"SQPFW.path stopped at theta={p.thetas_[-1]:.6g} after max_breakpoints="
                          f"{self.max_breakpoints} events, short of theta={theta_max:g}: the weights for larger theta "
                          "are those at its end, not the path's. Set max_breakpoints=None (no cap) or a larger "
                          "max_breakpoints to reach it.", ConvergenceWarning, stacklevel=2)
        if active.all():
            W = p.weights_
        else:
            W = np.zeros((len(p.thetas_), d))
            W[:, active] = p.weights_
        return SQPFWPath(p.thetas_, W, p.n_steps_, theta_max, p.stop_reason_)
