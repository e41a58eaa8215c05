"""The step loop of the SQP-FW active-set method (Algorithm 1 of Takeuchi & Sugiyama, 2011).

All state lives in arrays (see :mod:`knnweights._solvers.active_set` for the
representation): weights ``w``, the zero set ``Z``, the candidate hits / misses of every
sample with their ``-1/0/+1`` (``[<]/[=]/[>]``) states, and the cached candidate
distances ``D = eps . w``.  One call of :func:`run_steps` performs steps of Algorithm 1
until the local minimum of Theorem 7, the iteration limit, a working-set refresh or a
full history buffer:

* EQP (4) in null-space form: the multipliers ``(nu, mu_E)`` are the least-squares
  solution of ``A^T mu = -g_P``, ``A = [1; E_P]`` with one tie row
  ``eps_{i,j} - eps_{i,rep}`` per non-representative ``[=]`` member, built on the positive
  features only: semi-normal equations (the ``m x m`` Gram matrix ``A_P A_P^T`` by one BLAS
  product, its Cholesky factor, two ``O(p m)`` refinement passes) when the factor shows
  full rank (``min L_ii > 1e-4 max L_ii``, a thin QR's rank test: ``L_ii = |R_ii|``),
  else the minimum-norm solution of an SVD (relative cut-off ``3e-7``); with
  ``|P| >= maint_min_p`` (microarrays) the Cholesky factor is maintained instead of rebuilt:
  column deletions / appends as tie rows leave / join (``O(m^2)`` / ``O(p m)``), rank-one
  updates / downdates as features leave / enter ``Z`` (``O(m^2)``), the constraint rows
  kept over the positive features between steps, a fresh factor every ``_REFACTOR`` steps
  and whenever a downdate loses definiteness or ``min U_ii <= 1e-3 max U_ii`` (then the
  fresh path above, SVD included); the same two refinement passes follow, so the solution
  equals the fresh one to rounding;
* ``c`` (the TN gradient) updated by ``O(d)`` per changed representative, recomputed every
  ``_STALE_C`` steps;
* Lemma 5: one fused pass over the working set computes the directional distances
  ``eps . dw`` (over the positive features only) and the min-ratio test; when the lists
  hold about half the samples and ``dw`` has many non-zeros (microarrays) the directional
  distances of all pairs come from one matrix product; slopes below ``_RT`` times the
  largest are rounding noise (rows in the span of the active ones) and never block;
* ``alpha_Z`` (zero steps, ``d >= maint_min_p``, ``|Z| > d / 2``): one dense pass over the features per tie
  and one per representative;
* Lemma 6 / Theorem 7: the releasable constraint with the largest multiplier is
  released (first maximum in the order ``Z``, hits ``[=]->[<]``, hits ``[=]->[>]``,
  misses ``[=]->[<]``, misses ``[=]->[>]``; rows in sample order).

The loop itself is Python and calls a few compiled kernels a step (the start of a step, the
EQP, the move or the zero step: :mod:`._active_set_kernels`, :mod:`._active_set_linalg`).  Each
kernel is compiled the first time a step needs it, so a problem that never meets a
rank-deficient EQP never compiles the SVD path, and narrow data never compile the maintained
factor; and no compiled function contains the whole solver, whose compilation would optimise
every kernel's code once more.  The price is the interpreter between the kernels, a fixed cost per
step.  The kernels do the same floating-point operations in the same order as one compiled loop
would.  Callers run it under :func:`knnweights.engine.linalg.single_thread_blas` (the small
solves oversubscribe the cores otherwise).
"""

import numpy as np

from . import _active_set_kernels as _k
from ._active_set_linalg import solve_eqp

__all__ = ["run_steps", "step_work", "CONVERGED", "MAX_ITER", "REFRESH", "BUFFER_FULL", "MAX_WORK"]

# status codes of run_steps
CONVERGED, MAX_ITER, REFRESH, BUFFER_FULL, MAX_WORK = 0, 1, 2, 3, 4
_BLAS_SPEEDUP = 4  # the all-pairs product's speed against the compiled loops (step_work)


def step_work(p, m, maint, nK, pdw):
    """Work of one step counted for ``max_work`` (GFLOP of compiled loops).

    EQP (4) with ``p`` positive features and ``m`` constraint rows: ``O(m^2 + p m)`` through the
    maintained factor plus its refactorisation every ``_REFACTOR`` steps (``p m^2 / _REFACTOR``),
    ``O(p m^2)`` for a fresh one; the ratio test of a move: the directional distances of the
    ``nK`` candidate pairs over the ``pdw`` non-zeros of the step (3 operations a term; the
    all-pairs matrix product counts its ``2 n^2 pdw`` at ``1 / _BLAS_SPEEDUP``, its speed
    against the loops); the multipliers of a zero step: ``m`` tie rows over the features in
    ``Z`` (or all of them), passed as ``nK = m``.  A count of the dominant terms, so that it
    depends only on the sets the steps visit, never on the machine.

    Parameters
    ----------
    p : int
        Positive features.
    m : int
        Constraint rows of the EQP.
    maint : bool
        The EQP goes through the maintained factor.
    nK : int
        Candidate pairs of the ratio test (tie rows of a zero step).
    pdw : int
        Non-zeros of the step.

    Returns
    -------
    work : float
        GFLOP counted.
    """
    if maint:
        eqp = 2.0 * m * (m + p) + 2.0 * p * m * m / _k._REFACTOR
    else:
        eqp = 2.0 * p * m * m + 2.0 * m * (m + p)
    return 1e-9 * (eqp + 3.0 * float(nK) * pdw)


class _Factor:
    """Storage of the maintained Gram factor (:func:`._active_set_kernels._eqp_maint`), kept
    across the steps of one call; ``fst[0] = 0`` (no factor) makes the next use build it afresh."""

    def __init__(self, X, hc, mc):
        d = X.shape[1]
        self.cap = 0
        self.U = self.B = self.fkey = self.perm = self.fsc = None
        self.fst = np.zeros(4, np.int64)
        self.Pb = np.empty(d, np.int64)
        self.posP = np.full(d, -1, np.int64)
        self.hpos = np.zeros(hc.shape, np.int64)
        self.mpos = np.zeros(mc.shape, np.int64)

    def reserve(self, m, d):
        if m > self.cap:
            self.cap = 2 * m
            self.U = np.empty((self.cap, self.cap))
            self.B = np.empty((self.cap, d))
            self.fkey = np.empty((self.cap, 4), np.int64)
            self.perm = np.empty(self.cap, np.int64)
            self.fsc = np.ones(self.cap)
            self.fst[0] = 0


def run_steps(X, w, Z, w_bar, hc, hs, mc, ms, kappa, lam, theta, Dh, Dm, dinfo, it, max_iter,
              refresh_every, use_ws, resume, hist, last, gemm_min_p, maint_min_p=None, work=None):
    """Steps of Algorithm 1 at fixed ``theta``; returns ``(status, it, n_steps)``.

    ``dinfo = [cache valid, updates since recompute]`` of ``Dh`` / ``Dm``; ``hist``
    receives the objective after every step (``n_steps`` entries; ``last`` is the
    objective before the first). ``max_iter < 0`` is
    no limit. With ``use_ws`` the loop returns ``REFRESH`` before every
    ``refresh_every``-th step (``resume=True`` continues with that step). With at least
    ``maint_min_p`` positive features (and 16 constraint rows) the EQP goes through the
    maintained Gram factor (:func:`._active_set_kernels._eqp_maint`), refactorised every
    ``_REFACTOR`` steps; ``gemm_min_p``: see :func:`._active_set_kernels._use_pair_matrix`.
    ``None`` for either: never (the kernels are then compiled without that path).
    ``work = [counted, budget]`` (GFLOP, see :func:`step_work`): every step
    adds its count, and the loop returns ``MAX_WORK`` before a step once ``counted >= budget >= 0``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Samples.
    w : ndarray of shape (d,)
        The weights, updated in place.
    Z : ndarray of bool, shape (d,)
        The zero set, updated in place.
    w_bar : ndarray of shape (d,)
        Prior weights.
    hc, hs : ndarray of shape (n, K_h)
        Hit candidates and their states (updated in place).
    mc, ms : ndarray of shape (n, K_m)
        Miss candidates and their states (updated in place).
    kappa : int
        Rank of the target hit.
    lam : int
        Rank of the target miss.
    theta : float
        The regularisation parameter.
    Dh, Dm : ndarray of shape (n, K_h) and (n, K_m)
        Cached candidate distances.
    dinfo : ndarray of int, shape (2,)
        The cache's state (above).
    it : int
        Steps taken so far.
    max_iter : int
        Step limit (negative: none).
    refresh_every : int
        Steps between working-set refreshes.
    use_ws : bool
        A working set is in use.
    resume : bool
        Continue with the step a refresh interrupted.
    hist : ndarray
        Receives the objective after every step.
    last : float
        The objective before the first step.
    gemm_min_p : int or None
        Positive features from which the ratio test uses the all-pairs product.
    maint_min_p : int or None, default=None
        Positive features from which the EQP uses the maintained factor.
    work : ndarray of shape (2,) or None, default=None
        ``[counted, budget]``; ``None``: no budget.

    Returns
    -------
    status : int
        Why the loop returned (local minimum, refresh, limits).
    it : int
        Steps taken so far.
    n_steps : int
        Steps taken in this call (entries of ``hist``).
    """
    n, d = X.shape
    if work is None:
        work = np.array([0.0, -1.0])
    K = hc.shape[1] + mc.shape[1]
    ton = theta / n
    hrep = np.empty(n, np.int64)
    mrep = np.empty(n, np.int64)
    c = np.empty(d)
    g2 = np.empty((1, d))  # g, dw, mu: the first rows of the EQP's one-right-hand-side arrays
    dw2 = np.empty((1, d))
    g = g2[0]
    dw = dw2[0]
    Rh = np.empty(hc.shape)
    Rm = np.empty(mc.shape)
    nzP = np.empty(d, np.int64)
    Pcols = np.empty(d, np.int64)
    hsamp = np.empty(n, np.int64)
    msamp = np.empty(n, np.int64)
    c_age = _k._STALE_C
    nh = 0
    factor = _Factor(X, hc, mc) if maint_min_p is not None else None
    start, feature_block, both_ratios, apply_move, zero_step = (
        _k._step_start, _k._feature_block, _k._both_ratios, _k._apply_move, _k._zero_step)
    fill, tie, stale = _k._fill_ties_at, _k._TIE, _k._STALE
    counted, budget = float(work[0]), float(work[1])  # work[0] is written back on return
    while True:
        if not resume:
            status = None
            if max_iter >= 0 and it >= max_iter:
                status = MAX_ITER
            elif budget >= 0.0 and counted >= budget:
                status = MAX_WORK
            elif nh >= hist.size:
                status = BUFFER_FULL
            else:
                it += 1
                if use_ws and it % refresh_every == 0:
                    status = REFRESH
            if status is not None:
                work[0] = counted
                return status, it, nh
        resume = False
        c_age, gmax, mth, mt, p = start(X, hc, hs, mc, ms, hrep, mrep, hsamp, msamp, c, c_age, ton, w, w_bar, g, Z,
                                        Pcols)
        ii = np.empty(mt, np.int64)
        tt = np.empty(mt, np.int64)
        mu2 = np.empty((1, mt + 1))
        mu = mu2[0]
        done = False
        if maint_min_p is not None and p >= maint_min_p and mt + 1 >= 16 and mt + 1 <= p:
            counted += step_work(p, mt + 1, True, 0, 0)
            f = factor
            f.reserve(mt + 1, d)
            done = _k._maint_eqp(X, g, Z, Pcols, p, hc, hs, hrep, f.hpos, mc, ms, mrep, f.mpos, f.U, f.fkey, f.fst,
                                 f.perm, f.fsc, f.B, f.Pb, f.posP, ii, tt, mth, mt, dw, mu)
        else:
            counted += step_work(p, mt + 1, False, 0, 0)
            if factor is not None:
                factor.fst[0] = 0
        if not done:
            AT = np.empty((p, mt + 1))
            fill(X, hc, hs, hrep, Pcols, p, AT, ii, tt, 0)
            fill(X, mc, ms, mrep, Pcols, p, AT, ii, tt, mth)
            solve_eqp(g2, Pcols, p, AT, dw2, mu2)
        moves, best, kind, wj, pdw = feature_block(w, Z, dw, gmax, nzP)
        if moves:  # Lemma 5: the longest TN-consistent feasible step
            wi = wk = -1
            if dinfo[0] == 0 or dinfo[1] >= stale:
                _k._both_distances(X, hc, mc, w, Dh, Dm, gemm_min_p)
                dinfo[0], dinfo[1] = 1, 0
            t, i0, k0, t2, i2, k2 = both_ratios(X, hc, hs, hrep, Dh, Rh, mc, ms, mrep, Dm, Rm, dw, nzP, pdw, gemm_min_p)
            if gemm_min_p is not None and pdw >= gemm_min_p and 2 * K >= n:  # _use_pair_matrix
                counted += step_work(0, 0, False, (2 * n * n) // (3 * _BLAS_SPEEDUP), pdw)
            else:
                counted += step_work(0, 0, False, n * K, pdw)
            if t < best - tie * best:
                best, kind, wi, wk = t, 2, i0, k0
            if t2 < best - tie * best:
                best, kind, wi, wk = t2, 3, i2, k2
            last = apply_move(X, w, Z, w_bar, dw, best, kind, wj, wi, wk, hc, hs, hrep, Dh, Rh, mc, ms, mrep, Dm, Rm,
                              dinfo, theta, gemm_min_p)
            hist[nh] = last
            nh += 1
            continue
        kind, j, i, k, target, cols = zero_step(X, g, Z, hc, hs, hrep, mc, ms, mrep, ii, tt, mth, mt, mu, kappa, lam,
                                                ton, gmax, maint_min_p)
        if cols:
            counted += step_work(0, 0, False, mt, cols)
        if kind == 0:
            work[0] = counted
            return CONVERGED, it, nh
        if kind == 1:
            Z[j] = False
        elif kind == 2:
            hs[i, k] = target
        else:
            ms[i, k] = target
        hist[nh] = last
        nh += 1
