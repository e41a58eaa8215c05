"""Compiled O(n^2 d) kernels: plain arrays in, plain arrays out.

Every kernel here works on *pre-scaled* data: because ``w >= 0``, the weighted
Manhattan distance ``sum_j w_j |a_j - b_j|`` equals the plain Manhattan distance
between ``w * a`` and ``w * b``, and the weighted squared Euclidean distance equals
the plain one between ``sqrt(w) * a`` and ``sqrt(w) * b``.  The Python layer
(:mod:`knnweights.engine.neighbors`) does the scaling, validation, chunking and dispatch;
nothing in this module is public API.  Each kernel has a NumPy reference in
``tests/test_kernels.py``.

``phi`` codes: 0 = L1 (``|a|``), 1 = L2sq (``a**2``).
"""

import numpy as np
from numba import prange

from .jit import full_1d, full_2d, njit, size_dispatch

L1 = 0
L2SQ = 1

#: the tie rule's unit, 4 units of roundoff (2**-51): a computed distance of ``d`` terms is within
#: ``TIE_ULPS * (d + 8) * (N_i + N_j)`` of the exact one for data whose scaled entries carry a
#: relative error of a few units of roundoff, ``N`` the rows' ``sum |a|`` (L1) or ``sum a**2`` (L2sq)
#: (:func:`knnweights.engine.neighbors.tie_tolerance`)
TIE_ULPS = 2.0**-51

# Determinism: no kernel here lets the compiler reassociate or contract (no ``fastmath``), and every
# distance sums its terms in the order k = 0, 1, ..., d - 1 from 0, whatever the kernel, the tile a pair
# falls in, the SIMD width the CPU offers or the number of threads.  A distance therefore has the same
# bits whether a kernel was compiled in this process or loaded from numba's cache, on AVX2 or AVX-512,
# and every argmin, tie and threshold built on it comes out the same.
#
# The pairwise kernels vectorise across output columns instead of along the sum: with B transposed,
# ``acc[i, j] += phi(A[i, k] - BT[k, j])`` over j is a run of independent additions that the compiler
# vectorises without reordering any single sum.  Output tiles of _TILE_I x _TILE_J are the parallel
# tasks; the accumulator tile (16 x 64 x 8 B = 8 KiB) stays in L1 while each BT row slice is reused by
# 16 rows of A.
_TILE_I = 16
_TILE_J = 64
_TILE_K = 256


@njit(inline="never", cache=True)
def _phi_sum4(a0, a1, a2, a3, b, phi, s0, s1, s2, s3):  # pragma: no cover - compiled
    """The running sums ``s_r + sum_k phi(a_r[k] - b[k])`` of four rows, each in the order k = 0, 1, ..."""
    if phi == 0:
        for k in range(b.shape[0]):
            bk = b[k]
            s0 += abs(a0[k] - bk)
            s1 += abs(a1[k] - bk)
            s2 += abs(a2[k] - bk)
            s3 += abs(a3[k] - bk)
    else:
        for k in range(b.shape[0]):
            bk = b[k]
            t0 = a0[k] - bk
            t1 = a1[k] - bk
            t2 = a2[k] - bk
            t3 = a3[k] - bk
            s0 += t0 * t0
            s1 += t1 * t1
            s2 += t2 * t2
            s3 += t3 * t3
    return s0, s1, s2, s3


@njit(cache=True, nogil=True)
def _tile_phi(A, B, i0, i1, j0, j1, phi, acc):  # pragma: no cover - compiled
    """acc[i - i0, j - j0] += sum_k phi(A[i, k] - B[j, k]) over one output tile, in the order k = 0, 1, ...

    For few columns (the incremental searches' single column); :func:`pairwise_phi` uses
    :func:`_tile_phi_t`, which gives the same bits.
    """
    d = A.shape[1]
    for k0 in range(0, d, _TILE_K):
        k1 = min(k0 + _TILE_K, d)
        for j in range(j0, j1):
            b = B[j, k0:k1]
            c = j - j0
            i = i0
            while i + 3 < i1:
                r = i - i0
                s0, s1, s2, s3 = _phi_sum4(A[i, k0:k1], A[i + 1, k0:k1], A[i + 2, k0:k1], A[i + 3, k0:k1], b, phi,
                                           acc[r, c], acc[r + 1, c], acc[r + 2, c], acc[r + 3, c])
                acc[r, c] = s0
                acc[r + 1, c] = s1
                acc[r + 2, c] = s2
                acc[r + 3, c] = s3
                i += 4
            while i < i1:
                a = A[i, k0:k1]
                r = i - i0
                s0, s1, s2, s3 = _phi_sum4(a, a, a, a, b, phi, acc[r, c], 0.0, 0.0, 0.0)
                acc[r, c] = s0
                i += 1
    return acc


@njit(inline="always", cache=True, nogil=True)
def _tile_phi_t(A, BT, i0, i1, j0, j1, phi, acc):  # pragma: no cover - compiled
    """acc[i - i0, j - j0] += sum_k phi(A[i, k] - BT[k, j]), each sum in the order k = 0, 1, ...

    Vectorised across j (independent sums), never along a sum.  Four k at a time: each
    accumulator is loaded and stored once per four terms, which are still added one after
    the other (``((acc + t0) + t1) + ...``), so the bits are those of one term at a time.
    """
    d = A.shape[1]
    m = j1 - j0
    k = 0
    while k + 4 <= d:
        b0 = BT[k, j0:j1]
        b1 = BT[k + 1, j0:j1]
        b2 = BT[k + 2, j0:j1]
        b3 = BT[k + 3, j0:j1]
        for i in range(i0, i1):
            a0 = A[i, k]
            a1 = A[i, k + 1]
            a2 = A[i, k + 2]
            a3 = A[i, k + 3]
            row = acc[i - i0]
            if phi == 0:
                for c in range(m):
                    row[c] = row[c] + abs(a0 - b0[c]) + abs(a1 - b1[c]) + abs(a2 - b2[c]) + abs(a3 - b3[c])
            else:
                for c in range(m):
                    t0 = a0 - b0[c]
                    t1 = a1 - b1[c]
                    t2 = a2 - b2[c]
                    t3 = a3 - b3[c]
                    row[c] = row[c] + t0 * t0 + t1 * t1 + t2 * t2 + t3 * t3
        k += 4
    while k < d:
        bt = BT[k, j0:j1]
        for i in range(i0, i1):
            a = A[i, k]
            row = acc[i - i0]
            if phi == 0:
                for c in range(m):
                    row[c] += abs(a - bt[c])
            else:
                for c in range(m):
                    t = a - bt[c]
                    row[c] += t * t
        k += 1
    return acc


@njit(cache=True, nogil=True, inline="always")
def tile_box(t, n_tj, na, nb, tile_i, tile_j):  # pragma: no cover - compiled
    """Rows ``i0:i1`` and columns ``j0:j1`` of output tile ``t`` (row-major, ``n_tj`` tiles a row)."""
    i0 = (t // n_tj) * tile_i
    j0 = (t % n_tj) * tile_j
    return i0, min(i0 + tile_i, na), j0, min(j0 + tile_j, nb)


@njit(parallel=True, cache=True, nogil=True)
def pairwise_phi(A, B, phi, out):  # pragma: no cover - compiled
    """out[i, j] = sum_k phi(A[i, k] - B[j, k]) for row blocks A (na, d), B (nb, d)."""
    na, d = A.shape
    nb = B.shape[0]
    BT = np.ascontiguousarray(B.T)
    n_tj = (nb + _TILE_J - 1) // _TILE_J
    for t in prange(((na + _TILE_I - 1) // _TILE_I) * n_tj):
        i0, i1, j0, j1 = tile_box(t, n_tj, na, nb, _TILE_I, _TILE_J)
        acc = full_2d(i1 - i0, j1 - j0, 0.0, out.dtype)
        _tile_phi_t(A, BT, i0, i1, j0, j1, phi, acc)
        for i in range(i0, i1):
            for j in range(j0, j1):
                out[i, j] = acc[i - i0, j - j0]
    return out


@njit(inline="always", cache=True, nogil=True)
def upper_tiles(n, tile_i, tile_j):  # pragma: no cover - compiled
    """``(ti, tj)`` of the ``tile_i x tile_j`` output tiles of an ``n x n`` matrix that touch its
    upper triangle (diagonal included), row-major."""
    n_ti = (n + tile_i - 1) // tile_i
    n_tj = (n + tile_j - 1) // tile_j
    n_active = 0
    for ti in range(n_ti):
        for tj in range(n_tj):
            if min((tj + 1) * tile_j, n) > ti * tile_i:
                n_active += 1
    tiles = np.empty((n_active, 2), np.int64)
    a = 0
    for ti in range(n_ti):
        for tj in range(n_tj):
            if min((tj + 1) * tile_j, n) > ti * tile_i:
                tiles[a, 0] = ti
                tiles[a, 1] = tj
                a += 1
    return tiles


@njit(parallel=True, cache=True, nogil=True)
def pairwise_phi_sym(A, phi, out):  # pragma: no cover - compiled
    """out = pairwise_phi(A, A): only the output tiles touching the upper triangle are
    computed, the rest mirrored (|a - b| = |b - a| and each sum runs in the same
    order, so the result is bit-identical to :func:`pairwise_phi`)."""
    n, d = A.shape
    AT = np.ascontiguousarray(A.T)
    tiles = upper_tiles(n, _TILE_I, _TILE_J)
    for t in prange(tiles.shape[0]):  # active tiles all cost the same: static chunks stay balanced
        i0 = tiles[t, 0] * _TILE_I
        i1 = min(i0 + _TILE_I, n)
        j0 = tiles[t, 1] * _TILE_J
        j1 = min(j0 + _TILE_J, n)
        acc = full_2d(i1 - i0, j1 - j0, 0.0, out.dtype)
        _tile_phi_t(A, AT, i0, i1, j0, j1, phi, acc)
        for i in range(i0, i1):
            for j in range(max(i, j0), j1):
                out[i, j] = acc[i - i0, j - j0]
    for i in prange(n):
        for j in range(i):
            out[i, j] = out[j, i]
    return out


# coef_phi_rows lists each row's non-zero coefficients once, then adds their terms eight at a time
# on slabs of _COEF_K features: an output slab (in cache) is loaded and stored once per eight terms
# instead of once per term.  Every output element still sums its terms in the order j = 0, 1, ...
# one after the other, so the bits are those of a plain loop over j.  Tasks are blocks of
# _COEF_ROWS rows.
_COEF_ROWS = 8
_COEF_K = 512


@njit(inline="always", cache=True, nogil=True)
def _coef_slab(a, B, p, cols, k0, k1, phi, o):  # pragma: no cover - compiled
    """o = sum_t p[cols[t]] * phi(a - B[cols[t], k0:k1]) over the listed columns, in their order."""
    w = k1 - k0
    for k in range(w):
        o[k] = 0.0
    m = cols.shape[0]
    t = 0
    while t + 8 <= m:
        j0 = cols[t]
        j1 = cols[t + 1]
        j2 = cols[t + 2]
        j3 = cols[t + 3]
        j4 = cols[t + 4]
        j5 = cols[t + 5]
        j6 = cols[t + 6]
        j7 = cols[t + 7]
        c0 = p[j0]
        c1 = p[j1]
        c2 = p[j2]
        c3 = p[j3]
        c4 = p[j4]
        c5 = p[j5]
        c6 = p[j6]
        c7 = p[j7]
        b0 = B[j0, k0:k1]
        b1 = B[j1, k0:k1]
        b2 = B[j2, k0:k1]
        b3 = B[j3, k0:k1]
        b4 = B[j4, k0:k1]
        b5 = B[j5, k0:k1]
        b6 = B[j6, k0:k1]
        b7 = B[j7, k0:k1]
        if phi == 0:
            for k in range(w):
                x = a[k]
                o[k] = (o[k] + c0 * abs(x - b0[k]) + c1 * abs(x - b1[k]) + c2 * abs(x - b2[k])
                        + c3 * abs(x - b3[k]) + c4 * abs(x - b4[k]) + c5 * abs(x - b5[k])
                        + c6 * abs(x - b6[k]) + c7 * abs(x - b7[k]))
        else:
            for k in range(w):
                x = a[k]
                t0 = x - b0[k]
                t1 = x - b1[k]
                t2 = x - b2[k]
                t3 = x - b3[k]
                t4 = x - b4[k]
                t5 = x - b5[k]
                t6 = x - b6[k]
                t7 = x - b7[k]
                o[k] = (o[k] + c0 * t0 * t0 + c1 * t1 * t1 + c2 * t2 * t2 + c3 * t3 * t3
                        + c4 * t4 * t4 + c5 * t5 * t5 + c6 * t6 * t6 + c7 * t7 * t7)
        t += 8
    while t < m:
        j = cols[t]
        c = p[j]
        b = B[j, k0:k1]
        if phi == 0:
            for k in range(w):
                o[k] += c * abs(a[k] - b[k])
        else:
            for k in range(w):
                x = a[k] - b[k]
                o[k] += c * x * x
        t += 1
    return o


@njit(parallel=True, cache=True, nogil=True)
def coef_phi_rows(A, B, P, phi, out):  # pragma: no cover - compiled
    """out[i, :] = sum_j P[i, j] * phi(A[i] - B[j]); zero coefficients are skipped."""
    na, d = A.shape
    nb = B.shape[0]
    for rb in prange((na + _COEF_ROWS - 1) // _COEF_ROWS):
        cols = np.empty(nb, np.int64)
        for i in range(rb * _COEF_ROWS, min(na, (rb + 1) * _COEF_ROWS)):
            m = 0
            for j in range(nb):  # branch-free: the column is written, and kept when its coefficient is not 0
                cols[m] = j
                m += P[i, j] != 0.0
            for k0 in range(0, d, _COEF_K):
                k1 = min(d, k0 + _COEF_K)
                _coef_slab(A[i, k0:k1], B, P[i], cols[:m], k0, k1, phi, out[i, k0:k1])
    return out


@njit(parallel=True, cache=True, nogil=True)
def index_phi_rows(A, B, idx, coef, phi, out):  # pragma: no cover - compiled
    """out[i, :] = sum_t coef[i, t] * phi(A[i] - B[idx[i, t]]); negative idx skipped."""
    na, d = A.shape
    kk = idx.shape[1]
    for i in prange(na):
        for k in range(d):
            out[i, k] = 0.0
        for t in range(kk):
            j = idx[i, t]
            if j < 0:
                continue
            c = coef[i, t]
            if c == 0.0:
                continue
            if phi == 0:
                for k in range(d):
                    out[i, k] += c * abs(A[i, k] - B[j, k])
            else:
                for k in range(d):
                    s = A[i, k] - B[j, k]
                    out[i, k] += c * s * s
    return out


@njit(parallel=True, cache=True, nogil=True)
def select_neighbors(D, self_cols, codes_rows, codes_cols, n_classes, k, tol_rows, tol_cols, idx_out,
                     dist_out):  # pragma: no cover - compiled
    """k smallest entries of each row of D, separately for every class of the columns.

    ``idx_out`` (nr, n_classes, k) receives column indices sorted by distance, equal
    distances by index (the tie rule of :func:`insert_sorted`, with the tolerances
    ``tol_rows`` / ``tol_cols``), ``-1`` where a class has fewer than k candidates;
    ``dist_out`` likewise (``inf`` where missing).  Column ``self_cols[r]`` (the sample
    itself, -1 for none) is skipped for row ``r``.
    """
    nr, nc = D.shape
    for r in prange(nr):
        for c in range(n_classes):
            for t in range(k):
                idx_out[r, c, t] = -1
                dist_out[r, c, t] = np.inf
        self_col = self_cols[r]
        tr = 2.0 * tol_rows[r]
        idx_r = idx_out[r]
        dist_r = dist_out[r]
        for j in range(nc):
            if j != self_col:
                insert_sorted(idx_r, dist_r, codes_cols[j], k, j, D[r, j], tr, tol_cols)
    return idx_out, dist_out


@njit(inline="always", cache=True, nogil=True)
def insert_sorted(idx, dist, r, k, j, v, tr, tol_cols):  # pragma: no cover - compiled
    """Insert candidate ``j`` at distance ``v`` into row ``r`` of the ascending ``k``-lists
    ``idx`` / ``dist`` (``-1`` / ``inf`` = empty), after every entry at an equal distance;
    nothing when ``v`` is not below the ``k``-th.

    The tie rule (:func:`knnweights.engine.neighbors.tie_tolerance`): ``v`` and an entry
    ``m`` at ``u`` are equal when ``|v - u| <= tr + tol_cols[j] + tol_cols[m]``, ``tr`` twice
    the query's tolerance.  Candidates arrive in ascending index, so of equal distances the
    lower index comes first.  With zero tolerances the comparisons are plain ``<`` and ``>``.
    """
    tj = tr + tol_cols[j]
    last = idx[r, k - 1]
    if last >= 0 and not v < dist[r, k - 1] - (tj + tol_cols[last]):
        return
    t = k - 1
    while t > 0:
        p = idx[r, t - 1]
        if p >= 0 and not dist[r, t - 1] > v + (tj + tol_cols[p]):
            break
        idx[r, t] = p
        dist[r, t] = dist[r, t - 1]
        t -= 1
    idx[r, t] = j
    dist[r, t] = v


@njit(parallel=True, cache=True, nogil=True)
def select_hits_misses(D, self_cols, codes_rows, codes_cols, k, tol_rows, tol_cols,  # pragma: no cover - compiled
                       hit_idx, hit_dist, miss_idx, miss_dist):
    """k nearest hits (same class, self excluded) and k nearest misses (any other class), by the
    tie rule of :func:`insert_sorted`."""
    nr, nc = D.shape
    for r in prange(nr):
        for t in range(k):
            hit_idx[r, t] = -1
            miss_idx[r, t] = -1
            hit_dist[r, t] = np.inf
            miss_dist[r, t] = np.inf
        own = codes_rows[r]
        self_col = self_cols[r]
        tr = 2.0 * tol_rows[r]
        for j in range(nc):
            if j == self_col:
                continue
            if codes_cols[j] == own:
                insert_sorted(hit_idx, hit_dist, r, k, j, D[r, j], tr, tol_cols)
            else:
                insert_sorted(miss_idx, miss_dist, r, k, j, D[r, j], tr, tol_cols)
    return hit_idx, hit_dist, miss_idx, miss_dist


@njit(cache=True, nogil=True)
def simba_pass(X, codes, order, w):  # pragma: no cover - compiled
    """One Simba pass (Gilad-Bachrach, Navot & Tishby 2004, Fig. 1), in place on ``w``.

    For each instance ``x = X[order[t]]``: its nearest hit and miss under
    ``||z||_w = sqrt(sum_i w_i^2 z_i^2)`` (equal distances by the engine's tie rule, with
    ``max_i w_i^2 |x|^2`` bounding the scaled rows' squared norms), then
    ``w_i += 1/2 ((x_i - nm_i)^2 / ||x - nm||_w - (x_i - nh_i)^2 / ||x - nh||_w) w_i``.
    Online by definition: each step uses the weights of the previous one.
    """
    n, d = X.shape
    sq = np.empty(n, np.float64)
    for j in range(n):
        q = 0.0
        for k in range(d):
            q += X[j, k] * X[j, k]
        sq[j] = q
    c = TIE_ULPS * (d + 8)
    for t in range(order.shape[0]):
        i = order[t]
        wmax = 0.0
        for k in range(d):
            wmax = max(wmax, w[k] * w[k])
        ci = c * wmax
        bh = np.inf
        bm = np.inf
        ih = -1
        im = -1
        for j in range(n):
            if j == i:
                continue
            s = 0.0
            for k in range(d):
                u = (X[i, k] - X[j, k]) * w[k]
                s += u * u
            if codes[j] == codes[i]:
                if ih < 0 or s < bh - ci * (2.0 * sq[i] + sq[j] + sq[ih]):
                    bh = s
                    ih = j
            elif im < 0 or s < bm - ci * (2.0 * sq[i] + sq[j] + sq[im]):
                bm = s
                im = j
        if ih < 0 or im < 0:
            continue
        dh = np.sqrt(bh)
        dm = np.sqrt(bm)
        for k in range(d):
            gm = (X[i, k] - X[im, k]) ** 2 / dm if dm > 0 else 0.0
            gh = (X[i, k] - X[ih, k]) ** 2 / dh if dh > 0 else 0.0
            w[k] += 0.5 * (gm - gh) * w[k]
    return w


@njit(inline="always", cache=True, nogil=True)
def _row_logit_max(D, r, codes_cols, own, me, inv_sigma):  # pragma: no cover - compiled
    """Row ``r``'s largest hit and miss logits ``-D[r, c] / sigma`` (``-inf`` if none), ``me`` excluded."""
    mh = -np.inf
    mm = -np.inf
    for c in range(D.shape[1]):
        if c == me:
            continue
        g = -D[r, c] * inv_sigma
        if codes_cols[c] == own:
            if g > mh:
                mh = g
        elif g > mm:
            mm = g
    return mh, mm


@njit(parallel=True, cache=True, nogil=True)
def soft_coefficients(D, codes_rows, codes_cols, row_offset, inv_sigma, P, lse_h, lse_m, ent_h, ent_m):
    """Kernel-soft hit / miss probabilities of a block of distances, fused into margin coefficients.

    Row ``r`` (global index ``row_offset + r``, excluded from its own neighbours):
    ``P[r, c] = beta_rc`` for misses and ``-alpha_rc`` for hits, where alpha / beta are
    the softmax of ``-D[r] * inv_sigma`` over the hits / misses, computed in log space
    (the row's largest logit is subtracted before exponentiating).  Also the
    log-sum-exps ``lse_h``, ``lse_m`` (``-inf`` if the row has no hit / miss) and the
    entropies ``ent_h``, ``ent_m`` of alpha and beta.  NumPy reference:
    :func:`knnweights.engine.neighbors.soft_neighbor_log_probabilities`.
    """  # pragma: no cover - compiled
    nr, nc = D.shape
    for r in prange(nr):
        own = codes_rows[r]
        me = row_offset + r
        mh, mm = _row_logit_max(D, r, codes_cols, own, me, inv_sigma)
        sh = 0.0
        sm = 0.0
        for c in range(nc):  # unnormalised exp(g - max), kept in P
            if c == me:
                P[r, c] = 0.0
                continue
            g = -D[r, c] * inv_sigma
            if codes_cols[c] == own:
                e = np.exp(g - mh)
                sh += e
                P[r, c] = -e
            else:
                e = np.exp(g - mm)
                sm += e
                P[r, c] = e
        lh = mh + np.log(sh) if mh > -np.inf else -np.inf
        lm = mm + np.log(sm) if mm > -np.inf else -np.inf
        inv_h = 1.0 / sh if sh > 0.0 else 0.0
        inv_m = 1.0 / sm if sm > 0.0 else 0.0
        eh = 0.0
        em = 0.0
        for c in range(nc):  # normalise; entropy from log p = g - lse (no second exp)
            if c == me:
                continue
            if codes_cols[c] == own:
                p = -P[r, c] * inv_h
                P[r, c] = -p
                if p > 0.0:
                    eh -= p * (-D[r, c] * inv_sigma - lh)
            else:
                p = P[r, c] * inv_m
                P[r, c] = p
                if p > 0.0:
                    em -= p * (-D[r, c] * inv_sigma - lm)
        lse_h[r] = lh
        lse_m[r] = lm
        ent_h[r] = eh
        ent_m[r] = em
    return P


@njit(parallel=True, cache=True, nogil=True)
def soft_coefficient_counts(D, codes_rows, codes_cols, row_offset, inv_sigma, cutoff, mh, mm, counts):
    """First pass of :func:`soft_coefficients_sparse`: each row's largest hit / miss logit
    (``mh``, ``mm``; ``-inf`` if none) and how many of its logits lie within ``cutoff`` of
    their group's largest (the coefficients kept)."""  # pragma: no cover - compiled
    nr, nc = D.shape
    for r in prange(nr):
        own = codes_rows[r]
        me = row_offset + r
        h, m = _row_logit_max(D, r, codes_cols, own, me, inv_sigma)
        k = 0
        for c in range(nc):
            if c == me:
                continue
            g = -D[r, c] * inv_sigma
            if codes_cols[c] == own:
                if g >= h - cutoff:
                    k += 1
            elif g >= m - cutoff:
                k += 1
        mh[r] = h
        mm[r] = m
        counts[r] = k


@njit(parallel=True, cache=True, nogil=True)
def soft_coefficients_sparse(D, codes_rows, codes_cols, row_offset, inv_sigma, cutoff, mh, mm, indptr, indices,
                             data, lse_h, lse_m, ent_h, ent_m):  # pragma: no cover - compiled
    """:func:`soft_coefficients` in CSR form, keeping only the logits within ``cutoff`` of
    their group's largest (``exp(-cutoff)`` relative; the others are not exponentiated).

    Row ``r``'s entries go to ``indices`` / ``data[indptr[r]:indptr[r+1]]`` (sizes from
    :func:`soft_coefficient_counts`): ``beta`` on misses, ``-alpha`` on hits, normalised
    over the kept entries; ``lse_*`` and the entropies likewise over the kept entries (a
    relative change below ``n exp(-cutoff)``)."""
    nr, nc = D.shape
    for r in prange(nr):
        own = codes_rows[r]
        me = row_offset + r
        h = mh[r]
        m = mm[r]
        pos = indptr[r]
        sh = 0.0
        sm = 0.0
        for c in range(nc):
            if c == me:
                continue
            g = -D[r, c] * inv_sigma
            if codes_cols[c] == own:
                if g >= h - cutoff:
                    e = np.exp(g - h)
                    sh += e
                    indices[pos] = c
                    data[pos] = -e
                    pos += 1
            elif g >= m - cutoff:
                e = np.exp(g - m)
                sm += e
                indices[pos] = c
                data[pos] = e
                pos += 1
        lh = h + np.log(sh) if sh > 0.0 else -np.inf
        lm = m + np.log(sm) if sm > 0.0 else -np.inf
        inv_h = 1.0 / sh if sh > 0.0 else 0.0
        inv_m = 1.0 / sm if sm > 0.0 else 0.0
        eh = 0.0
        em = 0.0
        for q in range(indptr[r], pos):
            c = indices[q]
            g = -D[r, c] * inv_sigma
            if data[q] < 0.0:
                p = -data[q] * inv_h
                data[q] = -p
                if p > 0.0:
                    eh -= p * (g - lh)
            else:
                p = data[q] * inv_m
                data[q] = p
                if p > 0.0:
                    em -= p * (g - lm)
        lse_h[r] = lh
        lse_m[r] = lm
        ent_h[r] = eh
        ent_m[r] = em


@njit(parallel=True, cache=True, nogil=True)
def fold_pairs(P, out):  # pragma: no cover - compiled
    """out = P + P^T with each unordered pair given to one of its rows, (n - 1) / 2 pairs a row.

    Pair (i, j) belongs to row i when (j - i) mod n is in (0, n/2), or equals n/2 and
    i < n/2: the rows, hence the threads of a following row kernel, stay equally loaded.
    """
    n = P.shape[0]
    for i in prange(n):
        for j in range(n):
            off = (j - i) % n
            if (off > 0 and 2 * off < n) or (2 * off == n and i < n // 2):
                out[i, j] = P[i, j] + P[j, i]
            else:
                out[i, j] = 0.0
    return out


# -- SURF / MultiSURF: all samples within a threshold distance are neighbours ---------------------------------------
# The in-radius pairs of row r of a distance block: the columns j with D[r, j] < T[r] (strict), the
# sample itself (column self_cols[r]; -1 for none) left out.  A pair's group: the class of the
# neighbour (kind 0, labels are class codes), or for a continuous target (kind 1) 0 ("hit") when the
# two targets differ by less than s, else 1 ("miss").


@njit(parallel=True, cache=True, nogil=True)
def radius_counts(D, T, self_cols, lab_rows, lab_cols, s, kind, counts):  # pragma: no cover - compiled
    """counts[r, g] = the in-radius pairs of row ``r`` in group ``g``."""
    b, n = D.shape
    for r in prange(b):
        t = T[r]
        for g in range(counts.shape[1]):
            counts[r, g] = 0
        if kind == 1:
            yr = lab_rows[r]
            h = 0
            m = 0
            for j in range(n):
                near = D[r, j] < t
                hit = abs(yr - lab_cols[j]) < s
                h += near & hit
                m += near & (not hit)
            counts[r, 0] = h
            counts[r, 1] = m
        elif counts.shape[1] <= 8:  # a few classes: one branch-free pass a class
            for g in range(counts.shape[1]):
                cg = 0
                for j in range(n):
                    cg += (D[r, j] < t) & (lab_cols[j] == g)
                counts[r, g] = cg
        else:
            for j in range(n):
                if D[r, j] < t:
                    counts[r, np.int64(lab_cols[j])] += 1
        me = self_cols[r]
        if 0 <= me < n and D[r, me] < t:
            if kind == 1:
                counts[r, 0 if abs(lab_rows[r] - lab_cols[me]) < s else 1] -= 1
            else:
                counts[r, np.int64(lab_cols[me])] -= 1
    return counts


@njit(inline="always", cache=True, nogil=True)
def _radius_coef(d_rj, T, lab_rows, lab_cols, s, kind, table, r, j):  # pragma: no cover - compiled
    """The coefficient of the pair (r, j) at distance ``d_rj``, j not the sample r itself: table[r, g], or 0
    out of the radius."""
    if kind == 1:
        c = table[r, 0] if abs(lab_rows[r] - lab_cols[j]) < s else table[r, 1]
    else:
        c = table[r, np.int64(lab_cols[j])]
    return c if d_rj < T[r] else 0.0


@njit(inline="always", cache=True, nogil=True)
def _radius_pair(D, T, lab, s, kind, table, symmetric, i, j):  # pragma: no cover - compiled
    """``P[i, j] + P[j, i]`` of the unfolded coefficients (the whole matrix, rows = samples)."""
    d_ji = D[i, j] if symmetric else D[j, i]
    return (_radius_coef(D[i, j], T, lab, lab, s, kind, table, i, j)
            + _radius_coef(d_ji, T, lab, lab, s, kind, table, j, i))


@njit(parallel=True, cache=True, nogil=True)
def radius_coefficients(D, T, self_cols, lab_rows, lab_cols, s, kind, table, fold, symmetric, P):  # pragma: no cover
    """P[r, j] = table[r, g] for an in-radius pair of group ``g``, else 0.

    ``fold`` (``D`` the whole ``n x n`` matrix, row ``r`` the sample ``r``): ``P + P^T`` with each
    unordered pair given to one of its rows, the sums of :func:`fold_pairs` on the unfolded ``P``
    without building it; ``symmetric``: ``D`` is bit-for-bit symmetric (from :func:`pairwise_phi_sym`),
    so ``D[j, i]`` is read as ``D[i, j]`` (row-wise).
    """
    b, n = D.shape
    h = (n - 1) // 2  # a row's pairs: the offsets (j - i) mod n in 1..h, and n/2 for i < n/2 (n even)
    for r in prange(b):
        if not fold:
            for j in range(n):
                P[r, j] = _radius_coef(D[r, j], T, lab_rows, lab_cols, s, kind, table, r, j)
            me = self_cols[r]
            if 0 <= me < n:
                P[r, me] = 0.0
            continue
        for j in range(n):
            P[r, j] = 0.0
        for j in range(r + 1, min(n, r + h + 1)):
            P[r, j] = _radius_pair(D, T, lab_cols, s, kind, table, symmetric, r, j)
        for j in range(0, r + h + 1 - n):
            P[r, j] = _radius_pair(D, T, lab_cols, s, kind, table, symmetric, r, j)
        if n % 2 == 0 and 2 * r < n:
            P[r, r + n // 2] = _radius_pair(D, T, lab_cols, s, kind, table, symmetric, r, r + n // 2)
    return P


@njit(parallel=True, cache=True, nogil=True)
def gflip_margins(D, col, sign, codes, utility, beta, out):  # pragma: no cover - compiled
    """Leave-one-out hypothesis margins with the feature set ``F +/- {col}`` (G-flip).

    ``D`` holds squared Euclidean distances over ``F``; the candidate set adds
    (``sign=1``) or removes (``sign=-1``) the feature whose values are ``col``.
    ``out[i] = u(theta_i)``, ``theta_i = (||x_i - nearmiss|| - ||x_i - nearhit||) / 2``;
    ``utility``: 0 linear, 1 zero-one, 2 sigmoid ``1 / (1 + exp(-beta theta))``.
    """
    n = D.shape[0]
    for i in prange(n):
        bh = np.inf
        bm = np.inf
        for j in range(n):
            if j == i:
                continue
            t = col[i] - col[j]
            v = D[i, j] + sign * t * t
            if v < 0.0:
                v = 0.0
            if codes[j] == codes[i]:
                if v < bh:
                    bh = v
            elif v < bm:
                bm = v
        if bh == np.inf or bm == np.inf:
            out[i] = 0.0
            continue
        theta = 0.5 * (np.sqrt(bm) - np.sqrt(bh))
        if utility == 0:
            out[i] = theta
        elif utility == 1:
            out[i] = 1.0 if theta > 0 else 0.0
        else:
            out[i] = 1.0 / (1.0 + np.exp(-beta * theta))
    return out


@njit(parallel=True, cache=True, nogil=True)
def gflip_sorted_margins(D, col, sign, codes, order, list_d, sorted_d0, slack, utility, beta,  # pragma: no cover
                         out):
    """:func:`gflip_margins` with each row scanned in a stale sorted order, stopping early.

    ``order[i]`` lists the ``K`` nearest other samples of ``i`` by increasing
    ``sorted_d0[i]``, the distances when the list was built (every sample left out was
    at least ``sorted_d0[i, K-1]`` away) and ``list_d[i]`` their current distances (kept
    equal to ``D[i, order[i]]`` by :func:`gflip_flip`, so a scan reads contiguous
    memory); ``slack[i]`` bounds how far any ``D[i, j]``
    has fallen below those since (squared differences of features removed from ``F``).
    A candidate value ``D[i, j] + sign t**2`` is at least ``sorted_d0[i, r] - slack[i] -
    (max_j t_ij**2 if sign < 0)``, so the scan of row ``i`` stops once that bound passes
    both the nearest hit and the nearest miss found so far; a row whose list runs out
    first is scanned in full.  The same minima as :func:`gflip_margins`, in a handful of
    steps per row while the lists are fresh.  Returns the pairs visited.
    """
    n = D.shape[0]
    lo = col.min()
    hi = col.max()
    visited = full_1d(n, 0, np.int64)
    for i in prange(n):
        out[i], visited[i] = _gflip_row(i, D, col, lo, hi, sign, codes, order, list_d, sorted_d0, slack, utility,
                                        beta, True)
    return visited.sum()


@njit(cache=True, nogil=True)
def _gflip_row(i, D, col, lo, hi, sign, codes, order, list_d, sorted_d0, slack, utility, beta,
               use_list):  # pragma: no cover - compiled
    """u(theta_i) of one row for G-flip's candidate ``F +/- {col}`` and the pairs visited:
    through the row's list with the early stop when ``use_list``, else the whole row."""
    n = D.shape[0]
    K = order.shape[1] if use_list else 0
    bh = np.inf
    bm = np.inf
    ci = col[i]
    tmax = max((ci - lo) * (ci - lo), (hi - ci) * (hi - ci))
    shift = slack[i] + (tmax if sign < 0 else 0.0)
    done = False
    cnt = 0
    for r in range(K):
        best = bh if bh > bm else bm
        if sorted_d0[i, r] - shift > best * (1.0 + 1e-9) + 1e-300:
            done = True
            break
        j = order[i, r]
        cnt += 1
        t = ci - col[j]
        v = list_d[i, r] + sign * t * t
        if v < 0.0:
            v = 0.0
        if codes[j] == codes[i]:
            if v < bh:
                bh = v
        elif v < bm:
            bm = v
    if not done and (not use_list or K < n - 1):  # no list, or it ran out before the bound: the whole row
        for j in range(n):
            if j == i:
                continue
            cnt += 1
            t = ci - col[j]
            v = D[i, j] + sign * t * t
            if v < 0.0:
                v = 0.0
            if codes[j] == codes[i]:
                if v < bh:
                    bh = v
            elif v < bm:
                bm = v
    if bh == np.inf or bm == np.inf:
        return 0.0, cnt
    theta = 0.5 * (np.sqrt(bm) - np.sqrt(bh))
    if utility == 0:
        return theta, cnt
    if utility == 1:
        return 1.0 if theta > 0 else 0.0, cnt
    return 1.0 / (1.0 + np.exp(-beta * theta)), cnt


@njit(cache=True, nogil=True)
def gflip_scan_candidates(D, cols, perm, start, F, current, codes, order, list_d, sorted_d0, slack, utility, beta,
                          use_list, work_limit):  # pragma: no cover - compiled
    """G-flip's candidates ``perm[start:]`` in turn, on one thread, until one raises the
    evaluation above ``current`` (relative margin ``1e-12``) or ``work_limit`` pairs have
    been visited.  Each candidate is :func:`gflip_sorted_margins` (``use_list``) or
    :func:`gflip_margins` summed over the rows, with the same arithmetic.

    Returns ``(q, value, visited)``: ``q`` the position in ``perm`` of the accepted
    candidate (``value`` its evaluation), or of the next one to try (``value = nan``).
    """
    n = D.shape[0]
    work = 0
    thr = current + 1e-12 * max(1.0, abs(current))
    for q in range(start, perm.shape[0]):
        j = perm[q]
        col = cols[j]
        sign = -1.0 if F[j] else 1.0
        lo = col.min()
        hi = col.max()
        total = 0.0
        cand_work = 0
        for i in range(n):
            u, c = _gflip_row(i, D, col, lo, hi, sign, codes, order, list_d, sorted_d0, slack, utility, beta,
                              use_list)
            total += u
            cand_work += c
        work += cand_work
        if use_list and 2 * cand_work > n * n:
            # the lists no longer bound most rows (each ran out and was scanned in full after
            # it): whole rows are cheaper until the caller rebuilds them; same minima, same bits
            use_list = False
        if total > thr:
            return q, total, work
        if work >= work_limit:
            return q + 1, np.nan, work
    return perm.shape[0], np.nan, work


@njit(parallel=True, cache=True, nogil=True)
def gflip_flip(D, col, sign, slack, order, list_d):  # pragma: no cover - compiled
    """In place, ``D[i, j] += sign (col_i - col_j)**2`` clamped at 0 (G-flip's flip of one
    feature, no ``n x n`` temporary), and ``list_d[i] = D[i, order[i]]``; a removal
    (``sign < 0``) adds ``max_j (col_i - col_j)**2`` to ``slack[i]`` (the bound of
    :func:`gflip_sorted_margins`)."""
    n = D.shape[0]
    lo = col.min()
    hi = col.max()
    for i in prange(n):
        ci = col[i]
        for j in range(n):
            t = ci - col[j]
            v = D[i, j] + sign * t * t
            D[i, j] = v if v > 0.0 else 0.0
        for r in range(order.shape[1]):
            list_d[i, r] = D[i, order[i, r]]
        if sign < 0:
            slack[i] += max((ci - lo) * (ci - lo), (hi - ci) * (hi - ci))


@njit(parallel=True, cache=True, nogil=True)
def gflip_sort_rows(D, order, list_d, sorted_d0, slack):  # pragma: no cover - compiled
    """Rebuild :func:`gflip_sorted_margins`'s lists: the ``K = order.shape[1]`` nearest other
    samples of each row by increasing ``D[i]`` (a partition, then a sort of ``K``), their
    distances (in ``list_d`` and ``sorted_d0``), and ``slack = 0``.  ``O(n^2 + n K log K)``."""
    n = D.shape[0]
    K = order.shape[1]
    for i in prange(n):
        row = D[i].copy()
        row[i] = np.inf
        kth = np.partition(row, K - 1)[K - 1]
        cand = np.empty(K, np.int64)
        m = 0
        for j in range(n):  # below the K-th value, then ties with it, in index order
            if row[j] < kth and m < K:
                cand[m] = j
                m += 1
        for j in range(n):
            if m >= K:
                break
            if row[j] == kth and j != i:
                cand[m] = j
                m += 1
        vals = np.empty(K, np.float64)
        for r in range(K):
            vals[r] = row[cand[r]]
        idx = np.argsort(vals, kind="mergesort")
        for r in range(K):
            order[i, r] = cand[idx[r]]
            sorted_d0[i, r] = vals[idx[r]]
            list_d[i, r] = vals[idx[r]]
        slack[i] = 0.0


@njit(parallel=True, cache=True, nogil=True)
def index_phi_dot(A, B, idx, v, phi, out):  # pragma: no cover - compiled
    """out[i, t] = sum_k v[k] * phi(A[i, k] - B[idx[i, t], k]) (any real v); 0 where idx < 0.

    Added for SQP-FW: distances to listed candidates under a weight vector or a step
    direction (which may be negative, so the pre-scaling trick does not apply).
    """
    na, d = A.shape
    kk = idx.shape[1]
    for i in prange(na):
        for t in range(kk):
            j = idx[i, t]
            s = 0.0
            if j >= 0:
                if phi == 0:
                    for k in range(d):
                        s += v[k] * abs(A[i, k] - B[j, k])
                else:
                    for k in range(d):
                        a = A[i, k] - B[j, k]
                        s += v[k] * a * a
            out[i, t] = s
    return out


# -- serial / threaded choice per call (see knnweights.engine.jit.size_dispatch) ---------------------------------
pairwise_phi = size_dispatch(pairwise_phi, lambda A, B, *a: A.shape[0] * B.shape[0] * max(1, A.shape[1]))
pairwise_phi_sym = size_dispatch(pairwise_phi_sym, lambda A, *a: A.shape[0] * A.shape[0] * max(1, A.shape[1]) // 2)
coef_phi_rows = size_dispatch(coef_phi_rows, lambda A, B, *a: A.shape[0] * B.shape[0] * max(1, A.shape[1]))
index_phi_rows = size_dispatch(index_phi_rows, lambda A, B, idx, *a: idx.size * max(1, A.shape[1]))
index_phi_dot = size_dispatch(index_phi_dot, lambda A, B, idx, *a: idx.size * max(1, A.shape[1]))
select_neighbors = size_dispatch(select_neighbors, lambda D, *a: D.size * 4)
select_hits_misses = size_dispatch(select_hits_misses, lambda D, *a: D.size * 4)
gflip_margins = size_dispatch(gflip_margins, lambda D, *a: D.size * 4)
gflip_flip = size_dispatch(gflip_flip, lambda D, *a: D.size)
gflip_sorted_margins = size_dispatch(gflip_sorted_margins, lambda D, col, s, c, order, *a: order.size * 4)
gflip_sort_rows = size_dispatch(gflip_sort_rows, lambda D, *a: D.size * 4)
soft_coefficients = size_dispatch(soft_coefficients, lambda D, *a: D.size * 40)
soft_coefficient_counts = size_dispatch(soft_coefficient_counts, lambda D, *a: D.size * 4)
soft_coefficients_sparse = size_dispatch(soft_coefficients_sparse, lambda D, *a: D.size * 4)
radius_counts = size_dispatch(radius_counts, lambda D, *a: D.size * 4)
radius_coefficients = size_dispatch(radius_coefficients, lambda D, *a: D.size * 4)
fold_pairs = size_dispatch(fold_pairs, lambda P, *a: P.size)


# -- NCA (stochastic nearest neighbour) ------------------------------------------------------
# Between the two BLAS products of engine.neighbors.nca_terms; the exponential runs in
# NumPy (vectorised; these compiled loops would call the scalar libm exp).


@njit(parallel=True, cache=True, nogil=True)
def nca_shifted_logits(G, sq_rows, sq_cols, row_offset):  # pragma: no cover - compiled
    """In place: ``G[r, c] = a_r . a_c`` becomes ``-D[r, c] + min_c' D[r, c']`` with
    ``D = max(0, sq_rows[r] + sq_cols[c] - 2 G[r, c])``, and ``-inf`` on the sample itself
    (``c = row_offset + r``); so its exponential is the unnormalised softmax, largest 1."""
    nr, nc = G.shape
    for r in prange(nr):
        me = row_offset + r
        q = sq_rows[r]
        dmin = np.inf
        for c in range(nc):
            dd = q + sq_cols[c] - 2.0 * G[r, c]
            if dd < 0.0:
                dd = 0.0
            if c == me:
                dd = np.inf
            G[r, c] = dd
            if c != me and G[r, c] < dmin:  # the stored (float32: rounded) value, so the top logit is 0
                dmin = G[r, c]
        if dmin == np.inf:  # no other sample
            dmin = 0.0
        for c in range(nc):
            G[r, c] = dmin - G[r, c]
    return G


@njit(parallel=True, cache=True, nogil=True)
def nca_coefficients(E, codes_rows, codes_cols, p):  # pragma: no cover - compiled
    """In place: ``E`` (unnormalised softmax rows ``e_rc``, ``0`` on the sample itself) becomes
    the gradient coefficients ``C[r, c] = p_rc (p_r - [y_c = y_r])`` with ``p_rc = e_rc / sum_c e_rc``
    and ``p[r] = sum_{c: y_c = y_r} p_rc`` (Goldberger et al. 2004, eqs. 1, 2, 5); the sums in
    float64.  A row with no other sample gets ``p = 0`` and zero coefficients."""
    nr, nc = E.shape
    for r in prange(nr):
        own = codes_rows[r]
        s = 0.0
        sh = 0.0
        for c in range(nc):
            e = np.float64(E[r, c])
            s += e
            if codes_cols[c] == own:
                sh += e
        pr = sh / s if s > 0.0 else 0.0
        inv = 1.0 / s if s > 0.0 else 0.0
        a = pr * inv
        b = (pr - 1.0) * inv
        for c in range(nc):
            E[r, c] = E[r, c] * (b if codes_cols[c] == own else a)
        p[r] = pr
    return E


nca_shifted_logits = size_dispatch(nca_shifted_logits, lambda G, *a: G.size * 4)
nca_coefficients = size_dispatch(nca_coefficients, lambda E, *a: E.size * 4)
