"""Compiled O(n^2 d) kernels: plain arrays in, plain arrays out.

Every kernel here works on *pre-scaled* data: because ``w >= 0``, the weighted
Manhattan distance ``sum_j w_j |a_j - b_j|`` equals the plain Manhattan distance
between ``w * a`` and ``w * b``, and the weighted squared Euclidean distance equals
the plain one between ``sqrt(w) * a`` and ``sqrt(w) * b``.  The Python layer
(:mod:`knnweights.neighbors`) does the scaling, validation, chunking and dispatch;
nothing in this module is public API.  Each kernel has a NumPy reference in
``tests/test_kernels.py``.

``phi`` codes: 0 = L1 (``|a|``), 1 = L2sq (``a**2``).
"""

import numba
import numpy as np
from numba import njit, prange

L1 = 0
L2SQ = 1

# Rows of the left block kept hot in cache while the right block streams past.
_ROW_BLOCK = 8


@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def pairwise_phi(A, B, phi, out):  # pragma: no cover - compiled
    """out[i, j] = sum_k phi(A[i, k] - B[j, k]) for row blocks A (na, d), B (nb, d)."""
    na, d = A.shape
    nb = B.shape[0]
    nblk = (na + _ROW_BLOCK - 1) // _ROW_BLOCK
    for bi in prange(nblk):
        i0 = bi * _ROW_BLOCK
        i1 = min(i0 + _ROW_BLOCK, na)
        for j in range(nb):
            for i in range(i0, i1):
                s = A.dtype.type(0.0)
                if phi == 0:
                    for k in range(d):
                        s += abs(A[i, k] - B[j, k])
                else:
                    for k in range(d):
                        t = A[i, k] - B[j, k]
                        s += t * t
                out[i, j] = s
    return out


@njit(parallel=True, fastmath=True, cache=True, nogil=True)
def coef_phi_rows(A, B, P, phi, out):  # pragma: no cover - compiled
    """out[i, :] = sum_j P[i, j] * phi(A[i] - B[j]); zero coefficients are skipped."""
    na, d = A.shape
    nb = B.shape[0]
    for i in prange(na):
        for k in range(d):
            out[i, k] = 0.0
        for j in range(nb):
            c = P[i, j]
            if c == 0.0:
                continue
            if phi == 0:
                for k in range(d):
                    out[i, k] += c * abs(A[i, k] - B[j, k])
            else:
                for k in range(d):
                    t = A[i, k] - B[j, k]
                    out[i, k] += c * t * t
    return out


@njit(parallel=True, fastmath=True, cache=True, nogil=True)
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
def select_neighbors(D, self_cols, codes_rows, codes_cols, n_classes, k, idx_out, dist_out):  # pragma: no cover
    """k smallest entries of each row of D, separately for every class of the columns.

    ``idx_out`` (nr, n_classes, k) receives column indices sorted by distance (ties by
    index), ``-1`` where a class has fewer than k candidates; ``dist_out`` likewise
    (``inf`` where missing).  Column ``self_cols[r]`` (the sample itself, -1 for
    none) is skipped for row ``r``.
    """
    nr, nc = D.shape
    for r in prange(nr):
        for c in range(n_classes):
            for t in range(k):
                idx_out[r, c, t] = -1
                dist_out[r, c, t] = np.inf
        self_col = self_cols[r]
        for j in range(nc):
            if j == self_col:
                continue
            c = codes_cols[j]
            v = D[r, j]
            # insertion into the sorted buffer of class c (stable: ties keep lower index first)
            if idx_out[r, c, k - 1] >= 0 and v >= dist_out[r, c, k - 1]:
                continue
            t = k - 1
            while t > 0 and (idx_out[r, c, t - 1] < 0 or dist_out[r, c, t - 1] > v):
                idx_out[r, c, t] = idx_out[r, c, t - 1]
                dist_out[r, c, t] = dist_out[r, c, t - 1]
                t -= 1
            idx_out[r, c, t] = j
            dist_out[r, c, t] = v
    return idx_out, dist_out


@njit(parallel=True, cache=True, nogil=True)
def select_hits_misses(D, self_cols, codes_rows, codes_cols, k, hit_idx, hit_dist, miss_idx, miss_dist):  # pragma: no cover
    """k nearest hits (same class, self excluded) and k nearest misses (any other class)."""
    nr, nc = D.shape
    for r in prange(nr):
        for t in range(k):
            hit_idx[r, t] = -1
            miss_idx[r, t] = -1
            hit_dist[r, t] = np.inf
            miss_dist[r, t] = np.inf
        own = codes_rows[r]
        self_col = self_cols[r]
        for j in range(nc):
            if j == self_col:
                continue
            v = D[r, j]
            if codes_cols[j] == own:
                if hit_idx[r, k - 1] >= 0 and v >= hit_dist[r, k - 1]:
                    continue
                t = k - 1
                while t > 0 and (hit_idx[r, t - 1] < 0 or hit_dist[r, t - 1] > v):
                    hit_idx[r, t] = hit_idx[r, t - 1]
                    hit_dist[r, t] = hit_dist[r, t - 1]
                    t -= 1
                hit_idx[r, t] = j
                hit_dist[r, t] = v
            else:
                if miss_idx[r, k - 1] >= 0 and v >= miss_dist[r, k - 1]:
                    continue
                t = k - 1
                while t > 0 and (miss_idx[r, t - 1] < 0 or miss_dist[r, t - 1] > v):
                    miss_idx[r, t] = miss_idx[r, t - 1]
                    miss_dist[r, t] = miss_dist[r, t - 1]
                    t -= 1
                miss_idx[r, t] = j
                miss_dist[r, t] = v
    return hit_idx, hit_dist, miss_idx, miss_dist


@njit(cache=True, fastmath=True, nogil=True)
def simba_pass(X, codes, order, w):  # pragma: no cover - compiled
    """One Simba pass (Gilad-Bachrach, Navot & Tishby 2004, Fig. 1), in place on ``w``.

    For each instance ``x = X[order[t]]``: its nearest hit and miss under
    ``||z||_w = sqrt(sum_i w_i^2 z_i^2)``, then
    ``w_i += 1/2 ((x_i - nm_i)^2 / ||x - nm||_w - (x_i - nh_i)^2 / ||x - nh||_w) w_i``.
    Online by definition: each step uses the weights of the previous one.
    """
    n, d = X.shape
    for t in range(order.shape[0]):
        i = order[t]
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
                if s < bh:
                    bh = s
                    ih = j
            elif s < bm:
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


@njit(parallel=True, fastmath=False, cache=True, nogil=True)
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


# -- size dispatch ------------------------------------------------------------------------
# Waking the thread pool costs ~10-50 us on an idle machine and milliseconds on a busy
# one, far more than a small block's work: below SERIAL_WORK element operations a
# parallel kernel runs on the calling thread only.
SERIAL_WORK = 4_000_000


def _size_dispatch(kernel, work):
    def call(*args):
        prev = numba.get_num_threads()
        if prev > 1 and work(*args) < SERIAL_WORK:
            numba.set_num_threads(1)
            try:
                return kernel(*args)
            finally:
                numba.set_num_threads(prev)
        return kernel(*args)

    call.__name__ = kernel.py_func.__name__
    call.__doc__ = kernel.py_func.__doc__
    call.compiled = kernel
    return call


pairwise_phi = _size_dispatch(pairwise_phi, lambda A, B, *a: A.shape[0] * B.shape[0] * max(1, A.shape[1]))
coef_phi_rows = _size_dispatch(coef_phi_rows, lambda A, B, *a: A.shape[0] * B.shape[0] * max(1, A.shape[1]))
index_phi_rows = _size_dispatch(index_phi_rows, lambda A, B, idx, *a: idx.size * max(1, A.shape[1]))
index_phi_dot = _size_dispatch(index_phi_dot, lambda A, B, idx, *a: idx.size * max(1, A.shape[1]))
select_neighbors = _size_dispatch(select_neighbors, lambda D, *a: D.size * 4)
select_hits_misses = _size_dispatch(select_hits_misses, lambda D, *a: D.size * 4)
gflip_margins = _size_dispatch(gflip_margins, lambda D, *a: D.size * 4)
