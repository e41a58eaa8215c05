"""A dense primal-dual interior point for ``min c.x  s.t.  A x <= b, x >= 0`` and its exact vertex recovery.

:func:`dense_ipm` is Mehrotra's predictor-corrector method with Gondzio's correctors on a dense ``A`` (one
``dsyrk`` and one Cholesky factorisation of the normal matrix per iteration); :func:`_vertex` moves a nearly
optimal iterate to the optimal vertex by a square solve and certifies it by the KKT conditions.
:class:`_DenseRelaxation` is the growing LP of the lazy MDM solver (:mod:`.mdm_lp`) solved this way, with warm
starts, a deadline (:class:`_Clock`) and a budget of counted work (:class:`_Work`).
"""

import time
import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg.blas import dsyrk

from ..engine.linalg import blas_thread_count, blas_threads_for_work, single_thread_blas
from .lp_highs import _highs_vertex

__all__ = ["dense_ipm"]

#: the relative gap / infeasibility of a solve of :class:`_DenseRelaxation` that tries the exact vertex, and
#: the last resort's when that fails (the lazy solver's loose rounds stop earlier: ``mdm_lp._IPM_TOL_FIRST``)
_IPM_TOL_ROUND = 1e-8
_IPM_TOL_FINAL = 1e-10
#: Gondzio's multiple centrality correctors per iteration (each costs two triangular solves next to one
#: factorisation, and they save iterations)
_IPM_CORRECTORS = 2
_WIDE = 2.5  # see _starting_point
#: warm start only when the LP grew by at most this fraction: after larger changes Mehrotra's cold start needs
#: fewer iterations
_IPM_WARM_GROWTH = 0.05
_IPM_WARM_GAP = 1e-1  # the warm start: the first iterate of the last solve below max(this, tol * _IPM_WARM_FACTOR)
_IPM_WARM_FACTOR = 1.0
_VERTEX_WINDOW = 3  # the final vertex also tries the square partitions of the k most clearly basic, k +- 3


#: a normal matrix's ``dsyrk`` of at least this many multiply-adds (``m^2 k``) runs on
#: the caller's BLAS threads; smaller ones, the Cholesky factorisations and the solves stay on one thread
_SYRK_THREADED = 1e9


def _syrk(F, trans, threads=1):
    """``F F^T`` (``trans=False``) or ``F^T F`` (upper triangle only) with one BLAS ``dsyrk``, no copy of ``F``.

    A product of at least ``_SYRK_THREADED`` multiply-adds runs on ``threads`` BLAS threads.  OpenBLAS' threaded
    ``dsyrk`` splits the output, not the sums, so each entry is the same sum in the same order and the result is
    bit-identical to one thread's (``tests/test_lp_ipm.py`` checks it); the Cholesky factorisation, whose
    threaded blocking changes its rounding, stays on one thread.
    """
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
    ``A^T E^-1 A + D^-1`` (column space): one ``dsyrk`` and a Cholesky factorisation, then solves with it, in
    double precision (single precision with refinement in double stalls the iterations on MDM's LPs).
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
    # each row by its row sum k: shift x by 1 / k of the slacks' shift (fewer iterations there; on near-square
    # LPs the plain shift is better)
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
    that would end past the deadline (one iteration of a large LP takes seconds)."""

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

    Parameters
    ----------
    A : ndarray of shape (m, n)
        The constraint matrix (dense).
    b : ndarray of shape (m,)
        Right-hand sides.
    c : ndarray of shape (n,)
        Costs.
    tol : float, default=_IPM_TOL_FINAL
        Relative gap and infeasibilities to stop at.
    max_iter : int, default=200
        Most iterations.
    state : _IPMState or None, default=None
        An iterate of the same LP to continue from; ``None``: Mehrotra's starting point.
    deadline : float or None, default=None
        A ``time.perf_counter()`` value: the solve stops before an iteration that ``clock``
        predicts to end past it (the iterate reached is returned).
    save_gap : float or None, default=None
        Keep the first iterate below this gap as ``state.saved`` (a warm start for a changed LP).
    correctors : int, default=_IPM_CORRECTORS
        Gondzio's centrality correctors per iteration at most.
    clock : _Clock or None, default=None
        Predicts an iteration's seconds from its flops.
    log : callable or None, default=None
        Called as ``log(iteration, error, objective, seconds)`` per iteration.
    work : _Work or None, default=None
        Counts each iteration's flops; the solve stops (``"work_limit"``) before an iteration
        that would pass its budget.
    blas_threads : int, default=1
        BLAS threads of the large normal-matrix products (:func:`_syrk`; the same bits on any count).

    Returns
    -------
    state : _IPMState
        The last iterate.
    status : {"optimal", "time_limit", "work_limit", "max_iter"}
        Why the solve stopped.
    iterations : int
        Iterations taken.
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




class _DenseRelaxation:
    """The growing LP of :class:`.lp_highs._Relaxation`, held as a dense array and solved by :func:`dense_ipm`.

    MDM's rows are dense (a pair has ``d`` nonzeros ``eps_ij``) and so are its optima (hundreds of nonzero
    weights): HiGHS' sparse LU and simplex pivots are slow there.  Each solve
    here runs the interior point to a relative gap of ``1e-10`` and moves to the exact optimal vertex
    (:func:`_vertex`; HiGHS' simplex from the guessed basis when the optimum is
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
        """Same contract as :meth:`.lp_highs._Relaxation.solve`: ``(status, x, dual, objective, iterations)``.

        While :attr:`loose` is set, the interior point stops at :attr:`tol` (the caller's schedule, from
        ``mdm_lp._IPM_TOL_FIRST``) and, at ``_IPM_TOL_ROUND``, tries :func:`_vertex` (an exact KKT test).  Without a
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
        # one BLAS thread for the factorisations, solves and small products (threads there cost more in
        # synchronisation than they gain on these sizes); only the large normal-matrix products (:func:`_syrk`)
        # use the caller's threads, with the same bits
        threads = blas_thread_count()
        with single_thread_blas():
            # warm start from the last solve's gap-0.1 iterate unless the LP more than doubled (fewer
            # iterations, the same rounds)
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
