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

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult, linprog

from ..engine.neighbors import distance_chunks

__all__ = ["solve_mdm", "mdm_constraint_matrix", "all_pairs", "duplicate_conflicts", "SEPARATION", "COMPACTNESS"]

SEPARATION = 0
COMPACTNESS = 1

_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9, "presolve": True}
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


def _objective(n, d, soft, C):
    c = np.zeros(d + 1 + (n if soft else 0))
    c[d] = 1.0
    if soft:
        c[d + 1:] = C
    return c


def _solve(c, A, b, bounds):
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs", options=_HIGHS_OPTIONS)
    return res


def _scan(Xs, codes, w, k, miss_limit, hit_base, hit_limit, working_memory=None):
    """Per sample, its ``k`` most violated separation and compactness pairs.

    Scans the weighted distances ``D`` block by block (:func:`distance_chunks`): the
    candidates of row ``i`` are the misses with ``D < miss_limit`` (smallest first) and
    the hits with ``D - hit_base[i] > hit_limit`` (largest first).  Returns
    ``(I, J, kind, violation)``.
    """
    n = codes.shape[0]
    out_I, out_J, out_k, out_v = [], [], [], []
    for s, e, D in distance_chunks(Xs, None, w, "sqeuclidean", working_memory=working_memory, n_arrays=4):
        rows = np.arange(s, e)
        same = codes[s:e, None] == codes[None, :]
        Dm = np.where(same, np.inf, D)
        H = np.where(same, D - hit_base[s:e, None], -np.inf)
        H[rows - s, rows] = -np.inf
        for M, sign, kind in ((Dm, 1.0, SEPARATION), (H, -1.0, COMPACTNESS)):
            kk = min(k, n)
            if kk == 1:  # the common case (n_add=1): a plain arg-extremum is much cheaper
                idx = (np.argmin(M, axis=1) if kind == SEPARATION else np.argmax(M, axis=1))[:, None]
            elif kk < n:
                idx = np.argpartition(sign * M, kk - 1, axis=1)[:, :kk]
            else:
                idx = np.tile(np.arange(n), (e - s, 1))
            val = np.take_along_axis(M, idx, axis=1)
            ok = (val < miss_limit) if kind == SEPARATION else (val > hit_limit)
            ok &= np.isfinite(val)
            r_, c_ = np.nonzero(ok)
            out_I.append(rows[r_])
            out_J.append(idx[r_, c_])
            out_k.append(np.full(r_.size, kind, np.int8))
            out_v.append((miss_limit - val[r_, c_]) if kind == SEPARATION else (val[r_, c_] - hit_limit))
    return (np.concatenate(out_I), np.concatenate(out_J), np.concatenate(out_k), np.concatenate(out_v))


def _canonical(I, J, kind, soft):
    """Order the pairs of symmetric constraints as ``i < j`` (all but soft compactness)."""
    sym = (kind == SEPARATION) | (not soft)
    lo = np.where(sym, np.minimum(I, J), I)
    hi = np.where(sym, np.maximum(I, J), J)
    return lo, hi


def _keys(I, J, kind, n):
    return (kind.astype(np.int64) * n + I) * n + J


def _check_status(res, what):
    if res.status == 0 and res.x is not None and np.all(np.isfinite(res.x)):
        return
    # infeasible / unbounded LPs come from the data (near-duplicates of different labels):
    # a ValueError saying what to change; anything else is a solver failure
    exc = ValueError if res.status == 2 else RuntimeError
    raise exc(
        f"HiGHS could not solve the MDM linear program ({what}): status {res.status}, {res.message!r}. "
        "This happens with near-duplicate samples of different labels (tiny distances force huge weights): "
        "remove or merge them, or standardise the features."
    )


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
    eps = _eps_rows(X, I[sep], J[sep])
    dead = ~(eps[:, F] > 0).any(axis=1)
    return np.unique(np.argmax(eps[dead], axis=1)) if dead.any() else np.empty(0, np.int64)


def _reduced_costs(X, I, J, kind, dual):
    """``(A^T lambda)_j`` over all feature columns (their cost is 0), from the rows with ``lambda > 0``."""
    act = np.flatnonzero(dual > 0)
    g = np.zeros(X.shape[1])
    if act.size:
        eps = _eps_rows(X, I[act], J[act])
        sign = np.where(kind[act] == SEPARATION, -1.0, 1.0)
        g = (dual[act] * sign) @ eps
    return g


def solve_mdm(X, codes, soft=True, C=1.0, lazy=True, max_rounds=100, n_init=2, n_add=1, tol=1e-8,
              feature_block=None, working_memory=None):
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
        Slack penalty of soft MDM.
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
        features of largest between/within-class variance ratio, and add per round up
        to ``feature_block`` left-out features of most negative reduced cost
        ``(A^T lambda)_j``.  A left-out feature has ``w_j = 0``; at the end no left-out
        feature has a negative reduced cost, so the solution is optimal with all of them.

    Returns
    -------
    OptimizeResult
        ``w``, ``r``, ``xi``, ``fun`` (objective), ``pairs`` (``(m, 2)`` pairs of the
        working set), ``kind`` (0 separation, 1 compactness), ``dual`` (``(m,)``
        Lagrange multipliers ``>= 0`` of those rows, from HiGHS' marginals; every pair
        left out has multiplier 0), ``features`` (the weight columns in the final LP),
        ``n_rounds``, ``n_constraints``, ``history`` (objective per round),
        ``converged``, ``max_violation``, ``status``, ``message``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    n, d = X.shape
    const = np.ptp(X, axis=0) == 0
    c_tail = _objective(n, 0, soft, C)  # costs of (r, xi)
    tail_bounds = [(0, None)] * (1 + (n if soft else 0))

    def restricted(F, I, J, kind):
        A, b = mdm_constraint_matrix(X[:, F], I, J, kind, soft)
        c = np.concatenate([np.zeros(F.size), c_tail])
        res = _solve(c, A, b, [(0, 0) if const[j] else (0, None) for j in F] + tail_bounds)
        return res

    def unpack(res, F):
        w = np.zeros(d)
        w[F] = np.maximum(res.x[:F.size], 0.0)
        w[const] = 0.0
        r = max(float(res.x[F.size]), 0.0)
        xi = np.maximum(res.x[F.size + 1:], 0.0) if soft else np.zeros(n)
        dual = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0)
        return w, r, xi, dual

    if not lazy:
        I, J, kind = all_pairs(codes, soft)
        F = np.arange(d)
        res = restricted(F, I, J, kind)
        _check_status(res, f"full LP, {I.size} constraints")
        w, r, xi, dual = unpack(res, F)
        return OptimizeResult(w=w, r=r, xi=xi, fun=float(res.fun), pairs=np.column_stack([I, J]), kind=kind,
                              dual=dual, features=F, n_rounds=1, n_constraints=int(I.size),
                              history=[float(res.fun)], converged=True, max_violation=0.0, status=0,
                              message="full LP solved")

    col_lazy = feature_block is not None and d > feature_block
    if col_lazy:
        scores = np.where(const, -np.inf, _feature_scores(X, codes))
        F = np.sort(np.argsort(-scores, kind="stable")[:feature_block])
    else:
        F = np.arange(d)
    # starting working set: nearest misses and farthest hits under unit weights on standardised data
    w0 = np.where(const, 0.0, 1.0 / np.maximum(X.var(axis=0), np.finfo(float).tiny))
    w0 = w0 / np.max(w0) if np.max(w0) > 0 else w0
    I, J, kind, _ = _scan(X, codes, w0, n_init, np.inf, np.zeros(n), -np.inf, working_memory)
    I, J = _canonical(I, J, kind, soft)
    _, first = np.unique(_keys(I, J, kind, n), return_index=True)
    I, J, kind = I[first], J[first], kind[first]
    F = np.union1d(F, _cover(X, I, J, kind, F, d))
    history = []
    converged = False
    max_violation = np.inf
    for rnd in range(1, max_rounds + 1):
        order = np.argsort(kind, kind="stable")  # separation rows first
        I, J, kind = I[order], J[order], kind[order]
        res = restricted(F, I, J, kind)
        _check_status(res, f"lazy round {rnd}, {I.size} constraints, {F.size} features")
        history.append(float(res.fun))
        w, r, xi, dual = unpack(res, F)
        hit_base = r + xi if soft else np.full(n, r)
        nI, nJ, nkind, viol = _scan(X, codes, w, n_add, 1.0 - tol, hit_base, tol, working_memory)
        max_violation = float(viol.max()) + tol if viol.size else 0.0
        nI, nJ = _canonical(nI, nJ, nkind, soft)
        nkeys, first = np.unique(_keys(nI, nJ, nkind, n), return_index=True)
        first = first[~np.isin(nkeys, np.sort(_keys(I, J, kind, n)), assume_unique=True)]
        new_F = np.empty(0, np.int64)
        if col_lazy:
            g = _reduced_costs(X, I, J, kind, dual)
            g[F] = np.inf
            g[const] = np.inf
            cand = np.flatnonzero(g < -tol)
            new_F = cand[np.argsort(g[cand], kind="stable")[:feature_block]]
            max_violation = max(max_violation, float(-g[cand].min()) if cand.size else 0.0)
        if first.size == 0 and new_F.size == 0:
            converged = True
            break
        if rnd == max_rounds:
            break
        I = np.concatenate([I, nI[first]])
        J = np.concatenate([J, nJ[first]])
        kind = np.concatenate([kind, nkind[first]])
        F = np.union1d(F, new_F)
        if col_lazy:
            F = np.union1d(F, _cover(X, nI[first], nJ[first], nkind[first], F, d))
    return OptimizeResult(w=w, r=r, xi=xi, fun=float(res.fun), pairs=np.column_stack([I, J]), kind=kind,
                          dual=dual, features=F, n_rounds=rnd, n_constraints=int(I.size), history=history,
                          converged=converged, max_violation=0.0 if converged else max_violation,
                          status=0 if converged else 1,
                          message="no violated pair left" if converged else "max_rounds reached")
