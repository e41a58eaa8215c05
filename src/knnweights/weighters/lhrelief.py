"""LH-RELIEF (Cai & Ng 2012): RELIEF margins measured to local hyperplanes of hits and misses."""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._solvers.simplex_qp import hull_projections, indexed_combination
from ..engine.incremental import IncrementalHitMiss
from ..engine.neighbors import nearest_hits_misses
from ..utils import Interval, StrOptions
from ._base import BaseWeighter, l2_norm, normalize_weights

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
       with the batched exact solver :func:`knnweights._solvers.simplex_qp.solve_simplex_qp`
       (hits and misses of all samples in one batch);
    3. form the margin vector (eqs. 6 and 8)
       ``z_n = |x_n - H_miss b_n| - |x_n - H_hit a_n|`` (elementwise) and its mean ``z``;
    4. the update map ``T`` (eq. 9, two readings, see ``update``):
       ``T(w) = max(w * z, 0) / ||.||_2`` (multiplicative, the literal eq. 9) or
       ``T(w) = max(z, 0) / ||.||_2`` (additive, the I-RELIEF reading);
    5. the damped step ``w <- (1 - eta) w + eta T(w)``, renormalised to unit L2 norm
       (``eta = damping``; ``eta = 1`` is the paper's undamped iteration).

    It starts from ``w = 1/d`` and stops when ``||w_t+1 - w_t||_2 < tol``.  A fit that
    stops otherwise says so: ``stop_reason_`` and a ``ConvergenceWarning`` (``max_iter``
    reached, with the iterates oscillating or not), or a ``UserWarning`` when ``z`` has
    no positive entry (the previous weights are kept).

    Parameters
    ----------
    n_neighbors : int, default=5
        ``k``, the number of nearest hits and of nearest misses spanning each local
        hyperplane.
    update : {"multiplicative", "additive"}, default="multiplicative"
        The reading of eq. 9.  ``"multiplicative"``: ``w <- (w * z)+`` normalised, the
        equation as extracted (the current weight stays on its right-hand side);
        a feature whose margin stays small decays geometrically and one whose margin
        turns negative drops out for good.  ``"additive"``: ``w <- (z)+`` normalised, as
        I-RELIEF (the text after eq. 9 says the update is "similar to I-RELIEF"); every
        irrelevant feature keeps a weight of order ``n^-1/2`` (the positive part of a
        mean of ``n`` noisy margins), so with thousands of them their total weight
        swamps the two true features of the spiral.
    damping : float in (0, 1], default=0.5
        ``eta`` of the damped step.  Not in the paper: with hard neighbours searched in
        the current weighted metric, the undamped map (``eta = 1``) is unstable even on
        the noise-free two-feature spiral (slope about -1.4 at its fixed point), so the
        weights jump between the two true features in a 2-cycle and the last iterate
        is an arbitrary end of it.  ``eta = 0.5`` converges there (any ``eta`` below
        about 0.8 does).
    adaptive_damping : bool, default=True
        Halve ``eta`` (down to ``damping / 1000``) whenever the iterates oscillate: the
        step stopped shrinking and the last three steps largely cancel.  With hard
        neighbours ``T`` is piecewise constant (it jumps where a neighbour set changes),
        so near its fixed point the damped iteration may still jump between two or three
        neighbour configurations with a small step (about ``1e-3`` on the spiral);
        halving the step there settles the iterate at the point where the jumps balance
        (a fixed point of the averaged map), within the oscillation's amplitude.  A
        steady approach never triggers it.  ``False``: ``eta`` stays fixed.
    max_iter : int, default=1000
        ``T`` of Algorithm 2.1.  The multiplicative reading needs 30-90 iterations on the
        spiral with 300-3000 irrelevant features, but the approach to the fixed point can
        be slow where many features keep a weight: 150-740 iterations on the five
        training folds of standardised Ionosphere (33 features; the step falls about ten
        times per 100 iterations there), which the former default of 200 cut short with
        a ``ConvergenceWarning`` in two of them.
    tol : float, default=1e-5
        ``epsilon`` of Algorithm 2.1.
    small_classes : {"clamp", "error"}, default="clamp"
        ``n_neighbors`` above a class's hits (its size minus one) or above the misses
        available: ``"clamp"`` spans that sample's hyperplane with all the hits (misses)
        there are, with a ``UserWarning`` (as :class:`~knnweights.ReliefF`);
        ``"error"`` raises a ``ValueError``.
    verbose : int, default=0
        Print the average margin and the step of every iteration.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The weights (unit L2 norm, ``>= 0``).
    n_iter_ : int
        Iterations run.
    stop_reason_ : {"converged", "max_iter", "cycle", "no_positive_margin"}
        Why the iteration stopped: the step fell below ``tol``; ``max_iter`` was reached
        (``"cycle"`` when the last iterates alternate between two points, i.e.
        ``||w_t - w_t-2||`` is far below ``||w_t - w_t-1||``: lower ``damping``); the
        mean margin vector had no positive entry.  All but ``"converged"`` warn.
    damping_ : float
        ``eta`` at the end (below ``damping`` when the adaptive damping halved it).
    damping_history_ : list of float
        ``eta`` used at each iteration.
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
    eq. 2, each update is scaled to unit L2 norm.  The hyperplane fit (eq. 5) is a
    weighted least-squares fit in ``W`` while the margin (eq. 8) is measured in the
    weighted L1 distance, as in the paper.

    The default reading is the multiplicative one because it reproduces the paper's
    robustness claim (Fig. 1: the spiral's error stays flat from 0 to 3000 irrelevant
    features) where the additive reading does not (the LH-RELIEF reproduction's Fig. 1
    shows both readings).

    **Scale.** The robustness of Fig. 1 holds only where the relevant features are
    large beside the irrelevant ones; this is the method's, not a defect of this
    implementation.  From the paper's start
    ``w = 1/d`` the ``k`` nearest hits and misses of the first iteration are chosen by
    the irrelevant features, so the first mean margins of the relevant features are
    global ones, at the irrelevant features' chance level when the relevant features are
    not large beside them (the one-turn spiral of ``make_spiral`` at radius 1 with 300
    standard-normal features, but not at radius 3).  Under the multiplicative
    reading a feature whose margin stays below ``||w * z||`` shrinks by up to
    ``1 - eta`` per iteration (a negative one by more), so at radius 1 the spiral's
    weights reach round-off within about 40 iterations and are set to 0, for good
    (the update's zero is absorbing), and the fit wanders among irrelevant features
    until ``max_iter``; at radius 3 the second spiral feature leads from the first
    iteration and brings the first one's local margin up with it.  The additive
    reading loses them at radius 1 as well; I-RELIEF's kernel-soft neighbours,
    averaging over many samples, see the global margin without the local one's
    variance and find both.  The spiral's fixed point is there and stable at radius 1
    too: started with the spiral features' weights well above the others', the
    iteration keeps them on top.

    Features of zero weight take no part in the neighbour search or the hyperplane
    fits (they add nothing to ``d_w`` or to ``W``-weighted Gram matrices), so those
    are computed on the weighted columns only; under the multiplicative update a zero
    weight stays zero and its margin is not computed at all.

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
    >>> est = LHRelief(n_neighbors=5).fit(X, y)
    >>> sorted(est.feature_importances_.argsort()[-2:].tolist()), est.stop_reason_
    ([0, 1], 'converged')
    """

    _algorithm_version = 1
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('small_classes',)

    _metric = "manhattan"
    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "update": [StrOptions({"multiplicative", "additive"})],
        "damping": [Interval(numbers.Real, 0, 1, closed="right")],
        "adaptive_damping": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "small_classes": [StrOptions({"clamp", "error"})],
        "verbose": ["verbose"],
    }

    def __init__(self, n_neighbors=5, update="multiplicative", damping=0.5, adaptive_damping=True, max_iter=1000,
                 tol=1e-5, small_classes="clamp", verbose=0):
        self.n_neighbors = n_neighbors
        self.update = update
        self.damping = damping
        self.adaptive_damping = adaptive_damping
        self.max_iter = max_iter
        self.tol = tol
        self.small_classes = small_classes
        self.verbose = verbose

    def _margin_vectors(self, X, y, w, out_cols=None, search=None):
        """``z_n = |x_n - H_miss b_n| - |x_n - H_hit a_n|`` for every sample (eqs. 5-8).

        Neighbours and hyperplane coefficients are found on the columns with ``w > 0``
        (the others add nothing to ``d_w`` or to the ``W``-weighted QPs); the margins are
        returned for the columns ``out_cols`` (default: all).  ``search``: an
        :class:`~knnweights.engine.incremental.IncrementalHitMiss` on ``(X, y)`` that the fit's
        iterations share (the same lists, most pairs skipped once the weights settle).
        """
        n = X.shape[0]
        support = np.flatnonzero(w > 0)
        every = support.size == X.shape[1]
        Xs = X if every else np.ascontiguousarray(X[:, support])
        ws = w if every else w[support]
        if search is None:
            nb = nearest_hits_misses(Xs, y, ws, self.n_neighbors, "manhattan")
            hit_idx, miss_idx = nb.hit_idx, nb.miss_idx
        else:
            hit_idx, miss_idx = search(w, self.n_neighbors)
        # hits and misses of every sample: one batch of 2n simplex QPs
        idx = np.vstack([hit_idx, miss_idx])
        if idx.min() < 0:  # a small class (the clamp): its missing places repeat the nearest, same hull
            idx = np.where(idx < 0, idx[:, :1], idx)
        coef, proj, _ = hull_projections(Xs, Xs, idx, ws)
        out = np.arange(X.shape[1]) if out_cols is None else np.asarray(out_cols)
        if not (out.size == support.size and np.array_equal(out, support)):  # margins on other columns
            Xo = np.ascontiguousarray(X[:, out])
            proj = np.empty((2 * n, out.size))
            indexed_combination(Xo, idx, coef, proj)
        else:
            Xo = Xs
        return np.abs(Xo - proj[n:]) - np.abs(Xo - proj[:n])

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y,
                                clamp="small_classes='error'" if self.small_classes == "clamp" else None)
        X = np.asarray(X, dtype=np.float64)
        d = X.shape[1]
        eta = float(self.damping)
        mult = self.update == "multiplicative"
        w = np.full(d, 1.0 / d)
        w[np.ptp(X, axis=0) == 0] = 0.0  # constant columns carry no margin
        if not w.any():
            w = np.full(d, 1.0 / d)
        self.cost_history_ = []
        self.step_history_ = []
        w_prev = None  # w_t-1, to tell a 2-cycle from slow convergence
        self.stop_reason_ = "max_iter"
        self.damping_history_ = []
        recent = [w]  # the last four iterates, for the oscillation test of the adaptive damping
        search = IncrementalHitMiss(X, y, "manhattan")
        for it in range(1, self.max_iter + 1):
            self.n_iter_ = it
            if mult:
                cols = np.flatnonzero(w > 0)
                z_mean = np.zeros(d)
                z_mean[cols] = self._margin_vectors(X, y, w, cols, search).mean(axis=0)
                t = normalize_weights(w * z_mean, "l2")
            else:
                z_mean = self._margin_vectors(X, y, w, search=search).mean(axis=0)
                t = normalize_weights(z_mean, "l2")
            self.cost_history_.append(float(w @ z_mean))
            if not t.any():
                warnings.warn(
                    "LHRelief: the mean margin vector has no positive entry (no feature separates the "
                    "local hyperplanes of hits and misses); keeping the previous weights.",
                    UserWarning,
                    stacklevel=3,
                )
                self.stop_reason_ = "no_positive_margin"
                break
            steps = self.step_history_
            if self.adaptive_damping and len(steps) >= 3 and _oscillating(steps, recent):
                eta = max(0.5 * eta, 1e-3 * float(self.damping))
            self.damping_history_.append(eta)
            w_new = (1.0 - eta) * w + eta * t
            if mult:  # weights decayed below round-off of the largest one are 0 (and leave the search)
                w_new[w_new < 1e-12 * w_new.max()] = 0.0
            w_new = normalize_weights(w_new, "l2")
            step = l2_norm(w_new - w)
            steps.append(step)
            if self.verbose:
                print(f"[LHRelief] iter {it:3d}  margin {self.cost_history_[-1]:.6g}  step {step:.3e}  "
                      f"eta {eta:.3g}  nonzero {int(np.count_nonzero(w_new))}/{d}")
            if step < self.tol:
                w = w_new
                self.stop_reason_ = "converged"
                break
            # a 2-cycle: the new iterate is back near w_t-1 while the step stays large
            cycling = w_prev is not None and l2_norm(w_new - w_prev) < 0.1 * step
            self.stop_reason_ = "cycle" if cycling else "max_iter"
            w_prev, w = w, w_new
            recent = recent[-3:] + [w]
        self.damping_ = eta
        if self.stop_reason_ in ("max_iter", "cycle"):
            extra = (" The iterates alternate between two weight vectors (a 2-cycle): use a smaller damping (eta)."
                     if self.stop_reason_ == "cycle" else " Increase max_iter or tol, or use a smaller damping (eta).")
            warnings.warn(
                f"LHRelief stopped at max_iter={self.max_iter} before the weights converged (last step "
                f"{self.step_history_[-1]:.3g} >= tol={self.tol}).{extra}",
                ConvergenceWarning,
                stacklevel=3,
            )
        return w


def _oscillating(steps, recent):
    """The iterates jump back and forth: the step stopped shrinking and the last three
    steps largely cancel (``||w_t - w_t-3||`` below half their summed length), unlike a
    slow but steady approach, where they add up."""
    if len(recent) < 4 or steps[-1] < 0.9 * min(steps[-3:-1]):
        return False
    return l2_norm(recent[-1] - recent[-4]) < 0.5 * sum(steps[-3:])
