"""Batched exact solver for small QPs on the probability simplex.

Every sample ``n`` brings its own ``k x k`` problem

    min_a  1/2 a^T G_n a - b_n^T a    s.t.  sum(a) = 1,  a >= 0,

with ``G_n`` positive semidefinite on ``{sum(a) = 0}`` (possibly singular: duplicate
neighbours, ``k > d``, zero feature weights).  The weighted least-squares form of
LH-RELIEF (Cai & Ng, eqs. 5 and 7) and of CKNN (Vincent & Bengio 2001),

    min_a  1/2 (x - H a)^T W (x - H a)    s.t.  sum(a) = 1,  a >= 0,

is the nearest point of the convex hull of the columns of ``H`` to ``x``; on the
simplex it equals ``1/2 a^T Q a`` with ``Q = D^T W D``, ``D = H - x 1^T`` (the Gram
matrix of the shifted columns; ``H^T W H`` and ``H^T W x`` give the same problem up
to a constant, but ``Q`` avoids cancellation).

The solver is Wolfe's minimum-norm-point algorithm (P. Wolfe, "Finding the nearest
point in a polytope", Math. Programming 11, 1976) in Gram form: a primal active-set
method on the simplex whose working set always indexes affinely independent columns,
so every equality-constrained subproblem is non-singular even when ``G`` is singular.
It terminates finitely at a KKT point: ``g = G a - b``, ``mu = a^T g`` (the multiplier
of ``sum(a) = 1``), ``g_j >= mu`` for all ``j`` and ``g_i = mu`` where ``a_i > 0``.
Samples are looped over in a compiled numba kernel (``k`` is small, ``n`` large).
"""

import numpy as np
from scipy.optimize import OptimizeResult

from ..engine.jit import full_1d, njit, size_dispatch, task_range

__all__ = ["solve_simplex_qp", "simplex_least_squares", "hull_projections", "indexed_combination"]

_MESSAGES = {
    0: "Optimization terminated successfully (KKT conditions met).",
    1: "Iteration limit reached.",
    2: "Numerically singular working set; returned the last feasible point.",
}


@njit(cache=True)
def _bordered_solve(q, support, m, y, work):
    """Solve [[Q_SS, 1], [1^T, 0]] [y; lam] = [0; 1] by partial pivoting; False if singular."""
    k = q.shape[0]
    size = m + 1
    idx = np.empty(m, np.int64)
    c = 0
    for i in range(k):
        if support[i]:
            idx[c] = i
            c += 1
    for r in range(m):
        for s in range(m):
            work[r, s] = q[idx[r], idx[s]]
        work[r, m] = 1.0
        work[r, size] = 0.0
    for s in range(m):
        work[m, s] = 1.0
    work[m, m] = 0.0
    work[m, size] = 1.0
    for col in range(size):
        piv = col
        best = abs(work[col, col])
        for r in range(col + 1, size):
            v = abs(work[r, col])
            if v > best:
                best = v
                piv = r
        if best < 1e-13:
            return False
        if piv != col:
            for s in range(size + 1):
                t = work[col, s]
                work[col, s] = work[piv, s]
                work[piv, s] = t
        inv = 1.0 / work[col, col]
        for r in range(col + 1, size):
            f = work[r, col] * inv
            if f != 0.0:
                for s in range(col, size + 1):
                    work[r, s] -= f * work[col, s]
    sol = np.empty(size, np.float64)
    for r in range(size - 1, -1, -1):
        acc = work[r, size]
        for s in range(r + 1, size):
            acc -= work[r, s] * sol[s]
        sol[r] = acc / work[r, r]
    for i in range(k):
        y[i] = 0.0
    for r in range(m):
        y[idx[r]] = sol[r]
    return True


@njit(cache=True)
def _wolfe_batch(G, b, tol, max_iter, A, status, nit):
    """Wolfe's nearest-point algorithm on the simplex for every problem of the batch."""
    n, k = G.shape[0], G.shape[1]
    q = np.empty((k, k), np.float64)
    g = np.empty(k, np.float64)
    y = np.empty(k, np.float64)
    a = np.empty(k, np.float64)
    work = np.empty((k + 1, k + 2), np.float64)
    support = full_1d(k, False, np.bool_)
    for s in range(n):
        # Q = G - 1 b^T - b 1^T equals G - (terms linear on the simplex): same minimiser
        scale = 0.0
        for i in range(k):
            for j in range(k):
                q[i, j] = G[s, i, j] - b[s, i] - b[s, j]
                if abs(q[i, j]) > scale:
                    scale = abs(q[i, j])
        if scale == 0.0 or not np.isfinite(scale):
            scale = 1.0
        for i in range(k):
            for j in range(k):
                q[i, j] /= scale
        i0 = 0
        for i in range(1, k):
            if q[i, i] < q[i0, i0]:
                i0 = i
        for i in range(k):
            a[i] = 0.0
            support[i] = False
        a[i0] = 1.0
        support[i0] = True
        m = 1
        st = 1
        it = 0
        while it < max_iter:
            mu = 0.0
            for i in range(k):
                acc = 0.0
                for j in range(k):
                    acc += q[i, j] * a[j]
                g[i] = acc
                mu += a[i] * acc
            jmin = -1
            gmin = mu - tol
            for j in range(k):
                if not support[j] and g[j] < gmin:
                    gmin = g[j]
                    jmin = j
            if jmin < 0:
                st = 0
                break
            support[jmin] = True
            m += 1
            # minor cycles: move towards the affine minimiser of the working set
            while True:
                it += 1
                if not _bordered_solve(q, support, m, y, work):
                    st = 2
                    break
                all_pos = True
                for i in range(k):
                    if support[i] and y[i] <= 0.0:
                        all_pos = False
                        break
                if all_pos:
                    for i in range(k):
                        a[i] = y[i] if support[i] else 0.0
                    break
                theta = 1.0
                iblock = -1
                for i in range(k):
                    if support[i] and y[i] <= 0.0:
                        t = a[i] / (a[i] - y[i])
                        if t < theta or iblock < 0:
                            theta = t
                            iblock = i
                for i in range(k):
                    if support[i]:
                        a[i] = a[i] + theta * (y[i] - a[i])
                for i in range(k):
                    if support[i] and (i == iblock or a[i] <= 0.0):
                        support[i] = False
                        a[i] = 0.0
                        m -= 1
                if it >= max_iter:
                    break
            if st == 2:
                break
        # clean rounding: feasible to machine precision
        tot = 0.0
        for i in range(k):
            if a[i] < 0.0:
                a[i] = 0.0
            tot += a[i]
        for i in range(k):
            A[s, i] = a[i] / tot
        status[s] = st
        nit[s] = it


def solve_simplex_qp(G, b=None, tol=1e-12, max_iter=None):
    """Solve ``min 1/2 a^T G a - b^T a`` s.t. ``sum(a) = 1, a >= 0`` for a batch.

    Parameters
    ----------
    G : ndarray of shape (n, k, k)
        Symmetric, positive semidefinite (at least on ``{sum(a) = 0}``); may be singular.
    b : ndarray of shape (n, k), default=None
        Linear term (``None``: zero).
    tol : float, default=1e-12
        Optimality tolerance on ``g_j - mu``, relative to ``max |G - 1 b^T - b 1^T|``.
    max_iter : int, default=None
        Active-set iterations per problem (``None``: ``10 k + 20``; Wolfe's method
        needs at most a few times ``k`` in practice).

    Returns
    -------
    OptimizeResult
        ``x`` (n, k) the minimisers, ``fun`` (n,) the objective values, ``status``
        (n,) int (0 success, 1 iteration limit, 2 numerically singular working set),
        ``nit`` (n,) iterations, ``success`` (True when every status is 0),
        ``message``.

    References
    ----------
    P. Wolfe, "Finding the nearest point in a polytope", Math. Programming 11 (1976)
    128-149; H. Cai and M. Ng, LH-RELIEF, eq. 7 (the QP solved for each sample).
    """
    G = np.ascontiguousarray(G, dtype=np.float64)
    if G.ndim != 3 or G.shape[1] != G.shape[2]:
        raise ValueError(f"G must have shape (n, k, k), got {G.shape}")
    n, k = G.shape[0], G.shape[1]
    b = np.zeros((n, k)) if b is None else np.ascontiguousarray(b, dtype=np.float64)
    if b.shape != (n, k):
        raise ValueError(f"b must have shape {(n, k)}, got {b.shape}")
    if k == 0:
        raise ValueError("k must be >= 1")
    max_iter = 10 * k + 20 if max_iter is None else int(max_iter)
    A = np.empty((n, k))
    status = np.zeros(n, np.int64)
    nit = np.zeros(n, np.int64)
    if n:
        _wolfe_batch(G, b, float(tol), max_iter, A, status, nit)
    fun = 0.5 * np.einsum("ni,nij,nj->n", A, G, A) - np.einsum("ni,ni->n", b, A)
    worst = int(status.max()) if n else 0
    return OptimizeResult(x=A, fun=fun, status=status, nit=nit, success=worst == 0, message=_MESSAGES[worst])


def simplex_least_squares(x, H, w=None, tol=1e-12, max_iter=None):
    """Nearest point of a convex hull in a diagonal metric, for a batch.

    Solves ``min_a 1/2 (x_n - H_n a)^T W (x_n - H_n a)`` s.t. ``sum(a) = 1, a >= 0``
    (Cai & Ng, eq. 5) for every ``n`` with ``W = diag(w)``.

    Parameters
    ----------
    x : ndarray of shape (n, d)
        The points projected.
    H : ndarray of shape (n, k, d)
        ``H[n, i]`` is the ``i``-th column (prototype) of sample ``n``'s hull.
    w : ndarray of shape (d,), default=None
        Non-negative feature weights (``None``: all ones).
    tol : float, default=1e-12
        Optimality tolerance of :func:`solve_simplex_qp`.
    max_iter : int, default=None
        Active-set iterations per problem (``None``: ``10 k + 20``).

    Returns
    -------
    OptimizeResult
        As :func:`solve_simplex_qp`, plus ``projection`` (n, d), ``H_n^T a_n``.
    """
    x = np.asarray(x, dtype=np.float64)
    H = np.asarray(H, dtype=np.float64)
    D = H - x[:, None, :]
    Dw = D if w is None else D * np.asarray(w, dtype=np.float64)
    Q = np.matmul(Dw, np.swapaxes(D, 1, 2))
    Q = 0.5 * (Q + np.swapaxes(Q, 1, 2))
    res = solve_simplex_qp(Q, None, tol=tol, max_iter=max_iter)
    res.projection = np.einsum("nk,nkd->nd", res.x, H)
    res.fun = 0.5 * np.einsum("ni,nij,nj->n", res.x, Q, res.x)
    return res


@njit(cache=True)
def _gram_of_sample(X, XB, idx, w, Q, s):
    """``Q[s] = D^T W D`` with ``D[:, i] = XB[idx[s, i]] - X[s % len(X)]``.

    Each entry is summed in four fixed lanes (``f mod 4``): the same bits whichever
    thread computes it."""
    k = idx.shape[1]
    d = X.shape[1]
    x = X[s % X.shape[0]]
    diff = np.empty((k, d), np.float64)
    wdiff = np.empty((k, d), np.float64)
    for i in range(k):
        row = idx[s, i]
        for f in range(d):
            v = XB[row, f] - x[f]
            diff[i, f] = v
            wdiff[i, f] = w[f] * v
    for i in range(k):
        for j in range(i, k):
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            f = 0
            while f + 4 <= d:
                a0 += wdiff[i, f] * diff[j, f]
                a1 += wdiff[i, f + 1] * diff[j, f + 1]
                a2 += wdiff[i, f + 2] * diff[j, f + 2]
                a3 += wdiff[i, f + 3] * diff[j, f + 3]
                f += 4
            while f < d:
                a0 += wdiff[i, f] * diff[j, f]
                f += 1
            acc = (a0 + a1) + (a2 + a3)
            Q[s, i, j] = acc
            Q[s, j, i] = acc


@njit(cache=True)
def _combination_of_sample(XB, idx, A, P, s):
    """``P[s] = sum_i A[s, i] XB[idx[s, i]]``, summed over ``i`` in order."""
    d = XB.shape[1]
    for f in range(d):
        P[s, f] = 0.0
    for i in range(idx.shape[1]):
        a = A[s, i]
        if a != 0.0:
            row = idx[s, i]
            for f in range(d):
                P[s, f] += a * XB[row, f]


@njit(cache=True, nogil=True)
def _indexed_gram(X, XB, idx, w, Q, part, parts):
    """``Q[s] = D^T W D`` with ``D[:, i] = XB[idx[s, i]] - X[s % len(X)]``, without an (n, k, d) array
    (samples in parallel on large calls; the same bits either way)."""
    for s in task_range(idx.shape[0], part, parts):
        _gram_of_sample(X, XB, idx, w, Q, s)


@njit(cache=True, nogil=True)
def indexed_combination(XB, idx, A, P, part, parts):
    """``P[s] = sum_i A[s, i] XB[idx[s, i]]`` (samples in parallel on large calls; the same bits)."""
    for s in task_range(idx.shape[0], part, parts):
        _combination_of_sample(XB, idx, A, P, s)


# a hull's Gram costs about 2/5 of the common unit per (sample, hull member, feature): small calls run on one
# thread, where a parallel region costs more than it saves
_indexed_gram = size_dispatch(_indexed_gram, lambda X, XB, idx, *a: idx.size * X.shape[1] * 2 // 5)
indexed_combination = size_dispatch(indexed_combination, lambda XB, idx, *a: idx.size * XB.shape[1] * 2 // 5)


def hull_projections(X, XB, idx, w=None, tol=1e-12):
    """Coefficients and projections of each ``X[n]`` onto the hull of ``XB[idx[n]]``.

    Solves ``min_a 1/2 (x_n - H_n a)^T W (x_n - H_n a)`` s.t. ``sum(a) = 1, a >= 0``
    with ``H_n = XB[idx[n]]^T`` for every row (Cai & Ng, eq. 5).  The Gram matrices
    are built by a compiled kernel straight from the indices (no ``(n, k, d)``
    array); the QPs are solved by :func:`solve_simplex_qp`.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The points projected.
    XB : ndarray of shape (m, d)
        The samples the hulls are made of.
    idx : ndarray of int, shape (n, k) or (r n, k)
        Rows of ``XB`` spanning each sample's hull.  With ``r n`` rows, ``X`` is taken
        ``r`` times over (row ``s`` of ``idx`` belongs to ``X[s % n]``: e.g. the hits'
        and the misses' hulls of the same samples in one batch).
    w : ndarray of shape (d,), default=None
        Non-negative feature weights (``None``: all ones).
    tol : float, default=1e-12
        Optimality tolerance of :func:`solve_simplex_qp`.

    Returns
    -------
    coef : ndarray of shape (n, k)
        The convex coefficients ``a_n``.
    projection : ndarray of shape (n, d)
        The nearest points ``H_n a_n``.
    status : ndarray of shape (n,)
        The QP solver's status per row.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    XB = np.ascontiguousarray(XB, dtype=np.float64)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    n, k = idx.shape
    if n % X.shape[0]:
        raise ValueError(f"idx has {n} rows, not a multiple of X's {X.shape[0]}")
    w = np.ones(X.shape[1]) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    Q = np.empty((n, k, k))
    _indexed_gram(X, XB, idx, w, Q)
    res = solve_simplex_qp(Q, None, tol=tol)
    proj = np.empty((n, X.shape[1]))
    indexed_combination(XB, idx, res.x, proj)
    return res.x, proj, res.status
