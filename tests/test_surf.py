"""SURF and MultiSURF: the definition (brute force), skrebate, recovery, invariances, blocks, float32."""

import numpy as np
import pytest

from knnweights import SURF, MultiSURF, config_context

METHODS = {"SURF": SURF, "MultiSURF": MultiSURF}


def reference_scores(X, y, method, multiclass="prior", normalize=True, strict=True):
    """Scores written straight from the definition, one instance and one neighbour at a time."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    rng = np.ptp(X, axis=0)
    Z = X / np.where(rng > 0, rng, 1.0) if normalize else X
    D = np.array([[np.abs(Z[i] - Z[j]).sum() for j in range(n)] for i in range(n)])
    classes = np.unique(y)
    prior = {c: np.mean(y == c) for c in classes}
    W = np.zeros(d)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        if method == "SURF":
            T = D.mean()  # the n x n matrix, zero diagonal included
        else:
            T = D[i, others].mean() - D[i, others].std() / 2
        near = [j for j in others if (D[i, j] < T if strict else D[i, j] <= T)]
        hits = [j for j in near if y[j] == y[i]]
        if hits:
            W -= sum(np.abs(Z[i] - Z[j]) for j in hits) / len(hits)
        misses = {c: [j for j in near if y[j] == c] for c in classes if c != y[i]}
        misses = {c: js for c, js in misses.items() if js}
        m = sum(len(js) for js in misses.values())
        for c, js in misses.items():
            if multiclass == "prior":
                a = prior[c] / sum(prior[k] for k in misses)
            else:
                a = (len(classes) - 1) * (len(js) / m) ** 2
            W += a * sum(np.abs(Z[i] - Z[j]) for j in js) / len(js)
    return W / n


def _data(n=60, d=5, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + X[:, 1] * X[:, 2]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("multiclass", ["prior", "rebate"])
def test_matches_brute_force_definition(name, n_classes, multiclass):
    X, y = _data(n_classes=n_classes, seed=n_classes)
    y = np.where(np.arange(y.size) % 7 == 0, 0, y)  # unequal class sizes
    ours = METHODS[name](multiclass=multiclass).fit(X, y).scores_
    np.testing.assert_allclose(ours, reference_scores(X, y, name, multiclass), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", METHODS)
def test_matches_brute_force_without_normalization(name):
    X, y = _data(n=40, seed=5)
    ours = METHODS[name](normalize=False).fit(X, y).scores_
    np.testing.assert_allclose(ours, reference_scores(X, y, name, normalize=False), rtol=1e-10, atol=1e-13)


def test_surf_threshold_is_strict_at_exact_ties():
    # integers with range 4 in every column: every normalised distance and the mean are exact
    rng = np.random.default_rng(116)
    X = rng.integers(0, 5, size=(16, 3)).astype(float)
    X[0], X[1] = 0.0, 4.0
    y = np.arange(16) % 2
    est = SURF().fit(X, y)
    D = np.abs(X[:, None] / 4 - X[None] / 4).sum(-1)
    assert est.threshold_ == D.mean() == 1.25
    assert np.count_nonzero(D[~np.eye(16, dtype=bool)] == est.threshold_) > 0  # there are ties to exclude
    np.testing.assert_allclose(est.scores_, reference_scores(X, y, "SURF"), rtol=1e-12, atol=1e-15)
    assert not np.allclose(est.scores_, reference_scores(X, y, "SURF", strict=False))


def test_multisurf_threshold_is_strict_at_exact_ties():
    # sample 0's distances (x 1/4) are 1, 1, 2, 3, 3, 3, 3, 4: mean 5/2, std 1, T_0 = 2 = its distance to x = 2
    x = np.array([0.0, 1, 1, 2, 3, 3, 3, 3, 4])
    X = np.c_[x, 2 * x]
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 1])
    ours = MultiSURF().fit(X, y).scores_
    np.testing.assert_allclose(ours, reference_scores(X, y, "MultiSURF"), rtol=1e-12, atol=1e-15)
    assert not np.allclose(ours, reference_scores(X, y, "MultiSURF", strict=False))


@pytest.mark.parametrize("name", METHODS)
def test_agrees_with_skrebate(name):
    skrebate = pytest.importorskip("skrebate")
    for n_classes in (2, 3):
        X, y = _data(n=50, d=4, n_classes=n_classes, seed=10 + n_classes)
        theirs = getattr(skrebate, name)(n_jobs=1).fit(X, y).feature_importances_
        np.testing.assert_allclose(METHODS[name](multiclass="rebate").fit(X, y).scores_, theirs,
                                   rtol=1e-8, atol=1e-14)
        prior = METHODS[name]().fit(X, y).scores_
        if n_classes == 2:  # the class weighting matters only with three classes or more
            np.testing.assert_allclose(prior, theirs, rtol=1e-8, atol=1e-14)
        else:
            assert not np.allclose(prior, theirs)
            assert np.corrcoef(prior, theirs)[0, 1] > 0.9


@pytest.mark.parametrize("name", METHODS)
def test_recovers_five_informative_features(name, informative_problem):
    X, y = informative_problem(n=200, n_informative=5, n_noise=30)
    w = METHODS[name]().fit(X, y).feature_importances_
    assert np.min(w[:5]) > 1.5 * np.max(w[5:])


@pytest.mark.parametrize("name", METHODS)
def test_detects_an_xor_interaction(name):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(200, 10))
    y = (X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)
    w = METHODS[name]().fit(X, y).feature_importances_
    assert min(w[0], w[1]) > 10 * np.max(w[2:])


@pytest.mark.parametrize("name", METHODS)
def test_invariant_to_feature_shift_and_scale(name):
    X, y = _data(n_classes=3, seed=3)
    scale = np.array([1e-3, 7.0, -2.0, 1e4, 0.5])
    ours = METHODS[name]().fit(X, y).scores_
    np.testing.assert_allclose(METHODS[name]().fit(X * scale + 100.0, y).scores_, ours, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("name", METHODS)
def test_row_blocks_give_the_same_neighbourhoods_and_scores(name):
    X, y = _data(n=70, d=6, n_classes=3, seed=4)
    whole = METHODS[name]().fit(X, y)  # the n x n matrices fit: one block, symmetric
    blocked = []
    for working_memory in (0.001, 0.02):  # 1 and 7 rows a block
        with config_context(working_memory=working_memory):
            blocked.append(METHODS[name]().fit(X, y))
    np.testing.assert_array_equal(blocked[0].scores_, blocked[1].scores_)
    # same distances and thresholds bit for bit, so the same neighbours; the sums run in another order
    np.testing.assert_allclose(blocked[0].scores_, whole.scores_, rtol=1e-12, atol=1e-16)
    attr = "threshold_" if name == "SURF" else "thresholds_"
    for est in blocked:
        np.testing.assert_array_equal(getattr(est, attr), getattr(whole, attr))


@pytest.mark.parametrize("name", METHODS)
def test_float32_input(name):
    X, y = _data(n=60, d=5, seed=6)
    w64 = METHODS[name]().fit(X, y).scores_
    est = METHODS[name]().fit(X.astype(np.float32), y)
    assert est.feature_importances_.dtype == np.float64
    np.testing.assert_allclose(est.scores_, w64, rtol=1e-4, atol=1e-6)
    assert est.transform(X.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("name", METHODS)
def test_instances_without_neighbours_add_nothing(name):
    X, y = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.5], [1.0, 0.5]]), np.array([0, 0, 1, 1])
    est = METHODS[name]().fit(X, y)
    np.testing.assert_allclose(est.scores_, reference_scores(X, y, name), atol=1e-15)
    assert np.all(np.isfinite(est.scores_))


def test_unknown_multiclass_option_is_rejected():
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="multiclass"):
        SURF(multiclass="mean").fit(X, y)
