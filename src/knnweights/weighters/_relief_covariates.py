"""Covariate-adjusted p-values of the Relief family (``fit(X, y, covariates=C)``).

The statistic is NPDR's covariate-adjusted pair regression (Le, Dawkins & McKinney,
"Nearest-neighbor Projected-Distance Regression (NPDR) for detecting network interactions with
adjustments for multiple tests and confounding", Bioinformatics 36(9), 2020): over the
neighbour pairs ``p = (i, j)`` of the fit (the same pairs as the unadjusted ``pvalues_``, found on
``X`` alone), the feature's pair difference ``a_p`` is regressed on the outcome's pair difference
``g_p`` and the covariates' pair differences ``z_pk`` (a numeric covariate ``|c_i - c_j|`` over its
range, a categorical one ``[c_i != c_j]``), and the outcome's coefficient is tested one-sided.
By Frisch-Waugh-Lovell that coefficient is ``S / sum_p r_g,p^2`` with

    S = sum_p r_a,p g_p,

``r_a`` (``r_g``) the residual of ``a`` (``g``) on ``[1, z]`` over the pairs: ``S`` is the
partial covariance of ``a`` and ``g`` given the covariate differences, and the test statistic.

Its null distribution (:func:`covariate_pvalues`) is not the outcome permutation of the
unadjusted p-values: when a covariate drives the outcome, permuting the outcome over the samples
breaks that link, and the conditional expectations of ``a`` and ``g`` given the covariates are
not linear in ``|c_i - c_j|`` (``E|dc + de|`` is curved near ``dc = 0``), so the residuals of a
feature that depends on the covariate only still covary with ``g``, and against the permutation
reference such a feature comes out "significant". The reference keeps the outcome's dependence
on the covariates and redraws the rest: the conditional randomisation test (Candes, Fan, Janson
& Lv, JRSS B 80, 2018, with the roles of the variables exchanged: the outcome is redrawn from
its law given the covariates, under the null that it does not depend on the features given them)
for class labels, and Freedman & Lane's (JBES 1, 1983) permutation of the outcome's residuals on
the covariates for a continuous outcome (Anderson & Legendre 1999 and Winkler et al. 2014 find
it the best calibrated of the permutation schemes with nuisance regressors). A survival
outcome's statistic reads its martingale residuals (those of the unadjusted fit) as a continuous
outcome, and its reference redraws the censored times from a Cox model on the covariates with
the conditional bootstrap's censoring (:func:`~._relief_survival.survival_draws`), each draw
read as its own residuals. Each redrawn outcome gives its ``S*`` for every feature with the
neighbour pairs held fixed, and the Monte Carlo p-value is Besag & Clifford's (1991) sequential
one: valid for any number of draws, and a feature far from significance stops after a few dozen
of the ``B = 999``. The redrawn outcomes reproduce the curvature of ``g`` in the covariate
differences, so the residual covariance of a confounded feature is in the reference too.

The null is "the outcome depends on the covariates only" (the unadjusted test's is "on
nothing"); the reference is exact when the outcome model is (a logistic regression on the
covariates; a linear one with exchangeable errors; Cox's proportional hazards with censoring
independent of the event time given the sample), up to the estimation of its parameters.
As without covariates, with signal in other features the pairs are tied to the outcome and a
noise feature's p-values err on the conservative side.
"""

import numbers
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from ..engine import pair_kernels as _kernels_pairs
from ._relief_survival import survival_draws

__all__ = ["N_RESAMPLES", "SEQUENTIAL_H", "check_covariates", "covariate_pvalues", "sequential_pvalue_update"]

#: the outcome redraws ``B`` of the covariate-adjusted p-values (smallest p-value ``1 / (B + 1)``)
N_RESAMPLES = 999

#: the most pair values (pairs x features, or pairs x draws) held in one array, 128 MiB of doubles
_PAIR_VALUES = 2**24

#: Besag & Clifford's ``h``: a feature stops drawing at its ``h``-th redraw with ``S* >= S``
SEQUENTIAL_H = 10


def check_covariates(covariates, n, name, X=None):
    """Validate ``covariates`` for ``n`` samples: ``(values, categorical, names)``.

    ``values`` is ``(n, c)`` float: a numeric column as it is, a categorical one (a pandas
    category, object, string or bool column, or a non-numeric array) as integer level codes;
    ``categorical`` marks the latter.  A ``ValueError`` names the fix for a wrong number of rows,
    a missing value, no columns, or a DataFrame whose index is not ``X``'s.

    Parameters
    ----------
    covariates : array-like or DataFrame of shape (n_samples, n_covariates)
        The covariates, one row per sample of ``X`` in the same order.
    n : int
        The number of samples of ``X``.
    name : str
        The estimator's name, for the messages.
    X : object, optional
        The data; when both it and ``covariates`` are DataFrames their indexes must agree.

    Returns
    -------
    values : ndarray of shape (n_samples, n_covariates)
        Numeric values or level codes.
    categorical : ndarray of bool of shape (n_covariates,)
        Which columns are categorical.
    names : list of str
        The column names (``c0, c1, ...`` for an array).
    """
    if isinstance(covariates, pd.Series):
        covariates = covariates.to_frame()
    if isinstance(covariates, pd.DataFrame):
        frame = covariates
        if isinstance(X, pd.DataFrame) and not frame.index.equals(X.index):
            raise ValueError(f"{name}.fit: the covariates' index differs from X's; pass covariates.loc[X.index] "
                             "(one row per sample of X, in X's order).")
    else:
        arr = np.asarray(covariates)
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1)
        if arr.ndim != 2:
            raise ValueError(f"{name}.fit: covariates must be 2-D (n_samples, n_covariates), got shape {arr.shape}.")
        frame = pd.DataFrame(arr, columns=[f"c{k}" for k in range(arr.shape[1])])
    if frame.shape[0] != n:
        raise ValueError(f"{name}.fit: covariates has {frame.shape[0]} rows but X has {n} samples; give one row "
                         "per sample of X, in the same order.")
    if frame.shape[1] == 0:
        raise ValueError(f"{name}.fit: covariates has no columns; leave covariates=None for unadjusted p-values.")
    values = np.empty((n, frame.shape[1]))
    categorical = np.zeros(frame.shape[1], dtype=bool)
    names = [str(c) for c in frame.columns]
    for k, col in enumerate(frame.columns):
        s = frame[col]
        if s.isna().any():
            raise ValueError(f"{name}.fit: covariate {names[k]!r} has {int(s.isna().sum())} missing value(s); "
                             "impute them, or drop those samples from X, y and covariates.")
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        if not numeric and s.dtype == object:  # an object column of numbers (e.g. from an object array)
            try:
                values[:, k] = s.to_numpy(dtype=np.float64)
                numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in s)
            except (TypeError, ValueError):
                numeric = False
        if numeric:
            values[:, k] = s.to_numpy(dtype=np.float64)
            if not np.all(np.isfinite(values[:, k])):
                raise ValueError(f"{name}.fit: covariate {names[k]!r} has non-finite values; impute or drop them.")
        else:
            values[:, k] = pd.factorize(s, sort=True)[0]
            categorical[k] = True
    return values, categorical, names


def _pair_design(values, categorical, src, dst):
    """``[1, z_1, ..., z_c]`` over the pairs: ``|c_i - c_j|`` over the range, or ``[c_i != c_j]``."""
    cols = [np.ones(src.size)]
    for k in range(values.shape[1]):
        v = values[:, k]
        if categorical[k]:
            cols.append((v[src] != v[dst]).astype(np.float64))
        else:
            span = float(np.ptp(v))
            cols.append(np.abs(v[src] - v[dst]) / (span if span > 0 else 1.0))
    return np.column_stack(cols)


def _orthonormal_basis(Z):
    """An orthonormal basis of the column space of ``Z`` (rank-revealing: SVD, relative cut ``1e-10``)."""
    U, s, _ = np.linalg.svd(Z, full_matrices=False)
    return np.ascontiguousarray(U[:, s > s[0] * 1e-10])


def _sample_design(values, categorical):
    """The covariates as regressors of the outcome model: numeric standardised, categorical one-hot
    (first level dropped)."""
    cols = []
    for k in range(values.shape[1]):
        v = values[:, k]
        if categorical[k]:
            levels = np.unique(v)
            cols.extend((v == lev).astype(np.float64) for lev in levels[1:])
        else:
            sd = float(v.std())
            if sd > 0:
                cols.append((v - v.mean()) / sd)
    return np.column_stack(cols) if cols else np.zeros((values.shape[0], 0))


def class_probabilities(outcome, W):
    """``(n, C)``: each sample's class probabilities given the covariates ``W``, the unpenalised multinomial
    logistic regression of the classes (columns in ``np.unique(outcome)``'s order; without covariates the
    class frequencies)."""
    n = outcome.shape[0]
    classes = np.unique(outcome)
    if W.shape[1] == 0:
        return np.tile(np.bincount(np.searchsorted(classes, outcome), minlength=classes.size) / n, (n, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(C=np.inf, max_iter=1000).fit(W, outcome)
    return model.predict_proba(W)


def _outcome_draws(outcome, kind, W, rng, n_draws):
    """``(n, n_draws)`` outcomes redrawn under the null, keeping their dependence on the covariates ``W``
    (classes as their numbers in ``np.unique(outcome)``).

    Classes: each sample's class drawn from :func:`class_probabilities`, independently (the
    conditional randomisation test).  Continuous: Freedman
    & Lane, ``yhat + e[perm]`` with ``yhat`` and ``e`` the least-squares fit and residuals on ``[1, W]``.
    """
    n = outcome.shape[0]
    if kind == "continuous":
        D = np.column_stack([np.ones(n), W])
        beta = np.linalg.lstsq(D, outcome, rcond=None)[0]
        fit = D @ beta
        resid = outcome - fit
        perms = np.argsort(rng.random((n, n_draws)), axis=0)
        return fit[:, None] + resid[perms]
    classes = np.unique(outcome)
    prob = class_probabilities(outcome, W)
    cum = np.cumsum(prob, axis=1)
    cum[:, -1] = 1.0
    u = rng.random((n, n_draws))
    pick = (u[:, :, None] > cum[:, None, :-1]).sum(axis=2)
    return pick.astype(np.int16 if classes.size < 2**15 else np.int64)  # class numbers: only [y_i != y_j] is used


def _pair_outcome(v, src, dst, continuous, span):
    """The outcome's pair differences: ``|v_i - v_j| / span`` or ``[v_i != v_j]`` (``v`` 1-D or 2-D)."""
    if continuous:
        return np.abs(v[src] - v[dst]) / span
    v = np.ascontiguousarray(v)  # a block of draws: whole rows gathered, compared straight into float64
    out = np.empty((src.size,) + v.shape[1:])
    np.not_equal(np.take(v, src, axis=0), np.take(v, dst, axis=0), out=out, casting="unsafe")
    return out


def _chunks(n_draws, cap):
    """Draw ranges ``[b0, b1)`` of doubling size (64, 128, ..., at most ``cap``): most features stop in the first."""
    b0, size = 0, min(64, cap)
    while b0 < n_draws:
        yield b0, min(n_draws, b0 + size)
        b0, size = b0 + size, min(2 * size, cap)


def sequential_pvalue_update(exceed, count, b0):
    """One chunk of Besag & Clifford's (1991) sequential p-value, for the features still drawing.

    ``exceed`` ``(n_active, b)``: whether draw ``b0 + t`` reached the observed statistic;
    ``count``: the exceedances before ``b0``.  Returns ``(count, stop_at)``: the updated counts and,
    per feature, the number ``l`` of draws at its ``H``-th exceedance (0 while it has fewer).
    """
    cum = count[:, None] + np.cumsum(exceed, axis=1)
    hit = cum >= SEQUENTIAL_H
    stop_at = np.where(hit.any(axis=1), b0 + np.argmax(hit, axis=1) + 1, 0)
    return cum[:, -1], stop_at


def covariate_pvalues(moments, outcome, kind, covariates, method="mantel", random_state=None,
                      n_resamples=N_RESAMPLES, survival=None):
    """Per-feature one-sided p-values of NPDR's covariate-adjusted pair regression.

    ``method="mantel"`` (the estimators' default): ``S = sum_p r_a,p g_p`` (module docstring)
    against outcomes redrawn given the covariates, in a fixed order, by Besag & Clifford's
    (Biometrika 78, 1991) sequential Monte Carlo p-value: a feature stops drawing at the ``l``-th
    draw, the ``H``-th (:data:`SEQUENTIAL_H`) with ``S* >= S``, and gets ``p = H / l``; one that
    reaches ``B`` draws with ``h < H`` such draws gets ``p = (1 + h) / (B + 1)``.  Both are valid
    p-values (``P(p <= alpha) <= alpha`` under the null), the second the plain Monte Carlo one,
    and a feature far from significance costs about ``H / p`` draws instead of ``B``.  ``S* >= S``
    is taken as ``S* >= S - tol``, ``tol`` a bound on the rounding of the sums, so that a
    redraw that ties the observed statistic counts.  ``"pseudo-t"``: NPDR's published test,
    the ordinary least-squares t of the outcome's coefficient on ``P - 1 - q`` degrees of
    freedom (``q`` the rank of ``[1, z]``), the pairs taken as independent (too small p-values
    under the null, as without covariates).  A feature without variation beyond the
    covariates, or an outcome without, gets ``p = 1``.

    Parameters
    ----------
    moments : PairMoments
        The neighbour pairs (:func:`knnweights.weighters._relief_regression._pair_moments`) and
        the ``diff`` data.
    outcome : ndarray of shape (n_samples,)
        Class codes or the continuous outcome.
    kind : {"classes", "continuous"}
        How two outcomes differ.
    covariates : tuple
        ``(values, categorical)`` of :func:`check_covariates`.
    method : {"mantel", "pseudo-t"}, default="mantel"
        The reference.
    random_state : int, RandomState or None, default=None
        Seeds the redrawn outcomes.
    n_resamples : int, default=N_RESAMPLES
        ``B``, the most draws per feature.
    survival : tuple of (time, event), optional
        The survival outcome whose martingale residuals are ``outcome`` (``kind="continuous"``):
        the redrawn outcomes are then survival outcomes drawn from a Cox model on the covariates,
        read as their residuals (:func:`~._relief_survival.survival_draws`).

    Returns
    -------
    pvalues : ndarray of shape (n_features,)
        One p-value per feature.
    """
    data = moments.data
    n, d = data.n, data.d
    values, categorical = covariates[:2]
    indptr, indices, flags = moments._graph()
    own = (flags & 1) != 0
    src = np.ascontiguousarray(np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))[own])
    dst = np.ascontiguousarray(indices[own].astype(np.int64))
    P = src.size
    U = _orthonormal_basis(_pair_design(values, categorical, src, dst))
    continuous = kind == "continuous"
    y = np.asarray(outcome, dtype=np.float64)
    span = float(np.ptp(y)) if continuous else 1.0
    span = span if span > 0 else 1.0
    g = _pair_outcome(y, src, dst, continuous, span)
    rg = g - U @ (U.T @ g)
    df = P - U.shape[1] - 1.0
    if df < 1:
        raise ValueError(f"too few neighbour pairs ({P}) for a covariate-adjusted p-value with "
                         f"{U.shape[1] - 1} covariate terms")
    g_ok = float(rg @ rg) > 1e-12 * max(float(g @ g), 1e-300)
    pvalues = np.ones(d)
    width = int(max(1, min(moments.feature_block, _PAIR_VALUES // max(P, 1))))  # features (or draws) per pass
    if method == "mantel":
        rng = np.random.default_rng(check_random_state(random_state).randint(np.iinfo(np.int32).max))
        W = _sample_design(values, categorical)
        draws = (_outcome_draws(y, kind, W, rng, int(n_resamples)) if survival is None
                 else survival_draws(*survival, W, rng, int(n_resamples)))
        B = draws.shape[1]
        gmax = max(1.0, float(np.abs(draws).max()) / span) if continuous else 1.0
        chunks = list(_chunks(B, max(8, width)))
        first = _pair_outcome(draws[:, :chunks[0][1]], src, dst, continuous, span)
        carry = []  # (feature numbers, R columns, threshold, count) still drawing after the first chunk

        def finish(group):  # the later chunks for the features still drawing, one pass over the draws
            feats = np.concatenate([c[0] for c in group])
            R = np.hstack([c[1] for c in group])
            thr = np.concatenate([c[2] for c in group])
            count = np.concatenate([c[3] for c in group])
            group.clear()
            for b0, b1 in chunks[1:]:
                G = _pair_outcome(draws[:, b0:b1], src, dst, continuous, span)
                count, stop_at = sequential_pvalue_update(R.T @ G >= thr[:, None], count, b0)
                stopped = stop_at > 0
                pvalues[feats[stopped]] = SEQUENTIAL_H / stop_at[stopped]
                if stopped.all():
                    return
                feats, R, thr, count = feats[~stopped], R[:, ~stopped], thr[~stopped], count[~stopped]
            pvalues[feats] = (1.0 + count) / (B + 1.0)

    for f0, f1, cols in _feature_blocks(moments, width):
        A = np.empty((P, f1 - f0))
        _kernels_pairs.pair_diffs(*cols, src, dst, A)
        R = A - U @ (U.T @ A)  # r_a: each feature's residual on [1, z]
        rss = np.einsum("pf,pf->f", R, R)
        ok = g_ok & (rss > 1e-12 * np.maximum(np.einsum("pf,pf->f", A, A), 1e-300))
        S = R.T @ g
        if method == "pseudo-t":
            r = np.clip(S / np.sqrt(np.maximum(rss * float(rg @ rg), 1e-300)), -1.0, 1.0)
            p = stats.t.sf(r * np.sqrt(df / np.maximum(1.0 - r * r, 1e-300)), df)
            pvalues[f0:f1] = np.where(ok, p, 1.0)
            continue
        thr = S - 1e-9 * np.abs(R).sum(axis=0) * gmax
        count, stop_at = sequential_pvalue_update(R.T @ first >= thr[:, None], np.zeros(f1 - f0), 0)
        done = (stop_at > 0) | ~ok
        pvalues[f0:f1] = np.where(ok & (stop_at > 0), SEQUENTIAL_H / np.maximum(stop_at, 1), 1.0)
        del A
        if (~done).any():
            keep = np.flatnonzero(~done)
            carry.append((f0 + keep, np.ascontiguousarray(R[:, keep]), thr[keep], count[keep]))
            if sum(c[0].size for c in carry) >= width:  # memory: at most about one block of columns waits
                finish(carry)
        del R
    if method == "mantel" and carry:
        finish(carry)
    return pvalues


def _feature_blocks(moments, width):
    """``(f0, f1, cols)`` over blocks of ``width`` features, as :meth:`PairMoments._blocks`."""
    saved = moments.feature_block
    moments.feature_block = width
    try:
        yield from moments._blocks()
    finally:
        moments.feature_block = saved


def refuse_covariates(est):
    """The error for ``covariates`` given to a fit that computes no p-values to adjust."""
    name = type(est).__name__
    if hasattr(est, "pvalues"):
        return ValueError(f"{name}.fit: covariates adjust the p-values, which pvalues=False does not compute; "
                          f"set {name}(pvalues=True) (the weights do not depend on covariates).")
    return ValueError(f"{name}.fit: covariates adjust p-values, and {name} has no pvalues_; use a Relief-family "
                      "weighter with pvalues=True (ReliefF, MultiSURF, ...), or leave covariates out.")

