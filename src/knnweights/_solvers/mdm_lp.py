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
The lazy form solves each relaxation by the dense interior point of :mod:`.lp_ipm` (or, with
``method="simplex"``, by HiGHS, :mod:`.lp_highs`); the full LP always by HiGHS.
"""

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

from ..engine._docs import data_doc
from ..engine.linalg import single_thread_blas
from ..engine.neighbors import distance_chunks
from .lp_highs import _Relaxation
from .lp_ipm import _IPM_TOL_ROUND, _DenseRelaxation, _Work

__all__ = ["solve_mdm", "mdm_constraint_matrix", "all_pairs", "duplicate_conflicts", "SEPARATION", "COMPACTNESS"]

SEPARATION = 0
COMPACTNESS = 1
_PAIR_BLOCK = 1 << 16  # pairs per block when forming eps rows (bounds the temporary memory)

#: rounds of the lazy solver before the last one stop the IPM at relative gap / infeasibility ``_IPM_TOL_FIRST``
#: (times ``_IPM_TOL_RATE`` per round, never below ``lp_ipm._IPM_TOL_ROUND``): their weights only serve to find
#: violated pairs and priced-in features, and they take about half the iterations.  Once such a
#: loose point violates nothing, the same LP is solved on to ``lp_ipm._IPM_TOL_ROUND`` (``_IPM_TOL_FINAL`` if
#: needed) and moved to its exact vertex (square solve, KKT-checked), and every pair and feature is checked again.
#: 1e-2 rather than 1e-3: the same optimum, with less floating-point work in the normal matrices
_IPM_TOL_FIRST = 1e-2
_IPM_TOL_RATE = 1.0
#: a row whose multiplier-to-slack ratio ``lam / s`` was below ``_PRUNE_RATIO`` at the last ``_PRUNE_AGE``
#: relaxations (inactive there) leaves the LP; the scan of every pair brings it back if it is violated later,
#: and then it stays (each pair is pruned at most once, so the rounds still end); on wide data most rows are
#: inactive.  0 disables.
_PRUNE_AGE = 2
_PRUNE_RATIO = 1e-3


@data_doc
def duplicate_conflicts(X, codes):
    """Pairs ``(i, j)`` of identical rows with different labels (they make MDM infeasible).

    {X_codes}

    Returns
    -------
    pairs : ndarray of int, shape (m, 2)
        The conflicting pairs, sorted; empty when there is none.
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

    Parameters
    ----------
    codes : ndarray of int, shape (n,)
        Class codes.
    soft : bool
        Soft MDM (ordered compactness pairs).

    Returns
    -------
    I, J : ndarray of int
        The pairs' samples.
    kind : ndarray of int8
        ``SEPARATION`` or ``COMPACTNESS`` per pair.
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

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Samples.
    I, J : ndarray of int, shape (m,)
        The pairs' samples.
    kind : ndarray of int8, shape (m,)
        ``SEPARATION`` or ``COMPACTNESS`` per pair.
    soft : bool
        Soft MDM (slack columns ``xi``).

    Returns
    -------
    A : scipy.sparse.csr_array of shape (m, d + 1 (+ n))
        The constraint rows.
    b : ndarray of shape (m,)
        The right-hand sides.
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
            # the others: their kk most violated (a partition of every row would dominate the fit)
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
    """:func:`_rows` as one dense array (for :class:`.lp_ipm._DenseRelaxation`, which holds the LP dense anyway)."""
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
    feature, used when there are at least ``n`` active pairs.
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
        iteration predicted (:class:`.lp_ipm._Clock`) to end past it, HiGHS gets the time left as its
        ``time_limit``; when it runs out the best feasible point found (including the last
        interior iterate, scaled to feasibility) is returned with ``status = 2``.
    verbose : int
        1: one line per round (rows, columns, objective, LP iterations, times, work);
        2: one line per interior-point iteration and HiGHS' own log too.
    max_work : float or None
        Budget of floating-point work, in GFLOP (1e9 flops), of the lazy interior-point form
        (``method="ipm"``), counted by the solver's cost model (:class:`.lp_ipm._Work`: every interior-point
        iteration's normal matrix and factorisation, the vertex tries, the scans of all pairs and the
        pricing of all features), never by the clock.  An interior-point iteration or vertex try that
        would pass it is not started; the best feasible point found (including the last interior iterate,
        scaled to feasibility) is returned with ``status = 3``.  ``None``: no budget.  Not applied to the
        full LP or ``method="simplex"`` (HiGHS' simplex has no such count).
    method : {"ipm", "simplex"}
        How the lazy form solves each relaxation: ``"ipm"`` (default) a dense Mehrotra
        interior point (:func:`.lp_ipm.dense_ipm`, warm-started after small changes) followed by an
        exact vertex (:func:`.lp_ipm._vertex`, HiGHS' primal simplex from that basis when the vertex
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
