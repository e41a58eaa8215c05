"""Covariate-adjusted p-values of the Relief family: ``fit(X, y, covariates=C)``."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from knnweights.weighters import SURF, IRelief, MultiSURF, Relief, ReliefF, Simba
from knnweights.weighters._relief_covariates import N_RESAMPLES, SEQUENTIAL_H, _outcome_draws, _sample_design


def _knn_pairs(X, k):
    """The directed pairs ``(i, j)``, ``j`` among the ``k`` nearest of ``i`` (Manhattan on range-normalised X)."""
    Z = (X - X.min(0)) / np.ptp(X, axis=0)
    idx = NearestNeighbors(n_neighbors=k + 1, metric="manhattan", algorithm="brute").fit(Z).kneighbors(
        Z, return_distance=False)
    src = np.repeat(np.arange(X.shape[0]), k)
    dst = np.array([[j for j in row if j != i][:k] for i, row in enumerate(idx)]).ravel()
    return Z, src, dst


def _reference(X, y, c, s, k, kind, seed, search=None):
    """From the definition: over the explicit pairs, ``np.linalg.lstsq`` of each feature's pair difference
    on ``[1, g, |dc|, [s_i != s_j]]``; the OLS t of ``g`` (pseudo-t) and ``S = r_a . g`` with ``r_a`` the
    residual on ``[1, |dc|, [s_i != s_j]]``, counted against the same redrawn outcomes (all ``B`` of them,
    then Besag & Clifford's rule)."""
    Z, src, dst = _knn_pairs(X, k)
    if search is not None:  # the pairs found on other columns (X and covariates)
        src, dst = _knn_pairs(search, k)[1:]
    span = np.ptp(y) if kind == "continuous" else 1.0
    gdiff = (lambda v: np.abs(v[src] - v[dst]) / span) if kind == "continuous" else (
        lambda v: (v[src] != v[dst]).astype(float))
    g = gdiff(y)
    cov = np.column_stack([np.ones(src.size), np.abs(c[src] - c[dst]) / np.ptp(c), (s[src] != s[dst]).astype(float)])
    values = np.column_stack([c, s.astype(float)])
    rng = np.random.default_rng(check_random_state(seed).randint(np.iinfo(np.int32).max))
    draws = _outcome_draws(y.astype(float), kind, _sample_design(values, np.array([False, True])), rng, N_RESAMPLES)
    p_t, p_perm, margin = [], [], []
    for f in range(X.shape[1]):
        a = np.abs(Z[src, f] - Z[dst, f])
        full = np.column_stack([g, cov])
        beta, rss = np.linalg.lstsq(full, a, rcond=None)[:2]
        df = src.size - full.shape[1]
        if rss.size:  # full rank (else no t: the mantel reference below needs none)
            se = np.sqrt(rss[0] / df * np.linalg.inv(full.T @ full)[0, 0])
            p_t.append(stats.t.sf(beta[0] / se, df))
        r_a = a - cov @ np.linalg.lstsq(cov, a, rcond=None)[0]
        S = r_a @ g
        S_star = np.array([r_a @ gdiff(draws[:, b]) for b in range(draws.shape[1])])
        cum = np.cumsum(S_star >= S)  # Besag & Clifford: stop at the H-th exceedance, p = H / l
        p_perm.append(SEQUENTIAL_H / (np.argmax(cum >= SEQUENTIAL_H) + 1) if cum[-1] >= SEQUENTIAL_H
                      else (1 + cum[-1]) / (N_RESAMPLES + 1))
        margin.append(np.min(np.abs(S_star - S)) / np.abs(r_a).sum())
    return np.array(p_t), np.array(p_perm), np.array(margin)


@pytest.mark.parametrize("kind", ["continuous", "classes"])
def test_matches_the_definition(kind):
    rng = np.random.default_rng(11)
    n, k = 70, 4
    c = rng.normal(size=n)
    s = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 5))
    X[:, 0] += c
    X[:, 1] *= 1 + (s == 2)
    lin = c + X[:, 2] + rng.normal(size=n)
    y = lin if kind == "continuous" else (lin > 0).astype(int)
    C = pd.DataFrame({"c": c, "s": pd.Categorical(np.array(["u", "v", "w"])[s])})
    per = 1 if kind == "continuous" else 2  # ReliefF's p-value pairs: k nearest per class, found without labels
    p_t, p_perm, margin = _reference(X, y, c, s, k * per, kind, 5)
    est = ReliefF(n_neighbors=k, pvalues=True, random_state=5, target_type=kind).fit(X, y, covariates=C)
    clear = margin > 1e-8  # no redrawn statistic within rounding of the observed one
    assert clear.sum() >= 4
    np.testing.assert_array_equal(est.pvalues_[clear], p_perm[clear])
    if kind == "continuous":  # pseudo-t on the same (label-free) pairs; t.sf is smooth: rounding-level agreement
        est_t = ReliefF(n_neighbors=k, pvalues="pseudo-t", target_type=kind).fit(X, y, covariates=C)
        np.testing.assert_allclose(est_t.pvalues_, p_t, rtol=1e-8, atol=1e-14)


def _confounded(n, n_conf, n_null, kind, rng):
    c = rng.normal(size=n)
    x_sig = rng.normal(size=n)
    lin = 1.5 * c + 1.0 * x_sig + rng.normal(size=n)
    y = lin if kind == "continuous" else (lin > np.median(lin)).astype(int)
    X = np.hstack([c[:, None] + 0.5 * rng.normal(size=(n, n_conf)), rng.normal(size=(n, n_null)), x_sig[:, None]])
    return X, y, c[:, None]


@pytest.mark.parametrize("kind", ["classes", "continuous"])
def test_confounder_is_removed_and_nulls_stay_uniform(kind):
    n_conf, n_null, n_sets = 8, 120, 2
    unadj, adj = {"conf": [], "null": [], "sig": []}, {"conf": [], "null": [], "sig": []}
    for r in range(n_sets):
        X, y, C = _confounded(240, n_conf, n_null, kind, np.random.default_rng([7, r]))
        for out, cov in ((unadj, None), (adj, C)):
            p = ReliefF(pvalues=True, random_state=r, target_type=kind).fit(X, y, covariates=cov).pvalues_
            out["conf"].extend(p[:n_conf])
            out["null"].extend(p[n_conf:-1])
            out["sig"].append(p[-1])
    conf_u, conf_a = np.array(unadj["conf"]), np.array(adj["conf"])
    assert np.median(conf_u) < 0.05  # unadjusted: the covariate's shadow is "found"
    assert np.mean(conf_a <= 0.05) <= 0.25 and np.median(conf_a) > 0.1  # adjusted: a null feature again
    assert max(adj["sig"]) <= 0.05  # a real effect beyond the covariate stays
    null = np.array(adj["null"])
    m = null.size
    for alpha in (0.05, 0.01):  # binomial bounds at 0.1 % each side
        lo, hi = stats.binom.ppf(0.001, m, alpha), stats.binom.isf(0.001, m, alpha)
        assert lo <= np.sum(null <= alpha) <= hi, (alpha, np.mean(null <= alpha))
    assert ks_at_support(null) > 0.001


def ks_at_support(p):
    """Kolmogorov-Smirnov p-value of ``p`` against the uniform, the gap taken at the attained values only.

    The sequential p-values are discrete (``H / l``) and exact there (``P(p <= v) = v`` at each value
    ``v`` they take), so the gap between the empirical distribution and the diagonal is measured at
    those values; the continuous KS distribution of that smaller supremum is a conservative reference.
    """
    v, counts = np.unique(p, return_counts=True)
    ecdf = np.cumsum(counts) / p.size
    return float(stats.kstwo.sf(np.max(np.abs(ecdf - v)), p.size))


def test_weights_unchanged_and_categorical_forms_agree():
    rng = np.random.default_rng(3)
    X, y, C = _confounded(120, 3, 10, "classes", rng)
    s = rng.integers(0, 3, size=120)
    plain = ReliefF(pvalues=True, random_state=1).fit(X, y)
    as_strings = np.column_stack([C[:, 0].astype(object), np.array(["a", "b", "c"], dtype=object)[s]])
    frame = pd.DataFrame({"c": C[:, 0], "s": pd.Categorical(np.array(["a", "b", "c"])[s])})
    e1 = ReliefF(pvalues=True, random_state=1).fit(X, y, covariates=as_strings)
    e2 = ReliefF(pvalues=True, random_state=1).fit(X, y, covariates=frame)
    np.testing.assert_array_equal(e1.feature_importances_, plain.feature_importances_)
    np.testing.assert_array_equal(e1.pvalues_, e2.pvalues_)
    assert not np.array_equal(e1.pvalues_, plain.pvalues_)
    assert np.all(e1.qvalues_ >= e1.pvalues_)
    assert np.all((e1.pvalues_ >= 1 / (N_RESAMPLES + 1)) & (e1.pvalues_ <= 1))


@pytest.mark.parametrize("cls", [Relief, SURF, MultiSURF])
def test_family_members(cls):
    X, y, C = _confounded(200, 2, 6, "classes", np.random.default_rng(4))
    base = cls(pvalues=True, random_state=0).fit(X, y)
    est = cls(pvalues=True, random_state=0).fit(X, y, covariates=C)
    np.testing.assert_array_equal(est.feature_importances_, base.feature_importances_)
    assert est.pvalues_.shape == (X.shape[1],) and np.all((est.pvalues_ > 0) & (est.pvalues_ <= 1))
    if cls is not Relief:  # Relief: one hit and one miss per sample, too few pairs for this effect at n = 200
        assert est.pvalues_[-1] < 0.05


def test_bad_input():
    X, y, C = _confounded(60, 2, 4, "classes", np.random.default_rng(5))
    est = ReliefF(pvalues=True, random_state=0)
    with pytest.raises(ValueError, match="59 rows but X has 60 samples"):
        est.fit(X, y, covariates=C[:-1])
    bad = C.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="missing value.*impute"):
        est.fit(X, y, covariates=bad)
    with pytest.raises(ValueError, match=r"set ReliefF\(pvalues=True\)"):
        ReliefF().fit(X, y, covariates=C)
    with pytest.raises(ValueError, match="has no pvalues_"):
        Simba().fit(X, y, covariates=C)
    with pytest.raises(ValueError, match="has no pvalues_"):
        IRelief().fit(X, y, covariates=C)
    Xf = pd.DataFrame(X, index=np.arange(100, 160))
    with pytest.raises(ValueError, match=r"covariates.loc\[X.index\]"):
        est.fit(Xf, y, covariates=pd.DataFrame(C))
    with pytest.raises(ValueError, match="no columns"):
        est.fit(X, y, covariates=np.zeros((60, 0)))


def test_cli_rank_covariates_match_library(tmp_path, capsys):
    from sklearn.preprocessing import StandardScaler

    from knnweights.cli import main

    rng = np.random.default_rng(8)
    n = 90
    age = rng.normal(50, 10, size=n)
    site = rng.choice(["north", "south"], size=n)
    X = rng.normal(size=(n, 6))
    X[:, 0] += (age - 50) / 10
    y = np.where((age - 50) / 10 + X[:, 3] + rng.normal(size=n) > 0, "case", "control")
    names = [f"g{k}" for k in range(6)]
    frame = pd.DataFrame(X, columns=names)
    frame.insert(0, "age", age)
    frame.insert(3, "site", site)  # between features: found by name, not position
    frame["status"] = y
    path = tmp_path / "study.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "ranks.csv"
    rc = main(["rank", str(path), "--target", "status", "--methods", "ReliefF", "--pvalues",
               "--covariates", "age,site", "--out", str(out), "--top", "0"])
    assert rc == 0, capsys.readouterr().err
    table = pd.read_csv(out).set_index("feature")
    assert sorted(table.index) == names  # covariates are not features
    Xs = StandardScaler().fit_transform(frame[names].to_numpy())
    C = frame[["age", "site"]]
    est = ReliefF(pvalues=True, random_state=0, target_type="classes").fit(Xs, y, covariates=C)
    unadjusted = ReliefF(pvalues=True, random_state=0, target_type="classes").fit(Xs, y)
    lib = pd.DataFrame({"p": est.pvalues_, "q": est.qvalues_}, index=names)
    np.testing.assert_allclose(table.loc[names, "ReliefF_p"], lib.loc[names, "p"], rtol=1e-12)
    np.testing.assert_allclose(table.loc[names, "ReliefF_q"], lib.loc[names, "q"], rtol=1e-12)
    assert not np.allclose(table.loc[names, "ReliefF_p"], unadjusted.pvalues_)
    assert main(["rank", str(path), "--target", "status", "--methods", "ReliefF", "--covariates", "age"]) == 2
    assert "add --pvalues" in capsys.readouterr().err
    assert main(["rank", str(path), "--target", "status", "--methods", "ReliefF,Simba", "--pvalues",
                 "--covariates", "age"]) == 2
    assert "Simba" in capsys.readouterr().err


def test_memory_caps_do_not_change_the_pvalues(monkeypatch):
    """Small feature blocks and draw chunks (the memory caps) give the same sequential p-values."""
    import knnweights.weighters._relief_covariates as rc

    X, y, C = _confounded(120, 3, 20, "continuous", np.random.default_rng(6))
    est = ReliefF(n_neighbors=5, pvalues=True, random_state=2)
    full = est.fit(X, y, covariates=C).pvalues_
    monkeypatch.setattr(rc, "_PAIR_VALUES", 120 * 5 * 3)  # 3 features per block, chunks of 8 draws
    np.testing.assert_array_equal(est.fit(X, y, covariates=C).pvalues_, full)
    assert np.unique(full).size > 5


@pytest.mark.parametrize("kind", ["continuous", "classes"])
def test_neighbors_with_covariates(kind):
    rng = np.random.default_rng(12)
    n, k = 70, 4
    c = rng.normal(size=n)
    s = rng.integers(0, 2, size=n)  # two levels: the mismatch is |s_i - s_j| of the 0/1 codes
    X = rng.normal(size=(n, 5))
    X[:, 0] += c
    lin = c + X[:, 2] + rng.normal(size=n)
    y = lin if kind == "continuous" else (lin > 0).astype(int)
    C = pd.DataFrame({"c": c, "s": pd.Categorical(np.array(["u", "v"])[s])})
    per = 1 if kind == "continuous" else 2
    p_t, p_perm, margin = _reference(X, y, c, s, k * per, kind, 3, search=np.column_stack([X, c, s]))
    est = ReliefF(n_neighbors=k, pvalues=True, random_state=3, target_type=kind)
    est.fit(X, y, covariates=C, neighbors_with_covariates=True)
    own = ReliefF(n_neighbors=k, pvalues=True, random_state=3, target_type=kind).fit(X, y, covariates=C)
    np.testing.assert_array_equal(est.feature_importances_, own.feature_importances_)
    assert not np.array_equal(est.pvalues_, own.pvalues_)  # other pairs
    clear = margin > 1e-8
    assert clear.sum() >= 4
    np.testing.assert_array_equal(est.pvalues_[clear], p_perm[clear])
    with pytest.raises(ValueError, match="needs covariates"):
        est.fit(X, y, neighbors_with_covariates=True)
    for cls in (SURF, MultiSURF):  # the radius rule on the distances with the covariates
        p = cls(pvalues=True, random_state=0, target_type=kind).fit(
            X, y, covariates=C, neighbors_with_covariates=True).pvalues_
        assert p.shape == (5,) and np.all((p > 0) & (p <= 1))
