"""Compiled ramp distances: the Relief family's ``diff="ramp"`` (Hong 1997; Robnik-Sikonja & Kononenko
2003, Sec. 2.7) summed over the features of every pair of samples.

A feature's term is ``min(1, max(0, (|z_if - z_jf| - t_eq) / (t_diff - t_eq)))`` on range-normalised
values, or ``[z_if != z_jf]`` for a discrete feature, times its weight.  Each distance adds its terms one
feature after the other, in feature order: the bits do not depend on the CPU or on the number of
threads (each task writes its own rows).  The loop over the samples ``j`` is the inner one, so the
independent distances of a row are computed side by side (SIMD) without reordering any sum.
"""


from .jit import njit, size_dispatch, task_range


@njit(inline="always", cache=True, nogil=True)
def ramp_term(x, t_eq, width):  # pragma: no cover - compiled
    """The ramp of a range-normalised absolute difference ``x``: ``min(1, max(0, (x - t_eq) / width))``,
    ``width = t_diff - t_eq``; the one definition every compiled ramp uses."""
    return min(max((x - t_eq) / width, 0.0), 1.0)


@njit(cache=True, nogil=True)
def ramp_rows(ZT, rows, t_eq, width, disc, w, out, part, parts):  # pragma: no cover - compiled
    """``out[r, j] = sum_f w[f] ramp_f(ZT[f, rows[r]], ZT[f, j])`` for every sample ``j``.

    ``ZT`` is the range-normalised data transposed (features x samples, contiguous rows);
    ``width = t_diff - t_eq``; ``disc[f]``: feature ``f`` is discrete (0/1 mismatch).
    """
    d, n = ZT.shape
    for r in task_range(rows.size, part, parts):
        i = rows[r]
        o = out[r]
        for j in range(n):
            o[j] = 0.0
        for f in range(d):
            zf = ZT[f]
            zi = zf[i]
            wf = w[f]
            if disc[f]:
                for j in range(n):
                    if zf[j] != zi:
                        o[j] += wf
            else:
                for j in range(n):
                    o[j] += wf * ramp_term(abs(zi - zf[j]), t_eq, width)


ramp_rows = size_dispatch(ramp_rows, lambda ZT, rows, *a: 2 * rows.size * ZT.size)


@njit(inline="always", cache=True, nogil=True)
def _add_terms(zi, zj, c, t_eq, width, disc, o):  # pragma: no cover - compiled
    """``o[f] += c ramp_f(zi[f], zj[f])`` for every feature (the features side by side)."""
    for f in range(zi.size):
        if disc[f]:
            t = 1.0 if zi[f] != zj[f] else 0.0
        else:
            t = ramp_term(abs(zi[f] - zj[f]), t_eq, width)
        o[f] += c * t


@njit(cache=True, nogil=True)
def ramp_coef_rows(Z, rows, P, t_eq, width, disc, out, part, parts):  # pragma: no cover - compiled
    """``out[r, f] = sum_j P[r, j] ramp_f(Z[rows[r]], Z[j])``, ``j`` ascending (zero coefficients skipped)."""
    n = Z.shape[0]
    for r in task_range(rows.size, part, parts):
        o = out[r]
        for f in range(o.size):
            o[f] = 0.0
        zi = Z[rows[r]]
        for j in range(n):
            c = P[r, j]
            if c != 0.0:
                _add_terms(zi, Z[j], c, t_eq, width, disc, o)


@njit(cache=True, nogil=True)
def ramp_index_rows(Z, rows, idx, C, t_eq, width, disc, out, part, parts):  # pragma: no cover - compiled
    """``out[r, f] = sum_t C[r, t] ramp_f(Z[rows[r]], Z[idx[r, t]])`` in the order of ``t`` (``idx < 0`` and
    zero coefficients skipped)."""
    for r in task_range(rows.size, part, parts):
        o = out[r]
        for f in range(o.size):
            o[f] = 0.0
        zi = Z[rows[r]]
        for t in range(idx.shape[1]):
            j = idx[r, t]
            c = C[r, t]
            if j >= 0 and c != 0.0:
                _add_terms(zi, Z[j], c, t_eq, width, disc, o)


ramp_coef_rows = size_dispatch(ramp_coef_rows, lambda Z, rows, P, *a: 2 * P.size * Z.shape[1])
ramp_index_rows = size_dispatch(ramp_index_rows, lambda Z, rows, idx, *a: 2 * idx.size * Z.shape[1])
