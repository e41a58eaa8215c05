"""Dense linear algebra of the SQP-FW active-set steps: the equality QP's semi-normal equations.

The Cholesky factor of the constraint rows' Gram matrix, built fresh (:func:`_eqp_multi`,
with equilibration and an SVD fallback) or maintained between steps by
column appends and deletions and rank-one up- and downdates (:func:`_factor_solve`), and the
refinement passes; every sum runs in a fixed order (no ``fastmath``).
"""

import numpy as np

from ..engine.jit import full_1d, full_2d, njit

_RCOND = 3e-7
_QR_COND = 1e-4  # full rank (Cholesky, = |R_ii| of a thin QR) when min L_ii > this * max L_ii (else SVD)
_SCALE_RANGE = 1e3  # constraint rows whose norms span more than this are equilibrated when the factor fails
_DOWN_TOL = 1e-12  # a downdate pivot U_kk^2 - x_k^2 below this * U_kk^2 counts as lost definiteness


@njit(inline="always", cache=True, nogil=True)
def _chol(M, L):
    """Cholesky ``M = L L^T`` (lower); returns ``min L_ii / max L_ii`` (0 when a pivot is not positive)."""
    m = M.shape[0]
    dmin, dmax = np.inf, 0.0
    for c in range(m):
        s = M[c, c]
        for k in range(c):
            s -= L[c, k] * L[c, k]
        if not s > 0.0:
            return 0.0
        lc = np.sqrt(s)
        L[c, c] = lc
        dmin = min(dmin, lc)
        dmax = max(dmax, lc)
        for r in range(c + 1, m):
            t = M[r, c]
            for k in range(c):
                t -= L[r, k] * L[c, k]
            L[r, c] = t / lc
    return dmin / dmax


@njit(inline="always", cache=True, nogil=True)
def _chol_solve(L, b):
    m = b.size
    y = np.empty(m, np.float64)
    for r in range(m):
        s = b[r]
        for k in range(r):
            s -= L[r, k] * y[k]
        y[r] = s / L[r, r]
    for r in range(m - 1, -1, -1):
        s = y[r]
        for k in range(r + 1, m):
            s -= L[k, r] * y[k]
        y[r] = s / L[r, r]
    return y


@njit(inline="always", cache=True, nogil=True)
def _acc_rows(AT, A, p, m, x, t, subtract):
    """``t[q] -= AT[q, r] x[r]`` (``subtract``) or ``t[q] += AT[q, r] x[r]`` for ``r = 0, ..., m - 1``
    in that order, every ``q < p``.  With ``A = AT^T`` (contiguous rows; empty for small
    systems, where the row-by-row loop is cheaper) the rows run side by side (independent
    chains, SIMD): each ``t[q]`` sees the same operations in the same order either way."""
    if A.shape[0] == 0:
        for q in range(p):
            s = t[q]
            if subtract:
                for r in range(m):
                    s -= AT[q, r] * x[r]
            else:
                for r in range(m):
                    s += AT[q, r] * x[r]
            t[q] = s
        return
    for r in range(m):
        xr = x[r]
        Ar = A[r]
        if subtract:
            for q in range(p):
                t[q] = t[q] - Ar[q] * xr
        else:
            for q in range(p):
                t[q] = t[q] + Ar[q] * xr


@njit(cache=True, nogil=True)
def _eqp_multi(G, P, p, AT, DW, MU):
    """EQP (4) from its constraint matrix ``AT = [1, E_P^T]`` (``p x m``, rows = positive features ``P``),
    for every row ``g`` of ``G`` (one factorisation for all; ``DW``, ``MU`` row by row).

    ``mu`` is the least-squares solution of ``AT mu = -g_P`` and ``dw_P = -(g_P + AT mu)``:
    :func:`_eqp_chol` when the constraint rows have full rank, else :func:`_eqp_svd`.  Called
    from compiled code; the step loop calls :func:`solve_eqp`, which compiles the SVD path
    only when a problem needs it.
    """
    sc = full_1d(AT.shape[1], 1.0, np.float64)
    if not _eqp_chol(G, P, p, AT, DW, MU, sc):
        _eqp_svd(G, P, p, AT, DW, MU, sc)


def solve_eqp(G, P, p, AT, DW, MU):
    """:func:`_eqp_multi` from Python: the SVD path is compiled on its first use.

    Parameters
    ----------
    G : ndarray of shape (n_rhs, d)
        Gradients, one right-hand side per row.
    P : ndarray of int, shape (d,)
        The positive features (first ``p`` entries).
    p : int
        How many there are.
    AT : ndarray of shape (p, m)
        The constraint matrix ``[1, E_P^T]``.
    DW : ndarray of shape (n_rhs, d)
        Receives the steps ``dw``.
    MU : ndarray of shape (n_rhs, m)
        Receives the multipliers ``mu``.
    """
    sc = np.ones(AT.shape[1])
    if not _eqp_chol(G, P, p, AT, DW, MU, sc):
        _eqp_svd(G, P, p, AT, DW, MU, sc)


@njit(cache=True, nogil=True)
def _eqp_chol(G, P, p, AT, DW, MU, sc):
    """EQP (4) by semi-normal equations when the constraint rows have full column rank; False
    (nothing written, ``sc`` the rows' equilibration scales, ones if none) otherwise.

    Full rank: the Cholesky factor ``L`` of ``AT^T AT`` has ``min L_ii > _QR_COND max L_ii``
    (``L_ii = |R_ii|`` of a thin QR of ``AT``, so this is a QR's rank test); then
    ``L L^T mu = -AT^T g_P`` with two refinement passes (each ``O(p m)``), the Gram matrix by
    one BLAS product.  Rows of very different scale (raw data: tie rows ~1e8 against the
    all-ones row) fail the test and would make the SVD drop the sum constraint, so they are
    tried again at unit RMS (the same least-squares problem; ``mu`` scaled back).
    """
    m = AT.shape[1]
    nr = G.shape[0]
    if m == 1:
        DW[:] = 0.0
        for h in range(nr):
            s = 0.0
            for q in range(p):
                s += G[h, P[q]]
            MU[h, 0] = -(s / p)
            for q in range(p):
                DW[h, P[q]] = -(G[h, P[q]] + MU[h, 0])
        return True
    ok = False
    L = full_2d(m, m, 0.0, np.float64)
    for attempt in range(2):  # as given, then at unit RMS when the rows' scales span _SCALE_RANGE
        if attempt == 1:
            if not _equilibrate(AT, p, m, sc):
                break
            AT = _scaled_columns(AT, sc)
        if m <= p:
            M = AT.T @ AT
            L[:] = 0.0
            ok = _chol(M, L) > _QR_COND
            if ok:
                break
    if not ok:
        return False
    DW[:] = 0.0
    gp = np.empty(p, np.float64)
    res = np.empty(p, np.float64)
    x = np.empty(m, np.float64)
    A = _rows_of(AT, p, m)
    for h in range(nr):
        for q in range(p):
            gp[q] = -G[h, P[q]]
        for it in range(3):  # the solve, then two refinement passes on the residual
            for q in range(p):  # a loop: a slice copy compiles numba's shape-mismatch error path
                res[q] = gp[q]
            if it > 0:
                _acc_rows(AT, A, p, m, x, res, True)
            x2 = _chol_solve(L, AT.T @ res)
            for r in range(m):
                x[r] = x2[r] if it == 0 else x[r] + x2[r]
        for r in range(m):
            MU[h, r] = x[r]
        _dw_from_mu(G, h, P, p, AT, A, DW, MU, sc, res)
    return True


@njit(cache=True, nogil=True)
def _eqp_svd(G, P, p, AT, DW, MU, sc):
    """EQP (4) for rank-deficient constraint rows (scaled by ``sc``): the minimum-norm solution
    of an SVD (cut-off ``_RCOND``) with one refinement pass."""
    m = AT.shape[1]
    AT = _scaled_columns(AT, sc)
    U, sv, Vt = np.linalg.svd(AT, full_matrices=False)
    rank = 0
    for r in range(sv.size):
        if sv[r] > _RCOND * sv[0]:
            rank += 1
    DW[:] = 0.0
    gp = np.empty(p, np.float64)
    res = np.empty(p, np.float64)
    A = _rows_of(AT, p, m)
    for h in range(G.shape[0]):
        for q in range(p):
            gp[q] = -G[h, P[q]]
        x = _svd_solve(U, sv, Vt, rank, gp)
        for q in range(p):
            res[q] = G[h, P[q]]
        _acc_rows(AT, A, p, m, x, res, False)
        for q in range(p):
            res[q] = -res[q]
        x2 = _svd_solve(U, sv, Vt, rank, res)
        for r in range(m):
            MU[h, r] = x[r] + x2[r]
        _dw_from_mu(G, h, P, p, AT, A, DW, MU, sc, res)


@njit(inline="always", cache=True, nogil=True)
def _scaled_columns(AT, sc):
    """``AT * sc`` column by column (loops: no broadcasting compiled)."""
    out = np.empty(AT.shape, np.float64)
    for q in range(AT.shape[0]):
        for r in range(AT.shape[1]):
            out[q, r] = AT[q, r] * sc[r]
    return out


@njit(inline="always", cache=True, nogil=True)
def _rows_of(AT, p, m):
    """``AT^T`` with contiguous rows for the residual passes of larger systems (empty: by rows of ``AT``)."""
    return np.ascontiguousarray(AT.T) if p * m >= 1024 else np.empty((0, 0), np.float64)


@njit(inline="always", cache=True, nogil=True)
def _dw_from_mu(G, h, P, p, AT, A, DW, MU, sc, res):
    """``dw_P = -(g_P + AT mu)`` for row ``h``, then ``mu`` scaled back by ``sc``."""
    m = AT.shape[1]
    for q in range(p):
        res[q] = G[h, P[q]]
    _acc_rows(AT, A, p, m, MU[h], res, False)
    for q in range(p):
        DW[h, P[q]] = -res[q]
    for r in range(m):
        MU[h, r] *= sc[r]


@njit(inline="always", cache=True, nogil=True)
def _equilibrate(AT, p, m, sc):
    """Unit-RMS scales ``sc`` of the columns of ``AT`` (``p x m``) when their norms span more than
    ``_SCALE_RANGE`` (then True; ``sc`` stays 1 otherwise)."""
    lo, hi = np.inf, 0.0
    for r in range(m):
        t = 0.0
        for q in range(p):
            t += AT[q, r] * AT[q, r]
        t = np.sqrt(t / max(p, 1))
        sc[r] = t
        lo = min(lo, t)
        hi = max(hi, t)
    if not (lo > 0.0 and hi > _SCALE_RANGE * lo):
        sc[:] = 1.0
        return False
    for r in range(m):
        sc[r] = 1.0 / sc[r]
    return True


@njit(cache=True, nogil=True)
def _svd_solve(U, sv, Vt, rank, b):
    """``V_r diag(1/s_r) U_r^T b``: the minimum-norm least-squares solution at rank ``rank``."""
    y = np.empty(rank, np.float64)
    for r in range(rank):
        t = 0.0
        for i in range(b.shape[0]):  # a column of U: strided, summed in order
            t += U[i, r] * b[i]
        y[r] = t / sv[r]
    x = full_1d(Vt.shape[1], 0.0, np.float64)
    for r in range(rank):
        yr = y[r]
        for c in range(x.size):
            x[c] += yr * Vt[r, c]
    return x


@njit(cache=True, nogil=True)
def _chol_rank1(U, lo, hi, x, sign):
    """``U^T U += sign x x^T`` on the block ``[lo, hi)`` (``x`` overwritten); False if a downdate
    loses positive definiteness."""
    for k in range(lo, hi):
        ukk = U[k, k]
        r2 = ukk * ukk + sign * x[k] * x[k]
        if sign < 0 and not r2 > _DOWN_TOL * ukk * ukk:
            return False
        r = np.sqrt(r2)
        c = r / ukk
        s = x[k] / ukk
        ci = 1.0 / c
        ss = sign * s
        U[k, k] = r
        for j in range(k + 1, hi):
            u = (U[k, j] + ss * x[j]) * ci
            U[k, j] = u
            x[j] = c * x[j] - s * u
    return True


@njit(cache=True, nogil=True)
def _chol_delete(U, fm, f):
    """Remove column / row ``f`` of the Gram matrix from its factor (leading ``fm x fm`` block)."""
    x = np.empty(fm, np.float64)  # indexed as U's columns: one compilation of _chol_rank1 (on U itself)
    for j in range(f + 1, fm):
        x[j] = U[f, j]
    _chol_rank1(U, f + 1, fm, x, 1.0)
    for r in range(f):
        for j in range(f, fm - 1):
            U[r, j] = U[r, j + 1]
    for r in range(f + 1, fm):
        for j in range(r, fm):
            U[r - 1, j - 1] = U[r, j]


@njit(cache=True, nogil=True)
def _chol_append(U, fm, b, dd):
    """Append a column with Gram entries ``b`` (against the ``fm`` columns) and ``dd`` (its own);
    False when the new pivot is not positive."""
    l = b[:fm].copy()
    for r in range(fm):
        l[r] /= U[r, r]
        lr = l[r]
        for j in range(r + 1, fm):
            l[j] -= lr * U[r, j]
    t = dd
    for r in range(fm):
        t -= l[r] * l[r]
        U[r, fm] = l[r]
    if not t > 0.0:
        return False
    U[fm, fm] = np.sqrt(t)
    return True


@njit(cache=True, nogil=True)
def _forward_solve(U, fm, y):
    """``y <- U^{-T} y`` by rows of ``U``, four rows per pass over ``y``: each ``y[j]`` sees the
    multiply-subtracts of rows ``0, 1, ...`` in order and its division, as the row-at-a-time
    loop (no reassociation: the same bits)."""
    r0 = 0
    while r0 + 4 <= fm:
        for r in range(r0, r0 + 4):  # the 4 x 4 triangle
            y[r] /= U[r, r]
            yr = y[r]
            for j in range(r + 1, r0 + 4):
                y[j] -= yr * U[r, j]
        y0, y1, y2, y3 = y[r0], y[r0 + 1], y[r0 + 2], y[r0 + 3]
        U0, U1, U2, U3 = U[r0], U[r0 + 1], U[r0 + 2], U[r0 + 3]
        for j in range(r0 + 4, fm):
            t = y[j]
            t = t - y0 * U0[j]
            t = t - y1 * U1[j]
            t = t - y2 * U2[j]
            t = t - y3 * U3[j]
            y[j] = t
        r0 += 4
    for r in range(r0, fm):
        y[r] /= U[r, r]
        yr = y[r]
        for j in range(r + 1, fm):
            y[j] -= yr * U[r, j]


@njit(cache=True, nogil=True)
def _sub_rows(B, fm, p, x, res):
    """``res[q] -= B[f, q] x[f]`` for ``f = 0, ..., fm - 1`` in order, four rows per pass over
    ``res`` (each element the same fused multiply-subtracts in the same order)."""
    f = 0
    while f + 4 <= fm:
        B0, B1, B2, B3 = B[f], B[f + 1], B[f + 2], B[f + 3]
        x0, x1, x2, x3 = x[f], x[f + 1], x[f + 2], x[f + 3]
        for q in range(p):
            t = res[q]
            t = t - B0[q] * x0
            t = t - B1[q] * x1
            t = t - B2[q] * x2
            t = t - B3[q] * x3
            res[q] = t
        f += 4
    while f < fm:
        Bf, xf = B[f], x[f]
        for q in range(p):
            res[q] -= Bf[q] * xf
        f += 1


@njit(cache=True, nogil=True)
def _utu_solve(U, fm, b):
    """``x`` with ``U^T U x = b`` (leading ``fm x fm`` block of ``U``)."""
    y = b[:fm].copy()
    _forward_solve(U, fm, y)
    for r in range(fm - 1, -1, -1):
        s = y[r]
        for j in range(r + 1, fm):
            s -= U[r, j] * y[j]
        y[r] = s / U[r, r]
    return y


@njit(cache=True, nogil=True)
def _rows_dot(B, fm, p, v):
    out = np.empty(fm, np.float64)
    for f in range(fm):
        t = 0.0
        for q in range(p):
            t += B[f, q] * v[q]
        out[f] = t
    return out


@njit(cache=True, nogil=True)
def _factor_solve(g, P, p, B, U, fm, perm, fsc, dw, mu):
    """EQP (4) through the factor ``U^T U = B B^T`` (``B``: ``fm x p``, column ``f`` of the
    factor is column ``perm[f]`` of ``[1, E_P^T]``): the semi-normal equations with the same
    two ``O(p m)`` refinement passes as :func:`_eqp_multi`."""
    gp = np.empty(p, np.float64)
    for q in range(p):
        gp[q] = -g[P[q]]
    x = _utu_solve(U, fm, _rows_dot(B, fm, p, gp))
    res = np.empty(p, np.float64)
    for _ in range(3):
        for q in range(p):
            res[q] = gp[q]
        _sub_rows(B, fm, p, x, res)
        if _ == 2:
            break
        x2 = _utu_solve(U, fm, _rows_dot(B, fm, p, res))
        for f in range(fm):
            x[f] += x2[f]
    dw[:] = 0.0
    for q in range(p):
        dw[P[q]] = res[q]
    for f in range(fm):
        mu[perm[f]] = x[f] * fsc[f]
