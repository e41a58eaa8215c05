"""SQP-FW working-set refresh: the pruned neighbour search gives nearest_hits_misses' lists exactly."""

import numpy as np
import pytest

from knnweights._solvers.active_set import _NeighbourSearch
from knnweights.engine.neighbors import nearest_hits_misses


@pytest.mark.parametrize("n, d, n_classes, decimals", [(300, 18, 7, None), (400, 5, 3, 1), (320, 57, 2, None)])
def test_pruned_search_equals_the_full_one(n, d, n_classes, decimals):
    rng = np.random.RandomState(n + d)
    X = rng.randn(n, d)
    if decimals is not None:  # many tied distances: the lists' order is decided by the index
        X = np.round(X, decimals)
    codes = rng.randint(0, n_classes, n).astype(np.int64)
    codes[:3] = n_classes  # a class with fewer hits than k (missing places, -1)
    search = _NeighbourSearch(np.ascontiguousarray(X), codes)
    w = rng.rand(d)
    w /= w.sum()
    for it in range(40):
        k = 10 if it < 30 else 14  # a new k: a full pass
        step = rng.randn(d) * (1e-5 if it % 9 else 1e-1)  # now and then a large move: the bound gives up
        w = np.maximum(w + step, 0.0)
        if it % 4 == 0:
            w[rng.randint(d)] = 0.0  # zero weights: the kernels drop their columns
        w /= w.sum()
        hi, mi = search(w, k)
        ref = nearest_hits_misses(X, codes, w, k, "sqeuclidean")
        np.testing.assert_array_equal(hi, ref.hit_idx)
        np.testing.assert_array_equal(mi, ref.miss_idx)
    assert search.n_pruned > 20 and search.n_full >= 2


@pytest.mark.parametrize("n, d", [(150, 16), (130, 57), (77, 21), (90, 2000)])
def test_candidate_distances_are_the_full_pass_bits(n, d):
    """Every pair a candidate: the distances (not only the lists) equal the engine's full pass."""
    from knnweights._solvers import _active_set_kernels as K
    from knnweights.engine.neighbors import metric_code, scale_for_metric

    rng = np.random.RandomState(d)
    X = rng.randn(n, d)
    codes = rng.randint(0, 3, n).astype(np.int64)
    w = rng.rand(d)
    w[: d // 5] = 0.0
    w /= w.sum()
    k = n // 3
    hi, mi = np.empty((n, k), np.int64), np.empty((n, k), np.int64)
    hd, md = np.empty((n, k)), np.empty((n, k))
    zero, unknown = np.zeros(n), np.full((n, k), -1, np.int64)  # no previous lists: no bound
    K._pruned_search(X, scale_for_metric(X, w, "sqeuclidean"), w, np.zeros((n, n)), zero, zero, zero, codes, unknown,
                     unknown, 1e-14, k, metric_code("sqeuclidean"), n * n, hi, hd, mi, md)
    ref = nearest_hits_misses(X, codes, w, k, "sqeuclidean")
    for got, want in ((hi, ref.hit_idx), (mi, ref.miss_idx), (hd, ref.hit_dist), (md, ref.miss_dist)):
        np.testing.assert_array_equal(got, want)
