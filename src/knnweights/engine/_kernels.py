"""The compiled pairwise-distance kernels, and the constants every kernel family shares.

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

from .jit import full_2d, njit, size_dispatch, task_range

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


@njit(cache=True, nogil=True)
def pairwise_phi_t(A, BT, phi, out, part, parts):  # pragma: no cover - compiled
    """out[i, j] = sum_k phi(A[i, k] - BT[k, j]) for a row block A (na, d) and a transposed block
    BT (d, nb), C-contiguous (made once per call by :func:`pairwise_phi`, not once per part)."""
    na, d = A.shape
    nb = BT.shape[1]
    n_tj = (nb + _TILE_J - 1) // _TILE_J
    for t in task_range(((na + _TILE_I - 1) // _TILE_I) * n_tj, part, parts):
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


@njit(cache=True, nogil=True)
def upper_phi(A, AT, phi, out, part, parts):  # pragma: no cover - compiled
    """The upper triangle (and diagonal) of ``out = pairwise_phi(A, A)``, from the output tiles that
    touch it; ``AT`` is ``A.T``, C-contiguous.  The lower triangle is left to :func:`mirror_lower`:
    written here, tile by tile, its scattered rows slowed the other threads' tiles more than the
    separate pass costs."""
    n, d = A.shape
    tiles = upper_tiles(n, _TILE_I, _TILE_J)
    for t in task_range(tiles.shape[0], part, parts):  # active tiles all cost the same: equal parts stay balanced
        i0 = tiles[t, 0] * _TILE_I
        i1 = min(i0 + _TILE_I, n)
        j0 = tiles[t, 1] * _TILE_J
        j1 = min(j0 + _TILE_J, n)
        acc = full_2d(i1 - i0, j1 - j0, 0.0, out.dtype)
        _tile_phi_t(A, AT, i0, i1, j0, j1, phi, acc)
        for i in range(i0, i1):
            for j in range(max(i, j0), j1):
                out[i, j] = acc[i - i0, j - j0]
    return out


@njit(task_pipeline=True, cache=True, nogil=True)
def mirror_lower(out, part, parts):  # pragma: no cover - compiled
    """``out[i, j] = out[j, i]`` below the diagonal of a square ``out``."""
    n = out.shape[0]
    for i in task_range(n, part, parts):
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


@njit(cache=True, nogil=True)
def coef_phi_rows(A, B, P, phi, out, part, parts):  # pragma: no cover - compiled
    """out[i, :] = sum_j P[i, j] * phi(A[i] - B[j]); zero coefficients are skipped."""
    na, d = A.shape
    nb = B.shape[0]
    for rb in task_range((na + _COEF_ROWS - 1) // _COEF_ROWS, part, parts):
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


@njit(task_pipeline=True, cache=True, nogil=True)
def index_phi_rows(A, B, idx, coef, phi, out, part, parts):  # pragma: no cover - compiled
    """out[i, :] = sum_t coef[i, t] * phi(A[i] - B[idx[i, t]]); negative idx skipped."""
    na, d = A.shape
    kk = idx.shape[1]
    for i in task_range(na, part, parts):
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


@njit(cache=True, nogil=True)
def index_phi_dot(A, B, idx, v, phi, out, part, parts):  # pragma: no cover - compiled
    """out[i, t] = sum_k v[k] * phi(A[i, k] - B[idx[i, t], k]) (any real v); 0 where idx < 0.

    Distances to listed candidates under a weight vector or a step direction (SQP-FW's), which
    may be negative, so the pre-scaling of the other kernels does not apply.
    """
    na, d = A.shape
    kk = idx.shape[1]
    for i in task_range(na, part, parts):
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
pairwise_phi_t = size_dispatch(pairwise_phi_t, lambda A, BT, *a: A.shape[0] * BT.shape[1] * max(1, A.shape[1]))
upper_phi = size_dispatch(upper_phi, lambda A, *a: A.shape[0] * A.shape[0] * max(1, A.shape[1]) // 2)
mirror_lower = size_dispatch(mirror_lower, lambda out, *a: out.size)


def pairwise_phi(A, B, phi, out):
    """``out[i, j] = sum_k phi(A[i, k] - B[j, k])`` for row blocks ``A`` (na, d), ``B`` (nb, d)."""
    return pairwise_phi_t(A, np.ascontiguousarray(B.T), phi, out)


def pairwise_phi_sym(A, phi, out):
    """``out = pairwise_phi(A, A)``: only the output tiles touching the upper triangle are computed,
    the rest mirrored (``|a - b| = |b - a|`` and each sum runs in the same order, so the result is
    bit-identical to :func:`pairwise_phi`)."""
    upper_phi(A, np.ascontiguousarray(A.T), phi, out)
    return mirror_lower(out)
coef_phi_rows = size_dispatch(coef_phi_rows, lambda A, B, *a: A.shape[0] * B.shape[0] * max(1, A.shape[1]))
index_phi_rows = size_dispatch(index_phi_rows, lambda A, B, idx, *a: idx.size * max(1, A.shape[1]))
index_phi_dot = size_dispatch(index_phi_dot, lambda A, B, idx, *a: idx.size * max(1, A.shape[1]))
