"""The univariate baselines given covariates (``univariate_tests(..., covariates=)``, the rank table's
``_adj`` columns): each against its definition written with least squares or the Cox partial likelihood."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from knnweights import rank_table
from knnweights.significance import univariate_tests
from knnweights.weighters import make_survival_target


def _data(n, seed, n_classes=2):
    rng = np.random.default_rng(seed)
    age = rng.normal(50, 10, n)
    site = rng.choice(["a", "b", "c"], n)
    z = (age - 50) / 10
    X = np.column_stack([z + rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), 3 * age + 2])
    lin = 1.2 * z + 0.8 * X[:, 1] + 0.5 * (site == "b") + rng.normal(size=n)
    cuts = np.quantile(lin, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, lin, np.searchsorted(cuts, lin), pd.DataFrame({"age": age, "site": site})


def _design(cov):
    """``[1, age, site indicators]``: the covariates' columns as the definition's least squares take them."""
    return np.column_stack([np.ones(len(cov)), cov["age"], cov["site"] == "b", cov["site"] == "c"]).astype(float)


def _rss(D, x):
    return float(np.sum((x - D @ np.linalg.lstsq(D, x, rcond=None)[0]) ** 2))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_ancova_against_least_squares(n_classes):
    X, _, y, cov = _data(120, 1, n_classes)
    D0 = _design(cov)
    dummies = (y[:, None] == np.arange(1, n_classes)).astype(float)
    D1 = np.column_stack([D0, dummies])
    (name, (stat, p)), = univariate_tests(X, y, covariates=cov).items()
    assert name == ("t_adj" if n_classes == 2 else "F_adj")
    df2 = 120 - D1.shape[1]
    for f in range(3):
        r0, r1 = _rss(D0, X[:, f]), _rss(D1, X[:, f])
        F = ((r0 - r1) / (n_classes - 1)) / (r1 / df2)
        if n_classes == 2:  # the signed t of the class-1 coefficient, pooled variance
            beta = np.linalg.lstsq(D1, X[:, f], rcond=None)[0]
            se = np.sqrt(r1 / df2 * np.linalg.inv(D1.T @ D1)[-1, -1])
            np.testing.assert_allclose(stat[f], beta[-1] / se, rtol=1e-9)
            np.testing.assert_allclose(p[f], 2 * stats.t.sf(abs(beta[-1] / se), df2), rtol=1e-8)
        else:
            np.testing.assert_allclose(stat[f], F, rtol=1e-9)
            np.testing.assert_allclose(p[f], stats.f.sf(F, n_classes - 1, df2), rtol=1e-8)
    assert stat[3] == 0 and p[3] == 1  # a function of a covariate: nothing left to test
    same = univariate_tests(X, y, covariates=cov.assign(label=y.astype(str)))  # the classes are a covariate
    np.testing.assert_array_equal(next(iter(same.values()))[1], 1.0)


def test_partial_correlations_against_residuals():
    X, lin, _, cov = _data(150, 2)
    out = univariate_tests(X, lin, continuous=True, covariates=cov)
    assert set(out) == {"pearson_adj", "spearman_adj"}
    D = _design(cov)
    ranked = cov.assign(age=stats.rankdata(cov["age"]))
    for name, Xv, yv, Dv in (("pearson_adj", X, lin, D),
                             ("spearman_adj", stats.rankdata(X, axis=0), stats.rankdata(lin), _design(ranked))):
        r_y = yv - Dv @ np.linalg.lstsq(Dv, yv, rcond=None)[0]
        stat, p = out[name]
        for f in range(3):
            r_x = Xv[:, f] - Dv @ np.linalg.lstsq(Dv, Xv[:, f], rcond=None)[0]
            r = r_x @ r_y / np.sqrt((r_x @ r_x) * (r_y @ r_y))
            df = 150 - Dv.shape[1] - 1
            np.testing.assert_allclose(stat[f], r, rtol=1e-9)
            np.testing.assert_allclose(p[f], 2 * stats.t.sf(abs(r) * np.sqrt(df / (1 - r * r)), df), rtol=1e-8)
        assert p[3] == 1
    # the confounded feature: found unadjusted, not given age
    assert univariate_tests(X, lin, continuous=True)["pearson"][1][0] < 1e-4
    assert out["pearson_adj"][1][0] > 0.01


def _breslow_loglik(b, D, time, event):
    eta = D @ b
    return sum(eta[event & (time == s)].sum() - np.sum(event & (time == s)) * np.log(np.exp(eta[time >= s]).sum())
               for s in np.unique(time[event]))


def test_cox_score_given_covariates_against_the_partial_likelihood():
    """``z = U / sqrt(I_xx - I_xw I_ww^-1 I_wx)`` with the score and information of Breslow's partial
    likelihood taken by central differences at ``(0, gamma_hat)``."""
    from knnweights.weighters._relief_survival import cox_fit

    X, lin, _, cov = _data(90, 3)
    rng = np.random.default_rng(4)
    T = rng.exponential(1 / np.exp(0.8 * (cov["age"] - 50) / 10 + 0.6 * X[:, 1]))
    C = rng.exponential(1.5, 90)
    time, event = np.round(np.minimum(T, C), 1), T <= C
    W = _design(cov)[:, 1:]
    W = (W - W.mean(0)) / W.std(0)
    (name, (z, p)), = univariate_tests(X, make_survival_target(event, time), survival=True, covariates=cov).items()
    assert name == "cox_adj"
    gamma = cox_fit(W, time, event)[0]
    h = 1e-4
    for f in range(3):
        x = (X[:, f] - X[:, f].mean()) / X[:, f].std()
        D = np.column_stack([x, W])
        b0, E = np.r_[0.0, gamma], np.eye(D.shape[1]) * h
        ll = lambda b, D=D: _breslow_loglik(b, D, time, event)  # noqa: E731
        U = (ll(b0 + E[0]) - ll(b0 - E[0])) / (2 * h)
        info = -np.array([[(ll(b0 + a + c) - ll(b0 + a - c) - ll(b0 - a + c) + ll(b0 - a - c)) / (4 * h * h)
                           for c in E] for a in E])
        V = info[0, 0] - info[0, 1:] @ np.linalg.solve(info[1:, 1:], info[1:, 0])
        np.testing.assert_allclose(z[f], U / np.sqrt(V), rtol=1e-5)
    assert z[3] == 0 and p[3] == 1


def test_rank_table_adjusted_baselines_by_name():
    X, _, y, cov = _data(80, 5)
    names = ["g_conf", "g_sig", "g_null", "g_age"]
    frame = pd.DataFrame(X, columns=names)
    table = rank_table("ReliefF", frame, y, pvalues=True, covariates=cov, random_state=0).set_index("feature")
    assert "t_test_stat" not in table and "t_test_adj_stat" in table
    stat, p = univariate_tests(X, y, covariates=cov)["t_adj"]
    np.testing.assert_allclose(table.loc[names, "t_test_adj_stat"], stat, rtol=1e-9)
    np.testing.assert_allclose(table.loc[names, "t_test_adj_p"], p, rtol=1e-9)
