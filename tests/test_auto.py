"""AutoWeightedKNN: the inner search keeps planted features, fits each weighter once per inner fold, and its
choice, refit and saved model agree with its own cv_results_."""

import io
import pickle

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import knnweights
from knnweights import AutoWeightedKNN, ReliefF
from knnweights.classifiers import WeightedKNN
from knnweights.evaluation import feature_count_grid
from knnweights.evaluation.auto import KeepTopWeights
from knnweights.evaluation.protocols import derive_seed


class CountingReliefF(ReliefF):
    """ReliefF that counts its fits (class-level: clones share the count)."""

    fits = 0

    def fit(self, X, y, **kwargs):
        type(self).fits += 1
        return super().fit(X, y, **kwargs)


@pytest.fixture(scope="module")
def planted(informative_problem):
    X, y = informative_problem(n=120, n_informative=3, n_noise=40, random_state=1)
    return X, y


@pytest.fixture(scope="module")
def fitted(planted):
    X, y = planted
    return AutoWeightedKNN(weighters=["ReliefF", "MultiSURF", None], random_state=0).fit(X, y)


def test_keeps_the_planted_features(fitted):
    assert fitted.best_params_["weighter"] in ("ReliefF", "MultiSURF")
    assert set(range(3)) <= set(fitted.selected_features_.tolist())
    # the chosen count is on the default log grid, and the planted features rank first
    assert fitted.best_params_["n_features"] in feature_count_grid(43)
    assert set(np.argsort(fitted.ranking_)[:3]) == {0, 1, 2}


def test_best_params_are_the_argmax_of_cv_results(fitted):
    res = fitted.cv_results_
    i = int(np.argmax(res["mean_test_score"]))
    assert fitted.best_index_ == i
    assert fitted.best_params_ == res["params"][i]
    assert fitted.best_score_ == res["mean_test_score"][i]
    assert res["rank_test_score"][i] == 1
    splits = np.column_stack([res[f"split{f}_test_score"] for f in range(fitted.n_splits_)])
    np.testing.assert_allclose(res["mean_test_score"], splits.mean(axis=1))
    np.testing.assert_allclose(res["std_test_score"], splits.std(axis=1))
    # no weighting is one configuration per k (all features)
    plain = [p for p in res["params"] if p["weighter"] == "None"]
    assert {p["n_features"] for p in plain} == {43}
    # ReliefF and MultiSURF have q-values: one more configuration each, the features of q <= 0.05
    assert len(res["params"]) == 2 * (len(feature_count_grid(43)) + 1) * 6 + 6
    assert {p["weighter"] for p in res["params"] if p["n_features"] == "q<=0.05"} == {"ReliefF", "MultiSURF"}


def test_refit_is_the_chosen_configuration(fitted, planted):
    X, y = planted
    p = fitted.best_params_
    model = fitted.best_estimator_
    assert isinstance(model.weighter, KeepTopWeights)
    assert model.n_neighbors == p["n_neighbors"]
    assert model.weighter_.support_.sum() == p["n_features"] == fitted.support_.sum()
    np.testing.assert_array_equal(fitted.predict(X), model.predict(X))
    np.testing.assert_allclose(fitted.predict_proba(X).sum(axis=1), 1.0)


def test_each_weighter_is_fitted_once_per_inner_fold(planted):
    X, y = planted
    CountingReliefF.fits = 0
    model = AutoWeightedKNN(weighters=[CountingReliefF(), None], n_features=[1, 2, 3, 5, 10, 43],
                            n_neighbors=[1, 3, 5, 9], cv=4, random_state=0).fit(X, y)
    refit = 1 if model.best_params_["weighter"] == "CountingReliefF" else 0
    assert CountingReliefF.fits == 4 + refit  # not 4 * 6 * 4 (one per grid point)


def test_pickle_and_joblib_round_trips_predict_alike(fitted, planted):
    X, _ = planted
    expected = fitted.predict(X)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), expected)
    buf = io.BytesIO()
    joblib.dump(fitted, buf)
    buf.seek(0)
    np.testing.assert_array_equal(joblib.load(buf).predict(X), expected)


def test_same_seed_same_choice(planted):
    X, y = planted
    a = AutoWeightedKNN(weighters=["Simba", None], n_features=[3, 10], random_state=3).fit(X, y)
    b = AutoWeightedKNN(weighters=["Simba", None], n_features=[3, 10], random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_dataframe_names_and_missing_columns(planted):
    X, y = planted
    cols = [f"g{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    model = AutoWeightedKNN(weighters=["ReliefF"], n_features=[3], n_neighbors=[5], random_state=0).fit(df, y)
    assert list(model.feature_names_in_) == cols
    assert set(model.selected_features_) == {"g0", "g1", "g2"}
    with pytest.raises(ValueError, match="columns the model was fitted on"):
        model.predict(df.drop(columns=["g1"]))


def test_continuous_target_uses_regression(informative_problem):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 20))
    y = 2 * X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=100)
    model = AutoWeightedKNN(n_neighbors=[3, 5], random_state=0).fit(X, y)
    assert model.regression_
    assert set(model.weighters_) <= set(knnweights.REGRESSION_WEIGHTERS) | {"None"}
    assert isinstance(model.best_estimator_, knnweights.WeightedKNNRegressor)
    assert {0, 1} <= set(model.selected_features_.tolist())
    assert model.score(X, y) > 0.8
    assert not hasattr(model, "predict_proba")
    with pytest.raises(ValueError, match="continuous target"):
        AutoWeightedKNN(weighters=["Simba"]).fit(X, y)


@pytest.mark.parametrize("y, match", [
    (np.zeros(30, dtype=int), "at least 2 classes"),
    (np.r_[np.zeros(27, dtype=int), np.ones(3, dtype=int)], "lower cv"),
])
def test_clear_errors_on_bad_labels(y, match):
    X = np.random.default_rng(0).normal(size=(30, 4))
    with pytest.raises(ValueError, match=match):
        AutoWeightedKNN(weighters=["ReliefF"]).fit(X, y)


def test_clear_errors_on_no_features_and_unknown_weighter():
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="no features"):
        AutoWeightedKNN().fit(np.empty((20, 0)), y)
    with pytest.raises(ValueError, match="Unknown weighter"):
        AutoWeightedKNN(weighters=["NoSuchMethod"]).fit(np.ones((20, 2)) * np.arange(20)[:, None], y)


def test_q_value_configuration_keeps_the_significant_features(informative_problem):
    X, y = informative_problem(n=120, n_informative=3, n_noise=200, random_state=2)
    CountingReliefF.fits = 0
    model = AutoWeightedKNN(weighters=[CountingReliefF()], n_features=[203], n_neighbors=[5], cv=5,
                            random_state=0).fit(X, y)
    assert CountingReliefF.fits == 5 + 1  # the q-values come from the same fit as the weights
    assert [p["n_features"] for p in model.cv_results_["params"]] == [203, "q<=0.05"]
    assert model.best_params_["n_features"] == "q<=0.05"
    q = ReliefF(pvalues=True).fit(X, y).qvalues_
    np.testing.assert_array_equal(model.support_, q <= 0.05)
    assert {0, 1, 2} <= set(model.selected_features_.tolist())
    # off: no q configuration, and the weighter is fitted as given
    off = AutoWeightedKNN(weighters=["ReliefF"], n_features=[203], n_neighbors=[5], max_qvalue=None).fit(X, y)
    assert [p["n_features"] for p in off.cv_results_["params"]] == [203]
    assert off.best_estimator_.weighter_.weighter_.get_params()["pvalues"] is False


def test_shared_search_scores_equal_a_grid_search_refitting_every_point(planted):
    # the fit-once search must score exactly what refitting the weighter for every grid point would
    X, y = planted
    counts, ks = [1, 3, 10, 43], [1, 5, 9]
    auto = AutoWeightedKNN(weighters=["MultiSURF"], n_features=counts, n_neighbors=ks, max_qvalue=None,
                           random_state=0).fit(X, y)
    cv = StratifiedKFold(5, shuffle=True, random_state=derive_seed(0, "inner-cv"))
    grid = GridSearchCV(WeightedKNN(KeepTopWeights(knnweights.MultiSURF())),
                        {"weighter__n_features": counts, "n_neighbors": ks}, cv=cv).fit(X, y)
    theirs = {(p["weighter__n_features"], p["n_neighbors"]): s
              for p, s in zip(grid.cv_results_["params"], grid.cv_results_["mean_test_score"], strict=True)}
    mine = {(p["n_features"], p["n_neighbors"]): s
            for p, s in zip(auto.cv_results_["params"], auto.cv_results_["mean_test_score"], strict=True)}
    assert mine.keys() == theirs.keys()
    for key, score in theirs.items():
        assert mine[key] == pytest.approx(score, abs=1e-12), key


# -- covariates: adjusted for in the q-value selection, never features of the model ----------------------------------
def _confounded(n, seed):
    """A covariate ``c`` drives ``y`` and the three features 0-2 (its shadows); feature 23 drives ``y`` beside it;
    20 noise features between."""
    rng = np.random.default_rng(seed)
    c, x_sig = rng.normal(size=n), rng.normal(size=n)
    lin = 1.5 * c + 1.0 * x_sig + rng.normal(size=n)
    X = np.hstack([c[:, None] + 0.5 * rng.normal(size=(n, 3)), rng.normal(size=(n, 20)), x_sig[:, None]])
    return X, (lin > np.median(lin)).astype(int), pd.DataFrame({"c": c})


class RowCheckingReliefF(ReliefF):
    """ReliefF that records whether each fit got covariates, and checks that they are the rows of its ``X`` (the
    covariate of the tests is ``2 * X[:, 24] + 1``)."""

    fits = []

    def fit(self, X, y, covariates=None, **kwargs):
        if covariates is not None:
            np.testing.assert_allclose(np.asarray(covariates)[:, 0], 2 * np.asarray(X)[:, 24] + 1)
        type(self).fits.append(covariates is not None)
        return super().fit(X, y, covariates=covariates, **kwargs)


class QRecordingReliefF(ReliefF):
    """ReliefF that records the features of ``q <= 0.05`` of each fit: the q-value configuration's selection."""

    selections = []

    def fit(self, X, y, covariates=None, **kwargs):
        super().fit(X, y, covariates=covariates, **kwargs)
        type(self).selections.append(set(np.flatnonzero(self.qvalues_ <= 0.05).tolist()))
        return self


def test_covariates_adjust_the_q_selection_and_drop_the_confounded_features():
    X, y, C = _confounded(160, 2)
    kw = dict(weighters=[QRecordingReliefF()], n_features=[X.shape[1]], n_neighbors=[5], cv=3, random_state=0)
    found = {}
    for adjust in (False, True):
        QRecordingReliefF.selections = []
        found[adjust] = AutoWeightedKNN(**kw).fit(X, y, covariates=C if adjust else None)
        sel = QRecordingReliefF.selections
        assert len(sel) == 3 + (found[adjust].best_params_["weighter"] == "QRecordingReliefF")
        confounded = sum(len(s & {0, 1, 2}) for s in sel)  # the covariate's shadows selected, over the fits
        if adjust:  # adjusted for the covariate, its shadows are null features; the real effect stays
            assert confounded <= 1 and all(23 in s for s in sel)
        else:  # unadjusted, they are "significant" in every fit
            assert confounded >= len(sel) and all(s & {0, 1, 2} for s in sel)
    adjusted = found[True]
    seed = adjusted.weighters_["QRecordingReliefF"].random_state
    q = ReliefF(pvalues=True, random_state=seed).fit(X, y, covariates=C).qvalues_
    np.testing.assert_allclose(adjusted.best_estimator_.weighter_.weighter_.qvalues_, q)  # the refit is adjusted too
    # the model uses X alone: it predicts without the covariates
    assert adjusted.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(adjusted.predict(X), adjusted.best_estimator_.predict(X))


def test_covariates_reach_the_relief_candidates_with_each_folds_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 25))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    C = pd.DataFrame({"c": 2 * X[:, 24] + 1}, index=np.arange(100, 160))  # its own index: rows taken by position
    RowCheckingReliefF.fits = []
    # MultiSURF without max_qvalue computes no p-values: it gets X alone (its fit would refuse covariates)
    model = AutoWeightedKNN(weighters=[RowCheckingReliefF(), knnweights.MultiSURF(), None], n_features=[2, 25],
                            n_neighbors=[3], cv=3, random_state=0).fit(X, y, covariates=C)
    refit = model.best_params_["weighter"] == "RowCheckingReliefF"
    assert RowCheckingReliefF.fits == [True] * (3 + refit)
    with pytest.raises(ValueError, match="none has them"):
        AutoWeightedKNN(weighters=["Simba", None], n_features=[2], cv=3).fit(X, y, covariates=C)
    with pytest.raises(ValueError, match="none has them"):  # no q-value selection: ReliefF computes no p-values
        AutoWeightedKNN(weighters=["ReliefF"], max_qvalue=None, n_features=[2], cv=3).fit(X, y, covariates=C)
    with pytest.raises(ValueError, match="covariates has 59 rows but X has 60"):
        AutoWeightedKNN(weighters=["ReliefF"], n_features=[2], cv=3).fit(X, y, covariates=C.iloc[1:])


# -- progress ---------------------------------------------------------------------------------------------------------
def test_progress_bar_on_stderr_only_when_asked_and_the_same_result(planted, capsys):
    X, y = planted
    kw = dict(weighters=["ReliefF", None], n_features=[3, 43], n_neighbors=[3, 5], cv=3, random_state=0)
    capsys.readouterr()
    quiet = AutoWeightedKNN(progress=False, **kw).fit(X, y)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    shown = AutoWeightedKNN(progress=True, **kw).fit(X, y)
    out = capsys.readouterr()
    assert out.out == "" and "AutoWeightedKNN" in out.err and "7/7" in out.err  # 3 folds x 2 candidates + the refit
    assert shown.best_params_ == quiet.best_params_
    np.testing.assert_array_equal(shown.cv_results_["mean_test_score"], quiet.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(shown.predict(X), quiet.predict(X))
