"""Nearest hits and misses under weights that move a little between calls.

Iterative weighters (LH-RELIEF, and SQP-FW's working-set refresh in
:mod:`knnweights._solvers.active_set`) search the nearest hits and misses of every sample once
per iteration, each time an ``O(n^2 d)`` distance pass, while their weights converge and the
lists hardly change.  :class:`IncrementalHitMiss` returns the lists of
:func:`~knnweights.engine.neighbors.nearest_hits_misses` (the same indices, the same order,
ties to the lower index) and computes only the pairs that can still enter a list:

* a full pass keeps its distance matrix ``D0`` (weights ``w0``);
* under new weights ``w`` every distance is bounded from below by ``D0`` (a weight that fell by
  ``delta_f`` lowers ``sum_f w_f phi(x_if - x_jf)`` by at most ``delta_f phi(x_if - x_jf) <= g
  delta_f (|x_if|^p + |x_jf|^p)``: ``g = 1, p = 1`` for the Manhattan distance, ``g = 2, p = 2``
  for the squared Euclidean one), less a margin for rounding, and the ``k``-th nearest of each
  side from above by the previous list's members;
* the pairs whose lower bound exceeds that are left out; the others are computed by the engine's
  own tile kernel (``_tile_phi``: a pair's bits do not depend on where it falls in a tile nor on
  which of the two is the tile's row) and selected as the full pass selects
  (:func:`~knnweights.engine._kernels_select.insert_sorted`).

The bounds are rigorous (rounding included), so no pair that can enter a list is left out.  The
candidates' distances have the full pass's bits: every engine kernel sums a distance's terms in
the same order, with no reassociation (:mod:`knnweights.engine._kernels`).

When the candidates of a call exceed 2 % of the pairs (the weights have drifted from ``w0``),
the next call runs the full pass, which becomes the new ``D0``.  When the pruned pass right after
a full one has more candidates than a quarter of the pairs a full pass computes (the weights move
too much per call for the bound), pruning backs off for 1, 2, 4 ... calls.  ``D0`` is ``n x n``
float64: the search is used up to the smaller of 256 MiB and the ``working_memory`` budget, on the
CPU, and from ``n^2 d / 2 = 2^22`` element operations a pass (below, a full pass costs less than
compiling the pruned one saves); elsewhere every call is a plain :func:`nearest_hits_misses`.
"""

import numpy as np

from . import _kernels, _kernels_select
from ._config import get_config
from ._kernels import _tile_phi
from ._kernels_select import insert_sorted
from .jit import full_2d, njit, size_dispatch, task_range
from .neighbors import _codes, _pairwise_sym, metric_code, nearest_hits_misses, scale_for_metric, tie_tolerance

__all__ = ["IncrementalHitMiss"]

_U = 2.0**-53


@njit(cache=True, nogil=True)
def _list_bound(X, w, N, i, lst, c, phi):  # pragma: no cover - compiled
    """An upper bound on the largest computed weighted distance from ``i`` to the members of
    ``lst`` (any summation order: the rounding ``c (N_i + N_j)`` added twice); ``inf`` when the
    list has a missing (``-1``) place."""
    t = 0.0
    for s in range(lst.size):
        j = lst[s]
        if j < 0:
            return np.inf
        v = 0.0
        for f in range(X.shape[1]):
            e = X[i, f] - X[j, f]
            v += w[f] * (abs(e) if phi == 0 else e * e)
        v = v * (1.0 + c) + 2.0 * c * (N[i] + N[j])
        if v > t:
            t = v
    return t


@njit(cache=True, nogil=True)
def _bound_parts(Xp, w0, w, g, c, N0, r, N, part, parts):  # pragma: no cover - compiled
    """``N = Xp . w`` and the column part of the lower bound, ``r = g (1 + 2c) a + 2c (N0 + N)``
    with ``a = (1 + c) Xp . max(w0 - w, 0)`` (``>= sum_f max(w0_f - w_f, 0) |x_if|^p``), summed
    over the features that count only (no BLAS call: small products under a threaded BLAS cost
    more than the search)."""
    n, d = Xp.shape
    fall = np.empty(d, np.float64)
    cols_a = np.empty(d, np.int64)
    cols_n = np.empty(d, np.int64)
    na = 0
    nn = 0
    for f in range(d):
        if w0[f] > w[f]:
            fall[na] = w0[f] - w[f]
            cols_a[na] = f
            na += 1
        if w[f] > 0.0:
            cols_n[nn] = f
            nn += 1
    for i in task_range(n, part, parts):
        a = 0.0
        for t in range(na):
            a += fall[t] * Xp[i, cols_a[t]]
        v = 0.0
        for t in range(nn):
            f = cols_n[t]
            v += w[f] * Xp[i, f]
        N[i] = v
        # the rounding of D0 and of the new distance (2c (N0 + N)), and the tie rule's reach (c N, twice)
        r[i] = g * (1.0 + 2.0 * c) * (a * (1.0 + c)) + 2.0 * c * (N0[i] + 2.0 * v)


def _pruned_hits_misses(X, A, w, D0, r, N, T, codes, prev_h, prev_m, c, k, phi, max_share,
                        hit_idx, hit_dist, miss_idx, miss_dist):
    """The ``k`` nearest hits and misses of every sample, computing only the candidates.

    ``X``, ``w``: the data and weights on the features of positive weight (for the bounds);
    ``A``: the matrix the full pass's kernel reads (``X`` scaled for the metric); ``r[j]``: the
    column part of the lower bound (see :meth:`IncrementalHitMiss._pruned`), ``N[j] = w .
    |x_j|^p``, ``T`` the tie rule's tolerances of ``A``.  A pair ``(i, j)`` is a candidate when
    ``D0_ij (1 - c) - r_j <= (U_i + r_i) (1 + c)``, ``U_i`` the bound of the ``k``-th nearest of
    ``j``'s side (:func:`_list_bound`); ``r`` holds the tie rule's reach, so a candidate equal
    to the ``k``-th (and of lower index) is never left out.
    Returns the number of candidate pairs, or ``-1`` (nothing computed) when every 16th row
    has more than ``max_share`` of its pairs as candidates: the bound is too loose to pay.
    """
    n = A.shape[0]
    lim = np.empty((n, 2), np.float64)  # [same class, other class]
    _pruned_limits(X, w, N, r, prev_h, prev_m, c, phi, lim)
    if _probe(D0, r, codes, lim, c) > max_share * ((n + 15) // 16) * n:
        return -1
    return _pruned_rows(A, D0, r, T, codes, lim, c, k, phi, hit_idx, hit_dist, miss_idx, miss_dist)


@njit(cache=True, nogil=True)
def _pruned_limits(X, w, N, r, prev_h, prev_m, c, phi, lim, part, parts):  # pragma: no cover - compiled
    """Each sample's candidate limits, ``(U_i + r_i)(1 + c)`` of its hit and its miss side."""
    for i in task_range(lim.shape[0], part, parts):
        lim[i, 0] = (_list_bound(X, w, N, i, prev_h[i], c, phi) + r[i]) * (1.0 + c)
        lim[i, 1] = (_list_bound(X, w, N, i, prev_m[i], c, phi) + r[i]) * (1.0 + c)
    return lim


@njit(cache=True, nogil=True)
def _probe(D0, r, codes, lim, c):  # pragma: no cover - compiled
    """The candidates of every 16th row: whether the bound is tight enough to pay."""
    n = D0.shape[0]
    probe = 0
    for i in range(0, n, 16):
        ci = codes[i]
        for j in range(n):
            probe += D0[i, j] * (1.0 - c) - r[j] <= lim[i, np.int64(codes[j] != ci)]
    return probe


@njit(cache=True, nogil=True)
def _pruned_rows(A, D0, r, T, codes, lim, c, k, phi, hit_idx, hit_dist, miss_idx, miss_dist, part,
                 parts):  # pragma: no cover - compiled
    """The lists of the samples of this part from their candidates; returns the candidate pairs."""
    n = A.shape[0]
    d = A.shape[1]
    total = 0
    for i in task_range(n, part, parts):
        ci = codes[i]
        cidx = np.empty(n, np.int64)
        m = 0
        for j in range(n):  # branch-free compaction of the candidates, ascending (the full pass's column order)
            cidx[m] = j
            m += D0[i, j] * (1.0 - c) - r[j] <= lim[i, np.int64(codes[j] != ci)]
        for s in range(m):  # the sample itself is never a candidate
            if cidx[s] == i:
                for t in range(s, m - 1):
                    cidx[t] = cidx[t + 1]
                m -= 1
                break
        total += m
        for t in range(k):
            hit_idx[i, t] = -1
            miss_idx[i, t] = -1
            hit_dist[i, t] = np.inf
            miss_dist[i, t] = np.inf
        if m == 0:
            continue
        buf = np.empty((m, d), np.float64)
        for s in range(m):
            for f in range(d):
                buf[s, f] = A[cidx[s], f]
        acc = full_2d(m, 1, 0.0, np.float64)
        ti = 2.0 * T[i]
        # the candidates as the tile's rows against the sample: phi(a_j - a_i) is phi(a_i - a_j) bit
        # for bit, and every row of a group of four is summed alike
        _tile_phi(buf, A, 0, m, i, i + 1, phi, acc)
        for s in range(m):
            j = cidx[s]
            if codes[j] == ci:
                insert_sorted(hit_idx, hit_dist, i, k, j, acc[s, 0], ti, T)
            else:
                insert_sorted(miss_idx, miss_dist, i, k, j, acc[s, 0], ti, T)
    return total


class IncrementalHitMiss:
    """The ``k`` nearest hits and misses of every sample, call after call as the weights move.

    ``search(w, k)`` returns ``(hit_idx, miss_idx)``, the lists of
    ``nearest_hits_misses(X[:, w > 0], codes, w[w > 0], k, metric)`` (the distance on the
    features of positive weight, as the weighters that call it measure it), index for index
    (up to the last-bit caveat of the module docstring); see there for how.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The samples.
    codes : ndarray of shape (n,)
        Class labels (integer codes or any labels ``nearest_hits_misses`` accepts).
    metric : {"manhattan", "sqeuclidean"}, default="manhattan"
        The distance: ``phi(a) = |a|`` or ``a**2``.

    Attributes
    ----------
    n_full, n_pruned : int
        Calls answered by a full pass and by the pruned one.
    """

    _REBASE_SHARE = 0.02
    _FAIL_SHARE = 0.125  # a quarter of the pairs a full (symmetric) pass computes
    _MAX_BYTES = 2**28
    #: below this many element operations (``n^2 d / 2``) a full pass is cheap: the search would save less
    #: over a fit than compiling its pruned pass costs, so every call is a plain search there
    _MIN_WORK = 2**22

    def __init__(self, X, codes, metric="manhattan"):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.codes = _codes(codes)
        self.metric = metric
        self.phi = metric_code(metric)
        self.Xp = np.abs(self.X) if self.phi == _kernels.L1 else self.X * self.X
        self.g = 1.0 if self.phi == _kernels.L1 else 2.0
        self.c = 4.0 * _U * (self.X.shape[1] + 8)  # relative rounding of a d-term distance, with margin
        self.base = None  # (w0, D0, N0) of the last full pass
        self.stale = False  # the last pruned pass had many candidates: rebase D0
        self.since_full = 0  # pruned passes since the last full one
        self.skip = 0  # full passes to run before pruning is tried again
        self.backoff = 1
        self.prev = None  # (k, hit_idx, miss_idx) of the last call
        self.n_full = self.n_pruned = 0

    def _usable(self):
        n, d = self.X.shape
        budget = min(self._MAX_BYTES, get_config()["working_memory"] * 2**20)
        return (n >= 64 and n * n * d // 2 >= self._MIN_WORK and 8 * n * n <= budget
                and get_config()["device"] == "cpu")

    def _scaled(self, w):
        support = w > 0
        if support.all():
            return self.X, w
        return np.ascontiguousarray(self.X[:, support]), w[support]

    def __call__(self, w, k):
        w = np.asarray(w, dtype=np.float64)
        Xs, ws = self._scaled(w)
        if not self._usable():
            nb = nearest_hits_misses(Xs, self.codes, ws, k, self.metric)
            return nb.hit_idx, nb.miss_idx
        A = scale_for_metric(Xs, ws, self.metric)
        n = self.X.shape[0]
        out = None
        # a pruned pass computes at least the 2 k listed pairs per sample: never cheaper when that is most of them
        if (self.base is not None and not self.stale and self.skip == 0 and self.prev is not None
                and self.prev[0] == k and 2 * k <= 0.25 * (n - 1)):
            out = self._pruned(w, A, k, Xs, ws)
        if out is None:
            self.skip = max(self.skip - 1, 0)
            out = self._full(w, A, k)
        self.prev = (k, out[0], out[1])
        return out

    def _alloc(self, k):
        n = self.X.shape[0]
        return np.empty((n, k), np.int64), np.empty((n, k)), np.empty((n, k), np.int64), np.empty((n, k))

    def _full(self, w, A, k):
        """``nearest_hits_misses``' own computation (one symmetric pass, the same selection), keeping ``D0``."""
        n = self.X.shape[0]
        D = _pairwise_sym(A, self.phi)
        hi, hd, mi, md = self._alloc(k)
        T = tie_tolerance(A, self.metric)
        _kernels_select.select_hits_misses(D, np.arange(n, dtype=np.int64), self.codes, self.codes, k, T, T, hi, hd, mi,
                                           md)
        N0, r = np.empty(n), np.empty(n)
        _bound_parts(self.Xp, w, w, self.g, self.c, np.zeros(n), r, N0)
        self.base = (w.copy(), D, N0)
        self.stale = False
        self.since_full = 0
        self.n_full += 1
        return hi, mi

    def _pruned(self, w, A, k, Xs, ws):
        n = self.X.shape[0]
        w0, D0, N0 = self.base
        # the column part of the lower bound: the weights' fall, then the rounding of D0 and of the new distance
        r, N = np.empty(n), np.empty(n)
        _bound_parts(self.Xp, w0, w, self.g, self.c, N0, r, N)
        hi, hd, mi, md = self._alloc(k)
        total = _pruned_hits_misses(Xs, A, ws, D0, r, N, tie_tolerance(A, self.metric), self.codes, self.prev[1],
                                    self.prev[2], self.c, k, self.phi, 2.0 * self._FAIL_SHARE, hi, hd, mi, md)
        first = self.since_full == 0
        self.since_full += 1
        if total < 0 or (first and total > self._FAIL_SHARE * n * (n - 1)):
            # right after a full pass, pruning did not pay: the weights move too much per call for the
            # bound; back off (1, 2, 4 ... full passes before the next try)
            self.skip = self.backoff
            self.backoff = min(2 * self.backoff, 32)
        elif first:
            self.backoff = 1
        if total < 0:
            return None
        # D0 has grown stale (the weights drifted from w0): the next call rebases it with a full pass
        self.stale = total > n * max(self._REBASE_SHARE * (n - 1), 4 * k)
        self.n_pruned += 1
        return hi, mi


# -- serial / threaded choice per call (knnweights.engine.jit.size_dispatch) ----------------------------------------
_bound_parts = size_dispatch(_bound_parts, lambda Xp, *a: Xp.size)
_pruned_limits = size_dispatch(_pruned_limits, lambda X, w, N, r, prev_h, *a: prev_h.size * X.shape[1])
_pruned_rows = size_dispatch(_pruned_rows, lambda A, D0, *a: D0.size * 4, combine=sum)
