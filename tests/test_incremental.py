"""Incremental hit / miss search: the lists of nearest_hits_misses, exactly, at a fraction of the pairs."""

import numpy as np
import pytest

import knnweights.weighters.lhrelief as lh
from knnweights import LHRelief
from knnweights.engine import config_context
from knnweights.engine.incremental import IncrementalHitMiss, _pruned_hits_misses
from knnweights.engine.neighbors import metric_code, nearest_hits_misses, scale_for_metric, tie_tolerance


@pytest.fixture(autouse=True)
def _search_small_problems(monkeypatch):
    """These problems are below the size where the search is used by default (IncrementalHitMiss._MIN_WORK)."""
    monkeypatch.setattr(IncrementalHitMiss, "_MIN_WORK", 0)


def _reference(X, codes, w, k, metric):
    support = w > 0
    Xs = X if support.all() else np.ascontiguousarray(X[:, support])
    return nearest_hits_misses(Xs, codes, w[support], k, metric)


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
@pytest.mark.parametrize("n, d, n_classes, decimals", [(300, 18, 7, None), (400, 5, 3, 1), (320, 57, 2, None),
                                                       (200, 300, 2, None)])
def test_lists_equal_the_full_search(metric, n, d, n_classes, decimals):
    rng = np.random.RandomState(n + d)
    X = rng.randn(n, d)
    if decimals is not None:  # many tied distances: the lists' order is decided by the index
        X = np.round(X, decimals)
    codes = rng.randint(0, n_classes, n)
    codes[:3] = n_classes  # a class with fewer hits than k (missing places, -1)
    search = IncrementalHitMiss(X, codes, metric)
    w = rng.rand(d)
    w /= np.linalg.norm(w)
    for it in range(40):
        k = 5 if it < 30 else 7  # a new k: a full pass
        w = np.maximum(w + rng.randn(d) * (1e-5 if it % 9 else 1e-1), 0.0)  # now and then a large move
        if it % 4 == 0:
            w[rng.randint(d)] = 0.0  # zero weights: the distance runs over the support only
        w /= np.linalg.norm(w)
        hi, mi = search(w, k)
        ref = _reference(X, codes, w, k, metric)
        np.testing.assert_array_equal(hi, ref.hit_idx)
        np.testing.assert_array_equal(mi, ref.miss_idx)
    assert search.n_pruned >= 25 and search.n_full >= 3


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
@pytest.mark.parametrize("n, d", [(150, 16), (130, 57), (77, 21), (90, 700)])
def test_candidate_distances_are_the_full_pass_arithmetic(metric, n, d):
    """Every pair a candidate (no bound): the lists and the distances equal the full pass's, bit for bit
    (every engine kernel sums a distance's terms in the same order, without reassociation)."""
    rng = np.random.RandomState(d)
    X = rng.randn(n, d)
    codes = rng.randint(0, 3, n).astype(np.int64)
    w = rng.rand(d)
    k = n // 3
    hi, mi = np.empty((n, k), np.int64), np.empty((n, k), np.int64)
    hd, md = np.empty((n, k)), np.empty((n, k))
    zero, unknown = np.zeros(n), np.full((n, k), -1, np.int64)  # no previous lists: no bound
    A = scale_for_metric(X, w, metric)
    total = _pruned_hits_misses(X, A, w, np.zeros((n, n)), zero, zero, tie_tolerance(A, metric), codes, unknown,
                                unknown, 1e-14, k, metric_code(metric), 1.0, hi, hd, mi, md)
    assert total == n * (n - 1)
    ref = nearest_hits_misses(X, codes, w, k, metric)
    np.testing.assert_array_equal(hi, ref.hit_idx)
    np.testing.assert_array_equal(mi, ref.miss_idx)
    np.testing.assert_array_equal(hd, ref.hit_dist)
    np.testing.assert_array_equal(md, ref.miss_dist)


def test_settling_weights_skip_most_pairs_and_large_moves_back_off():
    rng = np.random.RandomState(0)
    n, d = 600, 8
    X = rng.randn(n, d)
    codes = (X[:, 0] + 0.5 * rng.randn(n) > 0).astype(int)
    w = np.full(d, d**-0.5)
    search = IncrementalHitMiss(X, codes)
    for it in range(30):  # converging weights: steps shrink geometrically
        w = np.abs(w + rng.randn(d) * 0.3 * 0.5**it)
        w /= np.linalg.norm(w)
        search(w, 5)
    assert search.n_pruned >= 20
    jumpy = IncrementalHitMiss(X, codes)
    for _ in range(30):  # weights drawn afresh every call: the bound never pays
        w = rng.rand(d)
        hi, mi = jumpy(w, 5)
    ref = _reference(X, codes, w, 5, "manhattan")
    np.testing.assert_array_equal(hi, ref.hit_idx)
    assert jumpy.n_full >= 25  # backed off: 1, 2, 4, 8 ... full passes between tries


def test_small_working_memory_falls_back_to_the_plain_search():
    rng = np.random.RandomState(1)
    X = rng.randn(200, 4)
    codes = rng.randint(0, 2, 200)
    with config_context(working_memory=0.1):  # D0 (200 x 200 float64 = 0.3 MiB) does not fit
        search = IncrementalHitMiss(X, codes)
        for _ in range(3):
            w = rng.rand(4)
            hi, mi = search(w, 3)
    assert search.n_full == search.n_pruned == 0
    ref = _reference(X, codes, w, 3, "manhattan")
    np.testing.assert_array_equal(hi, ref.hit_idx)
    np.testing.assert_array_equal(mi, ref.miss_idx)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("update", ["multiplicative", "additive"])
def test_lhrelief_weights_are_those_of_the_plain_search(update, monkeypatch):
    """The fit with the incremental search and with one full search per iteration: the same bits."""
    rng = np.random.RandomState(3)
    n = 400
    X = np.hstack([rng.randn(n, 3), rng.randn(n, 12)])
    y = (X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0).astype(int)
    made = []

    class Recording(IncrementalHitMiss):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(lh, "IncrementalHitMiss", Recording)
    est = LHRelief(n_neighbors=5, update=update, max_iter=60)
    w_inc = est.fit(X, y).feature_importances_
    assert made[-1].n_pruned >= 10  # the fit did skip pairs
    counts = []

    class Plain:  # one full nearest_hits_misses per iteration, as before the incremental search
        def __init__(self, X, y, metric):
            self.X, self.y = X, y
            counts.append(0)

        def __call__(self, w, k):
            counts[-1] += 1
            nb = _reference(self.X, self.y, w, k, "manhattan")
            return nb.hit_idx, nb.miss_idx

    monkeypatch.setattr(lh, "IncrementalHitMiss", Plain)
    w_plain = LHRelief(n_neighbors=5, update=update, max_iter=60).fit(X, y).feature_importances_
    assert counts and counts[-1] == est.n_iter_
    np.testing.assert_array_equal(w_inc, w_plain)


def test_small_problems_take_the_plain_search(monkeypatch):
    """Below ``_MIN_WORK`` operations a pass (milliseconds) every call is nearest_hits_misses; above, the search."""
    monkeypatch.setattr(IncrementalHitMiss, "_MIN_WORK", 2**22)
    rng = np.random.RandomState(2)
    for (n, d), used in [((100, 10), False), ((300, 100), True)]:
        X = rng.randn(n, d)
        codes = rng.randint(0, 2, n)
        search = IncrementalHitMiss(X, codes)
        w = rng.rand(d)
        hi, mi = search(w, 3)
        assert (search.n_full + search.n_pruned > 0) == used
        ref = _reference(X, codes, w, 3, "manhattan")
        np.testing.assert_array_equal(hi, ref.hit_idx)
        np.testing.assert_array_equal(mi, ref.miss_idx)
