"""The active-set solver of SQP-FW and its regularisation path (pure functions).

Takeuchi & Sugiyama, "Target Neighbor Consistent Feature Weighting for Nearest
Neighbor Classification" (NIPS 2011).  Problem (2):

    min_w  (theta / n) sum_i [ eps_{i,h_i} . w - eps_{i,m_i} . w ] + 1/2 ||w - w_bar||^2
    s.t.   sum(w) = 1,  w >= 0,

with ``eps_{i,j} = (x_i - x_j)**2`` and ``h_i`` / ``m_i`` the ``kappa``-th nearest hit /
``lambda``-th nearest miss of ``x_i`` *under w itself* (target-neighbour, TN,
consistency).  Problem (3) writes TN consistency as linear constraints on
``(w, xi, eta)`` with the index sets ``H[<], H[=], H[>]`` (hits closer than / tied with
/ farther than the target hit; ``xi_i`` is the distance to the target hit) and
``M[<], M[=], M[>]`` for misses (``eta_i``), ``Z = {j: w_j = 0}``, ``P = {j: w_j > 0}``.

Representation.  Every sample keeps its candidate hits and misses (all of them, or
the ``n_candidates`` nearest ones: the working set of Sec. 3.2) in an ``(n, K)`` index
array and an ``(n, K)`` state array in ``{-1, 0, +1}`` for ``<``, ``=``, ``>``; samples
outside the working set are in ``[>]``.  ``H[=]_i`` is never empty (the kappa-th hit
is in it), so the slack ``xi_i`` equals ``eps_{i,r_i} . w`` for a representative
``r_i`` of ``H[=]_i``: eliminating the slacks turns the equalities of EQP (4) into the
rows ``(eps_{i,h} - eps_{i,r_i}) . dw = 0`` for the other members of ``H[=]_i`` (and
likewise for misses), plus ``1 . dw = 0`` and ``dw_j = 0`` on ``Z``.  The EQP's KKT
system is solved in its null-space (Schur complement) form by a least-squares solve
of size ``|P| x (1 + #ties)``, which also gives the multipliers of Lemma 6: with the
Lagrangian ``f + nu (1.w - 1) + alpha.w_Z + sum beta_ih (eps_ih.w - xi_i) + sum
gamma_im (eps_im.w - eta_i)``, the tie rows carry ``beta`` / ``gamma`` of the
non-representative members, and stationarity in ``xi_i`` / ``eta_i`` gives the
representative's: ``beta_{i,r} = theta/n - sum_other beta_ih``, ``gamma_{i,s} =
-theta/n - sum_other gamma_im``.  Memory is ``O(n K)`` for the candidate lists plus
``O(#ties d)``; no ``n x n x d`` array is formed.

Cost.  The steps run in :mod:`._active_set_steps` over compiled kernels (array state,
one fused pass for ``eps . dw`` and the min-ratio test over the candidate lists,
``O(n K |P|)``, or one ``n x |P| x n`` matrix product for all pairs when the lists hold
most samples and ``|P| >= GEMM_MIN_P``; the least-squares solve by semi-normal equations
(a BLAS Gram product, a Cholesky factor, two refinement passes), or an SVD when the tie
rows lose rank, ``O(|P| m^2)``, under one BLAS thread; with ``|P| >= MAINT_MIN_P`` the
Cholesky factor is maintained across steps by column appends / deletions and rank-one
row updates / downdates, ``O(m^2 + |P| m)`` per step, refactorised every 100 steps).
This driver only refreshes the working set (one neighbour search every ``refresh_every``
steps and at the end) and rolls back to the last checkpoint, dropping the discarded steps
from the history, when a refresh finds TN consistency broken.  Simultaneous blocks and
equal multipliers (within ``1e-9`` relative) go to the first sample, then the smallest candidate index, and slopes
``eps . dw`` below ``1e-9`` of the largest never block, so the pivot sequence does not
depend on the order of the candidate lists nor, away from degenerate points, on rounding.
With ``d >> n`` (microarrays) degenerate points are common (a tie row in the span of the
active ones, a blocking step of length ~0, rank-deficient EQPs whose minimum-norm
multipliers pick the release): there the pivot taken depends on rounding, and two
implementations that differ only in summation order may continue to different local
minima (or reach the same one in a few more or fewer steps).
"""

import hashlib
import warnings

import numpy as np
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning

from ..engine._docs import data_doc
from ..engine.incremental import IncrementalHitMiss
from ..engine.linalg import single_thread_blas
from ..engine.neighbors import indexed_distances, nearest_hits_misses
from ..utils import fill_docstring
from . import _active_set_kernels as _k
from . import _active_set_path as _kp
from . import _active_set_steps as _s

__all__ = ["project_simplex", "sqpfw_active_set", "sqpfw_path", "sqpfw_objective"]

_METRIC = "sqeuclidean"
_MESSAGES = {
    0: "Local minimum of problem (2) reached (Theorem 7: zero EQP step, no releasable constraint).",
    1: "Iteration limit reached.",
    2: "Stalled: the objective did not decrease over many steps (the active set cycles at a degenerate point).",
    3: "Work budget (max_work) reached: the last iterate is feasible and TN consistent, not a local minimum.",
}

#: steps without a decrease of the objective after which a solve stops as cycling (at least)
STALL_STEPS = 20000

#: the ratio test takes the directional distances of all pairs from one matrix product when
#: the step direction has at least this many non-zeros and the lists hold about half the
#: samples (``-1``: never; the gathered pair loop otherwise)
GEMM_MIN_P = 64

#: with at least this many positive features (and at least 16 constraint rows) the steps solve
#: EQP (4) through a maintained Cholesky factor of its Gram matrix (column deletions / appends
#: and rank-one row updates as ties and zero weights change, a fresh factor every 100 steps);
#: ``-1``: always the fresh factorisation
MAINT_MIN_P = 64


def _min_p(threshold, d):
    """A path threshold as the kernels take it: ``None`` where ``d`` features can never reach it (or it is
    ``-1``); numba prunes the branches on a ``None`` argument, so such a path is not even compiled."""
    return threshold if 0 <= threshold <= d else None


def project_simplex(v):
    """Euclidean projection of ``v`` onto the probability simplex ``{w >= 0, sum w = 1}``.

    Parameters
    ----------
    v : array-like of shape (d,)
        The point.

    Returns
    -------
    w : ndarray of shape (d,)
        Its projection.
    """
    v = np.asarray(v, dtype=np.float64)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    ind = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / ind > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


#: ``{problem}``: the parameters of problem (2) besides the data and ``theta``
_problem_doc = fill_docstring(problem="""kappa : int, default=1
    Rank of the target hit.
lambda_ : int, default=1
    Rank of the target miss.
w_bar : ndarray of shape (d,) or None, default=None
    Prior weights; ``None``: uniform ``1/d``.""")


@data_doc
@_problem_doc
def sqpfw_objective(X, codes, w, theta, kappa=1, lambda_=1, w_bar=None):
    """Objective of problem (2) with the target neighbours recomputed from ``w``.

    {X_codes}
    w : ndarray of shape (d,)
        Weights (on the simplex).
    theta : float
        Regularisation parameter.
    {problem}

    Returns
    -------
    objective : float
        The value of problem (2) at ``w``.
    """
    n, d = X.shape
    w_bar = np.full(d, 1.0 / d) if w_bar is None else np.asarray(w_bar, dtype=np.float64)
    k = max(kappa, lambda_)
    nb = nearest_hits_misses(X, codes, w, k, _METRIC)
    xi = indexed_distances(X, nb.hit_idx[:, kappa - 1:kappa], w, _METRIC)[:, 0]
    eta = indexed_distances(X, nb.miss_idx[:, lambda_ - 1:lambda_], w, _METRIC)[:, 0]
    return theta / n * float(np.sum(xi - eta)) + 0.5 * float(np.sum((w - w_bar) ** 2))


class _Side:
    """Candidates and ``<``/``=``/``>`` states of the hits (or misses) of every sample."""

    def __init__(self, cand, state, total, k):
        self.cand, self.state, self.total, self.k = cand, state, total, k

    def copy(self):
        return _Side(self.cand.copy(), self.state.copy(), self.total, self.k)

    def reps(self):
        return np.argmax(self.state == 0, axis=1)


def _states_from_distances(D, valid, k, rtol):
    """States ``-1/0/+1`` relative to the k-th smallest distance of each row (ties within rtol)."""
    Dm = np.where(valid, D, np.inf)
    kth = np.partition(Dm, k - 1, axis=1)[:, k - 1]
    tol = rtol * np.maximum(np.abs(kth), 1e-300) + 1e-300
    state = np.where(Dm < kth[:, None] - tol[:, None], -1, np.where(Dm <= kth[:, None] + tol[:, None], 0, 1))
    return state.astype(np.int8)


class _Problem:
    """State of the SQP-FW active-set method (problem (3) with index sets)."""

    def __init__(self, X, codes, kappa, lambda_, w_bar, n_candidates, rtol=1e-9):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.codes = codes
        self.n, self.d = X.shape
        self.kappa, self.lambda_ = int(kappa), int(lambda_)
        self.w_bar = w_bar
        counts = np.bincount(codes)
        self.n_hits = counts[codes] - 1
        self.n_misses = self.n - counts[codes]
        self.n_candidates = n_candidates
        self.rtol = rtol
        self.n_refresh = 0
        self.work = np.array([0.0, -1.0])  # [GFLOP counted by the steps, budget or -1]
        self._search = IncrementalHitMiss(self.X, self.codes, _METRIC)

    # -- candidates --------------------------------------------------------------------
    def _widths(self):
        kh, km = int(self.n_hits.max()), int(self.n_misses.max())
        if self.n_candidates is not None:  # a working set pays off only well below all candidates
            full = 2 * self.n_candidates
            if kh > full:
                kh = max(self.n_candidates, self.kappa + 1)
            if km > full:
                km = max(self.n_candidates, self.lambda_ + 1)
        return kh, km

    def full_lists(self):
        """True when the candidate lists hold every hit and miss (no working set to refresh)."""
        kh, km = self._widths()
        return kh >= int(self.n_hits.max()) and km >= int(self.n_misses.max())

    def _nearest(self, w):
        kh, km = self._widths()
        hit_idx, miss_idx = self._search(w, max(kh, km))
        return (np.ascontiguousarray(hit_idx[:, :kh], dtype=np.int64),
                np.ascontiguousarray(miss_idx[:, :km], dtype=np.int64))

    def init_sets(self, w):
        """Index sets of problem (3) read off the distances under ``w``."""
        hc, mc = self._nearest(w)
        self.w = np.array(w, dtype=np.float64)
        self.Z = w <= 0
        self.hit = _Side(hc, _states_from_distances(self._dist(hc, w), hc >= 0, self.kappa, self.rtol),
                         self.n_hits, self.kappa)
        self.miss = _Side(mc, _states_from_distances(self._dist(mc, w), mc >= 0, self.lambda_, self.rtol),
                          self.n_misses, self.lambda_)
        self.forget()

    def _dist(self, cand, v):
        return indexed_distances(self.X, cand, v, _METRIC)

    def refresh(self):
        """Rebuild the working sets at the current ``w``; False if TN consistency was lost."""
        self.n_refresh += 1
        ok = True
        hc, mc = self._nearest(self.w)  # one neighbour search for both sides
        for side in (self.hit, self.miss):
            new = hc if side is self.hit else mc
            rows = np.arange(self.n)[:, None]
            # carry the '<' and '=' members over (they are among the nearest)
            old_in = side.state <= 0
            width = int(old_in.sum(axis=1).max())
            order = np.argsort(~old_in, axis=1, kind="stable")[:, :width]
            keep_idx = np.where(old_in[rows, order], side.cand[rows, order], -2)
            keep_state = side.state[rows, order]
            match = new[:, :, None] == keep_idx[:, None, :]
            found = match.any(axis=2)
            state = np.ones(new.shape, np.int8)
            pos = np.argmax(match, axis=2)
            state[found] = keep_state[rows.repeat(new.shape[1], 1)[found], pos[found]]
            # every kept member must be in the new list
            if (match.any(axis=1).sum(axis=1) != (keep_idx >= 0).sum(axis=1)).any():
                ok = False
            D = self._dist(new, self.w)
            rep = np.argmax(state == 0, axis=1)
            lead = D[np.arange(self.n), rep]
            tol = self.rtol * np.maximum(np.abs(lead), 1e-300)
            if ((state == 1) & (new >= 0) & (D < lead[:, None] - tol[:, None])).any():
                ok = False
            side.cand, side.state = new, state
        self.forget()
        return ok

    # -- linear algebra of EQP (4) ---------------------------------------------------------
    def c_vector(self):
        """``c = sum_i eps_{i,h_i} - eps_{i,m_i}`` at the representatives (gradient of the TN term / theta*n)."""
        c = np.empty(self.d)
        _k._c_vector(self.X, self.hit.cand, self.hit.reps().astype(np.int64), self.miss.cand,
                     self.miss.reps().astype(np.int64), c)
        return c

    def alpha(self, g, EZT, mu):
        """Multipliers ``alpha`` of ``w_j = 0`` (``j`` in ``Z``; ``-inf`` elsewhere) from the tie
        rows over ``Z`` in the layout of ``E[:, Z].T`` (the same product, the same rounding)."""
        alpha = np.full(self.d, -np.inf)
        alpha[self.Z] = -(g[self.Z] + mu[0] + EZT @ mu[1:])
        return alpha

    def ratio(self, dw, limit):
        """Longest step (Lemma 5): ``(tau, kind, where)`` with kind 'w', 'hit', 'miss' or None."""
        best, kind, where = limit, None, None
        tie = _k._TIE
        neg = (~self.Z) & (dw < 0)
        if neg.any():
            t = -self.w[neg] / dw[neg]
            tmin = t.min()
            if tmin < best:
                j = int(np.flatnonzero(t <= tmin + tie * tmin)[0])
                best, kind, where = max(tmin, 0.0), "w", int(np.flatnonzero(neg)[j])
        dw = np.ascontiguousarray(dw, dtype=np.float64)
        nz = np.flatnonzero(dw).astype(np.int64)
        Dh, Dm = self.cand_dist("hit"), self.cand_dist("miss")
        self._R = {"hit": np.empty(self.hit.cand.shape), "miss": np.empty(self.miss.cand.shape)}
        th, ih, kh, tm, im, km = _k._both_ratios(
            self.X, self.hit.cand, self.hit.state, self.hit.reps().astype(np.int64), Dh, self._R["hit"],
            self.miss.cand, self.miss.state, self.miss.reps().astype(np.int64), Dm, self._R["miss"], dw, nz,
            nz.size, _min_p(GEMM_MIN_P, self.X.shape[1]))
        for name, t, i, k in (("hit", th, ih, kh), ("miss", tm, im, km)):
            if i >= 0 and (t < best - tie * best if kind is not None else t < best):
                best, kind, where = t, name, (i, k)
        return best, kind, where

    def moved(self, tau):
        """``D += tau R`` after ``w += tau dw`` (``dw`` of the last ratio test)."""
        self.Dh += tau * self._R["hit"]
        self.Dm += tau * self._R["miss"]
        self.dinfo[1] += 1

    def cand_dist(self, name):
        """Cached ``eps_{i,cand} . w`` (updated along steps, recomputed after 50 updates)."""
        if not self.dinfo[0] or self.dinfo[1] >= _k._STALE:
            d = self.X.shape[1]  # never the all-pairs product, with the argument type of the steps' calls
            never = None if _min_p(GEMM_MIN_P, d) is None else d + 1
            _k._both_distances(self.X, self.hit.cand, self.miss.cand, self.w, self.Dh, self.Dm, never)
            self.dinfo[:] = (1, 0)
        return self.Dh if name == "hit" else self.Dm

    def forget(self):
        """Invalidate the distance cache (and size it to the current candidate lists)."""
        self.Dh = np.empty(self.hit.cand.shape)
        self.Dm = np.empty(self.miss.cand.shape)
        self.dinfo = np.zeros(2, np.int64)

    def add(self, kind, where):
        if kind == "w":
            self.w[where] = 0.0
            self.Z[where] = True
        elif kind in ("hit", "miss"):
            getattr(self, kind).state[where] = 0

    def objective(self, theta):
        r = np.arange(self.n)
        xi = self.cand_dist("hit")[r, self.hit.reps()]
        eta = self.cand_dist("miss")[r, self.miss.reps()]
        return theta / self.n * float(np.sum(xi - eta)) + 0.5 * float(np.sum((self.w - self.w_bar) ** 2))

    def checkpoint(self, history):
        return (self.w.copy(), self.Z.copy(), self.hit.copy(), self.miss.copy(), len(history))

    def active_set_key(self):
        """A digest of the active set: ``Z`` and every candidate's state (the path's cycle test)."""
        h = hashlib.blake2b(digest_size=16)
        for a in (self.Z, self.hit.cand, self.hit.state, self.miss.cand, self.miss.state):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.digest()

    def restore(self, cp, history):
        """Go back to checkpoint ``cp``; the steps taken since are dropped from ``history``."""
        self.w, self.Z, self.hit, self.miss = cp[0].copy(), cp[1].copy(), cp[2].copy(), cp[3].copy()
        del history[cp[4]:]
        self.forget()

    def solve(self, theta, max_iter, refresh_every, history, verbose=0, max_work=None):
        """Algorithm 1 from the current state at fixed theta; returns (status, n_kept_steps).

        The steps run in :func:`._active_set_steps.run_steps`; this driver refreshes
        the working set every ``refresh_every`` steps and at the end, and goes back to
        the last checkpoint with a doubled working set when a refresh finds TN
        consistency broken (the discarded steps leave ``history``).  ``max_work`` (GFLOP,
        counted by :func:`._active_set_steps.step_work` over every solve of this problem,
        rolled-back steps included) stops with status 3.
        """
        use_ws = self.n_candidates is not None and not self.full_lists()
        cp = self.checkpoint(history) if use_ws else None
        h0 = len(history)
        it, resume = 0, False
        mi = -1 if max_iter is None else int(max_iter)
        self.work[1] = -1.0 if max_work is None else float(max_work)
        buf = np.empty(1000)
        next_report = 1000
        with single_thread_blas():
            while True:
                status, it, nh = _s.run_steps(
                    self.X, self.w, self.Z, self.w_bar, self.hit.cand, self.hit.state, self.miss.cand,
                    self.miss.state, self.kappa, self.lambda_, float(theta), self.Dh, self.Dm, self.dinfo, it, mi,
                    refresh_every, use_ws, resume, buf, history[-1], _min_p(GEMM_MIN_P, self.X.shape[1]),
                    _min_p(MAINT_MIN_P, self.X.shape[1]), self.work)
                history.extend(buf[:nh].tolist())
                resume = False
                if verbose and (verbose > 1 or it >= next_report
                                or status in (_s.CONVERGED, _s.MAX_ITER, _s.MAX_WORK)):
                    next_report = (it // 1000 + 1) * 1000
                    print(f"[SQPFW] theta={theta:.4g} step {it:7d}  kept {len(history) - h0:7d}  "
                          f"|P|={int((~self.Z).sum()):5d}  ties={self.n_ties():5d}  objective={history[-1]:.10g}  "
                          f"work={self.work[0]:.4g} GFLOP")
                if status in (_s.BUFFER_FULL, _s.REFRESH) and self._stalled(history, h0):
                    warnings.warn(
                        f"SQP-FW: the objective has not decreased over the last {self._stall_window()} steps at "
                        f"theta={theta:.6g} (the active set cycles at a degenerate point, e.g. tied distances); "
                        "stopping there. Set max_iter to bound the steps.", ConvergenceWarning, stacklevel=4)
                    return 2, len(history) - h0
                if status == _s.BUFFER_FULL:
                    continue
                if status in (_s.MAX_ITER, _s.MAX_WORK):
                    # a stop between refreshes: the iterate is checked against the full lists; one
                    # that lost TN consistency outside the working set gives way to the last
                    # checked one (its steps leave the history)
                    if use_ws and not self.refresh():
                        self.restore(cp, history)
                    return (1 if status == _s.MAX_ITER else 3), len(history) - h0
                if status == _s.REFRESH:
                    if self.refresh():
                        cp = self.checkpoint(history)
                    else:
                        self._rollback(cp, history, verbose)
                        use_ws = not self.full_lists()
                    resume = True
                    continue
                if use_ws and not self.refresh():
                    self._rollback(cp, history, verbose)
                    use_ws = not self.full_lists()
                    continue
                return 0, len(history) - h0

    def _stall_window(self):
        return max(STALL_STEPS, 10 * (self.X.shape[0] + self.X.shape[1]))

    def _stalled(self, history, h0):
        """True when the last ``_stall_window()`` kept steps did not lower the objective."""
        m = self._stall_window()
        if len(history) - h0 <= m:
            return False
        old, new = history[-m - 1], history[-1]
        return new >= old - 1e-8 * max(1.0, abs(old))

    def _rollback(self, cp, history, verbose):
        self.restore(cp, history)
        self.n_candidates *= 2
        if verbose:
            print(f"[SQPFW] working set lost TN consistency: back to step {cp[4] - 1}, "
                  f"working set {self.n_candidates}")
        self.refresh()

    def n_ties(self):
        return int((self.hit.state == 0).sum() + (self.miss.state == 0).sum()) - 2 * self.n

    def result(self, theta, status, nit, history):
        return OptimizeResult(
            x=self.w.copy(), fun=self.objective(theta), nit=nit, status=status, success=status == 0,
            message=_MESSAGES[status], cost_history=np.asarray(history), hit_candidates=self.hit.cand,
            hit_state=self.hit.state, miss_candidates=self.miss.cand, miss_state=self.miss.state,
            zero_set=self.Z.copy(), n_candidates=self.n_candidates, n_refresh=self.n_refresh,
            work=float(self.work[0]),
        )


def _prepare(X, codes, kappa, lambda_, w_bar, working_set):
    X = np.ascontiguousarray(X, dtype=np.float64)
    d = X.shape[1]
    w_bar = np.full(d, 1.0 / d) if w_bar is None else np.asarray(w_bar, dtype=np.float64)
    return _Problem(X, np.asarray(codes, dtype=np.int64), kappa, lambda_, w_bar, working_set)


@data_doc
@_problem_doc
def sqpfw_active_set(X, codes, theta, kappa=1, lambda_=1, w_bar=None, w0=None, working_set=None,
                     refresh_every=100, max_iter=None, verbose=0, max_work=None):
    """Solve problem (2) of SQP-FW by Algorithm 1 (the sequential QP / active-set method).

    {X_codes}
    theta : float
        Regularisation parameter ``theta >= 0``.
    {problem}
    w0 : ndarray of shape (d,), default=None
        Start (on the simplex); default: the projection of ``w_bar`` onto the simplex.
    working_set : int, default=None
        Keep only this many nearest candidate hits/misses per sample in ``H[>]``,
        ``M[>]`` (Sec. 3.2), refreshed every ``refresh_every`` steps and at the end;
        if a refresh finds TN consistency broken the run goes back to the last
        checkpoint and doubles the working set, so the result equals the full run's.
    refresh_every : int, default=100
        Steps between working-set refreshes.
    max_iter : int or None, default=None
        Limit on the active-set steps (those discarded by a working-set rollback
        included); ``None``: until Theorem 7 holds.
    verbose : int, default=0
        Progress lines (steps, ``|P|``, ties, objective) every 1000 steps (every
        chunk if ``> 1``).
    max_work : float or None, default=None
        Budget of counted floating-point work (GFLOP, :func:`._active_set_steps.step_work`:
        a count of the EQP and ratio-test operations of the steps taken, the same on every
        machine); ``None``: no budget.

    Returns
    -------
    OptimizeResult
        ``x`` (weights), ``fun`` (objective (2)), ``nit`` (steps kept), ``status`` (0
        converged, 1 iteration limit, 2 stalled, 3 work budget), ``work`` (GFLOP counted),
        ``cost_history`` (objective before the first and
        after every kept step; non-increasing),
        the final candidate lists and states, ``zero_set``.
    """
    prob = _prepare(X, codes, kappa, lambda_, w_bar, working_set)
    w = project_simplex(prob.w_bar) if w0 is None else np.asarray(w0, dtype=np.float64).copy()
    prob.init_sets(w)
    history = [prob.objective(theta)]
    status, nit = prob.solve(theta, max_iter, refresh_every, history, verbose, max_work)
    return prob.result(theta, status, nit, history)


class SQPFWPath:
    """Regularisation path of SQP-FW: breakpoints ``thetas_`` and weights ``weights_`` there.

    Between consecutive breakpoints the local solution is linear in theta (fixed index
    sets).  A repeated theta marks a jump (the non-convex problem's local minimum
    moved discontinuously after a TN change); ``__call__`` is right-continuous there.
    ``theta_max_`` is the theta asked for and ``stop_reason_`` why the path ended:
    ``"theta_max"`` (reached), ``"max_breakpoints"`` (the cap stopped it at
    ``thetas_[-1]``: beyond it ``__call__`` repeats the last weights, which are not the
    path's) or ``"stalled"`` (cycling at a degenerate point).

    Parameters
    ----------
    thetas : array-like of shape (n_breakpoints,)
        The breakpoints, non-decreasing.
    weights : array-like or list of shape (n_breakpoints, n_features)
        The weights at each breakpoint.
    n_steps : int
        Active-set steps taken along the path.
    theta_max : float or None, default=None
        The theta asked for; ``None``: the last breakpoint.
    stop_reason : {"theta_max", "max_breakpoints", "stalled"}, default="theta_max"
        Why the path ended.
    """

    def __init__(self, thetas, weights, n_steps, theta_max=None, stop_reason="theta_max"):
        self.thetas_ = np.asarray(thetas, dtype=np.float64)
        self.theta_max_ = float(self.thetas_[-1] if theta_max is None else theta_max)
        self.stop_reason_ = stop_reason
        # a list of rows (the path's breakpoints) is stacked by one copy
        self.weights_ = (np.vstack(weights).astype(np.float64, copy=False) if isinstance(weights, list)
                         else np.asarray(weights, dtype=np.float64))
        self.n_steps_ = n_steps

    def __call__(self, theta):
        """Weights at ``theta`` (scalar or array) by linear interpolation between breakpoints."""
        th = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        T, W = self.thetas_, self.weights_
        k = np.clip(np.searchsorted(T, th, side="right") - 1, 0, len(T) - 1)
        k1 = np.minimum(k + 1, len(T) - 1)
        span = T[k1] - T[k]
        frac = np.where(span > 0, (np.clip(th, T[0], T[-1]) - T[k]) / np.where(span > 0, span, 1.0), 0.0)
        out = W[k] + frac[:, None] * (W[k1] - W[k])
        return out[0] if np.ndim(theta) == 0 else out

    def __len__(self):
        return len(self.thetas_)


@data_doc
@_problem_doc
def sqpfw_path(X, codes, theta_max, kappa=1, lambda_=1, w_bar=None, working_set=None, refresh_every=100,
               max_breakpoints=None, max_iter=None, verbose=0):
    """Regularisation path of problem (2) from ``theta = 0`` to ``theta_max``.

    Parametric active-set tracking (Sec. 3.2, "Regularization path tracking"): with the
    index sets fixed, the EQP solution and its multipliers are affine in theta; theta
    grows until a primal constraint of Lemma 5 blocks (it joins the active set) or a
    multiplier reaches the sign at which Lemma 6 releases its constraint; then Algorithm 1
    is re-run at that theta so that each breakpoint satisfies Theorem 7.

    ``max_breakpoints`` caps the events (``None``: until ``theta_max``); a capped path
    ends short of ``theta_max`` with ``stop_reason_ = "max_breakpoints"``.

    {X_codes}
    theta_max : float
        The path's end.
    {problem}
    working_set : int or None, default=None
        Candidate hits / misses kept per sample (as :func:`sqpfw_active_set`).
    refresh_every : int, default=100
        Steps between working-set refreshes.
    max_breakpoints : int or None, default=None
        Cap on the path's events.
    max_iter : int or None, default=None
        Limit on the active-set steps of each re-solve.
    verbose : int, default=0
        Progress lines.

    Returns
    -------
    path : SQPFWPath
        The breakpoints and the weights there.
    """
    with single_thread_blas():
        return _path(X, codes, theta_max, kappa, lambda_, w_bar, working_set, refresh_every, max_breakpoints,
                     max_iter, verbose)


def _path(X, codes, theta_max, kappa, lambda_, w_bar, working_set, refresh_every, max_breakpoints, max_iter,
          verbose):
    prob = _prepare(X, codes, kappa, lambda_, w_bar, working_set)
    prob.init_sets(project_simplex(prob.w_bar))
    theta = 0.0
    history = [prob.objective(0.0)]
    prob.solve(0.0, max_iter, refresh_every, history)
    thetas, weights = [0.0], [prob.w.copy()]
    n_steps = 0
    inv_n = 1.0 / prob.n
    reason, events = "max_breakpoints", 0
    seen = set()  # active sets met since theta last grew or w last moved (a repeat is a cycle)
    while max_breakpoints is None or events < max_breakpoints:
        events += 1
        c = prob.c_vector()
        g = theta * inv_n * c + prob.w - prob.w_bar
        gc = inv_n * c
        # EQP (4) for g and for c/n with one factorisation (the compiled fresh solve), the tie
        # rows over Z for the multipliers alpha
        dws, mus, EZT, ii, tt, mth = _kp._path_eqp(prob.X, prob.hit.cand, prob.hit.state, prob.miss.cand,
                                                  prob.miss.state, prob.Z, np.vstack([g, gc]))
        mu0, v, mu1 = mus[0], dws[1], mus[1]  # d(dw)/d(theta) = -(projected c/n): v = -proj(c/n)
        alpha0 = prob.alpha(g, EZT, mu0)
        alpha1 = prob.alpha(gc, EZT, mu1)
        # primal events (Lemma 5 along the theta direction)
        dt, kind, where = prob.ratio(v, theta_max - theta)
        event = (kind, where, None)
        # dual events: a releasable multiplier reaching its release sign (beta / gamma of
        # Lemma 6 from mu0 + theta' mu1)
        dt, dk, ei, ek, et = _kp._path_dual_events(prob.Z, alpha0, alpha1, prob.hit.cand, prob.hit.state,
                                                  prob.miss.cand, prob.miss.state, prob.kappa, prob.lambda_, ii,
                                                  tt, mth, mu0, mu1, theta * inv_n, inv_n, dt)
        if dk == 1:
            event = ("w", ei, "release")
        elif dk > 1:
            event = ("hit" if dk == 2 else "miss", (ei, ek), et)
        theta = min(theta + dt, theta_max)
        w_new = prob.w + dt * v
        if (w_new < 0).any():
            prob.w = np.maximum(w_new, 0.0)
            prob.forget()
        else:
            prob.w = w_new
            prob.moved(dt)
        prob.w[prob.Z] = 0.0
        if dt > 0 or theta >= theta_max:
            thetas.append(theta)
            weights.append(prob.w.copy())
        if theta >= theta_max:
            reason = "theta_max"
            break
        kind, where, target = event
        if target is None:
            prob.add(kind, where)
        elif kind == "w":
            prob.Z[where] = False
        else:
            getattr(prob, kind).state[where] = target
        before = prob.w.copy()
        status, nit = prob.solve(theta, max_iter, refresh_every, history, max(verbose - 1, 0))
        n_steps += nit
        if status == 2:  # cycling at a degenerate point (warned): the path ends here
            thetas.append(theta)
            weights.append(prob.w.copy())
            reason = "stalled"
            break
        if verbose and len(thetas) % 100 == 0:
            print(f"[SQPFW path] theta={theta:.6g}  breakpoints {len(thetas)}  steps {n_steps}  "
                  f"|P|={int((~prob.Z).sum())}  objective={history[-1]:.10g}")
        if np.abs(prob.w - before).max() > 1e-12:  # a jump to another local minimum
            thetas.append(theta)
            weights.append(prob.w.copy())
            seen.clear()
        elif dt > 0:
            seen.clear()
        else:  # theta and w stayed: only the active set changed; meeting one again is a cycle
            key = prob.active_set_key()
            if key in seen:
                warnings.warn(f"SQP-FW path: the active set cycles at theta={theta:.6g} (a degenerate point: "
                              "events that change the active set without moving theta or w, in a loop); the path "
                              "ends there.", ConvergenceWarning, stacklevel=3)
                # its last point is recorded already (at this theta): the loop's zero steps moved w by
                # rounding only (<= 1e-12, not a jump)
                reason = "stalled"
                break
            seen.add(key)
    return SQPFWPath(thetas, weights, n_steps, theta_max, reason)
