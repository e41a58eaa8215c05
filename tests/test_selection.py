"""Selectors: SelectTopK and TuRF (selector contract, planted-feature recovery)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import ReliefF, SelectTopK, TuRF


def _xor(n, n_noise, seed):
    """An XOR pair (features 0, 1): each alone carries nothing, together they set the label."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2 + n_noise))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    return X, y


def test_turf_recovers_an_xor_pair_that_one_relieff_pass_misses():
    # 300 noise features, 100 samples: ReliefF's neighbours are mostly set by noise, so one pass
    # ranks the pair low; removing a tenth of the features per round and refitting cleans the space
    single = turf = 0
    for seed in range(5):
        X, y = _xor(100, 300, seed)
        r = ReliefF(n_neighbors=10).fit(X, y).ranking_
        t = TuRF(ReliefF(n_neighbors=10), pct=0.1, n_features_to_select=2).fit(X, y)
        single += int(r[:2].max() <= 5)
        turf += int(t.ranking_[:2].max() <= 5)
        assert t.n_rounds_ == 10 and t.get_support().sum() == 2
    assert turf >= 4 and single <= 2


def test_turf_rounds_ranking_and_attributes(informative_problem):
    X, y = informative_problem(n=80, n_informative=3, n_noise=17, random_state=0)
    t = TuRF(ReliefF(n_neighbors=5), pct=0.25, n_features_to_select=3).fit(X, y)
    # 20 features, 5 removed per round: 20 -> 15 -> 10 -> 5 -> 3 (the last round removes only 2)
    assert t.n_rounds_ == 4
    assert np.bincount(t.elimination_round_).tolist() == [3, 5, 5, 5, 2]
    assert sorted(t.ranking_.tolist()) == list(range(1, 21))
    # the survivors first, then the features removed last, ... the first round's last
    order = np.argsort(t.ranking_)
    rounds = t.elimination_round_[order]
    assert rounds[:3].tolist() == [0, 0, 0] and np.all(np.diff(rounds[3:]) <= 0)
    assert set(t.get_support(indices=True)) == {0, 1, 2}
    assert t.estimator_.n_features_in_ == 3
    np.testing.assert_allclose(t.scores_[t.support_], t.estimator_.scores_)
    # default n_features_to_select: one round's worth (the paper's a = 1 / pct fits); int pct: a count
    d = TuRF(ReliefF(n_neighbors=5), pct=0.25).fit(X, y)
    assert d.get_support().sum() == 5 and d.n_rounds_ == 3
    c = TuRF(ReliefF(n_neighbors=5), pct=4, n_features_to_select=0.5).fit(X, y)
    assert c.get_support().sum() == 10 and c.n_rounds_ == 3


def test_turf_verbose_prints_rounds(capsys, informative_problem):
    X, y = informative_problem(n=40, n_informative=2, n_noise=6, random_state=0)
    TuRF(ReliefF(n_neighbors=3), pct=0.5, n_features_to_select=2, verbose=1).fit(X, y)
    assert "[TuRF] round 1: 8 features, removed 4" in capsys.readouterr().out


def test_select_top_k_uses_the_total_ranking(informative_problem):
    X, y = informative_problem(n=100, n_informative=2, n_noise=60, random_state=1)
    rf = ReliefF(n_neighbors=5).fit(X, y)
    n_pos = int(np.sum(rf.feature_importances_ > 0))
    sel = SelectTopK(ReliefF(n_neighbors=5), k=n_pos + 3).fit(X, y)
    # k beyond the positive weights: the next ones are the clipped features with the highest signed scores
    zero = np.flatnonzero(rf.feature_importances_ == 0)
    extra = set(sel.get_support(indices=True)) - set(np.flatnonzero(rf.feature_importances_ > 0))
    assert extra == set(zero[np.argsort(-rf.scores_[zero])[:3]].tolist())
    np.testing.assert_array_equal(sel.ranking_, rf.ranking_)
    top2 = SelectTopK(ReliefF(n_neighbors=5), k=2).fit(X, y)
    assert top2.get_support(indices=True).tolist() == [0, 1]
    np.testing.assert_array_equal(top2.transform(X), X[:, [0, 1]])
    # any model with coef_ ranks too (squared coefficients)
    lr = SelectTopK(LogisticRegression(), k=2).fit(X, y)
    assert lr.get_support(indices=True).tolist() == [0, 1]
    with pytest.warns(UserWarning, match="k=100 is larger than the number of features"):
        assert SelectTopK(ReliefF(n_neighbors=5), k=100).fit(X[:, :5], y).get_support().all()
    assert SelectTopK(ReliefF(n_neighbors=5), k="all").fit(X, y).get_support().all()
    # in a pipeline the weights are learnt on the training folds only
    pipe = make_pipeline(SelectTopK(ReliefF(n_neighbors=5), k=2), KNeighborsClassifier(5))
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.8


def test_selectors_keep_feature_names_and_pandas_output(informative_problem):
    pd = pytest.importorskip("pandas")
    X, y = informative_problem(n=80, n_informative=2, n_noise=6, random_state=0)
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(8)])
    for sel in (SelectTopK(ReliefF(n_neighbors=3), k=2), TuRF(ReliefF(n_neighbors=3), n_features_to_select=2)):
        sel.set_output(transform="pandas").fit(df, y)
        out = sel.transform(df)
        assert list(out.columns) == ["g0", "g1"] == list(sel.get_feature_names_out())
        assert out.index.equals(df.index)


def test_selectors_name_the_bad_column(informative_problem):
    pd = pytest.importorskip("pandas")
    X, y = informative_problem(n=40, n_informative=2, n_noise=3, random_state=0)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    df["batch"] = ["B1", "B2"] * 20
    with pytest.raises(ValueError, match=r"column 'batch' is not numeric \(value 'B1'\)"):
        SelectTopK(ReliefF(n_neighbors=3), k=2).fit(df, y)
    df = df.drop(columns="batch")
    df.loc[3, "c"] = np.nan
    with pytest.raises(ValueError, match=r"NaN in column 'c'"):
        TuRF(ReliefF(n_neighbors=3)).fit(df, y)


@parametrize_with_checks([
    SelectTopK(ReliefF(n_neighbors=1), k=2),
    TuRF(ReliefF(n_neighbors=1), pct=0.5, n_features_to_select=1),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)
