"""Is a feature's weight larger than chance?  P-values for feature weights.

* :class:`PairMoments`: the pair statistics behind the Relief family's ``pvalues_``: STIR's
  hit / miss contrast for class labels (Le, Urbanowicz, Moore & McKinney, "STatistical
  Inference Relief (STIR) feature selection", Bioinformatics 35(8), 2019) and the NPDR-style
  regression of neighbour-pair differences for a continuous target (Le, Dawkins & McKinney,
  "Nearest-neighbor Projected-Distance Regression (NPDR) for detecting network interactions
  with adjustments for multiple tests and confounding", Bioinformatics 36(9), 2020), tested
  against their outcome-permutation (Mantel) mean and variance, or by the published
  pseudo t-test.
* :func:`bh_qvalues`: Benjamini-Hochberg (1995) adjusted p-values (q-values).
* :func:`permutation_pvalues`: a permutation test for any weighter.
* :func:`univariate_tests`: the univariate baselines (t / ANOVA F, Pearson / Spearman).
"""

import numpy as np
import scipy.sparse
from scipy import stats
from sklearn.base import clone
from sklearn.utils import Bunch

from .engine import kernels as _kernels
from .engine import mixed_kernels as _kernels_mixed

__all__ = ["PairMoments", "bh_qvalues", "diff_matrix_moments", "permutation_pvalues", "univariate_tests"]


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values: ``q_(i) = min_{j >= i} p_(j) m / j``, capped at 1.

    A feature with ``q <= alpha`` is a discovery of the step-up procedure at false
    discovery rate ``alpha`` (Benjamini & Hochberg, JRSS B 57, 1995).

    Parameters
    ----------
    pvalues : array-like
        P-values in ``[0, 1]``, one per test (flattened); the adjustment is for all of
        them together.

    Returns
    -------
    qvalues : ndarray of shape (n_tests,)
        Adjusted p-values in the order of ``pvalues``; ``q >= p``.

    Examples
    --------
    >>> bh_qvalues([0.01, 0.04, 0.03, 0.5]).round(3).tolist()
    [0.04, 0.053, 0.053, 0.5]
    """
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    if p.size == 0:
        return p.copy()
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must be finite and within [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


def _falling(n, k):
    out = 1.0
    for i in range(k):
        out *= n - i
    return out


def diff_matrix_moments(V, disc):
    """Per column of ``V``, the sums over all ordered pairs ``i != j`` of the difference matrix ``D_ij``:
    ``(S_D, S_D2, S_D3) = (sum D_ij, sum D_ij^2, sum_i (sum_j D_ij)^2)``, in ``O(n log n)`` a column.

    ``D_ij = |v_i - v_j|`` (row sums from the sorted values and their prefix sums), or
    ``[v_i != v_j]`` for the columns flagged in ``disc`` (from the level counts).

    These are the ``D`` sums of the Mantel variance in :class:`PairMoments`.

    Parameters
    ----------
    V : array-like of shape (n_samples, n_columns)
        Values of each column (a feature, or the outcome as one column).
    disc : ndarray of bool, shape (n_columns,)
        True for a discrete column, whose pair difference is 0/1 (unequal levels).

    Returns
    -------
    s_d : ndarray of shape (n_columns,)
        ``sum_{i != j} D_ij``.
    s_d2 : ndarray of shape (n_columns,)
        ``sum_{i != j} D_ij^2``.
    s_d3 : ndarray of shape (n_columns,)
        ``sum_i (sum_j D_ij)^2``.
    """
    V = np.asarray(V, dtype=np.float64)
    n, d = V.shape
    s_a, s_a2, s_a3 = np.zeros(d), np.zeros(d), np.zeros(d)
    cont = np.flatnonzero(~disc)
    if cont.size:
        S = np.sort(V[:, cont], axis=0)
        before = np.cumsum(S, axis=0) - S  # sum of the smaller values
        total = S.sum(axis=0)
        k = np.arange(n)[:, None]
        r = S * k - before + (total - before - S) - S * (n - 1 - k)
        s_a[cont], s_a3[cont] = r.sum(axis=0), (r * r).sum(axis=0)
        s_a2[cont] = 2.0 * n * (V[:, cont] ** 2).sum(axis=0) - 2.0 * V[:, cont].sum(axis=0) ** 2
    for f in np.flatnonzero(disc):
        m = np.unique(V[:, f], return_counts=True)[1].astype(np.float64)
        s_a[f] = s_a2[f] = float((m * (n - m)).sum())
        s_a3[f] = float((m * (n - m) ** 2).sum())
    return s_a, s_a2, s_a3


class PairMoments:
    """Sums over neighbour pairs ``(i, j)`` for a per-feature test of ``diff_A(i, j)`` against ``g_ij``.

    With ``a = diff(A, x_i, x_j)`` (Relief's ``diff``: range-normalised absolute difference,
    0/1 on a discrete feature) and a pair outcome ``g``, the statistic is the covariance of
    ``a`` and ``g`` over the ``P`` neighbour pairs, ``S = sum_p (g_p - gbar) a_p`` (the slope
    of ``a`` on ``g`` times ``sum (g - gbar)^2``), tested one-sided (``S > 0``):

    * Class labels, ``g = 1`` for a miss pair and 0 for a hit pair: the slope is
      ``mean_M - mean_H``, the Relief weight of the pairs (ReliefF's with equal hit and miss
      counts): STIR (Le et al. 2019).
    * A continuous target, ``g = |y_i - y_j| / (max y - min y)``: NPDR's regression of pair
      differences (Le et al. 2020).

    Two null distributions (``method``):

    * ``"pseudo-t"``: the published one, pairs taken as independent: the ordinary
      least-squares ``t = r sqrt((P - 2) / (1 - r^2))`` on ``P - 2`` degrees of freedom
      (``r`` the pair correlation).  For classes this is STIR's pseudo t statistic: the
      two-sample t with the pooled variance
      ``S_p^2 = ((|H| - 1) S_H^2 + (|M| - 1) S_M^2) / (|H| + |M| - 2)``,
      ``t = (mean_M - mean_H) / (S_p sqrt(1/|H| + 1/|M|))`` on ``|H| + |M| - 2`` degrees
      of freedom.  The pairs share samples, so this variance is too small and the p-values
      come out too small under the null (most for a continuous target and for the radius
      neighbourhoods: benchmarks/bench_regression_pvalues.md).
    * ``"mantel"`` (the default of the estimators): the outcome permuted over the samples,
      the neighbour pairs held fixed.  ``S = sum_{i != j} C_ij D_ij`` with ``D`` the outcome's
      difference matrix (``D_ij = g`` of the pair ``(i, j)``: ``[y_i != y_j]`` or
      ``|y_i - y_j| / (max y - min y)``) and ``C_ij = (W_ij + W_ji) / 2``, ``W_ij`` the
      ``a - abar`` of pair ``(i, j)`` (0 for a non-pair): a Mantel (1967) statistic, whose
      exact permutation mean is 0 (``S_C = 0``) and whose exact permutation variance, with
      ``S_X = sum X_ij``, ``S_X2 = sum X_ij^2``, ``S_X3 = sum_i (sum_j X_ij)^2`` and
      ``n^(k) = n (n - 1) ... (n - k + 1)``, is::

          Var S = 2 S_C2 S_D2 / n^(2) + 4 (S_C3 - S_C2)(S_D3 - S_D2) / n^(3)
                  + (S_C^2 - 4 S_C3 + 2 S_C2)(S_D^2 - 4 S_D3 + 2 S_D2) / n^(4)

      (ordered pairs of pairs sharing two, one or no sample: the dependence between pairs
      that share a sample is in the second term); ``z = S / sqrt(Var S)`` against the
      standard normal.  Exact in mean and variance for neighbourhoods found without ``y``
      (RReliefF's ``k`` nearest, the SURF / MultiSURF radius); for ReliefF / Relief on
      classes, whose hits and misses are chosen by the labels, the pairs are held at the
      observed ones (an approximation that ignores the hit / miss balance of each sample;
      its calibration is measured in benchmarks/bench_regression_pvalues.md).  The ``D`` sums take ``O(n log n)``
      (:func:`diff_matrix_moments`).

    A feature (or an outcome) without variation gets ``p = 1``.

    Parameters
    ----------
    data : PlainDiff or DiffData
        The ``diff`` data of the fit (:mod:`knnweights.engine._kernels_mixed`), without
        missing values.
    """

    def __init__(self, data):
        self.data = data
        n, d = data.n, data.d
        self.L = np.zeros((2, d))   # sum g^k a, k = 0, 1
        self.Q = np.zeros(d)        # sum a^2
        self.G = np.zeros(3)        # sum g^k, k = 0..2
        self.Gw = np.zeros(3)       # the same with a pair whose reverse is also a pair counted twice
        self.node_g = np.zeros((2, n))  # per sample: sum of g^k over the pairs that contain it
        self.node_a = np.zeros((n, d))  # per sample: sum of a over the pairs that contain it
        self.Lw0, self.Qw = np.zeros(d), np.zeros(d)  # sum and sum of squares of a, a mutual pair twice
        self.outcome = None
        if isinstance(data, _kernels_mixed.PlainDiff):
            self._E, self._F, self._disc = data.Z, None, None
        else:
            M = data.M
            self._E, self._disc = M.E, M.disc.astype(bool)
            self._F = np.zeros((M.E.shape[1], d))
            self._F[np.arange(M.E.shape[1]), M.ecol] = 1.0

    def _fold(self, out):
        """Sums on the expanded columns -> per feature."""
        out = np.asarray(out, dtype=np.float64).sum(axis=0)
        return out if self._F is None else out @ self._F

    def _fold_rows(self, out):
        out = np.asarray(out, dtype=np.float64)
        return out if self._F is None else out @ self._F

    def set_outcome(self, y, kind):
        """Test against permutations of the outcome ``y`` instead of the feature (pairs that do not depend on ``y``).

        Needed before :meth:`statistics` with ``method="mantel"``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            The outcome of every sample of the fit (class codes, or the continuous target).
        kind : {"classes", "continuous"}
            ``"classes"``: ``g = [y_i != y_j]``; ``"continuous"``:
            ``g = |y_i - y_j| / (max y - min y)``.
        """
        y = np.asarray(y, dtype=np.float64)
        if kind == "continuous":
            y = y / np.ptp(y)
        self.outcome = diff_matrix_moments(y[:, None], np.array([kind == "classes"]))

    def _add(self, run, c, mutual, g, rows, col_nodes, col_sums):
        """``run(coef, phi)``: per-sample sums of ``coef phi(diff)`` over the rows' pairs; ``col_sums[k]``:
        the sums of ``g^k`` over the same pairs seen from their second sample, ``col_nodes``."""
        per_row = run(c, _kernels.L1)
        l0 = self._fold(per_row)
        self.L[0] += l0
        np.add.at(self.node_a, rows, self._fold_rows(per_row))
        self.L[1] += self._fold(run(c * g, _kernels.L1))
        cw = c * (1.0 + mutual)
        lw = self._fold(run(cw, _kernels.L1))
        self.Lw0 += lw
        for w, l1, acc in ((c, l0, self.Q), (cw, lw, self.Qw)):
            q = self._fold(run(w, _kernels.L2SQ))
            if self._disc is not None:  # a discrete diff is 0/1: diff^2 = diff
                q[self._disc] = l1[self._disc]
            acc += q
        for k in range(3):
            self.G[k] += float((c * g**k).sum())
            self.Gw[k] += float((c * (1.0 + mutual) * g**k).sum())
        for k in range(2):
            np.add.at(self.node_g[k], rows, (c * g**k).sum(axis=1))
            np.add.at(self.node_g[k], col_nodes, col_sums[k])

    def add_index(self, data, rows, idx, valid, g):
        """Add the pairs ``(rows[r], idx[r, t])`` where ``valid[r, t]``, with outcomes ``g[r, t]``.

        For neighbour lists (``k`` nearest hits / misses); :meth:`add_dense` takes
        neighbourhoods given as masks.

        Parameters
        ----------
        data : PlainDiff or DiffData
            The fit's ``diff`` data; not read here (the values come from the ``data``
            given to the constructor), accepted so both ``add_*`` methods take the same
            leading arguments.
        rows : array-like of int, shape (n_rows,)
            First sample of the pairs of each row.
        idx : array-like of int, shape (n_rows, k)
            Second samples: the neighbours of ``rows[r]``.
        valid : array-like of bool, shape (n_rows, k)
            Which entries of ``idx`` are pairs (lists may be padded).
        g : array-like of shape (n_rows, k)
            Outcome ``g`` of each pair (ignored where not ``valid``).
        """
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        c = np.asarray(valid, dtype=np.float64)
        g = np.where(valid, g, 0.0)
        E = self._E
        A = np.ascontiguousarray(E[rows])

        def run(coef, phi):
            out = np.empty_like(A)
            _kernels.index_phi_rows(A, E, idx, np.ascontiguousarray(coef, dtype=E.dtype), phi, out)
            return out

        keep = c.ravel() > 0
        src = np.repeat(rows, idx.shape[1])[keep]
        dst = idx.ravel()[keep]
        # a pair (i, j) whose reverse (j, i) is also a pair
        S = scipy.sparse.csr_matrix((np.ones(src.size), (src, dst)), shape=(self.data.n, self.data.n))
        S.sum_duplicates()
        mutual = np.zeros(c.size)
        mutual[np.flatnonzero(keep)] = np.asarray(S[dst, src]).ravel() > 0
        gk = g.ravel()[keep]
        self._add(run, c, mutual.reshape(c.shape), g, rows, dst, [np.ones(dst.size), gk])
        # the pairs seen from their second sample: reversed neighbour lists, padded with -1
        order = np.argsort(dst, kind="stable")
        s_src, s_dst = src[order], dst[order]
        nodes, start, counts = np.unique(s_dst, return_index=True, return_counts=True)
        if nodes.size:
            ridx = np.full((nodes.size, int(counts.max())), -1, np.int64)
            ridx[np.repeat(np.arange(nodes.size), counts), np.arange(s_dst.size) - np.repeat(start, counts)] = s_src
            B = np.ascontiguousarray(E[nodes])
            out = np.empty_like(B)
            _kernels.index_phi_rows(B, E, ridx, (ridx >= 0).astype(E.dtype), _kernels.L1, out)
            np.add.at(self.node_a, nodes, self._fold_rows(out))

    def add_dense(self, data, rows, mask, G, mask_t=None):
        """Add the pairs ``(rows[r], j)`` where ``mask[r, j]``, with outcomes ``G[r, j]`` (symmetric in the pair).

        For neighbourhoods given as masks over all samples (the radius neighbourhoods of
        SURF / MultiSURF, one distance block of rows at a time).

        Parameters
        ----------
        data : PlainDiff or DiffData
            The fit's ``diff`` data; not read here (the values come from the ``data``
            given to the constructor), accepted so both ``add_*`` methods take the same
            leading arguments.
        rows : array-like of int, shape (n_rows,)
            First sample of the pairs of each row of ``mask``.
        mask : array-like of bool, shape (n_rows, n_samples)
            ``mask[r, j]``: ``(rows[r], j)`` is a pair.
        G : array-like of shape (n_rows, n_samples)
            Outcome ``g`` of each pair (ignored where not a pair).
        mask_t : array-like of bool, shape (n_rows, n_samples), optional
            ``mask_t[r, j]``: ``(j, rows[r])`` is a pair; default ``mask`` (symmetric
            neighbourhoods).
        """
        from .engine.neighbors import coef_phi_rows as _coef_phi_rows

        rows = np.ascontiguousarray(rows, dtype=np.int64)
        E = self._E
        A = np.ascontiguousarray(E[rows])
        c = np.asarray(mask, dtype=np.float64)
        Graw = np.asarray(G, dtype=np.float64)
        G = np.where(mask, Graw, 0.0)
        ct = c if mask_t is None else np.asarray(mask_t, dtype=np.float64)

        def run(P, phi):
            return _coef_phi_rows(A, E, np.ascontiguousarray(P, dtype=E.dtype), phi)

        # the pairs (j, rows[r]) seen from their second sample rows[r] (g is symmetric in the pair)
        Gt = np.where(ct > 0, G if mask_t is None else np.asarray(Graw), 0.0)
        self._add(run, c, ct, G, rows, rows, [ct.sum(axis=1), (ct * Gt).sum(axis=1)])
        self.node_a[rows] += self._fold_rows(run(ct, _kernels.L1))

    @property
    def n_pairs(self):
        """Number of neighbour pairs added so far (float)."""
        return float(self.G[0])

    def statistics(self, method="mantel"):
        """``(stat, df, ok)``: per-feature statistics and their reference distribution.

        Parameters
        ----------
        method : {"mantel", "pseudo-t"}, default="mantel"
            Null distribution (see the class description): the outcome-permutation
            moments (needs :meth:`set_outcome`), or the published pseudo t-test.

        Returns
        -------
        stat : ndarray of shape (n_features,)
            The statistic of each feature (0 where not ``ok``).
        df : float
            Student's t degrees of freedom of the reference, ``inf`` for the standard normal.
        ok : ndarray of bool, shape (n_features,)
            False where a feature or the outcome does not vary (no test).
        """
        P = self.G[0]
        if P - 2.0 < 1:
            raise ValueError(f"too few neighbour pairs ({int(P)}) for a p-value")
        gbar = self.G[1] / P
        abar = self.L[0] / P
        sgg = self.G[2] - P * gbar**2
        saa = self.Q - P * abar**2
        sag = self.L[1] - gbar * self.L[0]
        ok = (saa > 1e-12 * np.maximum(self.Q, 1e-300)) & (sgg > 1e-12 * max(self.G[2], 1e-300))
        stat = np.zeros_like(saa)
        if method == "pseudo-t":
            df = P - 2.0
            r = np.zeros_like(saa)
            r[ok] = np.clip(sag[ok] / np.sqrt(saa[ok] * sgg), -1.0, 1.0)
            stat[ok] = r[ok] * np.sqrt(df / np.maximum(1.0 - r[ok] ** 2, 1e-300))
            return stat, df, ok
        if method != "mantel":
            raise ValueError(f"method must be 'mantel' or 'pseudo-t', got {method!r}")
        n = float(self.data.n)
        if n < 4:
            raise ValueError(f"too few samples ({int(n)}) for a p-value")
        if self.outcome is None:
            raise ValueError("method='mantel' needs the outcome: call set_outcome(y, kind) first")
        # C, the pairs' matrix of each feature: C_ij = (W_ij + W_ji) / 2, W_ij = a - abar on pair (i, j)
        # (S_C = 0); S_C2 = (sum w^2 + sum_mutual w^2) / 2; its row sums (W 1 + W^T 1) / 2
        s_c2 = 0.5 * (self.Qw - 2 * abar * self.Lw0 + abar**2 * self.Gw[0])
        c_rows = 0.5 * (self.node_a - self.node_g[0][:, None] * abar[None, :])
        s_c3 = np.einsum("vd,vd->d", c_rows, c_rows)
        s_d, s_d2, s_d3 = (float(v[0]) for v in self.outcome)
        var = (2 * s_d2 * s_c2 / _falling(n, 2) + 4 * (s_d3 - s_d2) * (s_c3 - s_c2) / _falling(n, 3)
               + (s_d**2 - 4 * s_d3 + 2 * s_d2) * (-4 * s_c3 + 2 * s_c2) / _falling(n, 4))
        ok &= var > 0
        stat[ok] = sag[ok] / np.sqrt(var[ok])
        return stat, np.inf, ok

    def pvalues(self, method="mantel"):
        """One-sided p-values ``P(T >= stat)``; 1 for a feature without variation.

        Parameters
        ----------
        method : {"mantel", "pseudo-t"}, default="mantel"
            Null distribution (see the class description): the outcome-permutation
            moments (needs :meth:`set_outcome`), or the published pseudo t-test.

        Returns
        -------
        pvalues : ndarray of shape (n_features,)
            Small where a feature differs more over the pairs of larger ``g`` (misses,
            or larger target differences) than chance gives.
        """
        stat, df, ok = self.statistics(method)
        p = stats.norm.sf(stat) if not np.isfinite(df) else stats.t.sf(stat, df)
        return np.where(ok, p, 1.0)


def _permuted_statistic(weighter, X, y, seed, attribute):
    perm = np.random.default_rng(seed).permutation(y.shape[0])
    est = clone(weighter).fit(X, y[perm])
    return np.asarray(getattr(est, attribute), dtype=np.float64)


def permutation_pvalues(weighter, X, y, n_permutations=199, random_state=None, n_jobs=None, attribute="scores_",
                        progress=False):
    """Permutation p-values of every feature's weight, for any weighter.

    The weighter is fitted on ``(X, y)`` and on ``n_permutations`` copies of ``X`` with the
    labels (or target values) permuted, which breaks any relation between features and
    outcome while keeping both marginal distributions.  With ``b_j`` the number of
    permutations whose statistic for feature ``j`` is at least the observed one, the
    p-value is ``(b_j + 1) / (B + 1)`` (never 0; exact-level under the null: Phipson &
    Smyth 2010), and the Benjamini-Hochberg q-values come beside them.

    Parameters
    ----------
    weighter : estimator
        Any knnweights weighter (unfitted; it is cloned).
    X : array-like of shape (n_samples, n_features)
        Samples; kept fixed in every refit.
    y : array-like of shape (n_samples,)
        Class labels or continuous target; permuted for the null refits.
    n_permutations : int, default=199
        ``B``; the smallest attainable p-value is ``1 / (B + 1)``.
    random_state : int, RandomState, Generator or None
        Seeds the permutations (one child seed each, so the result does not depend on
        ``n_jobs``).
    n_jobs : int or None
        Refits in parallel (joblib; any backend).
    attribute : str, default="scores_"
        The fitted statistic compared (signed scores; ``"feature_importances_"`` for the
        clipped weights).
    progress : bool, default=False
        A progress bar on stderr (refits done, time left).

    Returns
    -------
    result : Bunch
        ``pvalues`` and ``qvalues`` (shape ``(n_features,)``), ``observed`` (the statistic
        on the real labels), ``null`` (``(B, n_features)``, the permutation statistics)
        and ``n_permutations``.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import ReliefF, permutation_pvalues
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)); y = (X[:, 0] > 0).astype(int)
    >>> res = permutation_pvalues(ReliefF(n_neighbors=5), X, y, n_permutations=19, random_state=0)
    >>> bool(res.pvalues[0] == 0.05)
    True
    """
    from joblib import Parallel, delayed

    B = int(n_permutations)
    if B < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    if attribute not in ("scores_", "feature_importances_"):
        raise ValueError(f"attribute must be 'scores_' or 'feature_importances_', got {attribute!r}")
    y = np.asarray(y)
    if isinstance(random_state, np.random.RandomState):
        random_state = int(random_state.randint(0, 2**31 - 1))
    elif isinstance(random_state, np.random.Generator):
        random_state = int(random_state.integers(0, 2**31 - 1))
    seeds = np.random.SeedSequence(random_state).spawn(B)
    observed = np.asarray(getattr(clone(weighter).fit(X, y), attribute), dtype=np.float64)
    bar = None
    if progress:
        from .utils import progress_bar

        bar = progress_bar(B, label=f"permutations ({type(weighter).__name__})")
    null = np.empty((B, observed.size))
    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_permuted_statistic)(weighter, X, y, s, attribute) for s in seeds)
    for b, v in enumerate(results):
        null[b] = v
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    # a tolerance so that a refit equal to the observed fit up to float rounding counts as "at least"
    tol = 1e-12 * np.maximum(np.abs(observed), 1.0)
    exceed = (null >= observed[None, :] - tol[None, :]).sum(axis=0)
    p = (exceed + 1.0) / (B + 1.0)
    return Bunch(pvalues=p, qvalues=bh_qvalues(p), observed=observed, null=null, n_permutations=B)


def univariate_tests(X, y, continuous=False):
    """The univariate baselines beside the neighbour-based weights: one test per feature.

    Class labels: Welch's two-sample t-test (two classes, ``"t"``) or the one-way ANOVA F
    test (more, ``"F"``); a continuous target: Pearson's correlation ``"pearson"`` and
    Spearman's rank correlation ``"spearman"``.  Two-sided p-values; a constant feature
    gets statistic 0 and ``p = 1``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples (finite).
    y : array-like of shape (n_samples,)
        Class labels, or a continuous target with ``continuous=True``.
    continuous : bool, default=False
        Treat ``y`` as a continuous target (correlation tests) instead of classes.

    Returns
    -------
    tests : dict
        Test name -> ``(statistic, pvalues)``, each of shape (n_features,): ``"t"`` or
        ``"F"`` for classes, ``"pearson"`` and ``"spearman"`` (the statistic is the
        correlation) for a continuous target.
    """
    from .utils import check_finite_columns

    check_finite_columns(X)
    X = np.asarray(X, dtype=np.float64)
    out = {}
    varying = np.ptp(X, axis=0) > 0
    with np.errstate(all="ignore"):
        if continuous:
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)) or not np.ptp(y) > 0:
                raise ValueError("univariate_tests: the continuous target y must be finite and not constant.")
            for name, ranks in (("pearson", False), ("spearman", True)):
                A = stats.rankdata(X, axis=0) if ranks else X
                b = stats.rankdata(y) if ranks else y
                Ac, bc = A - A.mean(axis=0), b - b.mean()
                r = (Ac * bc[:, None]).sum(axis=0) / np.sqrt((Ac**2).sum(axis=0) * (bc**2).sum())
                ok = varying & np.isfinite(r)
                r = np.clip(np.where(ok, r, 0.0), -1.0, 1.0)
                df = X.shape[0] - 2
                t = r * np.sqrt(df / np.maximum(1.0 - r * r, 1e-300))
                out[name] = (r, np.where(ok, 2 * stats.t.sf(np.abs(t), df), 1.0))
            return out
        classes = np.unique(y)
        groups = [X[np.asarray(y) == c] for c in classes]
        if classes.size == 2:
            stat, p = stats.ttest_ind(groups[1], groups[0], equal_var=False)
            name = "t"
        else:
            stat, p = stats.f_oneway(*groups)
            name = "F"
    ok = varying & np.isfinite(stat) & np.isfinite(p)
    out[name] = (np.where(ok, stat, 0.0), np.where(ok, p, 1.0))
    return out
