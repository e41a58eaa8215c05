"""P-values for feature weights: STIR / NPDR pair tests, Benjamini-Hochberg, permutations."""

import warnings

import numpy as np
import pytest
from pair_reference import default_pairs
from scipy import stats

from knnweights import SURF, MultiSURF, Relief, ReliefF, Simba, bh_qvalues, permutation_pvalues
from knnweights.weighters._relief_margins import range_normalize


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


def _pair_matrix(Z, rule, k):
    """Brute force: the pairs of the default p-values as a 0/1 matrix: each sample's ``k`` nearest (ties to
    the lower index) or the SURF / MultiSURF radius, all found without the outcome."""
    return default_pairs(np.abs(Z[:, None, :] - Z[None, :, :]).sum(axis=2), rule, k)


def _feature_matrices(Z, M):
    """``C_f = (W + W') / 2``, ``W_ij = a_ij - abar`` on the pairs, per feature: ``(n, n, d)``."""
    A = np.abs(Z[:, None, :] - Z[None, :, :])
    W = np.where(M[:, :, None], A - A[M].mean(axis=0), 0.0)
    return (W + W.transpose(1, 0, 2)) / 2


def _moments_of(est, X, y, kind):
    from knnweights.weighters import _relief_regression as rr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem: all-zero weights, clamped neighbours
        est = est.fit(X, y)
    codes = np.unique(y, return_inverse=True)[1] if kind == "classes" else np.zeros(len(y), np.int64)
    data = rr._diff_data(est, X, codes)
    return rr._pair_moments(est, data, codes if kind == "classes" else y, kind, "mantel"), range_normalize(X)


def _outcome_matrix(y, kind):
    y = np.asarray(y, dtype=float)
    return np.abs(y[:, None] - y[None, :]) / np.ptp(y) if kind == "continuous" else (y[:, None] != y[None, :]) * 1.0


# (estimator, the rule of its default p-value pairs, their number per sample for two classes / a continuous y)
RULES = [(ReliefF(n_neighbors=2), "knn", 4, 2), (Relief(), "knn", 2, 1), (SURF(), "surf", 0, 0),
         (MultiSURF(), "multisurf", 0, 0)]


@pytest.mark.parametrize("kind", ["classes", "continuous"])
@pytest.mark.parametrize("est, rule, k_classes, k_cont", RULES, ids=["ReliefF", "Relief", "SURF", "MultiSURF"])
def test_mantel_moments_are_the_exact_permutation_moments(est, rule, k_classes, k_cont, kind):
    """Every permutation of y on 8 samples, the pairs (found without y) held fixed: the statistic, mean,
    variance, third moment and the linear part's variance are exact."""
    import itertools

    rng = np.random.default_rng(11)
    n, d = 8, 3
    X = rng.normal(size=(n, d))
    y = rng.normal(size=n) if kind == "continuous" else np.array([0, 1, 0, 1, 1, 0, 0, 1])
    m, Z = _moments_of(est, X, y, kind)
    st = m.statistics("mantel")
    M = _pair_matrix(Z, rule, k_classes if kind == "classes" else k_cont)
    C = _feature_matrices(Z, M)
    perms = np.array(list(itertools.permutations(range(n))))
    G = _outcome_matrix(y, kind)
    Gp = np.stack([G[np.ix_(p, p)] for p in perms])  # (n!, n, n)
    S = np.einsum("bij,ijf->bf", Gp, C)
    np.testing.assert_allclose(st.statistic, S[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(st.mean, S.mean(axis=0), atol=1e-10)
    np.testing.assert_allclose(st.var, S.var(axis=0), rtol=1e-8)
    np.testing.assert_allclose(st.third, ((S - S.mean(axis=0)) ** 3).mean(axis=0), rtol=1e-6,
                               atol=1e-9 * S.std() ** 3)
    # the Hajek projection: sum_i E[S | pi(i)] - (n - 1) E[S], its variance over the permutations
    proj = np.zeros_like(S) - (n - 1) * S.mean(axis=0)
    for i in range(n):
        for t in range(n):
            sel = perms[:, i] == t
            proj[sel] += S[sel].mean(axis=0)
    np.testing.assert_allclose(st.linear * st.var, proj.var(axis=0), rtol=1e-8, atol=1e-10 * st.var.max())
    np.testing.assert_allclose(st.linear_third * st.var**1.5, ((proj - proj.mean(axis=0)) ** 3).mean(axis=0), rtol=1e-6,
                               atol=1e-10 * st.var.max() ** 1.5)


@pytest.mark.parametrize("discrete", [False, True])
def test_difference_sums_match_the_dense_matrix(discrete):
    from knnweights.significance import difference_sums

    rng = np.random.default_rng(3)
    V = rng.integers(0, 3, (40, 2)) * 1.0 if discrete else np.round(rng.normal(size=(40, 2)), 1) + 100.0
    got = difference_sums(V, discrete)
    for f in range(2):
        v = V[:, f]
        D = (v[:, None] != v[None, :]) * 1.0 if discrete else np.abs(v[:, None] - v[None, :])
        r, r2, r3 = D.sum(1), (D**2).sum(1), (D**3).sum(1)
        want = {"T1": r.sum(), "T2": r2.sum(), "T3": r3.sum(), "R2": (r * r).sum(), "Q": (r2 * r).sum(),
                "S3": (r**3).sum(), "P3": r @ D @ r, "Tr": np.trace(D @ D @ D)}
        for key, value in want.items():
            assert got[key][f] == pytest.approx(value, rel=1e-9), key


def test_quadratic_reference_limits_and_simulation():
    from knnweights.significance import quadratic_sf

    z = np.linspace(-3, 5, 17)
    np.testing.assert_allclose(quadratic_sf(z, 0.0, 0.3, 0.0), stats.norm.sf(z), rtol=1e-9)
    for lin in (0.0, 1.0):  # the whole skewness in one part: the Pearson type III
        np.testing.assert_allclose(quadratic_sf(z, 0.7, lin, 0.7 * lin), stats.pearson3.sf(z, 0.7), rtol=2e-3,
                                   atol=1e-5)
    np.testing.assert_allclose(quadratic_sf(-z, -0.7, 0.4, -0.1), 1 - quadratic_sf(z, 0.7, 0.4, 0.1), atol=1e-9)
    rng = np.random.default_rng(0)

    def part(var, third, size):
        b, nu = third / (4 * var), 8 * var**3 / third**2
        return b * (rng.chisquare(nu, size) - nu)

    for lin, t_lin, t_quad in ((0.6, 0.1, 0.4), (0.2, 0.05, 1.0)):
        sim = part(lin, t_lin, 400_000) + part(1 - lin, t_quad, 400_000)
        for t in (-1.0, 0.0, 1.0, 2.5, 4.0):  # the saddlepoint: within 0.005 in the body, 10 % in the tail
            assert quadratic_sf(t, t_lin + t_quad, lin, t_lin) == pytest.approx(np.mean(sim >= t), abs=0.005, rel=0.1)
    # the skewness in the quadratic part only: heavier far in the tail than the Pearson III of the whole
    assert quadratic_sf(4.0, 0.5, 0.6, 0.0) > 1.5 * stats.pearson3.sf(4.0, 0.5)


def _radius_moments(X, y, kind, **kw):
    from knnweights.significance import PairMoments
    from knnweights.weighters import _relief_regression as rr
    from knnweights.weighters._relief_margins import in_radius

    est = MultiSURF().fit(X, y)
    data = rr._diff_data(est, X, np.zeros(len(y), np.int64))
    m = PairMoments(data, **kw)
    m.set_outcome(y, kind)
    for s, e, D in data.distance_chunks():
        m.add_dense(np.arange(s, e), in_radius(D, est.thresholds_[s:e], s))
    return m


def test_sampled_triangles_close_to_exact():
    """Dense (radius) neighbourhoods: the sampled trace C^3 gives nearly the exact skewness."""
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(150, 8)), rng.integers(0, 2, 150)
    exact = _radius_moments(X, y, "classes", triangle_work=1e12).statistics()
    sampled = _radius_moments(X, y, "classes", triangle_work=0.0).statistics()
    np.testing.assert_allclose(sampled.var, exact.var, rtol=1e-10)
    assert np.all(exact.skewness > 0.1)  # right-skewed, as class-label tests are
    np.testing.assert_allclose(sampled.skewness, exact.skewness, atol=0.05)
    assert not np.allclose(sampled.skewness, exact.skewness, atol=1e-9)  # it did sample


@pytest.mark.parametrize("kind", ["classes", "continuous"])
def test_reference_follows_the_permutation_distribution(kind):
    """MultiSURF's radius pairs do not depend on y: over 300 permutations of y the p-values are uniform.
    The reference passes; the normal one (skewness ignored) does not for classes."""
    rng = np.random.default_rng(21)
    n, d = 80, 12
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, n) if kind == "classes" else rng.normal(size=n)
    m = _radius_moments(X, y, kind)
    perm_rng = np.random.default_rng(0)
    ref, normal, skew = [], [], []
    for _ in range(300):
        m.set_outcome(y[perm_rng.permutation(n)], kind)
        st = m.statistics()
        ref.append(m.pvalues())
        normal.append(stats.norm.sf(st.z))
        skew.append(st.skewness)
    ref, normal = np.concatenate(ref), np.concatenate(normal)
    assert stats.kstest(ref, "uniform").pvalue > 0.01
    assert abs(np.mean(ref > 0.5) - 0.5) < 0.02 and np.mean(ref < 0.02) < 0.03
    if kind == "classes":
        assert np.mean(skew) > 0.2
        assert stats.kstest(normal, "uniform").pvalue < 0.01
        assert np.mean(normal > 0.5) > 0.52


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
        m = PairMoments(data)
        m.set_outcome(y, "continuous")
        m.add_index(rows, idx[:, 0])
        out.append((m.pvalues(), m.pvalues("pseudo-t")))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-9)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-9)
    Xd = rng.integers(0, 3, size=(60, 3)).astype(float)
    yd = (Xd[:, 0] == 2).astype(int) ^ (Xd[:, 1] == 1).astype(int)
    est = ReliefF(discrete_features=True, pvalues=True).fit(Xd, yd)
    assert est.pvalues_.shape == (3,) and est.pvalues_[2] > 0.01 and min(est.pvalues_[:2]) < 0.05
