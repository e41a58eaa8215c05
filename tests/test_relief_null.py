"""The Relief p-values' feature-permutation null (``pvalue_null="feature"``): exact moments, calibration, errors."""

import itertools
import warnings

import numpy as np
import pytest

from knnweights import MultiSURF, ReliefF
from knnweights.weighters._relief_margins import range_normalize


def _feature_null_enumeration(est, X, y, kind, discrete):
    """The moments of ``null="feature"`` and, from the definition, ``S`` under every permutation of each
    feature's values over the samples, the pairs and the outcome fixed: ``S = sum_p a_p (g_p - gbar)``."""
    from knnweights.weighters import _relief_regression as rr

    n, d = X.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem: clamped neighbours
        est.fit(X, y)
    codes = np.unique(y, return_inverse=True)[1] if kind == "classes" else np.zeros(n, np.int64)
    data = rr._diff_data(est, X, codes)
    m = rr._pair_moments(est, data, codes if kind == "classes" else y, kind, "mantel")
    st = m.statistics("mantel", "feature")
    indptr, indices, flags = m._graph()
    own = (flags & 1) != 0  # the listed pairs (i, j)
    src = np.repeat(np.arange(n), np.diff(indptr))[own]
    dst = indices[own]
    yv = np.asarray(y, dtype=float)
    g = np.abs(yv[src] - yv[dst]) / np.ptp(yv) if kind == "continuous" else (yv[src] != yv[dst]) * 1.0
    Z = range_normalize(X)
    perms = np.array(list(itertools.permutations(range(n))))
    S = np.empty((len(perms), d))
    for f in range(d):
        vp = (X[:, f] if discrete[f] else Z[:, f])[perms]
        a = (vp[:, src] != vp[:, dst]) * 1.0 if discrete[f] else np.abs(vp[:, src] - vp[:, dst])
        S[:, f] = a @ (g - g.mean())
    return st, S


@pytest.mark.parametrize("kind", ["classes", "continuous"])
@pytest.mark.parametrize("make", [lambda **kw: ReliefF(n_neighbors=2, **kw), lambda **kw: MultiSURF(**kw)],
                         ids=["ReliefF", "MultiSURF"])
@pytest.mark.parametrize("discrete", [False, True], ids=["plain", "discrete"])
def test_feature_null_moments_are_the_exact_permutation_moments(make, kind, discrete):
    """All 8! permutations of each feature's values: the statistic, mean, variance and third moment are exact
    (continuous features, and a discrete one through the mixed data)."""
    rng = np.random.default_rng(11)
    n, d = 8, 3
    X = rng.normal(size=(n, d))
    X[:, 2] = [0, 1, 2, 0, 1, 1, 2, 0]
    y = rng.normal(size=n) if kind == "continuous" else np.array([0, 1, 0, 1, 1, 0, 2, 2])
    disc = np.array([False, False, discrete])
    est = make(discrete_features=[2]) if discrete else make()
    st, S = _feature_null_enumeration(est, X, y, kind, disc)
    np.testing.assert_allclose(st.statistic, S[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(st.mean, S.mean(axis=0), atol=1e-10 * S.std())
    np.testing.assert_allclose(st.var, S.var(axis=0), rtol=1e-8)
    np.testing.assert_allclose(st.third, ((S - S.mean(axis=0)) ** 3).mean(axis=0), rtol=1e-6,
                               atol=1e-9 * S.std() ** 3)
    assert not np.allclose(st.var, _outcome_null_var(est, X, y, kind), rtol=1e-3)  # the other null's differs


def _outcome_null_var(est, X, y, kind):
    from knnweights.weighters import _relief_regression as rr

    n = X.shape[0]
    codes = np.unique(y, return_inverse=True)[1] if kind == "classes" else np.zeros(n, np.int64)
    data = rr._diff_data(est, X, codes)
    return rr._pair_moments(est, data, codes if kind == "classes" else y, kind, "mantel").statistics().var


def test_feature_null_sampled_triangles_close_to_exact():
    """Dense (radius) neighbourhoods: the outcome matrix's sampled trace (C^g)^3 gives nearly the exact skewness;
    the variance does not use it."""
    from test_significance import _radius_moments

    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(150, 8)), rng.integers(0, 2, 150)
    exact = _radius_moments(X, y, "classes", triangle_work=1e12).statistics("mantel", "feature")
    sampled = _radius_moments(X, y, "classes", triangle_work=0.0).statistics("mantel", "feature")
    np.testing.assert_allclose(sampled.var, exact.var, rtol=1e-10)
    np.testing.assert_allclose(sampled.skewness, exact.skewness, atol=0.05)
    assert not np.allclose(sampled.skewness, exact.skewness, atol=1e-9)  # it did sample


def _clustered(rng, n, n_pred, n_noise):
    """Predictors sharing one factor ``c`` that drives the classes (neighbours share labels), plus noise."""
    c = rng.normal(size=n)
    X = np.hstack([c[:, None] + rng.normal(size=(n, n_pred)), rng.normal(size=(n, n_noise))])
    lin = 1.2 * c + rng.normal(size=n)
    return X, (lin > np.median(lin)).astype(int)


def test_feature_null_calibrated_where_outcome_null_is_not():
    """Clustered predictors: the outcome permutation puts far more than 5 % of the noise features' p-values at or
    below 0.05, the feature permutation at most 5 % (binomial bounds, 3 standard deviations, over 600 noise
    features); both find the predictors."""
    rng = np.random.default_rng(3)
    n_noise, p = 300, {}
    X, y = _clustered(rng, 300, 20, n_noise)
    for null in ("outcome", "feature"):
        p[null] = MultiSURF(pvalues=True, pvalue_null=null).fit(X, y).pvalues_
    X2, y2 = _clustered(rng, 300, 20, n_noise)
    for null in ("outcome", "feature"):
        p[null] = np.concatenate([p[null], MultiSURF(pvalues=True, pvalue_null=null).fit(X2, y2).pvalues_])
    noise = np.tile(np.arange(20 + n_noise) >= 20, 2)
    sd = np.sqrt(0.05 * 0.95 / noise.sum())
    assert np.mean(p["outcome"][noise] <= 0.05) > 0.05 + 3 * sd
    assert np.mean(p["feature"][noise] <= 0.05) <= 0.05 + 3 * sd
    assert np.mean(p["feature"][~noise] <= 0.05) >= 0.5


def test_default_is_the_outcome_null():
    rng = np.random.default_rng(5)
    X, y = _clustered(rng, 80, 5, 10)
    a = ReliefF(pvalues=True).fit(X, y).pvalues_
    np.testing.assert_array_equal(a, ReliefF(pvalues=True, pvalue_null="outcome").fit(X, y).pvalues_)
    assert not np.allclose(a, ReliefF(pvalues=True, pvalue_null="feature").fit(X, y).pvalues_)


def test_feature_null_refusals():
    from knnweights.exceptions import InvalidParameterError

    rng = np.random.default_rng(6)
    X, y = _clustered(rng, 60, 3, 4)
    with pytest.raises(ValueError, match="pvalues=True"):
        ReliefF(pvalues="pseudo-t", pvalue_null="feature").fit(X, y)
    with pytest.raises(NotImplementedError, match="covariates"):
        ReliefF(pvalues=True, pvalue_null="feature").fit(X, y, covariates=rng.normal(size=(60, 1)))
    with pytest.raises(InvalidParameterError):
        MultiSURF(pvalues=True, pvalue_null="labels").fit(X, y)


def test_cli_rank_pvalue_null_matches_library(tmp_path, capsys):
    """``rank --pvalues --pvalue-null feature``: the file's Relief p-values are the library's with
    ``pvalue_null="feature"``, by feature name; the flag's conflicts are one-line usage errors."""
    import pandas as pd
    from sklearn.preprocessing import StandardScaler

    from knnweights.cli import main

    rng = np.random.default_rng(4)
    n = 80
    X = rng.normal(size=(n, 8))
    y = np.where(X[:, 2] + X[:, 5] + rng.normal(0, 0.5, n) > 0, "case", "control")
    names = [f"g{k}" for k in range(8)]
    frame = pd.DataFrame(X, columns=names)
    frame.insert(4, "age", rng.normal(50, 10, n))
    frame["status"] = y
    frame = frame[["status"] + names[::-1] + ["age"]]  # columns out of order: rows joined by name
    path, out = tmp_path / "study.csv", tmp_path / "ranks.csv"
    frame.to_csv(path, index=False)
    rc = main(["rank", str(path), "--target", "status", "--drop", "age", "--methods", "ReliefF,MultiSURF",
               "--pvalues", "--pvalue-null", "feature", "--out", str(out), "--top", "0"])
    assert rc == 0, capsys.readouterr().err
    table = pd.read_csv(out).set_index("feature")
    Xs = StandardScaler().fit_transform(frame[names[::-1]].to_numpy())
    for est in (ReliefF(pvalues=True, pvalue_null="feature"), MultiSURF(pvalues=True, pvalue_null="feature")):
        est.set_params(random_state=0) if "random_state" in est.get_params() else None
        lib = pd.Series(est.fit(Xs, y).pvalues_, index=names[::-1])
        name = type(est).__name__
        np.testing.assert_allclose(table.loc[names, f"{name}_p"], lib.loc[names], rtol=1e-12)
        outcome = type(est)(pvalues=True).fit(Xs, y).pvalues_
        assert not np.allclose(lib.to_numpy(), outcome)
    assert main(["rank", str(path), "--target", "status", "--drop", "age", "--pvalue-null", "feature"]) == 2
    assert "add --pvalues" in capsys.readouterr().err
    assert main(["rank", str(path), "--target", "status", "--methods", "ReliefF", "--pvalues",
                 "--pvalue-null", "feature", "--covariates", "age"]) == 2
    err = capsys.readouterr().err
    assert "--covariates" in err and len(err.strip().splitlines()) == 1
