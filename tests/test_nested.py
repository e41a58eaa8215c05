"""nested_evaluate and the stability index: honest estimates where a leaky protocol is not, intervals that
cover an independent test set's accuracy, the consensus list, and Nogueira et al.'s index against its formula."""

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.model_selection import StratifiedKFold, cross_val_score

from knnweights import AutoWeightedKNN
from knnweights.classifiers import KNNClassifier
from knnweights.evaluation import nested_evaluate, selection_stability

FAST = {"weighters": ["ReliefF", None], "n_neighbors": [1, 5, 9], "cv": 3}


def test_consensus_holds_the_planted_features(informative_problem):
    X, y = informative_problem(n=100, n_informative=3, n_noise=30, random_state=2)
    res = nested_evaluate(AutoWeightedKNN(**FAST), X, y, cv=(5, 1), random_state=0, progress=False)
    assert {0, 1, 2} <= set(res.consensus)
    assert (res.selection_frequency[[0, 1, 2]] == 1.0).all()
    assert set(res.mean_rank.index[:3]) == {0, 1, 2}
    assert res.interval[0] < res.estimate < res.interval[1]
    assert list(res.summary.index) == ["estimator", "kNN", "L1 logistic"]
    assert len(res.scores) == len(res.choices) == 5
    assert set(res.choices.columns) >= {"weighter", "n_features", "n_neighbors", "inner_score", "n_selected"}
    # the intersection is a subset of the majority consensus
    strict = nested_evaluate(AutoWeightedKNN(**FAST), X, y, cv=(5, 1), baselines=False, consensus="all",
                             random_state=0, progress=False)
    assert set(strict.consensus) <= set(res.consensus) and {0, 1, 2} <= set(strict.consensus)


def test_interval_covers_an_independent_test_accuracy_in_most_seeds(informative_problem):
    covered = 0
    seeds = range(4)
    for seed in seeds:
        X, y = informative_problem(n=1080, n_informative=3, n_noise=12, random_state=10 + seed)
        train, test = slice(0, 80), slice(80, None)
        model = AutoWeightedKNN(**FAST, random_state=seed)
        res = nested_evaluate(model, X[train], y[train], cv=(5, 2), baselines=False, random_state=seed,
                              progress=False)
        truth = model.fit(X[train], y[train]).score(X[test], y[test])
        covered += res.interval[0] <= truth <= res.interval[1]
    assert covered >= 3, covered


def test_leaky_selection_is_optimistic_and_nested_is_not():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 500))
    y = np.repeat([0, 1], 30)
    # leaky: the features are chosen on all samples, test folds included, then the kNN is cross-validated
    keep = SelectKBest(f_classif, k=20).fit(X, y).get_support()
    leaky = cross_val_score(KNNClassifier(n_neighbors=5), X[:, keep], y,
                            cv=StratifiedKFold(5, shuffle=True, random_state=0)).mean()
    assert leaky > 0.75
    model = AutoWeightedKNN(weighters=["ReliefF"], n_features=[20, 500], n_neighbors=[5], cv=3)
    res = nested_evaluate(model, X, y, cv=(5, 2), baselines=False, random_state=0, progress=False)
    assert res.interval[0] <= 0.5 <= res.interval[1]
    assert res.estimate < leaky - 0.15


def test_continuous_target_scores_r2_and_rmse():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 10))
    y = X[:, 0] + 0.2 * rng.normal(size=80)
    res = nested_evaluate(AutoWeightedKNN(weighters=["ReliefF", None], n_neighbors=[3, 5], cv=3), X, y,
                          cv=(4, 1), random_state=0, progress=False)
    assert res.metric == "r2"
    assert list(res.summary.index) == ["estimator", "kNN", "random forest"]
    assert {"rmse", "rmse_low", "rmse_high"} <= set(res.summary.columns)
    assert res.estimate > 0.5
    assert 0 in res.consensus


def test_clear_errors():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="at least 2 classes"):
        nested_evaluate(AutoWeightedKNN(), X, np.zeros(20, dtype=int))
    with pytest.raises(ValueError, match="fewer than the 5 outer folds"):
        nested_evaluate(AutoWeightedKNN(), X, np.r_[np.zeros(17, dtype=int), np.ones(3, dtype=int)])
    with pytest.raises(ValueError, match="consensus"):
        nested_evaluate(AutoWeightedKNN(), X, np.repeat([0, 1], 10), consensus=0)


def test_stability_of_identical_sets_is_one():
    Z = np.array([[1, 0, 1, 0, 0]] * 4, dtype=bool)
    s = selection_stability(Z)
    assert s.value == 1.0 and s.variance == pytest.approx(0.0, abs=1e-15)


def test_stability_matches_a_hand_computed_example():
    # M = 3 sets over d = 4 features: {0, 1}, {0, 2}, {0, 1, 3}
    Z = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0, 1]])
    # p = (1, 2/3, 1/3, 1/3); s_f^2 = 3/2 p (1 - p) = (0, 1/3, 1/3, 1/3), mean 1/4
    # kbar = 7/3, kbar/d = 7/12, (7/12)(5/12) = 35/144; Phi = 1 - (1/4) / (35/144) = 1 - 36/35
    s = selection_stability(Z)
    assert s.value == pytest.approx(1 - 36 / 35)
    # phi_i by the variance formula, written out for set 0 ({0, 1}, k = 2)
    p, kbar, d, phi_hat = np.array([1, 2 / 3, 1 / 3, 1 / 3]), 7 / 3, 4, 1 - 36 / 35
    def phi(z):
        k = z.sum()
        return ((z @ p) / d - k * kbar / d**2 + phi_hat / 2 * (2 * k * kbar / d**2 - k / d - kbar / d + 1)) / (35 / 144)
    phis = np.array([phi(z) for z in Z])
    assert s.variance == pytest.approx(4 / 9 * np.sum((phis - phis.mean()) ** 2))
    half = 1.959963984540054 * np.sqrt(s.variance)
    assert (s.low, s.high) == pytest.approx((s.value - half, s.value + half))


def test_stability_of_disjoint_sets_is_low_and_random_sets_near_zero():
    disjoint = selection_stability(np.eye(4, dtype=bool))
    assert disjoint.value < 0
    rng = np.random.default_rng(0)
    Z = np.zeros((200, 100), dtype=bool)
    for row in Z:
        row[rng.choice(100, 10, replace=False)] = True
    s = selection_stability(Z)
    assert abs(s.value) < 0.05 and s.low < 0 < s.high


def test_a_killed_run_resumes_from_its_store_to_the_same_result(tmp_path, monkeypatch):
    """Each finished outer split is stored; a rerun computes only the splits missing and gives the same result."""
    from knnweights.evaluation import nested

    rng = np.random.default_rng(3)
    X = rng.normal(size=(48, 12))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    model = AutoWeightedKNN(weighters=["ReliefF", None], n_features=[2, 12], n_neighbors=[1, 3], cv=3)
    kw = dict(cv=(3, 2), random_state=0, progress=False)
    fresh = nested_evaluate(model, X, y, **kw)
    path = tmp_path / "store.jsonl"
    nested_evaluate(model, X, y, store=path, **kw)
    lines = path.read_text().splitlines()
    assert len(lines) == 6
    path.write_text("\n".join(lines[:4]) + "\n" + lines[4][:25])  # killed while writing the fifth split
    calls = []
    real = nested._outer_split
    monkeypatch.setattr(nested, "_outer_split", lambda *a, **k: calls.append(1) or real(*a, **k))
    resumed = nested_evaluate(model, X, y, store=path, **kw)
    assert len(calls) == 2
    pd.testing.assert_frame_equal(resumed.scores, fresh.scores)
    pd.testing.assert_frame_equal(resumed.summary, fresh.summary)
    pd.testing.assert_frame_equal(resumed.feature_table(), fresh.feature_table())
    assert resumed.consensus == fresh.consensus and resumed.stability == fresh.stability
    calls.clear()
    other = nested_evaluate(model.set_params(n_neighbors=[1, 5]), X, y, store=path, **kw)  # other parameters
    assert len(calls) == 6 and len(path.read_text().splitlines()) == 12
    assert other.choices["n_neighbors"].isin([1, 5]).all()


def test_covariates_go_to_the_estimator_with_each_outer_parts_rows(tmp_path, monkeypatch):
    from knnweights import ReliefF
    from knnweights.evaluation import nested, selection_pipeline

    class RowCheckingReliefF(ReliefF):
        fits = 0

        def fit(self, X, y, covariates=None, **kwargs):
            # the pipeline scaled X: the covariate (feature 0, unscaled) is a line of its rows' feature 0
            assert np.corrcoef(np.asarray(covariates)[:, 0], np.asarray(X)[:, 0])[0, 1] > 1 - 1e-9
            type(self).fits += 1
            return super().fit(X, y, covariates=covariates, **kwargs)

    rng = np.random.default_rng(4)
    X = rng.normal(size=(48, 10))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    C = pd.DataFrame({"age": X[:, 0]})
    model = selection_pipeline([RowCheckingReliefF(), None], cv=3, random_state=0)
    model.set_params(choose__n_features=[2, 10], choose__n_neighbors=[3])
    kw = dict(cv=(3, 1), random_state=0, progress=False)
    X = pd.DataFrame(X, columns=[f"g{j}" for j in range(10)])
    res = nested_evaluate(model, X, y, covariates=C, store=tmp_path / "s.jsonl", **kw)
    assert RowCheckingReliefF.fits >= 3 * 3  # every outer part's inner folds, all given their rows' covariates
    assert list(res.selected.columns) == [f"g{j}" for j in range(10)]  # covariates are not features
    # the store keys on the covariates too: others recompute every split, the same ones none
    calls = []
    real = nested._outer_split
    monkeypatch.setattr(nested, "_outer_split", lambda *a, **k: calls.append(1) or real(*a, **k))
    nested_evaluate(model, X, y, covariates=C, store=tmp_path / "s.jsonl", **kw)
    assert calls == []
    nested_evaluate(model, X, y, covariates=2 * C, store=tmp_path / "s.jsonl", **kw)
    assert len(calls) == 3
    with pytest.raises(ValueError, match="takes no covariates"):
        nested_evaluate(KNNClassifier(), X, y, covariates=C, baselines=False, **kw)


def test_progress_bar_of_the_outer_loop_only(capsys):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 6))
    y = (X[:, 0] > 0).astype(int)
    model = AutoWeightedKNN(weighters=["ReliefF"], n_features=[2], n_neighbors=[3], cv=2, progress=True)
    kw = dict(cv=(2, 1), baselines=False, random_state=0)
    capsys.readouterr()
    quiet = nested_evaluate(model, X, y, progress=False, **kw)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # the estimator's own bar is off inside the outer loop
    shown = nested_evaluate(model, X, y, progress=True, **kw)
    err = capsys.readouterr().err
    assert "nested CV" in err and "AutoWeightedKNN" not in err
    pd.testing.assert_frame_equal(shown.scores, quiet.scores)
    pd.testing.assert_frame_equal(shown.choices, quiet.choices)
