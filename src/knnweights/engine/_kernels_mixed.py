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

How it is computed fast.  Everything expensive runs on compiled L1 kernels and BLAS.
The plain L1 kernels of :mod:`knnweights.engine._kernels` run over an *expanded* matrix
``E``: a continuous column is ``x s`` with ``NaN`` replaced by 0, a discrete column
with ``L`` levels becomes ``ceil(L / 2)`` columns holding the levels as the vertices
``+-e_q / 2`` of a cross-polytope (any two vertices are at L1 distance exactly ``1``, equal
levels at ``0``), an unknown value the origin (all zero, ``1/2`` from every level).
``E`` gives every pair of known values the right ``diff``; for
the pairs that involve an unknown value the difference between the true ``diff`` and
what ``E`` added is, with ``m_if`` the indicator that ``x_if`` is unknown and
``A_c[j, f] = T1 - (E's term)`` for a known ``x_jf`` (0 for an unknown one),

    C[i, j] = sum_f w_f ( m_if A_{c_i}[j, f] + A_{c_j}[i, f] m_jf + m_if m_jf T2[c_i, c_j, f] ),

a handful of matrix products per class (BLAS), for distances and margin sums alike
(listed neighbours: a compiled sparse kernel over the per-row lists of unknown
features).  Memory: ``E`` plus ``A`` (``K x n x d_miss``) and ``T2`` (``K x K x d_miss``),
``K`` classes and ``d_miss`` the columns with a missing value.
"""

import warnings
from collections import namedtuple

import numpy as np
import scipy.sparse

from . import _kernels
from .jit import array_work, full_1d, njit, size_dispatch, task_range
from .neighbors import coef_phi_rows, distance_chunks, scale_for_metric, tie_tolerance

__all__ = ["MixedData", "build_mixed", "discrete_mask", "DiffData", "PlainDiff"]

MixedData = namedtuple(
    "MixedData",
    ["E", "ecol", "V", "disc", "mcol", "mcols", "A", "Mi", "T2", "codes", "mptr", "mind", "n_features",
     "has_missing"],
)
MixedData.__doc__ = """Precomputed diff data (see the module docstring).

``E`` (n, dE) expanded matrix for the L1 kernels, ``ecol`` (dE,) the feature of each
expanded column; ``V`` (n, d) scaled values (level codes for discrete features, NaN
where unknown); ``disc`` (d,) uint8; ``mcol`` (d,) index of the feature in the missing
tables (-1: no missing value), ``mcols`` the features with one; ``A`` (K, n, d_miss):
``diff`` of the known value ``x_if`` against an unknown one of class ``c``, minus what
``E`` adds for that pair (0 where ``x_if`` is unknown); ``Mi`` (n, d_miss) the unknown
indicators; ``T2`` (K, K, d_miss) both unknown; ``codes`` (n,) class codes;
``mptr``/``mind`` CSR lists of each row's unknown features."""


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


def missing_lists(miss):
    """CSR lists of each row's missing columns: ``(mptr, mind)``, row ``i``'s in ``mind[mptr[i]:mptr[i + 1]]``."""
    counts = miss.sum(axis=1)
    mptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    mind = np.ascontiguousarray(np.nonzero(miss)[1], dtype=np.int64)
    return mptr, mind


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
    disc = np.ascontiguousarray(discrete, dtype=np.uint8)
    mcols = np.flatnonzero(miss.any(axis=0))
    mcol = np.full(d, -1, np.int64)
    mcol[mcols] = np.arange(mcols.size)
    A = np.zeros((K, n, mcols.size))
    T2 = np.zeros((K, K, mcols.size))
    V = np.empty((n, d))
    # continuous features: range-normalised values, E's columns, the tables (compiled, parallel over columns)
    cont = np.flatnonzero(~disc.astype(bool))
    r = np.ones(cont.size)
    if normalize and cont.size:
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            r = np.nanmax(X[:, cont], axis=0) - np.nanmin(X[:, cont], axis=0)
        r = np.where(np.isfinite(r) & (r > 0), r, 1.0)
    Vc = X[:, cont] / r  # as range_normalize
    V[:, cont] = Vc
    blocks, ecol = [np.where(np.isnan(Vc), 0.0, Vc)], [cont]
    tcols = cont[mcol[cont] >= 0]
    if tcols.size:
        _continuous_tables(np.ascontiguousarray(V[:, tcols].T), codes, K, mcol[tcols], A, T2)
    # discrete features: level codes, cross-polytope columns, class-conditional level frequencies
    for f in np.flatnonzero(disc):
        col = X[:, f]
        known = ~miss[:, f]
        levels, lev = np.unique(col[known], return_inverse=True)
        code = np.full(n, np.nan)
        code[known] = lev
        V[:, f] = code
        L = levels.size
        # levels as the vertices +-e_q / 2 of a cross-polytope: any two are at L1 distance exactly 1
        # with ceil(L / 2) columns (SNPs 0/1/2: two columns); unknown = the origin, 1/2 from every level
        ind = np.zeros((n, max(1, (L + 1) // 2)))
        ind[np.flatnonzero(known), lev // 2] = np.where(lev % 2 == 0, 0.5, -0.5)
        blocks.append(ind)
        ecol.append(np.full(ind.shape[1], f))
        t = mcol[f]
        if t < 0 or not L:
            continue
        kc = codes[known]
        cnt = np.zeros((K, L))
        np.add.at(cnt, (kc, lev), 1.0)
        tot = cnt.sum(axis=1, keepdims=True)
        marg = cnt.sum(axis=0) / lev.size
        P = np.where(tot > 0, cnt / np.where(tot > 0, tot, 1.0), marg[None, :])
        A[:, known, t] = 0.5 - P[:, lev]  # (1 - P(x | c)) - E's 1/2
        T2[:, :, t] = 1.0 - P @ P.T
    E = np.ascontiguousarray(np.concatenate(blocks, axis=1), dtype=dtype)
    mptr, mind = missing_lists(miss)
    Mi = np.ascontiguousarray(miss[:, mcols], dtype=np.float64)
    return MixedData(E, np.concatenate(ecol).astype(np.int64), V, disc, mcol, mcols, A, Mi, T2, codes, mptr, mind,
                     d, has_missing)


@njit(cache=True, nogil=True)
def _continuous_tables(VT, codes, K, tcol, A, T2, part, parts):  # pragma: no cover - compiled
    """Missing-value tables of continuous features, one column of ``VT`` (NaN = unknown) per task.

    ``E_c(a) = mean |a - v|`` over the known values ``v`` of class ``c`` (all known values if
    the class has none), for every known ``a``, in one scan of the sorted values with
    per-class running counts and sums; then ``A[c, i, t] = E_c(x_i) - |x_i|`` and
    ``T2[c1, c2, t]`` = the mean of ``E_c2`` over the known values of class ``c1``.
    """
    n = VT.shape[1]
    for q in task_range(VT.shape[0], part, parts):
        t = tcol[q]
        col = VT[q]
        nk = 0
        for i in range(n):
            if col[i] == col[i]:
                nk += 1
        if nk == 0:
            continue
        kidx = np.empty(nk, np.int64)
        vals = np.empty(nk, np.float64)
        p = 0
        for i in range(n):
            if col[i] == col[i]:
                kidx[p] = i
                vals[p] = col[i]
                p += 1
        order = np.argsort(vals)
        m = full_1d(K, 0.0, np.float64)
        tot = full_1d(K, 0.0, np.float64)
        for p in range(nk):
            c = codes[kidx[p]]
            m[c] += 1.0
            tot[c] += vals[p]
        m_all = float(nk)
        tot_all = 0.0
        for c in range(K):
            tot_all += tot[c]
        lo = full_1d(K, 0.0, np.float64)
        slo = full_1d(K, 0.0, np.float64)
        lo_all = 0.0
        slo_all = 0.0
        ex = np.empty((K, nk), np.float64)
        for s in range(nk):
            p = order[s]
            a = vals[p]
            for c in range(K):
                if m[c] > 0:
                    ex[c, p] = (a * lo[c] - slo[c] + (tot[c] - slo[c]) - a * (m[c] - lo[c])) / m[c]
                else:
                    ex[c, p] = (a * lo_all - slo_all + (tot_all - slo_all) - a * (m_all - lo_all)) / m_all
            c = codes[kidx[p]]
            lo[c] += 1.0
            slo[c] += a
            lo_all += 1.0
            slo_all += a
        for p in range(nk):
            i = kidx[p]
            for c in range(K):
                A[c, i, t] = ex[c, p] - abs(vals[p])
        for c1 in range(K):
            for c2 in range(K):
                acc = 0.0
                for p in range(nk):
                    if m[c1] == 0 or codes[kidx[p]] == c1:
                        acc += ex[c2, p]
                T2[c1, c2, t] = acc / (m[c1] if m[c1] > 0 else m_all)
    return A, T2


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
    for listed neighbours / a dense coefficient block (zero on the sample itself).  The L1
    work runs on the shared kernels of :mod:`knnweights.engine.neighbors`; the terms of
    the pairs with an unknown value are the matrix products of the module docstring.
    """

    def __init__(self, M):
        self.M = M
        self.n, self.d = M.V.shape
        self.K = M.A.shape[0]
        self._class_cols = [np.flatnonzero(M.codes == c) for c in range(self.K)]
        # the unknown indicators as a sparse matrix when at most a quarter of the entries are unknown
        self._sparse = M.has_missing and M.Mi.mean() <= 0.25
        self._Ms = scipy.sparse.csr_matrix(M.Mi) if self._sparse else None

    def _w(self, w):
        return np.ones(self.d) if w is None else np.ascontiguousarray(w, dtype=np.float64)

    def distance_chunks(self, rows=None, w=None, working_memory=None, n_arrays=1):
        M = self.M
        wf = self._w(w)
        we = None if w is None else wf[M.ecol]
        every = rows is None
        rows = np.arange(self.n) if every else np.asarray(rows, dtype=np.int64)
        XA = M.E if every else M.E[rows]
        for s, e, D in distance_chunks(XA, None if every else M.E, we, "manhattan", working_memory, n_arrays):
            if M.has_missing:
                D = np.asarray(D, dtype=np.float64)
                self._distance_correction(rows[s:e], wf[M.mcols], D)
            yield s, e, D

    def tie_tolerance(self, w=None):
        """Per-row tolerances of the engine's tie rule (:func:`knnweights.engine.neighbors.tie_tolerance`)
        for ``distance_chunks(w=w)``: those of the weighted expanded matrix, plus a bound on the terms
        the unknown values add (each at most the feature's largest table entry)."""
        M = self.M
        wf = self._w(w)
        E = M.E if w is None else M.E * wf[M.ecol]
        T = tie_tolerance(E, "manhattan")
        if M.has_missing:
            top = np.maximum(np.abs(M.A).max(axis=(0, 1), initial=0.0), np.abs(M.T2).max(axis=(0, 1), initial=0.0))
            extra = float(np.sum(wf[M.mcols] * top))
            T = T + _kernels.TIE_ULPS * (E.shape[1] + M.mcols.size + 8) * extra
        return T

    def _distance_correction(self, rows, wm, D):
        """``D += C`` (module docstring) for the block of query ``rows``; the self-distance stays 0.

        The unknown indicators are sparse when few values are missing: then the products
        take ``O(n_missing x n)`` (sparse x dense) instead of ``O(n^2 d_miss)``."""
        M = self.M
        cr = M.codes[rows]
        Mr = self._rows_mask(rows).multiply(wm[None, :]).tocsr() if self._sparse else M.Mi[rows] * wm
        for c in range(self.K):
            rs = np.flatnonzero(cr == c)
            if rs.size:  # x_if unknown, x_jf known: A_{c_i}[j, f]
                D[rs] += np.asarray(Mr[rs] @ M.A[c].T)
            cs = self._class_cols[c]
            if cs.size:  # x_jf unknown: A_c[i, f] if x_if is known, T2[c_i, c, f] if not
                L = M.A[c][rows] * wm + np.asarray(Mr.multiply(M.T2[cr, c]).toarray() if self._sparse
                                                   else Mr * M.T2[cr, c])
                D[:, cs] += (self._Ms[cs] @ L.T).T if self._sparse else L @ M.Mi[cs].T
        D[np.arange(rows.size), rows] = 0.0

    def _rows_mask(self, rows):
        return self._Ms[rows]

    def _margin_correction(self, rows, P):
        """``sum_r sum_j P[r, j] C_f(i_r, j)`` over the features with unknown values (module docstring)."""
        M = self.M
        cr = M.codes[rows]
        out = np.zeros(M.mcols.size)
        if self._sparse:
            Mr = self._rows_mask(rows).tocoo()
            nz_r, nz_f = Mr.row.astype(np.int64), Mr.col.astype(np.int64)
        else:
            Mr = M.Mi[rows]
        for c in range(self.K):
            if self._sparse:  # term 1 only where x_if is unknown: one row-column dot per unknown entry
                sel = cr[nz_r] == c
                if sel.any():
                    vals = _masked_rowdot(P, nz_r[sel], nz_f[sel], M.A[c], np.empty(int(sel.sum())))
                    out += np.bincount(nz_f[sel], weights=vals, minlength=out.size)
            else:
                rs = np.flatnonzero(cr == c)
                if rs.size:
                    out += np.einsum("rf,rf->f", Mr[rs], P[rs] @ M.A[c])
            cs = self._class_cols[c]
            if cs.size:
                Q = (self._Ms[cs].T @ P[:, cs].T).T if self._sparse else P[:, cs] @ M.Mi[cs]
                L = M.A[c][rows] + (Mr.multiply(M.T2[cr, c]).toarray() if self._sparse else Mr * M.T2[cr, c])
                out += np.einsum("rf,rf->f", L, np.asarray(Q))
        return out

    def index_sum(self, rows, idx, coef):
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
            index_margin_correction(M.V, M.mcol, M.A, M.T2, M.codes, M.mptr, M.mind, rows, idx, coef, corr)
            z += corr.sum(axis=0)
        return z

    def coef_sum(self, rows, P):
        M = self.M
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        A = _take_rows(M.E, rows)
        out = coef_phi_rows(A, M.E, np.ascontiguousarray(P, dtype=M.E.dtype), 0)
        z = fold_expanded(out.sum(axis=0, dtype=np.float64), M.ecol, self.d)
        if M.has_missing:
            z[M.mcols] += self._margin_correction(rows, np.asarray(P, dtype=np.float64))
        return z


def _take_rows(Z, rows):
    """``Z[rows]`` (C-contiguous): a view when ``rows`` is a run ``s, s + 1, ...`` (no copy of the rows)."""
    if rows.size and rows[-1] - rows[0] == rows.size - 1 and (rows.size == 1 or np.all(np.diff(rows) == 1)):
        return np.ascontiguousarray(Z[rows[0]:rows[-1] + 1])
    return np.ascontiguousarray(Z[rows])


class PlainDiff:
    """The :class:`DiffData` interface for complete continuous data ``Z`` (already range-normalised)."""

    def __init__(self, Z):
        self.Z = np.ascontiguousarray(Z)
        self.n, self.d = self.Z.shape

    def tie_tolerance(self, w=None):
        """Per-row tolerances of the engine's tie rule for ``distance_chunks(w=w)``."""
        return tie_tolerance(scale_for_metric(self.Z, w, "manhattan"), "manhattan")

    def distance_chunks(self, rows=None, w=None, working_memory=None, n_arrays=1):
        XA = self.Z if rows is None else self.Z[np.asarray(rows, dtype=np.int64)]
        yield from distance_chunks(XA, None if rows is None else self.Z, w, "manhattan", working_memory, n_arrays)

    def coef_sum(self, rows, P):
        A = _take_rows(self.Z, np.asarray(rows, dtype=np.int64))
        out = coef_phi_rows(A, self.Z, np.ascontiguousarray(P, dtype=self.Z.dtype), 0)
        return out.sum(axis=0, dtype=np.float64)


# -- compiled corrections (no fastmath: NaN tests must survive) ----------------------------------------------------


@njit(cache=True, nogil=True)
def _masked_rowdot(P, r_idx, f_idx, A, out, part, parts):  # pragma: no cover - compiled
    """``out[t] = sum_j P[r_idx[t], j] A[j, f_idx[t]]`` for a list of (row, feature) entries."""
    for t in task_range(r_idx.size, part, parts):
        r = r_idx[t]
        f = f_idx[t]
        acc = 0.0
        for j in range(P.shape[1]):
            acc += P[r, j] * A[j, f]
        out[t] = acc
    return out


@njit(cache=True, nogil=True)
def index_margin_correction(V, mcol, A, T2, codes, mptr, mind, rows, idx, coef, out, part, parts):  # pragma: no cover
    """``out[r, f] = sum_t coef[r, t] C_f(i, j)``, ``i = rows[r]``, ``j = idx[r, t]`` (negative skipped):
    the true ``diff`` minus E's term, for the features unknown in ``i`` or ``j`` (their CSR lists)."""
    nr, kk = idx.shape
    for r in task_range(nr, part, parts):
        i = rows[r]
        for f in range(out.shape[1]):
            out[r, f] = 0.0
        for t in range(kk):
            j = idx[r, t]
            c = coef[r, t]
            if j < 0 or c == 0.0 or j == i:
                continue
            for p in range(mptr[i], mptr[i + 1]):  # unknown in i: A_{c_i}[j] (0 if j unknown too) or T2
                f = mind[p]
                b = V[j, f]
                if b == b:
                    out[r, f] += c * A[codes[i], j, mcol[f]]
                else:
                    out[r, f] += c * T2[codes[i], codes[j], mcol[f]]
            for p in range(mptr[j], mptr[j + 1]):  # unknown in j, known in i
                f = mind[p]
                a = V[i, f]
                if a == a:
                    out[r, f] += c * A[codes[j], i, mcol[f]]
    return out


@njit(cache=True, nogil=True)
def tie_coefficients(D, self_cols, codes_rows, codes_cols, kth, kth_idx, tol_rows, tol_cols, class_coef, k,
                     hitmiss, P, part, parts):  # pragma: no cover - compiled
    """Neighbour coefficients with the ties at the k-th distance averaged (``ties="include"``).

    For row ``r`` and class ``c`` with k-th smallest distance ``kth[r, c]`` (``inf``: the
    class has fewer than ``k`` candidates, all are taken), at candidate ``kth_idx[r, c]``:
    the ``n_<`` candidates strictly closer get ``class_coef[r, c] / k_c`` each and the
    ``n_=`` tied at ``kth`` share ``(k_c - n_<) / k_c`` of it equally, ``k_c = min(k,
    candidates)``: the same as the mean over the k nearest averaged over every order of the
    tied ones, so the result does not depend on the row order.  Equal distances are those of
    the engine's tie rule (tolerances ``tol_rows`` / ``tol_cols``, as
    :func:`knnweights.engine._kernels_select.insert_sorted`).  Column ``self_cols[r]`` is skipped.
    With ``hitmiss`` the groups are hits (0) and misses (1) of row ``r`` instead of classes.
    """
    nr, nc = D.shape
    n_classes = kth.shape[1]
    for r in task_range(nr, part, parts):
        less = full_1d(n_classes, 0.0, np.float64)
        eq = full_1d(n_classes, 0.0, np.float64)
        cand = full_1d(n_classes, 0.0, np.float64)
        me = self_cols[r]
        tr = 2.0 * tol_rows[r]
        for j in range(nc):
            if j == me:
                continue
            c = codes_cols[j]
            if hitmiss:
                c = 0 if c == codes_rows[r] else 1
            cand[c] += 1.0
            rel = _tie_compare(D[r, j], kth[r, c], tr + tol_cols[j] + (tol_cols[kth_idx[r, c]] if kth_idx[r, c] >= 0
                                                                       else 0.0))
            if rel < 0:
                less[c] += 1.0
            elif rel == 0:
                eq[c] += 1.0
        a_less = full_1d(n_classes, 0.0, np.float64)
        a_eq = full_1d(n_classes, 0.0, np.float64)
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
            rel = _tie_compare(D[r, j], kth[r, c], tr + tol_cols[j] + (tol_cols[kth_idx[r, c]] if kth_idx[r, c] >= 0
                                                                       else 0.0))
            if rel < 0:
                P[r, j] = a_less[c]
            elif rel == 0:
                P[r, j] = a_eq[c]
            else:
                P[r, j] = 0.0
    return P


@njit(inline="always", cache=True, nogil=True)
def _tie_compare(v, u, tol):  # pragma: no cover - compiled
    """-1, 0 or 1 as ``v`` is below, equal to (within ``tol``) or above ``u`` (``u = inf``: every finite
    ``v`` is below)."""
    if v < u - tol:
        return -1
    if v > u + tol:
        return 1
    return 0


# -- serial / threaded choice per call (knnweights.engine.jit.size_dispatch) ----------------------------------------
_continuous_tables = size_dispatch(_continuous_tables, array_work)
_masked_rowdot = size_dispatch(_masked_rowdot, array_work)
index_margin_correction = size_dispatch(index_margin_correction, array_work)
tie_coefficients = size_dispatch(tie_coefficients, array_work)
