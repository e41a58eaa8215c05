"""The Relief family's shared margin helpers: the instances scored, the neighbours, the radius.

Used by the class-target estimators (:mod:`.relief`, :mod:`.surf`, :mod:`.irelief`,
:mod:`.mulrel`) and the continuous-target forms (:mod:`._relief_regression`) alike;
distances, neighbour search and margin vectors come from :mod:`knnweights.engine.neighbors`.
"""

import numpy as np
from sklearn.utils import check_random_state

from ..engine import _kernels_ramp as ramp_kernels
from ..engine import kernels
from ..engine import mixed_kernels as _kernels_mixed
from ..engine.neighbors import (
    hard_margin_vectors,
    nearest_by_class,
    nearest_hits_misses,
    ramp_distance_chunks,
    tie_tolerance,
)
from ..utils import fill_docstring

__all__ = ["RADIUS_BLOCK_ARRAYS", "RampDiff", "class_coefficients", "margin_coefficients", "fold_pairs", "in_radius",
           "multisurf_thresholds", "radius_pairs", "ramp_diff", "ramp_relieff_margins", "range_normalize",
           "relieff_margins", "sample_rows", "select_block", "self_columns"]


def range_normalize(X):
    """Divide each feature by its range (max - min); constant features stay 0-difference.

    This is Relief's ``diff(A, I1, I2) = |I1_A - I2_A| / (max A - min A)``
    (Robnik-Sikonja & Kononenko 2003, eq. 2), applied once to the data.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Samples.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_features)
        ``X`` with every non-constant feature divided by its range.
    """
    rng = X.max(axis=0) - X.min(axis=0)
    return X / np.where(rng > 0, rng, 1.0)


def sample_rows(n, n_iter, random_state, n_instances=None):
    """The instances scored: all rows (``None``), ``n_instances`` distinct rows drawn without
    replacement (all of them, exact, when ``n_instances >= n``), or ``n_iter`` draws with
    replacement.

    Parameters
    ----------
    n : int
        Number of samples.
    n_iter : int or None
        Draws with replacement (Kira & Rendell's iterations).
    random_state : int, RandomState or None
        Seeds the draws.
    n_instances : int or None, default=None
        Distinct instances drawn without replacement.

    Returns
    -------
    rows : ndarray of int or None
        The rows scored (sorted for distinct draws); ``None`` for every sample.
    """
    if n_instances is not None:
        if n_iter is not None:
            raise ValueError("n_iter and n_instances both set: give one (n_instances: m distinct instances; "
                             "n_iter: m draws with replacement).")
        if n_instances >= n:
            return None
        return np.sort(check_random_state(random_state).choice(n, size=n_instances, replace=False))
    if n_iter is None:
        return None
    return check_random_state(random_state).randint(0, n, size=n_iter)


def relieff_margins(Z, codes, n_neighbors=1, rows=None, w=None, metric="manhattan", per_class=True,
                    miss_weighting="prior"):
    """Mean ReliefF margin vector over the query ``rows`` (Kononenko 1994, ReliefF).

    For each query ``R`` of class ``c``: the ``k`` nearest hits and, for every other
    class ``C``, its ``k`` nearest misses; the margin vector is
    ``sum_C a(C) * mean_k diff(R, M_k(C)) - mean_k diff(R, H_k)`` with
    ``a(C) = P(C)/(1 - P(c))`` (``miss_weighting="prior"``) or ``1/(K - 1)`` (``"equal"``).
    A class with fewer than ``k`` candidates contributes the mean over all of them (the
    per-class clamp).  With ``per_class=False`` the ``k`` nearest misses are taken among
    all misses (Relief's rule), unweighted.  ``w`` weights the distance that picks
    neighbours (MulRel); ``None`` is unweighted.  Ties: the lower sample index first.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        The (range-normalised) data.
    codes : ndarray of int, shape (n_samples,)
        Class codes.
    n_neighbors : int, default=1
        ``k``: hits and misses per query (per miss class with ``per_class``).
    rows : ndarray of int or None, default=None
        The queries; ``None``: every sample.
    w : ndarray of shape (n_features,) or None, default=None
        Weights of the distance that picks the neighbours.
    metric : str, default="manhattan"
        That distance.
    per_class : bool, default=True
        ReliefF's ``k`` misses of every other class, else Relief's ``k`` nearest misses.
    miss_weighting : {"prior", "equal"}, default="prior"
        ``a(C)`` with ``per_class``.

    Returns
    -------
    margin : ndarray of shape (n_features,)
        The mean margin vector over the queries.
    """
    n = Z.shape[0]
    rows = np.arange(n) if rows is None else rows
    k = n_neighbors
    if not per_class:
        nb = nearest_hits_misses(Z, codes, w, k, metric, rows=rows)
        # 1/k each, or 1/(number found) where fewer than k hits / misses exist (the clamp)
        hit_coef = np.repeat(1.0 / np.maximum((nb.hit_idx >= 0).sum(axis=1), 1)[:, None], k, axis=1)
        miss_coef = np.repeat(1.0 / np.maximum((nb.miss_idx >= 0).sum(axis=1), 1)[:, None], k, axis=1)
        return hard_margin_vectors(Z, nb.hit_idx, nb.miss_idx, "manhattan", hit_coef=hit_coef, miss_coef=miss_coef,
                                   rows=rows) / rows.size
    n_classes = int(codes.max()) + 1
    idx, _ = nearest_by_class(Z, codes, w, k, metric, n_classes=n_classes, rows=rows)
    coef = class_coefficients(codes, rows, n_classes, miss_weighting)
    found = (idx >= 0).sum(axis=2)  # k, or fewer for a class with fewer candidates
    coef = np.repeat(coef[:, :, None] / np.maximum(found, 1)[:, :, None], k, axis=2)
    coef[idx < 0] = 0.0
    empty = np.empty((rows.size, 0), np.int64)
    z = hard_margin_vectors(Z, empty, idx.reshape(rows.size, -1), "manhattan", hit_coef=np.empty((rows.size, 0)),
                            miss_coef=coef.reshape(rows.size, -1), rows=rows)
    return z / rows.size


def margin_coefficients(codes, rows, per_class, miss_weighting):
    """The number of class codes and each query's neighbour coefficients.

    Parameters
    ----------
    codes : ndarray of int, shape (n_samples,)
        Class codes of all samples.
    rows : ndarray of int
        The queries.
    per_class : bool
        ReliefF's per-class neighbours (:func:`class_coefficients`), or one list of hits and one
        of misses (``-1`` and ``+1``).
    miss_weighting : {"prior", "equal"}
        The miss classes' weights when ``per_class``.

    Returns
    -------
    n_classes : int
        ``codes.max() + 1``.
    coef : ndarray of shape (n_rows, n_classes) or (n_rows, 2)
        Each query's coefficient of a neighbour of each class (or of a hit and a miss).
    """
    n_classes = int(codes.max()) + 1
    if per_class:
        return n_classes, class_coefficients(codes, rows, n_classes, miss_weighting)
    return n_classes, np.tile(np.array([-1.0, 1.0]), (rows.size, 1))


def class_coefficients(codes, rows, n_classes, miss_weighting):
    """``(n_rows, K)``: -1 for the own class, the miss-class weight ``a(C)`` for the others.

    Parameters
    ----------
    codes : ndarray of int, shape (n_samples,)
        Class codes of all samples (the priors).
    rows : ndarray of int
        The queries.
    n_classes : int
        Number of classes ``K``.
    miss_weighting : {"prior", "equal"}
        ``a(C) = P(C) / (1 - P(c))`` or ``1 / (K - 1)``.

    Returns
    -------
    coef : ndarray of shape (n_rows, n_classes)
        Each query's coefficient of a neighbour of each class.
    """
    own = codes[rows]
    if miss_weighting == "equal":
        coef = np.full((rows.size, n_classes), 1.0 / (n_classes - 1))
    else:
        prior = np.bincount(codes, minlength=n_classes) / codes.shape[0]
        coef = prior[None, :] / (1.0 - prior[own])[:, None]
    coef[np.arange(rows.size), own] = -1.0
    return coef


def select_block(D, rows, codes, k, per_class, n_classes, T):
    """The ``k`` nearest of the rows ``rows`` of a distance block ``D`` (the sample itself left out):
    per class (``per_class``; ``(b, n_classes, k)``) or hits and misses (``(b, 2, k)``), indices and
    distances, ``-1`` / ``inf`` where fewer exist; equal distances (the engine's tie rule, ``T`` the
    data's per-row tolerances) to the lower index.

    Parameters
    ----------
    D : ndarray of shape (b, n_samples)
        Distances from the block's rows to every sample.
    rows : ndarray of int, shape (b,)
        The samples of the block's rows.
    codes : ndarray of int, shape (n_samples,)
        Class codes.
    k : int
        Neighbours per class (or per hit / miss side).
    per_class : bool
        Per class, else hits and misses.
    n_classes : int
        Number of classes.
    T : ndarray of shape (n_samples,)
        The per-sample tie tolerances.

    Returns
    -------
    idx : ndarray of int64, shape (b, n_classes or 2, k)
        Neighbour indices, nearest first.
    dist : ndarray of shape (b, n_classes or 2, k)
        Their distances.
    """
    b = rows.size
    T_rows = np.ascontiguousarray(T[rows])
    if per_class:
        idx = np.empty((b, n_classes, k), np.int64)
        dist = np.empty((b, n_classes, k), D.dtype)
        kernels.select_neighbors(D, rows, codes[rows], codes, n_classes, k, T_rows, T, idx, dist)
        return idx, dist
    hi, hd = np.empty((b, k), np.int64), np.empty((b, k), D.dtype)
    mi, md = np.empty((b, k), np.int64), np.empty((b, k), D.dtype)
    kernels.select_hits_misses(D, rows, codes[rows], codes, k, T_rows, T, hi, hd, mi, md)
    return np.stack([hi, mi], axis=1), np.stack([hd, md], axis=1)


def fold_pairs(P):
    """``P + P^T`` with each unordered pair given to one of its two rows, ``(n - 1) / 2`` pairs a row.

    ``sum_ij P_ij phi(z_i - z_j)`` is then a sum over half the pairs; giving pair ``(i, j)``
    to row ``i`` when ``j - i mod n`` is in the first half (instead of the upper triangle)
    keeps the rows, hence the threads of the kernel, equally loaded (compiled:
    ``kernels.fold_pairs``).

    Parameters
    ----------
    P : ndarray of shape (n, n)
        Pair coefficients.

    Returns
    -------
    folded : ndarray of shape (n, n)
        The folded coefficients.
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    return kernels.fold_pairs(P, np.empty_like(P))


# -- SURF and MultiSURF: every instance within a distance threshold is a neighbour -------------------------------------
# n x n (or block x n) arrays alive at once (distances, coefficients and their temporaries), in 8-byte units
RADIUS_BLOCK_ARRAYS = 6


def self_columns(start, b):
    """The column of each row's own sample: ``start + 0..b-1``, or the given row indices.

    Parameters
    ----------
    start : int or array-like of int
        The first sample of a block of consecutive rows, or the rows' samples.
    b : int
        Rows in the block.

    Returns
    -------
    columns : ndarray of int, shape (b,)
        The sample of each row.
    """
    return start + np.arange(b) if np.isscalar(start) else np.asarray(start)


def multisurf_thresholds(D, start):
    """``T_i = mean_i - std_i / 2`` over the ``n - 1`` distances from ``i`` (rows ``start:`` of a
    block, or the samples ``start`` when it is an array).  Computed a few rows at a time (each row's
    sums alone, so the same values), with no temporary as large as ``D``.

    Parameters
    ----------
    D : ndarray of shape (b, n_samples)
        Distances from the block's rows to every sample.
    start : int or array-like of int
        The rows' samples (:func:`self_columns`).

    Returns
    -------
    T : ndarray of shape (b,)
        Each row's threshold.
    """
    b, n = D.shape
    self_cols = self_columns(start, b)
    mean = D.sum(axis=1, dtype=np.float64) / (n - 1)
    sq = np.empty(b)
    step = max(1, _THRESHOLD_ELEMENTS // max(n, 1))
    for s in range(0, b, step):
        e = min(b, s + step)
        dev = D[s:e] - mean[s:e, None]
        dev[np.arange(e - s), self_cols[s:e]] = 0.0  # the sample itself is not among the n - 1 distances
        sq[s:e] = np.einsum("ij,ij->i", dev, dev)
    return mean - np.sqrt(sq / (n - 1)) / 2.0


#: elements of the temporary block of :func:`multisurf_thresholds`
_THRESHOLD_ELEMENTS = 2**17


#: ``{radius_block}``: the Parameters opening of a function of one distance block's in-radius pairs
_radius_doc = fill_docstring(radius_block="""Parameters
----------
D : ndarray of shape (b, n_samples)
    Distances from the block's rows to every sample.
T : ndarray of shape (b,)
    The rows' thresholds.
start : int or array-like of int
    The rows' samples (:func:`self_columns`).""")


@_radius_doc
def in_radius(D, T, start):
    """The in-radius pairs of a distance block: ``d_ij < T_i``, the sample itself left out.

    {radius_block}

    Returns
    -------
    near : ndarray of bool, shape (b, n_samples)
        Which samples are each row's neighbours.
    """
    near = D < T[:, None]
    rows = np.arange(D.shape[0])
    near[rows, self_columns(start, rows.size)] = False
    return near


@_radius_doc
def radius_pairs(D, T, start, lab_rows, lab_cols, n_groups, table_fn, kind=0, s=0.0, fold=False,
                  symmetric=False):
    """Coefficients ``P[i, j]`` of the in-radius pairs of a distance block (``d_ij < T_i``, ``j`` not the
    sample itself; rows ``start``... or the samples ``start``): one compiled pass counts each row's
    neighbours per group, one writes ``P``.

    A pair's group is the neighbour's class (``kind=0``; ``lab_cols`` the class codes) or, for a
    continuous target (``kind=1``), 0 when ``|y_i - y_j| < s`` and 1 otherwise; ``table_fn(counts)``
    gives the coefficient of each row and group from the ``(b, n_groups)`` counts.  ``fold``: ``D``
    is the whole matrix and ``P`` comes pair-folded (as :func:`fold_pairs` of the unfolded ``P``);
    ``symmetric``: that matrix is exactly symmetric (the CPU kernel's distances within one set).

    {radius_block}
    lab_rows : ndarray of shape (b,)
        The rows' labels (class codes or target values).
    lab_cols : ndarray of shape (n_samples,)
        Every sample's label.
    n_groups : int
        Number of groups of a pair.
    table_fn : callable
        ``(b, n_groups)`` counts -> ``(b, n_groups)`` coefficients.
    kind : {0, 1}, default=0
        Groups by class (0) or by target difference (1).
    s : float, default=0.0
        The target difference below which a pair is a hit (``kind=1``).
    fold : bool, default=False
        Pair-fold the coefficients (``D`` is the whole matrix).
    symmetric : bool, default=False
        ``D`` is exactly symmetric.

    Returns
    -------
    P : ndarray of float64, shape (b, n_samples)
        The pair coefficients.
    """
    D = np.ascontiguousarray(D)
    T = np.ascontiguousarray(T, dtype=np.float64)
    self_cols = np.ascontiguousarray(self_columns(start, D.shape[0]), dtype=np.int64)
    lab_rows = np.ascontiguousarray(lab_rows, dtype=np.float64)
    lab_cols = np.ascontiguousarray(lab_cols, dtype=np.float64)
    counts = np.empty((D.shape[0], n_groups), np.int64)
    kernels.radius_counts(D, T, self_cols, lab_rows, lab_cols, float(s), kind, counts)
    table = np.ascontiguousarray(table_fn(counts), dtype=np.float64)
    return kernels.radius_coefficients(D, T, self_cols, lab_rows, lab_cols, float(s), kind, table, bool(fold),
                                        bool(fold and symmetric), np.empty(D.shape, np.float64))


def ramp_diff(A, t_eq, t_diff, disc=None):
    """The ramp ``diff`` of range-normalised absolute differences ``A`` (Hong 1997;
    Robnik-Sikonja & Kononenko 2003, Sec. 2.7): 0 up to ``t_eq``, 1 from ``t_diff``, linear in
    between; the features ``disc`` (discrete) keep their 0/1 mismatch.

    Parameters
    ----------
    A : ndarray of shape (..., n_features)
        ``|x_if - x_jf| / range_f``.
    t_eq : float
        The difference up to which two values are equal.
    t_diff : float
        The difference from which two values differ (``t_eq < t_diff``).
    disc : ndarray of bool, shape (n_features,) or None, default=None
        The discrete features.

    Returns
    -------
    diff : ndarray of the shape of ``A``
        The ramp differences.
    """
    out = A - t_eq  # the one temporary: the block is memory-bound, each further array costs a pass
    out /= t_diff - t_eq
    np.clip(out, 0.0, 1.0, out=out)
    if disc is not None and disc.any():
        out[..., disc] = (A[..., disc] != 0).astype(out.dtype)
    return out


def ramp_relieff_margins(X, codes, n_neighbors, rows, per_class, miss_weighting, t_eq, t_diff, disc):
    """:func:`relieff_margins` with the ramp ``diff`` (:func:`ramp_diff`) in both the distance that
    picks the neighbours (``d(i, j) = sum_f ramp_f(i, j)``) and the margins, as CORElearn's
    ``ReliefFequalK`` uses it.  Features are range-normalised for the ramp (the thresholds are
    fractions of each feature's range); discrete features keep the 0/1 mismatch.  The distances
    and the margins come from :class:`RampDiff`; the neighbours from :func:`select_block` under
    the engine's tie rule.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Samples (complete).
    codes : ndarray of int, shape (n_samples,)
        Class codes.
    n_neighbors : int
        ``k``.
    rows : ndarray of int or None
        The queries; ``None``: every sample.
    per_class : bool
        ReliefF's misses of every other class, else Relief's nearest misses.
    miss_weighting : {"prior", "equal"}
        ``a(C)`` with ``per_class``.
    t_eq, t_diff : float
        The ramp's thresholds.
    disc : ndarray of bool, shape (n_features,)
        The discrete features.

    Returns
    -------
    margin : ndarray of shape (n_features,)
        The mean margin vector over the queries.
    """
    data = RampDiff(X, t_eq, t_diff, disc)
    rows = np.arange(data.n) if rows is None else np.asarray(rows, dtype=np.int64)
    k = int(n_neighbors)
    n_classes, coef_all = margin_coefficients(codes, rows, per_class, miss_weighting)
    T = data.tie_tolerance()
    z = np.zeros(data.d)
    for s, e, D in data.distance_chunks(rows=rows):
        r = rows[s:e]
        idx, _ = select_block(np.ascontiguousarray(D), r, codes, k, per_class, n_classes, T)
        found = (idx >= 0).sum(axis=2)
        c = np.repeat(coef_all[s:e][:, :, None] / np.maximum(found, 1)[:, :, None], k, axis=2)
        z += data.index_sum(r, idx.reshape(e - s, -1), c.reshape(e - s, -1))
    return z / rows.size


class RampDiff:
    """The ramp ``diff`` (:func:`ramp_diff`) as the ``diff`` data of the Relief family's paths:
    ``n``, ``d``, ``tie_tolerance``, ``distance_chunks``, ``index_sum`` (ReliefF's neighbours) and
    ``coef_sum`` (SURF's radius pairs) as :class:`knnweights.engine._kernels_mixed.DiffData` has them,
    compiled (:mod:`knnweights.engine._kernels_ramp`: every sum in a fixed order, the same bits on any CPU
    and in any number of threads); ``pair_columns`` gives the same differences to the p-values' pair
    kernels.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Samples (complete).
    t_eq, t_diff : float
        The ramp's thresholds.
    disc : ndarray of bool, shape (n_features,) or None
        The discrete features (0/1 mismatch); ``None``: none.
    """

    def __init__(self, X, t_eq, t_diff, disc):
        self.Z = np.ascontiguousarray(range_normalize(np.asarray(X, dtype=np.float64)))
        self.n, self.d = self.Z.shape
        self.t_eq, self.t_diff = t_eq, t_diff
        self.disc = np.zeros(self.d, bool) if disc is None else np.ascontiguousarray(disc, dtype=np.bool_)
        self._ZT = None  # the transposed copy of the compiled distances, made on their first use

    def tie_tolerance(self, w=None):
        """The engine's tie rule (:func:`knnweights.engine.neighbors.tie_tolerance`) for ramp distances.

        A ramp term is at most 1 and carries the rounding of the normalised difference magnified by
        ``1 / (t_diff - t_eq)``; the rule's bound on data whose every entry is that factor (at
        least 1) covers each computed distance's rounding, so that distances equal in exact
        arithmetic (mirrored pairs) are found equal on every CPU.

        Parameters
        ----------
        w : ndarray of shape (n_features,) or None, default=None
            The weights of ``distance_chunks(w=w)``; ``None``: unweighted.

        Returns
        -------
        ndarray of shape (n_samples,)
            The per-sample tolerances.
        """
        scale = np.full((1, self.d), max(1.0, 1.0 / (self.t_diff - self.t_eq)))
        if w is not None:
            scale = scale * np.abs(np.asarray(w, dtype=np.float64))
        return np.full(self.n, tie_tolerance(scale, "manhattan")[0])

    def distance_chunks(self, rows=None, w=None, working_memory=None, n_arrays=1):
        """``(s, e, D)``: the ramp distances ``sum_f w_f diff_f(i, j)`` (``w`` ``None``: unweighted) of the rows
        ``s:e`` (of ``rows``, all by default) to every sample (:func:`knnweights.engine.neighbors.
        ramp_distance_chunks`: compiled, each distance summed in feature order)."""
        rows = np.arange(self.n) if rows is None else np.asarray(rows, dtype=np.int64)
        if self._ZT is None:
            self._ZT = np.ascontiguousarray(self.Z.T)
        yield from ramp_distance_chunks(self._ZT, rows, self.t_eq, self.t_diff, self.disc, w, working_memory,
                                        n_arrays)

    def coef_sum(self, rows, P):
        """``sum_r sum_j P[r, j] diff(rows[r], j)`` (shape ``(d,)``) for a dense coefficient block (SURF's
        radius pairs): compiled, each row's sum over ``j`` in order, then the rows summed."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        out = np.empty((rows.size, self.d))
        ramp_kernels.ramp_coef_rows(self.Z, rows, np.ascontiguousarray(P, dtype=np.float64), *self._ramp_args(), out)
        return out.sum(axis=0)

    def _ramp_args(self):
        return float(self.t_eq), float(self.t_diff) - float(self.t_eq), self.disc

    def pair_columns(self):
        """The pair kernels' form of this ``diff`` (:mod:`knnweights.engine._kernels_pairs`): ``(E, ecol, plain,
        ramp_lo, ramp_width)``, each feature's pair difference the sum over its columns ``c`` of
        ``min(1, max(0, (|E[i, c] - E[j, c]| - ramp_lo[c]) / ramp_width[c]))``.

        Continuous features are the range-normalised columns of the distances and margins, with ``(t_eq,
        t_diff - t_eq)``; a discrete feature is its levels' expanded columns (:func:`~knnweights.engine.
        _kernels_mixed.build_mixed` of those same columns), with ``(0, 1)``, under which their terms keep the
        0/1 mismatch.

        Returns
        -------
        E : ndarray of shape (n_samples, n_columns)
            The columns.
        ecol : ndarray of int64, shape (n_columns,)
            The feature of each column.
        plain : bool
            One column per feature (``ecol`` the identity).
        ramp_lo, ramp_width : ndarray of shape (n_columns,)
            Each column's ``t_eq`` and ``t_diff - t_eq``.
        """
        if self.disc.any():
            M = _kernels_mixed.build_mixed(self.Z, np.zeros(self.n, np.int64), 1, self.disc, normalize=False)
            E, ecol, plain = M.E, M.ecol, False
            cont = ~self.disc[ecol]
        else:
            E, ecol, plain = self.Z, np.arange(self.d, dtype=np.int64), True
            cont = np.ones(self.d, bool)
        lo = np.where(cont, self.t_eq, 0.0)
        width = np.where(cont, self.t_diff - self.t_eq, 1.0)
        return np.ascontiguousarray(E, dtype=np.float64), np.ascontiguousarray(ecol, dtype=np.int64), plain, lo, width

    def index_sum(self, rows, idx, coef):
        """``sum_r sum_t coef[r, t] diff(rows[r], idx[r, t])`` (``idx < 0``: left out): compiled, each row's sum
        in the order of ``t``, then the rows summed."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        out = np.empty((rows.size, self.d))
        ramp_kernels.ramp_index_rows(self.Z, rows, idx, np.ascontiguousarray(coef, dtype=np.float64),
                                     *self._ramp_args(), out)
        return out.sum(axis=0)
