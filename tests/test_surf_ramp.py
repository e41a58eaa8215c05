"""SURF and MultiSURF with the ramp ``diff`` (``diff="ramp"``) against plain loops written from the definitions."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from ramp_reference import ramp_diff_function

from knnweights import SURF, MultiSURF


def _neighbourhoods(X, rule, t_eq, t_diff, disc, rows):
    """``{i: [j, ...]}`` of the scored ``rows``: SURF's ``d_ij < T`` with ``T`` the mean of the rows' distances
    to every sample (self included), MultiSURF's ``d_ij < mean_i - std_i / 2`` over the ``n - 1`` others."""
    n = X.shape[0]
    diff = ramp_diff_function(X, t_eq, t_diff, disc)
    dist = {i: [float(diff(i, j).sum()) for j in range(n)] for i in rows}
    if rule == "mean":
        T = {i: sum(sum(dist[r]) for r in rows) / (len(rows) * n) for i in rows}
    else:
        T = {}
        for i in rows:
            others = [dist[i][j] for j in range(n) if j != i]
            mean = sum(others) / (n - 1)
            T[i] = mean - np.sqrt(sum((v - mean) ** 2 for v in others) / (n - 1)) / 2
    near = {i: [j for j in range(n) if j != i and dist[i][j] < T[i]] for i in rows}
    return near, diff, T


def _reference(X, y, rule, t_eq, t_diff, multiclass="prior", disc=(), rows=None):
    """SURF / MultiSURF weights for class labels, loop by loop (the formula of :class:`SURF`)."""
    n, d = X.shape
    rows = list(range(n)) if rows is None else list(rows)
    near, diff, T = _neighbourhoods(X, rule, t_eq, t_diff, disc, rows)
    classes = list(np.unique(y))
    prior = {c: np.mean(y == c) for c in classes}
    W = np.zeros(d)
    for i in rows:
        hits = [j for j in near[i] if y[j] == y[i]]
        for j in hits:
            W -= diff(i, j) / len(hits)
        misses = {c: [j for j in near[i] if y[j] == c] for c in classes if c != y[i]}
        present = [c for c in misses if misses[c]]
        m_total = sum(len(misses[c]) for c in present)
        for c in present:
            if multiclass == "prior":
                a = prior[c] / sum(prior[q] for q in present)
            else:
                a = (len(classes) - 1) * (len(misses[c]) / m_total) ** 2
            for j in misses[c]:
                W += a * diff(i, j) / len(misses[c])
    return W / len(rows), np.array([T[i] for i in rows])


def _reference_continuous(X, y, rule, t_eq, t_diff):
    """The continuous-endpoint rule: a neighbour is a hit when ``|y_i - y_j| < std(y, ddof=1)``."""
    n, d = X.shape
    near, diff, T = _neighbourhoods(X, rule, t_eq, t_diff, (), range(n))
    s_y = np.std(y, ddof=1)
    W = np.zeros(d)
    for i in range(n):
        hits = [j for j in near[i] if abs(y[i] - y[j]) < s_y]
        misses = [j for j in near[i] if abs(y[i] - y[j]) >= s_y]
        for j in hits:
            W -= diff(i, j) / len(hits)
        for j in misses:
            W += diff(i, j) / len(misses)
    return W / n


@pytest.fixture
def data():
    rs = np.random.RandomState(0)
    X = rs.normal(size=(36, 5))
    y = rs.randint(0, 3, size=36)
    X[:, 0] += y  # one relevant feature
    return X, y


RAMPS = [(0.04, 0.1), (0.1, 0.5), (0.0, 0.3)]
ESTIMATORS = [(SURF, "mean"), (MultiSURF, "mean-std/2")]


@pytest.mark.parametrize("ramp", RAMPS)
@pytest.mark.parametrize(("cls", "rule"), ESTIMATORS)
@pytest.mark.parametrize("multiclass", ["prior", "rebate"])
def test_ramp_matches_reference(data, cls, rule, ramp, multiclass):
    X, y = data
    est = cls(diff="ramp", ramp=ramp, multiclass=multiclass).fit(X, y)
    W, T = _reference(X, y, rule, *ramp, multiclass=multiclass)
    assert_allclose(est.scores_, W, rtol=1e-12, atol=1e-15)
    assert_allclose(est.threshold_ if cls is SURF else est.thresholds_, T[0] if cls is SURF else T, rtol=1e-12)


@pytest.mark.parametrize(("cls", "rule"), ESTIMATORS)
def test_ramp_binary_matches_reference(data, cls, rule):
    X, y = data
    y = (y > 0).astype(int)
    assert_allclose(cls(diff="ramp").fit(X, y).scores_, _reference(X, y, rule, 0.04, 0.1)[0], rtol=1e-12,
                    atol=1e-15)


@pytest.mark.parametrize(("cls", "rule"), ESTIMATORS)
def test_ramp_with_discrete_features(data, cls, rule):
    X, y = data
    X = X.copy()
    X[:, 4] = np.random.RandomState(1).randint(0, 3, size=X.shape[0])
    w = cls(diff="ramp", discrete_features=[4]).fit(X, y).scores_
    assert_allclose(w, _reference(X, y, rule, 0.04, 0.1, disc=(4,))[0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("cls", "rule"), ESTIMATORS)
def test_ramp_sampled_instances(data, cls, rule):
    X, y = data
    est = cls(diff="ramp", ramp=(0.05, 0.3), n_instances=12, random_state=0).fit(X, y)
    W, _ = _reference(X, y, rule, 0.05, 0.3, rows=est.instances_)
    assert est.instances_.size == 12
    assert_allclose(est.scores_, W, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("cls", "rule"), ESTIMATORS)
def test_ramp_in_small_blocks_matches_reference(data, cls, rule):
    """Row blocks of one sample (the working memory): the thresholds' second pass and the unfolded
    coefficients give the reference's weights."""
    import knnweights

    X, y = data
    with knnweights.config_context(working_memory=1e-4):
        w = cls(diff="ramp", ramp=(0.1, 0.5)).fit(X, y).scores_
    assert_allclose(w, _reference(X, y, rule, 0.1, 0.5)[0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("ramp", [(0.04, 0.1), (0.05, 0.4)])
@pytest.mark.parametrize(("cls", "rule"), ESTIMATORS)
def test_ramp_continuous_target_matches_reference(cls, rule, ramp):
    rs = np.random.RandomState(3)
    X = rs.normal(size=(34, 4))
    y = X[:, 0] + 0.3 * rs.normal(size=34)
    est = cls(diff="ramp", ramp=ramp).fit(X, y)
    assert est.target_type_ == "continuous"
    assert_allclose(est.scores_, _reference_continuous(X, y, rule, *ramp), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("cls", [SURF, MultiSURF])
def test_ramp_0_1_is_linear(data, cls):
    X, y = data
    assert_allclose(cls(diff="ramp", ramp=(0.0, 1.0)).fit(X, y).scores_, cls().fit(X, y).scores_, rtol=1e-10,
                    atol=1e-14)
    yc = X[:, 1] + 0.3 * np.random.RandomState(4).normal(size=X.shape[0])
    assert_allclose(cls(diff="ramp", ramp=(0.0, 1.0)).fit(X, yc).scores_, cls().fit(X, yc).scores_, rtol=1e-10,
                    atol=1e-14)


@pytest.mark.parametrize("cls", [SURF, MultiSURF])
@pytest.mark.parametrize("ramp", [(0.1, 0.1), (0.2, 0.1), (-0.1, 0.5), (0.1, 1.5), (0.1,), "ab"])
def test_ramp_validation(data, cls, ramp):
    X, y = data
    with pytest.raises(ValueError):
        cls(diff="ramp", ramp=ramp).fit(X, y)


@pytest.mark.parametrize("cls", [SURF, MultiSURF])
def test_bad_diff(data, cls):
    X, y = data
    with pytest.raises(ValueError, match="diff"):
        cls(diff="cubic").fit(X, y)


@pytest.mark.parametrize("cls", [SURF, MultiSURF])
def test_ramp_refusals(data, cls):
    X, y = data
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(NotImplementedError, match="missing"):
        cls(diff="ramp", missing="diff").fit(Xn, y)
    genotypes = np.random.RandomState(0).randint(0, 3, size=(20, 4)).astype(np.uint8)
    with pytest.raises(NotImplementedError, match="astype"):
        cls(diff="ramp", ramp=(0.1, 0.6)).fit(genotypes, y[:20])
    with pytest.raises(ValueError, match="genotype_diff"):
        cls(diff="ramp", genotype_diff="additive").fit(X, y)


@pytest.mark.parametrize("cls", [SURF, MultiSURF])
def test_ramp_changes_fingerprint(cls):
    from knnweights.evaluation.grid import fingerprint_view

    assert fingerprint_view(cls()) != fingerprint_view(cls(diff="ramp"))
    assert "diff" not in repr(fingerprint_view(cls()))
    assert "ramp" not in repr(fingerprint_view(cls()))
