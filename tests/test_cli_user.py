"""The command line on a user's file: ``rank`` and ``evaluate`` end to end, bad input, help and version."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from knnweights.cli import build_parser, main, parse_cv, parse_methods, plain_text
from knnweights.io import DataError, load_table
from knnweights.weighters._base import BaseWeighter

N_PLANTED = 10
N_CONSTANT = 5


def make_expression_csv(path, n=80, d=300, seed=0):
    """A gene-expression-like CSV: sample ids, a string label, a string batch, constant genes, NaNs, planted genes.

    Expression is log-normal (raw scale, as such files come); the tumour samples have
    the first ``N_PLANTED`` genes multiplied by 8; the last ``N_CONSTANT`` genes are constant;
    about 0.2 % of the values are missing.  Returns the planted gene names.
    """
    rng = np.random.default_rng(seed)
    y = np.array(["tumour", "normal"])[rng.permutation(np.arange(n) % 2)]
    X = rng.lognormal(5.0, 1.0, size=(n, d))
    X[:, :N_PLANTED] *= np.where(y == "tumour", 8.0, 1.0)[:, None]
    X[:, d - N_CONSTANT:] = 7.0
    genes = [f"g{j:04d}" for j in range(d)]
    df = pd.DataFrame(X, columns=genes)
    df.insert(0, "sample", [f"S{i:03d}" for i in range(n)])
    df.insert(1, "diagnosis", y)
    df["batch"] = rng.choice(["B1", "B2"], n)
    df[genes] = df[genes].mask(rng.random((n, d)) < 0.002)
    df.loc[3, "g0000"] = np.nan  # a planted gene with a hole
    df.to_csv(path, index=False)
    return genes[:N_PLANTED]


@pytest.fixture(scope="module")
def expression_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "genes.csv"
    planted = make_expression_csv(path)
    return path, planted


def test_rank_end_to_end(expression_csv, tmp_path, capsys):
    path, planted = expression_csv
    out = tmp_path / "ranks.csv"
    rc = main(["rank", str(path), "--target", "diagnosis", "--id-col", "sample",
               "--methods", "ReliefF,MultiSURF,IRelief", "--out", str(out), "--top", "15"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    # the string column is dropped, by name; the id column is not a feature
    assert "'batch'" in cap.err and "dropped non-numeric" in cap.err
    table = pd.read_csv(out)
    assert len(table) == 300 - 0 and set(table["feature"]) == {f"g{j:04d}" for j in range(300)}
    assert "sample" not in set(table["feature"]) and "batch" not in set(table["feature"])
    for m in ("ReliefF", "MultiSURF", "IRelief"):
        assert list(table.columns[table.columns.str.startswith(m + "_")]) == [f"{m}_weight", f"{m}_score",
                                                                                 f"{m}_rank"]
        # a total order: every rank once, none tied (the constant genes included)
        assert sorted(table[f"{m}_rank"]) == list(range(1, 301)), m
        top = set(table.sort_values(f"{m}_rank")["feature"].head(N_PLANTED + 5))
        assert len(top & set(planted)) >= N_PLANTED - 1, (m, sorted(top & set(planted)))
        # the constant genes rank last: they carry nothing
        assert set(table.sort_values(f"{m}_rank")["feature"].tail(N_CONSTANT)) == {
            f"g{j:04d}" for j in range(300 - N_CONSTANT, 300)}
    # rows are ordered by the mean rank; the printed top list starts with planted genes
    assert table["mean_rank"].is_monotonic_increasing
    # (g0000 has one huge raw-scale outlier among the tumours, which the scaling squashes: it may slip a little)
    assert len(set(table["feature"].head(N_PLANTED)) & set(planted)) >= N_PLANTED - 1
    assert set(table["feature"].head(N_PLANTED + 10)) >= set(planted)
    printed = re.findall(r"^\s*\d+\s+(g\d{4})\s", cap.out, flags=re.M)
    assert len(printed) == 15 and printed == list(table["feature"].head(15))


def test_rank_one_hot_and_drop(expression_csv, tmp_path, capsys):
    path, _ = expression_csv
    data = load_table(path, "diagnosis", id_col="sample", one_hot=True, impute="drop-features")
    assert {"batch=B1", "batch=B2"} <= set(data.X.columns)
    assert not data.X.isna().to_numpy().any() and data.X.shape[1] < 302  # features with NaN dropped
    assert any("one-hot" in m and "'batch'" in m for m in data.messages)
    rc = main(["rank", str(path), "--target", "diagnosis", "--drop", "sample", "batch", "--methods", "relieff",
               "--out", str(tmp_path / "r.tsv"), "--top", "0", "--impute", "none"])
    cap = capsys.readouterr()
    assert rc == 2 and "missing value" in cap.err and "--impute" in cap.err  # --impute none refuses NaN


def test_evaluate_writes_report(expression_csv, tmp_path, capsys):
    path, planted = expression_csv
    out = tmp_path / "ev"
    argv = ["evaluate", str(path), "--target", "diagnosis", "--id-col", "sample", "--drop", "batch",
            "--methods", "ReliefF,Simba", "--cv", "2x3", "--out", str(out), "--no-progress"]
    rc = main(argv)
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    for f in ("report.md", "report.html", "results.csv", "summary.csv", "pairwise.csv", "ranks.csv", "store.jsonl",
              "accuracy_boxplots.png", "win_tie_loss.png", "top_feature_curves.png", "weight_profiles.png"):
        assert (out / f).is_file() and (out / f).stat().st_size > 0, f
    md = (out / "report.md").read_text()
    for png in ("accuracy_boxplots.png", "win_tie_loss.png", "top_feature_curves.png", "weight_profiles.png"):
        assert f"]({png})" in md
    html = (out / "report.html").read_text()
    assert html.count('src="data:image/png;base64,') >= 4 and "<table>" in html and 'src="' not in html.replace(
        'src="data:image/png;base64,', "")  # self-contained: nothing linked
    res = pd.read_csv(out / "results.csv")
    assert sorted(res["method"].unique()) == ["ReliefF", "Simba", "kNN"] and len(res) == 3 * 6
    # the planted genes carry the classes: ReliefF-weighted kNN beats plain kNN on raw-scale noise
    summ = pd.read_csv(out / "summary.csv").set_index("method")["mean"]
    assert summ["ReliefF"] > summ["kNN"] + 10
    pairs = pd.read_csv(out / "pairwise.csv")
    assert len(pairs) == 6 and set(pairs["outcome"]) <= {"win", "tie", "loss"}
    # the corrected test is the default, and more conservative than the plain one
    assert "corrected resampled t-test" in md
    # rerunning resumes: every cell comes from the store, the numbers are the same
    lines = (out / "store.jsonl").read_text().count("\n")
    assert main(argv) == 0
    capsys.readouterr()
    assert (out / "store.jsonl").read_text().count("\n") == lines
    again = pd.read_csv(out / "results.csv")
    assert np.array_equal(again["accuracy"].to_numpy(), res["accuracy"].to_numpy())


def test_corrected_test_is_the_default_and_more_conservative():
    from knnweights.evaluation import corrected_ttest, paired_ttest
    from knnweights.evaluation.compare import pairwise_tests, win_tie_loss_counts

    rng = np.random.default_rng(0)
    acc = {"a": 81.0 + rng.normal(0, 4, 100), "b": 80.0 + rng.normal(0, 4, 100)}
    rows = [{"method": m, "dataset": "d", "repeat": i // 10, "fold": i % 10, "n_train": 72, "n_test": 8,
             "accuracy": float(acc[m][i])} for m in ("a", "b") for i in range(100)]
    default = pairwise_tests(rows)
    corr = pairwise_tests(rows, test="corrected")
    plain = pairwise_tests(rows, test="plain")
    assert default == corr and len(corr) == 2
    d = acc["a"] - acc["b"]
    assert corr[0]["p"] == pytest.approx(corrected_ttest(d, 72, 8)[1])
    assert plain[0]["p"] == pytest.approx(paired_ttest(acc["a"], acc["b"])[1])
    assert plain[0]["p"] < corr[0]["p"]
    # both directions are stored, with opposite outcomes
    assert corr[0]["diff"] == pytest.approx(-corr[1]["diff"])
    assert {r["outcome"] for r in plain} in ({"win", "loss"}, {"tie"})
    assert [r["wtl"] for r in win_tie_loss_counts(plain)] in (["1/0/0", "0/0/1"], ["0/1/0", "0/1/0"])


@pytest.mark.parametrize("case", ["no-file", "no-target", "one-class", "unreadable", "empty", "small-class",
                                  "continuous"])
def test_bad_input_is_one_line_exit_2(case, expression_csv, tmp_path, capsys):
    path, _ = expression_csv
    target = "diagnosis"
    if case == "no-file":
        path = tmp_path / "missing.csv"
    elif case == "no-target":
        target = "diagnosys"
    elif case == "one-class":
        path = tmp_path / "one.csv"
        pd.DataFrame({"a": [1.0, 2.0, 3.0], "diagnosis": ["x", "x", "x"]}).to_csv(path, index=False)
    elif case == "unreadable":
        path = tmp_path / "bad.xlsx"
        path.write_bytes(b"\x00\x01not a spreadsheet")
    elif case == "empty":
        path = tmp_path / "empty.csv"
        path.write_text("")
    elif case == "small-class":
        path = tmp_path / "small.csv"
        pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "diagnosis": ["x", "x", "x", "y"]}).to_csv(path, index=False)
    elif case == "continuous":
        path = tmp_path / "cont.csv"
        pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "diagnosis": [0.5, 1.5, 0.25, 2.0]}).to_csv(path, index=False)
    extra = ["--target-type", "classes"] if case == "continuous" else []
    for cmd in (["rank"], ["evaluate", "--cv", "2x1"]):
        rc = main([cmd[0], str(path), "--target", target, *cmd[1:], *extra, "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2
        assert len([e for e in err if not e.startswith("note:")]) == 1, err
        assert err[-1].startswith(f"knnweights {cmd[0]}: error: ") and "Traceback" not in err[-1]
        assert str(path.name) in err[-1] or case == "no-file" and "missing.csv" in err[-1]
    if case == "no-target":
        assert "did you mean 'diagnosis'" in err[-1]


def test_bad_options_exit_2(expression_csv, capsys):
    path, _ = expression_csv
    for argv in (["rank", str(path), "--target", "diagnosis", "--methods", "NoSuchMethod"],
                 ["evaluate", str(path), "--target", "diagnosis", "--cv", "41x1", "--methods", "ReliefF"],
                 ["evaluate", str(path), "--target", "diagnosis", "--cv", "ten"],
                 ["demo", "--dataset", "my.csv"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len([e for e in err if not e.startswith("note:")]) == 1, err
    assert parse_cv("10x10") == (10, 10) and parse_cv("5") == (5, 1)
    assert parse_methods("relieff, simba") == ["ReliefF", "Simba"]


def test_io_errors_name_columns(expression_csv, tmp_path):
    path, _ = expression_csv
    with pytest.raises(DataError, match=r"no id column 'smaple'; did you mean 'sample'"):
        load_table(path, "diagnosis", id_col="smaple")
    with pytest.raises(DataError, match=r"--drop column 'nope'"):
        load_table(path, "diagnosis", drop=["nope"])
    p = tmp_path / "y.csv"
    pd.DataFrame({"a": [1.0, 2, 3, 4, 5], "b": [1.0, 2, 3, 4, 6], "label": ["u", "v", None, "u", "v"]}).to_csv(
        p, index=False)
    d = load_table(p, "label")
    assert d.X.shape == (4, 2) and any("1 row(s) with no value in the target column 'label'" in m
                                       for m in d.messages)


def test_other_formats(expression_csv, tmp_path):
    path, _ = expression_csv
    df = pd.read_csv(path)
    tsv = tmp_path / "g.tsv"
    df.to_csv(tsv, sep="\t", index=False)
    a = load_table(path, "diagnosis", id_col="sample")
    b = load_table(tsv, "diagnosis", id_col="sample")
    assert a.X.equals(b.X) and list(a.y) == list(b.y) and b.name == "g"
    pytest.importorskip("pyarrow")
    pq = tmp_path / "g.parquet"
    df.to_parquet(pq)
    c = load_table(pq, "diagnosis", id_col="sample")
    assert np.allclose(a.X.to_numpy(), c.X.to_numpy())


def test_version_and_plain_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert re.match(r"knnweights \d+\.\d+", out)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        text = p.format_help()
        assert "``" not in text and ":class:" not in text and ":func:" not in text, name
    assert plain_text("see :class:`~knnweights.evaluation.ResultStore` and ``--out``") == "see ResultStore and --out"


def test_demo_methods_and_warning_summary(capsys):
    rc = main(["demo", "--dataset", "ionosphere", "--methods", "IRelief,ReliefF"])
    cap = capsys.readouterr()
    assert rc == 0
    assert re.search(r"^IRelief\s+\d+\.\d+ %", cap.out, flags=re.M)
    assert re.search(r"^ReliefF\s+\d+\.\d+ %", cap.out, flags=re.M)
    assert "Simba" not in cap.out  # only the methods asked for
    # warnings, if any, are one summarised line per method naming the dataset, never a file:line
    for line in cap.err.splitlines():
        if "Warning" in line:
            assert line.startswith("warning: ") and "on ionosphere" in line and ".py:" not in line


class WarningWeighter(BaseWeighter):
    """Weights |class-mean difference|; warns on every fit, with a number that changes per fold."""

    _metric = "manhattan"
    _parameter_constraints = {}

    def _fit(self, X, y):
        warnings.warn(f"made-up trouble after {X.shape[0]} rows", UserWarning, stacklevel=2)
        return np.abs(X[y == self.classes_[0]].mean(axis=0) - X[y == self.classes_[1]].mean(axis=0))


def test_warnings_summarised_once_per_method_and_dataset():
    from knnweights.evaluation.compare import compare_methods, warning_summary

    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 20)
    X = rng.normal(size=(40, 6)) + y[:, None] * np.array([2.0, 0, 0, 0, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes the cells as a raw warning
        rows = compare_methods(X, y, {"W": WarningWeighter()}, name="toy", cv=(2, 3), progress=False)
    lines = warning_summary(rows)
    assert len(lines) == 1, lines
    assert lines[0].startswith("W on toy: UserWarning: made-up trouble after 20 rows")
    assert lines[0].endswith("(in 6 of 6 cells)")


def test_top_curve_equals_sklearn_knn_on_top_features():
    from sklearn.neighbors import KNeighborsClassifier

    from knnweights.evaluation.compare import _top_curve, top_grid

    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 40))
    y = np.array(["a", "b", "c"])[(X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)]
    tr, te = np.arange(0, 90, 3), np.setdiff1d(np.arange(90), np.arange(0, 90, 3))
    ranks = rng.permutation(40) + 1
    grid = top_grid(40)
    assert grid == [1, 2, 5, 10, 20, 40]
    order = np.argsort(ranks)
    for k in (1, 4):
        ref = [100 * KNeighborsClassifier(k).fit(X[tr][:, order[:m]], y[tr]).score(X[te][:, order[:m]], y[te])
               for m in grid]
        assert np.allclose(_top_curve(X[tr], y[tr], X[te], y[te], ranks, grid, k), ref)


def _continuous_csv(path, n=120, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    df["y"] = X[:, 0] * X[:, 1] + 0.05 * rng.normal(size=n)
    df.to_csv(path, index=False)


def test_rank_continuous_target_pvalues_and_baselines(tmp_path, capsys):
    path = tmp_path / "cont.csv"
    _continuous_csv(path)
    out = tmp_path / "r.csv"
    rc = main(["rank", str(path), "--target", "y", "--methods", "ReliefF,MultiSURF,MLKRDiagonal", "--pvalues",
               "--permutations", "9", "--out", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "continuous target" in cap.err
    t = pd.read_csv(out)
    for col in ("ReliefF_p", "ReliefF_q", "MLKRDiagonal_p", "pearson_stat", "pearson_p", "spearman_q",
                "spearman_rank"):
        assert col in t, col
    top = set(t.sort_values("ReliefF_rank")["feature"].head(2))
    assert top == {"x0", "x1"} and set(t.loc[t.ReliefF_q < 0.05, "feature"]) >= {"x0", "x1"}
    assert set(t.sort_values("pearson_rank")["feature"].head(2)) != {"x0", "x1"}
    p = t["MLKRDiagonal_p"].to_numpy()
    assert p.min() >= 0.1 and np.allclose(p * 10, np.round(p * 10))  # (b + 1) / (B + 1) with B = 9
    # class labels: the t-test baseline; a method without a continuous definition is refused for y
    rc = main(["rank", str(path), "--target", "y", "--methods", "MulRel"])
    assert rc == 2 and "no definition for a continuous target" in capsys.readouterr().err


def test_rank_log_and_count_note(expression_csv, tmp_path, capsys):
    path, planted = expression_csv
    rc = main(["rank", str(path), "--target", "diagnosis", "--id-col", "sample", "--methods", "ReliefF",
               "--out", str(tmp_path / "a.csv"), "--top", "0"])
    err = capsys.readouterr().err
    assert rc == 0 and "consider --log" in err
    rc = main(["rank", str(path), "--target", "diagnosis", "--id-col", "sample", "--methods", "ReliefF", "--log",
               "--out", str(tmp_path / "b.csv"), "--top", "0"])
    err = capsys.readouterr().err
    assert rc == 0 and "consider --log" not in err and "log2(x + 1)" in err
    t = pd.read_csv(tmp_path / "b.csv")
    assert "t_test_p" in t and set(t.sort_values("t_test_rank")["feature"].head(len(planted))) == set(planted)
    neg = tmp_path / "neg.csv"
    pd.DataFrame({"a": [-1.0, 2.0, 3.0, 4.0], "b": [1.0, 2.0, 3.0, 5.0], "c": ["x", "x", "y", "y"]}).to_csv(neg)
    assert main(["rank", str(neg), "--target", "c", "--log"]) == 2
    assert "--log: column" in capsys.readouterr().err


def test_evaluate_continuous_target(tmp_path, capsys):
    path = tmp_path / "cont.csv"
    _continuous_csv(path)
    out = tmp_path / "ev"
    rc = main(["evaluate", str(path), "--target", "y", "--methods", "ReliefF", "--cv", "3x1", "--out", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["method"]) == {"kNN", "ReliefF"} and {"rmse", "r2"} <= set(summary.columns)
    pairs = pd.read_csv(out / "pairwise.csv")
    assert pairs.loc[0, "method"] == "ReliefF" and pairs.loc[0, "rmse_diff"] < 0
    assert "RMSE" in cap.out and (out / "report.md").exists()


# -- every column of the files beside its own feature: the file against the library, by name ---------------------------
def _unsorted_table(path, continuous=False, n=60, d=20, seed=3):
    """A table whose feature names are in no sorted order (random letters), so that a table sorted by rank and a
    column joined by position disagree; three informative columns of graded strength at scattered positions."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 20.0, d)  # unequal scales: the scaling matters
    names = ["".join(rng.choice(list("acgt"), 5)) + f"_{j}" for j in rng.permutation(d)]
    assert names != sorted(names)
    s = X / X.std(axis=0)
    if continuous:
        y = 1.5 * s[:, 13] + s[:, 4] * s[:, 9] + 0.2 * rng.normal(size=n)
    else:
        y = np.where(1.5 * s[:, 13] + s[:, 4] - 0.7 * s[:, 9] + 0.3 * rng.normal(size=n) > 0, "case", "ctrl")
    df = pd.DataFrame(X, columns=names)
    df.insert(d // 2, "label", y)  # the target among the features
    df.to_csv(path, index=False)
    X = df.drop(columns="label")
    return X, df["label"].to_numpy()


def _same_by_name(file_table, lib_table):
    """Every column of ``file_table`` equals ``lib_table``'s for the same feature (rows joined by name)."""
    assert list(file_table.columns) == list(lib_table.columns)
    a = file_table.set_index("feature")
    b = lib_table.set_index("feature").loc[a.index]
    for col in a.columns:
        np.testing.assert_allclose(a[col].to_numpy(float), b[col].to_numpy(float), rtol=1e-12, atol=1e-15,
                                   err_msg=col)


@pytest.mark.parametrize("continuous", [False, True], ids=["classes", "continuous"])
def test_rank_file_matches_the_library_feature_by_feature(continuous, tmp_path, capsys):
    from sklearn.preprocessing import StandardScaler

    from knnweights import MLKRDiagonal, MultiSURF, ReliefF, Simba, permutation_pvalues, rank_table
    from knnweights.significance import bh_qvalues, univariate_tests

    path, out = tmp_path / "expr.csv", tmp_path / "ranks.csv"
    X, y = _unsorted_table(path, continuous)
    tt = "continuous" if continuous else "classes"
    own = {"ReliefF": ReliefF(pvalues=True, target_type=tt, random_state=0)}  # the methods' own pair tests
    if continuous:
        perm = {"MLKRDiagonal": MLKRDiagonal(random_state=0)}  # permutation p-values
    else:
        own["MultiSURF"] = MultiSURF(pvalues=True, target_type=tt, random_state=0)
        perm = {"Simba": Simba(random_state=0)}
    methods = [*own, *perm]
    rc = main(["rank", str(path), "--target", "label", "--methods", ",".join(methods), "--pvalues",
               "--permutations", "9", "--out", str(out), "--top", "0"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    t = pd.read_csv(out)
    names = list(X.columns)
    assert sorted(t["feature"]) == sorted(names) and t["feature"].tolist() != names
    by = t.set_index("feature").loc[names]  # the file's rows in the library's feature order, joined by name
    A = StandardScaler().fit_transform(X.to_numpy(np.float64))
    fits = {m: est.fit(A, y) for m, est in {**own, **perm}.items()}
    for m, est in fits.items():
        np.testing.assert_allclose(by[f"{m}_weight"], est.feature_importances_, rtol=1e-12, atol=1e-15, err_msg=m)
        np.testing.assert_allclose(by[f"{m}_score"], est.scores_, rtol=1e-12, atol=1e-15, err_msg=m)
        np.testing.assert_array_equal(by[f"{m}_rank"], est.ranking_, err_msg=m)
    for m in own:
        np.testing.assert_allclose(by[f"{m}_p"], fits[m].pvalues_, rtol=1e-12, atol=1e-300, err_msg=m)
        np.testing.assert_allclose(by[f"{m}_q"], fits[m].qvalues_, rtol=1e-12, atol=1e-300, err_msg=m)
    for m, est in perm.items():
        res = permutation_pvalues(est, A, y, n_permutations=9, random_state=0)
        np.testing.assert_allclose(by[f"{m}_p"], res.pvalues, rtol=1e-12, err_msg=m)
        np.testing.assert_allclose(by[f"{m}_q"], res.qvalues, rtol=1e-12, err_msg=m)
    tests = univariate_tests(A, y, continuous=continuous)
    assert set(tests) == ({"pearson", "spearman"} if continuous else {"t"})
    for key, (stat, p) in tests.items():
        b = {"t": "t_test", "pearson": "pearson", "spearman": "spearman"}[key]
        np.testing.assert_allclose(by[f"{b}_stat"], stat, rtol=1e-12, atol=1e-15, err_msg=b)
        np.testing.assert_allclose(by[f"{b}_p"], p, rtol=1e-12, atol=1e-300, err_msg=b)
        np.testing.assert_allclose(by[f"{b}_q"], bh_qvalues(p), rtol=1e-12, atol=1e-300, err_msg=b)
        r = by[f"{b}_rank"].to_numpy()
        assert sorted(r) == list(range(1, len(names) + 1)) and np.all(np.diff(p[np.argsort(r)]) >= 0), b
    np.testing.assert_allclose(by["mean_rank"], np.mean([fits[m].ranking_ for m in methods], axis=0), rtol=1e-12)
    assert t["mean_rank"].is_monotonic_increasing
    # the library's table is the file's, column for column and row for row
    lib = rank_table(methods, X, y, pvalues=True, baselines=True, sort_by="mean_rank", scale="standard",
                     target_type=tt, n_permutations=9, random_state=0)
    _same_by_name(t, lib)
    assert lib["feature"].tolist() == t["feature"].tolist()


@pytest.mark.parametrize("continuous", [False, True], ids=["classes", "continuous"])
def test_evaluate_files_match_the_library_by_name(continuous, tmp_path, capsys):
    from knnweights import ReliefF, Simba, rank_table
    from knnweights.evaluation.compare import compare_methods, pairwise_tests
    from knnweights.evaluation.regression import compare_regression, regression_tests
    from knnweights.evaluation import summarize

    path, out = tmp_path / "expr.csv", tmp_path / "ev"
    X, y = _unsorted_table(path, continuous)
    tt = "continuous" if continuous else "classes"
    methods = ["ReliefF"] if continuous else ["ReliefF", "Simba"]
    rc = main(["evaluate", str(path), "--target", "label", "--methods", ",".join(methods), "--cv", "2x2",
               "--out", str(out), "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    ranks = pd.read_csv(out / "ranks.csv")
    assert ranks["feature"].tolist() != list(X.columns)
    _same_by_name(ranks, rank_table(methods, X, y, baselines=True, sort_by="mean_rank", scale="standard",
                                    target_type=tt, random_state=0))
    # the cross-validation tables, row by row keyed by method (and pair of methods)
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    pairs = pd.read_csv(out / "pairwise.csv").set_index(["method", "other"])
    if continuous:
        rows = compare_regression(X.to_numpy(), y.astype(float), {"ReliefF": ReliefF(target_type=tt, random_state=0)},
                                  name="expr", cv=(2, 2), n_neighbors=5, scale="standard", random_state=0)
        frame = pd.DataFrame(rows).groupby("method")
        np.testing.assert_allclose(summary.loc[frame.rmse.mean().index, "rmse"], frame.rmse.mean(), rtol=1e-12)
        np.testing.assert_allclose(summary.loc[frame.r2.mean().index, "r2"], frame.r2.mean(), rtol=1e-12)
        lib_pairs, diff = regression_tests(rows), "rmse_diff"
    else:
        ests = {"ReliefF": ReliefF(random_state=0), "Simba": Simba(random_state=0)}
        rows = compare_methods(X.to_numpy(), y, ests, name="expr", cv=(2, 2), n_neighbors=5, scale="standard",
                               random_state=0, progress=False)
        for s in summarize(rows):
            np.testing.assert_allclose(summary.loc[s["method"], ["mean", "std"]].to_numpy(float),
                                       [s["mean"], s["std"]], rtol=1e-12, err_msg=s["method"])
            assert summary.loc[s["method"], "n"] == s["n"] == 4
        lib_pairs, diff = pairwise_tests(rows, methods=["kNN", *methods]), "diff"
        res = pd.read_csv(out / "results.csv").set_index(["method", "repeat", "fold"])
        lib_rows = rows.set_index(["method", "repeat", "fold"]).loc[res.index]
        np.testing.assert_allclose(res["accuracy"], lib_rows["accuracy"], rtol=1e-12)
    assert len(pairs) == len(lib_pairs)
    for p in lib_pairs:
        got = pairs.loc[(p["method"], p["other"])]
        np.testing.assert_allclose([got[diff], got["p"]], [p[diff], p["p"]], rtol=1e-12)
        assert got["outcome"] == p["outcome"]


def test_rank_bed_file_matches_the_library_snp_by_snp(tmp_path, capsys):
    bed_reader = pytest.importorskip("bed_reader")
    from knnweights import MultiSURF, ReliefF
    from knnweights.io import read_plink

    rng = np.random.default_rng(11)
    n, d = 90, 30
    G = rng.integers(0, 3, (n, d)).astype(np.float32)
    G[rng.random((n, d)) < 0.03] = np.nan
    y = (np.nan_to_num(G[:, 5]) + np.nan_to_num(G[:, 22]) + rng.integers(0, 2, n) >= 3) + 1
    snps = [f"rs{v}" for v in rng.choice(10**6, d, replace=False)]  # in no sorted order
    assert snps != sorted(snps)
    path = tmp_path / "study.bed"
    bed_reader.to_bed(path, G, properties={"sid": snps, "pheno": [str(v) for v in y]})
    out = tmp_path / "snps.csv"
    assert main(["rank", str(path), "--methods", "MultiSURF,ReliefF", "--out", str(out), "--top", "0"]) == 0, \
        capsys.readouterr().err
    t = pd.read_csv(out)
    assert t["feature"].tolist() != snps and t["mean_rank"].is_monotonic_increasing
    by = t.set_index("feature").loc[snps]
    data = read_plink(path)
    fits = {m: cls(missing="diff", random_state=0).fit(data.X, data.y)
            for m, cls in (("MultiSURF", MultiSURF), ("ReliefF", ReliefF))}
    for m, est in fits.items():
        np.testing.assert_allclose(by[f"{m}_weight"], est.feature_importances_, rtol=1e-12, atol=1e-15, err_msg=m)
        np.testing.assert_allclose(by[f"{m}_score"], est.scores_, rtol=1e-12, atol=1e-15, err_msg=m)
        np.testing.assert_array_equal(by[f"{m}_rank"], est.ranking_, err_msg=m)
    np.testing.assert_allclose(by["mean_rank"], (fits["MultiSURF"].ranking_ + fits["ReliefF"].ranking_) / 2)
    assert list(t.columns) == ["feature", "MultiSURF_weight", "MultiSURF_score", "MultiSURF_rank", "ReliefF_weight",
                               "ReliefF_score", "ReliefF_rank", "mean_rank"]
