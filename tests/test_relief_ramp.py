"""The ramp ``diff`` of the Relief family (``diff="ramp"``) against a plain-numpy reference."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from ramp_reference import ramp_diff_function

from knnweights import Relief, ReliefF


def _reference(X, y, k, t_eq, t_diff, per_class=True, disc=()):
    """ReliefF (or Relief) from the definition: explicit loops, ramp diff in distances and update."""
    n, d = X.shape
    diff = ramp_diff_function(X, t_eq, t_diff, disc)
    classes = np.unique(y)
    prior = {c: np.mean(y == c) for c in classes}
    W = np.zeros(d)
    for i in range(n):
        dist = {j: diff(i, j).sum() for j in range(n) if j != i}

        def nearest(cands, dist=dist):
            return sorted(cands, key=lambda m: (dist[m], m))[:k]

        hits = nearest([j for j in dist if y[j] == y[i]])
        for j in hits:
            W -= diff(i, j) / len(hits)
        if per_class:
            for c in classes:
                if c == y[i]:
                    continue
                miss = nearest([j for j in dist if y[j] == c])
                for j in miss:
                    W += prior[c] / (1 - prior[y[i]]) * diff(i, j) / len(miss)
        else:
            miss = nearest([j for j in dist if y[j] != y[i]])
            for j in miss:
                W += diff(i, j) / len(miss)
    return W / n


@pytest.fixture
def data():
    rs = np.random.RandomState(0)
    X = rs.normal(size=(40, 5))
    y = rs.randint(0, 3, size=40)
    X[:, 0] += y  # one relevant feature
    return X, y


@pytest.mark.parametrize("ramp", [(0.04, 0.1), (0.1, 0.5), (0.0, 0.3)])
def test_relieff_ramp_matches_reference(data, ramp):
    X, y = data
    w = ReliefF(n_neighbors=3, diff="ramp", ramp=ramp).fit(X, y).scores_
    assert_allclose(w, _reference(X, y, 3, *ramp), rtol=1e-12, atol=1e-15)


def test_relief_ramp_matches_reference(data):
    X, y = data
    w = Relief(diff="ramp").fit(X, y).scores_
    assert_allclose(w, _reference(X, y, 1, 0.04, 0.1, per_class=False), rtol=1e-12, atol=1e-15)


def test_ramp_with_discrete_features(data):
    X, y = data
    X = X.copy()
    X[:, 4] = np.random.RandomState(1).randint(0, 3, size=X.shape[0])
    w = ReliefF(n_neighbors=2, diff="ramp", discrete_features=[4]).fit(X, y).scores_
    assert_allclose(w, _reference(X, y, 2, 0.04, 0.1, disc=(4,)), rtol=1e-12, atol=1e-15)


def test_ramp_0_1_is_linear(data):
    X, y = data
    lin = ReliefF(n_neighbors=3).fit(X, y).scores_
    ramp = ReliefF(n_neighbors=3, diff="ramp", ramp=(0.0, 1.0)).fit(X, y).scores_
    assert_allclose(ramp, lin, rtol=1e-10, atol=1e-14)
    assert_allclose(Relief(diff="ramp", ramp=(0.0, 1.0)).fit(X, y).scores_, Relief().fit(X, y).scores_,
                    rtol=1e-10, atol=1e-14)


def test_ramp_sampled_instances(data):
    X, y = data
    est = ReliefF(n_neighbors=2, diff="ramp", n_instances=10, random_state=0).fit(X, y)
    assert est.feature_importances_.shape == (5,)
    assert np.all(np.isfinite(est.scores_))


@pytest.mark.parametrize("ramp", [(0.1, 0.1), (0.2, 0.1), (-0.1, 0.5), (0.1, 1.5), (0.1,), "ab"])
def test_ramp_validation(data, ramp):
    X, y = data
    with pytest.raises(ValueError):
        ReliefF(diff="ramp", ramp=ramp).fit(X, y)


def test_bad_diff(data):
    X, y = data
    with pytest.raises(ValueError):
        ReliefF(diff="cubic").fit(X, y)


def test_ramp_refusals(data):
    X, y = data
    with pytest.raises(NotImplementedError):
        ReliefF(diff="ramp", ties="include").fit(X, y)
    with pytest.raises(NotImplementedError, match="astype"):  # bytes: only a ramp that is the mismatch
        ReliefF(diff="ramp", ramp=(0.1, 0.6)).fit(np.random.RandomState(0).randint(0, 3, size=(20, 4)).astype(
            np.uint8), y[:20])


def test_ramp_changes_fingerprint():
    from knnweights.evaluation.grid import fingerprint_view

    assert fingerprint_view(ReliefF()) != fingerprint_view(ReliefF(diff="ramp"))
    assert "diff" not in repr(fingerprint_view(ReliefF()))


def _rrelieff_reference(X, y, k, t_eq, t_diff):
    """RReliefF from the pseudo code (Robnik-Sikonja & Kononenko 2003), ramp diff for the features."""
    n, d = X.shape
    span = y.max() - y.min()
    diff = ramp_diff_function(X, t_eq, t_diff)

    n_dc, n_da, n_dcda = 0.0, np.zeros(d), np.zeros(d)
    for i in range(n):
        dist = {j: diff(i, j).sum() for j in range(n) if j != i}
        for j in sorted(dist, key=lambda m, dist=dist: (dist[m], m))[:k]:
            dc = abs(y[i] - y[j]) / span
            da = diff(i, j)
            n_dc += dc / k
            n_da += da / k
            n_dcda += dc * da / k
    return n_dcda / n_dc - (n_da - n_dcda) / (n - n_dc)


@pytest.mark.parametrize("ramp", [(0.04, 0.1), (0.05, 0.4)])
def test_rrelieff_ramp_matches_reference(ramp):
    rs = np.random.RandomState(3)
    X = rs.normal(size=(35, 4))
    y = X[:, 0] + 0.3 * rs.normal(size=35)
    w = ReliefF(n_neighbors=4, diff="ramp", ramp=ramp).fit(X, y).scores_
    assert_allclose(w, _rrelieff_reference(X, y, 4, *ramp), rtol=1e-12, atol=1e-15)


def test_rrelieff_ramp_0_1_is_linear():
    rs = np.random.RandomState(4)
    X = rs.normal(size=(40, 5))
    y = X[:, 1] + 0.3 * rs.normal(size=40)
    lin = ReliefF(n_neighbors=5).fit(X, y).scores_
    assert_allclose(ReliefF(n_neighbors=5, diff="ramp", ramp=(0.0, 1.0)).fit(X, y).scores_, lin, rtol=1e-10,
                    atol=1e-14)
    assert_allclose(Relief(diff="ramp", ramp=(0.0, 1.0)).fit(X, y).scores_, Relief().fit(X, y).scores_,
                    rtol=1e-10, atol=1e-14)


def test_ramp_distances_lie_within_the_tie_rule_of_the_exact_ones():
    """On integer data every computed ramp distance lies within ``T_i + T_j`` of the exact (rational) one, so
    distances equal in exact arithmetic are ties on every CPU; feature blocks give the same distances."""
    from fractions import Fraction

    from knnweights.weighters import _relief_margins as rm

    rng = np.random.default_rng(5)
    X = rng.integers(0, 11, size=(24, 12)).astype(float)
    t_eq, t_diff = 0.04, 0.1
    data = rm.RampDiff(X, t_eq, t_diff, None)
    T = data.tie_tolerance()
    D = np.vstack([blk for _, _, blk in data.distance_chunks()])
    lo, span = X.min(axis=0), np.ptp(X, axis=0)
    te, td = Fraction(t_eq), Fraction(t_diff)

    def ramp(a):
        return min(max((a - te) / (td - te), Fraction(0)), Fraction(1))

    Zq = [[Fraction(int(v)) / Fraction(int(s)) for v, s in zip(row - lo, span, strict=True)] for row in X]
    off = 0.0
    for i in range(len(X)):
        exact = [sum(ramp(abs(a - b)) for a, b in zip(Zq[i], Zq[j], strict=True)) for j in range(len(X))]
        off = max(off, max(abs(D[i, j] - float(e)) / (T[i] + T[j]) for j, e in enumerate(exact)))
    assert off <= 1 and T.max() < 1e-12 * D.max()  # within the rule's bound, and the bound is tight
    # blocks of one row (the working memory) give the same sums
    Db = np.vstack([blk for _, _, blk in data.distance_chunks(working_memory=1e-6)])
    np.testing.assert_array_equal(Db, D)


@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_ramp_distances_equal_the_definition(weighted):
    """``RampDiff.distance_chunks`` (compiled, feature order) against the ramp of every pair written in numpy,
    with a discrete feature, a query subset and weights; any number of parts gives the same bits."""
    from knnweights.engine import _kernels_ramp
    from knnweights.weighters import _relief_margins as rm

    rng = np.random.default_rng(6)
    X = rng.normal(size=(37, 9))
    X[:, 4] = rng.integers(0, 3, 37)
    disc = np.zeros(9, bool)
    disc[4] = True
    w = rng.uniform(0, 2, 9) if weighted else None
    data = rm.RampDiff(X, 0.05, 0.3, disc)
    rows = np.array([3, 0, 36, 17])
    D = np.vstack([blk for _, _, blk in data.distance_chunks(rows=rows, w=w)])
    A = np.abs(data.Z[rows][:, None, :] - data.Z[None, :, :])
    ref = np.clip((A - 0.05) / 0.25, 0.0, 1.0)
    ref[..., 4] = A[..., 4] != 0
    ref = ref @ (np.ones(9) if w is None else w)
    np.testing.assert_allclose(D, ref, rtol=1e-13, atol=1e-15)
    assert D[np.arange(4), rows].max() == 0  # a sample is at distance 0 from itself
    ZT = np.ascontiguousarray(data.Z.T)
    one = np.empty((4, 37))
    parts = np.empty((4, 37))
    args = (ZT, rows, 0.05, 0.25, disc, np.ones(9) if w is None else w)
    _kernels_ramp.ramp_rows.kernel(*args, one, 0, 1)
    for part in range(3):
        _kernels_ramp.ramp_rows.kernel(*args, parts, part, 3)
    np.testing.assert_array_equal(one, D)
    np.testing.assert_array_equal(parts, D)
