"""Complete rankings: ``scores_`` and ``ranking_`` of every weighter, and ``rank_table``."""

import numpy as np
import pandas as pd
import pytest

import knnweights
from knnweights import ReliefF, Simba, rank_table
from knnweights.weighters._base import feature_ranking


@pytest.fixture(scope="module")
def data(informative_problem):
    """``(X, y)``: 3 informative features, 12 noise features and a constant one (weight 0, ranked last)."""
    X, y = informative_problem(n=60, n_informative=3, n_noise=12, random_state=3)
    X = np.column_stack([X, np.full(60, 2.5)])
    return X, y


def _check_total_order(est, X):
    d = X.shape[1]
    r, w, s = est.ranking_, est.feature_importances_, est.scores_
    assert r.dtype.kind == "i" and sorted(r.tolist()) == list(range(1, d + 1))
    assert s.shape == (d,) and np.all(np.isfinite(s))
    order = np.argsort(r)
    # weights never increase along the ranking; within equal weights the signed scores never increase
    assert np.all(np.diff(w[order]) <= 0)
    for a, b in zip(order[:-1], order[1:], strict=True):
        if w[a] == w[b] and np.ptp(X[:, a]) > 0 and np.ptp(X[:, b]) > 0:
            assert s[a] >= s[b]


@pytest.mark.parametrize("name", list(knnweights.WEIGHTERS))
def test_ranking_is_a_permutation_for_every_weighter(name, fast_weighter, data):
    X, y = data
    est = fast_weighter(name)
    try:
        est.fit(X, y)
    except NotImplementedError:
        pytest.skip(f"{name} is not available")
    _check_total_order(est, X)
    # the constant feature comes after every other feature of weight 0
    zero = np.flatnonzero(est.feature_importances_[:-1] == 0)
    assert est.ranking_[-1] > (est.ranking_[zero].max() if zero.size else 0)


def test_relief_ties_at_zero_are_broken_by_the_signed_score(informative_problem):
    X, y = informative_problem(n=100, n_informative=2, n_noise=60, random_state=1)
    est = ReliefF(n_neighbors=5).fit(X, y)
    zero = np.flatnonzero(est.feature_importances_ == 0)
    assert zero.size > 10  # about half the noise features have a negative Relief score
    assert np.unique(est.scores_[zero]).size == zero.size
    # among the clipped features the ranking is the order of the signed scores, not the column order
    by_score = zero[np.argsort(-est.scores_[zero])]
    np.testing.assert_array_equal(np.sort(est.ranking_[zero]), est.ranking_[by_score])
    assert not np.array_equal(by_score, zero)
    assert est.ranking_[zero].min() == np.sum(est.feature_importances_ > 0) + 1
    # the positive weights come first, in weight order, the planted features on top
    assert set(np.flatnonzero(est.ranking_ <= 2)) == {0, 1}


def test_scores_default_to_the_unclipped_vector_and_are_reset_on_refit(data):
    X, y = data
    est = Simba(random_state=0).fit(X, y)  # Simba sets no scores_ of its own
    np.testing.assert_allclose(np.maximum(est.scores_[:-1], 0), est.feature_importances_[:-1])
    assert est.scores_.shape == (16,)
    est.fit(X[:, :5], y)  # a refit replaces them (no stale vector of the old shape)
    assert est.scores_.shape == (5,) and est.ranking_.shape == (5,)
    rf = ReliefF(n_neighbors=3).fit(X, y)  # a method's own signed scores are kept
    assert np.any(rf.scores_ < 0) and np.all(rf.feature_importances_ >= 0)


def test_feature_ranking_rules():
    # weight first, then constant features last, then signed score, then column order
    w = [0.0, 0.3, 0.0, 0.0, 0.3, 0.0]
    s = [-0.1, 0.3, -0.5, 0.0, 0.3, 0.0]
    c = [False, False, False, True, False, False]
    assert feature_ranking(w, s, c).tolist() == [4, 1, 5, 6, 2, 3]
    assert feature_ranking(w, s).tolist() == [5, 1, 6, 3, 2, 4]
    assert feature_ranking(w).tolist() == [3, 1, 4, 5, 2, 6]
    assert feature_ranking([1.0, 0.0], [np.nan, -1.0]).tolist() == [1, 2]


def test_rank_table_with_names_fitted_and_unfitted_weighters(informative_problem):
    X, y = informative_problem(n=80, n_informative=2, n_noise=8, random_state=2)
    df = pd.DataFrame(X, columns=[f"gene_{j}" for j in range(10)])
    fitted = ReliefF(n_neighbors=3).fit(X[:40], y[:40])  # used as it is: not refitted on all rows
    t = rank_table({"rf_half": fitted, "rf": ReliefF(n_neighbors=3), "simba": "Simba"}, df, y, random_state=0,
                   baselines=False)
    assert list(t.columns) == ["feature", "rf_half_weight", "rf_half_score", "rf_half_rank", "rf_weight",
                               "rf_score", "rf_rank", "simba_weight", "simba_score", "simba_rank"]
    assert t["feature"].tolist() == list(df.columns)
    np.testing.assert_array_equal(t["rf_half_weight"], fitted.feature_importances_)
    full = ReliefF(n_neighbors=3).fit(X, y)
    np.testing.assert_allclose(t["rf_score"], full.scores_)
    assert not np.allclose(t["rf_score"], t["rf_half_score"])
    for m in ("rf_half", "rf", "simba"):
        assert sorted(t[f"{m}_rank"]) == list(range(1, 11))
    assert set(t.loc[t["rf_rank"] <= 2, "feature"]) == {"gene_0", "gene_1"}
    s = rank_table([ReliefF(n_neighbors=3), ReliefF(n_neighbors=5)], X, y, sort_by="ReliefF_2")
    assert {"t_test_stat", "t_test_p", "t_test_q", "t_test_rank"} <= set(s.columns)  # baselines by default
    assert s.columns[4] == "ReliefF_2_weight" and s["ReliefF_2_rank"].tolist() == list(range(1, 11))
    assert s["feature"].iloc[0] in ("x0", "x1")
    with pytest.raises(ValueError, match="unknown weighter 'Nope'"):
        rank_table(["Nope"], X, y)
    with pytest.raises(ValueError, match="needs X and y"):
        rank_table(ReliefF(), X, baselines=False)
    with pytest.raises(ValueError, match="baselines=False"):
        rank_table(ReliefF(), X)
    with pytest.raises(ValueError, match="sort_by='zzz'"):
        rank_table(ReliefF(), X, y, sort_by="zzz")


class _FirstFeatureOnly(knnweights.weighters._base.BaseWeighter):
    """A stub method without signed scores: weight 1 on feature 0, 0 elsewhere."""

    def _fit(self, X, y):
        w = np.zeros(X.shape[1])
        w[0] = 1.0
        return w


def _brute_margin_gain(X, y, w, columns):
    D = (np.abs(X[:, None, :] - X[None, :, :]) * w).sum(axis=2)
    np.fill_diagonal(D, np.inf)
    same = y[:, None] == y[None, :]
    hit = np.argmin(np.where(same, D, np.inf), axis=1)  # ties: the lower index, as the engine
    miss = np.argmin(np.where(~same, D, np.inf), axis=1)
    Z = X[:, columns]
    g = (np.abs(Z - Z[miss]) - np.abs(Z - Z[hit])).mean(axis=0)
    return g / np.ptp(Z, axis=0)


def test_ties_without_scores_are_broken_by_the_margin_gain(informative_problem):
    from knnweights.weighters._base import margin_gain

    X, y = informative_problem(n=120, n_informative=3, n_noise=20, random_state=4)
    X[:, 5] *= 100.0  # the gain is range-normalised: a noise feature's scale does not lift it
    est = _FirstFeatureOnly().fit(X, y)
    assert np.all(est.scores_[1:] == 0)  # the stub has no signed scores: all its zero weights tie
    # the two informative features the method left at 0 come right after feature 0, not by column order
    assert est.ranking_[0] == 1 and set(est.ranking_[[1, 2]]) == {2, 3}
    cols = np.arange(1, X.shape[1])
    np.testing.assert_allclose(margin_gain(X, y, est.feature_importances_, "manhattan", cols),
                               _brute_margin_gain(X, y, est.feature_importances_, cols), rtol=1e-10, atol=1e-12)
    gain = _brute_margin_gain(X, y, est.feature_importances_, cols)
    np.testing.assert_array_equal(np.argsort(est.ranking_[1:]), np.lexsort((cols, -gain)))


def test_rank_table_p_q_baselines_and_mean_rank_sit_beside_their_feature(informative_problem):
    from sklearn.preprocessing import MinMaxScaler

    from knnweights import permutation_pvalues
    from knnweights.evaluation import fit_rank_table
    from knnweights.significance import bh_qvalues, univariate_tests

    X, y = informative_problem(n=70, n_informative=3, n_noise=9, random_state=5)
    rng = np.random.default_rng(5)
    names = [f"{w}_{j}" for j, w in enumerate(rng.choice(["zeta", "alpha", "mu", "beta"], 12))]
    cols = rng.permutation(12)  # the informative features land at scattered columns
    df = pd.DataFrame(X[:, cols] * rng.uniform(1, 50, 12), columns=names)
    ranked = rank_table({"rf": ReliefF(n_neighbors=5), "simba": "Simba"}, df, y, pvalues=True, baselines=True,
                        sort_by="mean_rank", scale="minmax", n_permutations=9, random_state=0)
    assert list(ranked.columns) == ["feature", *[f"{m}_{c}" for m in ("rf", "simba")
                                                  for c in ("weight", "score", "rank", "p", "q")],
                                    "mean_rank", "t_test_stat", "t_test_p", "t_test_q", "t_test_rank"]
    assert ranked["mean_rank"].is_monotonic_increasing and ranked["feature"].tolist() != names
    by = ranked.set_index("feature").loc[names]
    A = MinMaxScaler().fit_transform(df.to_numpy())
    rf = ReliefF(n_neighbors=5, pvalues=True, random_state=0).fit(A, y)  # pvalues=True: its own pair test
    simba = Simba(random_state=0).fit(A, y)
    perm = permutation_pvalues(Simba(random_state=0), A, y, n_permutations=9, random_state=0)
    for col, want in (("rf_score", rf.scores_), ("rf_p", rf.pvalues_), ("rf_q", rf.qvalues_),
                      ("simba_weight", simba.feature_importances_), ("simba_p", perm.pvalues),
                      ("simba_q", perm.qvalues), ("mean_rank", (rf.ranking_ + simba.ranking_) / 2)):
        np.testing.assert_allclose(by[col], want, rtol=1e-12, atol=1e-300, err_msg=col)
    stat, p = univariate_tests(A, y)["t"]
    np.testing.assert_allclose(by["t_test_stat"], stat, rtol=1e-12)
    np.testing.assert_allclose(by["t_test_q"], bh_qvalues(p), rtol=1e-12)
    assert np.all(np.diff(p[np.argsort(by["t_test_rank"].to_numpy())]) >= 0)
    # the planted features on top, most with small q-values
    top = set(ranked["feature"].head(3))
    assert top == {names[j] for j in np.flatnonzero(cols < 3)} and (by.loc[list(top), "rf_q"] < 0.05).sum() >= 2
    # fit_rank_table: the same table, with the fitted weighters and where the p-values came from
    res = fit_rank_table({"rf": ReliefF(n_neighbors=5), "simba": "Simba"}, df, y, pvalues=True, baselines=True,
                         sort_by="mean_rank", scale="minmax", n_permutations=9, random_state=0)
    pd.testing.assert_frame_equal(res.table, ranked)
    assert res.pvalue_source == {"rf": "pvalues_", "simba": 9} and list(res.fitted) == ["rf", "simba"]


def test_rank_table_takes_a_fitted_weighters_arrays_by_feature_name(informative_problem):
    X, y = informative_problem(n=60, n_informative=2, n_noise=6, random_state=7)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(8)])
    order = [5, 0, 7, 2, 1, 6, 3, 4]
    est = ReliefF(n_neighbors=5, pvalues=True).fit(df.iloc[:, order], y)  # knows its features in another order
    t = rank_table({"rf": est}, df, y, pvalues=True).set_index("feature")
    own = pd.Series(est.scores_, index=est.feature_names_in_)
    np.testing.assert_array_equal(t["rf_score"], own.loc[t.index])
    np.testing.assert_array_equal(t["rf_p"], pd.Series(est.pvalues_, index=est.feature_names_in_).loc[t.index])
    assert set(t.index[t["rf_rank"] <= 2]) == {"f0", "f1"}
    with pytest.raises(ValueError, match="fitted on other features"):
        rank_table({"rf": est}, df.rename(columns={"f0": "g0"}), y)
    # a weighter fitted here on the DataFrame takes the names given, in the columns' order
    renamed = rank_table(ReliefF(n_neighbors=5), df, y, feature_names=[f"g{j}" for j in range(8)])
    np.testing.assert_array_equal(renamed["ReliefF_score"], ReliefF(n_neighbors=5).fit(X, y).scores_)
    assert renamed["feature"].tolist() == [f"g{j}" for j in range(8)]


def test_fit_rank_table_skips_a_failing_weighter_and_refuses_clashing_columns(informative_problem):
    from knnweights.evaluation import fit_rank_table

    X, y = informative_problem(n=40, n_informative=2, n_noise=3, random_state=0)
    events = []
    res = fit_rank_table({"ok": ReliefF(n_neighbors=3), "bad": ReliefF(n_neighbors=-1)}, X, y, on_error="skip",
                         progress=lambda event, label, **info: events.append((event, label)))
    assert list(res.fitted) == ["ok"] and "bad" in res.failed and "bad_rank" not in res.table
    assert events == [("fit", "ok"), ("fitted", "ok"), ("fit", "bad"), ("failed", "bad")]
    with pytest.raises(ValueError, match="n_neighbors"):
        fit_rank_table({"bad": ReliefF(n_neighbors=-1)}, X, y)
    with pytest.raises(ValueError, match="two columns named 't_test_rank'"):
        rank_table({"t_test": ReliefF(n_neighbors=3)}, X, y, baselines=True)
