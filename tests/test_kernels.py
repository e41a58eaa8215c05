"""Every compiled kernel against a brute-force NumPy reference."""

import mpmath
import numpy as np
import pytest

from knnweights.engine import _kernels, _kernels_radius, _kernels_soft
from knnweights.engine._config import config_context
from knnweights.engine.neighbors import (
    distance_chunks,
    hard_margin_vectors,
    nearest_by_class,
    nearest_hits_misses,
    soft_margins,
    soft_neighbor_log_probabilities,
    weighted_distances,
)

PHI = {"manhattan": np.abs, "sqeuclidean": np.square}


def ref_distances(A, B, w, metric):
    return (PHI[metric](A[:, None, :] - B[None, :, :]) * w).sum(-1)


def ref_neighbors(D, y, k):
    """k nearest hits / misses by a stable sort (ties: lower index first)."""
    n = D.shape[0]
    hits, misses = [], []
    for i in range(n):
        order = np.lexsort((np.arange(n), D[i]))
        order = order[order != i]
        hits.append([j for j in order if y[j] == y[i]][:k])
        misses.append([j for j in order if y[j] != y[i]][:k])
    return np.array(hits), np.array(misses)


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_weighted_distances_match_reference(metric, dtype):
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(23, 9)).astype(dtype), rng.normal(size=(17, 9)).astype(dtype)
    w = rng.uniform(0, 2, 9)
    w[3] = 0.0
    D = weighted_distances(A, B, w, metric)
    assert D.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(D, ref_distances(A.astype(float), B.astype(float), w, metric), rtol=tol, atol=tol)


@pytest.mark.parametrize("phi", [_kernels.L1, _kernels.L2SQ])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("na, nb, d", [(37, 131, 601), (3, 65, 257), (16, 64, 256), (1, 1, 1)])
def test_pairwise_kernel_across_tile_edges(phi, dtype, na, nb, d):
    """Output tiles (16 x 64), feature slabs (256) and 4-row register blocks all have ragged edges."""
    rng = np.random.default_rng(na + nb + d)
    A, B = rng.normal(size=(na, d)).astype(dtype), rng.normal(size=(nb, d)).astype(dtype)
    out = np.full((na, nb), np.nan, dtype)
    _kernels.pairwise_phi_t.threaded(A, np.ascontiguousarray(B.T), phi, out)  # the parallel path, whatever the size
    ref = ref_distances(A.astype(float), B.astype(float), np.ones(d), ["manhattan", "sqeuclidean"][phi])
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * d)


@pytest.mark.parametrize("phi", [_kernels.L1, _kernels.L2SQ])
def test_pairwise_kernel_bits_do_not_depend_on_blocking(phi):
    """A pair's distance is bit-identical whether its row is computed alone, in a chunk or in the full matrix."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(70, 530))
    full = np.empty((70, 70))
    _kernels.pairwise_phi_t.threaded(X, np.ascontiguousarray(X.T), phi, full)
    for start, stop in [(0, 1), (5, 6), (3, 22), (13, 70)]:
        part = np.empty((stop - start, 70))
        _kernels.pairwise_phi_t.threaded(X[start:stop], np.ascontiguousarray(X.T), phi, part)
        assert np.array_equal(part, full[start:stop])


@pytest.mark.parametrize("phi", [_kernels.L1, _kernels.L2SQ])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, d", [(1, 3), (17, 5), (70, 530), (131, 64)])
def test_symmetric_kernel_is_bit_identical_to_rectangular(phi, dtype, n, d):
    """Computing each pair once and mirroring changes no bit: chunked and whole-matrix callers agree exactly."""
    X = np.random.default_rng(n * d).normal(size=(n, d)).astype(dtype)
    full = np.empty((n, n), dtype)
    _kernels.pairwise_phi_t.threaded(X, np.ascontiguousarray(X.T), phi, full)
    sym = np.full((n, n), np.nan, dtype)
    _kernels.upper_phi.threaded(X, np.ascontiguousarray(X.T), phi, sym)
    upper = np.triu(np.ones((n, n), bool))
    assert np.array_equal(sym[upper], full[upper]) and np.isnan(sym[~upper]).all()  # the lower one is the mirror's
    _kernels.mirror_lower.threaded(sym)
    assert np.array_equal(sym, full)
    one_thread = np.full((n, n), np.nan, dtype)
    assert np.array_equal(_kernels.pairwise_phi_sym(X, phi, one_thread), full)
    assert np.array_equal(sym, sym.T)


def test_distance_chunks_respect_budget_and_cover_all_rows():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    blocks = list(distance_chunks(X, working_memory=300 * 8 * 40 / 2**20))  # 40 rows per block
    assert len(blocks) == 8 and all(e - s <= 40 for s, e, _ in blocks)
    np.testing.assert_allclose(np.vstack([D for *_, D in blocks]), weighted_distances(X), atol=1e-12)


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
def test_nearest_hits_misses_match_reference_with_ties(metric):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(40, 3)).astype(float)  # many exact ties
    y = rng.integers(0, 3, size=40)
    w = np.array([1.0, 0.5, 2.0])
    with config_context(working_memory=0.01):  # several chunks
        nb = nearest_hits_misses(X, y, w, 3, metric)
    D = ref_distances(X, X, w, metric)
    hits, misses = ref_neighbors(D, y, 3)
    np.testing.assert_array_equal(nb.hit_idx, hits)
    np.testing.assert_array_equal(nb.miss_idx, misses)
    np.testing.assert_allclose(nb.hit_dist, np.take_along_axis(D, hits, 1))


def test_nearest_hits_misses_on_query_rows_with_repeats():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 2, 30)
    full = nearest_hits_misses(X, y, None, 2)
    rows = np.array([5, 5, 0, 29])
    sub = nearest_hits_misses(X, y, None, 2, rows=rows)
    np.testing.assert_array_equal(sub.hit_idx, full.hit_idx[rows])
    np.testing.assert_array_equal(sub.miss_idx, full.miss_idx[rows])


def test_nearest_by_class_self_and_query_search():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(25, 3)), rng.integers(0, 3, 25)
    idx, dist = nearest_by_class(X, y, None, 2, "manhattan")
    D = ref_distances(X, X, np.ones(3), "manhattan")
    for i in (0, 7, 24):
        for c in range(3):
            cand = [j for j in np.lexsort((np.arange(25), D[i])) if j != i and y[j] == c][:2]
            np.testing.assert_array_equal(idx[i, c], cand)
    Q = rng.normal(size=(4, 3))
    qidx, _ = nearest_by_class(Q, None, None, 1, "manhattan", n_classes=3, XB=X, yB=y)
    Dq = ref_distances(Q, X, np.ones(3), "manhattan")
    for c in range(3):
        np.testing.assert_array_equal(qidx[:, c, 0], np.where(y[None, :] == c, Dq, np.inf).argmin(1))


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
def test_hard_margin_vectors_match_reference(metric):
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(30, 6)), rng.integers(0, 2, 30)
    w = rng.uniform(0.1, 1, 6)
    nb = nearest_hits_misses(X, y, w, 2, metric)
    z = hard_margin_vectors(X, nb.hit_idx, nb.miss_idx, metric, per_sample=True)
    D = ref_distances(X, X, w, metric)
    hits, misses = ref_neighbors(D, y, 2)
    ref = PHI[metric](X[:, None] - X[misses]).mean(1) - PHI[metric](X[:, None] - X[hits]).mean(1)
    np.testing.assert_allclose(z, ref, atol=1e-12)
    zk = hard_margin_vectors(X, nb.hit_idx[:, -1:], nb.miss_idx[:, -1:], metric)
    refk = (PHI[metric](X - X[misses[:, 1]]) - PHI[metric](X - X[hits[:, 1]])).sum(0)
    np.testing.assert_allclose(zk, refk, atol=1e-10)
    np.testing.assert_allclose(hard_margin_vectors(X, hits, misses, metric), ref.sum(0), atol=1e-10)


def ref_soft(X, y, w, sigma, metric):
    D = ref_distances(X, X, w, metric)
    n = len(y)
    Z = np.zeros_like(X)
    for i in range(n):
        for mask, sign in (((y == y[i]) & (np.arange(n) != i), -1), (y != y[i], 1)):
            lg = -D[i, mask] / sigma
            p = np.exp(lg - lg.max())
            p /= p.sum()
            Z[i] += sign * (p[:, None] * PHI[metric](X[i] - X[mask])).sum(0)
    return Z


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
@pytest.mark.parametrize("sigma", [10.0, 0.3, 1e-6])
def test_soft_margins_match_reference(metric, sigma):
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(35, 5)), rng.integers(0, 3, 35)
    w = rng.uniform(0.1, 1, 5)
    with config_context(working_memory=0.005):
        sm = soft_margins(X, y, w, sigma, metric, per_sample=True)
    np.testing.assert_allclose(sm.z, ref_soft(X, y, w, sigma, metric), atol=1e-10)
    assert np.all(np.isfinite(sm.hit_entropy)) and np.all(sm.hit_entropy >= -1e-12)
    np.testing.assert_allclose(soft_margins(X, y, w, sigma, metric).z, sm.z.sum(0), atol=1e-9)


def test_soft_probabilities_agree_with_high_precision_at_tiny_sigma():
    rng = np.random.default_rng(8)
    D = rng.uniform(0, 1e-5, size=(3, 12))
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    sigma = 1e-6
    la, lb, _, _ = soft_neighbor_log_probabilities(D, y[:3], y, sigma)
    mpmath.mp.dps = 50
    for r in range(3):
        hits = [j for j in range(12) if y[j] == y[r] and j != r]
        tot = mpmath.fsum(mpmath.exp(-mpmath.mpf(D[r, j]) / sigma) for j in hits)
        for j in hits:
            ref = mpmath.exp(-mpmath.mpf(D[r, j]) / sigma) / tot
            assert abs(float(ref) - np.exp(la[r, j])) < 1e-12
        assert np.isclose(np.exp(lb[r]).sum(), 1.0) and np.isneginf(la[r, r])


def test_float32_kernels_close_to_float64():
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(40, 8)), rng.integers(0, 2, 40)
    z64 = soft_margins(X, y, np.ones(8), 1.0).z
    z32 = soft_margins(X.astype(np.float32), y, np.ones(8), 1.0).z
    assert z32.dtype == np.float32
    np.testing.assert_allclose(z32, z64, rtol=1e-3, atol=1e-3)


def test_kernel_codes_are_stable():
    assert (_kernels.L1, _kernels.L2SQ) == (0, 1)
    with pytest.raises(ValueError, match="metric must be one of"):
        weighted_distances(np.ones((2, 2)), metric="cosine")
    with pytest.raises(ValueError, match="non-negative"):
        weighted_distances(np.ones((2, 2)), w=np.array([1.0, -1.0]))


@pytest.mark.parametrize("sigma", [10.0, 1e-3, 1e-9])
def test_soft_coefficient_kernel_matches_log_space_reference(sigma):
    """The fused kernel gives the same probabilities, log-masses and entropies as the NumPy log-space path."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 4))
    y = np.r_[np.zeros(25, int), np.ones(4, int), 2]  # class 2 is a singleton: its row has no hit
    D = weighted_distances(X)
    for start, stop in [(0, 30), (7, 19)]:
        la, lb, lh, lm = soft_neighbor_log_probabilities(D[start:stop], y[start:stop], y, sigma, row_offset=start)
        P = np.full((stop - start, 30), np.nan)
        out = [np.empty(stop - start) for _ in range(4)]
        _kernels_soft.soft_coefficients(D[start:stop], y[start:stop], y, start, 1.0 / sigma, P, *out)
        np.testing.assert_allclose(P, np.exp(lb) - np.exp(la), rtol=1e-12, atol=1e-300)
        np.testing.assert_array_equal(np.isinf(out[0]), np.isinf(lh))
        np.testing.assert_allclose(out[0][np.isfinite(lh)], lh[np.isfinite(lh)], rtol=1e-12)
        np.testing.assert_allclose(out[1], lm, rtol=1e-12)
        with np.errstate(invalid="ignore", under="ignore"):
            ent = [-np.where(np.exp(v) > 0, np.exp(v) * v, 0.0).sum(1) for v in (la, lb)]
        np.testing.assert_allclose(out[2], ent[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out[3], ent[1], rtol=1e-10, atol=1e-12)
        assert np.all(P[np.arange(stop - start), np.arange(start, stop)] == 0.0)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 31])
def test_fold_pairs_gives_every_unordered_pair_to_exactly_one_row(n):
    P = np.random.default_rng(n).normal(size=(n, n))
    F = _kernels_radius.fold_pairs(P, np.empty_like(P))
    owner = (F != 0).astype(int)
    iu = np.triu_indices(n, 1)
    assert np.all((owner + owner.T)[iu] == 1) and not owner.diagonal().any()
    np.testing.assert_allclose(F.sum(), P.sum() - np.trace(P), rtol=1e-12)
    assert np.abs(owner.sum(1) - (n - 1) / 2).max() <= 0.5  # rows equally loaded


@pytest.mark.parametrize("phi", [_kernels.L1, _kernels.L2SQ])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [1, 7, 513])
def test_coef_phi_rows_sums_each_row_in_column_order(phi, dtype, d):
    """Rows with 0, 1, 7, 8, 9, 17 and all non-zero coefficients (groups of eight and their remainders; the
    feature slabs of 512): the bits of adding ``P[i, j] phi(a_i - b_j)`` one column after the other."""
    rng = np.random.default_rng(d)
    A, B = rng.normal(size=(7, d)).astype(dtype), rng.normal(size=(40, d)).astype(dtype)
    P = np.zeros((7, 40), dtype)
    for i, m in enumerate([0, 1, 7, 8, 9, 17, 40]):
        P[i, np.sort(rng.choice(40, m, replace=False))] = rng.normal(size=m)
    P[3, 5] = -0.0  # a negative zero is a zero
    out = np.full((7, d), np.nan, dtype)
    _kernels.coef_phi_rows.threaded(A, B, P, phi, out)
    f = PHI[["manhattan", "sqeuclidean"][phi]]
    for i in range(7):
        ref = np.zeros(d, dtype)
        for j in np.flatnonzero(P[i]):
            ref = ref + (P[i, j] * f(A[i] - B[j]) if phi == _kernels.L1 else P[i, j] * (A[i] - B[j]) * (A[i] - B[j]))
        assert np.array_equal(out[i], ref)


def _radius_reference(D, T, self_cols, lab_rows, lab_cols, s, kind, table):
    """The unfolded radius coefficients with NumPy masks (the definition)."""
    near = D < T[:, None]
    ok = self_cols >= 0
    near[np.flatnonzero(ok), self_cols[ok]] = False
    if kind == 1:
        g = (np.abs(lab_rows[:, None] - lab_cols[None, :]) >= s).astype(int)
    else:
        g = np.broadcast_to(lab_cols.astype(int), D.shape)
    counts = np.stack([(near & (g == c)).sum(1) for c in range(table.shape[1])], axis=1)
    return counts, np.where(near, np.take_along_axis(table, g, axis=1), 0.0)


@pytest.mark.parametrize("kind, n_groups", [(0, 3), (0, 11), (1, 2)])
@pytest.mark.parametrize("n", [8, 9, 40])
def test_radius_kernels_match_masks_and_fold_pairs(kind, n_groups, n):
    rng = np.random.default_rng(n + n_groups)
    X = rng.integers(0, 3, size=(n, 4)).astype(float)  # tied distances, some at the threshold
    D = weighted_distances(X)
    T = np.quantile(D, 0.4, axis=1)
    lab = rng.normal(size=n) if kind == 1 else rng.integers(0, n_groups, n).astype(float)
    table = rng.normal(size=(n, n_groups))
    every = np.arange(n)
    counts = np.empty((n, n_groups), np.int64)
    _kernels_radius.radius_counts(D, T, every, lab, lab, 0.7, kind, counts)
    P = _kernels_radius.radius_coefficients(D, T, every, lab, lab, 0.7, kind, table, False, False, np.empty((n, n)))
    ref_counts, ref_P = _radius_reference(D, T, every, lab, lab, 0.7, kind, table)
    np.testing.assert_array_equal(counts, ref_counts)
    assert np.array_equal(P, ref_P)
    folded = _kernels_radius.fold_pairs(ref_P, np.empty_like(ref_P))
    for symmetric in (False, True):
        F = _kernels_radius.radius_coefficients(D, T, every, lab, lab, 0.7, kind, table, True, symmetric,
                                                np.empty((n, n)))
        assert np.array_equal(F, folded)
    # a block of rows, the sample itself given by index (one row without a sample of its own)
    rows = np.array([n - 1, 2, 0])
    self_cols = np.array([n - 1, 2, -1])
    Db, Tb = D[rows], T[rows]
    _kernels_radius.radius_counts(Db, Tb, self_cols, lab[rows], lab, 0.7, kind, counts[:3])
    Pb = _kernels_radius.radius_coefficients(Db, Tb, self_cols, lab[rows], lab, 0.7, kind, table[rows], False, False,
                                      np.empty((3, n)))
    ref_counts, ref_P = _radius_reference(Db, Tb, self_cols, lab[rows], lab, 0.7, kind, table[rows])
    np.testing.assert_array_equal(counts[:3], ref_counts)
    assert np.array_equal(Pb, ref_P)
