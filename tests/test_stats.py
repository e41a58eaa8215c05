"""Paired tests and the papers' win / tie / loss rules, on hand-made accuracy vectors."""

import csv
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

import knnweights
from knnweights.evaluation import (
    corrected_ttest,
    format_wtl,
    paired_ttest,
    wilcoxon_test,
    win_tie_loss,
    win_tie_loss_table,
)

TABLES = Path(knnweights.__file__).parent / "data" / "paper_tables"


def test_paired_ttest_matches_scipy():
    rng = np.random.default_rng(0)
    a = rng.normal(80, 3, 100)
    b = a - rng.normal(0.7, 2, 100)
    t, p = paired_ttest(a, b)
    ref = sps.ttest_rel(a, b)
    assert t == pytest.approx(ref.statistic, rel=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-10)


def test_identical_accuracies_tie_with_p_one_and_no_nan():
    a = [85.0, 90.0, 95.0, 90.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from 0/0
        assert paired_ttest(a, a) == (0.0, 1.0)
        assert corrected_ttest(np.zeros(4), 90, 10) == (0.0, 1.0)
        assert wilcoxon_test(a, a) == (0.0, 1.0)
        for test in ("ttest", "wilcoxon"):
            assert win_tie_loss(a, a, test=test) == "tie"
        assert win_tie_loss(a, a, test="corrected", n_train=9, n_test=1) == "tie"


def test_constant_nonzero_difference_is_significant():
    a = np.array([85.0, 90.0, 95.0, 90.0])
    t, p = paired_ttest(a + 1.0, a)
    assert t == math.inf and p == 0.0
    assert win_tie_loss(a + 1.0, a) == "win"
    assert win_tie_loss(a, a + 1.0) == "loss"
    # but a constant difference below 0.5 points is a tie under I-M4E's rule
    assert win_tie_loss(a + 0.4, a) == "tie"
    assert win_tie_loss(a + 0.4, a, min_diff=0.0) == "win"


def test_half_point_rule():
    rng = np.random.default_rng(1)
    b = rng.uniform(70, 90, 100)
    noise = rng.normal(0, 0.05, 100)
    for shift, expected in [(0.45, "tie"), (0.49, "tie"), (0.55, "win"), (-0.55, "loss"), (-0.45, "tie")]:
        a = b + shift + noise - noise.mean()  # mean difference exactly `shift`, p ~ 0
        assert paired_ttest(a, b)[1] < 1e-30
        assert win_tie_loss(a, b) == expected, shift


def test_p_threshold():
    # differences with mean 2 points and a p between 0.01 and 0.05
    d = np.array([5.0, -1.0, 4.0, 0.0, 3.0, 1.0, 6.0, -2.0, 2.0, 2.0])
    p = sps.ttest_1samp(d, 0.0).pvalue
    assert 0.01 < p < 0.05
    b = np.full(10, 80.0)
    assert win_tie_loss(b + d, b) == "tie"  # I-M4E: p < 0.01 needed
    assert win_tie_loss(b + d, b, alpha=0.05, min_diff=0) == "win"  # LH-RELIEF: p < 0.05
    assert win_tie_loss(b - d, b, alpha=0.05, min_diff=0) == "loss"
    # strengthen the evidence: the same differences twice as often -> p < 0.01
    assert sps.ttest_1samp(np.tile(d, 3), 0.0).pvalue < 0.01
    assert win_tie_loss(np.tile(b + d, 3), np.tile(b, 3)) == "win"


def test_corrected_ttest_hand_computation():
    d = [1.0, 2.0, 3.0, 2.0]
    # mean 2, s^2 = 2/3, (1/J + n_test/n_train) = 1/4 + 10/90 = 13/36
    t_hand = 2.0 / math.sqrt(13 / 36 * 2 / 3)
    p_hand = 2 * sps.t.sf(t_hand, 3)
    t, p = corrected_ttest(d, n_train=90, n_test=10)
    assert t == pytest.approx(t_hand, rel=1e-12)
    assert p == pytest.approx(p_hand, rel=1e-12)
    assert t == pytest.approx(4.076197322920545, rel=1e-12)
    # the correction makes the test more conservative than the plain one-sample t-test
    plain = sps.ttest_1samp(d, 0.0)
    assert abs(t) < abs(plain.statistic) and p > plain.pvalue
    # with n_test / n_train -> 0 it reduces to the plain paired t-test
    t0, p0 = corrected_ttest(d, n_train=10**12, n_test=1)
    assert t0 == pytest.approx(plain.statistic, rel=1e-9) and p0 == pytest.approx(plain.pvalue, rel=1e-9)


def test_corrected_test_can_overturn_a_plain_win():
    rng = np.random.default_rng(3)
    b = rng.uniform(75, 85, 100)
    a = b + 1.0 + rng.normal(0, 3.0, 100)
    assert paired_ttest(a, b)[1] < 0.01 and win_tie_loss(a, b) == "win"
    # 10-fold CV: n_test / n_train = 1/9 -> variance inflated about 12 times
    assert win_tie_loss(a, b, test="corrected", n_train=90, n_test=10) == "tie"
    with pytest.raises(ValueError, match="n_train"):
        win_tie_loss(a, b, test="corrected")


def test_wilcoxon_matches_scipy():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0, 1, 30), rng.normal(0.3, 1, 30)
    assert wilcoxon_test(a, b) == pytest.approx(tuple(sps.wilcoxon(a - b)))
    assert win_tie_loss(a + 5, a - 5, test="wilcoxon") == "win"


def test_input_errors():
    with pytest.raises(ValueError, match="equal lengths"):
        paired_ttest([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="finite"):
        paired_ttest([1, np.nan], [1, 2])
    with pytest.raises(ValueError, match="test must be"):
        win_tie_loss([1, 2, 9], [5, 6, 7], test="sign")


def _rows(method, dataset, accs):
    return [{"method": method, "dataset": dataset, "repeat": i // 10, "fold": i % 10, "accuracy": a}
            for i, a in enumerate(accs)]


def test_wtl_table_counts_from_competitor_side():
    rng = np.random.default_rng(4)
    rows = []
    noise = rng.normal(0, 0.01, 100)
    for ds, ref_mean, comp_mean in [("A", 80, 85), ("B", 80, 80.2), ("C", 80, 70), ("D", 90, 80)]:
        rows += _rows("REF", ds, ref_mean + rng.normal(0, 1, 100))
        rows += _rows("X", ds, np.array([r["accuracy"] for r in rows if r["method"] == "REF" and r["dataset"] == ds])
                      + (comp_mean - ref_mean) + noise)
    (row,) = win_tie_loss_table(rows, "REF", test="ttest")
    assert (row["method"], row["wins"], row["ties"], row["losses"], row["wtl"]) == ("X", 1, 1, 2, "1/1/2")
    assert row["per_dataset"]["A"]["outcome"] == "win" and row["per_dataset"]["C"]["outcome"] == "loss"
    assert format_wtl({"wins": 1, "ties": 0, "losses": 4}) == "1/0/4"
    # the reference's view of the same data is the mirror image
    (mirror,) = win_tie_loss_table(rows, "X", test="ttest")
    assert mirror["wtl"] == "2/1/1"


def _paper_wtl(fname):
    with open(TABLES / fname, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    means = [r for r in rows if r["metric"] == "accuracy"]
    wtl = {r["method"]: (int(r["wins"]), int(r["ties"]), int(r["losses"]))
           for r in rows if r["metric"].startswith("win_tie_loss")}
    return means, wtl


@pytest.mark.parametrize("fname", ["im4e_table3.csv", "im4e_table4.csv", "im4e_table5.csv"])
def test_im4e_wtl_rows_from_printed_means(fname):
    # The README notes that every W/T/L cell of I-M4E's tables equals the 0.5-point rule
    # on the printed means: with a common noise (constant differences, p = 0) our table
    # must give back the paper's W/T/L row of every method.
    means, wtl = _paper_wtl(fname)
    noise = np.random.default_rng(5).normal(0, 1, 100)
    rows = []
    for r in means:
        rows += _rows(r["method"], r["dataset"], float(r["mean"]) + noise)
    table = {t["method"]: (t["wins"], t["ties"], t["losses"]) for t in win_tie_loss_table(rows, "I-M4E", test="ttest")}
    assert wtl and table == wtl


def test_share_grid_never_exceeds_stop():
    from knnweights.evaluation import share_grid

    assert share_grid() == [round(i / 100, 10) for i in range(100)]
    assert max(share_grid(0.1)) <= 0.99 and share_grid(0.1)[-1] == 0.9
    assert share_grid(0.25, 0.5) == [0.0, 0.25, 0.5]


def test_wtl_table_defaults_to_the_corrected_test():
    # 10 x 10 CV cells with a small, steady advantage: the plain paired t-test calls it a win (its
    # variance ignores the overlap of the training sets), Nadeau & Bengio's corrected test a tie
    rng = np.random.default_rng(8)
    ref = 80 + rng.normal(0, 2, 100)
    comp = ref + 1.0 + rng.normal(0, 2, 100)
    rows = [dict(r, n_train=90, n_test=10) for r in _rows("REF", "A", ref) + _rows("X", "A", comp)]
    (default,) = win_tie_loss_table(rows, "REF", alpha=0.05)
    (plain,) = win_tie_loss_table(rows, "REF", alpha=0.05, test="ttest")
    assert plain["wtl"] == "1/0/0" and default["wtl"] == "0/1/0"
    assert default["per_dataset"]["A"]["p"] > 0.05 > plain["per_dataset"]["A"]["p"]
    with pytest.raises(ValueError, match='needs n_train and n_test .* pass test="ttest"'):
        win_tie_loss_table(_rows("REF", "A", ref) + _rows("X", "A", comp), "REF")


def test_one_outcome_rule_for_every_comparison():
    from knnweights.evaluation import count_outcomes, paired_outcome
    from knnweights.evaluation.compare import pairwise_tests
    from knnweights.evaluation.regression import regression_tests

    def never():
        raise AssertionError("a difference below min_diff needs no test")

    assert paired_outcome(0.3, never, alpha=0.01, min_diff=0.5) == "tie"
    assert paired_outcome(0.0, 0.0, alpha=0.05) == "tie"
    assert [paired_outcome(d, p, alpha=0.05, min_diff=0.5) for d, p in [(0.6, 0.01), (-0.6, 0.01), (0.6, 0.05)]] \
        == ["win", "loss", "tie"]
    assert count_outcomes(["win", "tie", "win", "loss"]) == {"wins": 2, "ties": 1, "losses": 1, "wtl": "2/1/1"}

    rng = np.random.default_rng(9)
    base = 80 + rng.normal(0, 2, 20)
    rows = []
    for m, shift in [("A", 0.0), ("B", 3.0), ("C", 0.4)]:
        acc = base + shift + rng.normal(0, 0.3, 20)
        rows += [dict(r, n_train=90, n_test=10) for r in _rows(m, "d", acc)]
    for test, alpha, min_diff in [("plain", 0.05, 0.0), ("plain", 0.01, 0.5), ("corrected", 0.05, 0.0)]:
        pairs = pairwise_tests(rows, test=test, alpha=alpha, min_diff=min_diff)
        assert len(pairs) == 6
        for p in pairs:
            a = [r["accuracy"] for r in rows if r["method"] == p["method"]]
            b = [r["accuracy"] for r in rows if r["method"] == p["other"]]
            kw = {"test": "ttest"} if test == "plain" else {"test": "corrected", "n_train": 90, "n_test": 10}
            assert p["outcome"] == win_tie_loss(a, b, alpha=alpha, min_diff=min_diff, **kw)
    assert {(p["method"], p["other"]): p["outcome"] for p in pairwise_tests(rows, test="plain")}[("B", "A")] == "win"

    # regression: a lower RMSE wins, by the same rule on the negated difference
    reg = [{"method": m, "dataset": "d", "repeat": 0, "fold": f, "rmse": rmse + 0.01 * f, "r2": 0.5,
            "n_train": 90, "n_test": 10} for f in range(10) for m, rmse in [("kNN", 2.0), ("W", 1.0)]]
    reg += [{"method": "X", "dataset": "d", "repeat": 0, "fold": f, "rmse": 2.0 + 0.01 * f, "r2": 0.5,
             "n_train": 90, "n_test": 10} for f in range(10)]
    out = {r["method"]: r["outcome"] for r in regression_tests(reg)}
    assert out == {"W": "win", "X": "tie"}
