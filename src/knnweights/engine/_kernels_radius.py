"""Compiled radius neighbourhoods (SURF / MultiSURF): in-radius pair counts and coefficients, and the
folding of a pair-coefficient matrix onto one row per pair.

Like every kernel of the engine, these take plain arrays and write plain arrays, never let the
compiler reassociate a sum (no ``fastmath``), and give the same bits serially or threaded
(:mod:`knnweights.engine._kernels`).
"""

import numpy as np

from .jit import njit, size_dispatch, task_range


@njit(cache=True, nogil=True)
def fold_pairs(P, out, part, parts):  # pragma: no cover - compiled
    """out = P + P^T with each unordered pair given to one of its rows, (n - 1) / 2 pairs a row.

    Pair (i, j) belongs to row i when (j - i) mod n is in (0, n/2), or equals n/2 and
    i < n/2: the rows, hence the threads of a following row kernel, stay equally loaded.
    """
    n = P.shape[0]
    for i in task_range(n, part, parts):
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


@njit(cache=True, nogil=True)
def radius_counts(D, T, self_cols, lab_rows, lab_cols, s, kind, counts, part, parts):  # pragma: no cover - compiled
    """counts[r, g] = the in-radius pairs of row ``r`` in group ``g``."""
    b, n = D.shape
    for r in task_range(b, part, parts):
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


@njit(cache=True, nogil=True)
def radius_coefficients(D, T, self_cols, lab_rows, lab_cols, s, kind, table, fold, symmetric, P,  # pragma: no cover
                        part, parts):
    """P[r, j] = table[r, g] for an in-radius pair of group ``g``, else 0.

    ``fold`` (``D`` the whole ``n x n`` matrix, row ``r`` the sample ``r``): ``P + P^T`` with each
    unordered pair given to one of its rows, the sums of :func:`fold_pairs` on the unfolded ``P``
    without building it; ``symmetric``: ``D`` is bit-for-bit symmetric (from :func:`pairwise_phi_sym`),
    so ``D[j, i]`` is read as ``D[i, j]`` (row-wise).
    """
    b, n = D.shape
    h = (n - 1) // 2  # a row's pairs: the offsets (j - i) mod n in 1..h, and n/2 for i < n/2 (n even)
    for r in task_range(b, part, parts):
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


# -- serial / threaded choice per call (see knnweights.engine.jit.size_dispatch) ---------------------------------
radius_counts = size_dispatch(radius_counts, lambda D, *a: D.size * 4)
radius_coefficients = size_dispatch(radius_coefficients, lambda D, *a: D.size * 4)
fold_pairs = size_dispatch(fold_pairs, lambda P, *a: P.size)
