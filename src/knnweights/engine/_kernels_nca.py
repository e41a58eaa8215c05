"""Compiled loops of NCA's gradient (stochastic nearest neighbours), between the two BLAS products of
:func:`knnweights.engine.neighbors.nca_terms`; the exponential runs in NumPy (vectorised; these
compiled loops would call the scalar libm exp).

Like every kernel of the engine, these take plain arrays and write plain arrays, never let the
compiler reassociate a sum (no ``fastmath``), and give the same bits serially or threaded
(:mod:`knnweights.engine._kernels`).
"""

import numpy as np

from .jit import njit, size_dispatch, task_range


@njit(cache=True, nogil=True)
def nca_shifted_logits(G, sq_rows, sq_cols, row_offset, part, parts):  # pragma: no cover - compiled
    """In place: ``G[r, c] = a_r . a_c`` becomes ``-D[r, c] + min_c' D[r, c']`` with
    ``D = max(0, sq_rows[r] + sq_cols[c] - 2 G[r, c])``, and ``-inf`` on the sample itself
    (``c = row_offset + r``); so its exponential is the unnormalised softmax, largest 1."""
    nr, nc = G.shape
    for r in task_range(nr, part, parts):
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


@njit(cache=True, nogil=True)
def nca_coefficients(E, codes_rows, codes_cols, p, part, parts):  # pragma: no cover - compiled
    """In place: ``E`` (unnormalised softmax rows ``e_rc``, ``0`` on the sample itself) becomes
    the gradient coefficients ``C[r, c] = p_rc (p_r - [y_c = y_r])`` with ``p_rc = e_rc / sum_c e_rc``
    and ``p[r] = sum_{c: y_c = y_r} p_rc`` (Goldberger et al. 2004, eqs. 1, 2, 5); the sums in
    float64.  A row with no other sample gets ``p = 0`` and zero coefficients."""
    nr, nc = E.shape
    for r in task_range(nr, part, parts):
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


# -- serial / threaded choice per call (see knnweights.engine.jit.size_dispatch) ---------------------------------
nca_shifted_logits = size_dispatch(nca_shifted_logits, lambda G, *a: G.size * 4)
nca_coefficients = size_dispatch(nca_coefficients, lambda E, *a: E.size * 4)
