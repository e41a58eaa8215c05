"""The machinery of ``knnweights reproduce``: dataset names, parallel = serial, progress, provenance, report text."""

import io
import json
import os
import shutil

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

from knnweights.evaluation import RepeatedCV, run_grid
from knnweights.reproduce import check_report, reproduce, resolve_datasets, resolve_methods
from knnweights.reproduce.report import table_markdown, verdict
from knnweights.reproduce.tables import Config, DatasetSpec, MethodSpec, TableSpec, miss_reason, run_table
from knnweights.utils import progress_bar

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- --datasets ------------------------------------------------------------------------
@pytest.mark.parametrize("name, must", [("colon_alon", {"Colon", "colon_alon1999", "Colon Cancer [16]"}),
                                        ("COLON_ALON1999", {"colon_alon", "Colon"}),
                                        ("IONO", {"IONO", "Ionosphere", "ionosphere"}),
                                        ("waveform", {"waveform_v1", "Wav. Dat. Gen. ver1"}),
                                        ("Parkinsons", {"PARK", "Parkinson", "parkinsons"})])
def test_dataset_names_resolve(name, must):
    got = set(resolve_datasets([name]))
    assert must <= got
    assert "sonar" not in got and "Sonar" not in got


def test_unknown_dataset_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown dataset.*'nonsense'.*colon_alon.*IONO"):
        resolve_datasets(["sonar", "nonsense"])


def test_cli_dataset_errors_exit_2(tmp_path, capsys):
    from knnweights.cli import main

    assert main(["reproduce", "mdm", "--tiny", "--out", str(tmp_path), "--datasets", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert "nonsense" in err and "colon_alon" in err and "Sonar" in err
    assert not os.path.exists(tmp_path / "report.md")
    assert main(["reproduce", "mdm", "--tiny", "--out", str(tmp_path), "--tables", "mdm_nonsense_x", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err


def test_bundled_name_runs_cells(tmp_path):
    """``--datasets colon_alon`` (the name ``knnweights datasets`` prints) selects MDM's Colon row."""
    res = reproduce("mdm", mode="tiny", out=str(tmp_path), datasets=["colon_alon"], verbose=False, n_jobs=1)
    assert res["cells_total"] > 0
    rows = res["results"][0].rows
    assert {r["dataset"] for r in rows} == {"Colon"}
    assert all(r["status"] == "ok" for r in rows)


# -- --methods --------------------------------------------------------------------------
def test_method_labels_resolve_and_unknown_ones_name_the_valid_ones():
    assert resolve_methods(["ib1", "SIM", "ib1"], ["im4e"]) == ("IB1", "SIM")
    assert resolve_methods(["ib1,SIM", "GFP"], ["im4e"]) == ("IB1", "SIM", "GFP")
    with pytest.raises(ValueError, match="unknown method.*'SQP-FW'.*GFP.*I-M4E"):
        resolve_methods(["IB1", "SQP-FW"], ["im4e"])  # a method of another paper


def test_methods_restrict_the_computed_columns_and_keep_the_store(tmp_path, capsys):
    from knnweights.cli import main

    out = str(tmp_path)
    res = reproduce("im4e", mode="tiny", out=out, tables=["im4e_table5"], methods=["nbc"], datasets=["IONO", "HS"],
                    verbose=False, n_jobs=1)
    rows = {r["method"]: r for r in res["results"][0].rows if r["dataset"] == "IONO"}
    assert rows["NBC"]["status"] == "ok" and rows["NBC"]["n_cells"] == 3
    assert rows["IB1"]["status"] == rows["I-M4E"]["status"] == "not run (method not selected)"
    assert res["figures"] == [] and res["cells_total"] == 6  # NBC on two sets, 3 folds each
    stored = [json.loads(line) for line in open(os.path.join(out, "store", "im4e_table5.jsonl"))]
    assert {r["method"] for r in stored} == {"NBC"}
    # a second column later: NBC's cells come from the store
    res = reproduce("im4e", mode="tiny", out=out, tables=["im4e_table5"], methods=["NBC", "IB1"],
                    datasets=["IONO", "HS"], verbose=False, n_jobs=1)
    assert res["cells_run"] == 6 and res["cells_total"] == 12
    assert main(["reproduce", "im4e", "--tiny", "--out", out, "--methods", "IB1", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err


# -- results do not depend on n_jobs or thread counts -----------------------------------
class _Weights:
    """run_grid callable: 1-NN accuracy of a weighter and its weights (to compare runs exactly)."""

    def __init__(self, est):
        self.est = est

    def __repr__(self):
        return f"_Weights({self.est!r})"

    def __call__(self, X_tr, y_tr, X_te, y_te, X_val=None, y_val=None, random_state=0):
        from sklearn.base import clone

        from knnweights.classifiers import WeightedKNN

        est = clone(self.est)
        if "random_state" in est.get_params():
            est.set_params(random_state=random_state)
        clf = WeightedKNN(est, 1).fit(X_tr, y_tr)
        return {"accuracy": float(np.mean(clf.predict(X_te) == y_te)),
                "weights": clf.weighter_.feature_importances_.tolist()}


def _methods():
    from knnweights import EFW, MDM, SQPFW

    return {"MDM": _Weights(MDM()), "EFW": _Weights(EFW(n_estimators=2, max_iter=50)),
            "SQPFW": _Weights(SQPFW(max_iter=200))}


def test_results_do_not_depend_on_n_jobs_or_threads(informative_problem):
    from threadpoolctl import threadpool_limits

    X, y = informative_problem(n=48, n_noise=5, random_state=3)
    kw = {"protocol": RepeatedCV(3, 1), "random_state": 7, "as_frame": False, "progress": False}
    serial = run_grid(_methods(), {"toy": (X, y)}, n_jobs=1, **kw)
    with threadpool_limits(1):
        one_thread = run_grid(_methods(), {"toy": (X, y)}, n_jobs=1, **kw)
    parallel = run_grid(_methods(), {"toy": (X, y)}, n_jobs=2, **kw)
    for other in (one_thread, parallel):
        assert len(other) == len(serial) == 9
        for a, b in zip(serial, other, strict=True):
            assert (a["method"], a["repeat"], a["fold"]) == (b["method"], b["repeat"], b["fold"])
            assert a["accuracy"] == b["accuracy"]
            np.testing.assert_allclose(a["weights"], b["weights"], rtol=1e-9, atol=1e-12, err_msg=a["method"])


def test_reproduce_table_same_with_one_or_two_jobs(tmp_path):
    a = reproduce("mdm", mode="tiny", out=str(tmp_path / "a"), datasets=["Sonar"], verbose=False, n_jobs=1)
    b = reproduce("mdm", mode="tiny", out=str(tmp_path / "b"), datasets=["Sonar"], verbose=False, n_jobs=2)
    key = ("method", "ours_mean", "ours_std", "ours_median_n_nonzero")
    assert [tuple(r.get(k) for k in key) for r in a["results"][0].rows] == \
           [tuple(r.get(k) for k in key) for r in b["results"][0].rows]


# -- progress bar -----------------------------------------------------------------------
def test_progress_bar_counts_and_time_left(monkeypatch):
    """Elapsed and the time left come from the items run in this call, not those read from a store."""
    import tqdm.std

    clock = [1000.0]
    monkeypatch.setattr(tqdm.std, "time", lambda: clock[0])
    s = io.StringIO()
    bar = progress_bar(100, "t5", initial=50, file=s, unit="cells")
    for _ in range(10):
        clock[0] += 1.0
        bar.update()
    bar.refresh()
    text = s.getvalue()
    assert "t5:" in text and "60/100" in text and "00:10<00:40" in text  # 10 cells in 10 s, 40 left
    bar.close()
    assert s.getvalue().endswith("\n")


def test_reproduce_shows_a_progress_bar(tmp_path, capsys):
    reproduce("mdm", mode="tiny", out=str(tmp_path), datasets=["Sonar"], verbose=True, n_jobs=1)
    err = capsys.readouterr().err
    assert "fidelity: no paper numbers to compare with" in err and "0/0" not in err
    bars = [ln for ln in err.replace("\r", "\n").splitlines() if ln.startswith("table 1/1 mdm_ours:")]
    assert bars and "100%" in bars[-1] and "12/12" in bars[-1]  # 4 methods x 3 folds


# -- provenance -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mdm_tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("mdm")
    reproduce("mdm", mode="tiny", out=str(out), datasets=["Sonar"], verbose=False, n_jobs=1)
    return out


def test_report_records_its_versions_and_check_report(mdm_tiny, tmp_path, capsys):
    from knnweights import MDM
    from knnweights.cli import main

    md = mdm_tiny / "report.md"
    meta = json.loads((mdm_tiny / "report.json").read_text())
    assert meta["provenance"]["version"] and "source_hash" not in meta["provenance"]
    keys = {m: rec["version"] for m, rec in meta["code"]["mdm_ours"].items()}
    assert keys["hard MDM + 1-NN"] == f"KNNClassifier=1,MDM={MDM._algorithm_version},WeightedKNN=1,_Run=1,protocol=1"
    assert check_report(md)["match"] is True
    assert main(["reproduce", "--check-report", str(md)]) == 0
    assert "made by the algorithm versions installed now" in capsys.readouterr().out
    # a report whose MDM cells were made by another version of MDM
    other = tmp_path / "other"
    other.mkdir()
    (other / "report.md").write_text(md.read_text())
    meta["code"]["mdm_ours"]["hard MDM + 1-NN"]["version"] = keys["hard MDM + 1-NN"].replace(
        f"MDM={MDM._algorithm_version}", f"MDM={MDM._algorithm_version + 1}")
    (other / "report.json").write_text(json.dumps(meta))
    res = check_report(other / "report.md")
    assert res["match"] is False and res["stale"] == [("mdm_ours", "hard MDM + 1-NN", meta["code"]["mdm_ours"][
        "hard MDM + 1-NN"]["version"], ["MDM"])]
    assert main(["reproduce", "--check-report", str(other / "report.md")]) == 1
    assert "other algorithm versions" in capsys.readouterr().out
    old = tmp_path / "old"
    old.mkdir()
    (old / "report.md").write_text("# a report from before provenance\n")
    assert check_report(old / "report.md")["match"] is None
    assert main(["reproduce", "--check-report", str(old / "report.md")]) == 1


# -- report text ------------------------------------------------------------------------
def test_tiny_report_says_smoke_test_and_mdm_has_no_paper_numbers(mdm_tiny):
    text = (mdm_tiny / "report.md").read_text()
    head = text.split("## ")[0]
    assert "Smoke test (`--tiny`), not a reproduction" in head
    assert "no paper numbers" in text and "0/0" not in text
    mdm = [ln for ln in text.splitlines() if ln.startswith("- MDM")][0]
    assert "**no paper numbers**" in mdm
    meta = json.loads((mdm_tiny / "report.json").read_text())
    assert meta["tables"][0]["verdict"] == "no paper numbers" and meta["mode"] == "tiny"


def _toy_spec(X, y, differs="", stand_in="", reading=""):
    return TableSpec("im4e", "toy", "toy", "im4e_table5.csv",
                     [DatasetSpec("VC", "toy", lambda cfg: (X, y), differs=differs)],
                     [MethodSpec("IB1", lambda cfg: KNeighborsClassifier(1), stand_in=stand_in, reading=reading)],
                     protocol=lambda cfg: RepeatedCV(2, 1))


def test_missed_cells_carry_their_reason(tmp_path):
    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(3, 1, (20, 3))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    # separable toy data: ~100 % against the paper's 80.85 %, a miss
    plain = run_table(_toy_spec(X, y), Config(mode="tiny", out=str(tmp_path / "a"), n_jobs=1)).rows[0]
    assert plain["within"] is False and plain["miss_reason"] == plain["miss_kinds"] == "unexplained"
    spec = _toy_spec(X, y, differs="not the paper's data", stand_in="sklearn 1-NN for WEKA IB1",
                     reading="Euclidean distance")
    row = run_table(spec, Config(mode="tiny", out=str(tmp_path / "b"), n_jobs=1)).rows[0]
    assert row["miss_reason"] == ("dataset differs from the paper's: not the paper's data; stand-in classifier: "
                                  "sklearn 1-NN for WEKA IB1; paper ambiguity, reading used: Euclidean distance")
    assert row["miss_kinds"] == "dataset differs, stand-in classifier, paper ambiguity"
    # what is known about an unexplained gap is said, and the kind stays "unexplained"
    spec = _toy_spec(X, y)
    spec.datasets[0].unexplained = "every method misses here"
    known = run_table(spec, Config(mode="tiny", out=str(tmp_path / "c"), n_jobs=1)).rows[0]
    assert known["miss_reason"] == "unexplained (every method misses here)" and known["miss_kinds"] == "unexplained"
    from knnweights.reproduce.report import _miss_counts

    class R:
        rows = [row, plain, {**row, "within": True},
                {"within": False, "miss_reason": "paper ambiguity, reading used: x; dataset differs from the paper's"}]

    assert _miss_counts([R]) == {"dataset differs": 2, "stand-in classifier": 1, "paper ambiguity": 2,
                                 "unexplained": 1}
    # the quick-mode subsampling of a bundled set is said
    from knnweights.reproduce._data import loader

    ds = DatasetSpec("Colon", "colon_alon1999", loader("colon_alon", max_features={"quick": 200}))
    assert miss_reason(ds, MethodSpec("x"), "--quick keeps 200 of 2000 features").startswith(
        "dataset differs from the paper's: --quick keeps 200 of 2000 features")
    from knnweights.reproduce._data import reduction

    assert reduction(ds.load, "quick") == "--quick keeps 200 of 2000 features"
    assert reduction(ds.load, "full") == ""


def test_another_reading_is_judged_against_the_papers_number_but_not_counted(tmp_path):
    from knnweights.reproduce.report import _miss_counts, fidelity

    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(3, 1, (20, 3))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    spec = _toy_spec(X, y)
    spec.methods.append(MethodSpec("IB1 (other reading)", lambda cfg: KNeighborsClassifier(3), paper_label="IB1",
                                   reading="k = 3"))
    res = run_table(spec, Config(mode="tiny", out=str(tmp_path), n_jobs=1))
    main, other = res.rows
    assert other["paper"] == main["paper"] == 80.85 and other["within"] is False and other["counted"] is False
    assert "counted" not in main and other["miss_reason"] == "paper ambiguity, reading used: k = 3"
    assert fidelity([res])["cells_compared"] == 1 and _miss_counts([res]) == {"unexplained": 1}
    text = table_markdown(res)
    assert "no (another reading: not counted)" in text


def test_verdicts():
    class R:
        def __init__(self, within, wtl=(), csv="t.csv"):
            self.spec = TableSpec("p", "t", "t", csv, [], [], None)
            self.rows = [{"within": w, "diff": 1.0 if w else 5.0} for w in within]
            self.wtl = [{"agree": a, "compared": c} for a, c in wtl]

    assert verdict(R([True] * 8 + [False] * 2))[0] == "reproduced"
    assert verdict(R([True] * 8 + [False] * 2, [(1, 10)]))[0] == "partly reproduced"
    assert verdict(R([True] * 3 + [False] * 7, [(1, 10)]))[0] == "not reproduced"
    word, text = verdict(R([True] * 3 + [False] * 1))
    assert word == "partly reproduced" and "3/4 cells within tolerance (75 %)" in text
    assert verdict(R([], csv=None))[0] == "no paper numbers"
    assert verdict(R([None, None]))[0] == "not compared"
    word, text = verdict(R([True] * 8 + [False] * 2), mode="tiny")
    assert word == "smoke test, not judged" and "8/10 cells" in text


def test_coinciding_lines_say_so_in_the_legend():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from knnweights.plotting import plot_irrelevant_feature_curve, plot_top_feature_curves
    from knnweights.plotting.evaluation import plot_elimination_curves

    err = {"I-RELIEF": {"counts": np.array([0, 300]), "mean_error": np.array([0.1, 0.4])},
           "LH-RELIEF": {"counts": np.array([0, 300]), "mean_error": np.array([0.1, 0.4])},
           "Simba": {"counts": np.array([0, 300]), "mean_error": np.array([0.1, 0.41])}}
    ax = plot_irrelevant_feature_curve(err)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["I-RELIEF", "LH-RELIEF (same as I-RELIEF)", "Simba"]
    assert [ln.get_linestyle() for ln in ax.get_lines() if ln.get_marker() == "o"] == ["-", "--", "-"]
    cur = {"EFW": {"n_features": np.array([1, 5]), "mean": np.array([0.7, 0.8])},
           "EFWWD": {"n_features": np.array([1, 5]), "mean": np.array([0.7, 0.8])}}
    for plot in (plot_top_feature_curves, plot_elimination_curves):
        ax = plot(cur)
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["EFW", "EFWWD (same as EFW)"]
    plt.close("all")


# -- a --full run over several sessions: per-cell algorithm versions, partial reports ----------------------
def test_version_key_names_the_classes_that_compute_the_cells():
    from knnweights import IRelief, LHRelief
    from knnweights.evaluation import weighter_pipeline
    from knnweights.reproduce._versions import PROTOCOL_VERSION, algorithm_versions, version_key
    from knnweights.reproduce.mdm import _Run
    from knnweights.reproduce.sqpfw import _SQPFWPathKNN

    lh = algorithm_versions(weighter_pipeline(LHRelief(), KNeighborsClassifier(1)))
    assert lh == {"LHRelief": LHRelief._algorithm_version, "RemoveLowestWeights": 1, "protocol": PROTOCOL_VERSION}
    assert algorithm_versions(KNeighborsClassifier(1)) == {"protocol": PROTOCOL_VERSION}
    # callables that import their weighter inside __call__ name it
    assert "SQPFW" in algorithm_versions(_SQPFWPathKNN([1.0])) and "MDM" in algorithm_versions(_Run("soft"))
    # parameters are in the cell's fingerprint, not in the key
    assert version_key(LHRelief()) == version_key(LHRelief(max_iter=3)) != version_key(IRelief())


def test_a_version_bump_stales_only_that_methods_cells(monkeypatch):
    from knnweights import IRelief, LHRelief
    from knnweights.reproduce import _versions

    lh, ir = _versions.version_key(LHRelief()), _versions.version_key(IRelief())
    assert _versions.stale_names(lh) == [] and _versions.stale_names(ir) == []
    monkeypatch.setattr(LHRelief, "_algorithm_version", LHRelief._algorithm_version + 1)
    monkeypatch.setattr(_versions, "_CURRENT", None)
    assert _versions.stale_names(lh) == ["LHRelief"] and _versions.stale_names(ir) == []
    assert _versions.version_key(LHRelief()) != lh
    monkeypatch.setattr(_versions, "_CURRENT", None)
    assert _versions.stale_names("not a key") == ["(not a version key)"]


def test_every_reproduction_component_declares_its_version():
    """Every knnweights class (or score function) a table's method pickles declares ``_algorithm_version``."""
    import io
    import pickle

    from knnweights.evaluation.tuning import Tuned
    from knnweights.reproduce import PAPERS, _module
    from knnweights.reproduce._versions import _own_version

    missing = set()

    class Rec(pickle.Unpickler):
        def find_class(self, module, name):
            obj = super().find_class(module, name)
            if module.startswith("knnweights") and obj is not Tuned and _own_version(obj) is None:
                missing.add(f"{module}.{name}")
            return obj

    for p in PAPERS:
        for spec in _module(p).tables():
            for m in spec.methods:
                if m.build is None:
                    continue
                try:
                    obj = m.build(Config(mode="full", out="unused"))
                except NotImplementedError:
                    continue
                Rec(io.BytesIO(pickle.dumps(obj))).load()
    assert not missing, sorted(missing)


def test_cells_made_by_other_code_are_recomputed(tmp_path):
    X, y = np.r_[np.zeros((10, 2)), np.ones((10, 2))], np.r_[np.zeros(10, int), np.ones(10, int)]
    store = tmp_path / "s.jsonl"
    kw = dict(protocol=RepeatedCV(2, 1), store=str(store), as_frame=False, n_jobs=1)
    rows = run_grid({"1nn": KNeighborsClassifier(1)}, {"d": (X, y)}, code_versions={"1nn": "aaaa"}, **kw)
    assert [r["code"] for r in rows] == ["aaaa", "aaaa"]
    assert len(run_grid({"1nn": KNeighborsClassifier(1)}, {"d": (X, y)}, code_versions={"1nn": "aaaa"}, **kw)) == 2
    assert len(store.read_text().splitlines()) == 2  # same code: nothing recomputed
    with pytest.warns(RuntimeWarning, match="computed by other algorithm versions"):
        rows = run_grid({"1nn": KNeighborsClassifier(1)}, {"d": (X, y)}, code_versions={"1nn": "bbbb"}, **kw)
    assert [r["code"] for r in rows] == ["bbbb", "bbbb"] and len(store.read_text().splitlines()) == 4
    # --revalidate: one stale cell per (method, dataset) recomputed with the same result vouches for the other
    with pytest.warns(RuntimeWarning, match="same results"):
        rows = run_grid({"1nn": KNeighborsClassifier(1)}, {"d": (X, y)}, code_versions={"1nn": "dddd"}, revalidate=1,
                        **kw)
    assert [r["code"] for r in rows] == ["dddd", "dddd"] and len(store.read_text().splitlines()) == 6
    assert [r.get("revalidated") for r in rows] == [None, {"from": "bbbb", "checked": 1}]
    # a recomputed cell that differs (a tampered stored accuracy stands for changed numbers): all recomputed
    lines = store.read_text().splitlines()
    rec = [json.loads(x) for x in lines]
    for r in rec:
        r["accuracy"] = 1.0
    store.write_text("".join(json.dumps(r) + "\n" for r in rec))
    with pytest.warns(RuntimeWarning, match="computed again"):
        rows = run_grid({"1nn": KNeighborsClassifier(1)}, {"d": (X, y)}, code_versions={"1nn": "eeee"}, revalidate=1,
                        **kw)
    assert all("revalidated" not in r for r in rows) and [r["accuracy"] for r in rows] == [100.0, 100.0]
    assert len(store.read_text().splitlines()) == 8
    # compute=False: only what the store holds, nothing run
    got = run_grid({"1nn": KNeighborsClassifier(1)}, {"d": (X, y)}, code_versions={"1nn": "cccc"}, compute=False,
                   **{**kw, "store": str(store)})
    assert got == [] and len(store.read_text().splitlines()) == 8


def test_partial_run_is_reported_as_partial(tmp_path):
    from knnweights.reproduce.report import fidelity

    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(3, 1, (20, 3))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    spec = TableSpec("im4e", "toy", "toy", "im4e_table5.csv",
                     [DatasetSpec("VC", "toy", lambda cfg: (X, y))],
                     [MethodSpec("IB1", lambda cfg: KNeighborsClassifier(1)),
                      MethodSpec("I-M4E", lambda cfg: KNeighborsClassifier(3))],
                     protocol=lambda cfg: RepeatedCV(2, 2), reference="I-M4E", wtl_rule="im4e")
    cfg = Config(mode="full", out=str(tmp_path), n_jobs=1)
    full = run_table(spec, cfg)
    assert full.cells_expected == full.cells_total == 8 and not full.partial
    assert verdict(full)[0] != "partial" and full.code["IB1"]["version"] == "protocol=1"
    path = tmp_path / "store" / "toy.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]))  # a run stopped after 3 cells
    part = run_table(spec, Config(mode="full", out=str(tmp_path), n_jobs=1, compute=False))
    assert part.partial and part.cells_total == 3 and part.cells_expected == 8
    assert len(path.read_text().splitlines()) == 3  # nothing computed
    st = {r["method"]: r for r in part.rows}
    assert st["IB1"]["status"] == "partial: 3 / 4 cells (not judged)" and st["IB1"]["within"] is None
    assert st["I-M4E"]["status"].startswith("partial: 0 / 4")
    assert fidelity([part])["cells_compared"] == 0 and all(w["compared"] == 0 for w in part.wtl)
    word, text = verdict(part)
    assert word == "partial" and "3 / 8 cells done" in text
    again = run_table(spec, cfg)  # resuming computes only the 5 missing cells
    assert again.cells_run == 5 and not again.partial and again.cells_stale == 0
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    for r in rows[:2]:
        r["code"] = "0" * 16  # made by other code
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    old = run_table(spec, Config(mode="full", out=str(tmp_path), n_jobs=1, compute=False))
    assert old.cells_stale == 2 and old.cells_total == 6 and old.partial
    # --revalidate 1: one stale cell recomputed, the other kept; only the first counts as run
    assert {rows[0]["method"], rows[1]["method"]} == {"IB1"}
    kept = run_table(spec, Config(mode="full", out=str(tmp_path), n_jobs=1, revalidate=1))
    assert kept.cells_total == 8 and not kept.partial and kept.cells_stale == 0
    assert (kept.cells_run, kept.cells_revalidated) == (1, 1)


def test_curve_cells_resume_and_match_irrelevant_feature_curve(tmp_path):
    from knnweights.evaluation import irrelevant_feature_curve
    from knnweights.reproduce._figures import curve_cells

    rng = np.random.RandomState(1)
    X = np.r_[rng.normal(0, 1, (15, 2)), rng.normal(2, 1, (15, 2))]
    y = np.r_[np.zeros(15, int), np.ones(15, int)]
    ests = {"1nn": KNeighborsClassifier(1), "3nn": KNeighborsClassifier(3)}
    ref = irrelevant_feature_curve(ests, X, y, [0, 5], cv=3, n_repeats=2, random_state=0)
    cfg = Config(mode="full", out=str(tmp_path), n_jobs=1, compute=False)
    res, info = curve_cells(cfg, "c", "k", ests, X, y, [0, 5], 3, 2)
    assert res == {} and info["cells_done"] == 0 and info["cells_total"] == 8
    cfg.compute = True
    res, info = curve_cells(cfg, "c", "k", ests, X, y, [0, 5], 3, 2)
    assert info["complete"] and info["cells_done"] == 8
    for e in ests:
        np.testing.assert_array_equal(res[e]["mean_error"], ref[e].mean_error)
        np.testing.assert_array_equal(res[e]["std_error"], ref[e].std_error)
    path = tmp_path / "store" / "c.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:5]))  # repeat 0 done, repeat 1 begun
    cfg.compute = False
    res, info = curve_cells(cfg, "c", "k", ests, X, y, [0, 5], 3, 2)
    assert info == {**info, "cells_done": 5, "repeats_done": 1, "complete": False}
    np.testing.assert_array_equal(res["1nn"]["mean_error"], ref["1nn"].errors[:, 0])


def test_stored_figure_values_are_tied_to_the_estimators_parameters(tmp_path):
    """A parameter changed where a figure's estimator is built (same sources, same key) is not
    answered from the store: curve cells and cached values record the estimators' hash."""
    from knnweights.reproduce._figures import cached, curve_cells

    rng = np.random.RandomState(3)
    X, y = rng.normal(size=(20, 2)), np.r_[np.zeros(10, int), np.ones(10, int)]
    cfg = Config(mode="full", out=str(tmp_path), n_jobs=1)
    _, info = curve_cells(cfg, "c", "k", {"knn": KNeighborsClassifier(1)}, X, y, [0, 3], 2, 1)
    assert info["complete"]
    cfg.compute = False
    _, same = curve_cells(cfg, "c", "k", {"knn": KNeighborsClassifier(1)}, X, y, [0, 3], 2, 1)
    _, other = curve_cells(cfg, "c", "k", {"knn": KNeighborsClassifier(3)}, X, y, [0, 3], 2, 1)
    assert same["cells_done"] == 2 and other["cells_done"] == 0
    cfg.compute = True
    assert cached(cfg, "v", "k", lambda: 1.0, deps=[KNeighborsClassifier(1)]) == 1.0
    cfg.compute = False
    assert cached(cfg, "v", "k", lambda: 2.0, deps=[KNeighborsClassifier(1)]) == 1.0
    assert cached(cfg, "v", "k", lambda: 2.0, deps=[KNeighborsClassifier(3)]) is None


def test_revalidate_keeps_stale_figure_cells_only_when_recomputed_ones_agree(tmp_path):
    """``--revalidate 1`` on figure cells made by other code: one recomputed cell per estimator
    (the largest count first) vouches for the rest when it gives the stored fold errors exactly."""
    import json

    from knnweights.reproduce._figures import curve_cells

    rng = np.random.RandomState(4)
    X, y = rng.normal(size=(24, 2)), np.r_[np.zeros(12, int), np.ones(12, int)]
    ests = {"1nn": KNeighborsClassifier(1)}
    cfg = Config(mode="full", out=str(tmp_path), n_jobs=1)
    ref, info = curve_cells(cfg, "c", "k", ests, X, y, [0, 3, 6], 2, 2)
    assert info["complete"]
    path = tmp_path / "store" / "c.jsonl"

    def rewrite(edit):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps(edit(r)) + "\n" for r in rows))

    rewrite(lambda r: {**r, "code": "old"})  # made by other code
    cfg.compute = False
    assert curve_cells(cfg, "c", "k", ests, X, y, [0, 3, 6], 2, 2)[1]["cells_done"] == 0
    cfg.compute, cfg.revalidate = True, 1
    calls = []
    import knnweights.reproduce._figures as figures_store

    real = figures_store._curve_cell
    figures_store._curve_cell = lambda tag, *a: (calls.append(tag), real(tag, *a))[1]
    try:
        res, info = curve_cells(cfg, "c", "k", ests, X, y, [0, 3, 6], 2, 2)
    finally:
        figures_store._curve_cell = real
    assert calls == [("1nn", 6, 0)] and info["complete"] and res == ref
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [r for r in rows if r.get("revalidated")]
    assert len(kept) == 5 and all(r["revalidated"] == {"from": "old", "checked": 1} for r in kept)
    # stored fold errors that the code does not give again: nothing is kept, every cell is recomputed
    rewrite(lambda r: {**r, "code": "old", "fold_errors": [e + 0.5 for e in r["fold_errors"]]})
    calls.clear()
    figures_store._curve_cell = lambda tag, *a: (calls.append(tag), real(tag, *a))[1]
    try:
        res, info = curve_cells(cfg, "c", "k", ests, X, y, [0, 3, 6], 2, 2)
    finally:
        figures_store._curve_cell = real
    assert len(calls) == 6 and res == ref


def test_figure_prefix_computes_only_the_selected_figures(tmp_path):
    """``--tables lhrelief_fig1``: the figures named so are computed, the others only read from the store."""
    from knnweights.reproduce._figures import cached, curve_cells

    rng = np.random.RandomState(2)
    X, y = rng.normal(size=(20, 2)), np.r_[np.zeros(10, int), np.ones(10, int)]
    ests = {"1nn": KNeighborsClassifier(1)}
    cfg = Config(mode="full", out=str(tmp_path), n_jobs=1, figures=("lhrelief_fig1",))
    assert cfg.computes("lhrelief_fig1_spiral") and not cfg.computes("lhrelief_fig2_bupa_liver")
    _, other = curve_cells(cfg, "lhrelief_fig2_bupa_liver", "k", ests, X, y, [0, 3], 2, 1)
    _, chosen = curve_cells(cfg, "lhrelief_fig1_spiral", "k", ests, X, y, [0, 3], 2, 1)
    assert other["cells_done"] == 0 and chosen["complete"]
    assert cached(cfg, "efw_fig2", "k", lambda: 1.0) is None
    cfg.figures = None
    assert cached(cfg, "efw_fig2", "k", lambda: 1.0) == 1.0


def test_tables_selects_figures_by_prefix_and_rejects_other_names(tmp_path, monkeypatch):
    import knnweights.reproduce as rp

    seen = []

    def fake_figures(cfg, out):
        seen.append(cfg.figures)
        return []

    monkeypatch.setattr(rp._module("lh-relief"), "figures", fake_figures)
    rp.reproduce("lh-relief", mode="tiny", out=str(tmp_path), tables=["lhrelief_fig1"], verbose=False, n_jobs=1)
    rp.reproduce("lh-relief", mode="tiny", out=str(tmp_path), tables=[], verbose=False, n_jobs=1)
    rp.reproduce("lh-relief", mode="tiny", out=str(tmp_path), tables=["lhrelief_table2"], verbose=False, n_jobs=1,
                 compute=False)
    assert seen == [("lhrelief_fig1",), None]
    with pytest.raises(ValueError, match="figures by prefix"):
        rp.reproduce("lh-relief", mode="tiny", out=str(tmp_path), tables=["fig1"], verbose=False)


@pytest.mark.parametrize("folder", ["docs/results", "docs/results/full"])
def test_committed_reports_were_made_by_the_algorithm_versions_at_head(folder):
    """Every method's cells in a committed report were made by the algorithm versions declared at HEAD.

    A commit that bumps a method's ``_algorithm_version`` fails this until the report is made
    again: ``knnweights reproduce all --full --out FOLDER --report-only`` (seconds; the
    method's cells are then counted as stale) or a resumed run (recomputes them).  A refactor
    that keeps the versions keeps every stored cell.
    """
    side = os.path.join(ROOT, folder, "report.json")
    if not os.path.exists(side):
        pytest.skip(f"{folder}/report.json not committed")
    res = check_report(os.path.join(ROOT, folder, "report.md"))
    assert res["match"] is True, res["message"]


class _NeighbourLane(KNeighborsClassifier):
    """1-NN whose every fit appends a row to ``path`` as another process would (a lane on other methods)."""

    def __init__(self, n_neighbors=1, path=None):
        super().__init__(n_neighbors=n_neighbors)
        self.path = path

    def fit(self, X, y):
        with open(self.path, "a") as fh:
            fh.write(json.dumps({"method": "other lane", "dataset": "toy", "repeat": 0, "fold": 0}) + "\n")
        return super().fit(X, y)


def test_cells_run_counts_only_this_process_rows(tmp_path):
    # another process appending to the same store file must not count as cells computed by this run
    rng = np.random.RandomState(1)
    X = np.r_[rng.normal(0, 1, (12, 2)), rng.normal(3, 1, (12, 2))]
    y = np.r_[np.zeros(12, int), np.ones(12, int)]
    path = tmp_path / "store" / "toy.jsonl"
    path.parent.mkdir()
    spec = TableSpec("im4e", "toy", "toy", "im4e_table5.csv", [DatasetSpec("VC", "toy", lambda cfg: (X, y))],
                     [MethodSpec("IB1", lambda cfg: _NeighbourLane(path=str(path)))],
                     protocol=lambda cfg: RepeatedCV(3, 1), reference="IB1", wtl_rule="im4e")
    res = run_table(spec, Config(mode="full", out=str(tmp_path), n_jobs=1))
    lines = path.read_text().splitlines()
    assert sum('"other lane"' in x for x in lines) == 3  # one foreign row per fit
    assert res.cells_total == 3 and res.cells_run == 3 and len(lines) == 6





def test_sqpfw_table1_reads_wdbc_from_scikit_learn():
    """Table 1's "Bre. Can. Dia." row is UCI WDBC, which scikit-learn ships (no network, no bundled copy)."""
    from knnweights.reproduce import resolve_datasets
    from knnweights.reproduce._data import reduction
    from knnweights.reproduce.sqpfw import table1
    from knnweights.reproduce.tables import Config

    ds = {d.key: d for d in table1().datasets}["wdbc"]
    assert ds.load is not None and not ds.reason
    X, y = ds.load(Config(mode="full"))
    assert X.shape == (569, 30) and np.bincount(np.unique(y, return_inverse=True)[1]).tolist() == [212, 357]
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)  # standardised, as the other rows
    assert reduction(ds.load, "full") == "" and "300 rows" in reduction(ds.load, "quick")
    assert "wdbc" in resolve_datasets(["WDBC"], ["sqp-fw"]) and "Bre. Can. Dia." in resolve_datasets(["wdbc"])


def test_best_of_row_against_the_papers_marked_best():
    from knnweights.reproduce.report import fidelity
    from knnweights.reproduce.tables import TableResult, _best_of_row

    rng = np.random.RandomState(0)
    noise = rng.normal(0, 3, 10)

    def cells(acc):
        return [{"repeat": 0, "fold": k, "accuracy": float(a)} for k, a in enumerate(acc)]

    spec = TableSpec("p", "t", "t", "t.csv", [DatasetSpec(d, d.lower(), None) for d in ("S", "T", "N", "O", "U")],
                     [MethodSpec("A", None), MethodSpec("B", None),
                      MethodSpec("A2", None, paper_label="A", reading="another reading")], None, metric="error")
    paper = [{"dataset": d, "method": m, "mean": "10", "best_marked": "yes" if m == best else ""}
             for d, best in (("S", "A"), ("T", "A"), ("N", "A"), ("O", "B"), ("U", "B")) for m in ("A", "B")]
    got = {("S", "A"): cells(80 + noise), ("S", "B"): cells(70 + noise),  # the paper's best is ours: same
           ("T", "A"): cells(80 + noise), ("T", "B"): cells(80.5 + noise[::-1]),  # ours B (0.5 points better), tied
           ("N", "A"): cells(70 + noise), ("N", "B"): cells(80 + noise + rng.normal(0, 0.5, 10)),  # B, not tied
           # another reading of A (not a competitor) beats both: B stays our best, the paper's B agrees
           ("O", "A"): cells(60 + noise), ("O", "B"): cells(70 + noise), ("O", "A2"): cells(95 + noise),
           ("U", "A"): cells(60 + noise)}  # the marked B not computed: the row is left out
    one = {k: v[:1] for k, v in got.items()}  # a single split cannot be tested: no row compared, no NaN
    assert _best_of_row(spec, one, paper) == []
    best = {b["dataset"]: b for b in _best_of_row(spec, got, paper)}
    assert set(best) == {"S", "T", "N", "O"}
    assert best["S"]["ours_best"] == "A" and best["S"]["agree"] and best["S"]["p_value"] == 1.0
    assert best["T"]["ours_best"] == "B" and best["T"]["agree"] and best["T"]["p_value"] >= 0.05
    assert best["N"]["ours_best"] == "B" and not best["N"]["agree"] and best["N"]["p_value"] < 1e-6
    assert best["O"]["ours_best"] == "B" and best["O"]["agree"] and best["O"]["competitors"] == 2
    res = TableResult(spec, [{"within": True, "diff": 1.0}] * 9 + [{"within": False, "diff": 5.0}],
                      best=list(best.values()))
    assert fidelity([res])["best_agree"] == 3 and fidelity([res])["best_compared"] == 4
    word, text = verdict(res)  # 90 % of the cells, 75 % of the rows: the claim-level check passes
    assert word == "reproduced" and "ours or statistically tied with it in 3/4 rows (75 %)" in text
    res.best = res.best[2:]  # one row of two agreeing: 50 %
    assert verdict(res)[0] == "partly reproduced"
    res.rows = []
    text = table_markdown(res)
    assert "| N | A | B |" in text and text.count("| no |") == 1 and "| O | B | B | 1 | same |" in text


def test_wtl_against_an_outcome_the_paper_states(tmp_path):
    from sklearn.dummy import DummyClassifier

    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(0, 1, (30, 3)), rng.normal(3, 1, (30, 3))]
    y = np.r_[np.zeros(30, int), np.ones(30, int)]

    def spec(ref):
        return TableSpec("im4e", "toy", "toy", "im4e_table5.csv", [DatasetSpec("VC", "toy", lambda cfg: (X, y))],
                         [MethodSpec("IB1", lambda cfg: KNeighborsClassifier(1)), MethodSpec("I-M4E", ref)],
                         protocol=lambda cfg: RepeatedCV(5, 2), reference="I-M4E", wtl_rule="stated",
                         stated_outcome="tie")

    same = run_table(spec(lambda cfg: KNeighborsClassifier(1)), Config(mode="full", out=str(tmp_path / "a"), n_jobs=1))
    assert same.wtl[0]["ours"] == "0/1/0" and (same.wtl[0]["agree"], same.wtl[0]["compared"]) == (1, 1)
    worse = run_table(spec(lambda cfg: DummyClassifier(strategy="constant", constant=0)),
                      Config(mode="full", out=str(tmp_path / "b"), n_jobs=1))
    w = worse.wtl[0]
    assert w["ours"] == "1/0/0" and (w["agree"], w["compared"]) == (0, 1) and w["per_dataset"][0]["paper"] == "tie"
    assert "the paper's outcome on every dataset: tie, as its text states" in table_markdown(worse)


class _FiveGenes:
    """A picklable table method that records a non-zero weight count beside its accuracy."""

    def __call__(self, X_tr, y_tr, X_te, y_te, X_val=None, y_val=None, random_state=0):
        pred = KNeighborsClassifier(1).fit(X_tr, y_tr).predict(X_te)
        return {"accuracy": float(np.mean(pred == y_te)), "n_nonzero": 5}


def test_extra_value_printed_beside_the_papers(tmp_path):
    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(3, 1, (20, 3))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    spec = TableSpec("sqp-fw", "toy", "toy", "sqpfw_table2.csv", [DatasetSpec("Colon Cancer [16]", "toy",
                                                                                lambda cfg: (X, y))],
                     [MethodSpec("Standard 1NN", lambda cfg: KNeighborsClassifier(1)),
                      MethodSpec("Weighted 1NN with SQP-FW", lambda cfg: _FiveGenes())],
                     protocol=lambda cfg: RepeatedCV(2, 1), metric="error", extra_value="n_nonzero",
                     extra_paper="median_genes_selected")
    res = run_table(spec, Config(mode="full", out=str(tmp_path), n_jobs=1))
    plain, weighted = res.rows
    assert weighted["ours_median_n_nonzero"] == 5 and weighted["paper_median_genes_selected"] == 20
    text = table_markdown(res)
    assert "median n_nonzero = 5 (paper: 20)" in text and text.count("median n_nonzero") == 1


@pytest.mark.slow
def test_committed_full_store_is_found_by_the_code_at_head(tmp_path):
    """Every stored --full cell the committed report counts is still found: a new parameter at its default
    (``_added_parameters``), a refactor or a moved helper must not change the cells' fingerprints."""
    side = os.path.join(ROOT, "docs/results/full/report.json")
    if not os.path.exists(side):
        pytest.skip("docs/results/full not committed")
    with open(side, encoding="utf-8") as fh:
        meta = json.load(fh)
    shutil.copytree(os.path.join(ROOT, "docs/results/full/store"), tmp_path / "store")
    res = reproduce("all", mode="full", out=str(tmp_path), verbose=False, n_jobs=1, compute=False, progress=False)
    assert res["cells_total"] == meta["cells_total"]
    assert res["fidelity"] == meta["fidelity"]


def test_added_parameters_at_their_defaults_leave_the_fingerprint_alone():
    import joblib

    from knnweights import ReliefF
    from knnweights.evaluation.grid import fingerprint_view

    plain = ReliefF(n_neighbors=5)
    older = ReliefF(n_neighbors=5)
    for name in ReliefF._added_parameters:  # the object as it was before those parameters existed
        del older.__dict__[name]
    assert joblib.hash(fingerprint_view(plain)) == joblib.hash(fingerprint_view(older))
    assert joblib.hash(fingerprint_view(ReliefF(n_neighbors=5, pvalues=True))) != joblib.hash(fingerprint_view(older))
    assert fingerprint_view(KNeighborsClassifier(1))[0] == "KNeighborsClassifier"


def test_a_class_moved_to_another_module_keeps_its_fingerprint(monkeypatch):
    import joblib

    from knnweights import IRelief
    from knnweights.evaluation import RepeatedCV, Tuned, weighted_knn
    from knnweights.evaluation.grid import fingerprint_view

    spec = Tuned(weighted_knn(IRelief(max_iter=3)), {"n_neighbors": [1, 3]})
    before = joblib.hash(fingerprint_view([spec, RepeatedCV(2, 2)]))
    monkeypatch.setattr(IRelief, "__module__", "knnweights.weighters.elsewhere")
    assert joblib.hash(fingerprint_view([spec, RepeatedCV(2, 2)])) == before
    assert joblib.hash(fingerprint_view(Tuned(weighted_knn(IRelief(max_iter=4)), {"n_neighbors": [1, 3]}))) != \
        joblib.hash(fingerprint_view(spec))


def test_a_reproduction_cell_is_keyed_on_its_datas_identity_not_on_its_floats(tmp_path, monkeypatch):
    """Standardised data one ulp off (another CPU's rounding) find the stored cells; other preparation does not,
    and arrays given to run_grid directly are the input: one ulp makes them other data."""
    from knnweights.reproduce import _data

    def spec(**prep):
        load = _data.loader("haberman", **prep)
        return TableSpec("mdm", "toy", "toy", None, [DatasetSpec("HS", "haberman", load)],
                         [MethodSpec("1nn", lambda cfg: KNeighborsClassifier(1))],
                         protocol=lambda cfg: RepeatedCV(2, 1))

    def cfg(compute=True):
        return Config(mode="full", out=str(tmp_path), n_jobs=1, compute=compute)

    assert run_table(spec(std=True), cfg()).cells_run == 2
    real = _data.standardize
    monkeypatch.setattr(_data, "standardize", lambda X: np.nextafter(real(X), np.inf))
    assert not np.array_equal(spec(std=True).datasets[0].load(cfg())[0], real(_data._load_raw("haberman")[0]))
    assert run_table(spec(std=True), cfg(compute=False)).cells_total == 2
    with pytest.warns(RuntimeWarning, match="different configuration"):
        assert run_table(spec(std=False), cfg(compute=False)).cells_total == 0
    monkeypatch.undo()
    X, y = spec(std=True).datasets[0].load(cfg())
    kw = dict(protocol=RepeatedCV(2, 1), store=str(tmp_path / "arrays.jsonl"), as_frame=False, n_jobs=1)
    assert len(run_grid({"1nn": KNeighborsClassifier(1)}, {"HS": (X, y)}, **kw)) == 2
    assert len(run_grid({"1nn": KNeighborsClassifier(1)}, {"HS": (X, y)}, compute=False, **kw)) == 2
    with pytest.warns(RuntimeWarning, match="different configuration"):
        assert run_grid({"1nn": KNeighborsClassifier(1)}, {"HS": (np.nextafter(X, np.inf), y)}, compute=False,
                        **kw) == []


@pytest.mark.parametrize("mode", ["tiny", "quick", "full"])
def test_no_computed_float_enters_a_reproduction_cells_fingerprint(mode, monkeypatch):
    """Every table's cells are keyed on parameters and data identity only: with NumPy's transcendental functions
    and the standardising one ulp off (another CPU's rounding), every fingerprint stays the same."""
    from knnweights.evaluation import grid
    from knnweights.reproduce import PAPERS, _data, _module

    cfg = Config(mode=mode, out="unused")

    def fingerprints():
        out = {}
        for p in PAPERS:
            for spec in _module(p).tables():
                protocol = spec.protocol(cfg)
                data = {}
                for ds in spec.datasets:
                    if ds.load is not None:
                        assert hasattr(ds.load, "identity"), (spec.name, ds.label)  # else its floats are hashed
                        data[ds.key] = grid._data_key(None, None, ds.load.identity(cfg))
                for m in spec.methods:
                    try:
                        obj = m.build(cfg) if m.build is not None else None
                    except NotImplementedError:
                        continue
                    for key, dh in data.items():
                        if obj is not None:
                            out[(spec.name, m.label, key)] = grid._fingerprint(obj, dh, protocol, 0, "accuracy")
        return out

    plain = fingerprints()
    for name in ("logspace", "linspace", "geomspace", "power", "exp", "log", "log10", "sqrt"):
        real = getattr(np, name)
        monkeypatch.setattr(np, name, lambda *a, _real=real, **k: np.nextafter(_real(*a, **k), np.inf))
    real_std = _data.standardize
    monkeypatch.setattr(_data, "standardize", lambda X: np.nextafter(real_std(X), np.inf))
    assert fingerprints() == plain and len(plain) > 100
