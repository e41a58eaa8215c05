"""P-values for feature weights: STIR / NPDR pair tests, Benjamini-Hochberg, permutations."""

import warnings

import numpy as np
import pytest
from scipy import stats

from knnweights import MultiSURF, Relief, ReliefF, Simba, bh_qvalues, permutation_pvalues
from knnweights.weighters.relief import range_normalize


def test_bh_qvalues_definition():
    rng = np.random.default_rng(0)
    p = rng.random(40) ** 2
    q = bh_qvalues(p)
    m = p.size
    ref = np.array([min(min(p[p >= p[i]].size and (p[j] * m / np.sum(p <= p[j])) for j in range(m) if p[j] >= p[i]),
                        1.0) for i in range(m)])
    np.testing.assert_allclose(q, ref)
    assert np.all(q >= p)
    with pytest.raises(ValueError):
        bh_qvalues([0.1, np.nan])


def test_pseudo_t_is_stirs_pooled_two_sample_t():
    """Relief's nearest hit and miss pairs: the pseudo-t is scipy's pooled two-sample t of miss vs hit diffs."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    y = (X[:, 0] + rng.normal(size=50) > 0).astype(int)
    est = Relief(pvalues="pseudo-t").fit(X, y)
    Z = range_normalize(X)
    D = np.abs(Z[:, None, :] - Z[None, :, :]).sum(axis=2)
    np.fill_diagonal(D, np.inf)
    hits, misses = [], []
    for i in range(50):
        order = np.lexsort((np.arange(50), D[i]))
        h = next(j for j in order if y[j] == y[i] and j != i)
        m = next(j for j in order if y[j] != y[i])
        hits.append(np.abs(Z[i] - Z[h]))
        misses.append(np.abs(Z[i] - Z[m]))
    ref = stats.ttest_ind(np.array(misses), np.array(hits), equal_var=True, alternative="greater").pvalue
    np.testing.assert_allclose(est.pvalues_, ref, rtol=1e-8)


def _null_pvalues(est, kind, reps=6):
    out = []
    for rep in range(reps):
        rng = np.random.default_rng(100 + rep)
        n, d = (50, 25) if rep % 2 else (120, 15)
        X = rng.normal(size=(n, d))
        y = rng.integers(0, 2, n) if kind == "classes" else rng.normal(size=n)
        out.append(est.fit(X, y).pvalues_)
    return np.concatenate(out)


@pytest.mark.parametrize("kind", ["classes", "continuous"])
@pytest.mark.parametrize("est", [ReliefF(n_neighbors=10, pvalues=True), MultiSURF(pvalues=True)],
                         ids=["ReliefF", "MultiSURF"])
def test_null_pvalues_uniform(est, kind):
    p = _null_pvalues(est, kind)
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert np.mean(p < 0.05) <= 0.1


def test_mantel_tails_not_anti_conservative():
    """Pooled over both outcomes and the two neighbourhoods: about the nominal rate at 0.05 and 0.01."""
    p = np.concatenate([_null_pvalues(est, kind, reps=4) for kind in ("classes", "continuous")
                        for est in (ReliefF(n_neighbors=10, pvalues=True), MultiSURF(pvalues=True))])
    assert np.mean(p < 0.05) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / p.size)
    assert np.mean(p < 0.01) <= 0.01 + 3 * np.sqrt(0.01 * 0.99 / p.size)


@pytest.mark.parametrize("kind", ["continuous", "classes"])
def test_mantel_variance_is_the_exact_permutation_variance(kind):
    """Every permutation of y on 7 samples, the pairs held fixed: the formula's variance is exact."""
    import itertools

    from knnweights.engine._kernels_mixed import PlainDiff
    from knnweights.significance import PairMoments
    from knnweights.weighters._relief_regression import _nearest

    rng = np.random.default_rng(11)
    n = 7
    X = rng.normal(size=(n, 3))
    y = rng.normal(size=n) if kind == "continuous" else np.array([0, 1, 0, 1, 1, 0, 0])
    data = PlainDiff(range_normalize(X))
    rows, idx = _nearest(data, np.zeros(n, np.int64), 2, None, per_class=False)
    idx = np.ascontiguousarray(idx[:, 0])

    def g_of(v):
        d = np.abs(v[rows][:, None] - v[idx])
        return d / np.ptp(v) if kind == "continuous" else (d > 0).astype(float)

    m = PairMoments(data)
    m.set_outcome(y, kind)
    m.add_index(data, rows, idx, idx >= 0, g_of(y))
    stat, _, ok = m.statistics("mantel")
    Z = range_normalize(X)
    a = np.abs(Z[rows][:, None, :] - Z[idx])  # (n, k, d)
    ac = a - a.reshape(-1, 3).mean(axis=0)
    S_obs = np.einsum("rk,rkd->d", g_of(y), ac)
    S = np.array([np.einsum("rk,rkd->d", g_of(y[list(p)]), ac) for p in itertools.permutations(range(n))])
    np.testing.assert_allclose(S.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(stat, S_obs / np.sqrt((S**2).mean(axis=0)), rtol=1e-9)


def test_published_pseudo_t_too_small_under_continuous_null():
    """The independent-pair t ignores that pairs share samples: under the null it rejects too often."""
    p = _null_pvalues(ReliefF(n_neighbors=10, pvalues="pseudo-t"), "continuous")
    assert np.mean(p < 0.05) > 0.08


def test_xor_pair_found_by_stir_not_by_t_test():
    rng = np.random.default_rng(5)
    n, d = 200, 20
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    est = ReliefF(n_neighbors=10, pvalues=True).fit(X, y)
    assert est.pvalues_[0] < 1e-3 and est.pvalues_[1] < 1e-3
    assert set(np.flatnonzero(est.qvalues_ < 0.05)) >= {0, 1}
    t = stats.ttest_ind(X[y == 1], X[y == 0]).pvalue
    assert t[0] > 0.05 and t[1] > 0.05


def test_main_effects_found_as_well_as_t_test():
    rng = np.random.default_rng(6)
    n, d = 160, 40
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, n)
    X[:, :4] += 1.2 * y[:, None]
    est = ReliefF(n_neighbors=10, pvalues=True).fit(X, y)
    t = stats.ttest_ind(X[y == 1], X[y == 0]).pvalue
    found_stir = set(np.flatnonzero(bh_qvalues(est.pvalues_) < 0.05))
    found_t = set(np.flatnonzero(bh_qvalues(t) < 0.05))
    assert found_t >= {0, 1, 2, 3}
    assert len(found_stir & {0, 1, 2, 3}) >= 3 and len(found_stir - {0, 1, 2, 3}) <= 1


def test_permutation_pvalues_estimator_and_seeds():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] > 0).astype(int)
    res = permutation_pvalues(ReliefF(n_neighbors=5), X, y, n_permutations=19, random_state=0)
    assert res.pvalues[0] == pytest.approx(1 / 20)  # (0 + 1) / (19 + 1)
    b = (res.null >= res.observed - 1e-12).sum(axis=0)
    np.testing.assert_allclose(res.pvalues, (b + 1) / 20)
    np.testing.assert_allclose(res.qvalues, bh_qvalues(res.pvalues))
    res2 = permutation_pvalues(ReliefF(n_neighbors=5), X, y, n_permutations=19, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(res.pvalues, res2.pvalues)
    with pytest.raises(ValueError):
        permutation_pvalues(ReliefF(), X, y, n_permutations=0)


def test_permutation_pvalues_any_weighter_null_and_progress(capsys):
    rng = np.random.default_rng(8)
    ps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in range(4):
            X = rng.normal(size=(40, 8))
            y = rng.normal(size=40) if rep % 2 else rng.integers(0, 2, 40)
            est = ReliefF(n_neighbors=5) if rep % 2 else Simba(random_state=0)
            ps.append(permutation_pvalues(est, X, y, n_permutations=39, random_state=rep, progress=rep == 0).pvalues)
    p = np.concatenate(ps)
    assert np.all((p >= 1 / 40 - 1e-12) & (p <= 1))  # (b + 1) / (B + 1), B = 39
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert "permutations" in capsys.readouterr().err


def test_pair_sums_on_the_mixed_data_path_equal_the_plain_path():
    """DiffData (Relief's diff on expanded columns) gives the plain path's p-values on continuous data,
    and a discrete feature's pair sums count a mismatch as 1."""
    from knnweights.engine import _kernels_mixed
    from knnweights.significance import PairMoments
    from knnweights.weighters._relief_regression import _nearest

    rng = np.random.default_rng(12)
    X = rng.normal(size=(60, 4))
    y = X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=60)
    plain = _kernels_mixed.PlainDiff(range_normalize(X))
    zeros = np.zeros(60, np.int64)
    mixed = _kernels_mixed.DiffData(_kernels_mixed.build_mixed(X, zeros, 1, np.zeros(4, bool)))
    out = []
    for data in (plain, mixed):
        rows, idx = _nearest(data, zeros, 5, None, per_class=False)
        idx = np.ascontiguousarray(idx[:, 0])
        m = PairMoments(data)
        m.set_outcome(y, "continuous")
        m.add_index(data, rows, idx, idx >= 0, np.abs(y[rows][:, None] - y[idx]) / np.ptp(y))
        out.append((m.pvalues(), m.pvalues("pseudo-t")))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-9)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-9)
    Xd = rng.integers(0, 3, size=(60, 3)).astype(float)
    yd = (Xd[:, 0] == 2).astype(int) ^ (Xd[:, 1] == 1).astype(int)
    est = ReliefF(discrete_features=True, pvalues=True).fit(Xd, yd)
    assert est.pvalues_.shape == (3,) and est.pvalues_[2] > 0.01 and min(est.pvalues_[:2]) < 0.05
