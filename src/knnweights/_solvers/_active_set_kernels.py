"""Compiled kernels of the SQP-FW active-set steps (Algorithm 1 of Takeuchi & Sugiyama, 2011).

The step loop (:mod:`._active_set_steps`) calls these on the array state of
:mod:`knnweights._solvers.active_set`: the representatives and ties of the candidate lists,
the TN gradient ``c`` (fresh or updated per changed representative), the tie rows of EQP (4)
over the positive features, the cached candidate distances ``D = eps . w``, Lemma 5's
directional distances ``eps . dw`` with the min-ratio test (a fused pass over the lists, or
one all-pairs matrix product when the lists hold about half the samples and ``dw`` has many
non-zeros), the objective, Lemma 6's multipliers ``alpha_Z`` and the releases, and the
maintained Cholesky factor of the EQP's Gram matrix (``|P| >= maint_min_p``).  Ties between
blocking steps and between release multipliers go to the first sample, then the smallest
candidate index (``_TIE`` relative), so the pivots do not depend on the order of the lists.
The dense linear algebra of the EQP lives in :mod:`._active_set_linalg`; the path's
breakpoint kernels in :mod:`._active_set_path`.
"""

import numpy as np

from ..engine.jit import full_1d, full_2d, njit
from ._active_set_linalg import (
    _QR_COND,
    _chol,
    _chol_append,
    _chol_delete,
    _chol_rank1,
    _equilibrate,
    _factor_solve,
)

_TIE = 1e-9  # relative: blocking steps / release multipliers this close count as equal
_RT = 1e-9  # relative to max |eps . dw|: smaller slopes are EQP rounding noise (rows in the active span)
_STALE = 50  # the cached distances are recomputed after this many incremental updates
_STALE_C = 100  # c is updated per representative change and recomputed after this many steps


@njit(cache=True, nogil=True)
def _pair_dots(X, cand, v, nz, p, out):
    """``out[i, k] = sum_j (X[i, j] - X[cand[i, k], j])**2 v[j]`` over the columns ``nz[:p]``.

    When most columns are listed the loop runs over all of them (contiguous, SIMD);
    the others have ``v[j] == 0`` and add nothing.
    """
    n, K = cand.shape
    d = X.shape[1]
    dense = 2 * p > d
    rmax = 0.0
    for i in range(n):
        xi = X[i]
        for k in range(K):
            c = cand[i, k]
            s = 0.0
            if c >= 0:
                xc = X[c]
                if dense:
                    for j in range(d):
                        t = xi[j] - xc[j]
                        s += t * t * v[j]
                else:
                    for q in range(p):
                        j = nz[q]
                        t = xi[j] - xc[j]
                        s += t * t * v[j]
            out[i, k] = s
            a = abs(s)
            rmax = max(rmax, a)
    return rmax


@njit(inline="always", cache=True, nogil=True)
def _support(v, nz):
    p = 0
    for j in range(v.size):
        if v[j] != 0.0:
            nz[p] = j
            p += 1
    return p


@njit(inline="always", cache=True, nogil=True)
def _reps(state, rep):
    n, K = state.shape
    for i in range(n):
        r = 0
        for k in range(K):
            if state[i, k] == 0:
                r = k
                break
        rep[i] = r


@njit(inline="always", cache=True, nogil=True)
def _n_ties(state):
    m = 0
    n, K = state.shape
    for i in range(n):
        first = True
        for k in range(K):
            if state[i, k] == 0:
                if first:
                    first = False
                else:
                    m += 1
    return m


@njit(cache=True, nogil=True)
def _fill_ties_at(X, cand, state, rep, P, p, AT, ii, tt, off):
    """Columns ``1 + off, ...`` of ``AT = [1, E_P^T]``: the tie rows of one side restricted to
    the positive features ``P[:p]`` (column 0 is the all-ones row); returns the next free row."""
    n, K = state.shape
    for i in range(n):
        r = cand[i, rep[i]]
        for k in range(K):
            if state[i, k] == 0 and k != rep[i]:
                c = cand[i, k]
                for q in range(p):
                    j = P[q]
                    a = X[i, j] - X[c, j]
                    b = X[i, j] - X[r, j]
                    AT[q, off + 1] = a * a - b * b
                ii[off] = i
                tt[off] = k
                off += 1
    for q in range(p):
        AT[q, 0] = 1.0
    return off


@njit(inline="always", cache=True, nogil=True)
def _c_vector(X, hc, hrep, mc, mrep, c):
    n, d = X.shape
    c[:] = 0.0
    for i in range(n):
        h = hc[i, hrep[i]]
        m = mc[i, mrep[i]]
        for j in range(d):
            a = X[i, j] - X[h, j]
            b = X[i, j] - X[m, j]
            c[j] += a * a - b * b


@njit(inline="always", cache=True, nogil=True)
def _c_update(X, cand, rep, samp, sign, c):
    """``c += sign (eps_{i,new} - eps_{i,old})`` for every sample whose representative changed."""
    n, d = X.shape
    for i in range(n):
        new = cand[i, rep[i]]
        old = samp[i]
        if new != old:
            for j in range(d):
                a = X[i, j] - X[new, j]
                b = X[i, j] - X[old, j]
                c[j] += sign * (a * a - b * b)
            samp[i] = new


@njit(inline="always", cache=True, nogil=True)
def _block_ratio(D, R, state, i, k, s0, q0, rt):
    """Step length at which candidate ``k`` of sample ``i`` meets its target (``inf`` when the
    step moves it away): a ``<`` member rising to the target, or a ``>`` member falling to it."""
    st = state[i, k]
    r = R[i, k] - q0
    if (st == -1 and r > rt) or (st == 1 and r < -rt):
        t = -(D[i, k] - s0) / r
        return t if t > 0.0 else 0.0
    return np.inf


@njit(cache=True, nogil=True)
def _pair_matrix(X, v, nz, p, out):
    """``out[i, j] = eps_{i,j} . v`` for every pair, by one BLAS product over the columns ``nz[:p]``.

    ``eps_{i,j} . v = a_i + a_j - 2 (X diag(v) X^T)_{ij}`` with ``a_i = sum_l v_l x_il^2``:
    ``O(n^2 p)`` in a matrix product instead of ``O(n K p)`` gathered pair loops; it pays off
    when the candidate lists hold most samples and ``p`` is large (microarrays).
    """
    n = X.shape[0]
    XP = np.empty((n, p), np.float64)
    XV = np.empty((n, p), np.float64)
    a = full_1d(n, 0.0, np.float64)
    for i in range(n):
        s = 0.0
        for q in range(p):
            j = nz[q]
            x = X[i, j]
            XP[i, q] = x
            XV[i, q] = x * v[j]
            s += x * x * v[j]
        a[i] = s
    G = XV @ XP.T
    for i in range(n):
        out[i, i] = 0.0
        for j in range(i + 1, n):
            t = a[i] + a[j] - 2.0 * G[i, j]
            out[i, j] = t
            out[j, i] = t


@njit(cache=True, nogil=True)
def _gather_pairs(Rn, cand, R):
    n, K = cand.shape
    rmax = 0.0
    for i in range(n):
        for k in range(K):
            c = cand[i, k]
            s = Rn[i, c] if c >= 0 else 0.0
            R[i, k] = s
            rmax = max(rmax, abs(s))
    return rmax


@njit(inline="always", cache=True, nogil=True)
def _side_ratio(X, cand, state, rep, D, R, dw, nzP, p):
    """Directional distances ``R = eps . dw`` and the min-ratio test of one side (Lemma 5)."""
    rmax = _pair_dots(X, cand, dw, nzP, p, R)
    return _ratio_from(cand, state, rep, D, R, rmax)


@njit(inline="always", cache=True, nogil=True)
def _use_pair_matrix(n, K, p, gemm_min_p):
    """The all-pairs product pays off when the lists hold about half the samples or more and ``p`` is large."""
    return p >= gemm_min_p and 2 * K >= n


@njit(cache=True, nogil=True)
def _both_ratios(X, hc, hs, hrep, Dh, Rh, mc, ms, mrep, Dm, Rm, dw, nzP, p, gemm_min_p):
    """Lemma 5 over both sides: ``(t_hit, i, k, t_miss, i, k)`` with ``Rh``/``Rm`` filled."""
    n = X.shape[0]
    if gemm_min_p is not None and _use_pair_matrix(n, hc.shape[1] + mc.shape[1], p, gemm_min_p):
        Rn = np.empty((n, n), np.float64)
        _pair_matrix(X, dw, nzP, p, Rn)
        rh = _gather_pairs(Rn, hc, Rh)
        rm = _gather_pairs(Rn, mc, Rm)
        th, ih, kh = _ratio_from(hc, hs, hrep, Dh, Rh, rh)
        tm, im, km = _ratio_from(mc, ms, mrep, Dm, Rm, rm)
    else:
        th, ih, kh = _side_ratio(X, hc, hs, hrep, Dh, Rh, dw, nzP, p)
        tm, im, km = _side_ratio(X, mc, ms, mrep, Dm, Rm, dw, nzP, p)
    return th, ih, kh, tm, im, km


@njit(cache=True, nogil=True)
def _both_distances(X, hc, mc, w, Dh, Dm, gemm_min_p):
    """:func:`candidate_distances` of both sides (one all-pairs product when it pays off)."""
    n, d = X.shape
    nz = np.empty(d, np.int64)
    p = _support(w, nz)
    if gemm_min_p is not None and _use_pair_matrix(n, hc.shape[1] + mc.shape[1], p, gemm_min_p):
        Rn = np.empty((n, n), np.float64)
        _pair_matrix(X, w, nz, p, Rn)
        _gather_pairs(Rn, hc, Dh)
        _gather_pairs(Rn, mc, Dm)
    else:
        _pair_dots(X, hc, w, nz, p, Dh)
        _pair_dots(X, mc, w, nz, p, Dm)


@njit(cache=True, nogil=True)
def _ratio_from(cand, state, rep, D, R, rmax):
    """The min-ratio test of one side (Lemma 5) from the directional distances ``R``."""
    n, K = cand.shape
    rt = _RT * (rmax + 1e-300)
    best = np.inf
    tmin = np.empty(n, np.float64)  # each sample's smallest blocking step
    for i in range(n):
        r0 = rep[i]
        s0 = D[i, r0]
        q0 = R[i, r0]
        bi = np.inf
        for k in range(K):
            if cand[i, k] < 0:
                continue
            t = _block_ratio(D, R, state, i, k, s0, q0, rt)
            if t < bi:
                bi = t
        tmin[i] = bi
        if bi < best:
            best = bi
    if best == np.inf:
        return best, -1, -1
    # the first blocking constraint (sample order, then candidate sample index, so that
    # the choice does not depend on the order of the candidate lists) among those within
    # rounding of the minimum: simultaneous blocks are common (ties held as equalities
    # move in lockstep); only samples whose own minimum is within it are searched again
    lim = best + _TIE * best
    for i in range(n):
        if tmin[i] > lim:
            continue
        bk = -1
        r0 = rep[i]
        s0 = D[i, r0]
        q0 = R[i, r0]
        for k in range(K):
            if cand[i, k] < 0:
                continue
            t = _block_ratio(D, R, state, i, k, s0, q0, rt)
            if t <= lim and (bk < 0 or cand[i, k] < cand[i, bk]):
                bk = k
        if bk >= 0:
            return best, i, bk
    return best, -1, -1


@njit(inline="always", cache=True, nogil=True)
def _objective(Dh, hrep, Dm, mrep, w, w_bar, theta, n):
    s = 0.0
    for i in range(Dh.shape[0]):
        s += Dh[i, hrep[i]] - Dm[i, mrep[i]]
    q = 0.0
    for j in range(w.size):
        q += (w[j] - w_bar[j]) ** 2
    return theta / n * s + 0.5 * q


@njit(cache=True, nogil=True)
def _best_release_side(cand, state, rep, mult_ties, ii, tt, lo, hi, k_rank, total, sign, target, best):
    """Best ``[=]`` release of one side and one direction: ``(value, i, k)`` improving on ``best``."""
    n, K = state.shape
    bv = best
    # multipliers of the non-representative members, then of the representatives
    # (theta/n minus the others' sum for hits, -theta/n minus it for misses)
    M = full_2d(n, K, 0.0, np.float64)
    repsum = full_1d(n, 0.0, np.float64)
    for r in range(lo, hi):
        M[ii[r], tt[r]] = mult_ties[r]
        repsum[ii[r]] += mult_ties[r]
    for i in range(n):
        M[i, rep[i]] = total - repsum[i]
    ok = full_1d(n, False, np.bool_)
    for i in range(n):
        nl = 0
        ne = 0
        for k in range(K):
            if state[i, k] == -1:
                nl += 1
            elif state[i, k] == 0:
                ne += 1
        if target == -1:
            ok[i] = ne >= 2 and nl <= k_rank - 2
        else:
            ok[i] = ne >= 2 and nl + ne > k_rank
        if not ok[i]:
            continue
        for k in range(K):
            if state[i, k] == 0 and sign * M[i, k] > bv:
                bv = sign * M[i, k]
    if bv <= best:
        return bv, -1, -1
    lim = bv - _TIE * abs(bv)  # the first (sample order) among multipliers within rounding of the largest
    for i in range(n):
        if ok[i]:
            bk = -1
            for k in range(K):
                if state[i, k] == 0 and sign * M[i, k] >= lim and (bk < 0 or cand[i, k] < cand[i, bk]):
                    bk = k
            if bk >= 0:
                return bv, i, bk
    return bv, -1, -1


@njit(cache=True, nogil=True)
def _tie_combination(X, hc, hrep, mc, mrep, ii, tt, mth, mt, mu, acc):
    """``acc = E^T mu_E`` over all features: ``sum_r mu_r eps_{i,c_r}`` minus, per sample and
    side, the sum of its multipliers times ``eps_{i,rep}``.  The rows go four at a time (one
    pass over ``acc`` per four rows).  Only the choice of the released constraint reads
    ``alpha`` (the largest, within ``_TIE``), never the weights."""
    n, d = X.shape
    S = full_2d(2, n, 0.0, np.float64)
    nr = mt + 2 * n
    ri = np.empty(nr, np.int64)
    rc = np.empty(nr, np.int64)
    rw = np.empty(nr, np.float64)
    for r in range(mt):
        i = ii[r]
        side = 0 if r < mth else 1
        ri[r] = i
        rc[r] = hc[i, tt[r]] if side == 0 else mc[i, tt[r]]
        rw[r] = mu[r + 1]
        S[side, i] += mu[r + 1]
    m = mt
    for side in range(2):
        for i in range(n):
            s = S[side, i]
            if s != 0.0:
                ri[m] = i
                rc[m] = hc[i, hrep[i]] if side == 0 else mc[i, mrep[i]]
                rw[m] = -s
                m += 1
    acc[:] = 0.0
    r = 0
    while r + 4 <= m:
        x0, c0, w0 = X[ri[r]], X[rc[r]], rw[r]
        x1, c1, w1 = X[ri[r + 1]], X[rc[r + 1]], rw[r + 1]
        x2, c2, w2 = X[ri[r + 2]], X[rc[r + 2]], rw[r + 2]
        x3, c3, w3 = X[ri[r + 3]], X[rc[r + 3]], rw[r + 3]
        for j in range(d):
            a0 = x0[j] - c0[j]
            a1 = x1[j] - c1[j]
            a2 = x2[j] - c2[j]
            a3 = x3[j] - c3[j]
            acc[j] += (a0 * a0 * w0 + a1 * a1 * w1) + (a2 * a2 * w2 + a3 * a3 * w3)
        r += 4
    while r < m:
        x0, c0, w0 = X[ri[r]], X[rc[r]], rw[r]
        for j in range(d):
            a0 = x0[j] - c0[j]
            acc[j] += a0 * a0 * w0
        r += 1


@njit(cache=True, nogil=True)
def _step_start(X, hc, hs, mc, ms, hrep, mrep, hsamp, msamp, c, c_age, ton, w, w_bar, g, Z, Pcols):
    """The start of a step: representatives, ``c`` (fresh every ``_STALE_C`` steps, else updated
    per changed representative: ``O(d)`` per change), the gradient ``g`` and the positive
    features ``Pcols[:p]``; returns ``(c_age, max |g|, hit ties, all ties, p)``."""
    n, d = X.shape
    _reps(hs, hrep)
    _reps(ms, mrep)
    if c_age >= _STALE_C:
        _c_vector(X, hc, hrep, mc, mrep, c)
        for i in range(n):
            hsamp[i] = hc[i, hrep[i]]
            msamp[i] = mc[i, mrep[i]]
        c_age = 0
    else:
        _c_update(X, hc, hrep, hsamp, 1.0, c)
        _c_update(X, mc, mrep, msamp, -1.0, c)
        c_age += 1
    gmax = 0.0
    for j in range(d):
        g[j] = ton * c[j] + w[j] - w_bar[j]
        if abs(g[j]) > gmax:
            gmax = abs(g[j])
    p = 0
    for j in range(d):
        if not Z[j]:
            Pcols[p] = j
            p += 1
    mth = _n_ties(hs)
    return c_age, gmax, mth, mth + _n_ties(ms), p


@njit(cache=True, nogil=True)
def _maint_eqp(X, g, Z, Pcols, p, hc, hs, hrep, hpos, mc, ms, mrep, mpos, U, fkey, fst, perm, fsc, B, Pb, posP,
               ii, tt, mth, mt, dw, mu):
    """EQP (4) through the maintained factor (:func:`_eqp_maint`) with this step's tie keys; False:
    solve it afresh."""
    skey = full_2d(mt + 1, 4, 0, np.int64)
    _tie_keys(hs, hrep, 1, skey, ii, tt, 0)
    _tie_keys(ms, mrep, 2, skey, ii, tt, mth)
    for r in range(mt):
        if r < mth:
            hpos[ii[r], tt[r]] = r + 1
        else:
            mpos[ii[r], tt[r]] = r + 1
    done = _eqp_maint(X, g, Z, Pcols, p, skey, hc, hrep, hpos, mc, mrep, mpos, U, fkey, fst, perm, fsc,
                      B, Pb, posP, dw, mu)
    for r in range(mt):
        if r < mth:
            hpos[ii[r], tt[r]] = 0
        else:
            mpos[ii[r], tt[r]] = 0
    return done


@njit(cache=True, nogil=True)
def _feature_block(w, Z, dw, gmax, nzP):
    """Whether ``dw`` moves (``max |dw| > 1e-10 max(1, max |g|)``), and Lemma 5's blocking feature:
    ``(moves, step, kind, j, |supp dw|)`` with ``kind = 1`` when a weight reaches 0 before a
    full step (``step`` its length, ``j`` the first such feature), the support in ``nzP``."""
    d = w.size
    dmax = 0.0
    for j in range(d):
        if abs(dw[j]) > dmax:
            dmax = abs(dw[j])
    if not dmax > 1e-10 * max(1.0, gmax):
        return False, 1.0, 0, -1, 0
    best, kind, wj = 1.0, 0, -1
    tmin, jmin = np.inf, -1
    for j in range(d):
        if not Z[j] and dw[j] < 0:
            t = -w[j] / dw[j]
            if t < tmin:
                tmin = t
    for j in range(d):
        if not Z[j] and dw[j] < 0 and -w[j] / dw[j] <= tmin + _TIE * tmin:
            jmin = j
            break
    if jmin >= 0 and tmin < best:
        best, kind, wj = max(tmin, 0.0), 1, jmin
    p = 0
    for j in range(d):
        if dw[j] != 0.0:
            nzP[p] = j
            p += 1
    return True, best, kind, wj, p


@njit(cache=True, nogil=True)
def _apply_move(X, w, Z, w_bar, dw, tau, kind, wj, wi, wk, hc, hs, hrep, Dh, Rh, mc, ms, mrep, Dm, Rm, dinfo,
                theta, gemm_min_p):
    """The move ``w += tau dw`` (the cached distances along), the blocking constraint made
    active (``kind`` 1: weight ``wj``; 2 / 3: hit / miss ``(wi, wk)`` into ``[=]``); returns the
    objective after it."""
    n, d = X.shape
    neg = False
    for j in range(d):
        w[j] = w[j] + tau * dw[j]
        if w[j] < 0:
            neg = True
    for i in range(n):
        for k in range(hc.shape[1]):
            Dh[i, k] = Dh[i, k] + tau * Rh[i, k]
        for k in range(mc.shape[1]):
            Dm[i, k] = Dm[i, k] + tau * Rm[i, k]
    dinfo[1] += 1
    if neg:
        for j in range(d):
            if w[j] < 0:
                w[j] = 0.0
        dinfo[0] = 0
    for j in range(d):
        if Z[j]:
            w[j] = 0.0
    if kind == 1:
        w[wj] = 0.0
        Z[wj] = True
    elif kind == 2:
        hs[wi, wk] = 0
    elif kind == 3:
        ms[wi, wk] = 0
    if dinfo[0] == 0 or dinfo[1] >= _STALE:
        _both_distances(X, hc, mc, w, Dh, Dm, gemm_min_p)
        dinfo[0], dinfo[1] = 1, 0
    _reps(hs, hrep)
    _reps(ms, mrep)
    return _objective(Dh, hrep, Dm, mrep, w, w_bar, theta, n)


@njit(cache=True, nogil=True)
def _zero_step(X, g, Z, hc, hs, hrep, mc, ms, mrep, ii, tt, mth, mt, mu, kappa, lam, ton, gmax,
               maint_min_p):
    """A zero step: the multipliers of Lemma 6 and the release with the largest one (Theorem 7:
    none positive is the local minimum).  ``alpha_Z = -(g_Z + nu + E_Z^T mu_E)``: with
    ``d >= maint_min_p`` and ``|Z| > d / 2`` one dense pass over the features per tie and one per
    representative (:func:`_tie_combination`), else accumulated tie row by tie row over ``Z``.
    Returns ``(kind, j, i, k, target, columns)``: kind 0 (none), 1 (feature ``j`` leaves ``Z``),
    2 / 3 (hit / miss ``(i, k)`` leaves ``[=]`` for ``target``); ``columns`` the features that
    ``alpha_Z`` summed over (its work)."""
    n, d = X.shape
    mtol = 1e-10 * max(1.0, ton, gmax)
    bv, bkind, bj, bi, bk, btarget = mtol, 0, -1, -1, -1, 0
    nu = mu[0]
    amax, ja = -np.inf, -1
    alpha = full_1d(d, -np.inf, np.float64)
    cols = np.empty(d, np.int64)
    nzc = 0
    counted = 0
    for j in range(d):
        if Z[j]:
            cols[nzc] = j
            nzc += 1
    if maint_min_p is not None and 2 * nzc > d and d >= maint_min_p:
        counted = d
        acc = np.empty(d, np.float64)
        _tie_combination(X, hc, hrep, mc, mrep, ii, tt, mth, mt, mu, acc)
        for q in range(nzc):
            j = cols[q]
            v = -(g[j] + nu + acc[j])
            alpha[j] = v
            if v > amax:
                amax = v
    elif nzc > 0:
        counted = nzc
        acc = full_1d(nzc, 0.0, np.float64)
        for r in range(mt):
            i = ii[r]
            if r < mth:
                cc, cr = hc[i, tt[r]], hc[i, hrep[i]]
            else:
                cc, cr = mc[i, tt[r]], mc[i, mrep[i]]
            mr = mu[r + 1]
            xi, xc, xr = X[i], X[cc], X[cr]
            for q in range(nzc):
                j = cols[q]
                a = xi[j] - xc[j]
                b = xi[j] - xr[j]
                acc[q] += (a * a - b * b) * mr
        for q in range(nzc):
            j = cols[q]
            v = -(g[j] + nu + acc[q])
            alpha[j] = v
            if v > amax:
                amax = v
    for j in range(d):
        if alpha[j] >= amax - _TIE * abs(amax):
            ja = j
            break
    if ja >= 0 and amax > bv:
        bv, bkind, bj = amax, 1, ja
    muE = mu[1:]
    for target in (-1, 1):  # hits: [=] -> [<], then [=] -> [>]
        v, i0, k0 = _best_release_side(hc, hs, hrep, muE, ii, tt, 0, mth, kappa, ton, float(target), target, bv)
        if i0 >= 0 and (bkind == 0 or v > bv + _TIE * abs(bv)):
            bv, bkind, bi, bk, btarget = v, 2, i0, k0, target
    for target in (-1, 1):  # misses
        v, i0, k0 = _best_release_side(mc, ms, mrep, muE, ii, tt, mth, mt, lam, -ton, float(target), target, bv)
        if i0 >= 0 and (bkind == 0 or v > bv + _TIE * abs(bv)):
            bv, bkind, bi, bk, btarget = v, 3, i0, k0, target
    return bkind, bj, bi, bk, btarget, counted


# -- maintained factor of the EQP Gram matrix (the steps with |P| >= maint_min_p) --------------------
# ``U`` (upper, row-major, leading ``fm x fm`` block) with ``U^T U = B B^T``, ``B`` the constraint
# rows (``1`` and the tie rows) restricted to the positive features, in the factor's own column
# order; ``fkey[f] = (side, i, k, rep k)`` names column ``f`` (side 0: the all-ones row, 1: hit
# tie, 2: miss tie).  Between refactorisations (every ``_REFACTOR`` steps) the factor follows
# the active set by column deletions (``O(m^2)``), appends (``O(p m)``) and rank-one updates /
# downdates for features leaving / entering ``Z`` (``O(m^2)``).

_REFACTOR = 100  # steps between fresh factorisations of the maintained Gram factor
_MAINT_COND = 1e-3  # the updated factor is used when min U_ii > this * max U_ii (margin over _QR_COND)


@njit(cache=True, nogil=True)
def _key_value(X, hc, mc, key, j):
    """Entry of the constraint column ``key`` at feature ``j``."""
    side = key[0]
    if side == 0:
        return 1.0
    cand = hc if side == 1 else mc
    i = key[1]
    a = X[i, j] - X[cand[i, key[2]], j]
    b = X[i, j] - X[cand[i, key[3]], j]
    return a * a - b * b


@njit(cache=True, nogil=True)
def _tie_keys(state, rep, side, skey, ii, tt, off):
    """``ii`` / ``tt`` of the tie rows of one side (as :func:`_fill_ties_at`) and their keys
    ``(side, i, k, rep k)`` in rows ``1 + off, ...`` of ``skey`` (row 0: the all-ones row)."""
    n, K = state.shape
    for i in range(n):
        for k in range(K):
            if state[i, k] == 0 and k != rep[i]:
                ii[off] = i
                tt[off] = k
                skey[off + 1, 0], skey[off + 1, 1], skey[off + 1, 2], skey[off + 1, 3] = side, i, k, rep[i]
                off += 1
    return off


@njit(cache=True, nogil=True)
def _key_row(X, hc, mc, key, Pb, pb, out):
    """Constraint row ``key`` over the features ``Pb[:pb]``."""
    if key[0] == 0:
        out[:pb] = 1.0
        return
    cand = hc if key[0] == 1 else mc
    i = key[1]
    xi, xc, xr = X[i], X[cand[i, key[2]]], X[cand[i, key[3]]]
    for q in range(pb):
        j = Pb[q]
        a = xi[j] - xc[j]
        b = xi[j] - xr[j]
        out[q] = a * a - b * b


@njit(cache=True, nogil=True)
def _key_row_full(X, hc, mc, key, out):
    """Constraint row ``key`` (a tie row) over every feature: the arithmetic of :func:`_key_row`."""
    cand = hc if key[0] == 1 else mc
    i = key[1]
    xi, xc, xr = X[i], X[cand[i, key[2]]], X[cand[i, key[3]]]
    for j in range(xi.size):
        a = xi[j] - xc[j]
        b = xi[j] - xr[j]
        out[j] = a * a - b * b


@njit(cache=True, nogil=True)
def _eqp_maint(X, g, Z, Pcols, p, skey, hc, hrep, hpos, mc, mrep, mpos, U, fkey, fst, perm, fsc, B, Pb, posP, dw,
               mu):
    """EQP (4) through the maintained factor (see above); False: the caller solves it afresh
    (rank-deficient constraint rows, the SVD path).  ``fst = [fm, age, pb]``; ``B`` holds the
    factor's constraint rows over the features ``Pb[:pb]`` (``posP`` their positions), kept
    from step to step: a feature entering / leaving ``Z`` changes one column, a tie one row.
    ``skey`` names the current constraint rows; ``hpos`` / ``mpos`` map a tie ``(i, k)`` to
    its row of ``skey``."""
    m = skey.shape[0]
    d = X.shape[1]
    fm, age, pb = fst[0], fst[1], fst[2]
    ok = fm > 0 and age < _REFACTOR
    if ok:
        used = full_1d(m, False, np.bool_)
        for f in range(fm):  # match the factor's columns to the current ones
            s = -1
            side = fkey[f, 0]
            if side == 0:
                s = 0
            else:
                i, k, rk = fkey[f, 1], fkey[f, 2], fkey[f, 3]
                pos, rep = (hpos, hrep) if side == 1 else (mpos, mrep)
                if rep[i] == rk and pos[i, k] > 0:
                    s = pos[i, k]
            perm[f] = s
            if s >= 0:
                used[s] = True
        for f in range(fm - 1, -1, -1):  # columns that left (or whose representative changed)
            if perm[f] < 0:
                _chol_delete(U, fm, f)
                for t in range(f, fm - 1):
                    perm[t] = perm[t + 1]
                    fsc[t] = fsc[t + 1]
                    for c in range(4):
                        fkey[t, c] = fkey[t + 1, c]
                    for q in range(pb):
                        B[t, q] = B[t + 1, q]
                fm -= 1
        x = np.empty(fm, np.float64)
        for j in range(d):  # features that entered Z (downdate) or left it (update)
            qj = posP[j]
            if qj >= 0 and Z[j]:
                for f in range(fm):
                    x[f] = B[f, qj]
                if not _chol_rank1(U, 0, fm, x, -1.0):
                    ok = False
                    break
                last = pb - 1
                for f in range(fm):
                    B[f, qj] = B[f, last]
                Pb[qj] = Pb[last]
                posP[Pb[qj]] = qj
                posP[j] = -1
                pb -= 1
            elif qj < 0 and not Z[j]:
                for f in range(fm):
                    v = _key_value(X, hc, mc, fkey[f], j) * fsc[f]
                    B[f, pb] = v
                    x[f] = v
                Pb[pb] = j
                posP[j] = pb
                pb += 1
                _chol_rank1(U, 0, fm, x, 1.0)
        if ok:
            b = np.empty(m, np.float64)
            for s in range(m):  # columns that joined
                if used[s]:
                    continue
                _key_row(X, hc, mc, skey[s], Pb, pb, B[fm])
                sf = 1.0
                if fst[3] == 1:  # equilibrated factor: the new row at unit RMS
                    t = 0.0
                    for q in range(pb):
                        t += B[fm, q] * B[fm, q]
                    t = np.sqrt(t / max(pb, 1))
                    if t > 0.0:
                        sf = 1.0 / t
                        for q in range(pb):
                            B[fm, q] *= sf
                fsc[fm] = sf
                for f in range(fm + 1):
                    t = 0.0
                    for q in range(pb):
                        t += B[f, q] * B[fm, q]
                    b[f] = t
                if not _chol_append(U, fm, b, b[fm]):
                    ok = False
                    break
                perm[fm] = s
                for c in range(4):
                    fkey[fm, c] = skey[s, c]
                fm += 1
        if ok:
            dmin, dmax = np.inf, 0.0
            for f in range(fm):
                dmin = min(dmin, U[f, f])
                dmax = max(dmax, U[f, f])
            ok = dmin > _MAINT_COND * dmax
        age += 1
    if not ok:  # a fresh factor, columns in the current order (as the fresh solve)
        fm, age = 0, 0
        posP[:] = -1
        for q in range(p):
            Pb[q] = Pcols[q]
            posP[Pcols[q]] = q
        pb = p
        full = np.empty(d, np.float64) if 4 * pb > d else np.empty(0, np.float64)
        for r in range(m):
            if 4 * pb > d and skey[r, 0] != 0:  # most features: the whole row (contiguous), then gathered
                _key_row_full(X, hc, mc, skey[r], full)
                Br = B[r]
                for q in range(pb):
                    Br[q] = full[Pb[q]]
            else:
                _key_row(X, hc, mc, skey[r], Pb, pb, B[r])
            perm[r] = r
            for c in range(4):
                fkey[r, c] = skey[r, c]
        Bc = np.ascontiguousarray(B[:m, :p])
        M = Bc @ Bc.T
        L = full_2d(m, m, 0.0, np.float64)
        fsc[:m] = 1.0
        fst[3] = 0
        good = _chol(M, L) > _QR_COND
        if not good and _equilibrate(Bc.T, p, m, fsc):  # badly scaled rows (raw data): unit RMS
            for r in range(m):
                for q in range(p):
                    B[r, q] *= fsc[r]
            Bc = np.ascontiguousarray(B[:m, :p])
            M = Bc @ Bc.T
            L = full_2d(m, m, 0.0, np.float64)
            good = _chol(M, L) > _QR_COND
            fst[3] = 1
        if good:
            for r in range(m):
                for j in range(r, m):
                    U[r, j] = L[j, r]
            fm = m
    fst[0], fst[1], fst[2] = fm, age, pb
    if fm == 0:
        return False
    _factor_solve(g, Pb, pb, B, U, fm, perm, fsc, dw, mu)
    return True


# -- regularisation path (one breakpoint of active_set._path) ---------------------------------


