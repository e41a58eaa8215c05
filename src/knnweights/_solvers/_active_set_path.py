"""The compiled parts of one breakpoint of SQP-FW's regularisation path: the equality QP along the
path's direction and the dual events (a multiplier reaching zero) that end a segment.
"""

import numpy as np

from ..engine.jit import full_1d, full_2d, njit
from ._active_set_kernels import _n_ties, _reps
from ._active_set_linalg import _eqp_multi


@njit(cache=True, nogil=True)
def _fill_ties_split(X, cand, state, rep, P, p, AT, ii, tt, C, nc, ET, off):
    """The tie rows of one side over all features (contiguous, the arithmetic of
    :func:`_fill_ties_at`), scattered to ``AT[q, 1 + off + r]`` over the positive features
    ``P[:p]`` (``AT[:, 0] = 1``) and to ``ET[q, off + r]`` over the zero ones ``C[:nc]``;
    returns the next free row."""
    n, K = state.shape
    d = X.shape[1]
    row = np.empty(d, np.float64)
    for i in range(n):
        r = cand[i, rep[i]]
        xi, xr = X[i], X[r]
        for k in range(K):
            if state[i, k] == 0 and k != rep[i]:
                xc = X[cand[i, k]]
                for j in range(d):
                    a = xi[j] - xc[j]
                    b = xi[j] - xr[j]
                    row[j] = a * a - b * b
                for q in range(p):
                    AT[q, off + 1] = row[P[q]]
                for q in range(nc):
                    ET[q, off] = row[C[q]]
                ii[off] = i
                tt[off] = k
                off += 1
    for q in range(p):
        AT[q, 0] = 1.0
    return off


@njit(cache=True, nogil=True)
def _path_eqp(X, hc, hs, mc, ms, Z, G):
    """EQP (4) of a path breakpoint for the rows of ``G`` (one factorisation), the fresh solve
    of :func:`_eqp_multi`: ``(dw, mu)`` row by row, the tie rows over ``Z`` (``EZT``, ``|Z| x m``, the
    layout of ``E[:, Z].T``), the ties' ``(ii, tt)`` and the number of hit ties."""
    n, d = X.shape
    hrep = np.empty(n, np.int64)
    mrep = np.empty(n, np.int64)
    _reps(hs, hrep)
    _reps(ms, mrep)
    mth = _n_ties(hs)
    mt = mth + _n_ties(ms)
    ii = np.empty(mt, np.int64)
    tt = np.empty(mt, np.int64)
    P = np.empty(d, np.int64)
    C = np.empty(d, np.int64)
    p = 0
    nc = 0
    for j in range(d):
        if Z[j]:
            C[nc] = j
            nc += 1
        else:
            P[p] = j
            p += 1
    AT = np.empty((p, mt + 1), np.float64)
    EZT = np.empty((nc, mt), np.float64)
    _fill_ties_split(X, hc, hs, hrep, P, p, AT, ii, tt, C, nc, EZT, 0)
    _fill_ties_split(X, mc, ms, mrep, P, p, AT, ii, tt, C, nc, EZT, mth)
    dw = full_2d(G.shape[0], G.shape[1], 0.0, np.float64)
    mu = np.empty((G.shape[0], mt + 1), np.float64)
    _eqp_multi(G, P, p, AT, dw, mu)
    return dw, mu, EZT, ii, tt, mth


@njit(cache=True, nogil=True)
def _release_mults(state, rep, ii, tt, lo, hi, muE, total):
    """``(n, K)`` multipliers of one side's ``[=]`` members (``multipliers`` of the path): the
    ties' from ``muE``, the representative's ``total`` minus the sum of the others'."""
    n, K = state.shape
    B = full_2d(n, K, 0.0, np.float64)
    s = full_1d(n, 0.0, np.float64)
    for r in range(lo, hi):
        B[ii[r], tt[r]] = muE[r]
        s[ii[r]] += muE[r]
    for i in range(n):
        B[i, rep[i]] = total - s[i]
    return B


@njit(cache=True, nogil=True)
def _nan_max0(x):
    """``np.maximum(x, 0.0)``."""
    return x if (x >= 0.0 or x != x) else 0.0


@njit(cache=True, nogil=True)
def _path_dual_events(Z, alpha0, alpha1, hc, hs, mc, ms, kappa, lam, ii, tt, mth, mu0, mu1, ton, inv_n, dt):
    """Dual events of a path breakpoint: the first multiplier that reaches its release sign
    before ``dt`` (the primal event's step), checked in the order of the NumPy reference in
    ``tests/test_sqpfw_path_kernels.py`` (``Z``,
    hits ``[=]->[<]``, hits ``[=]->[>]``, misses ``[=]->[<]``, misses ``[=]->[>]``, the first
    minimum of each in C order; a NaN ends a group without an event, as ``np.argmin`` finds it
    first).  Returns ``(dt, kind, i, k, target)``, ``kind`` 0 (none), 1 (``w``, ``i`` = feature),
    2 (hit), 3 (miss)."""
    n = hs.shape[0]
    d = Z.size
    kind, ei, ek, et = 0, -1, -1, 0
    anyz = False
    for j in range(d):
        if Z[j]:
            anyz = True
            break
    if anyz:
        bt, bj, nan = np.inf, 0, False
        for j in range(d):
            t = np.inf
            if Z[j] and alpha1[j] > 1e-15 and np.isfinite(alpha1[j]):
                t = _nan_max0(-alpha0[j] / alpha1[j])
            if t != t:
                bj, nan = j, True
                break
            if t < bt:
                bt, bj = t, j
        if not nan and bt < dt:
            dt, kind, ei = bt, 1, bj
    hrep = np.empty(n, np.int64)
    mrep = np.empty(n, np.int64)
    _reps(hs, hrep)
    _reps(ms, mrep)
    mt = ii.size
    for side in range(2):
        state, rep, krank = (hs, hrep, kappa) if side == 0 else (ms, mrep, lam)
        lo, hi = (0, mth) if side == 0 else (mth, mt)
        sgn = 1.0 if side == 0 else -1.0
        M0 = _release_mults(state, rep, ii, tt, lo, hi, mu0[1:], sgn * ton)
        M1 = _release_mults(state, rep, ii, tt, lo, hi, mu1[1:], sgn * inv_n)
        K = state.shape[1]
        less = full_1d(n, False, np.bool_)
        more = full_1d(n, False, np.bool_)
        for i in range(n):
            nl, ne = 0, 0
            for k in range(K):
                if state[i, k] == -1:
                    nl += 1
                elif state[i, k] == 0:
                    ne += 1
            less[i] = ne >= 2 and nl <= krank - 2
            more[i] = ne >= 2 and nl + ne > krank
        for target in (-1, 1):
            sign = float(target)
            rows = less if target == -1 else more
            bt, bi, bk, found, nan = np.inf, 0, 0, False, False
            for i in range(n):
                if nan:
                    break
                for k in range(K):
                    t = np.inf
                    if rows[i] and state[i, k] == 0:
                        m1 = sign * M1[i, k]
                        if m1 > 1e-15:
                            found = True
                            t = _nan_max0(-(sign * M0[i, k]) / m1)
                    if t != t:
                        nan = True
                        break
                    if t < bt:
                        bt, bi, bk = t, i, k
            if found and not nan and bt < dt:
                dt, kind, ei, ek, et = bt, 2 + side, bi, bk, target
    return dt, kind, ei, ek, et
