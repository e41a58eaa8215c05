"""``knnweights select`` and ``predict``: the files equal the library's results by name, the saved model predicts as
in memory, and bad input is one line with exit status 2."""

import joblib
import numpy as np
import pandas as pd
import pytest

from knnweights.cli import build_parser, main
from knnweights.evaluation import nested_evaluate, selection_pipeline
from knnweights.io import load_table

ARGS = ["--methods", "ReliefF", "--cv", "3x1", "--inner", "3", "--no-progress"]


@pytest.fixture(scope="module")
def genes(tmp_path_factory, write_expression_csv):
    path = tmp_path_factory.mktemp("data") / "genes.csv"
    planted = write_expression_csv(path, n=60, d=40, n_planted=4, n_constant=2)
    return path, planted


@pytest.fixture(scope="module")
def selected(genes, tmp_path_factory):
    path, _ = genes
    out = tmp_path_factory.mktemp("select")
    rc = main(["select", str(path), "--target", "diagnosis", "--id-col", "sample", *ARGS, "--out", str(out)])
    assert rc == 0
    return out


def test_select_files_equal_the_library_result(genes, selected):
    path, planted = genes
    args = build_parser().parse_args(["select", str(path), "--target", "diagnosis", "--id-col", "sample", *ARGS])
    data = load_table(path, "diagnosis", id_col="sample", impute="keep")
    model = selection_pipeline(["ReliefF", None], log=args.log, scale=args.scale, cv=args.inner,
                               random_state=args.random_state)
    res = nested_evaluate(model, data.X, data.y, cv=(3, 1), random_state=0, progress=False)
    written = pd.read_csv(selected / "features.csv").set_index("feature")
    expected = res.feature_table().set_index("feature")
    assert set(written.index) == set(expected.index)
    for col in ("selection_frequency", "mean_rank"):
        np.testing.assert_allclose(written.loc[expected.index, col], expected[col])
    assert list(written.index[written["consensus"]]) == res.consensus
    assert res.consensus and set(res.consensus) <= set(planted)
    summary = pd.read_csv(selected / "summary.csv", index_col="method")
    np.testing.assert_allclose(summary["mean"], res.summary["mean"])
    assert (selected / "report.html").read_text().count("<table") >= 3


def test_predict_equals_the_saved_model(genes, selected, tmp_path):
    path, _ = genes
    model = joblib.load(selected / "model.joblib")
    table = pd.read_csv(path)
    new = table.drop(columns=["diagnosis"]).iloc[:, ::-1]  # columns in another order: taken by name
    new.to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(selected / "model.joblib"), str(tmp_path / "new.csv"), "--id-col", "sample",
                 "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    assert list(pred["sample"]) == list(table["sample"])
    X = table[model.feature_names_in_]
    np.testing.assert_array_equal(pred["prediction"], model.predict(X))
    assert (pred["prediction"] == table["diagnosis"]).mean() > 0.9


def test_bad_input_is_one_line_and_status_2(genes, selected, tmp_path, capsys):
    path, _ = genes
    table = pd.read_csv(path)
    table.drop(columns=["g0001"]).to_csv(tmp_path / "short.csv", index=False)
    assert main(["predict", str(selected / "model.joblib"), str(tmp_path / "short.csv")]) == 2
    assert "lacks 1 of the model's" in capsys.readouterr().err
    assert main(["select", str(path), "--target", "nope", *ARGS]) == 2
    table.assign(diagnosis="tumour").to_csv(tmp_path / "one.csv", index=False)
    assert main(["select", str(tmp_path / "one.csv"), "--target", "diagnosis", *ARGS]) == 2
    small = pd.concat([table[table.diagnosis == "tumour"], table[table.diagnosis == "normal"].head(2)])
    small.to_csv(tmp_path / "small.csv", index=False)
    assert main(["select", str(tmp_path / "small.csv"), "--target", "diagnosis", *ARGS]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("knnweights select: error:")]
    assert len(errors) == 3, errors
    assert "fewer than the 3 outer folds" in errors[-1]
    assert main(["predict", str(tmp_path / "missing.joblib"), str(path)]) == 2


# -- --covariates: adjusted for, not features, and not needed by predict ---------------------------------------------
@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A table whose covariates ``age`` (numeric, driving the label and genes g0-g1) and ``site`` (categorical) sit
    between the genes; the label also depends on g5."""
    rng = np.random.default_rng(8)
    n = 72
    age = rng.normal(50, 10, size=n)
    X = rng.normal(size=(n, 12))
    X[:, :2] += (age[:, None] - 50) / 8
    y = np.where((age - 50) / 10 + X[:, 5] + 0.5 * rng.normal(size=n) > 0, "case", "control")
    frame = pd.DataFrame(X, columns=[f"g{k}" for k in range(12)])
    frame.insert(0, "age", age)
    frame.insert(4, "site", rng.choice(["north", "south"], size=n))
    frame.insert(0, "sample", [f"s{i}" for i in range(n)])
    frame["status"] = y
    path = tmp_path_factory.mktemp("study") / "study.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_select_covariates_are_adjusted_for_not_features(study, tmp_path, capsys):
    path, frame = study
    genes = [f"g{k}" for k in range(12)]
    out = tmp_path / "sel"
    argv = ["select", str(path), "--target", "status", "--id-col", "sample", *ARGS]
    assert main([*argv, "--covariates", "age,site", "--out", str(out)]) == 0, capsys.readouterr().err
    written = pd.read_csv(out / "features.csv").set_index("feature")
    assert sorted(written.index) == sorted(genes)  # the covariates are not candidate features
    # the files are the library's result with the covariates, by name
    data = load_table(path, "status", id_col="sample", covariates=["age", "site"], impute="keep")
    model = selection_pipeline(["ReliefF", None], cv=3, random_state=0)
    res = nested_evaluate(model, data.X, data.y, cv=(3, 1), random_state=0, progress=False,
                          covariates=data.covariates)
    expected = res.feature_table().set_index("feature")
    for col in ("selection_frequency", "mean_rank"):
        np.testing.assert_allclose(written.loc[expected.index, col], expected[col])
    np.testing.assert_allclose(pd.read_csv(out / "summary.csv", index_col="method")["mean"], res.summary["mean"])
    # the saved model: the genes only, so a table without the covariate columns is predicted
    saved = joblib.load(out / "model.joblib")
    assert sorted(saved.feature_names_in_) == sorted(genes)
    assert saved.named_steps["choose"].best_estimator_.n_features_in_ == len(genes)
    frame[["sample", *genes]].to_csv(tmp_path / "new.csv", index=False)
    pred = tmp_path / "p.csv"
    assert main(["predict", str(out / "model.joblib"), str(tmp_path / "new.csv"), "--out", str(pred)]) == 0
    np.testing.assert_array_equal(pd.read_csv(pred)["prediction"], saved.predict(frame[genes]))
    capsys.readouterr()
    # bad covariates: one line and exit status 2 each
    bad = [(["--covariates", "weight"], "weight"), (["--covariates", "status"], "also an outcome"),
           (["--covariates", "age", "--methods", "Simba"], "none has them")]
    for extra, match in bad:
        args = [a for a in argv if a not in ("--methods", "ReliefF")] if "--methods" in extra else argv
        assert main([*args, *extra, "--out", str(tmp_path / "bad")]) == 2
        errors = [e for e in capsys.readouterr().err.splitlines() if e.startswith("knnweights select: error:")]
        assert len(errors) == 1 and match in errors[0], errors
