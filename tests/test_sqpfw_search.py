"""SQP-FW's working-set refresh (the engine's incremental search, squared Euclidean, zero weights, changing k)
gives nearest_hits_misses' lists exactly."""

import numpy as np
import pytest

from knnweights.engine.incremental import IncrementalHitMiss
from knnweights.engine.neighbors import nearest_hits_misses


@pytest.fixture(autouse=True)
def _search_small_problems(monkeypatch):
    """These problems are below the size where the search is used by default (IncrementalHitMiss._MIN_WORK)."""
    monkeypatch.setattr(IncrementalHitMiss, "_MIN_WORK", 0)


@pytest.mark.parametrize("n, d, n_classes, decimals", [(300, 18, 7, None), (400, 5, 3, 1), (320, 57, 2, None)])
def test_pruned_search_equals_the_full_one(n, d, n_classes, decimals):
    rng = np.random.RandomState(n + d)
    X = rng.randn(n, d)
    if decimals is not None:  # many tied distances: the lists' order is decided by the index
        X = np.round(X, decimals)
    codes = rng.randint(0, n_classes, n).astype(np.int64)
    codes[:3] = n_classes  # a class with fewer hits than k (missing places, -1)
    search = IncrementalHitMiss(X, codes, "sqeuclidean")
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
