"""Compiled sums over a set of neighbour pairs, for the permutation moments of the pair statistics.

The pairs are a symmetric adjacency in CSR form: row ``i`` lists (sorted) every ``j`` such that
``(i, j)`` or ``(j, i)`` is a pair, and ``flags`` says which: bit 1 for ``(i, j)``, bit 2 for
``(j, i)``.  A feature's pair difference is ``a_ij = sum_{c: ecol[c] = f} |E[i, c] - E[j, c]|`` (one
column per feature for plain data, ``plain=True``; the expanded columns of :mod:`._kernels_mixed`
otherwise), for the features of one block.  With the ramp ``diff`` (``ramp_lo`` / ``ramp_width``
arrays, each column's ``t_eq`` and ``t_diff - t_eq``; ``None`` for the linear ``diff``, which then
compiles to the plain sum) each term is its ramp, the ``diff`` of
:class:`knnweights.weighters._relief_margins.RampDiff` (a discrete feature's expanded columns take
``(0, 1)``, under which each of their terms, 0, 1/2 or 1, is unchanged).  The ramp is not the L1
difference of any encoding of the values (it is 0 on each of two steps below ``t_eq`` whose sum is
above it: no triangle inequality), so it is computed here, per pair.  The matrix whose sums are
taken is, per feature,

    C_ij = (m_ij + m_ji) / 2 (a_ij - abar_f)

(``m`` the pair indicators, ``abar_f`` the feature's mean difference over the pairs): symmetric,
zero on the diagonal.  Every kernel writes only its own row's outputs, so the results do not
depend on the number of threads; the triangle sampler draws from a counter-based generator
seeded by the row.  :class:`knnweights.significance.PairMoments` is the caller (and
:func:`pair_diffs`, the listed pairs' differences, serves the covariate-adjusted p-values);
``tests/test_significance.py`` checks the moments built from these sums against the enumeration
of all permutations.
"""

import numpy as np
from numba.core import types
from numba.extending import overload

from ._kernels_ramp import ramp_term
from .jit import full_1d, njit, size_dispatch, task_range


def _term(x, ramp_lo, ramp_width, c):
    """One column's term of a pair difference: ``x = |E[i, c] - E[j, c]|``, or with ``ramp_lo`` (not ``None``)
    its ramp (:func:`._kernels_ramp.ramp_term`)."""
    if ramp_lo is None:
        return x
    return ramp_term(x, ramp_lo[c], ramp_width[c])


@overload(_term, inline="always")
def _term_compiled(x, ramp_lo, ramp_width, c):
    """:func:`_term` chosen by type when a kernel is compiled: with ``ramp_lo`` ``None`` (the linear ``diff``) the
    kernels' code is the plain ``|E[i, c] - E[j, c]|`` with no branch, the ramp's a specialisation of its own."""
    if isinstance(ramp_lo, types.NoneType):
        return lambda x, ramp_lo, ramp_width, c: x
    return lambda x, ramp_lo, ramp_width, c: ramp_term(x, ramp_lo[c], ramp_width[c])


@njit(inline="always")
def _diff_into(E, ecol, plain, ramp_lo, ramp_width, i, j, buf):  # pragma: no cover - compiled
    """``buf[f] = a_f(i, j)``: the sum over the feature's columns of :func:`_term`."""
    if plain:
        for f in range(buf.shape[0]):
            buf[f] = _term(abs(E[i, f] - E[j, f]), ramp_lo, ramp_width, f)
    else:
        for f in range(buf.shape[0]):
            buf[f] = 0.0
        for c in range(E.shape[1]):
            buf[ecol[c]] += _term(abs(E[i, c] - E[j, c]), ramp_lo, ramp_width, c)


@njit(inline="always")
def _c_into(E, ecol, plain, ramp_lo, ramp_width, i, j, flag, abar, out):  # pragma: no cover - compiled
    """``out[f] = C_ij`` for every feature of the block."""
    m = (0.5 if flag & 1 else 0.0) + (0.5 if flag & 2 else 0.0)
    _diff_into(E, ecol, plain, ramp_lo, ramp_width, i, j, out)
    for f in range(out.shape[0]):
        out[f] = m * (out[f] - abar[f])


@njit(inline="always")
def _find(indices, lo, hi, key):  # pragma: no cover - compiled
    """Position of ``key`` in the sorted ``indices[lo:hi]``, -1 if absent."""
    while lo < hi:
        mid = (lo + hi) // 2
        v = indices[mid]
        if v < key:
            lo = mid + 1
        elif v > key:
            hi = mid
        else:
            return mid
    return -1


@njit(cache=True, nogil=True)
def pair_sums(E, ecol, plain, ramp_lo, ramp_width, indptr, indices, flags, v, continuous, a1, a2,  # pragma: no cover
              ga, counts, part, parts):
    """Over each row's own pairs ``(i, j)`` (bit 1): ``a1[i] = sum a``, ``a2[i] = sum a^2``, ``ga[i] = sum g a``
    per feature and ``counts[i] = (#pairs, sum g, sum g^2)``, ``g`` the outcome difference of the pair
    (``|v_i - v_j|``, or ``[v_i != v_j]`` for classes)."""
    n = indptr.shape[0] - 1
    nf = a1.shape[1]
    for i in task_range(n, part, parts):
        buf = np.empty(nf, np.float64)
        s1 = full_1d(nf, 0.0, np.float64)
        s2 = full_1d(nf, 0.0, np.float64)
        sg = full_1d(nf, 0.0, np.float64)
        c0 = 0.0
        c1 = 0.0
        c2 = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            if flags[p] & 1 == 0:
                continue
            j = indices[p]
            if continuous:
                g = abs(v[i] - v[j])
            else:
                g = 1.0 if v[i] != v[j] else 0.0
            c0 += 1.0
            c1 += g
            c2 += g * g
            _diff_into(E, ecol, plain, ramp_lo, ramp_width, i, j, buf)
            for f in range(nf):
                x = buf[f]
                s1[f] += x
                s2[f] += x * x
                sg[f] += g * x
        a1[i] = s1
        a2[i] = s2
        ga[i] = sg
        counts[i, 0] = c0
        counts[i, 1] = c1
        counts[i, 2] = c2


@njit(cache=True, nogil=True)
def c_powers(E, ecol, plain, ramp_lo, ramp_width, indptr, indices, flags, abar, r1, r2, r3, part,  # pragma: no cover
             parts):
    """Row sums of ``C``, ``C^2`` and ``C^3`` (elementwise powers), per feature."""
    n = indptr.shape[0] - 1
    nf = r1.shape[1]
    for i in task_range(n, part, parts):
        c = np.empty(nf, np.float64)
        s1 = full_1d(nf, 0.0, np.float64)
        s2 = full_1d(nf, 0.0, np.float64)
        s3 = full_1d(nf, 0.0, np.float64)
        for p in range(indptr[i], indptr[i + 1]):
            _c_into(E, ecol, plain, ramp_lo, ramp_width, i, indices[p], flags[p], abar, c)
            for f in range(nf):
                cf = c[f]
                q = cf * cf
                s1[f] += cf
                s2[f] += q
                s3[f] += q * cf
        r1[i] = s1
        r2[i] = s2
        r3[i] = s3


@njit(cache=True, nogil=True)
def c_matvec(E, ecol, plain, ramp_lo, ramp_width, indptr, indices, flags, abar, u, out, part,  # pragma: no cover
             parts):
    """``out[i, f] = sum_j C_ij u[j, f]`` (each feature its own ``C`` and its own vector)."""
    n = indptr.shape[0] - 1
    nf = out.shape[1]
    for i in task_range(n, part, parts):
        c = np.empty(nf, np.float64)
        acc = full_1d(nf, 0.0, np.float64)
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            _c_into(E, ecol, plain, ramp_lo, ramp_width, i, j, flags[p], abar, c)
            uj = u[j]
            for f in range(nf):
                acc[f] += c[f] * uj[f]
        out[i] = acc


@njit(inline="always")
def _mix64(z):  # pragma: no cover - compiled
    """SplitMix64's output function (Steele, Lea & Flood 2014)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(inline="always")
def _triangle_plan(indptr, i, exact_pairs, n_samples, seed):  # pragma: no cover - compiled
    """Row ``i``'s loop over pairs of its neighbours: ``(n_iter, weight, exact, state)``."""
    lo = indptr[i]
    deg = indptr[i + 1] - lo
    exact = deg * (deg - 1) // 2 <= exact_pairs
    n_iter = deg * deg if exact else (n_samples if deg >= 2 else 0)
    w = 2.0 if exact else deg * (deg - 1.0) / max(n_samples, 1)
    state = _mix64(np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(i))
    return n_iter, w, exact, state


@njit(inline="always")
def _neighbour_pair(indptr, indices, i, t, exact, state):  # pragma: no cover - compiled
    """The ``t``-th pair ``(a, b)`` of row ``i``'s entries (every ``a < b`` when exact, else drawn), the
    entry ``q`` of ``(indices[a], indices[b])`` (-1: not a pair, or a skipped exact step) and the state."""
    lo = indptr[i]
    deg = indptr[i + 1] - lo
    if exact:
        a = lo + t // deg
        b = lo + t % deg
        if b <= a:
            return a, b, -1, state
    else:
        state += np.uint64(0x9E3779B97F4A7C15)
        z = _mix64(state)
        u1 = np.int64(z % np.uint64(deg))
        u2 = np.int64((z >> np.uint64(32)) % np.uint64(deg - 1))
        if u2 >= u1:
            u2 += 1
        a = lo + u1
        b = lo + u2
    j = indices[a]
    k = indices[b]
    return a, b, _find(indices, indptr[j], indptr[j + 1], k), state


@njit(cache=True, nogil=True)
def c_triangles(E, ecol, plain, ramp_lo, ramp_width, indptr, indices, flags, abar, exact_pairs, n_samples, seed,
                out, part, parts):  # pragma: no cover - compiled
    """``out[i, f] = (C^3)_ii = sum_{j, k} C_ij C_jk C_ki``, so that ``trace C^3 = out.sum(0)``.

    Exact (every two neighbours of ``i``) when row ``i`` has at most ``exact_pairs`` pairs of
    neighbours; else the unbiased estimate from ``n_samples`` ordered pairs of distinct
    neighbours drawn uniformly (with replacement) by a generator seeded with ``(seed, i)``.
    """
    n = indptr.shape[0] - 1
    nf = out.shape[1]
    for i in task_range(n, part, parts):
        cij = np.empty(nf, np.float64)
        cik = np.empty(nf, np.float64)
        cjk = np.empty(nf, np.float64)
        acc = full_1d(nf, 0.0, np.float64)
        n_iter, w, exact, state = _triangle_plan(indptr, i, exact_pairs, n_samples, seed)
        for t in range(n_iter):
            a, b, q, state = _neighbour_pair(indptr, indices, i, t, exact, state)
            if q < 0:
                continue
            j = indices[a]
            k = indices[b]
            _c_into(E, ecol, plain, ramp_lo, ramp_width, i, j, flags[a], abar, cij)
            _c_into(E, ecol, plain, ramp_lo, ramp_width, i, k, flags[b], abar, cik)
            _c_into(E, ecol, plain, ramp_lo, ramp_width, j, k, flags[q], abar, cjk)
            for f in range(nf):
                acc[f] += w * cij[f] * cjk[f] * cik[f]
        out[i] = acc


@njit(cache=True, nogil=True)
def weighted_triangles(indptr, indices, R, entry_row, half_m, prob, exact_pairs, n_samples, seed, out, part,
                       parts):  # pragma: no cover - compiled
    """``out[i, f] = sum_{j, k} B_ij B_jk B_ki tau_ijk`` for the entries ``B_e = half_m[e] R[entry_row[e], f]``
    (one per adjacency entry: a pair's row of values and its multiplicity) and ``tau_ijk = trace(V_i V_j
    V_k)``, ``V_i = diag(p_i) - p_i p_i'`` the covariance of the one-hot class of a sample drawn with the
    probabilities ``p_i = prob[i]``.

    The pairs of neighbours as in :func:`c_triangles` (exact or sampled, the same generator).
    """
    n = indptr.shape[0] - 1
    nf = out.shape[1]
    C = prob.shape[1]
    for i in task_range(n, part, parts):
        acc = full_1d(nf, 0.0, np.float64)
        n_iter, w, exact, state = _triangle_plan(indptr, i, exact_pairs, n_samples, seed)
        for t in range(n_iter):
            a, b, q, state = _neighbour_pair(indptr, indices, i, t, exact, state)
            if q < 0:
                continue
            j = indices[a]
            k = indices[b]
            s3 = 0.0
            s4 = 0.0
            qij = 0.0
            qjk = 0.0
            qki = 0.0
            for c in range(C):
                pi, pj, pk = prob[i, c], prob[j, c], prob[k, c]
                s3 += pi * pj * pk
                s4 += pi * pj * pk * (pi + pj + pk)
                qij += pi * pj
                qjk += pj * pk
                qki += pk * pi
            tau = w * (s3 * (1.0 + qij + qjk + qki) - s4 - qij * qjk * qki) * half_m[a] * half_m[b] * half_m[q]
            ra, rb, rq = entry_row[a], entry_row[b], entry_row[q]
            for f in range(nf):
                acc[f] += tau * R[ra, f] * R[rq, f] * R[rb, f]
        out[i] = acc


@njit(cache=True, nogil=True)
def entry_class_sums(indptr, indices, R, entry_row, half_m, prob, out, part, parts):  # pragma: no cover - compiled
    """``out[i, c, f] = sum_{entries e = (i, j)} B_e prob[j, c]`` (``B_e`` as in :func:`weighted_triangles`):
    each row's entries weighted by the class probabilities of the other sample."""
    n = indptr.shape[0] - 1
    nf = R.shape[1]
    C = prob.shape[1]
    for i in task_range(n, part, parts):
        for c in range(C):
            for f in range(nf):
                out[i, c, f] = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            r = entry_row[e]
            for c in range(C):
                pj = prob[j, c] * half_m[e]
                for f in range(nf):
                    out[i, c, f] += R[r, f] * pj


@njit(cache=True, nogil=True)
def entry_moment_sums(indptr, indices, R, entry_row, half_m, u, q, m2, m3, h, out, part,
                      parts):  # pragma: no cover - compiled
    """Row ``i``'s sums over its entries ``e = (i, j)`` (``b = B_e``, as in :func:`weighted_triangles`), into
    ``out[i, :, f]``:
    ``b (1 - q_e)``, ``b^2 m2_e``, ``b u_i . u_j``, ``b^2 u_i . h_e`` and ``b^3 m3_e`` (``u`` of shape
    ``(n, C, f)``, ``h`` of shape ``(entries, C)``)."""
    n = indptr.shape[0] - 1
    nf = R.shape[1]
    C = u.shape[1]
    uu = np.empty(nf, np.float64)
    uh = np.empty(nf, np.float64)
    for i in task_range(n, part, parts):
        for k in range(5):
            for f in range(nf):
                out[i, k, f] = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            r = entry_row[e]
            m = half_m[e]
            for f in range(nf):
                uu[f] = 0.0
                uh[f] = 0.0
            for c in range(C):
                hc = h[e, c]
                for f in range(nf):
                    uu[f] += u[i, c, f] * u[j, c, f]
                    uh[f] += u[i, c, f] * hc
            w0, w1, w3 = 1.0 - q[e], m2[e], m3[e]
            for f in range(nf):
                b = m * R[r, f]
                b2 = b * b
                out[i, 0, f] += b * w0
                out[i, 1, f] += b2 * w1
                out[i, 2, f] += b * uu[f]
                out[i, 3, f] += b2 * uh[f]
                out[i, 4, f] += b2 * b * w3


def _work(E, ecol, plain, ramp_lo, ramp_width, indptr, *args):
    return max(1, int(indptr[-1])) * max(1, E.shape[1])


pair_sums = size_dispatch(pair_sums, _work)
c_powers = size_dispatch(c_powers, _work)
c_matvec = size_dispatch(c_matvec, _work)
c_triangles = size_dispatch(c_triangles, lambda E, *a: 64 * _work(E, *a))


def _entry_work(indptr, indices, R, *args):
    return max(1, indices.size * R.shape[1])


weighted_triangles = size_dispatch(weighted_triangles, lambda *a: 64 * _entry_work(*a))
entry_class_sums = size_dispatch(entry_class_sums, _entry_work)
entry_moment_sums = size_dispatch(entry_moment_sums, lambda *a: 8 * _entry_work(*a))


@njit(cache=True, nogil=True)
def pair_diffs(E, ecol, plain, ramp_lo, ramp_width, src, dst, out, part, parts):  # pragma: no cover - compiled
    """``out[p, f] = a_f(src[p], dst[p])``: each listed pair's difference in every feature of the block."""
    nf = out.shape[1]
    buf = np.empty(nf, np.float64)
    for p in task_range(src.shape[0], part, parts):
        _diff_into(E, ecol, plain, ramp_lo, ramp_width, src[p], dst[p], buf)
        for f in range(nf):
            out[p, f] = buf[f]
    return out


pair_diffs = size_dispatch(pair_diffs, lambda E, ecol, plain, ramp_lo, ramp_width, src, *a: max(1, src.shape[0]) *
                           max(1, E.shape[1]))
