"""The weighter contract: clear errors on bad input, transform, sklearn integration."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_selection import SelectFromModel
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

import knnweights
from knnweights import ReliefF, Simba
from knnweights.classifiers import CKNN, HKNN, ExpectedDistanceClassifier, KNNClassifier, WeightedKNN
from knnweights.engine.neighbors import weighted_distances


def test_nan_and_inf_name_the_column(informative_problem):
    X, y = informative_problem(n=30, n_noise=5)
    X[4, 7] = np.nan
    with pytest.raises(ValueError, match=r"NaN in column 7"):
        ReliefF(n_neighbors=1).fit(X, y)
    X[4, 7] = 0.0
    X[2, 2] = np.inf
    with pytest.raises(ValueError, match=r"infinity \(inf\) in column 2"):
        ReliefF(n_neighbors=1).fit(X, y)


def test_dataframe_errors_name_the_column(informative_problem):
    pd = pytest.importorskip("pandas")
    X, y = informative_problem(n=30, n_noise=5)
    df = pd.DataFrame(X, columns=[f"gene{j}" for j in range(X.shape[1])])
    df.iloc[4, 7] = np.nan
    with pytest.raises(ValueError, match=r"NaN in column 'gene7' \(1 value"):
        ReliefF(n_neighbors=1).fit(df, y)
    df.iloc[4, 7] = np.inf
    with pytest.raises(ValueError, match=r"infinity \(inf\) in column 'gene7'"):
        ReliefF(n_neighbors=1).fit(df, y)
    df.iloc[4, 7] = 0.0
    df.insert(3, "batch", ["B1", "B2", "B3"] * 10)
    with pytest.raises(ValueError, match=r"^Input X: column 'batch' is not numeric \(value 'B1'\)"):
        ReliefF(n_neighbors=1).fit(df, y)
    with pytest.raises(ValueError, match=r"column 3 is not numeric \(value 'B1'\)"):
        ReliefF(n_neighbors=1).fit(df.to_numpy(dtype=object), y)
    # numbers stored as strings still convert; transform names the column too
    est = ReliefF(n_neighbors=1).fit(df.drop(columns="batch").astype(str), y)
    with pytest.raises(ValueError, match=r"column 'batch' is not numeric"):
        est.transform(df.iloc[:, :-1].rename(columns={"batch": "batch"}))


def test_missing_labels_say_y(informative_problem):
    pd = pytest.importorskip("pandas")
    X, y = informative_problem(n=30, n_noise=5)
    yf = y.astype(float)
    yf[6] = np.nan
    with pytest.raises(ValueError, match=r"^y \(the class labels\) contains 1 missing value.*sample 6"):
        ReliefF(n_neighbors=1).fit(X, yf)
    ys = pd.Series(np.where(y == 1, "tumour", "normal"), dtype=object)
    ys[2] = None
    with pytest.raises(ValueError, match=r"^y \(the class labels\).*sample 2"):
        ReliefF(n_neighbors=1).fit(X, ys)
    with pytest.raises(ValueError, match="y has 1 class"):
        ReliefF(n_neighbors=1).fit(X, ["a"] * 30)


def _bad_inputs():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), np.arange(20) % 2
    with_nan, with_inf = X.copy(), X.copy()
    with_nan[3, 1], with_inf[5, 2] = np.nan, np.inf
    y_nan = np.where(np.arange(20) == 3, np.nan, y.astype(float))
    return {"NaN in X": (with_nan, y), "inf in X": (with_inf, y), "y None": (X, None),
            "continuous y": (X, rng.normal(size=20)), "lengths": (X, y[:10]), "NaN in y": (X, y_nan),
            "text column": (pd.DataFrame({"a": X[:, 0], "b": ["x"] * 20}), y), "overflow": (X * 1e160, y),
            "no feature": (X[:, :0], y), "1-d X": (X[:, 0], y)}


def test_weighters_and_classifiers_give_the_same_error_for_the_same_bad_input():
    estimators = [Simba(), knnweights.NCADiagonal(max_iter=5), HKNN(n_neighbors=1), CKNN(n_neighbors=1),
                  KNNClassifier(1), ExpectedDistanceClassifier()]
    for case, (X, y) in _bad_inputs().items():
        messages = set()
        for est in estimators:
            with pytest.raises(ValueError) as info:
                est.fit(X, y)
            messages.add(str(info.value).replace(type(est).__name__, "<estimator>"))
        assert len(messages) == 1, (case, messages)


def test_one_class_and_singleton_class_and_large_k(informative_problem):
    X, y = informative_problem(n=30, n_noise=5)
    with pytest.raises(ValueError, match="at least 2 classes; y has 1 class"):
        ReliefF(n_neighbors=1).fit(X, np.zeros(30))
    y2 = y.copy()
    y2[0] = 7
    with pytest.raises(ValueError, match="class 7 has 1 sample"):
        ReliefF(n_neighbors=1).fit(X, y2)
    with pytest.raises(ValueError, match="n_neighbors=40 is larger than the number of hits"):
        ReliefF(n_neighbors=40, small_classes="error").fit(X, y)
    with pytest.warns(UserWarning, match="n_neighbors=40 is larger than the number of hits.*Clamped"):
        ReliefF(n_neighbors=40).fit(X, y)


def test_invalid_parameter_is_named(informative_problem):
    X, y = informative_problem(n=30, n_noise=5)
    with pytest.raises(ValueError, match="n_neighbors"):
        ReliefF(n_neighbors=0).fit(X, y)


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=3), Simba(random_state=0)])
def test_transform_reproduces_weighted_knn(est, informative_problem):
    X, y = informative_problem(n=60, n_noise=10, random_state=1)
    est.fit(X, y)
    Xt = est.transform(X)
    metric = est.metric_
    w = est.feature_importances_
    D_weighted = weighted_distances(X, w=w, metric=metric)
    D_plain = weighted_distances(Xt, metric=metric)
    np.testing.assert_allclose(D_plain, D_weighted, rtol=1e-10, atol=1e-10)
    est.fit(X[:40], y[:40])
    knn = KNeighborsClassifier(1, metric="manhattan" if metric == "manhattan" else "euclidean")
    knn.fit(est.transform(X[:40]), y[:40])
    wk = WeightedKNN(est, n_neighbors=1).fit(X[:40], y[:40])
    np.testing.assert_array_equal(knn.predict(est.transform(X[40:])), wk.predict(X[40:]))


def test_pipeline_gridsearch_clone_selectfrommodel(informative_problem):
    X, y = informative_problem(n=200, n_informative=3, n_noise=20, random_state=2)
    pipe = make_pipeline(ReliefF(), KNeighborsClassifier(3, metric="manhattan"))
    gs = GridSearchCV(pipe, {"relieff__n_neighbors": [1, 5]}, cv=3).fit(X, y)
    assert gs.best_params_["relieff__n_neighbors"] in (1, 5)
    est = ReliefF(n_neighbors=4)
    c = clone(est)
    assert c.get_params() == est.get_params()
    est.fit(X, y)
    assert est.n_neighbors == 4  # parameters are never changed by fit
    sel = SelectFromModel(ReliefF(n_neighbors=3), max_features=3, threshold=-np.inf).fit(X, y)
    assert set(np.flatnonzero(sel.get_support())) == {0, 1, 2}
    assert cross_val_score(WeightedKNN(ReliefF(n_neighbors=3), 3), X, y, cv=3).mean() > 0.6


def test_feature_names_and_float32(informative_problem):
    pd = pytest.importorskip("pandas")
    X, y = informative_problem(n=40, n_noise=3)
    df = pd.DataFrame(X, columns=[f"gene{j}" for j in range(X.shape[1])])
    est = ReliefF(n_neighbors=2).fit(df, y)
    assert list(est.get_feature_names_out()) == list(df.columns)
    assert est.transform(X.astype(np.float32)).dtype == np.float32


def test_weighters_registry_is_complete():
    expected = {"IM4E", "LHRelief", "SQPFW", "MDM", "EFW", "ERelief", "Relief", "ReliefF", "IRelief", "Simba",
                "GFlip", "MulRel", "Logo", "NCADiagonal"}
    assert expected <= set(knnweights.WEIGHTERS)
    assert all(knnweights.WEIGHTERS[k].__name__ == k for k in knnweights.WEIGHTERS)


def test_l2_norm_is_exact_so_weights_do_not_follow_the_blas():
    """The weights' normaliser sums the (rounded) squares exactly: any order of the terms (a BLAS kernel's
    choice) gives the same bits, and the value is the correctly rounded sum's root."""
    from fractions import Fraction

    from knnweights.weighters._base import l2_norm, normalize_weights

    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.standard_normal(rng.integers(2, 300)) * 10.0 ** rng.integers(-3, 4)
        exact = float(sum(Fraction(float(x * x)) for x in v))  # the squares' sum, correctly rounded
        assert l2_norm(v) == np.sqrt(exact)
        for perm in (rng.permutation(v.size), np.arange(v.size)[::-1]):
            assert l2_norm(v[perm]) == l2_norm(v)
            np.testing.assert_array_equal(normalize_weights(v[perm]), normalize_weights(v)[perm])
