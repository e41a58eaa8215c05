"""Relief family on discrete (SNP-like) data: epistasis recovery, skrebate's convention, ties, classes."""

import warnings

import numpy as np
import pytest

from knnweights import SURF, MultiSURF, Relief, ReliefF
from knnweights.engine._kernels_mixed import discrete_mask


def gametes_like(n=1600, d=20, noise=0.1, seed=0):
    """SNPs 0/1/2 (minor allele frequency 0.1-0.5) with a pure XOR-like epistatic pair (features 0, 1).

    The class is 'exactly one of the two SNPs heterozygous' (both at MAF 0.5, so neither
    has a marginal effect), with a share ``noise`` of labels flipped, as GAMETES' pure
    epistatic models.
    """
    rng = np.random.default_rng(seed)
    maf = rng.uniform(0.1, 0.5, d)
    maf[:2] = 0.5
    X = rng.binomial(2, maf, size=(n, d)).astype(float)
    y = ((X[:, 0] == 1) ^ (X[:, 1] == 1)).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def _with_missing(X, share, seed):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < share] = np.nan
    return X


@pytest.fixture(scope="module")
def snp_data():
    return gametes_like()


ESTIMATORS = {
    "ReliefF": lambda: ReliefF(n_neighbors=10, discrete_features="auto", missing="diff"),
    "SURF": lambda: SURF(discrete_features="auto", missing="diff"),
    "MultiSURF": lambda: MultiSURF(discrete_features="auto", missing="diff"),
}


@pytest.mark.parametrize("missing_share", [0.0, 0.1])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_epistatic_pair_ranked_first(snp_data, name, missing_share):
    X, y = snp_data
    if missing_share:
        X = _with_missing(X, missing_share, 1)
    est = ESTIMATORS[name]().fit(X, y)
    assert est.discrete_features_.all()
    assert set(np.argsort(-est.scores_)[:2]) == {0, 1}, est.scores_
    # a clear margin over the best noise SNP
    assert np.sort(est.scores_)[-2] > 3 * max(np.sort(est.scores_)[-3], 0.005)


@pytest.mark.parametrize("cls", [SURF, MultiSURF])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_radius_methods_equal_skrebate_on_discrete_data(cls, n_classes):
    skrebate = pytest.importorskip("skrebate")
    X, y = gametes_like(n=240, d=12, seed=3)
    if n_classes == 3:
        y[X[:, 2] == 2] = 2
    ours = cls(discrete_features="auto", multiclass="rebate").fit(X, y).scores_
    theirs = getattr(skrebate, cls.__name__)().fit(X, y).feature_importances_
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_relieff_matches_skrebate_convention_up_to_its_tie_order():
    """skrebate's ReliefF takes tied neighbours in np.argsort's (unspecified) order, which
    depends on the row order; ``ties="include"`` is the average over tie orders, so it
    matches skrebate averaged over a few row permutations.  Three classes:
    ``miss_weighting="equal"`` is skrebate's 1/(K-1)."""
    skrebate = pytest.importorskip("skrebate")
    X, y = gametes_like(n=600, d=16, seed=5)
    y[(X[:, 2] == 2) & (y == 0)] = 2
    ours = ReliefF(n_neighbors=10, discrete_features="auto", ties="include", miss_weighting="equal").fit(X, y).scores_
    rng = np.random.default_rng(0)
    runs = []
    for _ in range(4):
        p = rng.permutation(len(y))
        runs.append(skrebate.ReliefF(n_neighbors=10).fit(X[p], y[p]).feature_importances_)
    assert np.corrcoef(ours, np.mean(runs, axis=0))[0, 1] > 0.999
    # the prior weighting (ours by default) is a different estimate with three classes
    prior = ReliefF(n_neighbors=10, discrete_features="auto", ties="include").fit(X, y).scores_
    assert np.abs(prior - ours).max() > 1e-3


@pytest.mark.parametrize("missing_share", [0.0, 0.1])
@pytest.mark.parametrize("cls", [Relief, ReliefF])
def test_ties_include_is_invariant_to_row_order(cls, missing_share):
    X, y = gametes_like(n=300, d=10, seed=7)
    X = _with_missing(X, missing_share, 8) if missing_share else X
    perm = np.random.default_rng(9).permutation(len(y))
    kw = dict(discrete_features="auto", missing="diff")
    if cls is ReliefF:
        kw["n_neighbors"] = 10
    a = cls(ties="include", **kw).fit(X, y).scores_
    b = cls(ties="include", **kw).fit(X[perm], y[perm]).scores_
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    # the default (lower index first) depends on the order on such data: the test can fail
    c = cls(**kw).fit(X, y).scores_
    e = cls(**kw).fit(X[perm], y[perm]).scores_
    assert np.abs(c - e).max() > 1e-4


def test_ties_include_equals_index_rule_without_ties():
    rng = np.random.default_rng(10)
    X, y = rng.normal(size=(120, 6)), rng.integers(0, 3, 120)
    a = ReliefF(n_neighbors=4).fit(X, y).scores_
    b = ReliefF(n_neighbors=4, ties="include").fit(X, y).scores_
    np.testing.assert_allclose(a, b, atol=1e-14)


def test_ties_include_matches_brute_force_average_over_tie_orders():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 3, size=(30, 4)).astype(float)
    y = rng.integers(0, 2, 30)
    k = 3
    D = (X[:, None] != X[None]).sum(-1).astype(float)
    np.fill_diagonal(D, np.inf)
    ref = np.zeros(4)
    for i in range(30):
        for c in (0, 1):
            dc = np.where(y == c, D[i], np.inf)
            kth = np.sort(dc)[k - 1]
            less, tied = dc < kth, dc == kth
            coef = less / k + tied * (k - less.sum()) / (k * tied.sum())
            contrib = (coef[:, None] * (X[i] != X)).sum(0)
            ref += -contrib if c == y[i] else contrib
    ours = ReliefF(n_neighbors=k, discrete_features=True, ties="include").fit(X, y).scores_
    np.testing.assert_allclose(ours, ref / 30, atol=1e-12)


def test_discrete_features_forms_and_auto_threshold():
    rng = np.random.default_rng(12)
    X = np.column_stack([rng.integers(0, 3, 50), rng.normal(size=50), rng.integers(0, 11, 50)]).astype(float)
    np.testing.assert_array_equal(discrete_mask(X, "auto", 10), [True, False, False])
    np.testing.assert_array_equal(discrete_mask(X, "auto", 11), [True, False, True])
    y = rng.integers(0, 2, 50)
    a = ReliefF(n_neighbors=3, discrete_features=[0, 2]).fit(X, y).scores_
    b = ReliefF(n_neighbors=3, discrete_features=np.array([True, False, True])).fit(X, y).scores_
    np.testing.assert_array_equal(a, b)
    # discrete diff is 0/1, never range-normalised: differs from the continuous treatment
    c = ReliefF(n_neighbors=3).fit(X, y).scores_
    assert np.abs(a - c).max() > 1e-3
    with pytest.raises(ValueError, match="length"):
        ReliefF(discrete_features=np.array([True, False])).fit(X, y)


def test_default_continuous_path_unchanged_by_new_options():
    """discrete_features=None and no NaN: the original compiled path, bit for bit."""
    from knnweights.weighters._relief_margins import range_normalize, relieff_margins

    rng = np.random.default_rng(13)
    X, y = rng.normal(size=(90, 7)), rng.integers(0, 3, 90)
    ref = relieff_margins(range_normalize(X), y, 5, np.arange(90), per_class=True)
    np.testing.assert_array_equal(ReliefF(n_neighbors=5, missing="diff").fit(X, y).scores_, ref)


def test_small_class_is_clamped_per_class_with_a_warning():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(45, 4))
    y = np.r_[np.zeros(20), np.ones(20), np.full(5, 2)].astype(int)
    with pytest.warns(UserWarning, match="small_classes='error'"):
        ours = ReliefF(n_neighbors=8).fit(X, y).scores_
    # brute force: class 2 contributes its 4 hits / its 5 misses, the others 8
    Z = (X - X.min(0)) / np.ptp(X, 0)
    D = np.abs(Z[:, None] - Z[None]).sum(-1)
    np.fill_diagonal(D, np.inf)
    P = np.bincount(y) / len(y)
    ref = np.zeros(4)
    for i in range(45):
        for c in range(3):
            avail = int(np.isfinite(np.where(y == c, D[i], np.inf)).sum())
            nn = np.lexsort((np.arange(45), np.where(y == c, D[i], np.inf)))[:min(8, avail)]
            contrib = np.abs(Z[i] - Z[nn]).mean(0)
            ref += -contrib if c == y[i] else P[c] / (1 - P[y[i]]) * contrib
    np.testing.assert_allclose(ours, ref / 45, atol=1e-12)
    with pytest.raises(ValueError, match="hits of class 2"):
        ReliefF(n_neighbors=8, small_classes="error").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ReliefF(n_neighbors=4).fit(X, y)  # fits every class: no warning


def test_equal_miss_weighting_is_one_over_k_minus_one():
    rng = np.random.default_rng(15)
    X, y = rng.normal(size=(60, 3)), np.r_[np.zeros(30), np.ones(20), np.full(10, 2)].astype(int)
    k = 3
    Z = (X - X.min(0)) / np.ptp(X, 0)
    D = np.abs(Z[:, None] - Z[None]).sum(-1)
    np.fill_diagonal(D, np.inf)
    ref = np.zeros(3)
    for i in range(60):
        for c in range(3):
            nn = np.lexsort((np.arange(60), np.where(y == c, D[i], np.inf)))[:k]
            contrib = np.abs(Z[i] - Z[nn]).mean(0)
            ref += -contrib if c == y[i] else contrib / 2
    np.testing.assert_allclose(ReliefF(n_neighbors=k, miss_weighting="equal").fit(X, y).scores_, ref / 60,
                               atol=1e-12)
    # with two classes both weightings are the same
    y2 = (y > 0).astype(int)
    np.testing.assert_array_equal(ReliefF(n_neighbors=k, miss_weighting="equal").fit(X, y2).scores_,
                                  ReliefF(n_neighbors=k).fit(X, y2).scores_)


def test_mulrel_clamps_small_classes_like_relieff():
    from knnweights import MulRel
    from knnweights.weighters._relief_margins import range_normalize, relieff_margins

    rng = np.random.default_rng(16)
    X, y = rng.normal(size=(30, 4)), np.r_[np.zeros(26), np.ones(4)].astype(int)
    with pytest.warns(UserWarning, match="Clamped per class"):
        MulRel(n_neighbors=5, n_rounds=2).fit(X, y)
    with pytest.raises(ValueError, match="hits of class 1"):
        MulRel(n_neighbors=5, small_classes="error").fit(X, y)
    # class 1 has 3 hits: the mean over those 3, not a sum divided by 5
    Z = range_normalize(X)
    D = np.abs(Z[:, None] - Z[None]).sum(-1)
    np.fill_diagonal(D, np.inf)
    ref = np.zeros(4)
    for i in range(30):
        hits = np.lexsort((np.arange(30), np.where(y == y[i], D[i], np.inf)))[:min(5, (y == y[i]).sum() - 1)]
        misses = np.lexsort((np.arange(30), np.where(y != y[i], D[i], np.inf)))[:min(5, (y != y[i]).sum())]
        ref += np.abs(Z[i] - Z[misses]).mean(0) - np.abs(Z[i] - Z[hits]).mean(0)
    np.testing.assert_allclose(relieff_margins(Z, y, 5, per_class=False), ref / 30, atol=1e-12)
