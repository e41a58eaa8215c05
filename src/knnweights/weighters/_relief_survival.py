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
* :func:`cox_fit` and :func:`redraw_survival`: the Cox model on the covariates and the outcomes
  redrawn from it, the reference of the covariate-adjusted p-values (the null "the hazard
  depends on the covariates only", under which a redrawn outcome must keep that dependence;
  permuting the residuals would not).

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

import warnings

import numpy as np
from scipy import linalg, stats
from sklearn.exceptions import ConvergenceWarning

from ..utils import SURVIVAL_FIELDS, check_survival_target, fill_docstring, is_survival_target, make_survival_target

__all__ = ["SURVIVAL_FIELDS", "is_survival_target", "check_survival_target", "make_survival_target",
           "nelson_aalen", "martingale_residuals", "cox_score_test", "cox_fit", "redraw_survival", "survival_draws"]

#: Newton steps of :func:`cox_fit` at most (a covariate that separates the events has no finite optimum)
_COX_MAX_ITER = 50
#: ``exp`` of linear predictors below the largest by more than this underflows: they are clipped there
_LOG_FLOOR = -700.0

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
def cox_score_test(X, time, event, W=None):
    """The Cox score (log-rank) test of every feature, Breslow's ties, optionally given covariates.

    For a feature ``x``, at ``beta = 0`` of the Cox model ``h(t | x) = h0(t) exp(beta x)``,
    summing over the distinct event times ``s`` with ``d_s`` events and risk set
    ``R_s = {j : time_j >= s}``::

        U = sum_s [ sum_{events i at s} x_i - d_s mean_{R_s}(x) ]
        V = sum_s d_s var_{R_s}(x)          (the variance over R_s, divided by |R_s|)
        z = U / sqrt(V),   p = 2 (1 - Phi(|z|))

    With covariates ``W`` it is the score test of ``x`` in ``h(t | x, w) = h0(t) exp(beta x +
    gamma w)`` at ``beta = 0`` and ``gamma`` the model's estimate without ``x``
    (:func:`cox_fit`): the risk-set means and variances are weighted by ``exp(w gamma)``, and
    ``V`` is the efficient information ``I_xx - I_xw I_ww^-1 I_wx``, the part of ``x``'s
    information that the covariates do not carry.

    ``z > 0``: larger values go with a higher hazard (earlier events).  A feature constant over
    every risk set (``V = 0``; with covariates: explained by them) gets ``z = 0`` and ``p = 1``.
    Vectorised over the features: the risk-set sums are suffix sums over the time-sorted samples.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite feature values.
    {time_event}
    W : ndarray of shape (n_samples, n_covariates), optional
        Covariates as regressors (no intercept).

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
    adjusted = W is not None and np.asarray(W).reshape(time.size, -1).shape[1] > 0
    if adjusted:
        W = np.asarray(W, dtype=np.float64).reshape(time.size, -1)
        eta = W @ cox_fit(W, time, event)[0]
        r = np.exp(np.maximum(eta - eta.max(), _LOG_FLOOR))
    order = np.argsort(time, kind="stable")
    Z, t, e = Z[order], time[order], event[order].astype(np.float64)
    uniq, start, counts = np.unique(t, return_index=True, return_counts=True)
    d = np.add.reduceat(e, start)
    xe = np.add.reduceat(Z * e[:, None], start, axis=0)  # sum of x over the events at s
    keep = d > 0
    if adjusted:
        r, W = r[order], W[order]
        S0 = np.cumsum(r[::-1])[::-1][start]  # sum_{R_s} r
        S1 = np.cumsum((r[:, None] * Z)[::-1], axis=0)[::-1][start]
        S2 = np.cumsum((r[:, None] * Z * Z)[::-1], axis=0)[::-1][start]
    else:
        S0 = (t.size - start).astype(np.float64)  # |R_s|
        S1 = np.cumsum(Z[::-1], axis=0)[::-1][start]  # sums over R_s
        S2 = np.cumsum((Z * Z)[::-1], axis=0)[::-1][start]
    d, S0, S1, S2, xe = d[keep], S0[keep], S1[keep], S2[keep], xe[keep]
    mean = S1 / S0[:, None]
    U = (xe - d[:, None] * mean).sum(axis=0)
    V = (d[:, None] * np.maximum(S2 / S0[:, None] - mean * mean, 0.0)).sum(axis=0)
    if adjusted:
        # the cross information: sum_s d_s / S0_s sum_{R_s} r_j z_j w_j' is sum_j r_j h_j z_j w_j', h_j the
        # sum of d_s / S0_s over the event times s <= t_j (Breslow's cumulative hazard in r's units)
        h = np.zeros(uniq.size)
        h[keep] = d / S0
        h = np.cumsum(h)[np.repeat(np.arange(uniq.size), counts)]
        mean_w = (np.cumsum((r[:, None] * W)[::-1], axis=0)[::-1][start])[keep] / S0[:, None]
        rh = r * h
        I_xw = (Z * rh[:, None]).T @ W - (mean * d[:, None]).T @ mean_w
        I_ww = (W * rh[:, None]).T @ W - (mean_w * d[:, None]).T @ mean_w
        explained = np.einsum("fa,ab,fb->f", I_xw, linalg.pinvh(I_ww), I_xw)
        tol_v = 1e-9 * V  # below it the covariates carry the feature's information, up to rounding
        V = np.where(V - explained > tol_v, V - explained, 0.0)
    tol = 1e-12 * max(1.0, float(d.sum()))
    ok = (scale > 0) & (V > tol)
    z = np.where(ok, U / np.sqrt(np.where(ok, V, 1.0)), 0.0)
    p = np.where(ok, 2.0 * stats.norm.sf(np.abs(z)), 1.0)
    return z, p

class _RiskSets:
    """The samples sorted by time and the distinct times' risk sets ``R_s = {j : time_j >= s}``."""

    def __init__(self, time, event, W):
        self.order = np.argsort(time, kind="stable")
        t = time[self.order]
        self.e = event[self.order].astype(np.float64)
        self.W = W[self.order]
        self.times, self.start = np.unique(t, return_index=True)
        self.deaths = np.add.reduceat(self.e, self.start)
        self.censored = np.add.reduceat(1.0 - self.e, self.start)
        self.at_risk = (t.size - self.start).astype(np.float64)
        self.ev = self.deaths > 0

    def suffix(self, values):
        """``sum_{j in R_s} values_j`` at the distinct event times (``values`` in sorted order, 1-D or 2-D)."""
        return np.cumsum(values[::-1], axis=0)[::-1][self.start][self.ev]

    def partial_likelihood(self, beta):
        """Breslow's log partial likelihood, its gradient and information, and ``(eta, S0)`` (scaled by
        ``exp(max eta)``) at ``beta``."""
        eta = self.W @ beta
        top = float(eta.max()) if eta.size else 0.0
        r = np.exp(np.maximum(eta - top, _LOG_FLOOR))
        S0 = self.suffix(r)
        S1 = self.suffix(r[:, None] * self.W)
        S2 = self.suffix(r[:, None, None] * self.W[:, :, None] * self.W[:, None, :])
        d = self.deaths[self.ev]
        mean = S1 / S0[:, None]
        loglik = float(self.e @ eta - d @ (np.log(S0) + top))
        grad = self.e @ self.W - d @ mean
        info = np.einsum("s,sab->ab", d, S2 / S0[:, None, None]) - np.einsum("s,sa,sb->ab", d, mean, mean)
        return loglik, grad, info, eta, top, S0


def cox_fit(W, time, event, tol=1e-10):
    """Cox's proportional hazards model on ``W``: Breslow's partial likelihood maximised by Newton.

    Returns the coefficients and the Breslow baseline cumulative hazard, the model of
    :func:`survival_draws`.  Newton steps (through a pseudo-inverse of the information, so that
    collinear columns are allowed) are halved until the log partial likelihood does not fall,
    and stop when a step changes it by less than ``tol`` (relative) or after
    :data:`_COX_MAX_ITER` steps.  A covariate that separates the events has no finite optimum:
    its coefficient keeps growing while the likelihood converges, which gives a
    ``ConvergenceWarning``; its last, large value is the limit's reading (hazards near 0 or
    infinity for its samples, as in the data).

    Parameters
    ----------
    W : ndarray of shape (n_samples, n_covariates)
        The regressors (no intercept: it is the baseline hazard's).
    time : ndarray of float64, shape (n_samples,)
        Event or censoring times.
    event : ndarray of bool, shape (n_samples,)
        Whether the event was observed.
    tol : float, default=1e-10
        The relative change of the log partial likelihood at which Newton stops.

    Returns
    -------
    beta : ndarray of shape (n_covariates,)
        The coefficients.
    event_times : ndarray of shape (n_event_times,)
        The distinct event times, ascending.
    hazard : ndarray of shape (n_event_times,)
        Breslow's baseline cumulative hazard at them, ``H0(s) = sum_{u <= s} d_u / sum_{R_u} exp(W beta)``.

    References
    ----------
    D. R. Cox, "Regression models and life-tables", JRSS B 34(2), 1972.  N. Breslow,
    "Covariance analysis of censored survival data", Biometrics 30(1), 1974.
    """
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    W = np.asarray(W, dtype=np.float64).reshape(time.size, -1)
    rs = _RiskSets(time, event, W)
    beta = np.zeros(W.shape[1])
    loglik, grad, info = rs.partial_likelihood(beta)[:3]
    converged, diverging = W.shape[1] == 0, False
    for _ in range(_COX_MAX_ITER if W.shape[1] else 0):
        step = linalg.pinvh(info, atol=1e-12 * max(1.0, float(np.abs(info).max()))) @ grad
        for _ in range(60):  # halving: the partial likelihood is concave, a short enough step rises
            trial = rs.partial_likelihood(beta + step)
            if trial[0] >= loglik - 1e-12 * abs(loglik):
                break
            step = step / 2.0
        change = trial[0] - loglik
        beta = beta + step
        loglik, grad, info = trial[:3]
        if abs(change) <= tol * max(1.0, abs(loglik)):
            converged = True
            diverging = bool(np.any(np.abs(step) > 1e-3 * np.maximum(1.0, np.abs(beta))))
            break
    if not converged or diverging:
        warnings.warn("the Cox model on the covariates: a coefficient grows without bound (a covariate separates "
                      "the events; its samples' hazards go to 0 or infinity); its last value is used.",
                      ConvergenceWarning, stacklevel=2)
    _, _, _, _, top, S0 = rs.partial_likelihood(beta)
    hazard = np.cumsum(rs.deaths[rs.ev] / S0) * np.exp(-top)
    return beta, rs.times[rs.ev], hazard


def _censoring_survivor(rs):
    """Kaplan-Meier's survivor function of the censoring times, ``(times, G)`` at the distinct censoring
    times: an event at a censoring time comes first (it leaves the risk set of that censoring)."""
    c = rs.censored > 0
    hazard = rs.censored[c] / (rs.at_risk[c] - rs.deaths[c])
    return rs.times[c], np.cumprod(1.0 - hazard)


def redraw_survival(time, event, W, rng, n_draws):
    """``(time, event)``, each ``(n, n_draws)``: survival outcomes redrawn from a Cox model on ``W``.

    The null of the covariate-adjusted p-values for a survival outcome is that the hazard
    depends on the covariates only.  Each draw keeps that dependence and redraws the rest:

    * the event time of sample ``i`` from the fitted model (:func:`cox_fit`),
      ``P(T_i <= s) = 1 - exp(-H0(s) exp(w_i beta))`` on the distinct event times (inverse
      transform of a unit exponential), or beyond the last of them;
    * its censoring time given what was observed, the conditional bootstrap of censored data
      (Efron, JASA 76, 1981; Davison & Hinkley, *Bootstrap Methods*, 1997, section 3.5):
      a censored sample keeps its censoring time, one with an event draws it from the
      Kaplan-Meier estimate of the censoring times conditional on being at least its event
      time (never censored when that estimate keeps mass beyond the last time);
    * the drawn outcome is the earlier of the two (an event at a tie); a sample with neither
      is censored at the largest observed time.

    The reference is exact when the Cox model holds and the censoring is independent of the
    event time given the sample, up to the estimation of ``beta``, ``H0`` and the censoring
    distribution.

    Parameters
    ----------
    time : ndarray of float64, shape (n_samples,)
        Event or censoring times.
    event : ndarray of bool, shape (n_samples,)
        Whether the event was observed.
    W : ndarray of shape (n_samples, n_covariates)
        The covariates as regressors.
    rng : numpy.random.Generator
        The draws' source.
    n_draws : int
        The number of outcomes drawn.

    Returns
    -------
    time : ndarray of shape (n_samples, n_draws)
        The drawn event or censoring times.
    event : ndarray of bool, shape (n_samples, n_draws)
        Whether the drawn outcome is an event.
    """
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    n = time.size
    beta, event_times, hazard = cox_fit(W, time, event)
    eta = np.asarray(W, dtype=np.float64).reshape(n, -1) @ beta
    need = rng.exponential(size=(n, n_draws)) * np.exp(-eta)[:, None]  # T <= s  <=>  H0(s) >= E exp(-eta)
    k = np.searchsorted(hazard, need, side="left")
    T = np.append(event_times, np.inf)[k]  # beyond the last event time: no event
    ctimes, G = _censoring_survivor(_RiskSets(time, event, np.zeros((n, 0))))
    u = 1.0 - rng.random((n, n_draws))  # in (0, 1]
    k0 = np.searchsorted(ctimes, time, side="left")  # the censoring times at or after the event time
    base = np.concatenate(([1.0], G))[k0]  # G just before the event time
    kc = np.searchsorted(-G, -(base[:, None] * (1.0 - u)), side="left")  # first G_k <= base (1 - u)
    C = np.append(ctimes, np.inf)[kc]
    C = np.where(event[:, None], C, time[:, None])
    drawn_time = np.minimum(T, C)
    drawn_time[np.isinf(drawn_time)] = time.max()
    return drawn_time, T <= C


def survival_draws(time, event, W, rng, n_draws):
    """``(n, n_draws)`` martingale residuals (:func:`martingale_residuals`, the model without
    covariates, as for the observed outcome) of the outcomes of :func:`redraw_survival`.

    Parameters
    ----------
    time, event, W, rng, n_draws :
        As for :func:`redraw_survival`.

    Returns
    -------
    M : ndarray of shape (n_samples, n_draws)
        The drawn outcomes' martingale residuals.
    """
    drawn_time, drawn_event = redraw_survival(time, event, W, rng, n_draws)
    M = np.empty(drawn_time.shape)
    for b in range(M.shape[1]):  # one Nelson-Aalen estimate per drawn outcome
        M[:, b] = martingale_residuals(drawn_time[:, b], drawn_event[:, b])
    return M
