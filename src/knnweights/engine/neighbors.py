"""Shared neighbour machinery: weighted distances, hits and misses, soft neighbours, margins.

Every method of knnweights computes its distances, neighbours and margin vectors here
and nowhere else.  Notation: ``phi(a) = |a|`` (metric
``"manhattan"``) or ``phi(a) = a**2`` (metric ``"sqeuclidean"``), the weighted distance
``d_w(x, x') = w . phi(x - x')``, hits = same label without the sample itself, misses =
any other label, and the margin vector of sample ``n``

    z_n = E_miss[phi(x_n - x_m)] - E_hit[phi(x_n - x_h)]

whose inner product with ``w`` is the sample's margin.  Distances are computed on
pre-scaled data (``w * X`` for L1, ``sqrt(w) * X`` for L2sq) by compiled kernels, in
row blocks whose size is bounded by the ``working_memory`` budget of
:func:`knnweights.get_config`; no ``n x n x d`` array is ever formed and an ``n x n``
matrix only when it fits the budget.

Equal distances.  Every neighbour list of the library (hits, misses, the neighbours of each
class, the kNN vote) orders candidates by one rule: two distances from the same query are
equal when they differ by at most the rounding error that computing them can carry
(:func:`tie_tolerance`), and of equal distances the lower sample index comes first.
Distances that are equal in exact arithmetic (integer or few-digit data, mirrored pairs such
as ``x - 1`` and ``x + 1``) come out of floating point a few units of roundoff apart, and
which of them is smaller depends on the last bits of the scaled data, hence on the CPU
(NumPy's SIMD-dispatched functions, the BLAS) that computed the weights.  The rule makes the
order a function of the data: on such data it is the index order on every machine, and on
data without such ties (every gap above the tolerance) it is the order of the computed
distances, bit for bit.
"""

from collections import namedtuple

import numpy as np

from . import _kernels, _kernels_nca, _kernels_ramp, _kernels_select, _kernels_soft, _torch_backend
from ._config import get_config
from ._docs import data_doc

__all__ = [
    "METRICS",
    "metric_code",
    "scale_for_metric",
    "weighted_distances",
    "distance_chunks",
    "ramp_distance_chunks",
    "tie_tolerance",
    "nearest_hits_misses",
    "nearest_by_class",
    "nearest",
    "select_nearest",
    "soft_neighbor_log_probabilities",
    "row_log_softmax",
    "entropy_from_log",
    "soft_margins",
    "nca_terms",
    "hard_margin_vectors",
    "indexed_distances",
    "coef_phi_rows",
    "on_gpu",
    "Neighbors",
    "SoftMargins",
]

#: the neighbour tie rule's version (1: equal computed floats by index; 2: equal within the rounding error of
#: computing them, :func:`tie_tolerance`): stored results on data with many equal distances depend on it
TIE_RULE_VERSION = 2

METRICS = {"manhattan": _kernels.L1, "l1": _kernels.L1, "sqeuclidean": _kernels.L2SQ, "l2sq": _kernels.L2SQ}

Neighbors = namedtuple("Neighbors", ["hit_idx", "hit_dist", "miss_idx", "miss_dist"])
Neighbors.__doc__ = """k nearest hits and misses of each sample, sorted by distance.

Parameters
----------
hit_idx : ndarray of shape (n, k), int64
    The nearest hits (``-1`` where fewer than k exist).
hit_dist : ndarray of shape (n, k)
    Their weighted distances (``inf`` where missing).
miss_idx : ndarray of shape (n, k), int64
    The nearest misses (``-1`` where fewer than k exist).
miss_dist : ndarray of shape (n, k)
    Their weighted distances (``inf`` where missing).
"""

SoftMargins = namedtuple("SoftMargins", ["z", "hit_entropy", "miss_entropy", "log_hit_mass", "log_miss_mass"])
SoftMargins.__doc__ = """Result of :func:`soft_margins`.

Parameters
----------
z : ndarray of shape (d,) or (n, d)
    The sum of the (sample-weighted) margin vectors, or one per sample.
hit_entropy : ndarray of shape (n,)
    Shannon entropy of each sample's soft hit distribution.
miss_entropy : ndarray of shape (n,)
    Shannon entropy of each sample's soft miss distribution.
log_hit_mass : ndarray of shape (n,)
    ``log sum exp(-d/sigma)`` over the hits (for outlier probabilities and costs).
log_miss_mass : ndarray of shape (n,)
    ``log sum exp(-d/sigma)`` over the misses.
"""


def metric_code(metric):
    """Map a metric name to the kernel code, with a clear error for unknown names.

    Parameters
    ----------
    metric : str
        A key of :data:`METRICS`.

    Returns
    -------
    int
        ``_kernels.L1`` or ``_kernels.L2SQ``.
    """
    try:
        return METRICS[metric]
    except (KeyError, TypeError):
        raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}") from None


def _as_float(X):
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return np.ascontiguousarray(X)


def tie_tolerance(A, metric):
    """Per-row tolerances ``T`` of the tie rule on scaled data ``A`` (module docstring).

    The distances from query ``i`` to candidates ``j`` and ``m`` are equal when
    ``|D_ij - D_im| <= (T_i + T_j) + (T_i + T_m)``.  ``T_i = 2**-51 (d + 8) N_i`` with ``N_i =
    sum_f |a_if|`` (Manhattan) or ``sum_f a_if**2`` (squared Euclidean): ``T_i + T_j`` bounds
    how far the computed ``D_ij`` (``d`` terms summed in order) can lie from the exact
    distance of data whose scaled entries carry a relative error of a few units of roundoff
    (the data's own rounding, the standardisation's and the weights'), so two distances that
    are equal in exact arithmetic are always found equal.  Distances further apart than that
    keep their computed order.

    Parameters
    ----------
    A : ndarray of shape (n, d)
        Data scaled for the metric (:func:`scale_for_metric`).
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.

    Returns
    -------
    ndarray of shape (n,), float64
        ``T``; zeros for integer data (exact distances).
    """
    A = np.asarray(A)
    if A.dtype.kind != "f":  # integer data (genotype codes): exact distances, no rounding
        return np.zeros(A.shape[0])
    N = np.abs(A).sum(axis=1, dtype=np.float64) if metric_code(metric) == _kernels.L1 else \
        np.einsum("ij,ij->i", A, A, dtype=np.float64)
    unit = _kernels.TIE_ULPS * float(np.finfo(A.dtype).eps / np.finfo(np.float64).eps)
    return (unit * (A.shape[1] + 8)) * N


def scale_for_metric(X, w, metric):
    """Rescale ``X`` so that plain L1 / squared Euclidean equals the ``w``-weighted one.

    Features of weight zero add nothing to any distance: when at least a tenth of the
    weights are zero (``_support_columns``) (sparse solutions of I-M4E, LH-RELIEF, SQP-FW, MDM...) their columns
    are dropped, so the distance kernels only touch the features that count.  The result
    is therefore for distances only.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The data.
    w : array-like of shape (d,) or None
        Non-negative feature weights (``None``: ``X`` as float, unscaled).
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.

    Returns
    -------
    ndarray of shape (n, d_support), C-contiguous
        ``w * X`` (L1) or ``sqrt(w) * X`` (L2sq), on the support of ``w`` when it is sparse.
    """
    X = _as_float(X)
    if w is None:
        return X
    w = np.asarray(w, dtype=X.dtype)
    if np.any(w < 0):
        raise ValueError("feature weights must be non-negative")
    X, scale = _support_columns(X, w if metric_code(metric) == _kernels.L1 else np.sqrt(w))
    return np.ascontiguousarray(X * scale)


# when at most this share of a weight / direction vector is non-zero, distance kernels
# work on its support only (the gather costs O(n d), the kernels O(n^2 d) or O(n k d))
_SUPPORT_SHARE = 0.9


def _support_columns(X, v):
    """``(X[:, support], v[support])`` when ``v`` is sparse enough, else ``(X, v)``: zero
    entries of ``v`` add nothing to ``sum_k v_k phi(x_ik - x_jk)``."""
    support = np.flatnonzero(v)
    if support.size <= _SUPPORT_SHARE * v.size:
        return np.ascontiguousarray(X[:, support]), np.ascontiguousarray(v[support])
    return X, v


def _rows_per_chunk(n_cols, itemsize, working_memory=None, n_arrays=3):
    budget = (working_memory if working_memory is not None else get_config()["working_memory"]) * 2**20
    return max(1, int(budget // max(1, n_cols * itemsize * n_arrays)))


def on_gpu():
    """Whether the engine computes on a GPU (``set_config(device=...)`` other than ``"cpu"``).

    Returns
    -------
    bool
        The configured device is not ``"cpu"``.
    """
    return get_config()["device"] != "cpu"


def _pairwise_scaled(A, B, phi):
    dtype = np.result_type(A.dtype, B.dtype)
    A = np.ascontiguousarray(A, dtype=dtype)
    B = np.ascontiguousarray(B, dtype=dtype)
    if on_gpu() and A.shape[0] and B.shape[0]:
        return _torch_backend.pairwise_phi(A, B, phi, get_config()["device"])
    out = np.empty((A.shape[0], B.shape[0]), dtype=dtype)
    if A.shape[0] and B.shape[0]:
        _kernels.pairwise_phi(A, B, phi, out)
    return out


def coef_phi_rows(A, B, P, phi):
    """``out[i] = sum_j P[i, j] phi(A[i] - B[j])`` on the configured device.

    Per row of ``A``, the coefficient-weighted per-feature differences to the rows of ``B``
    (margin vectors, pair moments).

    Parameters
    ----------
    A : ndarray of shape (n_a, d)
        The rows.
    B : ndarray of shape (n_b, d)
        The other rows.
    P : ndarray of shape (n_a, n_b)
        The coefficients (zeros are skipped).
    phi : int
        ``kernels.L1`` (``|.|``, the Manhattan terms) or ``kernels.L2SQ`` (squared differences).

    Returns
    -------
    ndarray of shape (n_a, d)
        ``out``, of ``A``'s dtype.
    """
    if on_gpu():
        return _torch_backend.coef_phi_rows(A, B, P, phi, get_config()["device"])
    out = np.empty((A.shape[0], A.shape[1]), dtype=A.dtype)
    _kernels.coef_phi_rows(A, B, P, phi, out)
    return out


@data_doc
def distance_chunks(XA, XB=None, w=None, metric="manhattan", working_memory=None, n_arrays=1):
    """Yield ``(start, stop, D)`` row blocks of the weighted distance matrix.

    Parameters
    ----------
    XA : ndarray of shape (na, d)
        The rows of the matrix.
    XB : ndarray of shape (nb, d), default=None
        The columns; ``None`` means ``XA`` (distances within one set).
    w : ndarray of shape (d,), default=None
        Non-negative feature weights; ``None`` means all ones.
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.
    {block_params}

    Yields
    ------
    start, stop : int
        Rows ``start:stop`` of ``XA``.
    D : ndarray of shape (stop - start, nb)
    """
    phi = metric_code(metric)
    A = scale_for_metric(XA, w, metric)
    B = A if XB is None else scale_for_metric(XB, w, metric)
    step = _rows_per_chunk(B.shape[0], A.itemsize, working_memory, n_arrays)
    if XB is None and step >= A.shape[0] and not on_gpu():
        # the whole (symmetric) matrix in one block: each pair computed once, same bits
        yield 0, A.shape[0], _pairwise_sym(A, phi)
        return
    for start in range(0, A.shape[0], step):
        stop = min(start + step, A.shape[0])
        yield start, stop, _pairwise_scaled(A[start:stop], B, phi)


@data_doc
def ramp_distance_chunks(ZT, rows, t_eq, t_diff, disc, w=None, working_memory=None, n_arrays=1):
    """Yield ``(start, stop, D)`` row blocks of the ramp distances ``D[r, j] = sum_f w_f ramp_f(rows[r], j)``.

    The Relief family's ramp ``diff`` (:mod:`knnweights.engine._kernels_ramp`): 0 up to ``t_eq``, 1 from
    ``t_diff``, linear in between, on range-normalised values; a discrete feature's 0/1 mismatch.

    Parameters
    ----------
    ZT : ndarray of shape (d, n)
        The range-normalised samples, transposed (C-contiguous).
    rows : ndarray of int, shape (m,)
        The query samples (columns of ``ZT``).
    t_eq, t_diff : float
        The ramp's thresholds, ``0 <= t_eq < t_diff``.
    disc : ndarray of bool, shape (d,)
        The discrete features.
    w : ndarray of shape (d,), default=None
        Feature weights; ``None`` means all ones.
    {block_params}

    Yields
    ------
    start, stop : int
        Entries ``start:stop`` of ``rows``.
    D : ndarray of shape (stop - start, n)
    """
    d, n = ZT.shape
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    w = np.ones(d) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    disc = np.ascontiguousarray(disc, dtype=np.bool_)
    step = _rows_per_chunk(n, 8, working_memory, n_arrays)
    for start in range(0, rows.size, step):
        stop = min(start + step, rows.size)
        D = np.empty((stop - start, n))
        _kernels_ramp.ramp_rows(ZT, rows[start:stop], float(t_eq), float(t_diff) - float(t_eq), disc, w, D)
        yield start, stop, D


def weighted_distances(XA, XB=None, w=None, metric="manhattan"):
    """Full weighted distance matrix ``D[i, j] = w . phi(XA[i] - XB[j])``.

    Use :func:`distance_chunks` when ``na x nb`` may not fit in memory.

    Parameters
    ----------
    XA : ndarray of shape (na, d)
        The rows of the matrix.
    XB : ndarray of shape (nb, d), default=None
        The columns; ``None`` means ``XA``.
    w : ndarray of shape (d,), default=None
        Non-negative feature weights; ``None`` means all ones.
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.

    Returns
    -------
    ndarray of shape (na, nb)
        ``D``.
    """
    phi = metric_code(metric)
    A = scale_for_metric(XA, w, metric)
    if XB is None and not on_gpu():
        return _pairwise_sym(A, phi)
    B = A if XB is None else scale_for_metric(XB, w, metric)
    return _pairwise_scaled(A, B, phi)


def _pairwise_sym(A, phi):
    """Distances within one set: each pair computed once (bit-identical to the rectangular kernel)."""
    D = np.empty((A.shape[0], A.shape[0]), dtype=A.dtype)
    if A.shape[0]:
        _kernels.pairwise_phi_sym(A, phi, D)
    return D


def _codes(y):
    y = np.asarray(y)
    if y.dtype.kind not in "iu" or (y.size and y.min() < 0):
        raise ValueError("labels must be encoded as non-negative integers here (use LabelEncoder)")
    return np.ascontiguousarray(y, dtype=np.int64)


def _is_every_row(rows, n):
    return rows.shape[0] == n and bool(np.array_equal(rows, np.arange(n)))


@data_doc
def nearest_hits_misses(X, y, w=None, n_neighbors=1, metric="manhattan", rows=None, working_memory=None):
    """The ``n_neighbors`` nearest hits (self excluded) and misses of every sample.

    {X_y}
    w : ndarray of shape (d,), default=None
        Feature weights of the distance (``None``: unweighted).
    n_neighbors : int, default=1
        ``k``, the hits and the misses listed per query.
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.
    rows : ndarray of int, default=None
        Query only these samples (e.g. Relief's sampled instances); ``None``: all.
    working_memory : float, default=None
        MiB budget for one block of distances; ``None`` takes the global configuration.

    Returns
    -------
    Neighbors
        One row per query, sorted by distance; equal distances (the tie rule of the
        module docstring) by the lower sample index.
    """
    codes = _codes(y)
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}")
    Xf = _as_float(X)
    rows = np.arange(codes.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    every_row = _is_every_row(rows, codes.shape[0])
    nq = rows.shape[0]
    hit_idx = np.empty((nq, k), np.int64)
    miss_idx = np.empty((nq, k), np.int64)
    hit_dist = np.empty((nq, k), Xf.dtype)
    miss_dist = np.empty((nq, k), Xf.dtype)
    B = scale_for_metric(Xf, w, metric)
    T = tie_tolerance(B, metric)
    # all rows: the distances within one set (symmetric, each pair once when it fits)
    for s, e, D in distance_chunks(B, None, None, metric, working_memory) if every_row else \
            distance_chunks(B[rows], B, None, metric, working_memory):
        r = rows[s:e]
        _kernels_select.select_hits_misses(D, r, codes[r], codes, k, T[r], T, hit_idx[s:e], hit_dist[s:e],
                                           miss_idx[s:e], miss_dist[s:e])
    return Neighbors(hit_idx, hit_dist, miss_idx, miss_dist)


def nearest_by_class(X, y, w=None, n_neighbors=1, metric="manhattan", n_classes=None, XB=None, yB=None,
                     rows=None, working_memory=None):
    """The ``n_neighbors`` nearest samples of *each* class, for every row of ``X``.

    With ``XB=None`` the neighbours are searched in ``X`` itself and each sample is
    excluded from its own list (``rows`` then selects the query samples); otherwise
    they are searched in ``(XB, yB)`` (queries against a training set; ``y`` may be
    ``None``).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The queries (and, with ``XB=None``, the candidates).
    y : ndarray of shape (n,) or None
        Integer class codes of ``X`` (needed when ``XB`` is ``None``).
    w : ndarray of shape (d,), default=None
        Feature weights of the distance (``None``: unweighted).
    n_neighbors : int, default=1
        ``k``, the neighbours listed per class.
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.
    n_classes : int, default=None
        The number of classes (default: the largest code plus one).
    XB : ndarray of shape (nb, d), default=None
        The candidates, if not ``X``.
    yB : ndarray of shape (nb,), default=None
        Integer class codes of ``XB``.
    rows : ndarray of int, default=None
        With ``XB=None``: query only these samples.
    working_memory : float, default=None
        MiB budget for one block of distances; ``None`` takes the global configuration.

    Returns
    -------
    idx : ndarray of shape (n, n_classes, k)
        Column indices sorted by distance (``-1`` where a class has fewer than k).
    dist : ndarray of shape (n, n_classes, k)
        Their distances (``inf`` where missing).
    """
    self_search = XB is None
    codes_cols = _codes(y if self_search else yB)
    if n_classes is None:
        n_classes = int(codes_cols.max()) + 1 if codes_cols.size else 0
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}")
    Xq = _as_float(X)
    every_row = False
    if self_search:
        rows = np.arange(Xq.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
        every_row = _is_every_row(rows, Xq.shape[0])
        self_cols = rows
        B = scale_for_metric(Xq, w, metric)
        A = B[rows]
        T_cols = tie_tolerance(B, metric)
        T_rows = T_cols[rows]
    else:
        A = scale_for_metric(Xq, w, metric)
        B = scale_for_metric(XB, w, metric)
        self_cols = np.full(A.shape[0], -1, np.int64)
        T_rows, T_cols = tie_tolerance(A, metric), tie_tolerance(B, metric)
    n = A.shape[0]
    idx = np.empty((n, n_classes, k), np.int64)
    dist = np.empty((n, n_classes, k), Xq.dtype)
    codes_rows = np.zeros(n, np.int64)
    for s, e, D in distance_chunks(A, None if every_row else B, None, metric, working_memory):
        _kernels_select.select_neighbors(D, self_cols[s:e], codes_rows[s:e], codes_cols, n_classes, k, T_rows[s:e],
                                         T_cols, idx[s:e], dist[s:e])
    return idx, dist


def select_nearest(D, n_neighbors, T_rows, T_cols):
    """The ``n_neighbors`` smallest entries of each row of a distance block, by the tie rule.

    Parameters
    ----------
    D : ndarray of shape (nq, n)
        Distances (each computed as one sum over the features, as the engine's kernels do).
    n_neighbors : int
        ``k``.
    T_rows, T_cols : ndarray of shape (nq,) and (n,)
        The rows' and columns' :func:`tie_tolerance` on the data the distances come from.

    Returns
    -------
    idx : ndarray of shape (nq, k)
        Column indices sorted by distance, equal distances by the lower index (``-1`` where
        a row has fewer than k columns).
    dist : ndarray of shape (nq, k)
        Their distances (``inf`` where missing).
    """
    nq, n = D.shape
    k = int(n_neighbors)
    idx = np.empty((nq, 1, k), np.int64)
    dist = np.empty((nq, 1, k), D.dtype)
    _kernels_select.select_neighbors(np.ascontiguousarray(D), np.full(nq, -1, np.int64), np.zeros(nq, np.int64),
                                     np.zeros(n, np.int64), 1, k, np.ascontiguousarray(T_rows, dtype=np.float64),
                                     np.ascontiguousarray(T_cols, dtype=np.float64), idx, dist)
    return idx[:, 0], dist[:, 0]


def nearest(X_query, X, w=None, n_neighbors=1, metric="manhattan", working_memory=None):
    """The ``n_neighbors`` nearest rows of ``X`` to each row of ``X_query`` (the kNN search).

    Parameters
    ----------
    X_query : ndarray of shape (nq, d)
        The queries.
    X : ndarray of shape (n, d)
        The candidates (a training set).
    w : ndarray of shape (d,), default=None
        Feature weights of the distance (``None``: unweighted).
    n_neighbors : int, default=1
        ``k``.
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.
    working_memory : float, default=None
        MiB budget for one block of distances; ``None`` takes the global configuration.

    Returns
    -------
    idx : ndarray of shape (nq, k)
        Row indices of ``X`` sorted by distance, equal distances (the tie rule of the
        module docstring) by the lower index; ``-1`` where ``X`` has fewer than k rows.
    dist : ndarray of shape (nq, k)
        Their distances (``inf`` where missing).
    """
    n = np.asarray(X).shape[0]
    idx, dist = nearest_by_class(X_query, None, w, n_neighbors, metric, n_classes=1, XB=X,
                                 yB=np.zeros(n, np.int64), working_memory=working_memory)
    return idx[:, 0], dist[:, 0]


def soft_neighbor_log_probabilities(D, codes_rows, codes_cols, sigma, row_offset=0, exclude_self=True):
    """Soft hit and miss log-probabilities of one block of distances, in log space.

    ``log alpha[r, h] = -D[r, h]/sigma - logsumexp_{hits}(-D[r, :]/sigma)`` over the hits
    of row ``r`` (same class, self excluded), ``-inf`` elsewhere; ``log beta`` likewise
    over misses (I-M4E eqs. 5, 6; I-RELIEF's kernel neighbours).  The log-sum-exp
    subtracts each row's largest logit, so the probabilities stay exact for ``sigma``
    down to 1e-8 and below: the nearest hit (miss) gets probability one when the gaps
    dwarf ``sigma``.

    Parameters
    ----------
    D : ndarray of shape (n_rows, n_cols)
        A block of distances.
    codes_rows : ndarray of shape (n_rows,)
        Integer class codes of the rows.
    codes_cols : ndarray of shape (n_cols,)
        Integer class codes of the columns.
    sigma : float
        Kernel width, ``> 0``.
    row_offset : int, default=0
        Row ``r`` is the sample of column ``row_offset + r``.
    exclude_self : bool, default=True
        Leave each row's own sample out of its hits and misses.

    Returns
    -------
    log_alpha, log_beta : ndarray of shape D.shape
        Log-probabilities of the hits and of the misses (``-inf`` elsewhere).
    log_hit_mass, log_miss_mass : ndarray of shape (D.shape[0],)
        ``logsumexp(-D/sigma)`` over hits and over misses (``-inf`` where none).
    """
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma!r}")
    D = np.asarray(D)
    nr = D.shape[0]
    logits = D * (-1.0 / sigma)
    same = codes_rows[:, None] == codes_cols[None, :]
    hit_mask = same.copy()
    if exclude_self:
        r = np.arange(nr)
        cols = row_offset + r
        ok = cols < D.shape[1]
        hit_mask[r[ok], cols[ok]] = False
        miss_self = np.zeros_like(same)
        miss_self[r[ok], cols[ok]] = True
        miss_mask = ~same & ~miss_self
    else:
        miss_mask = ~same
    lse_h, log_alpha = row_log_softmax(np.where(hit_mask, logits, -np.inf))
    lse_m, log_beta = row_log_softmax(np.where(miss_mask, logits, -np.inf))
    return log_alpha, log_beta, lse_h, lse_m


def row_log_softmax(L):
    """Row-wise log-sum-exp and log-softmax of logits ``L`` (``-inf`` entries allowed).

    Each row's largest finite logit is subtracted before exponentiating, so a row whose
    gaps dwarf the kernel width still gets exact probabilities.

    Parameters
    ----------
    L : ndarray of shape (n_rows, n_cols)
        Logits; ``-inf`` marks an entry outside the row's set.

    Returns
    -------
    lse : ndarray of shape (n_rows,)
        ``log sum_c exp(L[r, c])``; ``-inf`` for a row without a finite logit.
    logp : ndarray of shape (n_rows, n_cols)
        ``L - lse`` (``-inf`` where ``L`` is, and on a row without a finite logit).
    """
    m = L.max(axis=1, initial=-np.inf)
    finite = np.isfinite(m)
    m_safe = np.where(finite, m, 0.0)
    with np.errstate(under="ignore"):
        lse = m_safe + np.log(np.exp(L - m_safe[:, None]).sum(axis=1))
    lse = np.where(finite, lse, -np.inf)
    logp = np.where(L > -np.inf, L - np.where(finite, lse, 0.0)[:, None], -np.inf)
    return lse, logp


def entropy_from_log(logp):
    """Row-wise entropy ``-sum_c p log p`` of log-probabilities ``logp`` (``-inf``: probability 0).

    Parameters
    ----------
    logp : ndarray of shape (n_rows, n_cols)
        Log-probabilities of each row's distribution.

    Returns
    -------
    entropy : ndarray of shape (n_rows,)
        In nats.
    """
    with np.errstate(invalid="ignore", under="ignore"):
        p = np.exp(logp)
        t = np.where(p > 0, p * logp, 0.0)
    return -t.sum(axis=1)


def _soft_margin_blocks(X, Zd, codes, w, sigma, metric, working_memory, lh, lm, ent_h, ent_m):
    """Yield ``(start, stop, z_block)`` of the unweighted soft margin vectors, filling the per-row
    log-masses and entropies; on the configured device (compiled kernels, or PyTorch)."""
    phi = metric_code(metric)
    if on_gpu():
        Xs = scale_for_metric(X, w, metric)
        n = Xs.shape[0]
        step = _rows_per_chunk(n, 8, working_memory, n_arrays=6)
        for s in range(0, n, step):
            e = min(n, s + step)
            block, lh[s:e], lm[s:e], ent_h[s:e], ent_m[s:e] = _torch_backend.soft_margin_block(
                Xs[s:e], Xs, Zd[s:e], Zd, codes[s:e], codes, s, sigma, phi, get_config()["device"])
            yield s, e, block
        return
    for s, e, D in distance_chunks(X, None, w, metric, working_memory, n_arrays=6):
        P = np.empty(D.shape, dtype=np.float64)
        _kernels_soft.soft_coefficients(np.ascontiguousarray(D, dtype=np.float64), codes[s:e], codes, s, 1.0 / sigma, P,
                                   lh[s:e], lm[s:e], ent_h[s:e], ent_m[s:e])
        yield s, e, coef_phi_rows(np.ascontiguousarray(Zd[s:e]), Zd, np.ascontiguousarray(P, dtype=Zd.dtype), phi)


@data_doc
def soft_margins(X, y, w, sigma, metric="manhattan", sample_weight=None, per_sample=False, Z=None,
                 working_memory=None):
    """Margin vectors with kernel-soft hits and misses (I-M4E eqs. 5-7, I-RELIEF, LOGO).

    ``z_n = sum_m beta_nm phi(x_n - x_m) - sum_h alpha_nh phi(x_n - x_h)`` with the
    probabilities of :func:`soft_neighbor_log_probabilities` under the weighted distance.

    {X_y}
    w : ndarray of shape (d,)
        Current weights (define the distances, hence the probabilities).
    sigma : float
        Kernel width, ``> 0``.
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.
    sample_weight : None, ndarray of shape (n,) or callable
        Weight of each ``z_n`` in the sum.  A callable receives
        ``(log_hit_mass, log_miss_mass)`` of a row block and returns its weights (this is
        how I-RELIEF applies its outlier probabilities).
    per_sample : bool
        Return ``z`` as ``(n, d)`` instead of the weighted sum ``(d,)``.
    Z : ndarray of shape (n, d), default=None
        The data the ``phi`` differences are taken on, if not ``X`` (e.g. ReliefF's
        range-normalised data).  Distances always use ``X``.
    working_memory : float, default=None
        MiB budget for one block of distances; ``None`` takes the global configuration.

    Returns
    -------
    SoftMargins
        The margin vectors, entropies and log-masses.
    """
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma!r}")
    X = _as_float(X)
    codes = _codes(y)
    Zd = X if Z is None else _as_float(Z)
    n, d = Zd.shape
    metric_code(metric)  # an unknown metric fails before any work
    z = np.zeros((n, d) if per_sample else d, dtype=Zd.dtype)
    ent_h = np.empty(n)
    ent_m = np.empty(n)
    lh = np.empty(n)
    lm = np.empty(n)
    for s, e, block in _soft_margin_blocks(X, Zd, codes, w, sigma, metric, working_memory, lh, lm, ent_h, ent_m):
        if sample_weight is not None:  # z_n is linear in its row of coefficients: weight the rows after
            sw = sample_weight(lh[s:e], lm[s:e]) if callable(sample_weight) else np.asarray(sample_weight)[s:e]
            block *= np.asarray(sw, dtype=block.dtype)[:, None]
        if per_sample:
            z[s:e] = block
        else:
            z += block.sum(axis=0)
    return SoftMargins(z, ent_h, ent_m, lh, lm)


@data_doc
def nca_terms(X, y, w, working_memory=None, centred=False):
    """Stochastic nearest-neighbour probabilities ``p_i`` and the gradient of ``sum_i p_i``
    in the weights of a squared Euclidean metric (NCA with a diagonal metric), by BLAS.

    ``p_ij = exp(-d_w(x_i, x_j)) / sum_{k != i} exp(-d_w(x_i, x_k))`` (``p_ii = 0``),
    ``p_i = sum_{j: y_j = y_i} p_ij`` (Goldberger et al. 2004, eqs. 1-2) and, eq. 5 on the
    diagonal, ``d(sum_i p_i)/dw = sum_ij C_ij (x_i - x_j)**2`` with
    ``C_ij = p_ij (p_i - [y_j = y_i])``.  Per row block: ``G = A_b A^T`` on
    ``A = (X - mean) sqrt(w)`` (BLAS), ``D = max(0, ||a_i||^2 + ||a_j||^2 - 2 G)`` and the
    row-shifted softmax (compiled, exponential in NumPy), ``C`` in place of ``G``; the rows
    of ``C`` sum to 0, so ``sum_ij C_ij (x_i - x_j)**2 = c . X**2 - 2 colsum(X_b * (C X))``
    with ``c`` the column sums of ``C`` (a second BLAS product).  ``4 n^2 d`` flops,
    ``O(block x n + n d)`` memory; float32 ``X`` runs the products and ``C`` in float32 (the
    sums of each row in float64).  CPU only.

    {X_y}
    w : ndarray of shape (d,)
        Non-negative weights of the squared Euclidean distance.
    working_memory : float, default=None
        MiB budget for one row block; ``None`` takes the global configuration.
    centred : bool, default=False
        The columns of ``X`` are already centred: skip the centring (a pass over ``X``).

    Returns
    -------
    p : ndarray of shape (n,)
        Each sample's probability of being classified correctly.
    grad : ndarray of shape (d,), float64
        The gradient of ``sum_i p_i`` in ``w``.
    """
    X = _as_float(X)
    codes = _codes(y)
    n, d = X.shape
    w = np.asarray(w, dtype=np.float64)
    if np.any(w < 0):
        raise ValueError("feature weights must be non-negative")
    # translation changes no difference; centring keeps the expanded squares small
    if not centred:
        X = np.ascontiguousarray(X - X.mean(axis=0, dtype=np.float64).astype(X.dtype))
    Xd, sw_scale = _support_columns(X, np.sqrt(w).astype(X.dtype))
    A = np.ascontiguousarray(Xd * sw_scale)
    sq = np.einsum("ij,ij->i", A, A, dtype=np.float64)
    p = np.empty(n)
    colsum = np.zeros(n)
    xcx = np.zeros(d)
    step = _rows_per_chunk(n + d, X.itemsize, working_memory, n_arrays=1)
    for s in range(0, n, step):
        e = min(n, s + step)
        G = A[s:e] @ A.T
        _kernels_nca.nca_shifted_logits(G, sq[s:e], sq, s)
        np.exp(G, out=G)
        _kernels_nca.nca_coefficients(G, codes[s:e], codes, p[s:e])
        colsum += G.sum(axis=0, dtype=np.float64)
        CX = G @ X
        del G
        xcx += np.einsum("ij,ij->j", X[s:e], CX, dtype=np.float64)
    grad = colsum @ (X * X) - 2.0 * xcx
    return p, np.asarray(grad, dtype=np.float64)


def hard_margin_vectors(X, hit_idx, miss_idx, metric="manhattan", hit_coef=None, miss_coef=None, per_sample=False,
                        rows=None):
    """Margin vectors from given neighbour lists.

    ``z_n = sum_t miss_coef[n, t] phi(x_n - x_{miss_idx[n, t]})
    - sum_t hit_coef[n, t] phi(x_n - x_{hit_idx[n, t]})``; the coefficients default to
    ``1/k`` (the mean over the k nearest).  Pass ``idx[:, k-1:k]`` for the k-th
    neighbour only.  Entries of ``-1`` are skipped.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The samples.
    hit_idx : ndarray of shape (n_queries, k_h)
        Each query's hits (``-1``: none).
    miss_idx : ndarray of shape (n_queries, k_m)
        Each query's misses (``-1``: none).
    metric : {"manhattan", "sqeuclidean"}
        The distance: ``phi(a) = |a|`` or ``a**2``.
    hit_coef : ndarray of shape (n_queries, k_h), default=None
        The hits' coefficients (default ``1 / k_h``).
    miss_coef : ndarray of shape (n_queries, k_m), default=None
        The misses' coefficients (default ``1 / k_m``).
    per_sample : bool, default=False
        Return one margin vector per query instead of their sum.
    rows : array-like of int, default=None
        Row ``t`` of the index arrays belongs to the sample ``rows[t]`` (repeats allowed);
        ``None``: to sample ``t``.

    Returns
    -------
    ndarray of shape (d,) or (n_queries, d)
        The sum over queries, or each query's ``z_n`` with ``per_sample``.
    """
    X = _as_float(X)
    phi = metric_code(metric)
    hit_idx = np.ascontiguousarray(hit_idx, dtype=np.int64)
    miss_idx = np.ascontiguousarray(miss_idx, dtype=np.int64)
    if hit_coef is None:
        hit_coef = np.full(hit_idx.shape, 1.0 / hit_idx.shape[1])
    if miss_coef is None:
        miss_coef = np.full(miss_idx.shape, 1.0 / miss_idx.shape[1])
    idx = np.concatenate([miss_idx, hit_idx], axis=1)
    coef = np.ascontiguousarray(np.concatenate([miss_coef, -np.asarray(hit_coef)], axis=1), dtype=X.dtype)
    A = X if rows is None else np.ascontiguousarray(X[np.asarray(rows)])
    out = np.empty_like(A)
    _kernels.index_phi_rows(A, X, idx, coef, phi, out)
    return out if per_sample else out.sum(axis=0)


def indexed_distances(X, idx, v=None, metric="sqeuclidean", rows=None):
    """``D[t, s] = v . phi(X[rows[t]] - X[idx[t, s]])`` for listed candidate pairs.

    Unlike :func:`weighted_distances`, ``v`` may be any real vector (e.g. the step
    direction of an active-set method), and only the ``(n_rows, k)`` listed pairs are
    computed (no ``n x n`` matrix).  Entries of ``idx`` equal to ``-1`` give 0.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The samples.
    idx : ndarray of shape (n_rows, k)
        The candidates of each row (``-1``: none).
    v : ndarray of shape (d,), default=None
        Any real feature vector (default: all ones).
    metric : {"manhattan", "sqeuclidean"}, default="sqeuclidean"
        The distance: ``phi(a) = |a|`` or ``a**2``.
    rows : array-like of int, default=None
        The sample of each row of ``idx`` (default: row ``t`` is sample ``t``).

    Returns
    -------
    ndarray of shape (n_rows, k), float64
        ``D``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    v = np.ones(X.shape[1]) if v is None else np.ascontiguousarray(v, dtype=np.float64)
    X, v = _support_columns(X, v)
    A = X if rows is None else np.ascontiguousarray(X[np.asarray(rows, dtype=np.int64)])
    out = np.empty(idx.shape, np.float64)
    if idx.size:
        _kernels.index_phi_dot(A, X, idx, v, metric_code(metric), out)  # serial for small blocks
    return out
