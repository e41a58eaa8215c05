"""Is a feature's weight larger than chance?  P-values for feature weights.

* :class:`PairMoments`: the pair statistics behind the Relief family's ``pvalues_``: STIR's
  hit / miss contrast for class labels (Le, Urbanowicz, Moore & McKinney, "STatistical
  Inference Relief (STIR) feature selection", Bioinformatics 35(8), 2019) and the NPDR-style
  regression of neighbour-pair differences for a continuous target (Le, Dawkins & McKinney,
  "Nearest-neighbor Projected-Distance Regression (NPDR) for detecting network interactions
  with adjustments for multiple tests and confounding", Bioinformatics 36(9), 2020), referred
  to their outcome-permutation (Mantel) distribution through its exact first three moments,
  or to the published pseudo t-test.
* :func:`mantel_moments`, :func:`difference_sums`: those moments; :func:`quadratic_sf`: the
  reference curve.
* :func:`bh_qvalues`: Benjamini-Hochberg (1995) adjusted p-values (q-values).
* :func:`adjust_pvalues`: Benjamini-Hochberg, Bonferroni, Holm or Benjamini-Yekutieli adjusted p-values.
* :func:`permutation_pvalues`: a permutation test for any weighter.
* :func:`univariate_tests`: the univariate baselines (t / ANOVA F, Pearson / Spearman).
"""

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from sklearn.base import clone
from sklearn.utils import Bunch

from .utils import check_finite_columns, check_survival_target, progress_bar
from .weighters._relief_covariates import _sample_design, check_covariates
from .weighters._relief_pvalues import (
    PADJ_METHODS,
    PairMoments,
    adjust_pvalues,
    bh_qvalues,
    difference_sums,
    mantel_moments,
    quadratic_sf,
)
from .weighters._relief_survival import cox_score_test

__all__ = ["PairMoments", "adjust_pvalues", "bh_qvalues", "difference_sums", "mantel_moments", "permutation_pvalues",
           "quadratic_sf", "univariate_tests"]


def _permuted_statistic(weighter, X, y, seed, attribute):
    perm = np.random.default_rng(seed).permutation(y.shape[0])
    est = clone(weighter).fit(X, y[perm])
    return np.asarray(getattr(est, attribute), dtype=np.float64)


def permutation_pvalues(weighter, X, y, n_permutations=199, random_state=None, n_jobs=None, attribute="scores_",
                        progress=False, padj="bh"):
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
    padj : {"bh", "bonferroni", "holm", "by"}, default="bh"
        The adjustment of ``qvalues`` (:func:`adjust_pvalues`).

    Returns
    -------
    result : Bunch
        ``pvalues`` and ``qvalues`` (shape ``(n_features,)``; ``qvalues`` adjusted by ``padj``),
        ``observed`` (the statistic on the real labels), ``null`` (``(B, n_features)``, the permutation statistics)
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
    B = int(n_permutations)
    if B < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    if padj not in PADJ_METHODS:
        raise ValueError(f"padj must be one of {PADJ_METHODS}, got {padj!r}")
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
    return Bunch(pvalues=p, qvalues=adjust_pvalues(p, padj), observed=observed, null=null, n_permutations=B)


def _residual_basis(values, categorical, n):
    """An orthonormal basis of ``[1, covariates]`` (numeric linear, categorical as indicators)."""
    D = np.column_stack([np.ones(n), _sample_design(values, categorical)])
    U, sv, _ = np.linalg.svd(D, full_matrices=False)
    return U[:, sv > sv[0] * 1e-10]


def _residualise(Q, A):
    """``A`` minus its projection on the columns of the orthonormal ``Q``, and which columns of ``A``
    keep more than rounding of their centred size."""
    R = A - Q @ (Q.T @ A)
    centred = A - A.mean(axis=0)
    return R, np.einsum("ij,ij->j", R, R) > 1e-20 * np.maximum(np.einsum("ij,ij->j", centred, centred), 1e-300)


def _adjusted_tests(X, y, continuous, values, categorical):
    """:func:`univariate_tests` given covariates: the analysis of covariance, partial correlations."""
    n = X.shape[0]
    out = {}
    if continuous:
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)) or not np.ptp(y) > 0:
            raise ValueError("univariate_tests: the continuous target y must be finite and not constant.")
        for name, ranks in (("pearson_adj", False), ("spearman_adj", True)):
            A, b, v = X, y, values
            if ranks:  # Spearman's partial correlation: ranks of every numeric variable, indicators as they are
                A, b = stats.rankdata(X, axis=0), stats.rankdata(y)
                v = np.where(categorical, values, stats.rankdata(values, axis=0))
            Q = _residual_basis(v, categorical, n)
            Ra, ok = _residualise(Q, A)
            rb, b_ok = _residualise(Q, b[:, None])
            rb = rb[:, 0]
            with np.errstate(all="ignore"):
                r = (Ra.T @ rb) / np.sqrt(np.einsum("ij,ij->j", Ra, Ra) * (rb @ rb))
            ok &= bool(b_ok[0]) & np.isfinite(r)
            r = np.clip(np.where(ok, r, 0.0), -1.0, 1.0)
            df = n - Q.shape[1] - 1
            t = r * np.sqrt(df / np.maximum(1.0 - r * r, 1e-300))
            out[name] = (r, np.where(ok, 2 * stats.t.sf(np.abs(t), df), 1.0))
        return out
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    Q = _residual_basis(values, categorical, n)
    R, ok = _residualise(Q, X)
    D = (codes.ravel()[:, None] == np.arange(1, classes.size)[None, :]).astype(np.float64)
    Rd = D - Q @ (Q.T @ D)  # the classes beyond the covariates
    U, sv, _ = np.linalg.svd(Rd, full_matrices=False)
    if sv.size == 0 or not sv[0] > 1e-10 * np.sqrt(n):  # the covariates determine the classes: nothing to test
        return {"t_adj" if classes.size == 2 else "F_adj": (np.zeros(X.shape[1]), np.ones(X.shape[1]))}
    Q2 = U[:, sv > sv[0] * 1e-10]
    df1, df2 = Q2.shape[1], n - Q.shape[1] - Q2.shape[1]
    C = Q2.T @ R  # the features' coordinates along the classes' directions
    rss1 = np.maximum(np.einsum("ij,ij->j", R, R) - np.einsum("ij,ij->j", C, C), 0.0)
    with np.errstate(all="ignore"):
        if classes.size == 2 and df1 == 1:  # the signed t of the adjusted difference (second class minus first)
            sign = np.sign(float(Q2[:, 0] @ Rd[:, 0]))
            stat = sign * C[0] / np.sqrt(rss1 / df2)
            p = 2 * stats.t.sf(np.abs(stat), df2)
            name = "t_adj"
        else:
            stat = (np.einsum("ij,ij->j", C, C) / df1) / (rss1 / df2)
            p = stats.f.sf(stat, df1, df2)
            name = "F_adj"
    ok &= np.isfinite(stat) & np.isfinite(p)
    out[name] = (np.where(ok, stat, 0.0), np.where(ok, p, 1.0))
    return out


def univariate_tests(X, y, continuous=False, survival=False, covariates=None):
    """The univariate baselines beside the neighbour-based weights: one test per feature.

    Class labels: Welch's two-sample t-test (two classes, ``"t"``) or the one-way ANOVA F
    test (more, ``"F"``); a continuous target: Pearson's correlation ``"pearson"`` and
    Spearman's rank correlation ``"spearman"``; a survival outcome: the Cox score (log-rank)
    test ``"cox"`` (:func:`knnweights.weighters._relief_survival.cox_score_test`, Breslow's
    ties; the statistic is ``z``, positive when larger values go with a higher hazard).
    Two-sided p-values; a constant feature gets statistic 0 and ``p = 1``.

    With ``covariates`` each test is the same question asked given them (the keys end in
    ``"_adj"``): classes, the analysis of covariance (the linear model of the feature on the
    covariates and the classes, the classes' F test, ``"F_adj"``; for two classes its signed
    t, ``"t_adj"``, pooled variance); a continuous target, the partial correlations given the
    covariates (Pearson's, and Spearman's on the ranks of the feature, the target and the
    numeric covariates) with ``n - 2 - q`` degrees of freedom; a survival outcome, the Cox
    score test given the covariates (``"cox_adj"``).  A numeric covariate enters linearly, a
    categorical one as indicators; ``q`` is the rank of the covariates' columns.  A feature
    that the covariates explain gets statistic 0 and ``p = 1``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples (finite).
    y : array-like of shape (n_samples,)
        Class labels, or a continuous target with ``continuous=True``.
    continuous : bool, default=False
        Treat ``y`` as a continuous target (correlation tests) instead of classes.
    survival : bool, default=False
        ``y`` is a survival outcome (a structured array with fields ``event`` and ``time``).
    covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
        Adjust every test for these (numeric, or categorical as in
        :func:`knnweights.weighters._relief_covariates.check_covariates`).

    Returns
    -------
    tests : dict
        Test name -> ``(statistic, pvalues)``, each of shape (n_features,): ``"t"`` or
        ``"F"`` for classes, ``"pearson"`` and ``"spearman"`` (the statistic is the
        correlation) for a continuous target, ``"cox"`` for a survival outcome; with
        ``covariates`` the same names with ``"_adj"``.
    """
    check_finite_columns(X)
    X = np.asarray(X, dtype=np.float64)
    out = {}
    cov = None if covariates is None else check_covariates(covariates, X.shape[0], "univariate_tests")
    if survival:
        event, time = check_survival_target(np.asarray(y), "univariate_tests")
        if time.shape[0] != X.shape[0]:
            raise ValueError(f"univariate_tests: y has {time.shape[0]} samples, X {X.shape[0]}.")
        if cov is None:
            out["cox"] = cox_score_test(X, time, event)
        else:
            out["cox_adj"] = cox_score_test(X, time, event, _sample_design(*cov[:2]))
        return out
    if cov is not None:
        return _adjusted_tests(X, y, continuous, *cov[:2])
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
