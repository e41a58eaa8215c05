"""Feature elimination: halving with the count by internal CV, lowest-weight removal."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import ReliefF
from knnweights.evaluation import (
    HalvingElimination,
    RemoveLowestWeights,
    RepeatedCV,
    fit_cache,
    halving_counts,
    run_grid,
    weighter_pipeline,
)
from knnweights.evaluation.elimination import ranked_subsets


def _noisy(n=80, n_noise=120, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, 3 + n_noise))
    X[:, :3] += 1.5 * y[:, None]
    return X, y


def test_halving_counts_follow_im4e():
    assert halving_counts(2000) == [2000, 1000, 500, 250, 125, 62, 31]
    assert halving_counts(100) == [100, 50, 25]  # 50 is not "fewer than 50": halve once more
    assert halving_counts(49) == [49]
    assert halving_counts(7, min_features=2) == [7, 3, 1]
    assert halving_counts(1000, min_features=50, factor=0.25) == [1000, 250, 62, 15]


def test_halving_selects_few_informative_features():
    X, y = _noisy()
    # plain 1-NN after the cut (the weights only rank); 120 of 123 features are noise
    h = HalvingElimination(ReliefF(n_neighbors=5), estimator=KNeighborsClassifier(1), min_features=4, cv=5,
                           random_state=0).fit(X, y)
    assert h.counts_ == [123, 61, 30, 15, 7, 3]
    assert h.cv_scores_.shape == (6,)
    # the informative features survive and the small subsets beat all 123 features in the inner CV
    assert h.n_features_selected_ <= 15 and set(range(3)) <= set(h.get_support(indices=True).tolist())
    assert h.support_.dtype == bool and h.support_.sum() == h.n_features_selected_
    assert h.cv_scores_[-3:].max() > h.cv_scores_[0] + 0.1
    assert h.cv_scores_[h.counts_.index(h.n_features_selected_)] == pytest.approx(h.cv_scores_.max())
    # its test accuracy beats plain 1-NN on all features
    Xt, yt = _noisy(seed=1)
    assert h.score(Xt, yt) > KNeighborsClassifier(1).fit(X, y).score(Xt, yt) + 0.1
    # default classifier: the weighter retrained on the kept features, weighted 1-NN
    d = HalvingElimination(ReliefF(n_neighbors=5), min_features=100, cv=2, random_state=0).fit(X, y)
    assert type(d.estimator_).__name__ == "WeightedKNN" and d.estimator_.n_features_in_ == d.n_features_selected_


def test_halving_ranker_sees_inner_training_folds_only(tmp_path, recording_weighter, read_fit_log):
    X, y = _noisy(60, 20)
    log = str(tmp_path / "fits.jsonl")
    h = HalvingElimination(recording_weighter(log_path=log, random_state=0), estimator=KNeighborsClassifier(1),
                           min_features=4, cv=3, random_state=0).fit(X, y)
    sizes = [len(e["rows"]) for e in read_fit_log(log)]
    # one ranking per inner training fold (40 rows each) and one on all 60 rows; never a held-out row twice
    assert sizes == [40, 40, 40, 60]
    index = {tuple(r): i for i, r in enumerate(X.tolist())}
    seen = [{index[tuple(r)] for r in e["rows"]} for e in read_fit_log(log)[:3]]
    held_out = [set(range(60)) - s for s in seen]
    assert all(len(h_) == 20 for h_ in held_out) and set().union(*held_out) == set(range(60))
    assert h.predict(X).shape == (60,)


def test_recursive_elimination_with_svm_coefficients():
    X, y = _noisy(80, 40)
    counts = halving_counts(43, min_features=5)
    subsets = ranked_subsets(LinearSVC(C=1.0), X, y, counts, recursive=True)
    for big, small in zip(subsets, subsets[1:], strict=False):
        assert set(small.tolist()) < set(big.tolist())  # nested: each cut from the survivors
    assert [len(s) for s in subsets] == counts
    once = ranked_subsets(LinearSVC(C=1.0), X, y, counts, recursive=False)
    assert [len(s) for s in once] == counts
    h = HalvingElimination(LinearSVC(C=1.0), estimator=LinearSVC(C=1.0), min_features=5, cv=4, recursive=True,
                           random_state=0).fit(X, y)
    assert h.n_features_selected_ in counts


def test_remove_lowest_weights():
    X, y = _noisy(60, 7)
    rff = ReliefF(n_neighbors=5).fit(X, y)
    w = rff.feature_importances_
    full = RemoveLowestWeights(ReliefF(n_neighbors=5)).fit(X, y)
    np.testing.assert_allclose(full.transform(X), rff.transform(X), rtol=1e-5, atol=1e-8)
    half = RemoveLowestWeights(ReliefF(n_neighbors=5), share=0.5).fit(X, y)
    kept = half.get_support(indices=True)
    assert len(kept) == 5  # 10 - floor(0.5 * 10)
    assert w[kept].min() >= np.delete(w, kept).max()
    np.testing.assert_allclose(half.transform(X), rff.transform(X)[:, kept], rtol=1e-5, atol=1e-8)
    assert RemoveLowestWeights(ReliefF(), share=0.99).fit(X, y).get_support().sum() == 1
    assert half.metric_ == "manhattan"


def test_remove_lowest_weights_breaks_zero_ties_by_score():
    X, y = _noisy(60, 40)
    rff = ReliefF(n_neighbors=5).fit(X, y)
    zero = np.flatnonzero(rff.feature_importances_ == 0)
    n_pos = X.shape[1] - zero.size
    share = (zero.size - 2) / X.shape[1]  # keep the positive weights and two clipped features
    sel = RemoveLowestWeights(ReliefF(n_neighbors=5), share=share).fit(X, y)
    extra = set(sel.get_support(indices=True)) - set(np.flatnonzero(rff.feature_importances_ > 0))
    assert sel.get_support().sum() == n_pos + 2
    assert extra == set(zero[np.argsort(-rff.scores_[zero])[:2]].tolist())


def test_selectors_feature_names_and_pandas_output():
    pd = pytest.importorskip("pandas")
    X, y = _noisy(60, 7)
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(10)])
    rlw = RemoveLowestWeights(ReliefF(n_neighbors=5), share=0.7).set_output(transform="pandas").fit(df, y)
    out = rlw.transform(df)
    assert list(out.columns) == list(rlw.get_feature_names_out()) == ["g0", "g1", "g2"]
    np.testing.assert_allclose(out.to_numpy(), rlw.weighter_.transform(X)[:, :3])
    h = HalvingElimination(ReliefF(n_neighbors=5), KNeighborsClassifier(1), min_features=4, factor=0.5, cv=3,
                           random_state=0).set_output(transform="pandas").fit(df, y)
    Z = h.transform(df)
    assert list(Z.columns) == list(h.get_feature_names_out()) == [f"g{j}" for j in h.get_support(indices=True)]
    np.testing.assert_array_equal(Z.to_numpy(), X[:, h.support_])
    assert h.predict(df).shape == (60,)
    df["batch"] = "B1"
    with pytest.raises(ValueError, match=r"column 'batch' is not numeric \(value 'B1'\)"):
        RemoveLowestWeights(ReliefF()).fit(df, y)
    with pytest.raises(ValueError, match=r"column 'batch' is not numeric"):
        HalvingElimination(ReliefF()).fit(df, y)


def test_fit_cache_reuses_identical_fits_only(tmp_path, recording_weighter, read_fit_log):
    X, y = _noisy(40, 5)
    log = str(tmp_path / "fits.jsonl")
    rec = recording_weighter(log_path=log, random_state=0)
    with fit_cache():
        for share in (0.0, 0.25, 0.5):
            RemoveLowestWeights(rec, share=share).fit(X, y)
        RemoveLowestWeights(rec).fit(X[:30], y[:30])  # other rows: a new fit
    assert len(read_fit_log(log)) == 2
    for _ in range(2):  # outside a cache block nothing is reused
        RemoveLowestWeights(rec).fit(X, y)
    assert len(read_fit_log(log)) == 4
    unseeded = recording_weighter(log_path=log)  # random_state=None is never cached
    with fit_cache():
        RemoveLowestWeights(unseeded).fit(X, y)
        RemoveLowestWeights(unseeded).fit(X, y)
    assert len(read_fit_log(log)) == 6


def test_halving_in_the_runner_records_selected_counts():
    X, y = _noisy(90, 200)
    methods = {"halving": HalvingElimination(ReliefF(n_neighbors=5), KNeighborsClassifier(1), min_features=8, cv=2),
               "svm": weighter_pipeline(ReliefF(n_neighbors=5), LinearSVC(C=1.0), share=0.9),
               "1nn": KNeighborsClassifier(1)}
    rows = run_grid(methods, {"toy": (X, y)}, protocol=RepeatedCV(3, 1), random_state=0, as_frame=False)
    halving = [r for r in rows if r["method"] == "halving"]
    assert all(r["n_features_selected"] in halving_counts(203, 8) for r in halving)
    plain = [r["accuracy"] for r in rows if r["method"] == "1nn"]
    assert np.mean([r["accuracy"] for r in halving]) > np.mean(plain) + 15


@parametrize_with_checks([
    RemoveLowestWeights(ReliefF(n_neighbors=1), share=0.5),
    HalvingElimination(ReliefF(n_neighbors=1), KNeighborsClassifier(1), min_features=2, cv=2, random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)
