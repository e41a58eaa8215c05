"""Compiled neighbour selection: the ``k`` nearest columns of each row of a distance block, by the
engine's tie rule.

Like every kernel of the engine, these take plain arrays and write plain arrays, never let the
compiler reassociate a sum (no ``fastmath``), and give the same bits serially or threaded
(:mod:`knnweights.engine._kernels`).
"""

import numpy as np

from .jit import njit, size_dispatch, task_range


@njit(task_pipeline=True, cache=True, nogil=True)
def select_neighbors(D, self_cols, codes_rows, codes_cols, n_classes, k, tol_rows, tol_cols, idx_out,
                     dist_out, part, parts):  # pragma: no cover - compiled
    """k smallest entries of each row of D, separately for every class of the columns.

    ``idx_out`` (nr, n_classes, k) receives column indices sorted by distance, equal
    distances by index (the tie rule of :func:`insert_sorted`, with the tolerances
    ``tol_rows`` / ``tol_cols``), ``-1`` where a class has fewer than k candidates;
    ``dist_out`` likewise (``inf`` where missing).  Column ``self_cols[r]`` (the sample
    itself, -1 for none) is skipped for row ``r``.
    """
    nr, nc = D.shape
    for r in task_range(nr, part, parts):
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


@njit(task_pipeline=True, cache=True, nogil=True)
def select_hits_misses(D, self_cols, codes_rows, codes_cols, k, tol_rows, tol_cols,  # pragma: no cover - compiled
                       hit_idx, hit_dist, miss_idx, miss_dist, part, parts):
    """k nearest hits (same class, self excluded) and k nearest misses (any other class), by the
    tie rule of :func:`insert_sorted`."""
    nr, nc = D.shape
    for r in task_range(nr, part, parts):
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


# -- serial / threaded choice per call (see knnweights.engine.jit.size_dispatch) ---------------------------------
select_neighbors = size_dispatch(select_neighbors, lambda D, *a: D.size * 4)
select_hits_misses = size_dispatch(select_hits_misses, lambda D, *a: D.size * 4)
