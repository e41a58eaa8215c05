"""Censored survival outcomes for the Relief family and the univariate baseline beside them.

A survival outcome is a structured array with the fields ``event`` (bool: the event was seen)
and ``time`` (float: the event or censoring time), scikit-survival's convention.

* :func:`martingale_residuals`: the residuals of a Cox model without covariates (Therneau,
  Grambsch & Fleming 1990), ``M_i = event_i - H0(time_i)`` with ``H0`` the Nelson-Aalen
  estimate of the cumulative hazard.  The Relief family scores a survival outcome as the
  continuous outcome ``M`` (RReliefF for Relief / ReliefF, the continuous-endpoint rule for
  SURF / MultiSURF, IRelief's graded pairs), and its p-values are those of a continuous
  outcome applied to ``M``.
* :func:`cox_score_test`: the univariate Cox score (log-rank) test of every feature, the
  rank table's baseline for a survival outcome.

Why the martingale residual: it is the observed minus the expected number of events of each
sample under "no feature matters", so a feature whose neighbours differ where the residuals
differ is one that relates to the hazard, which is what RReliefF measures for any continuous
outcome.  ``H0`` depends on the outcomes only through their set (not through which sample has
which), so permuting the outcomes over the samples permutes the residuals: the outcome
permutation (Mantel) null of the p-values stays exact, and nothing in the Relief machinery
needs to change.  Censoring enters through ``H0`` and the ``event`` term: a sample censored
early has a residual near 0, one with an early event a residual near 1, one that survived
long without an event a strongly negative residual.
"""

import numpy as np
from scipy import stats

from ..utils import SURVIVAL_FIELDS, check_survival_target, fill_docstring, is_survival_target, make_survival_target

__all__ = ["SURVIVAL_FIELDS", "is_survival_target", "check_survival_target", "make_survival_target",
           "nelson_aalen", "martingale_residuals", "cox_score_test"]

#: ``{time_event}``: the outcome's two arrays, as every function here takes them
_outcome_doc = fill_docstring(time_event="""time : ndarray of float64, shape (n_samples,)
    Event or censoring times.
event : ndarray of bool, shape (n_samples,)
    Whether the event was observed.""")


@_outcome_doc
def nelson_aalen(time, event):
    """The Nelson-Aalen cumulative hazard ``H0`` at each sample's own time.

    ``H0(t) = sum_{s <= t} d_s / n_s`` over the distinct event times ``s``, with ``d_s`` the
    events at ``s`` and ``n_s = #{j : time_j >= s}`` the samples at risk just before ``s``
    (tied times: all ``d_s`` events share one risk set, Breslow's / Nelson-Aalen's rule; a
    sample censored at ``s`` is still at risk at ``s``).  This is the Breslow estimate of the
    baseline cumulative hazard of a Cox model without covariates.

    Parameters
    ----------
    {time_event}

    Returns
    -------
    H : ndarray of float64, shape (n_samples,)
        ``H0(time_i)``.

    References
    ----------
    W. Nelson, "Theory and applications of hazard plotting for censored failure data",
    Technometrics 14(4), 1972.  O. Aalen, "Nonparametric inference for a family of counting
    processes", Annals of Statistics 6(4), 1978.
    """
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    n = time.shape[0]
    uniq, inverse, counts = np.unique(time, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    at_risk = n - np.concatenate(([0], np.cumsum(counts)[:-1]))  # n_s: samples with time >= s
    deaths = np.bincount(inverse, weights=event.astype(np.float64), minlength=uniq.size)
    H = np.cumsum(deaths / at_risk)
    return H[inverse]


@_outcome_doc
def martingale_residuals(time, event):
    """Martingale residuals of a Cox model without covariates: ``M_i = event_i - H0(time_i)``.

    ``H0`` is the Nelson-Aalen cumulative hazard (:func:`nelson_aalen`).  ``M_i`` is the
    observed minus the expected number of events of sample ``i`` under the null model; the
    residuals sum to 0, lie in ``(-inf, 1]``, and are a function of the outcome only.

    Parameters
    ----------
    {time_event}

    Returns
    -------
    M : ndarray of float64, shape (n_samples,)
        The residuals.

    References
    ----------
    T. M. Therneau, P. M. Grambsch and T. R. Fleming, "Martingale-based residuals for
    survival models", Biometrika 77(1), 1990.
    """
    return np.asarray(event, dtype=np.float64) - nelson_aalen(time, event)


@_outcome_doc
def cox_score_test(X, time, event):
    """The univariate Cox score (log-rank) test of every feature, Breslow's ties.

    For a feature ``x``, at ``beta = 0`` of the Cox model ``h(t | x) = h0(t) exp(beta x)``,
    summing over the distinct event times ``s`` with ``d_s`` events and risk set
    ``R_s = {j : time_j >= s}``::

        U = sum_s [ sum_{events i at s} x_i - d_s mean_{R_s}(x) ]
        V = sum_s d_s var_{R_s}(x)          (the variance over R_s, divided by |R_s|)
        z = U / sqrt(V),   p = 2 (1 - Phi(|z|))

    ``z > 0``: larger values go with a higher hazard (earlier events).  A feature constant over
    every risk set (``V = 0``) gets ``z = 0`` and ``p = 1``.  Vectorised over the features:
    the risk-set sums are suffix sums over the time-sorted samples.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite feature values.
    {time_event}

    Returns
    -------
    z : ndarray of shape (n_features,)
        The score statistics.
    p : ndarray of shape (n_features,)
        Two-sided p-values from the standard normal.

    References
    ----------
    D. R. Cox, "Regression models and life-tables", JRSS B 34(2), 1972.  N. Breslow,
    "Covariance analysis of censored survival data", Biometrics 30(1), 1974.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    # centred and scaled per feature: the risk-set variances are differences of moments, kept well conditioned
    scale = np.std(X, axis=0)
    Z = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    order = np.argsort(time, kind="stable")
    Z, t, e = Z[order], time[order], event[order].astype(np.float64)
    uniq, start, counts = np.unique(t, return_index=True, return_counts=True)
    S0 = (t.size - start).astype(np.float64)  # |R_s|
    S1 = np.cumsum(Z[::-1], axis=0)[::-1][start]  # sums over R_s
    S2 = np.cumsum((Z * Z)[::-1], axis=0)[::-1][start]
    d = np.add.reduceat(e, start)
    xe = np.add.reduceat(Z * e[:, None], start, axis=0)  # sum of x over the events at s
    keep = d > 0
    d, S0, S1, S2, xe = d[keep], S0[keep], S1[keep], S2[keep], xe[keep]
    mean = S1 / S0[:, None]
    U = (xe - d[:, None] * mean).sum(axis=0)
    V = (d[:, None] * np.maximum(S2 / S0[:, None] - mean * mean, 0.0)).sum(axis=0)
    tol = 1e-12 * max(1.0, float(d.sum()))
    ok = (scale > 0) & (V > tol)
    z = np.where(ok, U / np.sqrt(np.where(ok, V, 1.0)), 0.0)
    p = np.where(ok, 2.0 * stats.norm.sf(np.abs(z)), 1.0)
    return z, p
