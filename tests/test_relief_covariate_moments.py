"""The covariate-adjusted p-values of class labels from the moments of their reference
(``covariate_reference="moments"``): the moments against the enumeration of every outcome."""

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from scipy import stats

from knnweights.weighters import MultiSURF, ReliefF
from knnweights.weighters._relief_covariate_moments import _entry_rows, crt_moments, pair_class_terms


def _graph(n, rng, density=0.5):
    """A random pair set as the p-values' symmetric adjacency: flags 1 / 2 / 3 as listed (i, j), (j, i), both."""
    listed = np.triu(rng.random((n, n)) < density, 1) | np.tril(rng.random((n, n)) < density / 2, -1)
    A = scipy.sparse.csr_matrix(listed.astype(np.int8))
    U = (A + 2 * A.T).tocsr()
    U.sort_indices()
    return U.indptr.astype(np.int64), U.indices.astype(np.int32), U.data.astype(np.uint8), listed


@pytest.mark.parametrize("C, seed", [(2, 0), (2, 1), (3, 2)])
def test_moments_against_every_outcome(C, seed):
    """Mean, variance, third moment of ``S = sum over the listed pairs r_p [y_i != y_j]`` and of its linear
    part (the sum over samples of ``E[S | y_i] - E S``), each sample's class drawn from its own probabilities:
    from the module's sums and from all ``C^n`` outcomes with their probabilities."""
    rng = np.random.default_rng(seed)
    n = 7 if C == 2 else 6
    indptr, indices, flags, listed = _graph(n, rng)
    src, dst = np.nonzero(listed)
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    r_pair = {}
    for i, j in zip(src, dst, strict=True):  # a pair listed both ways has one residual per listing, both equal
        r_pair[frozenset((i, j))] = r_pair.get(frozenset((i, j)), rng.normal(size=2))
    R = np.array([r_pair[frozenset((i, j))] for i, j in zip(src, dst, strict=True)])  # 2 "features"
    entry_row, half_m, rows = _entry_rows(indptr, indices, flags)
    own = (flags & 1) != 0
    np.testing.assert_array_equal(rows[own], src)
    np.testing.assert_array_equal(indices[own], dst)
    prob = rng.dirichlet(np.ones(C), size=n)
    terms = pair_class_terms(prob, rows, indices.astype(np.int64))
    mom = crt_moments(R, entry_row, half_m, indptr, indices, prob, terms, np.iinfo(np.int64).max, 0)
    outcomes = np.array(list(itertools.product(range(C), repeat=n)))
    weight = np.prod(prob[np.arange(n), outcomes], axis=1)
    S = ((outcomes[:, src] != outcomes[:, dst]).astype(float) @ R)  # (outcomes, features)
    mean = weight @ S
    dev = S - mean
    np.testing.assert_allclose(mom.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(mom.var, weight @ dev**2, rtol=1e-10)
    np.testing.assert_allclose(mom.third, weight @ dev**3, rtol=1e-9, atol=1e-12 * np.max(weight @ np.abs(dev)**3))
    # the linear part: sum_i (E[S | y_i] - E S)
    lin = np.zeros_like(S)
    for i in range(n):
        for c in range(C):
            at = outcomes[:, i] == c
            cond = (weight[at] @ S[at]) / weight[at].sum()
            lin[at] += cond - mean
    np.testing.assert_allclose(mom.var_linear, weight @ lin**2, rtol=1e-10)
    np.testing.assert_allclose(mom.third_linear, weight @ lin**3, rtol=1e-9,
                               atol=1e-12 * np.max(weight @ np.abs(lin)**3))


def test_sampled_triangles_estimate_the_exact_sum():
    rng = np.random.default_rng(4)
    indptr, indices, flags, listed = _graph(40, rng, density=0.6)
    entry_row, half_m, rows = _entry_rows(indptr, indices, flags)
    R = rng.normal(size=(int(((flags & 1) != 0).sum()), 3))
    prob = rng.dirichlet(np.ones(2), size=40)
    terms = pair_class_terms(prob, rows, indices.astype(np.int64))
    exact = crt_moments(R, entry_row, half_m, indptr, indices, prob, terms, np.iinfo(np.int64).max, 0)
    sampled = crt_moments(R, entry_row, half_m, indptr, indices, prob, terms, 0, 20000)
    assert not np.allclose(sampled.third, exact.third, rtol=1e-9)  # it did sample
    np.testing.assert_allclose(sampled.third, exact.third, rtol=0.05, atol=0.02 * np.abs(exact.third).max())
    np.testing.assert_array_equal(sampled.var, exact.var)  # only the triangles are sampled


def _confounded(n, n_conf, n_null, n_classes, signal, rng):
    c = rng.normal(size=n)
    s = rng.integers(0, 3, size=n)
    x_sig = rng.normal(size=n)
    lin = 1.5 * c + 0.8 * (s == 1) + (1.0 * x_sig if signal else 0.0) + rng.normal(size=n)
    y = np.searchsorted(np.quantile(lin, np.linspace(0, 1, n_classes + 1)[1:-1]), lin)
    cols = [c[:, None] + 0.5 * rng.normal(size=(n, n_conf)), rng.normal(size=(n, n_null))]
    if signal:
        cols.append(x_sig[:, None])
    return np.hstack(cols), y, pd.DataFrame({"c": c, "s": pd.Categorical(np.array(["u", "v", "w"])[s])})


@pytest.mark.parametrize("Est, n_classes", [(ReliefF, 2), (MultiSURF, 2), (ReliefF, 3)])
def test_moments_reference_removes_the_confounder_and_is_calibrated(Est, n_classes):
    n_conf, n_null = 6, 150
    unadj, adj, null, sig = [], [], [], []
    for r in range(3):
        X, y, C = _confounded(200, n_conf, n_null, n_classes, False, np.random.default_rng([31, r, n_classes]))
        unadj.extend(Est(pvalues=True).fit(X, y).pvalues_[:n_conf])
        p = Est(pvalues=True, covariate_reference="moments").fit(X, y, covariates=C).pvalues_
        adj.extend(p[:n_conf])
        null.extend(p[n_conf:])
    X, y, C = _confounded(200, n_conf, 20, n_classes, True, np.random.default_rng([32, n_classes]))
    sig = Est(pvalues=True, covariate_reference="moments").fit(X, y, covariates=C).pvalues_[-1]
    assert np.median(unadj) < 0.05 and np.median(adj) > 0.1
    assert sig < 1e-4  # below the redraws' floor of 0.001
    null = np.array(null + adj)
    for alpha in (0.05, 0.01):  # binomial bounds at 0.1 % each side
        lo, hi = stats.binom.ppf(0.001, null.size, alpha), stats.binom.isf(0.001, null.size, alpha)
        assert lo <= np.sum(null <= alpha) <= hi, (alpha, np.mean(null <= alpha))
    assert stats.kstest(null, "uniform").pvalue > 0.001


def test_moments_reference_agrees_with_many_redraws():
    """The moment p-values of a few features against the plain Monte Carlo p-value of 20,000 redrawn
    outcomes, written from the definition: ReliefF's label-free pairs (the k nearest per class size), each
    feature's pair differences residualised by least squares on ``[1, |dc|, [s_i != s_j]]``, ``S = r . g``."""
    from sklearn.neighbors import NearestNeighbors

    from knnweights.weighters._relief_covariates import _sample_design, class_probabilities

    rng = np.random.default_rng(7)
    X, y, C = _confounded(150, 3, 5, 2, False, rng)
    k = 5
    Z = (X - X.min(0)) / np.ptp(X, axis=0)
    idx = NearestNeighbors(n_neighbors=2 * k + 1, metric="manhattan", algorithm="brute").fit(Z).kneighbors(
        Z, return_distance=False)
    src = np.repeat(np.arange(150), 2 * k)
    dst = np.array([[j for j in row if j != i][:2 * k] for i, row in enumerate(idx)]).ravel()
    c, s = C["c"].to_numpy(), C["s"].cat.codes.to_numpy()
    D = np.column_stack([np.ones(src.size), np.abs(c[src] - c[dst]) / np.ptp(c), s[src] != s[dst]])
    prob = class_probabilities(y, _sample_design(np.column_stack([c, s]).astype(float), np.array([False, True])))
    draws = (rng.random((150, 20000)) < prob[:, 1:2]).astype(np.int8)
    G = (draws[src] != draws[dst]).astype(float)
    g = (y[src] != y[dst]).astype(float)
    est = ReliefF(n_neighbors=k, pvalues=True, covariate_reference="moments").fit(X, y, covariates=C)
    checked = 0
    for f in range(X.shape[1]):
        a = np.abs(Z[src, f] - Z[dst, f])
        r = a - D @ np.linalg.lstsq(D, a, rcond=None)[0]
        p_mc = np.mean(r @ G >= r @ g)
        if 0.005 < p_mc < 0.7:
            se = np.sqrt(p_mc * (1 - p_mc) / G.shape[1])
            assert abs(est.pvalues_[f] - p_mc) <= 4 * se + 0.1 * p_mc, (f, est.pvalues_[f], p_mc)
            checked += 1
    assert checked >= 3


def test_moments_reference_refuses_other_outcomes():
    X, y, C = _confounded(60, 2, 3, 2, False, np.random.default_rng(8))
    with pytest.raises(NotImplementedError, match="class labels"):
        ReliefF(pvalues=True, covariate_reference="moments", target_type="continuous").fit(X, y + 0.5 * X[:, 0],
                                                                                             covariates=C)
    with pytest.raises(ValueError, match="covariate_reference"):
        ReliefF(pvalues=True, covariate_reference="exact").fit(X, y, covariates=C)


@pytest.mark.parametrize("Est", [ReliefF, MultiSURF])
def test_moments_reference_on_genotype_bytes_equals_the_float_copy(Est):
    rng = np.random.default_rng(9)
    X = rng.binomial(2, rng.uniform(0.1, 0.5, 25), size=(90, 25)).astype(np.uint8)
    y = (X[:, 0].astype(int) + X[:, 1] + rng.integers(0, 2, 90) >= 2).astype(int)
    C = np.column_stack([rng.normal(size=90) + y, rng.normal(size=90)])
    est = Est(pvalues=True, covariate_reference="moments")
    p_float = est.fit(X.astype(np.float64), y, covariates=C).pvalues_.copy()
    assert p_float.min() < 0.01
    np.testing.assert_allclose(est.fit(X, y, covariates=C).pvalues_, p_float, rtol=1e-10, atol=0)


def test_cli_rank_moments_reference_matches_library(tmp_path, capsys):
    from sklearn.preprocessing import StandardScaler

    from knnweights.cli import main

    X, y, C = _confounded(250, 2, 3, 2, True, np.random.default_rng(10))
    names = ["g_c1", "g_c2", "g_n1", "g_n2", "g_n3", "g_sig"]
    frame = pd.DataFrame(X, columns=names)
    frame.insert(2, "age", C["c"])  # between features: found by name, not position
    frame.insert(0, "site", C["s"].astype(str))
    frame["status"] = np.where(y == 1, "case", "control")
    path = tmp_path / "study.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "ranks.csv"
    rc = main(["rank", str(path), "--target", "status", "--methods", "MultiSURF", "--pvalues", "--covariates",
               "age,site", "--covariate-reference", "moments", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    table = pd.read_csv(out).set_index("feature")
    Xs = StandardScaler().fit_transform(frame[names].to_numpy())
    est = MultiSURF(pvalues=True, random_state=0, covariate_reference="moments").fit(
        Xs, frame["status"], covariates=frame[["age", "site"]])
    np.testing.assert_allclose(table.loc[names, "MultiSURF_p"], est.pvalues_, rtol=1e-10)
    assert table.loc["g_sig", "MultiSURF_p"] < 1e-3  # below the redraws' floor
    assert main(["rank", str(path), "--target", "status", "--methods", "MultiSURF", "--pvalues",
                 "--covariate-reference", "moments"]) == 2
    assert "add --covariates COLS" in capsys.readouterr().err
