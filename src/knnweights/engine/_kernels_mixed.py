"""Relief's ``diff`` on mixed (discrete / continuous) data with missing values: tables and compiled kernels.

The Relief family scores feature ``f`` of a pair of instances with ``diff_f(i, j)``
(Robnik-Sikonja & Kononenko 2003, Sec. 2.1 and 2.6):

- continuous, both values known: ``|x_if - x_jf| * s_f`` (``s_f = 1 / range_f`` when
  range-normalised, else 1);
- discrete, both known: ``0`` if the values are equal, else ``1``;
- ``x_jf`` unknown (``NaN``), ``x_if`` known: the probability that the two values differ
  given the class of ``j`` (Kononenko 1994, ReliefF's version "D"):
  discrete ``1 - P(x_if | c_j)``; continuous the expected normalised difference
  ``E[|x_if - V| s_f]`` with ``V`` drawn from the known values of class ``c_j``;
- both unknown: discrete ``1 - sum_v P(v | c_i) P(v | c_j)``; continuous
  ``E[|V_1 - V_2| s_f]``, ``V_1, V_2`` independent draws from classes ``c_i``, ``c_j``.

The class-conditional distributions are the empirical ones of the known values (the
whole column's when a class has no known value there; a column with no known value at
all has ``diff = 0``).  The distance is ``d_w(i, j) = sum_f w_f diff_f(i, j)``.

How it is computed fast.  Everything expensive runs on the plain L1 kernels of
:mod:`knnweights.engine._kernels` over an *expanded* matrix ``E``: a continuous column
is ``x s`` with ``NaN`` replaced by 0, a discrete column becomes one indicator column per
level scaled by 1/2 (so the L1 distance of two indicator rows is exactly ``1`` when the
levels differ and ``0`` when equal), an unknown value an all-zero row.  ``E`` gives
every pair of known values the right ``diff``; the pairs that involve an unknown value
(a few per cent of the ``n^2 d`` terms when a few per cent of values are missing) are
then corrected by the sparse compiled kernels below, which walk the per-row lists of
missing entries (CSR).  Memory: ``E`` plus the tables ``T1`` (``n x K x d_miss``) and
``T2`` (``K x K x d_miss``), ``K`` classes and ``d_miss`` the columns with a missing value.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

__all__ = ["MixedData", "build_mixed", "discrete_mask", "DiffData", "PlainDiff"]

MixedData = namedtuple(
    "MixedData",
    ["E", "ecol", "V", "disc", "mcol", "T1", "T2", "codes", "mptr", "mind", "n_features", "has_missing"],
)
MixedData.__doc__ = """Precomputed diff data (see the module docstring).

``E`` (n, dE) expanded matrix for the L1 kernels, ``ecol`` (dE,) the feature of each
expanded column; ``V`` (n, d) scaled values (level codes for discrete features, NaN
where unknown); ``disc`` (d,) uint8; ``mcol`` (d,) index of the feature in the missing
tables (-1: no missing value); ``T1`` (n, K, d_miss) diff of a known value of row ``i``
against an unknown one of class ``c``; ``T2`` (K, K, d_miss) both unknown; ``codes``
(n,) class codes; ``mptr``/``mind`` CSR lists of each row's unknown features."""


def discrete_mask(X, discrete_features, discrete_limit):
    """Boolean mask of the discrete features.

    ``None``/``False``: none; ``True``: all; ``"auto"``: the features with at most
    ``discrete_limit`` distinct known values (skrebate's ``discrete_threshold`` rule);
    a boolean mask of length ``d`` or an array of feature indices.
    """
    d = X.shape[1]
    if discrete_features is None or discrete_features is False:
        return np.zeros(d, bool)
    if discrete_features is True:
        return np.ones(d, bool)
    if isinstance(discrete_features, str):
        if discrete_features != "auto":
            raise ValueError(f"discrete_features must be 'auto', a boolean mask or indices, got {discrete_features!r}")
        out = np.empty(d, bool)
        for f in range(d):
            col = X[:, f]
            out[f] = np.unique(col[~np.isnan(col)]).size <= discrete_limit
        return out
    arr = np.asarray(discrete_features)
    if arr.dtype == bool:
        if arr.shape != (d,):
            raise ValueError(f"discrete_features as a mask must have length n_features={d}, got shape {arr.shape}")
        return arr.copy()
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise ValueError("discrete_features must be 'auto', None, a boolean mask or an array of feature indices")
    if arr.size and (arr.min() < -d or arr.max() >= d):
        raise ValueError(f"discrete_features has an index out of range for {d} features")
    out = np.zeros(d, bool)
    out[arr] = True
    return out


def _expected_abs(a, values):
    """``mean_v |a_t - v|`` over the sorted ``values`` for every ``a_t`` (prefix sums, O((n + m) log m))."""
    m = values.size
    csum = np.concatenate([[0.0], np.cumsum(values)])
    lo = np.searchsorted(values, a, side="right")
    below = a * lo - csum[lo]
    above = (csum[m] - csum[lo]) - a * (m - lo)
    return (below + above) / m


def build_mixed(X, codes, n_classes, discrete, normalize=True, dtype=np.float64):
    """Tables and the expanded matrix of :class:`MixedData` for ``X`` (NaN = unknown).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    codes : ndarray of shape (n,), integer class codes
    n_classes : int
    discrete : ndarray of bool, shape (d,)
    normalize : bool
        Divide continuous differences by the feature's range (of its known values).
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    K = int(n_classes)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    miss = np.isnan(X)
    has_missing = bool(miss.any())
    V = np.empty((n, d))
    disc = np.ascontiguousarray(discrete, dtype=np.uint8)
    mcols = np.flatnonzero(miss.any(axis=0))
    mcol = np.full(d, -1, np.int64)
    mcol[mcols] = np.arange(mcols.size)
    T1 = np.zeros((n, K, mcols.size))
    T2 = np.zeros((K, K, mcols.size))
    blocks, ecol = [], []
    for f in range(d):
        col = X[:, f]
        known = ~miss[:, f]
        kv = col[known]
        if disc[f]:
            levels, lev = np.unique(kv, return_inverse=True)
            code = np.full(n, np.nan)
            code[known] = lev
            V[:, f] = code
            L = levels.size
            ind = np.zeros((n, L))
            ind[np.flatnonzero(known), lev] = 0.5
            blocks.append(ind)
            ecol.extend([f] * L)
        else:
            r = 1.0
            if normalize and kv.size:
                r = kv.max() - kv.min()
                r = r if r > 0 else 1.0
            V[:, f] = col / r  # as range_normalize
            blocks.append(np.where(known, V[:, f], 0.0)[:, None])
            ecol.append(f)
        t = mcol[f]
        if t < 0 or not kv.size:
            continue
        kc = codes[known]
        if disc[f]:
            cnt = np.zeros((K, L))
            np.add.at(cnt, (kc, lev), 1.0)
            tot = cnt.sum(axis=1, keepdims=True)
            marg = cnt.sum(axis=0) / kv.size
            P = np.where(tot > 0, cnt / np.where(tot > 0, tot, 1.0), marg[None, :])
            T1[known, :, t] = 1.0 - P[:, lev].T
            T2[:, :, t] = 1.0 - P @ P.T
        else:
            vk = V[known, f]
            allv = np.sort(vk)
            for c in range(K):
                vc = np.sort(vk[kc == c])
                T1[known, c, t] = _expected_abs(vk, vc if vc.size else allv)
            for c1 in range(K):
                sel = kc == c1
                for c2 in range(K):
                    T2[c1, c2, t] = T1[known, c2, t][sel].mean() if sel.any() else T1[known, c2, t].mean()
    E = np.ascontiguousarray(np.concatenate(blocks, axis=1) if blocks else np.zeros((n, 0)), dtype=dtype)
    counts = miss.sum(axis=1)
    mptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    mind = np.ascontiguousarray(np.nonzero(miss)[1], dtype=np.int64)
    return MixedData(E, np.asarray(ecol, np.int64), V, disc, mcol, T1, T2, codes, mptr, mind, d, has_missing)


def fold_expanded(v, ecol, d):
    """Sum expanded columns back to features: ``out[..., f] = sum_{e: ecol[e] = f} v[..., e]``."""
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 1:
        return np.bincount(ecol, weights=v, minlength=d)
    out = np.zeros(v.shape[:-1] + (d,))
    np.add.at(out, (..., ecol), v)
    return out


class DiffData:
    """Distances and margin sums of Relief's ``diff`` on a :class:`MixedData` (chunked, compiled).

    ``distance_chunks`` yields row blocks of ``d_w(i, j) = sum_f w_f diff_f(i, j)``;
    ``index_sum`` / ``coef_sum`` return ``sum_r sum_t c_rt diff(i_r, j_rt)`` (shape ``(d,)``)
    for listed neighbours / a dense coefficient block.  The L1 work runs on the shared
    kernels of :mod:`knnweights.engine.neighbors`; only pairs with an unknown value take
    the sparse corrections of this module.
    """

    def __init__(self, M):
        self.M = M
        self.n, self.d = M.V.shape

    def _w(self, w):
        return np.ones(self.d) if w is None else np.ascontiguousarray(w, dtype=np.float64)

    def distance_chunks(self, rows=None, w=None, working_memory=None, n_arrays=1):
        from .neighbors import distance_chunks

        M = self.M
        wf = self._w(w)
        we = None if w is None else wf[M.ecol]
        every = rows is None
        rows = np.arange(self.n) if every else np.asarray(rows, dtype=np.int64)
        XA = M.E if every else M.E[rows]
        for s, e, D in distance_chunks(XA, None if every else M.E, we, "manhattan", working_memory, n_arrays):
            if M.has_missing:
                D = np.ascontiguousarray(D, dtype=np.float64)
                distance_correction(M.V, M.disc, M.mcol, M.T1, M.T2, M.codes, M.mptr, M.mind, wf,
                                    np.ascontiguousarray(rows[s:e]), D)
            yield s, e, D

    def index_sum(self, rows, idx, coef):
        from . import _kernels

        M = self.M
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        A = np.ascontiguousarray(M.E[rows])
        out = np.empty_like(A)
        _kernels.index_phi_rows(A, M.E, idx, coef.astype(M.E.dtype), _kernels.L1, out)
        z = fold_expanded(out.sum(axis=0, dtype=np.float64), M.ecol, self.d)
        if M.has_missing:
            corr = np.empty((rows.size, self.d))
            index_margin_correction(M.V, M.disc, M.mcol, M.T1, M.T2, M.codes, M.mptr, M.mind, rows, idx, coef, corr)
            z += corr.sum(axis=0)
        return z

    def coef_sum(self, rows, P):
        from .neighbors import _coef_phi_rows

        M = self.M
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        A = np.ascontiguousarray(M.E[rows])
        out = _coef_phi_rows(A, M.E, np.ascontiguousarray(P, dtype=M.E.dtype), 0)
        z = fold_expanded(out.sum(axis=0, dtype=np.float64), M.ecol, self.d)
        if M.has_missing:
            corr = np.empty((rows.size, self.d))
            dense_margin_correction(M.V, M.disc, M.mcol, M.T1, M.T2, M.codes, M.mptr, M.mind, rows,
                                    np.ascontiguousarray(P, dtype=np.float64), corr)
            z += corr.sum(axis=0)
        return z


class PlainDiff:
    """The :class:`DiffData` interface for complete continuous data ``Z`` (already range-normalised)."""

    def __init__(self, Z):
        self.Z = np.ascontiguousarray(Z)
        self.n, self.d = self.Z.shape

    def distance_chunks(self, rows=None, w=None, working_memory=None, n_arrays=1):
        from .neighbors import distance_chunks

        XA = self.Z if rows is None else self.Z[np.asarray(rows, dtype=np.int64)]
        yield from distance_chunks(XA, None if rows is None else self.Z, w, "manhattan", working_memory, n_arrays)

    def coef_sum(self, rows, P):
        from .neighbors import _coef_phi_rows

        A = np.ascontiguousarray(self.Z[np.asarray(rows, dtype=np.int64)])
        out = _coef_phi_rows(A, self.Z, np.ascontiguousarray(P, dtype=self.Z.dtype), 0)
        return out.sum(axis=0, dtype=np.float64)


# -- compiled corrections (no fastmath: NaN tests must survive) ----------------------------------------------------


@njit(inline="always")
def _wrong(V, disc, i, f):  # pragma: no cover - compiled
    """What E's L1 kernel adds for a known value of row i against an unknown one."""
    return 0.5 if disc[f] else abs(V[i, f])


@njit(inline="always")
def _true(V, disc, mcol, T1, T2, codes, i, j, f):  # pragma: no cover - compiled
    """diff_f(i, j) when at least one of the two values is unknown."""
    a = V[i, f]
    b = V[j, f]
    if a == a:
        return T1[i, codes[j], mcol[f]]
    if b == b:
        return T1[j, codes[i], mcol[f]]
    return T2[codes[i], codes[j], mcol[f]]


@njit(parallel=True, cache=True, nogil=True)
def distance_correction(V, disc, mcol, T1, T2, codes, mptr, mind, w, rows, D):  # pragma: no cover - compiled
    """``D[r, j] += sum_f w_f (diff_f(i, j) - E-kernel term)`` over the features unknown in ``i = rows[r]`` or ``j``.

    Features of weight 0 are skipped (they are also dropped from the scaled ``E``)."""
    nr, nc = D.shape
    for r in prange(nr):
        i = rows[r]
        for j in range(nc):
            if j == i:
                continue
            s = 0.0
            for p in range(mptr[i], mptr[i + 1]):
                f = mind[p]
                wf = w[f]
                if wf == 0.0:
                    continue
                b = V[j, f]
                if b == b:
                    s += wf * (T1[j, codes[i], mcol[f]] - _wrong(V, disc, j, f))
                else:
                    s += wf * T2[codes[i], codes[j], mcol[f]]
            for p in range(mptr[j], mptr[j + 1]):
                f = mind[p]
                wf = w[f]
                if wf == 0.0:
                    continue
                a = V[i, f]
                if a == a:
                    s += wf * (T1[i, codes[j], mcol[f]] - _wrong(V, disc, i, f))
            if s != 0.0:
                D[r, j] += s
    return D


@njit(parallel=True, cache=True, nogil=True)
def dense_margin_correction(V, disc, mcol, T1, T2, codes, mptr, mind, rows, P, out):  # pragma: no cover
    """``out[r, f] = sum_j P[r, j] (diff_f(i, j) - E-kernel term)``, ``i = rows[r]``, over pairs with an unknown."""
    nr, nc = P.shape
    for r in prange(nr):
        i = rows[r]
        for f in range(out.shape[1]):
            out[r, f] = 0.0
        # features unknown in i (against every j, known or not)
        for p in range(mptr[i], mptr[i + 1]):
            f = mind[p]
            acc = 0.0
            for j in range(nc):
                c = P[r, j]
                if c == 0.0 or j == i:
                    continue
                b = V[j, f]
                if b == b:
                    acc += c * (T1[j, codes[i], mcol[f]] - _wrong(V, disc, j, f))
                else:
                    acc += c * T2[codes[i], codes[j], mcol[f]]
            out[r, f] += acc
        # features unknown in j, known in i
        for j in range(nc):
            c = P[r, j]
            if c == 0.0 or j == i:
                continue
            for p in range(mptr[j], mptr[j + 1]):
                f = mind[p]
                a = V[i, f]
                if a == a:
                    out[r, f] += c * (T1[i, codes[j], mcol[f]] - _wrong(V, disc, i, f))
    return out


@njit(parallel=True, cache=True, nogil=True)
def index_margin_correction(V, disc, mcol, T1, T2, codes, mptr, mind, rows, idx, coef, out):  # pragma: no cover
    """As :func:`dense_margin_correction` for listed neighbours: ``sum_t coef[r, t] (...)`` with ``j = idx[r, t]``."""
    nr, kk = idx.shape
    for r in prange(nr):
        i = rows[r]
        for f in range(out.shape[1]):
            out[r, f] = 0.0
        for t in range(kk):
            j = idx[r, t]
            c = coef[r, t]
            if j < 0 or c == 0.0 or j == i:
                continue
            for p in range(mptr[i], mptr[i + 1]):
                f = mind[p]
                b = V[j, f]
                if b == b:
                    out[r, f] += c * (T1[j, codes[i], mcol[f]] - _wrong(V, disc, j, f))
                else:
                    out[r, f] += c * T2[codes[i], codes[j], mcol[f]]
            for p in range(mptr[j], mptr[j + 1]):
                f = mind[p]
                a = V[i, f]
                if a == a:
                    out[r, f] += c * (T1[i, codes[j], mcol[f]] - _wrong(V, disc, i, f))
    return out


@njit(parallel=True, cache=True, nogil=True)
def tie_coefficients(D, self_cols, codes_rows, codes_cols, kth, class_coef, k, hitmiss, P):  # pragma: no cover
    """Neighbour coefficients with the ties at the k-th distance averaged (``ties="include"``).

    For row ``r`` and class ``c`` with k-th smallest distance ``kth[r, c]`` (``inf``: the
    class has fewer than ``k`` candidates, all are taken): the ``n_<`` candidates strictly
    closer get ``class_coef[r, c] / k_c`` each and the ``n_=`` tied at ``kth`` share
    ``(k_c - n_<) / k_c`` of it equally, ``k_c = min(k, candidates)``: the same as the
    mean over the k nearest averaged over every order of the tied ones, so the result
    does not depend on the row order.  Column ``self_cols[r]`` is skipped.  With
    ``hitmiss`` the groups are hits (0) and misses (1) of row ``r`` instead of classes.
    """
    nr, nc = D.shape
    n_classes = kth.shape[1]
    for r in prange(nr):
        less = np.zeros(n_classes)
        eq = np.zeros(n_classes)
        cand = np.zeros(n_classes)
        me = self_cols[r]
        for j in range(nc):
            if j == me:
                continue
            c = codes_cols[j]
            if hitmiss:
                c = 0 if c == codes_rows[r] else 1
            cand[c] += 1.0
            v = D[r, j]
            if v < kth[r, c]:
                less[c] += 1.0
            elif v == kth[r, c]:
                eq[c] += 1.0
        a_less = np.zeros(n_classes)
        a_eq = np.zeros(n_classes)
        for c in range(n_classes):
            kc = min(float(k), cand[c])
            if kc <= 0:
                continue
            a_less[c] = class_coef[r, c] / kc
            if eq[c] > 0:
                a_eq[c] = class_coef[r, c] * (kc - less[c]) / (kc * eq[c])
        for j in range(nc):
            if j == me:
                P[r, j] = 0.0
                continue
            c = codes_cols[j]
            if hitmiss:
                c = 0 if c == codes_rows[r] else 1
            v = D[r, j]
            if v < kth[r, c]:
                P[r, j] = a_less[c]
            elif v == kth[r, c]:
                P[r, j] = a_eq[c]
            else:
                P[r, j] = 0.0
    return P
