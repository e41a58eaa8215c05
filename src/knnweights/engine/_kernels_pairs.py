"""Compiled sums over neighbour pairs chosen without the feature tested, for the Relief family's p-values.

For every feature ``f`` of a block of features, the pairs are those of the fit's rule on the
distance without ``f``, ``D_ij - a_ij,f`` (``a_ij,f = sum_{c: ecol[c] = f} |E[i, c] - E[j, c]|``,
one column per feature for plain data, ``plain=True``, the expanded columns of
:mod:`._kernels_mixed` otherwise).  The rule is a threshold per (row, pool, feature): ``j`` is
a pair of ``i`` when ``(D_ij - a_ij,f, j)`` is lexicographically at most
``(tau[i, p, f], jt[i, p, f])``, ``p`` the pool of ``j`` for ``i`` (a class, hits / misses,
or one pool): the ``k`` nearest of each pool (``jt`` the index of the ``k``-th, ties to the
lower index) or a radius (``jt = -1``: strictly inside).  With ``loo=False`` the
thresholds are ``tau[i, p, 0]`` and the value ``D_ij`` itself (the fit's own pairs).

Candidates (a superset of every feature's pairs) come as CSR rows: ``cand_*`` the directed
ones (row ``i``, its candidates ``j``), ``sym_*`` their symmetric union with ``flags`` (bit 1:
``(i, j)`` is a candidate, bit 2: ``(j, i)`` is) and the pools of both directions.  The matrix
whose sums are taken is, per feature, ``C_ij = (m_ij (g_ij - gbar_i) + m_ji (g_ij - gbar_j)) / 2``
(``m`` the pair indicators, ``g`` the outcome difference, ``gbar_i`` its mean over the pairs of
``i``; ``gbar`` has one column per feature).
Every kernel writes only its own row's outputs, so the results do not depend on the number of
threads; the triangle sampler draws from a counter-based generator seeded by the row.
:class:`knnweights.significance.PairMoments` is the caller; ``tests/test_significance.py``
checks the sums against dense NumPy.
"""

import numpy as np
from numba import njit, prange

from ._kernels import _size_dispatch


@njit(inline="always")
def _diff_into(E, ecol, plain, i, j, buf):  # pragma: no cover - compiled
    if plain:
        for f in range(buf.shape[0]):
            buf[f] = abs(E[i, f] - E[j, f])
    else:
        for f in range(buf.shape[0]):
            buf[f] = 0.0
        for c in range(E.shape[1]):
            buf[ecol[c]] += abs(E[i, c] - E[j, c])


@njit(inline="always")
def _outcome_diff(v, continuous, i, j):  # pragma: no cover - compiled
    if continuous:
        return abs(v[i] - v[j])
    return 1.0 if v[i] != v[j] else 0.0


@njit(inline="always")
def _member(val, j, tau, jt):  # pragma: no cover - compiled
    return val < tau or (val == tau and j <= jt)


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


@njit(inline="always")
def _kth_smallest(buf, m, k):  # pragma: no cover - compiled
    """The ``k``-th smallest (0-based) of ``buf[:m]`` (reorders ``buf``; Hoare's selection)."""
    lo = 0
    hi = m - 1
    while lo < hi:
        pivot = buf[(lo + hi) // 2]
        a = lo
        b = hi
        while a <= b:
            while buf[a] < pivot:
                a += 1
            while buf[b] > pivot:
                b -= 1
            if a <= b:
                t = buf[a]
                buf[a] = buf[b]
                buf[b] = t
                a += 1
                b -= 1
        if k <= b:
            hi = b
        elif k >= a:
            lo = a
        else:
            return buf[k]
    return buf[k]


@njit(parallel=True, cache=True, nogil=True)
def knn_thresholds(E, ecol, plain, indptr, indices, dist, pool, n_pools, k, tau, jt):  # pragma: no cover
    """``(tau, jt)[i, p, f]``: the ``k``-th nearest candidate of pool ``p`` by ``D - a_f`` (value, index);
    ``(inf, max)`` where the pool has at most ``k`` candidates (all are pairs)."""
    n = indptr.shape[0] - 1
    nf = tau.shape[2]
    big = np.iinfo(np.int64).max
    for i in prange(n):
        lo = indptr[i]
        m = indptr[i + 1] - lo
        a = np.empty((m, nf))
        for t in range(m):
            _diff_into(E, ecol, plain, i, indices[lo + t], a[t])
        sel = np.empty(m, np.int64)
        buf = np.empty(m)
        for p in range(n_pools):
            cnt = 0
            for t in range(m):
                if pool[lo + t] == p:
                    sel[cnt] = t
                    cnt += 1
            if cnt <= k:
                for f in range(nf):
                    tau[i, p, f] = np.inf
                    jt[i, p, f] = big
                continue
            for f in range(nf):
                for q in range(cnt):
                    buf[q] = dist[lo + sel[q]] - a[sel[q], f]
                th = _kth_smallest(buf, cnt, k - 1)
                below = 0
                for q in range(cnt):
                    if dist[lo + sel[q]] - a[sel[q], f] < th:
                        below += 1
                need = k - below  # the lowest indices among the candidates tied at th
                last = -1
                for q in range(cnt):  # candidates are in increasing index order
                    if dist[lo + sel[q]] - a[sel[q], f] == th:
                        need -= 1
                        last = indices[lo + sel[q]]
                        if need == 0:
                            break
                tau[i, p, f] = th
                jt[i, p, f] = last


@njit(parallel=True, cache=True, nogil=True)
def member_sums(E, ecol, plain, indptr, indices, dist, pool, tau, jt, loo, v, continuous,
                cnt, g1, g2, a1, a2, ga):  # pragma: no cover - compiled
    """Over each row's pairs ``(i, j)`` of each feature: the number of pairs, ``sum g``, ``sum g^2``,
    ``sum a``, ``sum a^2`` and ``sum g a`` (all ``(n, F)``)."""
    n = indptr.shape[0] - 1
    nf = cnt.shape[1]
    for i in prange(n):
        buf = np.empty(nf)
        c0 = np.zeros(nf)
        s1 = np.zeros(nf)
        s2 = np.zeros(nf)
        t1 = np.zeros(nf)
        t2 = np.zeros(nf)
        tg = np.zeros(nf)
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            q = pool[p]
            g = _outcome_diff(v, continuous, i, j)
            _diff_into(E, ecol, plain, i, j, buf)
            for f in range(nf):
                x = buf[f]
                if loo:
                    inside = _member(dist[p] - x, j, tau[i, q, f], jt[i, q, f])
                else:
                    inside = _member(dist[p], j, tau[i, q, 0], jt[i, q, 0])
                if inside:
                    c0[f] += 1.0
                    s1[f] += g
                    s2[f] += g * g
                    t1[f] += x
                    t2[f] += x * x
                    tg[f] += g * x
        cnt[i] = c0
        g1[i] = s1
        g2[i] = s2
        a1[i] = t1
        a2[i] = t2
        ga[i] = tg


@njit(inline="always")
def _c_into(E, ecol, plain, i, j, d, flag, pij, pji, tau, jt, sure, v, continuous, gbar, out):  # pragma: no cover
    """``out[f] = C_ij`` of every feature of the block.  ``sure[i, p]``: below it a candidate of pool ``p`` is
    a pair of ``i`` for every feature of the block (``a >= 0``), and the differences are not needed."""
    g = _outcome_diff(v, continuous, i, j)
    mi = 0.5 if flag & 1 else 0.0
    mj = 0.5 if flag & 2 else 0.0
    if (flag & 1 == 0 or d < sure[i, pij]) and (flag & 2 == 0 or d < sure[j, pji]):
        for f in range(out.shape[0]):
            out[f] = mi * (g - gbar[i, f]) + mj * (g - gbar[j, f])
        return
    _diff_into(E, ecol, plain, i, j, out)
    for f in range(out.shape[0]):
        val = d - out[f]
        c = 0.0
        if flag & 1 and _member(val, j, tau[i, pij, f], jt[i, pij, f]):
            c += mi * (g - gbar[i, f])
        if flag & 2 and _member(val, i, tau[j, pji, f], jt[j, pji, f]):
            c += mj * (g - gbar[j, f])
        out[f] = c


@njit(parallel=True, cache=True, nogil=True)
def c_powers(E, ecol, plain, indptr, indices, dist, flags, pool_ij, pool_ji, tau, jt, sure, v, continuous, gbar,
             r1, r2, r3):  # pragma: no cover - compiled
    """Row sums of ``C``, ``C^2`` and ``C^3`` (elementwise powers), per feature."""
    n = indptr.shape[0] - 1
    nf = r1.shape[1]
    for i in prange(n):
        c = np.empty(nf)
        s1 = np.zeros(nf)
        s2 = np.zeros(nf)
        s3 = np.zeros(nf)
        for p in range(indptr[i], indptr[i + 1]):
            _c_into(E, ecol, plain, i, indices[p], dist[p], flags[p], pool_ij[p], pool_ji[p], tau, jt, sure, v,
                    continuous, gbar, c)
            for f in range(nf):
                cf = c[f]
                q = cf * cf
                s1[f] += cf
                s2[f] += q
                s3[f] += q * cf
        r1[i] = s1
        r2[i] = s2
        r3[i] = s3


@njit(parallel=True, cache=True, nogil=True)
def c_matvec(E, ecol, plain, indptr, indices, dist, flags, pool_ij, pool_ji, tau, jt, sure, v, continuous, gbar,
             u, out):  # pragma: no cover - compiled
    """``out[i, f] = sum_j C_ij u[j, f]`` (each feature its own ``C`` and its own vector)."""
    n = indptr.shape[0] - 1
    nf = out.shape[1]
    for i in prange(n):
        c = np.empty(nf)
        acc = np.zeros(nf)
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            _c_into(E, ecol, plain, i, j, dist[p], flags[p], pool_ij[p], pool_ji[p], tau, jt, sure, v, continuous,
                    gbar, c)
            for f in range(nf):
                acc[f] += c[f] * u[j, f]
        out[i] = acc


@njit(inline="always")
def _mix64(z):  # pragma: no cover - compiled
    """SplitMix64's output function (Steele, Lea & Flood 2014)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(parallel=True, cache=True, nogil=True)
def c_triangles(E, ecol, plain, indptr, indices, dist, flags, pool_ij, pool_ji, tau, jt, sure, v, continuous, gbar,
                exact_pairs, n_samples, seed, out):  # pragma: no cover - compiled
    """``out[i, f] = (C^3)_ii = sum_{j, k} C_ij C_jk C_ki``, so that ``trace C^3 = out.sum(0)``.

    Exact (every two neighbours of ``i``) when row ``i`` has at most ``exact_pairs`` pairs of
    neighbours; else the unbiased estimate from ``n_samples`` ordered pairs of distinct
    neighbours drawn uniformly (with replacement) by a generator seeded with ``(seed, i)``.
    """
    n = indptr.shape[0] - 1
    nf = out.shape[1]
    for i in prange(n):
        cij = np.empty(nf)
        cik = np.empty(nf)
        cjk = np.empty(nf)
        acc = np.zeros(nf)
        lo = indptr[i]
        deg = indptr[i + 1] - lo
        n_draw = 0
        exact = deg * (deg - 1) // 2 <= exact_pairs
        if deg >= 2 and not exact:
            n_draw = n_samples
        w = 2.0 if exact else deg * (deg - 1.0) / max(n_samples, 1)
        state = _mix64(np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(i))
        n_iter = deg * deg if exact else n_draw
        for t in range(n_iter):
            if exact:
                a = lo + t // deg
                b = lo + t % deg
                if b <= a:
                    continue
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
            q = _find(indices, indptr[j], indptr[j + 1], k)
            if q < 0:
                continue
            _c_into(E, ecol, plain, i, j, dist[a], flags[a], pool_ij[a], pool_ji[a], tau, jt, sure, v, continuous,
                    gbar, cij)
            _c_into(E, ecol, plain, i, k, dist[b], flags[b], pool_ij[b], pool_ji[b], tau, jt, sure, v, continuous,
                    gbar, cik)
            _c_into(E, ecol, plain, j, k, dist[q], flags[q], pool_ij[q], pool_ji[q], tau, jt, sure, v, continuous,
                    gbar, cjk)
            for f in range(nf):
                acc[f] += w * cij[f] * cjk[f] * cik[f]
        out[i] = acc


def _work(E, ecol, plain, indptr, *args):
    return max(1, int(indptr[-1])) * max(1, E.shape[1])


knn_thresholds = _size_dispatch(knn_thresholds, _work)
member_sums = _size_dispatch(member_sums, _work)
c_powers = _size_dispatch(c_powers, _work)
c_matvec = _size_dispatch(c_matvec, _work)
c_triangles = _size_dispatch(c_triangles, lambda E, ecol, plain, indptr, *a: 64 * _work(E, ecol, plain, indptr))
