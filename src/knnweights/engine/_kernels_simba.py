"""Compiled passes of the margin-based feature selection of Gilad-Bachrach, Navot & Tishby (2004):
Simba's online pass, and G-flip's leave-one-out margins, its sorted neighbour lists and its flips.

Like every kernel of the engine, these take plain arrays and write plain arrays, never let the
compiler reassociate a sum (no ``fastmath``), and give the same bits serially or threaded
(:mod:`knnweights.engine._kernels`).
"""

import numpy as np

from ._kernels import TIE_ULPS
from .jit import njit, size_dispatch, task_range


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



@njit(cache=True, nogil=True)
def gflip_margins(D, col, sign, codes, utility, beta, out, part, parts):  # pragma: no cover - compiled
    """Leave-one-out hypothesis margins with the feature set ``F +/- {col}`` (G-flip).

    ``D`` holds squared Euclidean distances over ``F``; the candidate set adds
    (``sign=1``) or removes (``sign=-1``) the feature whose values are ``col``.
    ``out[i] = u(theta_i)``, ``theta_i = (||x_i - nearmiss|| - ||x_i - nearhit||) / 2``;
    ``utility``: 0 linear, 1 zero-one, 2 sigmoid ``1 / (1 + exp(-beta theta))``.
    """
    n = D.shape[0]
    for i in task_range(n, part, parts):
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


@njit(cache=True, nogil=True)
def gflip_sorted_margins(D, col, sign, codes, order, list_d, sorted_d0, slack, utility, beta,  # pragma: no cover
                         out, part, parts):
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
    lo, hi = _col_range(col)
    visited = 0
    for i in task_range(n, part, parts):
        out[i], c = _gflip_row(i, D, col, lo, hi, sign, codes, order, list_d, sorted_d0, slack, utility, beta, True)
        visited += c
    return visited


@njit(inline="always", cache=True, nogil=True)
def _col_range(col):  # pragma: no cover - compiled
    """``(min, max)`` of a feature's values, as a loop (no array reduction in a kernel in parts)."""
    lo = col[0]
    hi = col[0]
    for v in col:
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


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
        lo, hi = _col_range(col)
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


@njit(cache=True, nogil=True)
def gflip_flip(D, col, sign, slack, order, list_d, part, parts):  # pragma: no cover - compiled
    """In place, ``D[i, j] += sign (col_i - col_j)**2`` clamped at 0 (G-flip's flip of one
    feature, no ``n x n`` temporary), and ``list_d[i] = D[i, order[i]]``; a removal
    (``sign < 0``) adds ``max_j (col_i - col_j)**2`` to ``slack[i]`` (the bound of
    :func:`gflip_sorted_margins`)."""
    n = D.shape[0]
    lo, hi = _col_range(col)
    for i in task_range(n, part, parts):
        ci = col[i]
        for j in range(n):
            t = ci - col[j]
            v = D[i, j] + sign * t * t
            D[i, j] = v if v > 0.0 else 0.0
        for r in range(order.shape[1]):
            list_d[i, r] = D[i, order[i, r]]
        if sign < 0:
            slack[i] += max((ci - lo) * (ci - lo), (hi - ci) * (hi - ci))


@njit(cache=True, nogil=True)
def gflip_sort_rows(D, order, list_d, sorted_d0, slack, part, parts):  # pragma: no cover - compiled
    """Rebuild :func:`gflip_sorted_margins`'s lists: the ``K = order.shape[1]`` nearest other
    samples of each row by increasing ``D[i]``, equal distances by index (a bounded max-heap
    over the row, then sorted out of it), their distances (in ``list_d`` and ``sorted_d0``),
    and ``slack = 0``.  ``O(n^2 log K)``."""
    n = D.shape[0]
    K = order.shape[1]
    for i in task_range(n, part, parts):
        hv = np.empty(K, np.float64)
        hi = np.empty(K, np.int64)
        m = 0
        for j in range(n):
            if j == i:
                continue
            v = D[i, j]
            if m < K:  # fill, then heapify once full
                hv[m] = v
                hi[m] = j
                m += 1
                if m == K:
                    for p in range(K // 2 - 1, -1, -1):
                        _sift_down(hv, hi, K, p)
            elif v < hv[0]:  # (v, j) precedes the largest kept: j exceeds every kept index
                hv[0] = v
                hi[0] = j
                _sift_down(hv, hi, K, 0)
        for r in range(K - 1, 0, -1):  # heap sort: the largest to the end, ascending (value, index)
            hv[0], hv[r] = hv[r], hv[0]
            hi[0], hi[r] = hi[r], hi[0]
            _sift_down(hv, hi, r, 0)
        for r in range(K):
            order[i, r] = hi[r]
            sorted_d0[i, r] = hv[r]
            list_d[i, r] = hv[r]
        slack[i] = 0.0


@njit(inline="always", cache=True, nogil=True)
def _sift_down(hv, hi, size, p):  # pragma: no cover - compiled
    """Restore the max-heap on ``(hv, hi)`` (value, then index) below position ``p`` of ``size``."""
    while True:
        c = 2 * p + 1
        if c >= size:
            return
        r = c + 1
        if r < size and (hv[r] > hv[c] or (hv[r] == hv[c] and hi[r] > hi[c])):
            c = r
        if hv[c] > hv[p] or (hv[c] == hv[p] and hi[c] > hi[p]):
            hv[c], hv[p] = hv[p], hv[c]
            hi[c], hi[p] = hi[p], hi[c]
            p = c
        else:
            return


# -- serial / threaded choice per call (see knnweights.engine.jit.size_dispatch) ---------------------------------
gflip_margins = size_dispatch(gflip_margins, lambda D, *a: D.size * 4)
gflip_flip = size_dispatch(gflip_flip, lambda D, *a: D.size)
gflip_sorted_margins = size_dispatch(gflip_sorted_margins, lambda D, col, s, c, order, *a: order.size * 4,
                                     combine=sum)
gflip_sort_rows = size_dispatch(gflip_sort_rows, lambda D, *a: D.size * 4)
