"""Is a feature's weight larger than chance?  P-values for feature weights.

* :class:`PairMoments`: the pair statistics behind the Relief family's ``pvalues_``: STIR's
  pseudo t-test for class labels (Le, Urbanowicz, Moore & McKinney, "STatistical Inference
  Relief (STIR) feature selection", Bioinformatics 35(8), 2019) and the NPDR-style regression
  of neighbour-pair differences for a continuous target (Le, Dawkins & McKinney,
  "Nearest-neighbor Projected-Distance Regression (NPDR) for detecting network interactions
  with adjustments for multiple tests and confounding", Bioinformatics 36(9), 2020).
* :func:`bh_qvalues`: Benjamini-Hochberg (1995) adjusted p-values (q-values).
* :func:`permutation_pvalues`: a permutation test for any weighter.
"""

import numpy as np
import scipy.sparse
from scipy import stats
from sklearn.base import clone
from sklearn.utils import Bunch

from .engine import _kernels, _kernels_mixed

__all__ = ["PairMoments", "bh_qvalues", "permutation_pvalues", "univariate_tests"]


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values: ``q_(i) = min_{j >= i} p_(j) m / j``, capped at 1.

    A feature with ``q <= alpha`` is a discovery of the step-up procedure at false
    discovery rate ``alpha`` (Benjamini & Hochberg, JRSS B 57, 1995).

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


class PairMoments:
    """Sums over neighbour pairs ``(i, j)`` for a per-feature test of ``diff_A(i, j)`` against ``g_ij``.

    With ``a = diff(A, x_i, x_j)`` (Relief's ``diff``: range-normalised absolute difference,
    0/1 on a discrete feature) and a pair outcome ``g``, the statistic is the slope of the
    least-squares regression of ``a`` on ``g`` over the ``P`` pairs,
    ``b = sum (g - gbar)(a - abar) / sum (g - gbar)^2``, tested one-sided (``b > 0``):

    * Class labels, ``g = 1`` for a miss pair and 0 for a hit pair: ``b = mean_M - mean_H``,
      the Relief weight of the pairs (ReliefF's with equal hit and miss counts): STIR
      (Le et al. 2019).
    * A continuous target, ``g = |y_i - y_j| / (max y - min y)``: NPDR's regression of
      pair differences (Le et al. 2020).

    Two standard errors (``method``):

    * ``"pseudo-t"``: the published one, pairs taken as independent: the ordinary
      least-squares ``t = r sqrt((P - 2) / (1 - r^2))`` on ``P - 2`` degrees of freedom
      (``r`` the pair correlation).  For classes this is STIR's pseudo t statistic: the
      two-sample t with the pooled variance
      ``S_p^2 = ((|H| - 1) S_H^2 + (|M| - 1) S_M^2) / (|H| + |M| - 2)``,
      ``t = (mean_M - mean_H) / (S_p sqrt(1/|H| + 1/|M|))`` on ``|H| + |M| - 2`` degrees
      of freedom.
    * ``"dyadic"`` (the default of the estimators): the pairs share samples, so their
      terms are correlated and the independent-pair variance is too small (the p-values
      come out too small under the null, most for a continuous target and for the
      radius neighbourhoods: benchmarks/bench_regression_pvalues.md).  The dyadic
      cluster-robust variance (Fafchamps & Gubert 2007; Aronow, Samii & Assenova,
      Political Analysis 23, 2015) counts every two pairs that share a sample:
      ``V = sum_v U_v^2 - sum_p (1 + m_p) u_p^2`` with ``u_p = (g_p - gbar) e_p`` (``e_p``
      the residual of the pair), ``U_v`` the sum of ``u_p`` over the pairs that contain
      sample ``v`` and ``m_p = 1`` when the reverse of pair ``p`` is also a pair (its
      product, ``u_p^2`` as ``a`` and ``g`` are symmetric, is in two ``U_v``);
      ``z = sum (g - gbar)(a - abar) / sqrt(V)`` against the standard normal.

    A feature (or an outcome) without variation over the pairs gets ``p = 1``.  Memory:
    two ``(n, d)`` arrays (the per-sample sums).

    Parameters
    ----------
    data : PlainDiff or DiffData
        The ``diff`` data of the fit (:mod:`knnweights.engine._kernels_mixed`), without
        missing values.
    """

    def __init__(self, data):
        self.data = data
        n, d = data.n, data.d
        self.L = np.zeros((4, d))   # sum g^k a, k = 0..3
        self.Q = np.zeros((3, d))   # sum g^k a^2, k = 0..2
        self.G = np.zeros(5)        # sum g^k, k = 0..4
        # the same sums with a pair whose reverse is also a pair counted twice (the own-term weights)
        self.Lw, self.Qw, self.Gw = np.zeros((4, d)), np.zeros((3, d)), np.zeros(5)
        self.node_a = np.zeros((n, d))   # per sample v: sum of a over the pairs that contain v
        self.node_ga = np.zeros((n, d))  # ... of g a
        self.node_g = np.zeros((3, n))   # ... of g^k, k = 0..2
        if isinstance(data, _kernels_mixed.PlainDiff):
            self._E, self._F, self._disc = data.Z, None, None
        else:
            M = data.M
            self._E, self._disc = M.E, M.disc.astype(bool)
            self._F = np.zeros((M.E.shape[1], d))
            self._F[np.arange(M.E.shape[1]), M.ecol] = 1.0

    def _fold(self, out):
        """Per-sample sums on the expanded columns -> per feature."""
        out = np.asarray(out, dtype=np.float64)
        return out if self._F is None else out @ self._F

    def _add(self, run, c, cw, g, rows):
        """Accumulate the pair sums: ``run(coef, phi)`` gives the per-sample sums of ``coef phi(diff)``;
        ``c`` are the pair indicators, ``cw`` the own-term weights (2 for a mutual pair), ``g`` the outcomes."""
        for weights, L, Q, G in ((c, self.L, self.Q, self.G), (cw, self.Lw, self.Qw, self.Gw)):
            l1 = [self._fold(run(weights * g**k, _kernels.L1)) for k in range(4)]
            for k in range(4):
                L[k] += l1[k].sum(axis=0)
            for k in range(3):
                q = self._fold(run(weights * g**k, _kernels.L2SQ)).sum(axis=0)
                if self._disc is not None:  # a discrete diff is 0/1: diff^2 = diff
                    q[self._disc] = l1[k].sum(axis=0)[self._disc]
                Q[k] += q
            G += [(weights * g**k).sum() for k in range(5)]
            if weights is c:
                np.add.at(self.node_a, rows, l1[0])
                np.add.at(self.node_ga, rows, l1[1])

    def add_index(self, data, rows, idx, valid, g):
        """Add the pairs ``(rows[r], idx[r, t])`` where ``valid[r, t]``, with outcomes ``g[r, t]``."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        c = np.asarray(valid, dtype=np.float64)
        g = np.where(valid, g, 0.0)
        E = self._E
        A = np.ascontiguousarray(E[rows])

        def run(ix, coef, phi, Arows):
            out = np.empty_like(Arows)
            _kernels.index_phi_rows(Arows, E, ix, np.ascontiguousarray(coef, dtype=E.dtype), phi, out)
            return out

        keep = c.ravel() > 0
        src = np.repeat(rows, idx.shape[1])[keep]
        dst = idx.ravel()[keep]
        gp = g.ravel()[keep]
        # a pair (i, j) whose reverse (j, i) is also a pair: its own term counts twice
        S = scipy.sparse.csr_matrix((np.ones(src.size), (src, dst)), shape=(self.data.n, self.data.n))
        S.sum_duplicates()
        mutual = np.zeros(c.size)
        mutual[np.flatnonzero(keep)] = np.asarray(S[dst, src]).ravel() > 0
        self._add(lambda coef, phi: run(idx, coef, phi, A), c, c * (1.0 + mutual.reshape(c.shape)), g, rows)
        # the same pairs seen from their second sample j: reversed neighbour lists, padded with -1
        order = np.argsort(dst, kind="stable")
        src, dst, gp = src[order], dst[order], gp[order]
        nodes, start, counts = np.unique(dst, return_index=True, return_counts=True)
        width = int(counts.max()) if counts.size else 0
        slot = np.arange(dst.size) - np.repeat(start, counts)
        pos = np.repeat(np.arange(nodes.size), counts)
        ridx = np.full((nodes.size, width), -1, np.int64)
        rg = np.zeros((nodes.size, width))
        ridx[pos, slot] = src
        rg[pos, slot] = gp
        rc = (ridx >= 0).astype(np.float64)
        B = np.ascontiguousarray(E[nodes])
        np.add.at(self.node_a, nodes, self._fold(run(ridx, rc, _kernels.L1, B)))
        np.add.at(self.node_ga, nodes, self._fold(run(ridx, rc * rg, _kernels.L1, B)))
        for k in range(3):
            np.add.at(self.node_g[k], rows, (c * g**k).sum(axis=1))
            np.add.at(self.node_g[k], nodes, (rc * rg**k).sum(axis=1))

    def add_dense(self, data, rows, mask, G, mask_t=None):
        """Add the pairs ``(rows[r], j)`` where ``mask[r, j]``, with outcomes ``G[r, j]`` (symmetric in
        the pair); ``mask_t[r, j]`` says whether ``(j, rows[r])`` is a pair (default: ``mask``)."""
        from .engine.neighbors import _coef_phi_rows

        rows = np.ascontiguousarray(rows, dtype=np.int64)
        E = self._E
        A = np.ascontiguousarray(E[rows])
        c = np.asarray(mask, dtype=np.float64)
        G = np.where(mask, G, 0.0)

        def run(P, phi):
            return _coef_phi_rows(A, E, np.ascontiguousarray(P, dtype=E.dtype), phi)

        ct = c if mask_t is None else np.asarray(mask_t, dtype=np.float64)
        self._add(run, c, c * (1.0 + ct), G, rows)
        Gt = np.where(ct > 0, G if mask_t is None else np.asarray(G), 0.0)
        self.node_a[rows] += self._fold(run(ct, _kernels.L1))
        self.node_ga[rows] += self._fold(run(ct * Gt, _kernels.L1))
        for k in range(3):
            self.node_g[k, rows] += (c * G**k).sum(axis=1) + (ct * Gt**k).sum(axis=1)

    @property
    def n_pairs(self):
        return float(self.G[0])

    def _centred(self):
        P = self.G[0]
        gbar = self.G[1] / P
        abar = self.L[0] / P
        sgg = self.G[2] - P * gbar**2
        saa = self.Q[0] - P * abar**2
        sag = self.L[1] - P * abar * gbar
        return P, gbar, abar, sgg, saa, sag

    def statistics(self, method="dyadic"):
        """``(stat, df, ok)``: per-feature t (``"pseudo-t"``, ``df = P - 2``) or z (``"dyadic"``,
        ``df = inf``) statistics; ``ok`` is False where a feature or the outcome does not vary."""
        P, gbar, abar, sgg, saa, sag = self._centred()
        if P - 2.0 < 1:
            raise ValueError(f"too few neighbour pairs ({int(P)}) for a p-value")
        ok = (saa > 1e-12 * np.maximum(self.Q[0], 1e-300)) & (sgg > 1e-12 * max(self.G[2], 1e-300))
        stat = np.zeros_like(saa)
        if method == "pseudo-t":
            df = P - 2.0
            r = np.zeros_like(saa)
            r[ok] = sag[ok] / np.sqrt(saa[ok] * sgg)
            r = np.clip(r, -1.0, 1.0)
            stat[ok] = r[ok] * np.sqrt(df / np.maximum(1.0 - r[ok] ** 2, 1e-300))
            return stat, df, ok
        if method != "dyadic":
            raise ValueError(f"method must be 'dyadic' or 'pseudo-t', got {method!r}")
        b = np.where(ok, sag / np.where(ok, sgg, 1.0), 0.0)
        # U_v = sum_{p contains v} (g_p - gbar)(a_p - abar - b (g_p - gbar))
        n0, n1, n2 = self.node_g
        h1 = n1 - gbar * n0                       # sum (g - gbar)
        h2 = n2 - 2 * gbar * n1 + gbar**2 * n0    # sum (g - gbar)^2
        U = (self.node_ga - gbar * self.node_a) - abar[None, :] * h1[:, None] - b[None, :] * h2[:, None]
        # sum_p u_p^2 = sum h^2 a^2 - 2 sum a (abar h^2 + b h^3) + sum h^2 (abar + b h)^2, h = g - gbar
        L, Q, Gs = self.Lw, self.Qw, self.Gw
        ha2 = Q[2] - 2 * gbar * Q[1] + gbar**2 * Q[0]
        h2a = L[2] - 2 * gbar * L[1] + gbar**2 * L[0]
        h3a = L[3] - 3 * gbar * L[2] + 3 * gbar**2 * L[1] - gbar**3 * L[0]
        H2 = Gs[2] - 2 * gbar * Gs[1] + gbar**2 * Gs[0]
        H3 = Gs[3] - 3 * gbar * Gs[2] + 3 * gbar**2 * Gs[1] - gbar**3 * Gs[0]
        H4 = Gs[4] - 4 * gbar * Gs[3] + 6 * gbar**2 * Gs[2] - 4 * gbar**3 * Gs[1] + gbar**4 * Gs[0]
        own = ha2 - 2 * (abar * h2a + b * h3a) + (abar**2 * H2 + 2 * abar * b * H3 + b**2 * H4)
        V = np.einsum("vd,vd->d", U, U) - own
        ok &= V > 0
        stat[ok] = sag[ok] / np.sqrt(V[ok])
        return stat, np.inf, ok

    def pvalues(self, method="dyadic"):
        """One-sided p-values ``P(T >= stat)``; 1 for a feature without variation over the pairs."""
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
    y : array-like of shape (n_samples,)
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
    Bunch with ``pvalues``, ``qvalues``, ``observed`` (the statistic on the real labels),
    ``null`` (``(B, n_features)``, the permutation statistics) and ``n_permutations``.

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
        from .reproduce._progress import Progress

        bar = Progress(B, label=f"permutations ({type(weighter).__name__})")
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

    Returns
    -------
    dict name -> (statistic, pvalues), each of shape (n_features,)
    """
    X = np.asarray(X, dtype=np.float64)
    out = {}
    varying = np.ptp(X, axis=0) > 0
    with np.errstate(all="ignore"):
        if continuous:
            y = np.asarray(y, dtype=np.float64)
            for name, ranks in (("pearson", False), ("spearman", True)):
                A = stats.rankdata(X, axis=0) if ranks else X
                b = stats.rankdata(y) if ranks else y
                Ac, bc = A - A.mean(axis=0), b - b.mean()
                r = (Ac * bc[:, None]).sum(axis=0) / np.sqrt((Ac**2).sum(axis=0) * (bc**2).sum())
                r = np.clip(np.where(varying, r, 0.0), -1.0, 1.0)
                df = X.shape[0] - 2
                t = r * np.sqrt(df / np.maximum(1.0 - r * r, 1e-300))
                out[name] = (r, np.where(varying, 2 * stats.t.sf(np.abs(t), df), 1.0))
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
