"""Compiled soft (kernel) neighbour coefficients: each row's hit / miss softmax over a distance block,
fused into margin coefficients.

Like every kernel of the engine, these take plain arrays and write plain arrays, never let the
compiler reassociate a sum (no ``fastmath``), and give the same bits serially or threaded
(:mod:`knnweights.engine._kernels`).
"""

import numpy as np

from .jit import njit, size_dispatch, task_range


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


@njit(cache=True, nogil=True)
def soft_coefficients(D, codes_rows, codes_cols, row_offset, inv_sigma, P, lse_h, lse_m, ent_h, ent_m, part, parts):
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
    for r in task_range(nr, part, parts):
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


# -- serial / threaded choice per call (see knnweights.engine.jit.size_dispatch) ---------------------------------
soft_coefficients = size_dispatch(soft_coefficients, lambda D, *a: D.size * 40)
