import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from knnweights import ReliefF, datasets


def test_every_bundled_dataset_loads_with_its_recorded_size():
    for name in datasets.list_datasets():
        info = datasets.dataset_info(name)
        if info["n"] * info["d"] > 2_000_000:  # the big microarrays are checked in test_big_microarrays
            continue
        X, y = datasets.load(name, return_X_y=True)
        assert X.shape == (info["n"], info["d"]), name
        assert len(np.unique(y)) == info["classes"], name


@pytest.mark.parametrize("name", ["colon_alon", "breast_vantveer"])
def test_big_microarrays_and_missing_values(name):
    b = datasets.load(name)
    assert b.data.shape == (datasets.dataset_info(name)["n"], datasets.dataset_info(name)["d"])
    if name == "breast_vantveer":
        assert np.isnan(b.data).sum() == 36458
        Xm, _ = datasets.load(name, return_X_y=True, missing="median")
        assert np.isfinite(Xm).all()
        Xd, _ = datasets.load(name, return_X_y=True, missing="drop_features")
        assert Xd.shape[1] == 24481 - 10934


def test_aliases_and_unknown_name():
    X, y = datasets.load("colon_alon1999", return_X_y=True)
    assert X.shape == (62, 2000) and sorted(np.bincount(np.unique(y, return_inverse=True)[1])) == [22, 40]
    with pytest.raises(ValueError, match="unknown dataset"):
        datasets.load("mnist")


def test_spiral_labels_depend_on_first_two_features_only():
    X, y = datasets.make_spiral(random_state=0, n_irrelevant=5)
    assert X.shape == (400, 7) and np.bincount(y).tolist() == [200, 200]
    assert cross_val_score(KNeighborsClassifier(1), X[:, :2], y, cv=5).mean() > 0.9
    X2, _ = datasets.make_spiral(random_state=0, n_irrelevant=5)
    np.testing.assert_array_equal(X, X2)


def test_add_irrelevant_features_is_seeded():
    X = np.zeros((10, 2))
    a = datasets.add_irrelevant_features(X, 3, random_state=1)
    assert a.shape == (10, 5) and np.array_equal(a, datasets.add_irrelevant_features(X, 3, random_state=1))
    assert abs(a[:, 2:].std() - 1) < 0.5


def test_load_as_frame_keeps_names_and_matches_the_arrays():
    X, y = datasets.load("wpbc", return_X_y=True)
    Xf, yf = datasets.load("wpbc", return_X_y=True, as_frame=True)
    assert isinstance(Xf, pd.DataFrame) and isinstance(yf, pd.Series) and yf.name == "label"
    assert Xf.columns[:2].tolist() == ["time", "mean_radius"] and Xf.shape == X.shape
    np.testing.assert_array_equal(Xf.to_numpy(), X)
    np.testing.assert_array_equal(yf.to_numpy(), y)
    b = datasets.load("breast_cancer_wisconsin_original", as_frame=True, missing="median")
    assert list(b.frame.columns) == [*b.feature_names, "label"] and not b.frame.isna().any().any()
    assert b.data.columns.tolist() == b.feature_names.tolist()
    # the names reach the weighters: get_feature_names_out, and errors name the column
    assert list(ReliefF(n_neighbors=3).fit(b.data, b.target).get_feature_names_out()) == list(b.feature_names)
    raw = datasets.load("breast_cancer_wisconsin_original", as_frame=True)
    with pytest.raises(ValueError, match="NaN in column 'bare_nuclei'"):
        ReliefF().fit(raw.data, raw.target)
