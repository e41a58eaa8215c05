"""The Relief family: recovery, agreement with skrebate, invariances, iteration behaviour."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from knnweights import GFlip, IRelief, MulRel, Relief, ReliefF, Simba
from knnweights.engine.neighbors import weighted_distances
from knnweights.weighters._relief_margins import range_normalize, relieff_margins

FAST = {
    "Relief": Relief(),
    "ReliefF": ReliefF(n_neighbors=5),
    "IRelief": IRelief(sigma=2.0, max_iter=30),
    "MulRel": MulRel(n_rounds=20),
    "Simba": Simba(n_passes=3, random_state=0),
    "GFlip": GFlip(random_state=0),
}


# rank within which all 5 informative features (among 100 noise features) must fall;
# Relief uses a single neighbour, MulRel's re-weighted hard neighbours keep switching
# (the TN instability SQP-FW removes); by chance all 5 in the top 30 has p ~ 1.5e-3.
TOP = {"Relief": 10, "MulRel": 30}


@pytest.mark.parametrize("name", sorted(FAST))
def test_recovers_informative_features(name, informative_problem):
    X, y = informative_problem(n=300, n_informative=5, n_noise=100, random_state=1)
    w = FAST[name].fit(X, y).feature_importances_
    rank = np.argsort(np.argsort(-w, kind="stable"))
    assert rank[:5].max() < TOP.get(name, 5), (name, rank[:5])


def test_relief_matches_brute_force_definition():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 6)), rng.integers(0, 3, 40)
    Z = range_normalize(X)
    D = np.abs(Z[:, None] - Z[None]).sum(-1)
    np.fill_diagonal(D, np.inf)
    ref = np.zeros(6)
    for i in range(40):
        h = np.where(y == y[i], D[i], np.inf).argmin()
        m = np.where(y != y[i], D[i], np.inf).argmin()
        ref += np.abs(Z[i] - Z[m]) - np.abs(Z[i] - Z[h])
    np.testing.assert_allclose(Relief().fit(X, y).scores_, ref / 40, atol=1e-12)


def test_relieff_matches_robnik_sikonja_definition_multiclass():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(45, 5)), np.repeat([0, 1, 2], 15)
    k = 3
    Z = range_normalize(X)
    D = np.abs(Z[:, None] - Z[None]).sum(-1)
    np.fill_diagonal(D, np.inf)
    P = np.bincount(y) / len(y)
    ref = np.zeros(5)
    for i in range(45):
        for c in range(3):
            nn = np.lexsort((np.arange(45), np.where(y == c, D[i], np.inf)))[:k]
            contrib = np.abs(Z[i] - Z[nn]).mean(0)
            ref += -contrib if c == y[i] else P[c] / (1 - P[y[i]]) * contrib
    np.testing.assert_allclose(ReliefF(n_neighbors=k).fit(X, y).scores_, ref / 45, atol=1e-12)


def test_relieff_agrees_with_skrebate(informative_problem):
    skrebate = pytest.importorskip("skrebate")
    X, y = informative_problem(n=80, n_informative=3, n_noise=12, random_state=2)
    for k in (1, 5):
        ours = ReliefF(n_neighbors=k).fit(X, y).scores_
        theirs = skrebate.ReliefF(n_neighbors=k, n_jobs=1).fit(X, y).feature_importances_
        assert np.corrcoef(ours, theirs)[0, 1] > 0.999


def test_sampled_relief_is_seeded_and_converges_to_full_form(informative_problem):
    X, y = informative_problem(n=60, n_noise=10, random_state=3)
    a = Relief(n_iter=500, random_state=4).fit(X, y).scores_
    b = Relief(n_iter=500, random_state=4).fit(X, y).scores_
    np.testing.assert_array_equal(a, b)
    full = Relief().fit(X, y).scores_
    assert np.corrcoef(a, full)[0, 1] > 0.9


def test_relief_is_invariant_to_feature_shift_and_scale(informative_problem):
    X, y = informative_problem(n=60, n_noise=10, random_state=5)
    scale = np.linspace(0.1, 100, X.shape[1])
    for est in (Relief(), ReliefF(n_neighbors=3)):
        a = est.fit(X, y).scores_
        b = est.fit(X * scale + 7.0, y).scores_
        np.testing.assert_allclose(a, b, atol=1e-10)


def test_constant_feature_gets_zero_weight_never_nan(informative_problem):
    X, y = informative_problem(n=50, n_noise=5, random_state=6)
    X[:, 3] = 4.2
    for est in FAST.values():
        w = est.fit(X, y).feature_importances_
        assert np.all(np.isfinite(w)) and w[3] == 0.0, type(est).__name__


def test_irelief_fixed_point_and_unit_norm(informative_problem):
    X, y = informative_problem(n=80, n_noise=8, random_state=7)
    est = IRelief(sigma=2.0, max_iter=200, tol=1e-10, normalize=False).fit(X, y)
    w = est.feature_importances_
    assert np.isclose(np.linalg.norm(w), 1.0)
    assert est.cost_history_[-1] < 1e-10 and est.n_iter_ < 200
    again = IRelief(sigma=2.0, max_iter=1).fit  # one more update from w reproduces w
    from knnweights.engine.neighbors import soft_margins
    from knnweights.weighters._base import normalize_weights
    sm = soft_margins(X, y, w, 2.0, sample_weight=IRelief._inlier_probability)
    np.testing.assert_allclose(normalize_weights(sm.z), w, atol=1e-8)
    assert callable(again)


def test_iterative_methods_warn_at_max_iter(informative_problem):
    X, y = informative_problem(n=60, n_noise=20, random_state=8)
    for est in (IRelief(sigma=0.5, max_iter=1, tol=0), GFlip(max_iter=1, random_state=0)):
        with pytest.warns(ConvergenceWarning, match="max_iter"):
            est.fit(X, y)


def test_mulrel_uses_weighted_neighbours(informative_problem):
    X, y = informative_problem(n=80, n_noise=30, random_state=9)
    w1 = MulRel(n_rounds=1).fit(X, y)
    plain = np.maximum(relieff_margins(range_normalize(X), y, 1, per_class=False), 0)
    np.testing.assert_allclose(w1.feature_importances_, plain / np.linalg.norm(plain), atol=1e-12)


def _diagonal_rule(seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(300, 60)
    return X, np.sign(X[:, 3] - X[:, 17] + 0.5 * rng.randn(300)).astype(int)


def test_mulrel_reports_the_two_cycle_whose_ends_rank_different_relevant_features_first():
    # y = sign(x3 - x17 + noise): the rounds alternate between weights led by x3 and by x17
    X, y = _diagonal_rule(0)
    with pytest.warns(ConvergenceWarning, match="2-cycle.*led by feature (3|17) and by feature (17|3)"):
        est = MulRel().fit(X, y)
    assert est.stop_reason_ == "cycle"
    ends = est.cycle_weights_
    np.testing.assert_array_equal(ends[1], est.feature_importances_)
    assert sorted(int(np.argmax(e)) for e in ends) == [3, 17]
    # each end alone buries the other relevant feature; the pair holds both
    assert sorted(np.argsort(-ends.mean(axis=0))[:2].tolist()) == [3, 17]
    # the parity of n_rounds picks the end: one more round leads with the other feature
    more = MulRel(n_rounds=101)
    with pytest.warns(ConvergenceWarning):
        more.fit(X, y)
    assert int(np.argmax(more.feature_importances_)) != int(np.argmax(est.feature_importances_))


def test_simba_margin_improves_over_uniform(informative_problem):
    X, y = informative_problem(n=100, n_informative=2, n_noise=20, random_state=10)
    est = Simba(n_passes=2, n_init=3, random_state=0).fit(X, y)
    from knnweights.weighters.simba import _sum_hypothesis_margins

    uniform = _sum_hypothesis_margins(X, y, np.ones(X.shape[1]) / X.shape[1] * est.feature_importances_.sum())
    assert est.margin_ > uniform


def test_gflip_evaluation_increases_and_matches_brute_force(informative_problem):
    X, y = informative_problem(n=60, n_informative=2, n_noise=6, random_state=11)
    est = GFlip(random_state=0).fit(X, y)
    assert np.all(np.diff(est.cost_history_) >= -1e-12)
    F = est.support_
    D = np.sqrt(weighted_distances(X, w=F.astype(float), metric="sqeuclidean"))
    np.fill_diagonal(D, np.inf)
    same = y[:, None] == y[None]
    theta = 0.5 * (np.where(~same, D, np.inf).min(1) - np.where(same, D, np.inf).min(1))
    assert np.isclose(theta.sum(), est.cost_history_[-1])
    assert F[:2].all()


def _expression_like(n=80, d=600, n_planted=30, seed=0):
    """Expression-scale data (hundreds to thousands), 30 planted genes with a 1.6-fold change."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.lognormal(6, 1.0, size=d) * rng.lognormal(0, 0.3, size=(n, d))
    X[:, :n_planted] *= np.where(y[:, None] == 1, 1.6, 1.0)
    return X, y


def test_irelief_auto_sigma_is_scale_free_and_finds_planted_genes():
    import warnings

    X, y = _expression_like()
    auto = IRelief(max_iter=30).fit(X, y)
    assert auto.n_iter_ < 30  # converged
    assert (np.argsort(-auto.feature_importances_)[:30] < 30).sum() >= 27
    # the same data in other units: same sigma relative to the data, same weights
    again = IRelief(max_iter=30).fit(X * 1e-3, y)
    np.testing.assert_allclose(again.feature_importances_, auto.feature_importances_, atol=1e-10)
    # the old default (sigma=1 in the data's units, no normalisation) fails on this scale, and its warning says why
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        old = IRelief(sigma=1.0, normalize=False, max_iter=30).fit(X, y)
    assert (np.argsort(-old.feature_importances_)[:30] < 30).sum() < 20
    msgs = [str(r.message) for r in rec if issubclass(r.category, ConvergenceWarning)]
    assert msgs and "sigma=1 is small" in msgs[0] and "increase max_iter" not in msgs[0]


def test_irelief_auto_sigma_with_normalize_false_follows_units():
    X, y = _expression_like(d=100, seed=1)
    a = IRelief(normalize=False, max_iter=5, tol=0).fit(X, y)
    b = IRelief(normalize=False, max_iter=5, tol=0).fit(X * 10.0, y)
    assert np.isclose(b.sigma_, 10 * a.sigma_)
    np.testing.assert_allclose(a.feature_importances_, b.feature_importances_, atol=1e-10)


def test_irelief_verbose_prints_one_line_per_iteration(capsys, informative_problem):
    X, y = informative_problem(n=60, n_noise=5, random_state=12)
    est = IRelief(max_iter=3, tol=0, verbose=1).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[IRelief]")]
    assert len(lines) == est.n_iter_ == 3


def test_mulrel_verbose_prints_one_line_per_round_and_keeps_the_weights(capsys, informative_problem):
    X, y = informative_problem(n=60, n_noise=5, random_state=12)
    quiet = MulRel(n_rounds=4).fit(X, y)
    capsys.readouterr()
    est = MulRel(n_rounds=4, verbose=1).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[MulRel] round")]
    assert len(lines) == est.n_iter_ == len(est.cost_history_)
    assert f"step {est.cost_history_[-1]:.3e}" in lines[-1]
    np.testing.assert_array_equal(est.feature_importances_, quiet.feature_importances_)


def test_irelief_folded_pass_equals_soft_margins(informative_problem):
    from knnweights.engine._kernels_mixed import PlainDiff
    from knnweights.engine.neighbors import soft_margins

    X, y = informative_problem(n=70, n_noise=6, random_state=13)
    w = np.random.default_rng(0).random(X.shape[1])
    ref = soft_margins(X, y, w, 0.7, sample_weight=IRelief._inlier_probability).z
    ours = IRelief()._margin_sum(PlainDiff(X), y, w, 0.7, np.empty(70))
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_relief_classes_share_normalize_default():
    from knnweights import SURF, MultiSURF

    for cls in (Relief, ReliefF, IRelief, MulRel, SURF, MultiSURF):
        assert cls().get_params()["normalize"] is True, cls.__name__
