"""The engine's tie rule: the order of neighbours is a function of the data, not of the last bits.

Integer data, standardised and weighted, has many pairs of candidates at distances that are equal
in exact arithmetic (``x - 1`` and ``x + 1``) but a few units of roundoff apart in floating point,
where the order depends on the bits of the standardisation and of the weights (which another CPU's
SIMD functions and BLAS round differently).  The reference is exact: each distance in rational
arithmetic from the integers and the float scales, ordered by (distance, index).
"""

from fractions import Fraction

import numpy as np
import pytest

from knnweights import ReliefF
from knnweights.classifiers import KNNClassifier
from knnweights.engine.neighbors import nearest, nearest_by_class, nearest_hits_misses, tie_tolerance


def _problem(seed, n=48, d=3, levels=5):
    rng = np.random.default_rng(seed)
    R = rng.integers(0, levels, size=(n, d))
    y = rng.integers(0, 2, size=n)
    w = rng.uniform(0.2, 1.0, size=d)
    return R, y, w


def _standardise(R, variant):
    """Two standardisations of the same integers, as two CPUs could round them: equal up to the last bits."""
    R = R.astype(np.float64)
    if variant == 0:
        mu, sd = R.mean(axis=0), R.std(axis=0)
    else:  # another summation order, and scales a few units of roundoff away
        mu = np.array([sum(sorted(c, reverse=True)) / c.size for c in R.T])
        sd = np.sqrt(np.array([sum((c - m) ** 2 for c in col) for col, m in zip(R.T, mu, strict=True)]) / R.shape[0])
        sd = sd * (1 + 3 * 2.0**-52)
    return (R - mu) / sd, sd


def _perturbed(w, variant):
    if variant == 0:
        return w
    return w * (1 + np.random.default_rng(7).integers(-4, 5, size=w.size) * 2.0**-52)


def _exact_distances(R, i, sd, w, metric):
    """Exact distances from row ``i`` (``Fraction``), of the standardised and weighted data."""
    out = []
    for j in range(R.shape[0]):
        s = Fraction(0)
        for f in range(R.shape[1]):
            delta = abs(int(R[i, f]) - int(R[j, f]))
            if metric == "manhattan":
                s += Fraction(float(w[f])) / Fraction(float(sd[f])) * delta
            else:
                s += Fraction(float(w[f])) / Fraction(float(sd[f])) ** 2 * delta * delta
        out.append(s)
    return out


def _exact_lists(R, y, sd, w, metric, k):
    """Reference hit and miss lists: the k smallest (exact distance, index), the sample itself left out."""
    hits, misses = [], []
    for i in range(R.shape[0]):
        exact = _exact_distances(R, i, sd, w, metric)
        order = sorted((j for j in range(R.shape[0]) if j != i), key=lambda j: (exact[j], j))
        hits.append([j for j in order if y[j] == y[i]][:k])
        misses.append([j for j in order if y[j] != y[i]][:k])
    return np.array(hits), np.array(misses)


@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
@pytest.mark.parametrize("seed", [0, 1])
def test_hit_and_miss_lists_are_the_exact_order_on_every_rounding(metric, seed):
    R, y, w = _problem(seed)
    k = 4
    for variant in (0, 1):
        Z, sd = _standardise(R, variant)
        wv = _perturbed(w, variant)
        ref_h, ref_m = _exact_lists(R, y, sd, wv, metric, k)
        nb = nearest_hits_misses(Z, y, wv, k, metric)
        np.testing.assert_array_equal(nb.hit_idx, ref_h)
        np.testing.assert_array_equal(nb.miss_idx, ref_m)
        idx, _ = nearest_by_class(Z, y, wv, k, metric)
        for c in (0, 1):
            np.testing.assert_array_equal(idx[y == c, c], ref_h[y == c])
            np.testing.assert_array_equal(idx[y != c, c], ref_m[y != c])


@pytest.mark.parametrize("metric", ["manhattan", "euclidean"])
def test_knn_neighbours_are_the_exact_order_on_every_rounding(metric):
    R, y, _ = _problem(5, n=60)
    train, query = np.arange(40), np.arange(40, 60)
    ones = np.ones(R.shape[1])
    for variant in (0, 1):
        Z, sd = _standardise(R, variant)
        idx, _ = KNNClassifier(5, metric=metric).fit(Z[train], y[train]).kneighbors(Z[query])
        m = "manhattan" if metric == "manhattan" else "sqeuclidean"
        for q, i in enumerate(query):
            exact = _exact_distances(R, i, sd, ones, m)
            ref = sorted(train, key=lambda j: (exact[j], j))[:5]
            np.testing.assert_array_equal(idx[q], ref)
        np.testing.assert_array_equal(idx, nearest(Z[query], Z[train], None, 5, m)[0])


def test_relieff_weights_do_not_depend_on_the_standardisations_last_bits():
    R, _, _ = _problem(11, n=80, d=4)
    y = (R[:, 0] + R[:, 1] > 4).astype(int)
    w0 = ReliefF(n_neighbors=5).fit(_standardise(R, 0)[0], y).feature_importances_
    w1 = ReliefF(n_neighbors=5).fit(_standardise(R, 1)[0], y).feature_importances_
    np.testing.assert_allclose(w1, w0, rtol=1e-12, atol=1e-15)


def test_tolerance_is_zero_for_integer_data_and_scales_with_the_rows():
    A = np.array([[1.0, -2.0], [0.5, 0.0]])
    np.testing.assert_allclose(tie_tolerance(A, "manhattan"), 2.0**-51 * 10 * np.array([3.0, 0.5]))
    np.testing.assert_allclose(tie_tolerance(A, "sqeuclidean"), 2.0**-51 * 10 * np.array([5.0, 0.25]))
    np.testing.assert_array_equal(tie_tolerance(np.array([[3, 1]], dtype=np.uint8), "manhattan"), [0.0])


def test_distances_further_apart_than_the_tolerance_keep_their_order():
    # continuous data: the lists are those of a stable sort of the computed distances
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(70, 6)), rng.integers(0, 3, size=70)
    nb = nearest_hits_misses(X, y, None, 3, "manhattan")
    D = np.abs(X[:, None] - X[None]).sum(axis=2)
    np.fill_diagonal(D, np.inf)
    for i in range(70):
        order = np.argsort(D[i], kind="stable")
        np.testing.assert_array_equal(nb.hit_idx[i], [j for j in order if y[j] == y[i]][:3])
        np.testing.assert_array_equal(nb.miss_idx[i], [j for j in order if y[j] != y[i]][:3])
