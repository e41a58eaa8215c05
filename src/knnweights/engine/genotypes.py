"""Relief's ``diff`` on byte matrices (genotypes), in feature blocks, on one machine or a dask cluster.

A genotype matrix ``X`` of dtype ``uint8`` or ``int8`` (values ``0..15``, usually 0/1/2;
unknown: a negative ``int8``, such as bed-reader's -127, the ``uint8`` value 255, or the
mask of a ``numpy.ma.MaskedArray``) goes through the Relief family without a float copy.
Relief's distances and margin sums are sums over features, so everything runs on
*feature blocks* of a few thousand columns: each block is read as bytes, encoded
(:mod:`knnweights.engine._kernels_bytes`: every pair's ``diff`` summed over the block is an
integer ``/ S``), and gives

- a block of the pairwise distances, ``int32`` and exact (a popcount over bit planes),
  plus, where values are missing, the float terms of Kononenko's unknown-value ``diff``;
- the block's features' margin sums for given neighbour coefficients (counts per
  coefficient group, exact, times the coefficient).

The distances of all blocks are added (integers: the order does not matter), the
neighbourhoods chosen from them by the usual Relief code, and the margins of each block
are its own features' scores.  Memory: the ``n x n`` (or ``block x n``) distances and one
encoded feature block, never a float copy of ``X``.

Where the blocks run is the configuration's (:func:`knnweights.engine.set_config`):
``n_jobs`` threads for the compiled kernels, or ``scheduler`` (a ``dask.distributed``
address): then contiguous feature ranges are tasks on the cluster's workers, each worker
holding (or, for a PLINK ``.bed`` file, reading) its own columns; the partial distances
come back and are added, the coefficients go out, the scores come back.  Integer
distances make the cluster's result the same as one process's (with missing values the
unknown-value terms are float sums, equal to rounding).
"""

import math

import numba
import numpy as np

from ..exceptions import BytePathTooWide
from ..io import BedSource
from ..utils import fill_docstring
from . import _kernels_bytes as kb
from ._config import get_config
from ._dask import FeatureRanges
from ._docs import data_doc
from ._kernels import TIE_ULPS, mirror_lower
from ._kernels_mixed import discrete_mask, missing_lists
from .neighbors import _rows_per_chunk

__all__ = ["GenotypeMatrix", "ByteDiff", "is_byte_input"]

#: distinct neighbour coefficients per row counted exactly (Relief: hits plus one per miss class)
_MAX_GROUPS = 8
#: the most bit planes (largest encoded value) the byte path takes; above, the float path
_MAX_PLANES = 16
#: bytes of one encoded feature block (n x block columns), the unit of work and of a dask task's loop
_BLOCK_BYTES = 16 * 2**20


def is_byte_input(X):
    """Whether ``X`` is a 2-d ``uint8`` / ``int8`` array (masked or not) or a :class:`BedSource`.

    Parameters
    ----------
    X : object
        A weighter's input.

    Returns
    -------
    bool
        ``X`` takes the byte path.
    """
    if isinstance(X, (BedSource, GenotypeMatrix)):
        return True
    return isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in (np.uint8, np.int8)


def _raw_block(X, f0, f1):
    """Columns ``f0:f1`` of ``X`` as C-ordered ``uint8`` with ``MISSING`` for an unknown value."""
    if isinstance(X, BedSource):
        blk = X.read(f0, f1)
    else:
        blk = np.ascontiguousarray(np.ma.getdata(X)[:, f0:f1])
    if blk.dtype == np.int8:
        neg = blk < 0
        blk = blk.view(np.uint8)
        if neg.any():  # a new array: the block may be the caller's own (all columns, C-ordered)
            blk = np.where(neg, np.uint8(kb.MISSING), blk)
    mask = np.ma.getmask(X) if isinstance(X, np.ma.MaskedArray) else np.ma.nomask
    if mask is not np.ma.nomask:
        blk = np.array(blk, copy=True)
        blk[np.asarray(mask)[:, f0:f1]] = kb.MISSING
    return blk


def _block_ranges(d, n, block_bytes=None):
    step = int(min(d, max(256, (block_bytes or _BLOCK_BYTES) // max(n, 1))))
    return [(f0, min(d, f0 + step)) for f0 in range(0, d, step)]


# -- per-range work (module level: a dask task) ------------------------------------------------------------------------
def _stats_task(src, f0, f1):
    out = []
    for a, b in _block_ranges(f1 - f0, src.shape[0]):
        raw = _raw_block(src, f0 + a, f0 + b)
        B = b - a
        vmin, vmax = np.empty(B, np.uint8), np.empty(B, np.uint8)
        present, nmiss, bad = np.empty(B, np.int64), np.empty(B, np.int64), np.empty(B, np.bool_)
        kb.column_stats(raw, vmin, vmax, present, nmiss, bad)
        out.append((vmin, vmax, present, nmiss, bad))
    return [np.concatenate(x) for x in zip(*out, strict=True)]


class _Params:
    """Per-feature encoding of a range of features (small arrays, sent to the tasks)."""

    def __init__(self, vmin, mult, disc, ncols, level, scale, has_missing, S, planes, normalize):
        self.vmin, self.mult, self.disc, self.ncols, self.level = vmin, mult, disc, ncols, level
        self.scale, self.has_missing, self.S, self.planes, self.normalize = scale, has_missing, S, planes, normalize

    def part(self, a, b):
        return _Params(self.vmin[a:b], self.mult[a:b], self.disc[a:b], self.ncols[a:b], self.level[a:b],
                       self.scale[a:b], self.has_missing[a:b], self.S, self.planes, self.normalize)


def _encode(raw, prm):
    """The encoding ``E`` of a raw block and the feature (local index) of each of its columns."""
    col_start = np.concatenate([[0], np.cumsum(prm.ncols)]).astype(np.int64)
    E = np.empty((raw.shape[0], int(col_start[-1])), np.uint8)
    kb.encode(raw, prm.vmin, prm.mult, prm.disc, col_start, prm.level, prm.S // 2, E)
    return E, np.repeat(np.arange(prm.ncols.size), prm.ncols)


def _missing_tables(raw, prm, codes, n_classes):
    """``Acorr`` (B, K, 16) and ``T2`` (B, K, K): Relief's unknown-value ``diff`` (Kononenko 1994,
    the class-conditional value frequencies) minus what the encoding adds for the same pair."""
    B = raw.shape[1]
    K = n_classes
    H = np.empty((K, B, kb.MAX_VALUE + 2), np.int64)
    kb.class_histogram(raw, codes, K, H)
    cnt = H[:, :, : kb.MAX_VALUE + 1].astype(np.float64)
    tot = cnt.sum(axis=2, keepdims=True)
    marg = cnt.sum(axis=0)
    mtot = marg.sum(axis=1, keepdims=True)
    marg = np.where(mtot > 0, marg / np.where(mtot > 0, mtot, 1.0), 0.0)
    Pv = np.where(tot > 0, cnt / np.where(tot > 0, tot, 1.0), marg[None])  # (K, B, V)
    Pv = Pv.transpose(1, 0, 2)  # (B, K, V)
    v = np.arange(kb.MAX_VALUE + 1, dtype=np.float64)
    disc = prm.disc.astype(bool)
    absd = np.abs(v[:, None] - v[None, :])  # (V, V)
    # continuous: E|a - V| s and E|V1 - V2| s; discrete: 1 - P(a | c) and 1 - sum_v P(v | c1) P(v | c2)
    cont_A = np.einsum("bkv,av->bka", Pv, absd) * prm.scale[:, None, None]
    cont_T = np.einsum("bkv,blu,vu->bkl", Pv, Pv, absd) * prm.scale[:, None, None]
    disc_A = 1.0 - Pv
    disc_T = 1.0 - np.einsum("bkv,blv->bkl", Pv, Pv)
    A = np.where(disc[:, None, None], disc_A, cont_A)
    T2 = np.where(disc[:, None, None], disc_T, cont_T)
    # what the encoding adds for (known a, unknown): continuous (a - vmin) s, discrete 1/2
    enc = np.where(disc[:, None], 0.5, (v[None, :] - prm.vmin[:, None]) * prm.scale[:, None])
    A = A - enc[:, None, :]
    known_any = mtot[:, 0] > 0
    A[~known_any] = 0.0
    T2[~known_any] = 0.0
    return np.ascontiguousarray(A), np.ascontiguousarray(T2)


def _missing_lists(raw):
    return missing_lists(raw == kb.MISSING)


def _value_levels(pres):
    """From the ``present`` bit masks: each value's rank among its feature's known values (``(d, 16)``,
    0 for an absent value) and the number of known values per feature; one pass per value, O(d) memory."""
    pres = np.asarray(pres, dtype=np.int64)
    level = np.zeros((pres.size, kb.MAX_VALUE + 1), np.int8)
    below = np.zeros(pres.size, np.int64)
    for v in range(kb.MAX_VALUE + 1):
        bit = (pres >> v) & 1
        level[:, v] = np.where(bit > 0, below, 0)
        below += bit
    return level, below


def _distance_task(src, f0, f1, prm, codes, n_classes, rows, w):
    """Partial distances of features ``f0:f1``: ``(int32 sums of the encoding, float terms or None)``.

    ``rows=None``: all pairs (upper triangle only); ``w``: weighted (float64 result, no int part)."""
    n = src.shape[0]
    sym = rows is None
    nr = n if sym else rows.size
    Dint = None if w is not None else np.zeros((nr, n), np.int32)
    Df = np.zeros((nr, n)) if (w is not None or prm.has_missing.any()) else None
    for a, b in _block_ranges(f1 - f0, n):
        raw = _raw_block(src, f0 + a, f0 + b)
        p = prm.part(a, b)
        E, ecol = _encode(raw, p)
        if w is not None:
            wb = np.ascontiguousarray(w[a:b], dtype=np.float64)
            EA = E if sym else np.ascontiguousarray(E[rows])
            kb.l1_add_weighted(EA, E, wb[ecol] / p.S, Df)
        else:
            W = (E.shape[1] + 63) // 64
            packed = np.empty((n, p.planes * W), np.uint64)
            kb.pack_planes(E, p.planes, packed)
            if sym:
                kb.hamming_add_sym(packed, Dint)
            else:
                kb.hamming_add(np.ascontiguousarray(packed[rows]), packed, Dint)
        if p.has_missing.any():
            A, T2 = _missing_tables(raw, p, codes, n_classes)
            mptr, mind = _missing_lists(raw)
            wf = np.ones(b - a) if w is None else np.ascontiguousarray(w[a:b], dtype=np.float64)
            kb.missing_distance_add(raw, np.arange(n) if sym else rows, codes, mptr, mind, A, T2, wf, Df)
    return Dint, Df


def _margin_task(src, f0, f1, prm, codes, n_classes, rows, P, idx, coef):
    """The margin sums ``sum_r sum_j c_rj diff_f(rows[r], j)`` of features ``f0:f1``: dense
    coefficients ``P`` (rows x n) or listed neighbours ``idx`` with ``coef``."""
    n = src.shape[0]
    z = np.zeros(f1 - f0)
    n_chunks = 16
    for a, b in _block_ranges(f1 - f0, n):
        raw = _raw_block(src, f0 + a, f0 + b)
        p = prm.part(a, b)
        E, ecol = _encode(raw, p)
        ncol = E.shape[1]
        if P is not None:
            U = np.empty((n, (p.planes + 1) // 2 * ncol), np.uint8)
            kb.nibble_planes(E, p.planes, U)
            out = np.zeros(((rows.size + kb._MR - 1) // kb._MR, p.planes * ncol))
            kb.coef_margin(U, ncol, p.planes, rows, P, _MAX_GROUPS, out)
            col = out.sum(axis=0).reshape(p.planes, ncol).sum(axis=0)
        else:
            U = np.empty((n, p.planes * ncol), np.uint8)
            kb.unpack_planes(E, p.planes, U)
            out = np.empty((n_chunks, ncol))
            kb.index_margin(U, rows, idx, coef, p.planes, _MAX_GROUPS, n_chunks, out)
            col = out.sum(axis=0)
        zb = np.bincount(ecol, weights=col, minlength=b - a) / p.S
        if p.has_missing.any():
            A, T2 = _missing_tables(raw, p, codes, n_classes)
            mptr, mind = _missing_lists(raw)
            corr = np.empty((n_chunks, b - a))
            if P is not None and idx is None:
                idx, coef = _as_lists(P)
            kb.missing_index_add(raw, rows, codes, mptr, mind, A, T2, idx, coef, n_chunks, corr)
            zb += corr.sum(axis=0)
        z[a:b] = zb
    return z


def _as_lists(P):
    """The non-zero entries of each row of ``P`` as padded lists ``(idx, coef)`` (``-1``: none)."""
    r, c = np.nonzero(P)
    counts = np.bincount(r, minlength=P.shape[0])
    idx = np.full((P.shape[0], max(1, int(counts.max(initial=0)))), -1, np.int64)
    coef = np.zeros(idx.shape)
    pos = np.arange(r.size) - np.repeat(np.cumsum(counts) - counts, counts)
    idx[r, pos] = c
    coef[r, pos] = P[r, c]
    return idx, coef


# -- where the ranges run ----------------------------------------------------------------------------------------------
class _Local:
    """The ranges one after the other here; the compiled kernels use ``n_jobs`` threads."""

    def __init__(self, X, n_jobs):
        self.X = X
        self.n_jobs = n_jobs
        d = X.shape[1]
        self.ranges = [(0, d)]

    def map(self, fn, args_for):
        """``[fn(X, f0, f1, *args_for(f0, f1))]`` over the ranges, here, on ``n_jobs`` threads."""
        old = numba.get_num_threads()
        if self.n_jobs is not None:
            nj = numba.config.NUMBA_NUM_THREADS if self.n_jobs < 0 else min(self.n_jobs, numba.config.NUMBA_NUM_THREADS)
            numba.set_num_threads(max(1, nj))
        try:
            return [fn(self.X, f0, f1, *args_for(f0, f1)) for f0, f1 in self.ranges]
        finally:
            numba.set_num_threads(old)

    def close(self):
        """Nothing to release."""


def _executor(X):
    cfg = get_config()
    if cfg.get("scheduler"):
        return FeatureRanges(X, cfg["scheduler"], scatter=not isinstance(X, BedSource))
    return _Local(X, cfg.get("n_jobs"))


# -- the input and its diff --------------------------------------------------------------------------------------------
#: ``{byte_diff_params}``: what :class:`ByteDiff` is built from besides the bytes (the parameters of
#: ``GenotypeMatrix.diff_data``); ``{margin_sum}``: the Returns section of its margin sums
_byte_diff_doc = fill_docstring(byte_diff_params="""codes : ndarray of shape (n_samples,)
    Integer class codes.
disc : ndarray of shape (n_features,), bool
    The discrete features.
normalize : bool
    Divide each continuous feature's differences by its range.
divisor : int or None, default=None
    A fixed divisor of every continuous feature's differences instead (allele sharing's 2);
    ``normalize`` must then be False.""", margin_sum="""Returns
-------
ndarray of shape (n_features,)
    Each feature's margin sum.""")


class GenotypeMatrix:
    """A byte matrix handed to a Relief-family ``_fit`` (``X`` itself is never converted).

    Its feature blocks run where the configuration says (:func:`knnweights.engine.get_config`:
    ``n_jobs`` threads here, or a dask ``scheduler``).

    Parameters
    ----------
    X : ndarray of uint8 or int8, numpy.ma.MaskedArray, BedSource or GenotypeMatrix
        The genotypes (unknown: a negative ``int8``, the ``uint8`` value 255 or masked).
    """

    def __init__(self, X):
        if isinstance(X, GenotypeMatrix):
            X = X.X
        self.X = X
        self.shape = tuple(X.shape)
        self.dtype = X.dtype
        self._exec = None
        self._stats = None

    @property
    def executor(self):
        """Where the feature ranges run (opened at first use; :meth:`close` releases it)."""
        if self._exec is None:
            self._exec = _executor(self.X)
        return self._exec

    def close(self):
        """Release the executor (a dask client)."""
        if self._exec is not None:
            self._exec.close()
            self._exec = None

    def stats(self):
        """One pass over the bytes (cached): per feature the min / max of the known values, the values
        present, the unknown count and whether a value above 15 occurs.

        Returns
        -------
        dict
            ``vmin``, ``vmax`` (uint8), ``present`` (a bit mask of the values), ``n_missing`` and
            ``bad`` (bool), each of shape ``(n_features,)``.
        """
        if self._stats is None:
            parts = self.executor.map(_stats_task, lambda f0, f1: ())
            vmin, vmax, present, nmiss, bad = (np.concatenate(x) for x in zip(*parts, strict=True))
            self._stats = {"vmin": vmin, "vmax": vmax, "present": present, "n_missing": nmiss, "bad": bad}
        return self._stats

    def levels(self):
        """Distinct known values per feature.

        Returns
        -------
        ndarray of shape (n_features,), int64
            The count of each feature's distinct known values.
        """
        return _value_levels(self.stats()["present"])[1]

    def constant(self):
        """Features without two distinct known values.

        Returns
        -------
        ndarray of shape (n_features,), bool
            Constant, or entirely unknown.
        """
        s = self.stats()
        return (s["vmax"] <= s["vmin"]) & (s["n_missing"] == 0) | (s["n_missing"] == self.shape[0])

    def discrete_mask(self, discrete_features, discrete_limit):
        """The discrete features, as :func:`knnweights.engine._kernels_mixed.discrete_mask` chooses them.

        Parameters
        ----------
        discrete_features : "auto", bool or array-like
            ``"auto"``: at most ``discrete_limit`` distinct known values; else as the float path.
        discrete_limit : int
            The most distinct values of a discrete feature.

        Returns
        -------
        ndarray of shape (n_features,), bool
            The discrete features.
        """
        d = self.shape[1]
        if isinstance(discrete_features, str) and discrete_features == "auto":
            return self.levels() <= discrete_limit
        return discrete_mask(np.empty((0, d)), discrete_features, discrete_limit)

    @_byte_diff_doc
    def diff_data(self, codes, disc, normalize, divisor=None):
        """Relief's ``diff`` on these bytes.

        Parameters
        ----------
        {byte_diff_params}

        Returns
        -------
        ByteDiff
            Distances and margin sums, in feature blocks.
        """
        return ByteDiff(self, codes, disc, normalize, divisor)


@_byte_diff_doc
class ByteDiff:
    """Relief's ``diff`` on a :class:`GenotypeMatrix`: the interface of
    :class:`knnweights.engine._kernels_mixed.DiffData` (``distance_chunks``, ``coef_sum``,
    ``index_sum``), computed in feature blocks (module docstring).

    ``fold_pairs = False``: the margin kernels count the neighbours of a row by their
    coefficient (one per class), which folded pair coefficients would not allow.

    Parameters
    ----------
    G : GenotypeMatrix
        The bytes.
    {byte_diff_params}
    """

    fold_pairs = False

    def __init__(self, G, codes, disc, normalize, divisor=None):
        self.G = G
        self.n, self.d = G.shape
        self.codes = np.ascontiguousarray(codes, dtype=np.int64)
        self.K = int(self.codes.max()) + 1
        st = G.stats()
        disc = np.asarray(disc, dtype=bool)
        known = st["n_missing"] < self.n
        vmin = np.where(known, st["vmin"], 0).astype(np.uint8)
        r = np.where(known, st["vmax"].astype(np.int64) - vmin, 0)
        cont = ~disc
        ranges = np.unique(r[cont & (r > 0)])
        if normalize and divisor is not None:
            raise ValueError("ByteDiff: a fixed divisor replaces the range normalisation; pass normalize=False.")
        div = 1 if divisor is None else int(divisor)
        base = div
        if normalize:
            for v in ranges:
                base = math.lcm(base, int(v))
        S = math.lcm(base, 2) if disc.any() else base
        if normalize:
            mult = np.where(r > 0, S // np.maximum(r, 1), 0)
            scale = np.where(r > 0, 1.0 / np.maximum(r, 1), 1.0)
            cmax = np.where(r > 0, S, 0)
        else:  # |a - b| / div: the multiplier S / div, a whole number as S is a multiple of div
            mult = np.full(self.d, S // div)
            scale = np.full(self.d, 1.0 / div)
            cmax = r * (S // div)
        planes = int(max(1, S if disc.any() else 0, cmax[cont].max(initial=0)))
        if planes > _MAX_PLANES:
            raise BytePathTooWide(planes)
        level, L = _value_levels(st["present"])
        ncols = np.ones(self.d, np.int64)
        ncols[disc] = np.maximum(1, (L[disc] + 1) // 2)
        self.discrete = disc
        # the largest diff of each feature (discrete: 1; continuous: 1 range-normalised, else range / div)
        self._top = np.where(disc, 1.0, np.where(r > 0, 1.0, 0.0) if normalize else r / float(div))
        self.prm = _Params(vmin, mult.astype(np.uint8), disc.astype(np.uint8), ncols, level, scale.astype(np.float64),
                           st["n_missing"] > 0, int(S), planes, normalize)

    @property
    def has_missing(self):
        """Whether any feature has an unknown value (its encoding alone is then not the ``diff``)."""
        return bool(self.prm.has_missing.any())

    def float_blocks(self, width):
        """Yield ``(f0, f1, E, ecol)``: features ``f0:f1`` (at most ``width``) as float columns whose
        L1 differences, summed per feature, are Relief's ``diff`` between known values.

        ``E`` is the block's byte encoding (module docstring) over ``S`` (shape ``(n, columns)``:
        one column per continuous feature, the cross-polytope columns of a discrete one), ``ecol``
        the feature (``0 .. f1 - f0 - 1``) of each column: the layout of
        :class:`~knnweights.engine._kernels_mixed.MixedData`'s ``E`` / ``ecol`` for one block, so
        that the pair kernels (:mod:`knnweights.engine._kernels_pairs`) read it without a float
        copy of the whole matrix.  The bytes are read here in the engine's feature blocks.

        Parameters
        ----------
        width : int
            Features per yielded block.

        Yields
        ------
        f0, f1 : int
            The block's features.
        E : ndarray of shape (n_samples, n_columns), float64
            The encoded block over ``S``.
        ecol : ndarray of shape (n_columns,), int64
            The feature of each column, relative to ``f0``.
        """
        width = max(1, int(width))
        for a, b in _block_ranges(self.d, self.n):
            raw = _raw_block(self.G.X, a, b)
            for f0 in range(a, b, width):
                f1 = min(b, f0 + width)
                E, ecol = _encode(np.ascontiguousarray(raw[:, f0 - a:f1 - a]), self.prm.part(f0, f1))
                yield f0, f1, E / float(self.prm.S), np.ascontiguousarray(ecol, dtype=np.int64)

    def _args(self, *extra):
        prm = self.prm
        return lambda f0, f1: (prm.part(f0, f1), self.codes, self.K) + extra

    def tie_tolerance(self, w=None):
        """Per-row tolerances of the engine's tie rule for ``distance_chunks(w=w)``.

        Parameters
        ----------
        w : ndarray of shape (n_features,), default=None
            Feature weights (``None``: unweighted).

        Returns
        -------
        ndarray of shape (n_samples,)
            Zero where the distances are exact (integer sums, unweighted, no unknown value), else
            a bound from each feature's largest diff.
        """
        if w is None and not self.prm.has_missing.any():
            return np.zeros(self.n)
        wv = np.ones(self.d) if w is None else np.asarray(w, dtype=np.float64)
        return np.full(self.n, TIE_ULPS * (self.d + 8) * float(np.sum(wv * self._top)))

    @data_doc
    def distance_chunks(self, rows=None, w=None, working_memory=None, n_arrays=1):
        """Yield ``(start, stop, D)``: row blocks of ``d_w(i, j) = sum_f w_f diff_f(i, j)``.

        Parameters
        ----------
        rows : ndarray of int, default=None
            The query samples (``None``: all, the whole symmetric matrix when it fits).
        w : ndarray of shape (n_features,), default=None
            Feature weights (``None``: unweighted, exact integer sums).
        {block_params}

        Yields
        ------
        start, stop : int
            Positions ``start:stop`` in ``rows``.
        D : ndarray of shape (stop - start, n_samples), float64
            The distances (0 from a query to itself).
        """
        every = rows is None
        rows = np.arange(self.n) if every else np.ascontiguousarray(rows, dtype=np.int64)
        step = _rows_per_chunk(self.n, 8, working_memory, n_arrays)
        wv = None if w is None else np.asarray(w, dtype=np.float64)
        if every and step >= self.n:
            yield 0, self.n, self._distances(None, wv)
            return
        for s in range(0, rows.size, step):
            e = min(rows.size, s + step)
            yield s, e, self._distances(np.ascontiguousarray(rows[s:e]), wv)

    def _distances(self, rows, w):
        parts = self.G.executor.map(_distance_task, self._args(rows, w))
        D = None
        if w is None:
            Dint = parts[0][0].astype(np.int64) if len(parts) > 1 else parts[0][0]
            for p in parts[1:]:
                Dint += p[0]
            if rows is None:
                mirror_lower(Dint)
            D = Dint / float(self.prm.S)
        for p in parts:
            if p[1] is not None:
                D = p[1].copy() if D is None else D + p[1]
        if rows is not None:
            D[np.arange(rows.size), rows] = 0.0
        return D

    @_byte_diff_doc
    def coef_sum(self, rows, P):
        """``sum_r sum_j P[r, j] diff(rows[r], j)`` for a dense coefficient block.

        Parameters
        ----------
        rows : ndarray of int
            The query samples.
        P : ndarray of shape (len(rows), n_samples)
            The coefficients (zero on the sample itself).

        {margin_sum}
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        P = np.ascontiguousarray(P, dtype=np.float64)
        return np.concatenate(self.G.executor.map(_margin_task, self._args(rows, P, None, None)))

    @_byte_diff_doc
    def index_sum(self, rows, idx, coef):
        """``sum_r sum_t coef[r, t] diff(rows[r], idx[r, t])`` for listed neighbours.

        Parameters
        ----------
        rows : ndarray of int
            The query samples.
        idx : ndarray of shape (len(rows), k)
            Each query's neighbours (``-1``: none).
        coef : ndarray of shape (len(rows), k)
            Their coefficients.

        {margin_sum}
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        return np.concatenate(self.G.executor.map(_margin_task, self._args(rows, None, idx, coef)))
