"""The MDM linear programs (Hocke & Martinetz 2014, eqs. 6-14), full and with lazy constraints.

Pure functions returning an :class:`scipy.optimize.OptimizeResult`; the estimator
:class:`knnweights.MDM` is a thin wrapper around :func:`solve_mdm`.

Variables ``v = (w, r, xi)`` (``xi`` only in the soft form), all ``>= 0``.  With
``eps_ij = (x_i - x_j) ** 2`` (element-wise) the constraints are

* separation (eqs. 6 / 12), one per unordered pair of different labels:
  ``-eps_ij . w <= -1``;
* compactness (eq. 7), one per unordered pair of equal labels (hard form):
  ``eps_ij . w - r <= 0``;
* compactness (eq. 13), one per *ordered* pair ``(i, j)`` of equal labels (soft form:
  eq. 13 holds "for all i, j", so both ``xi_i`` and ``xi_j`` bound the pair):
  ``eps_ij . w - r - xi_i <= 0``.

The objective is ``r`` (eq. 8) or ``r + C sum_i xi_i`` (eq. 14).  Constraint rows are
stored as a ``scipy.sparse`` CSR matrix built block by block; the lazy solver keeps only
a working set of pairs and adds the most violated pairs found by a blocked scan of all
weighted distances until none is violated, so its optimum is that of the full LP.
"""

import time
import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

from ..engine.linalg import blas_thread_count, blas_threads_for_work, single_thread_blas
from ..engine.neighbors import distance_chunks

__all__ = ["solve_mdm", "mdm_constraint_matrix", "all_pairs", "duplicate_conflicts", "SEPARATION", "COMPACTNESS"]

SEPARATION = 0
COMPACTNESS = 1

#: HiGHS' own row/column scaling (``simplex_scale_strategy`` 2) doubles the simplex iterations on
#: MDM's dense rows (measured on lognormal 80 x 1000: 2747 vs 1193 iterations on one relaxation);
#: the features are standardised by the caller, so the LP is solved unscaled.  Devex pricing
#: (``simplex_dual_edge_weight_strategy`` 1) needs 2.5-6x the iterations of the default steepest edge.
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9, "presolve": True,
                  "simplex_scale_strategy": 0}
_PAIR_BLOCK = 1 << 16  # pairs per block when forming eps rows (bounds the temporary memory)


def duplicate_conflicts(X, codes):
    """Pairs ``(i, j)`` of identical rows with different labels (they make MDM infeasible).

    Returns an ``(m, 2)`` integer array, sorted; empty when there is none.
    """
    _, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    order = np.lexsort((codes, inv))
    same_row = inv[order[1:]] == inv[order[:-1]]
    other_label = codes[order[1:]] != codes[order[:-1]]
    k = np.flatnonzero(same_row & other_label)
    pairs = np.sort(np.column_stack([order[k], order[k + 1]]), axis=1)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def all_pairs(codes, soft):
    """Every constraint of the full LP: ``(I, J, kind)`` arrays (rows i, columns j).

    Separation pairs and hard compactness pairs are unordered (``i < j``); soft
    compactness pairs are ordered (``i != j``), the slack being ``xi_i``.
    """
    n = codes.shape[0]
    I, J = np.triu_indices(n, 1)
    same = codes[I] == codes[J]
    sep = (I[~same], J[~same])
    if soft:
        comp = (np.concatenate([I[same], J[same]]), np.concatenate([J[same], I[same]]))
    else:
        comp = (I[same], J[same])
    kind = np.concatenate([np.full(sep[0].size, SEPARATION, np.int8), np.full(comp[0].size, COMPACTNESS, np.int8)])
    return np.concatenate([sep[0], comp[0]]), np.concatenate([sep[1], comp[1]]), kind


def _eps_rows(X, I, J):
    """``eps = (X[I] - X[J]) ** 2`` for a list of pairs, formed block by block."""
    out = np.empty((I.size, X.shape[1]), dtype=np.float64)
    for s in range(0, I.size, _PAIR_BLOCK):
        e = min(s + _PAIR_BLOCK, I.size)
        np.subtract(X[I[s:e]], X[J[s:e]], out=out[s:e])
        np.square(out[s:e], out=out[s:e])
    return out


def mdm_constraint_matrix(X, I, J, kind, soft):
    """The rows ``A`` (CSR) and right-hand side ``b`` of ``A v <= b`` for the given pairs.

    Columns: ``w`` (``d``), ``r`` (1), then ``xi`` (``n``, soft only).  Separation rows
    are ``(-eps, 0, 0) <= -1`` (eqs. 6, 10, 11), compactness rows ``(eps, -1, -e_i) <= 0``
    (eqs. 7 / 13).  Zeros of ``eps`` (features equal in both samples) are not stored.
    """
    n, d = X.shape
    m = I.size
    n_cols = d + 1 + (n if soft else 0)
    comp = kind == COMPACTNESS
    extra = 1 + (1 if soft else 0)  # r (and xi_i) in compactness rows
    eps = _eps_rows(X, I, J)
    eps[~comp] *= -1.0
    nz = eps != 0.0
    row_nnz = nz.sum(axis=1) + comp * extra
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=indptr[1:])
    # lay out each row as [its nonzero eps columns, r, xi_i]: one (m, d + extra) table, masked
    cols = np.empty((m, d + extra), dtype=np.int32)
    cols[:, :d] = np.arange(d, dtype=np.int32)
    cols[:, d] = d
    vals = np.empty((m, d + extra), dtype=np.float64)
    vals[:, :d] = eps
    vals[:, d] = -1.0
    keep = np.zeros((m, d + extra), dtype=bool)
    keep[:, :d] = nz
    keep[:, d] = comp
    if soft:
        cols[:, d + 1] = d + 1 + I
        vals[:, d + 1] = -1.0
        keep[:, d + 1] = comp
    del eps, nz
    A = sp.csr_array((vals[keep], cols[keep], indptr), shape=(m, n_cols))
    b = np.where(comp, 0.0, -1.0)
    return A, b


def _highs_class():
    """The HiGHS solver class (``highspy.Highs``).

    Keeping one solver object alive between the rounds of constraint generation lets
    HiGHS restart the dual (new rows) or primal (new columns) simplex from the last
    optimal basis instead of solving every relaxation from scratch.
    """
    import highspy

    return highspy.Highs


class _Relaxation:
    """One growing LP ``min c.v  s.t.  A v <= b, v >= 0`` kept alive in HiGHS between rounds.

    Columns ``0 .. n_tail - 1`` are ``(r, xi)``; feature columns are appended in the
    order they are added.  Rows are appended too; nothing is ever removed, so the last
    optimal basis stays valid and each solve is warm-started from it.
    """

    def __init__(self, tail_cost, verbose=0):
        self.n_tail = tail_cost.size
        self.n_cols = self.n_tail
        self.n_rows = 0
        self._h = h = _highs_class()()
        h.setOptionValue("output_flag", bool(verbose >= 2))
        for key, value in _HIGHS_OPTIONS.items():
            h.setOptionValue(key, value)
        k = self.n_tail
        h.addCols(k, tail_cost, np.zeros(k), np.full(k, np.inf), 0, np.zeros(k, np.int32), np.empty(0, np.int32),
                  np.empty(0))

    def add_rows(self, A, b):
        """Append the rows of ``A`` (CSR over the current columns) with upper bounds ``b``."""
        A = sp.csr_array(A)
        self._h.addRows(A.shape[0], np.full(A.shape[0], -np.inf), np.asarray(b, np.float64), A.nnz,
                        A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(np.float64))
        self.n_rows += A.shape[0]

    def add_cols(self, A):
        """Append zero-cost columns ``>= 0`` given as a CSC matrix over the current rows."""
        A = sp.csc_array(A)
        k = A.shape[1]
        self._h.addCols(k, np.zeros(k), np.zeros(k), np.full(k, np.inf), A.nnz, A.indptr[:-1].astype(np.int32),
                        A.indices.astype(np.int32), A.data.astype(np.float64))
        self.n_cols += k

    def solve(self, time_limit=None):
        """Solve (warm-started); returns ``(status, x, dual, objective, iterations)``.

        ``status`` is ``"optimal"``, ``"time_limit"``, ``"infeasible"`` or HiGHS' own
        words; ``dual`` are the multipliers ``>= 0`` of the rows.
        """
        h = self._h
        # HiGHS compares its time_limit with its run clock, which adds up the time of every run()
        h.setOptionValue("time_limit", np.inf if time_limit is None else h.getRunTime() + max(float(time_limit), 1e-3))
        h.run()
        model_status = h.getModelStatus()
        name = getattr(model_status, "name", str(model_status))
        info = h.getInfo()
        iters = int(info.simplex_iteration_count) + int(info.ipm_iteration_count)
        if name == "kTimeLimit":
            return "time_limit", None, None, np.nan, iters
        if name != "kOptimal":
            status = "infeasible" if name in ("kInfeasible", "kUnboundedOrInfeasible") else h.modelStatusToString(
                model_status)
            return status, None, None, np.nan, iters
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=np.float64)
        dual = np.maximum(-np.asarray(sol.row_dual, dtype=np.float64), 0.0)
        return "optimal", x, dual, float(info.objective_function_value), iters


# -- dense primal-dual interior point, exact vertex recovery ---------------------------------------------------------

#: rounds of the lazy solver before the last one stop the IPM at relative gap / infeasibility ``_IPM_TOL_FIRST``
#: (times ``_IPM_TOL_RATE`` per round, never below ``_IPM_TOL_ROUND``): their weights only serve to find violated
#: pairs and priced-in features (genes 80 x 3000: 7-9 iterations per round instead of 15-33).  Once such a loose
#: point violates nothing, the same LP is solved on to ``_IPM_TOL_ROUND`` (``_IPM_TOL_FINAL`` if needed) and
#: moved to its exact vertex (square solve, KKT-checked), and every pair and feature is checked again.
#: 1e-2 rather than 1e-3 (one BLAS thread, same optimum everywhere): floating-point work of the normal matrices
#: genes 80 x 3000 353 -> 326 GFLOP, breast_vantveer 337 -> 280, genes 80 x 1000 58 -> 55, colon_alon 10.0 -> 9.7
_IPM_TOL_FIRST = 1e-2
_IPM_TOL_RATE = 1.0
_IPM_TOL_ROUND = 1e-8
_IPM_TOL_FINAL = 1e-10
#: Gondzio's multiple centrality correctors per iteration (cold solve of the genes 80 x 3000 final LP, 2152 x 2220:
#: 18 iterations with none, 14 with 2; each costs two triangular solves next to one factorisation)
_IPM_CORRECTORS = 2
_WIDE = 2.5  # see _starting_point
#: a row whose multiplier-to-slack ratio ``lam / s`` was below ``_PRUNE_RATIO`` at the last ``_PRUNE_AGE``
#: relaxations (inactive there) leaves the LP; the scan of every pair brings it back if it is violated later,
#: and then it stays (each pair is pruned at most once, so the rounds still end).  Arcene (200 x 10 000): about
#: 340 of 3 800 rows are active.  0 disables.
_PRUNE_AGE = 2
_PRUNE_RATIO = 1e-3
#: warm start only when the LP grew by at most this fraction: after larger changes Mehrotra's cold start needs
#: fewer iterations (genes 80 x 3000, rounds to gap 1e-3: 7-9 cold vs 15-19 warm)
_IPM_WARM_GROWTH = 0.05
_IPM_WARM_GAP = 1e-1  # the warm start: the first iterate of the last solve below max(this, tol * _IPM_WARM_FACTOR)
_IPM_WARM_FACTOR = 1.0
_VERTEX_WINDOW = 3  # the final vertex also tries the square partitions of the k most clearly basic, k +- 3


#: a normal matrix's ``dsyrk`` of at least this many multiply-adds (``m^2 k``, ~20 ms on one core here) runs on
#: the caller's BLAS threads; smaller ones, the Cholesky factorisations and the solves stay on one thread
_SYRK_THREADED = 1e9


def _syrk(F, trans, threads=1):
    """``F F^T`` (``trans=False``) or ``F^T F`` (upper triangle only) with one BLAS ``dsyrk``, no copy of ``F``.

    A product of at least ``_SYRK_THREADED`` multiply-adds runs on ``threads`` BLAS threads.  OpenBLAS' threaded
    ``dsyrk`` splits the output, not the sums, so each entry is the same sum in the same order and the result is
    bit-identical to one thread's (``tests/test_lp_ipm.py`` checks it); the Cholesky factorisation, whose
    threaded blocking changes its rounding, stays on one thread.  On genes 80 x 3000 (1424 x 2133 normal matrices,
    59 products) two threads take the products from 5.4 to ~3 s on an idle 2-core machine.
    """
    from scipy.linalg.blas import dsyrk

    # F is C-ordered: F.T is its Fortran-ordered view, which dsyrk reads in place
    out, inner = (F.shape[1], F.shape[0]) if trans else F.shape
    with blas_threads_for_work(float(out) * out * inner, _SYRK_THREADED, threads):
        return dsyrk(1.0, F.T, trans=0 if trans else 1, lower=0)


def _cholesky(M):
    """Upper Cholesky factor of the normal matrix, regularised when it is numerically singular (late IPM steps)."""
    diag = np.diagonal(M).copy()
    delta = 0.0
    scale = float(diag.max()) if diag.size else 1.0
    for _ in range(8):
        try:
            return sla.cho_factor(M, lower=False, check_finite=False, overwrite_a=False)
        except (np.linalg.LinAlgError, sla.LinAlgError):
            delta = max(delta * 100.0, 1e-13 * scale)
            M[np.diag_indices_from(M)] = diag + delta
    raise np.linalg.LinAlgError("the interior-point normal matrix is singular")


class _Normal:
    """The factored normal matrix of one interior-point iteration, ``A D A^T + E`` (row space) or
    ``A^T E^-1 A + D^-1`` (column space): one ``dsyrk`` and a Cholesky factorisation, then solves with it.

    (Forming and factoring it in single precision, with refinement in double, made the iterations stall on the
    genes 80 x 3000 LP: 200 iterations without convergence against 14 in double precision.)
    """

    def __init__(self, A, D, E, rowspace, threads=1):
        if rowspace:
            M = _syrk(A * np.sqrt(D), trans=False, threads=threads)
            M[np.diag_indices(A.shape[0])] += E
        else:
            M = _syrk(A / np.sqrt(E)[:, None], trans=True, threads=threads)
            M[np.diag_indices(A.shape[1])] += 1.0 / D
        self.L = _cholesky(M)

    def solve(self, rhs):
        return sla.cho_solve(self.L, rhs, check_finite=False)


def _starting_point(A, b, c, rowspace, threads=1):
    """Mehrotra's starting point (Wright 1997, ch. 10) for ``A x + s = b``, ``x, s >= 0``.

    The least-norm ``(x, s)`` of ``A x + s = b`` and the least-squares multipliers of ``A^T lam - z = -c``,
    ``lam - t = 0`` (one factorisation of ``A A^T + I``), shifted to be positive and then balanced so that the
    products ``x z``, ``s lam`` are comparable.
    """
    m, nc = A.shape
    L = _Normal(A, np.ones(nc), np.ones(m), rowspace, threads)
    # least-norm primal: min |x|^2 + |s|^2 s.t. A x + s = b  ->  x = A^T y, s = y, (A A^T + I) y = b
    if rowspace:
        y = L.solve(b)
        x, s = A.T @ y, y
        yd = L.solve(-(A @ c))
    else:  # (A^T A + I)^-1 through the push-through identity: (A A^T + I)^-1 b = b - A (A^T A + I)^-1 A^T b
        y = b - A @ L.solve(A.T @ b)
        x, s = A.T @ y, y
        Ac = A @ c
        yd = -(Ac - A @ L.solve(A.T @ Ac))
    # least-squares dual: min |z|^2 + |t|^2 with z = c + A^T lam, t = lam  ->  (A A^T + I) lam = -A c
    lam = yd
    z = c + A.T @ lam
    # on a wide LP (many more columns than rows; MDM's rows are dense and positive) a unit shift of every x_j moves
    # each row by its row sum k: shift x by 1 / k of the slacks' shift (colon_alon, 347 x 2001: 22 iterations to
    # gap 1e-3 instead of 29; on near-square LPs the plain shift is better: genes 733 x 1195, 9 vs 14)
    k = max(1.0, float(np.abs(A).sum(axis=1).mean())) if nc > _WIDE * m else 1.0
    dp = max(-1.5 * min(x.min() * k, s.min()), 0.0)
    dd = max(-1.5 * min(z.min(), lam.min()), 0.0)
    x, s, z, lam = x + dp / k, s + dp, z + dd, lam + dd
    xz = x @ z + s @ lam
    dp2 = 0.5 * xz / max(z.sum() / k + lam.sum(), np.finfo(float).tiny)
    dd2 = 0.5 * xz / max(x.sum() + s.sum(), np.finfo(float).tiny)
    x, s, z, lam = x + dp2 / k, s + dp2, z + dd2, lam + dd2
    floor = 1e-8 * max(1.0, float(np.abs(b).max()), float(np.abs(c).max()))
    x = np.maximum(x, floor / k)
    return x, np.maximum(s, floor), np.maximum(lam, floor), np.maximum(z, floor)


class _IPMState:
    """Iterate ``(x, s, lam, z)`` of :func:`dense_ipm` (primal ``x``, row slacks ``s``, row multipliers ``lam``,
    column reduced costs ``z``)."""

    def __init__(self, x, s, lam, z):
        self.x, self.s, self.lam, self.z = x, s, lam, z


def _newton(A, L, rowspace, x, s, lam, z, rp, rd, D, E, rxz, rsl):
    """One Newton direction ``(dx, ds, dlam, dz)`` of :func:`dense_ipm` from the factored normal matrix ``L``.

    The two linear equations (``A dx + ds = -rp``, ``A^T dlam - dz = -rd``) are kept exact; the rounding error of
    the normal equations goes to the complementarity, which the next iterations correct.
    """
    if rowspace:
        dlam = L.solve(rp + A @ (D * (-rd - rxz / x)) - rsl / lam)
        dz = A.T @ dlam + rd
        dx = -(rxz + x * dz) / z
        ds = -rp - A @ dx
    else:
        dx = L.solve(-rd - rxz / x - A.T @ ((rp - rsl / lam) / E))
        ds = -rp - A @ dx
        dlam = -(rsl + lam * ds) / s
        dz = A.T @ dlam + rd
    return dx, ds, dlam, dz


def _step(v, dv):
    """Largest step in ``[0, 1]`` keeping ``v + step dv >= 0``."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0


class _Clock:
    """Predicts the seconds of one interior-point iteration (one ``dsyrk`` + Cholesky of the normal matrix) from
    its flop count and the rate measured on the iterations so far, so that a solve stops *before* an iteration
    that would end past the deadline (one iteration of a 11 500 x 4 096 LP takes seconds)."""

    def __init__(self, rate=5e9):
        self.rate = rate  # flop/s, updated from every timed iteration

    @staticmethod
    def flops(m, nc):
        k, big = min(m, nc), max(m, nc)
        return k * k * big + k ** 3 / 3.0 + 10.0 * m * nc

    def predict(self, m, nc):
        return self.flops(m, nc) / self.rate

    def update(self, m, nc, seconds):
        if seconds > 0:
            self.rate = self.flops(m, nc) / seconds


class _Work:
    """The floating-point work of a solve, counted by the interior point's own cost model, against a budget.

    One interior-point iteration (or starting point) of an ``m x nc`` LP counts :meth:`_Clock.flops` (the normal
    matrix's ``dsyrk``, its Cholesky factorisation and ``10 m nc`` for the products with ``A``), one try of the
    exact vertex ``2 k^3 / 3 + 4 m nc`` (an LU of the ``k x k`` basis and the KKT checks), one scan of all pairs or
    pricing of all features ``2 n^2 d``.  The count depends on the LP's shapes only, never on the clock, so a
    budget (``budget`` flops, ``None``: none) stops a solve at the same iterate on any machine and under any load.
    Work that would pass the budget is refused before it starts (:meth:`allows`) and :attr:`exhausted` is set.
    """

    def __init__(self, budget=None):
        self.budget = budget
        self.done = 0.0
        self.exhausted = False

    def allows(self, flops):
        """Whether ``flops`` more stay within the budget (sets :attr:`exhausted` when not)."""
        if self.budget is not None and self.done + flops > self.budget:
            self.exhausted = True
        return not self.exhausted

    def add(self, flops):
        self.done += float(flops)


def _over(deadline, need=0.0):
    """Whether ``need`` more seconds from now would end past ``deadline`` (never, without one)."""
    return deadline is not None and time.perf_counter() + need > deadline


def dense_ipm(A, b, c, tol=_IPM_TOL_FINAL, max_iter=200, state=None, deadline=None, save_gap=None,
              correctors=_IPM_CORRECTORS, clock=None, log=None, work=None, blas_threads=1):
    """Mehrotra predictor-corrector interior point for ``min c.x  s.t.  A x <= b, x >= 0`` with a dense ``A``.

    Each iteration forms the normal matrix in the smaller space (``A D A^T + S / Lambda``, ``m x m``, or
    ``A^T (Lambda / S) A + Z / X``, ``n x n``) with one ``dsyrk`` and factors it by Cholesky
    (Wright, *Primal-dual interior-point methods*, SIAM 1997, ch. 10-11).  A cold start is Mehrotra's starting
    point (:func:`_starting_point`); each iteration adds up to ``correctors`` of Gondzio's multiple centrality
    correctors (Gondzio, *Comput. Optim. Appl.* 6, 1996) to the predictor-corrector direction, kept only while
    they lengthen the steps.  Stops when the relative primal and
    dual infeasibilities and the relative duality gap are all below ``tol``; ``state`` continues from a previous
    iterate of the same LP (e.g. to tighten ``tol``).

    With ``save_gap``, the first iterate whose relative gap and infeasibilities are below it is kept as
    ``state.saved`` (a well-centred point from which a slightly changed LP is restarted: a warm start).

    ``deadline`` (a ``time.perf_counter()`` value): the solve stops before an iteration that ``clock`` (a
    :class:`_Clock`) predicts to end past it, so it overruns the deadline by at most the prediction's error; the
    iterate reached is returned.  ``work`` (a :class:`_Work`): each iteration's flops are counted there, and the
    solve stops (status ``"work_limit"``) before an iteration that would pass its budget.
    ``log``: called as ``log(iteration, error, objective, seconds)`` per iteration.  ``blas_threads``: BLAS
    threads of the large normal-matrix products (:func:`_syrk`; the same bits on any count).

    Returns ``(state, status, iterations)`` with status ``"optimal"``, ``"time_limit"``, ``"work_limit"`` or
    ``"max_iter"``.
    """
    m, nc = A.shape
    rowspace = m <= nc
    bn = 1.0 + np.linalg.norm(b)
    cn = 1.0 + np.linalg.norm(c)
    clock = _Clock() if clock is None else clock
    work = _Work() if work is None else work
    flops = clock.flops(m, nc)
    if state is None:
        if not work.allows(flops):
            return _IPMState(None, None, None, None), "work_limit", 0
        if _over(deadline, clock.predict(m, nc)):
            return _IPMState(None, None, None, None), "time_limit", 0
        t0 = time.perf_counter()
        x, s, lam, z = _starting_point(A, b, c, rowspace, blas_threads)
        work.add(flops)
        clock.update(m, nc, time.perf_counter() - t0)
    else:
        x, s, lam, z = state.x, state.s, state.lam, state.z
    status = "max_iter"
    it = 0
    saved = None
    for it in range(max_iter + 1):
        rp = A @ x + s - b
        rd = c + A.T @ lam - z
        pobj, dobj = float(c @ x), float(-b @ lam)
        err = max(np.linalg.norm(rp) / bn, np.linalg.norm(rd) / cn, abs(pobj - dobj) / (1.0 + abs(pobj)))
        if save_gap is not None and saved is None and err < save_gap:
            saved = _IPMState(x.copy(), s.copy(), lam.copy(), z.copy())
        if err < tol:
            status = "optimal"
            break
        if it == max_iter:
            break
        if not work.allows(flops):
            status = "work_limit"
            break
        if _over(deadline, clock.predict(m, nc)):
            status = "time_limit"
            break
        work.add(flops)
        t_it = time.perf_counter()
        mu = (x @ z + s @ lam) / (nc + m)
        D = x / z
        E = s / lam
        L = _Normal(A, D, E, rowspace, blas_threads)

        cur = (A, L, rowspace, x, s, lam, z, rp, rd, D, E)
        dx, ds, dl, dz = _newton(*cur, x * z, s * lam)
        ap = min(_step(x, dx), _step(s, ds))
        ad = min(_step(z, dz), _step(lam, dl))
        mu_aff = ((x + ap * dx) @ (z + ad * dz) + (s + ap * ds) @ (lam + ad * dl)) / (nc + m)
        sigma = (mu_aff / mu) ** 3
        dx, ds, dl, dz = _newton(*cur, x * z + dx * dz - sigma * mu, s * lam + ds * dl - sigma * mu)
        ap = min(_step(x, dx), _step(s, ds))
        ad = min(_step(z, dz), _step(lam, dl))
        # Gondzio's multiple centrality correctors: cheap (one more pair of triangular solves each) next to the
        # factorisation, they lengthen the steps of a badly centred iterate
        for _ in range(correctors):
            if min(ap, ad) >= 1.0:
                break
            tp = min(1.0, 1.5 * ap + 0.1)
            td = min(1.0, 1.5 * ad + 0.1)
            vx = (x + tp * dx) * (z + td * dz)
            vs = (s + tp * ds) * (lam + td * dl)
            target = sigma * mu
            cx = np.clip(vx, 0.1 * target, 10.0 * target) - vx
            cs = np.clip(vs, 0.1 * target, 10.0 * target) - vs
            cx = np.maximum(cx, -10.0 * target)
            cs = np.maximum(cs, -10.0 * target)
            ex, es, el, ez = _newton(A, L, rowspace, x, s, lam, z, np.zeros(m), np.zeros(nc), D, E, -cx, -cs)
            nx, ns, nl, nz = dx + ex, ds + es, dl + el, dz + ez
            ap2 = min(_step(x, nx), _step(s, ns))
            ad2 = min(_step(z, nz), _step(lam, nl))
            if ap2 + ad2 < 1.01 * (ap + ad) + 0.02:
                break
            dx, ds, dl, dz, ap, ad = nx, ns, nl, nz, ap2, ad2
        ap *= 0.995
        ad *= 0.995
        x = x + ap * dx
        s = s + ap * ds
        lam = lam + ad * dl
        z = z + ad * dz
        clock.update(m, nc, time.perf_counter() - t_it)
        if log is not None:
            log(it + 1, err, pobj, time.perf_counter() - t_it)
    out = _IPMState(x, s, lam, z)
    out.saved = saved
    return out, status, it


def _vertex(A, b, c, st, ftol=1e-9, window=0, deadline=None, work=None):
    """The optimal vertex next to a nearly optimal interior-point iterate ``st``, or ``None``.

    Columns with ``x_j > z_j`` are basic (``B``), rows with ``lam_i > s_i`` active (``act``).  When there are
    as many, the square system ``A[act, B] x_B = b[act]`` gives the vertex and ``A[act, B]^T lam = -c_B`` its
    multipliers.  With more active rows than basic columns (a degenerate vertex: several multiplier vectors)
    ``x_B`` solves the consistent overdetermined system and the interior multipliers are projected onto
    ``A[act, B]^T lam = -c_B``.  The point is returned only if it is primal feasible, ``lam >= 0`` and every
    reduced cost ``c + A^T lam >= 0`` (up to ``ftol`` relative), i.e. it is optimal.  Returns ``(x, lam)``.
    No further partition is tried once a factorisation would end past ``deadline``, nor one whose flops would
    pass the budget of ``work`` (a :class:`_Work`, which counts each try).
    """
    col_ratio = st.x / st.z
    row_ratio = st.lam / st.s
    B = np.flatnonzero(col_ratio > 1.0)
    act = np.flatnonzero(row_ratio > 1.0)
    tries = [(B, act)]
    # a variable near its bound (x_j and z_j both ~ sqrt(mu)) can fall on the wrong side of the ratio 1:
    # also try the square partitions made of the k most clearly basic columns and active rows, k near the counts
    # (genes 80 x 3000 at gap 1e-8: 1 198 columns and rows by the ratio 1, the vertex has 1 199)
    col_order = np.argsort(-col_ratio, kind="stable")
    row_order = np.argsort(-row_ratio, kind="stable")
    if B.size < act.size:
        tries.append((np.sort(col_order[:act.size]), act))
    elif B.size > act.size:
        tries.append((B, np.sort(row_order[:B.size])))
    k0 = max(B.size, act.size)
    for k in sorted({k0 + dk for dk in range(-window, window + 1)} - {k0}, key=lambda k: (abs(k - k0), -k)):
        if 0 < k <= min(A.shape):
            tries.append((np.sort(col_order[:k]), np.sort(row_order[:k])))
    for B, act in tries:
        k = max(B.size, act.size)
        cost = 2.0 * k ** 3 / 3.0 + 4.0 * A.shape[0] * A.shape[1]
        if work is not None:
            if not work.allows(cost):
                return None
            work.add(cost)
        t0 = time.perf_counter()
        out = _vertex_from(A, b, c, st, B, act, ftol)
        if out is not None:
            return out
        if _over(deadline, time.perf_counter() - t0):
            return None
    return None


def _vertex_from(A, b, c, st, B, act, ftol):
    """:func:`_vertex` for one partition: basic columns ``B``, active rows ``act``."""
    if B.size > act.size or B.size == 0:
        return None
    M = A[np.ix_(act, B)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)  # a singular basis guess: not a vertex
            if B.size == act.size:
                lu = sla.lu_factor(M, check_finite=False)
                xB = sla.lu_solve(lu, b[act], check_finite=False)
                lamA = sla.lu_solve(lu, -c[B], trans=1, check_finite=False)
            else:
                xB = sla.lstsq(M, b[act], check_finite=False, lapack_driver="gelsy")[0]
                lam0 = st.lam[act]
                lamA = lam0 + sla.lstsq(M.T, -c[B] - M.T @ lam0, check_finite=False, lapack_driver="gelsy")[0]
    except (ValueError, np.linalg.LinAlgError, sla.LinAlgWarning):
        return None
    if not (np.all(np.isfinite(xB)) and np.all(np.isfinite(lamA))):
        return None
    amax = float(np.abs(A).max()) if A.size else 1.0
    scale = max(1.0, float(np.abs(xB).max()))
    lscale = max(1.0, float(np.abs(lamA).max()))
    if xB.min() < -ftol * scale or lamA.min() < -ftol * lscale:
        return None
    x = np.zeros(A.shape[1])
    x[B] = np.maximum(xB, 0.0)
    lam = np.zeros(A.shape[0])
    lam[act] = np.maximum(lamA, 0.0)
    if (b - A @ x).min() < -ftol * max(1.0, float(np.abs(b).max()), scale * amax):
        return None
    if (c + A.T @ lam).min() < -ftol * max(1.0, lscale * amax):
        return None
    return x, lam


def _highs_vertex(A, b, c, st, time_limit=None, verbose=0):
    """Crossover fallback: the relaxation solved by HiGHS' simplex, started from the basis the IPM iterate suggests.

    Used when :func:`_vertex` cannot certify the vertex (a degenerate optimum: not as many basic columns as
    active rows).  The guessed basis keeps the ``k = min(#B, #act)`` most clearly basic columns and active rows;
    HiGHS repairs a singular guess and pivots to an optimal basis.  Returns ``(status, x, lam, iterations)``.
    """
    m, nc = A.shape
    relax = _Relaxation(np.asarray(c, dtype=np.float64), verbose)
    relax.add_rows(sp.csr_array(A), b)
    h = relax._h
    # primal simplex: from the guessed basis of a dual-degenerate optimum (more basic columns than active rows)
    # it needs a few pivots, the dual simplex thousands (colon_alon, 304 x 2001: 7 vs 1 530)
    if h is not None:
        h.setOptionValue("simplex_strategy", 4)
    try:
        import highspy

        bs = highspy.HighsBasisStatus
        col_score = st.x / st.z  # > 1: basic
        row_score = st.lam / st.s  # > 1: active
        n_act = int(np.count_nonzero(row_score > 1.0))
        n_basic_cols = min(int(np.count_nonzero(col_score > 1.0)), n_act, m)
        basic_cols = np.argsort(-col_score, kind="stable")[:n_basic_cols]
        act_rows = np.argsort(-row_score, kind="stable")[:n_basic_cols]
        col_status = [bs.kLower] * nc
        for j in basic_cols:
            col_status[j] = bs.kBasic
        row_status = [bs.kBasic] * m
        for i in act_rows:
            row_status[i] = bs.kUpper
        basis = highspy.HighsBasis()
        basis.col_status = col_status
        basis.row_status = row_status
        basis.valid = True
        h.setBasis(basis)
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - SciPy's HiGHS: a cold solve
        pass
    status, x, dual, _, iters = relax.solve(time_limit)
    return status, x, dual, iters


class _DenseRelaxation:
    """The growing LP of :class:`_Relaxation`, held as a dense array and solved by :func:`dense_ipm`.

    MDM's rows are dense (a pair has ``d`` nonzeros ``eps_ij``) and so are its optima (hundreds of nonzero
    weights): HiGHS' sparse LU and simplex pivots are slow there (lognormal 80 x 1000: 5 170 pivots, 186 s for
    the full LP under load).  Each solve here runs the interior point to a relative gap of ``1e-10`` and moves
    to the exact optimal vertex (:func:`_vertex`; HiGHS' simplex from the guessed basis when the optimum is
    degenerate), so the rounds of constraint generation see basic optimal solutions as with the simplex.
    Small dense algebra runs on one BLAS thread (:func:`single_thread_blas`).
    """

    def __init__(self, tail_cost, verbose=0):
        self.n_tail = tail_cost.size
        self._c = np.asarray(tail_cost, dtype=np.float64).copy()
        self._A = np.zeros((0, self.n_tail))
        self._b = np.empty(0)
        self.verbose = verbose
        self.n_rows = 0
        self.n_cols = self.n_tail
        self.crossovers = 0
        self.loose = True
        self.tol = _IPM_TOL_ROUND  # the stopping tolerance while :attr:`loose`
        self.row_ratio = None  # lam / s per row of the last interior iterate
        self.last_exact = False  # whether the last solve returned a certified vertex
        self._state = None  # the last iterate, to continue while the LP is unchanged
        self._warm = None  # a well-centred iterate of the last solve, extended to new rows / columns
        self._warm_base = (0, 0)  # the LP's shape when it was saved
        self.clock = _Clock()  # iteration-time prediction, kept across rounds (see dense_ipm's deadline)
        self.work = _Work()  # flops of every solve, against the caller's budget (see dense_ipm's work)
        self.partial = None  # on a time limit: the last interior iterate's x (not optimal, maybe infeasible)

    def add_rows(self, A, b):
        A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
        self._A = np.vstack([self._A, A])
        self._b = np.concatenate([self._b, np.asarray(b, dtype=np.float64)])
        self.n_rows = self._A.shape[0]
        if self._warm is not None:  # new rows: slack = what is left (at least sqrt(mu)), multiplier mu / slack
            w = self._warm
            mu = (w.x @ w.z + w.s @ w.lam) / (w.x.size + w.s.size)
            s_new = np.maximum(np.asarray(b) - A @ w.x, np.sqrt(mu))
            w.s = np.concatenate([w.s, s_new])
            w.lam = np.concatenate([w.lam, mu / s_new])
        self._state = None

    def add_cols(self, A):
        A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
        self._A = np.hstack([self._A, A])
        self._c = np.concatenate([self._c, np.zeros(A.shape[1])])
        self.n_cols = self._A.shape[1]
        if self._warm is not None:  # new columns: reduced cost (at least sqrt(mu)), value mu / reduced cost
            w = self._warm
            mu = (w.x @ w.z + w.s @ w.lam) / (w.x.size + w.s.size)
            z_new = np.maximum(A.T @ w.lam, np.sqrt(mu))
            w.z = np.concatenate([w.z, z_new])
            w.x = np.concatenate([w.x, mu / z_new])
        self._state = None

    def keep_rows(self, rows):
        """Keep only the rows ``rows`` (sorted indices); the warm start keeps their slacks and multipliers."""
        self._A = self._A[rows]
        self._b = self._b[rows]
        self.n_rows = self._A.shape[0]
        if self._warm is not None:
            self._warm.s, self._warm.lam = self._warm.s[rows], self._warm.lam[rows]
            self._warm_base = self._A.shape
        if self.row_ratio is not None:
            self.row_ratio = self.row_ratio[rows]
        self._state = None

    def solve(self, time_limit=None):
        """Same contract as :meth:`_Relaxation.solve`: ``(status, x, dual, objective, iterations)``.

        While :attr:`loose` is set, the interior point stops at :attr:`tol` (the caller's schedule, from
        ``_IPM_TOL_FIRST``) and, at ``_IPM_TOL_ROUND``, tries :func:`_vertex` (an exact KKT test).  Without a
        certified vertex and with :attr:`loose` set, the nearly optimal (not basic) iterate is
        returned and :attr:`last_exact` is cleared: the caller clears :attr:`loose` and solves again once no
        pair is violated.  Otherwise it solves to ``_IPM_TOL_ROUND``, tries the vertex (with the square
        partitions of the ``k +- _VERTEX_WINDOW`` most clearly basic columns and active rows), goes on to
        ``_IPM_TOL_FINAL`` if needed, and last HiGHS' simplex starts from the basis the iterate suggests.
        """
        A, b, c = self._A, self._b, self._c
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        self.partial = None
        log = None
        if self.verbose >= 2:
            def log(it, err, obj, sec):
                print(f"    IPM {A.shape[0]} x {A.shape[1]}: iteration {it:3d}, error {err:.2e}, objective {obj:.10g}, "
                      f"{sec:.2f} s", flush=True)
        # one BLAS thread for the factorisations, solves and small products: on the shared 2-core machine two
        # threads everywhere made a round 10-15x slower (lognormal 80 x 1000, 723 x 1001 LP: 22 s vs 1.4 s); only
        # the large normal-matrix products (:func:`_syrk`) use the caller's threads, with the same bits
        threads = blas_thread_count()
        with single_thread_blas():
            # warm start from the last solve's gap-0.1 iterate unless the LP more than doubled (lognormal
            # 80 x 1000, n_add=3: 13-15 s warm, 22 s cold, same rounds)
            m0, n0 = self._warm_base
            small = (self._warm is not None and A.shape[0] - m0 <= _IPM_WARM_GROWTH * m0
                     and A.shape[1] - n0 <= _IPM_WARM_GROWTH * n0)
            start = self._state if self._state is not None else (self._warm if small else None)
            tol = self.tol if self.loose else _IPM_TOL_ROUND
            st, status, iters = dense_ipm(A, b, c, tol=tol, deadline=deadline, state=start,
                                          save_gap=max(_IPM_WARM_GAP, tol * _IPM_WARM_FACTOR)
                                          if self._state is None else None, clock=self.clock, log=log,
                                          work=self.work, blas_threads=threads)
            self._state = st if status == "optimal" else None
            if getattr(st, "saved", None) is not None:
                self._warm = st.saved
                self._warm_base = A.shape
            if status in ("time_limit", "work_limit"):
                self.partial = None if st.x is None else np.maximum(st.x, 0.0)
                return status, None, None, np.nan, iters
            self.row_ratio = st.lam / st.s
            vert = None
            if status == "optimal" and tol <= _IPM_TOL_ROUND:
                vert = _vertex(A, b, c, st, window=0 if self.loose else _VERTEX_WINDOW, deadline=deadline,
                               work=self.work)
            if vert is None and self.loose and status == "optimal":
                x = np.maximum(st.x, 0.0)
                self.last_exact = False
                return "optimal", x, np.maximum(st.lam, 0.0), float(c @ x), iters
            if vert is None and status == "optimal":
                st, status, more = dense_ipm(A, b, c, tol=_IPM_TOL_FINAL, deadline=deadline, state=st,
                                             clock=self.clock, log=log, work=self.work, blas_threads=threads)
                iters += more
                self._state = st if status == "optimal" else None
                if status in ("time_limit", "work_limit"):
                    self.partial = np.maximum(st.x, 0.0)
                    return status, None, None, np.nan, iters
                self.row_ratio = st.lam / st.s
                vert = (_vertex(A, b, c, st, window=_VERTEX_WINDOW, deadline=deadline, work=self.work)
                        if status == "optimal" else None)
        self.last_exact = True
        if vert is None and (self.work.exhausted or _over(deadline)):
            # the vertex tries ran out of budget / time: no (uncounted, unbounded) HiGHS crossover
            self.partial = np.maximum(st.x, 0.0)
            return "work_limit" if self.work.exhausted else "time_limit", None, None, np.nan, iters
        if vert is None:
            self.crossovers += 1
            left = None if deadline is None else deadline - time.perf_counter()
            status, x, lam, more = _highs_vertex(A, b, c, st, left, self.verbose)
            iters += more
            if status != "optimal":
                return status, None, None, np.nan, iters
        else:
            x, lam = vert
        return "optimal", x, lam, float(c @ x), iters


def _scan(Xs, codes, w, k, miss_limit, hit_base, hit_limit, working_memory=None):
    """Per sample, its ``k`` most violated separation and compactness pairs.

    Scans the weighted distances ``D`` block by block (:func:`distance_chunks`): the
    candidates of row ``i`` are the misses with ``D < miss_limit`` (smallest first) and
    the hits with ``D - hit_base[i] > hit_limit`` (largest first).  Returns
    ``(I, J, kind, violation, min_miss, max_hit)``: the last two are the smallest
    distance between different labels and, per sample, the largest distance to a
    sample of its own label (``-inf`` for a class of one), from which
    :func:`_feasible_point` scales ``w`` to a feasible point of the full LP.
    """
    n = codes.shape[0]
    out_I, out_J, out_k, out_v = [], [], [], []
    min_miss = np.inf
    max_hit = np.full(n, -np.inf)
    for s, e, D in distance_chunks(Xs, None, w, "sqeuclidean", working_memory=working_memory, n_arrays=4):
        rows = np.arange(s, e)
        same = codes[s:e, None] == codes[None, :]
        Dm = np.where(same, np.inf, D)
        H = np.where(same, D, -np.inf)
        H[rows - s, rows] = -np.inf
        min_miss = min(min_miss, float(Dm.min())) if Dm.size else min_miss
        max_hit[s:e] = H.max(axis=1)
        H -= hit_base[s:e, None]
        for M, sign, kind in ((Dm, 1.0, SEPARATION), (H, -1.0, COMPACTNESS)):
            kk = min(k, n)
            viol = (M < miss_limit) if kind == SEPARATION else (M > hit_limit)
            viol &= np.isfinite(M)
            cnt = viol.sum(axis=1)
            # rows with at most kk violated pairs: all of them (late rounds: nearly every row, and no selection);
            # the others: their kk most violated (syn 2000 x 500: argpartition of every row was 1.8 s of a 4.9 s fit)
            few = np.flatnonzero((cnt > 0) & (cnt <= kk))
            r_, c_ = np.nonzero(viol[few])
            out_I.append(rows[few[r_]])
            out_J.append(c_)
            out_k.append(np.full(r_.size, kind, np.int8))
            v = M[few[r_], c_]
            out_v.append((miss_limit - v) if kind == SEPARATION else (v - hit_limit))
            many = np.flatnonzero(cnt > kk)
            if many.size == 0:
                continue
            Mm = M[many]
            if kk == 1:  # the common case (n_add=1): a plain arg-extremum is much cheaper
                idx = (np.argmin(Mm, axis=1) if kind == SEPARATION else np.argmax(Mm, axis=1))[:, None]
            else:
                idx = np.argpartition(sign * Mm, kk - 1, axis=1)[:, :kk]
            val = np.take_along_axis(Mm, idx, axis=1)  # all violated: each of these rows has more than kk
            out_I.append(rows[np.repeat(many, kk)])
            out_J.append(idx.ravel())
            out_k.append(np.full(idx.size, kind, np.int8))
            out_v.append(((miss_limit - val) if kind == SEPARATION else (val - hit_limit)).ravel())
    return (np.concatenate(out_I), np.concatenate(out_J), np.concatenate(out_k), np.concatenate(out_v), min_miss,
            max_hit)


def _feasible_point(w, min_miss, max_hit, soft, C):
    """The cheapest feasible point of the full LP along the ray ``s w`` (``None`` if there is none).

    ``s = 1 / min_miss`` puts the closest pair of different labels at distance 1 (eq. 6);
    then ``r = max_i h_i`` (hard, eq. 7) or, soft (eq. 13), the ``r`` minimising
    ``r + C sum_i max(0, h_i - r)`` (a breakpoint ``h_i`` or 0) with ``xi_i = max(0, h_i - r)``,
    where ``h_i`` is sample ``i``'s largest within-class distance under ``s w``.
    Returns ``(objective, w, r, xi)``.
    """
    if not (np.isfinite(min_miss) and min_miss > 0):
        return None
    scale = 1.0 / min_miss
    h = np.maximum(max_hit * scale, 0.0)
    if soft:
        cand = np.concatenate([[0.0], np.unique(h)])
        cost = cand + C * np.maximum(h[None, :] - cand[:, None], 0.0).sum(axis=1)
        r = float(cand[np.argmin(cost)])
        xi = np.maximum(h - r, 0.0)
        fun = r + C * float(xi.sum())
    else:
        r = float(h.max()) if h.size else 0.0
        xi = np.zeros(h.size)
        fun = r
    return fun, w * scale, r, xi


def _canonical(I, J, kind, soft):
    """Order the pairs of symmetric constraints as ``i < j`` (all but soft compactness)."""
    sym = (kind == SEPARATION) | (not soft)
    lo = np.where(sym, np.minimum(I, J), I)
    hi = np.where(sym, np.maximum(I, J), J)
    return lo, hi


def _keys(I, J, kind, n):
    return (kind.astype(np.int64) * n + I) * n + J


def _raise_for_status(status, what):
    # infeasible / unbounded LPs come from the data (near-duplicates of different labels):
    # a ValueError saying what to change; anything else is a solver failure
    exc = ValueError if status == "infeasible" else RuntimeError
    raise exc(
        f"HiGHS could not solve the MDM linear program ({what}): {status}. "
        "This happens with near-duplicate samples of different labels (tiny distances force huge weights): "
        "remove or merge them, or standardise the features."
    )


def _rows(X, I, J, kind, soft, features, n_tail):
    """Constraint rows of the pairs over the solver's columns ``(r, xi, features in order)``."""
    A, b = mdm_constraint_matrix(X[:, features], I, J, kind, soft)
    k = features.size
    # mdm_constraint_matrix lays columns out as (w, r, xi): move r, xi to the front
    col_map = np.concatenate([n_tail + np.arange(k), np.arange(n_tail)]).astype(A.indices.dtype)
    A = sp.csr_array((A.data, col_map[A.indices], A.indptr), shape=(A.shape[0], n_tail + k))
    A.sort_indices()
    return A, b


def _dense_rows(X, I, J, kind, soft, features, n_tail):
    """:func:`_rows` as one dense array (for :class:`_DenseRelaxation`, which holds the LP dense anyway)."""
    A = np.zeros((I.size, n_tail + features.size))
    XF = X[:, features]
    for s in range(0, I.size, _PAIR_BLOCK):
        e = min(s + _PAIR_BLOCK, I.size)
        blk = A[s:e, n_tail:]
        np.subtract(XF[I[s:e]], XF[J[s:e]], out=blk)
        np.square(blk, out=blk)
    sep = kind == SEPARATION
    A[sep, n_tail:] *= -1.0
    comp = np.flatnonzero(~sep)
    A[comp, 0] = -1.0
    if soft:
        A[comp, 1 + I[comp]] = -1.0
    return A, np.where(sep, -1.0, 0.0)


def _dense_cols(X, I, J, kind, features):
    """:func:`_cols` as one dense array."""
    eps = _eps_rows(X[:, features], I, J)
    eps[kind == SEPARATION] *= -1.0
    return eps


def _cols(X, I, J, kind, features):
    """Columns ``(-eps | eps)`` of new features over the existing rows (CSC), in blocks."""
    out = []
    step = max(1, (1 << 22) // max(I.size, 1))
    sign = np.where(kind == SEPARATION, -1.0, 1.0)[:, None]
    for s in range(0, features.size, step):
        eps = _eps_rows(X[:, features[s:s + step]], I, J)
        eps *= sign
        out.append(sp.csc_array(eps))
    if not out:
        return sp.csc_array((I.size, 0))
    return sp.hstack(out, format="csc")


def _feature_scores(X, codes):
    """Between-class over within-class variance per feature (the first features to price in)."""
    mu = X.mean(axis=0)
    between = np.zeros(X.shape[1])
    within = np.zeros(X.shape[1])
    for k in range(int(codes.max()) + 1):
        Xk = X[codes == k]
        between += Xk.shape[0] * (Xk.mean(axis=0) - mu) ** 2
        within += ((Xk - Xk.mean(axis=0)) ** 2).sum(axis=0)
    return between / np.maximum(within, np.finfo(float).tiny)


def _cover(X, I, J, kind, F, d):
    """Features to add so that every separation row has a nonzero entry in the columns ``F``.

    Keeps the restricted LP feasible (eq. 6 cannot hold for a pair equal on every kept
    feature); the added feature is the pair's largest ``eps``.
    """
    sep = np.flatnonzero(kind == SEPARATION)
    if sep.size == 0 or F.size == d:
        return np.empty(0, np.int64)
    dead = ~(_eps_rows(X[:, F], I[sep], J[sep]) > 0).any(axis=1)
    if not dead.any():
        return np.empty(0, np.int64)
    return np.unique(np.argmax(_eps_rows(X, I[sep[dead]], J[sep[dead]]), axis=1))


def _reduced_costs(X, I, J, kind, dual, X2=None):
    """``(A^T lambda)_j`` over all feature columns (their cost is 0), from the rows with ``lambda > 0``.

    With ``c_p = +-lambda_p`` per pair ``p = (i, j)`` this is ``sum_p c_p (x_i - x_j)^2`` per feature, i.e.
    ``deg . X^2 - sum_i x_i * (S X)_i`` with the ``n x n`` pair matrix ``S`` (``c_p`` at ``(i, j)`` and ``(j, i)``)
    and ``deg = S 1``: one ``n x n`` by ``n x d`` product instead of ``(x_i - x_j)^2`` for every active pair and
    feature (breast_vantveer, 78 x 24 481: 11 s of a 39 s fit), used when there are at least ``n`` active pairs.
    """
    act = np.flatnonzero(dual > 0)
    g = np.zeros(X.shape[1])
    if act.size == 0:
        return g
    cvals = dual[act] * np.where(kind[act] == SEPARATION, -1.0, 1.0)
    n = X.shape[0]
    with single_thread_blas():  # small products: thread start-up would dominate
        if act.size >= n:
            S = np.zeros((n, n))
            np.add.at(S, (I[act], J[act]), cvals)
            S += S.T
            deg = S.sum(axis=1)
            if X2 is None:
                X2 = X * X
            return deg @ X2 - np.einsum("ij,ij->j", X, S @ X)
        return cvals @ _eps_rows(X, I[act], J[act])


def solve_mdm(X, codes, soft=True, C=1.0, lazy=True, max_rounds=100, n_init=2, n_add=1, tol=1e-8,
              feature_block=None, working_memory=None, time_limit=None, verbose=0, method="ipm", max_work=None):
    """Solve hard or soft MDM exactly (Hocke & Martinetz 2014, eqs. 6-14).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Features, already rescaled as the caller wishes (MDM is invariant to feature
        scaling: scaling feature ``j`` by ``c`` scales ``w_j`` by ``1 / c**2``).
        Constant columns get ``w_j = 0``.
    codes : ndarray of shape (n,)
        Integer class codes.
    soft : bool
        Soft MDM (eqs. 12-14) or hard MDM (eqs. 6-8).
    C : float
        Slack penalty of soft MDM.  For ``C >= 1`` soft MDM has the hard optimum with
        ``xi = 0`` (see :class:`knnweights.MDM`), and the smaller hard LP is solved.
    lazy : bool
        Constraint generation (working set of pairs, add the most violated) instead of
        the full LP with all ``O(n**2)`` pairs.
    max_rounds : int
        Most LP solves of the lazy form.
    n_init, n_add : int
        Pairs of each kind per sample in the starting working set (nearest misses,
        farthest hits under standardised unit weights) and added per sample and round
        (most violated first).
    tol : float
        A pair is violated when it misses its constraint by more than ``tol`` (distances
        are in the LP's units: the smallest separation distance is 1); a left-out
        feature is priced in when its reduced cost is below ``-tol``.
    feature_block : int or None
        With ``lazy`` and ``d > feature_block``, the weight columns are generated
        lazily too (for ``d >> n``, e.g. microarrays): start with the ``feature_block``
        features of largest between/within-class variance ratio, and add per round the
        left-out features of negative reduced cost ``(A^T lambda)_j``, most negative
        first, at most ``max(feature_block, number of features in the LP)`` of them (the
        column set at most doubles per round).  A left-out feature has ``w_j = 0``; at
        the end no left-out feature has a negative reduced cost, so the solution is
        optimal with all of them.
    working_memory : float or None
        MiB budget of one block of the distance scan.
    time_limit : float or None
        Wall-clock seconds for the whole solve: the interior point does not start an
        iteration predicted (:class:`_Clock`) to end past it, HiGHS gets the time left as its
        ``time_limit``; when it runs out the best feasible point found (including the last
        interior iterate, scaled to feasibility) is returned with ``status = 2``.
    verbose : int
        1: one line per round (rows, columns, objective, LP iterations, times, work);
        2: one line per interior-point iteration and HiGHS' own log too.
    max_work : float or None
        Budget of floating-point work, in GFLOP (1e9 flops), of the lazy interior-point form
        (``method="ipm"``), counted by the solver's cost model (:class:`_Work`: every interior-point
        iteration's normal matrix and factorisation, the vertex tries, the scans of all pairs and the
        pricing of all features), never by the clock.  An interior-point iteration or vertex try that
        would pass it is not started; the best feasible point found (including the last interior iterate,
        scaled to feasibility) is returned with ``status = 3``.  ``None``: no budget.  Not applied to the
        full LP or ``method="simplex"`` (HiGHS' simplex has no such count).
        How the lazy form solves each relaxation: ``"ipm"`` (default) a dense Mehrotra
        interior point (:func:`dense_ipm`, warm-started after small changes) followed by an
        exact vertex (:func:`_vertex`, HiGHS' primal simplex from that basis when the vertex
        is degenerate); ``"simplex"`` one HiGHS model kept across rounds (dual simplex,
        warm-started from the last basis).  The full LP (``lazy=False``) always uses HiGHS.

    Returns
    -------
    OptimizeResult
        ``w``, ``r``, ``xi``, ``fun`` (objective), ``pairs`` (``(m, 2)`` pairs of the
        working set), ``kind`` (0 separation, 1 compactness), ``dual`` (``(m,)``
        Lagrange multipliers ``>= 0`` of those rows, from HiGHS' row duals; every pair
        left out has multiplier 0), ``features`` (the weight columns in the final LP,
        sorted), ``n_rounds``, ``n_constraints`` (rows of the final LP), ``history``
        (relaxation objective per round; rounds before the last are solved to relative gap
        ``_IPM_TOL_FIRST`` only), ``converged``, ``max_violation``, ``status`` (0 optimal, 1 ``max_rounds``
        reached, 2 ``time_limit`` reached; for 1 and 2, ``w, r, xi, fun`` are the best
        feasible point of the full LP found: a relaxation's ``w`` scaled to satisfy every
        constraint; 3 ``max_work`` reached, likewise), ``message``, ``work`` (GFLOP counted, see
        ``max_work``), ``lp_time`` (seconds in the LP solver), ``lp_iterations``
        (interior-point plus simplex iterations, all rounds), ``n_pruned`` (rows that left
        the working set, ``method="ipm"``: inactive at the last ``_PRUNE_AGE`` relaxations,
        each pair at most once), ``elapsed``.
    """
    t_start = time.perf_counter()
    X = np.ascontiguousarray(X, dtype=np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    n, d = X.shape
    const = np.ptp(X, axis=0) == 0
    nonconst = np.flatnonzero(~const)
    # soft MDM with C >= 1 has the hard optimum with xi = 0 (MDM's notes): solve the smaller hard LP
    lp_soft = bool(soft) and C < 1.0
    tail_cost = np.concatenate([[1.0], np.full(n if lp_soft else 0, float(C))])  # costs of r (eq. 8), xi (eq. 14)
    n_tail = tail_cost.size
    relax = (_DenseRelaxation if lazy and method == "ipm" else _Relaxation)(tail_cost, verbose)
    work = getattr(relax, "work", None) or _Work()
    work.budget = None if max_work is None else float(max_work) * 1e9
    scan_flops = 2.0 * n * n * d  # one scan of all pairs' weighted distances (or pricing of all features)

    def time_left():
        return None if time_limit is None else time_limit - (time.perf_counter() - t_start)

    lp_time, lp_iters = 0.0, 0
    history = []
    n_pruned = 0  # rows pruned (see _PRUNE_AGE)
    best = None  # best feasible point of the full LP seen so far (objective, w, r, xi)

    def consider(w, min_miss, max_hit):
        nonlocal best
        cand = _feasible_point(w, min_miss, max_hit, soft, C)
        if cand is not None and (best is None or cand[0] < best[0]):
            best = cand

    def lp_solve(what):
        nonlocal lp_time, lp_iters
        left = time_left()
        t = time.perf_counter()
        status, x, dual, fun, iters = relax.solve(left)
        lp_time += time.perf_counter() - t
        lp_iters += iters
        if status not in ("optimal", "time_limit", "work_limit"):
            _raise_for_status(status, what)
        return status, x, dual, fun, iters, time.perf_counter() - t

    def unpack(x, features):
        w = np.zeros(d)
        w[features] = np.maximum(x[n_tail:], 0.0)
        r = max(float(x[0]), 0.0)
        xi = np.maximum(x[1:n_tail], 0.0) if lp_soft else np.zeros(n)
        return w, r, xi

    def result(w, r, xi, fun, I, J, kind, dual, features, rnd, converged, max_violation, status, message):
        if soft and not lp_soft:
            xi = np.zeros(n)
        if dual is None:
            dual = np.zeros(I.size)
        elif dual.size < I.size:  # rows added after the last solved relaxation: not in it, multiplier 0
            dual = np.concatenate([dual, np.zeros(I.size - dual.size)])
        return OptimizeResult(w=w, r=r, xi=xi, fun=float(fun), pairs=np.column_stack([I, J]), kind=kind,
                              dual=dual, features=np.sort(features), n_rounds=rnd, n_constraints=int(I.size),
                              history=history, converged=converged, max_violation=max_violation, status=status,
                              message=message, lp_time=lp_time, lp_iterations=lp_iters, n_pruned=n_pruned,
                              work=work.done / 1e9,
                              elapsed=time.perf_counter() - t_start)

    def give_up(I, J, kind, dual, features, rnd, max_violation, status, message):
        if best is None:
            raise RuntimeError(f"MDM: {message} before any feasible point was found")
        fun, w, r, xi = best
        w[const] = 0.0
        return result(w, r, xi, fun, I, J, kind, dual, features, rnd, False, max_violation, status, message)

    # starting weights (the first feasible point, too): unit weights on standardised data
    w0 = np.where(const, 0.0, 1.0 / np.maximum(X.var(axis=0), np.finfo(float).tiny))
    w0 = w0 / np.max(w0) if np.max(w0) > 0 else w0

    if not lazy:
        I, J, kind = all_pairs(codes, lp_soft)
        features = nonconst
        relax.add_cols(sp.csc_array((0, features.size)))
        relax.add_rows(*_rows(X, I, J, kind, lp_soft, features, n_tail))
        status, x, dual, fun, iters, t_lp = lp_solve(f"full LP, {I.size} constraints")
        if verbose:
            print(f"MDM full LP: {I.size} rows, {n_tail + features.size} columns, {status}, objective {fun:.10g}, "
                  f"{iters} simplex iterations, {t_lp:.2f} s")
        if status == "time_limit":
            *_, min_miss, max_hit = _scan(X, codes, w0, 1, -np.inf, np.zeros(n), np.inf, working_memory)
            consider(w0, min_miss, max_hit)
            return give_up(I, J, kind, None, features, 1, np.inf, 2,
                           f"time_limit={time_limit} s reached in the full LP")
        history.append(fun)
        w, r, xi = unpack(x, features)
        return result(w, r, xi, fun, I, J, kind, dual, features, 1, True, 0.0, 0, "full LP solved")

    col_lazy = feature_block is not None and d > feature_block
    X2 = X * X if col_lazy else None  # for the reduced costs of the features left out
    if col_lazy:
        scores = np.where(const, -np.inf, _feature_scores(X, codes))
        features = np.sort(np.argsort(-scores, kind="stable")[:min(feature_block, nonconst.size)])
    else:
        features = nonconst
    # starting working set: nearest misses and farthest hits under w0
    I, J, kind, _, min_miss, max_hit = _scan(X, codes, w0, n_init, np.inf, np.zeros(n), -np.inf, working_memory)
    work.add(scan_flops)
    consider(w0, min_miss, max_hit)
    I, J = _canonical(I, J, kind, lp_soft)
    _, first = np.unique(_keys(I, J, kind, n), return_index=True)
    I, J, kind = I[first], J[first], kind[first]
    features = np.union1d(features, _cover(X, I, J, kind, features, d))
    dense = isinstance(relax, _DenseRelaxation)
    relax.add_cols(np.zeros((0, features.size)) if dense else sp.csc_array((0, features.size)))
    relax.add_rows(*(_dense_rows if dense else _rows)(X, I, J, kind, lp_soft, features, n_tail))
    max_violation = np.inf
    dual = None
    it_name = "IPM iterations" if isinstance(relax, _DenseRelaxation) else "simplex iterations"
    prune = isinstance(relax, _DenseRelaxation) and _PRUNE_AGE > 0
    age = np.zeros(I.size, np.int64)  # consecutive relaxations at which each row was inactive
    pruned_keys = np.empty(0, np.int64)  # pairs pruned once: never pruned again
    for rnd in range(1, max_rounds + 1):
        if isinstance(relax, _DenseRelaxation):  # rounds before the last: loose (see _IPM_TOL_FIRST)
            relax.tol = max(_IPM_TOL_ROUND, _IPM_TOL_FIRST * _IPM_TOL_RATE ** (rnd - 1))
        status, x, dual_new, fun, iters, t_lp = lp_solve(
            f"lazy round {rnd}, {I.size} constraints, {features.size} features")
        if status in ("time_limit", "work_limit"):
            partial = getattr(relax, "partial", None)
            if partial is not None:  # the interior iterate reached, scaled to feasibility, may beat the best point
                w_p = unpack(partial, features)[0]
                *_, min_miss, max_hit = _scan(X, codes, w_p, 1, -np.inf, np.zeros(n), np.inf, working_memory)
                work.add(scan_flops)
                consider(w_p, min_miss, max_hit)
            what = (f"max_work={max_work:g} GFLOP" if status == "work_limit" else f"time_limit={time_limit} s")
            if verbose:
                print(f"MDM round {rnd:3d}: {what} reached inside the LP solver after {iters} {it_name} "
                      f"({work.done / 1e9:.4g} GFLOP counted); best feasible {best[0]:.10g}; "
                      f"{time.perf_counter() - t_start:.2f} s")
            return give_up(I, J, kind, dual, features, rnd, max_violation, 3 if status == "work_limit" else 2,
                           f"{what} reached in round {rnd}")
        dual = dual_new
        history.append(fun)
        w, r, xi = unpack(x, features)
        hit_base = r + xi if lp_soft else np.full(n, r)
        nI, nJ, nkind, viol, min_miss, max_hit = _scan(X, codes, w, n_add, 1.0 - tol, hit_base, tol,
                                                        working_memory)
        work.add(scan_flops)
        consider(w, min_miss, max_hit)
        max_violation = float(viol.max()) + tol if viol.size else 0.0
        nI, nJ = _canonical(nI, nJ, nkind, lp_soft)
        nkeys, first = np.unique(_keys(nI, nJ, nkind, n), return_index=True)
        first = first[~np.isin(nkeys, _keys(I, J, kind, n))]
        nI, nJ, nkind = nI[first], nJ[first], nkind[first]
        new_F = np.empty(0, np.int64)
        if col_lazy:
            g = _reduced_costs(X, I, J, kind, dual, X2)
            work.add(scan_flops)
            g[features] = np.inf
            g[const] = np.inf
            cand = np.flatnonzero(g < -tol)
            new_F = cand[np.argsort(g[cand], kind="stable")[:max(feature_block, features.size)]]
            max_violation = max(max_violation, float(-g[cand].min()) if cand.size else 0.0)
        if verbose:
            print(f"MDM round {rnd:3d}: {I.size:6d} rows, {n_tail + features.size:6d} columns, objective "
                  f"{fun:.10g}, {iters:6d} {it_name} in {t_lp:7.2f} s; +{nI.size} pairs, "
                  f"+{new_F.size} features; best feasible {best[0]:.10g}; {work.done / 1e9:.1f} GFLOP; "
                  f"{time.perf_counter() - t_start:.2f} s")
        loose = not getattr(relax, "last_exact", True)
        if nI.size == 0 and new_F.size == 0 and loose and rnd < max_rounds:
            relax.loose = False  # the nearly optimal point violates nothing: move to the vertex, scan again
            continue
        if nI.size == 0 and new_F.size == 0 and not loose:
            return result(w, r, xi, fun, I, J, kind, dual, features, rnd, True, 0.0, 0, "no violated pair left")
        if rnd == max_rounds:
            return give_up(I, J, kind, dual, features, rnd, max_violation, 1, f"max_rounds={max_rounds} reached")
        left = time_left()
        if left is not None and left <= 0:
            return give_up(I, J, kind, dual, features, rnd, max_violation, 2,
                           f"time_limit={time_limit} s reached after round {rnd}")
        if prune and relax.row_ratio is not None and relax.row_ratio.size == I.size:
            age = np.where(relax.row_ratio < _PRUNE_RATIO, age + 1, 0)
            keys_now = _keys(I, J, kind, n)
            drop = (age >= _PRUNE_AGE) & ~np.isin(keys_now, pruned_keys)
            if drop.any():
                keep = np.flatnonzero(~drop)
                relax.keep_rows(keep)
                pruned_keys = np.concatenate([pruned_keys, keys_now[drop]])
                n_pruned += int(drop.sum())
                I, J, kind, age = I[keep], J[keep], kind[keep], age[keep]
                if dual is not None:
                    dual = dual[keep]
                if verbose >= 2:
                    print(f"MDM round {rnd:3d}: {int(drop.sum())} rows inactive at the last {_PRUNE_AGE} "
                          f"relaxations pruned ({I.size} left)")
        if col_lazy and nI.size:
            new_F = np.union1d(new_F, _cover(X, nI, nJ, nkind, np.union1d(features, new_F), d))
        if new_F.size:
            relax.add_cols((_dense_cols if dense else _cols)(X, I, J, kind, new_F))
            features = np.concatenate([features, new_F])
        if nI.size:
            relax.add_rows(*(_dense_rows if dense else _rows)(X, nI, nJ, nkind, lp_soft, features, n_tail))
            I = np.concatenate([I, nI])
            J = np.concatenate([J, nJ])
            kind = np.concatenate([kind, nkind])
            age = np.concatenate([age, np.zeros(nI.size, np.int64)])
