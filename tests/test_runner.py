"""The grid runner: seeds, splits, no leakage, resume after an interruption, progress."""

import io
import json
import os

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier

from knnweights import Relief, ReliefF
from knnweights.evaluation import (
    RepeatedCV,
    RepeatedHoldout,
    ResultStore,
    Tuned,
    derive_seed,
    run_grid,
    set_random_states,
    share_grid,
    summarize,
    weighted_knn,
)
from knnweights.utils import progress_bar

TIMING = ("fit_time", "score_time")


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, d))
    X[:, 0] += 1.5 * y
    return X, y


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def test_derive_seed_is_stable_and_key_sensitive():
    # fixed values: a change (e.g. Python's randomised hash()) would break reruns
    assert derive_seed(0, "cell", "ReliefF", "sonar", 0, 3) == derive_seed(0, "cell", "ReliefF", "sonar", 0, 3)
    seeds = {derive_seed(0, "cell", m, "d", r, f) for m in "AB" for r in range(3) for f in range(3)}
    assert len(seeds) == 18
    assert derive_seed(1, "x") != derive_seed(0, "x")
    assert derive_seed(0, "x") == 1460374654  # recorded once; must never change
    with pytest.raises(ValueError):
        derive_seed(None, "x")


def test_repeated_cv_splits_partition_and_are_stratified():
    X, y = _data(60)
    splits = list(RepeatedCV(5, 3).split(y, 7, "toy"))
    assert len(splits) == 15
    for r in range(3):
        tests = [te for rr, f, tr, va, te in splits if rr == r]
        assert np.array_equal(np.sort(np.concatenate(tests)), np.arange(60))
    for _, _, tr, va, te in splits:
        assert va is None and np.intersect1d(tr, te).size == 0 and np.bincount(y[te]).tolist() == [6, 6]
    # the same seed gives the same folds, another seed other folds
    again = list(RepeatedCV(5, 3).split(y, 7, "toy"))
    assert all(np.array_equal(a[4], b[4]) for a, b in zip(splits, again, strict=True))
    other = list(RepeatedCV(5, 3).split(y, 8, "toy"))
    assert not all(np.array_equal(a[4], b[4]) for a, b in zip(splits, other, strict=True))


def test_repeated_holdout_thirds():
    X, y = _data(90)
    splits = list(RepeatedHoldout(4).split(y, 0, "toy"))
    assert len(splits) == 4
    for _, f, tr, va, te in splits:
        assert f == 0 and len(tr) == len(va) == len(te) == 30
        assert np.array_equal(np.sort(np.concatenate([tr, va, te])), np.arange(90))
        assert np.bincount(y[te]).tolist() == [15, 15]
    assert not np.array_equal(splits[0][4], splits[1][4])
    two_to_one = list(RepeatedHoldout(2, train_size=2 / 3, val_size=0, test_size=1 / 3).split(y, 0, "toy"))
    assert two_to_one[0][3] is None and len(two_to_one[0][2]) == 60 and len(two_to_one[0][4]) == 30
    with pytest.raises(ValueError, match="must be 1"):
        list(RepeatedHoldout(1, 0.5, 0.5, 0.5).split(y, 0, "toy"))


def test_rerun_gives_identical_table_and_seed_changes_it():
    X, y = _data()
    methods = {"ReliefF": Tuned(weighted_knn(ReliefF(n_neighbors=3)), {"n_neighbors": [1, 3]}, cv=2),
               "Relief": weighted_knn(Relief(n_iter=20))}
    kw = dict(protocol=RepeatedCV(2, 2), as_frame=False)
    a = run_grid(methods, {"toy": (X, y)}, random_state=3, **kw)
    b = run_grid(methods, {"toy": (X, y)}, random_state=3, **kw)
    cheap = {"Relief": methods["Relief"]}
    c = run_grid(cheap, {"toy": (X, y)}, random_state=4, **kw)
    assert _strip(a) == _strip(b)
    a_relief = [r for r in a if r["method"] == "Relief"]
    assert [r["seed"] for r in a_relief] != [r["seed"] for r in c]
    assert [r["accuracy"] for r in a_relief] != [r["accuracy"] for r in c]
    assert [(r["method"], r["repeat"], r["fold"]) for r in a] == [
        (m, r, f) for m in methods for r in range(2) for f in range(2)]
    assert all(r["best_params"]["n_neighbors"] in (1, 3) for r in a if r["method"] == "ReliefF")
    # Relief with n_iter draws random samples: it must be seeded per cell (seed differs per cell)
    assert len({r["seed"] for r in a}) == len(a)
    frame = run_grid(cheap, {"toy": (X, y)}, random_state=3, as_frame=True, protocol=RepeatedCV(2, 2))
    assert frame["accuracy"].tolist() == [r["accuracy"] for r in a_relief]


def test_accuracy_is_the_test_accuracy_in_percent():
    X, y = _data()
    rows = run_grid({"1nn": KNeighborsClassifier(1)}, {"toy": (X, y)}, protocol=RepeatedCV(3, 1), random_state=0,
                    as_frame=False)
    for (_, _, tr, _, te), row in zip(RepeatedCV(3, 1).split(y, 0, "toy"), rows, strict=True):
        expect = 100 * KNeighborsClassifier(1).fit(X[tr], y[tr]).score(X[te], y[te])
        assert row["accuracy"] == pytest.approx(expect) and row["n_test"] == len(te)
    (s,) = summarize(rows)
    assert s["mean"] == pytest.approx(np.mean([r["accuracy"] for r in rows])) and s["n"] == 3


def _cell_fits(log, methods, data, protocol, root):
    """Map every logged fit to its cell; return {cell: [row-index sets]} and the splits."""
    X, y = data["toy"]
    index = {tuple(row): i for i, row in enumerate(X.tolist())}
    splits = {(r, f): (tr, va, te) for r, f, tr, va, te in protocol.split(y, root, "toy")}
    by_seed = {}
    for m, spec in methods.items():
        for (r, f) in splits:
            cs = derive_seed(root, "cell", m, "toy", r, f)
            by_seed[cs] = (m, r, f)  # callables get the cell seed itself
            est = spec.estimator if isinstance(spec, Tuned) else spec
            if hasattr(est, "get_params"):
                p = set_random_states(clone(est), cs).get_params()
                for k, v in p.items():
                    if k.endswith("random_state"):
                        by_seed[v] = (m, r, f)
    fits = {}
    for entry in log:
        cell = by_seed[entry["seed"]]
        fits.setdefault(cell, []).append({index[tuple(row)] for row in entry["rows"]})
    return fits, splits


def _leaks(fits, splits):
    bad = []
    for (m, r, f), seen in fits.items():
        tr, va, te = splits[(r, f)]
        allowed = set(tr.tolist())
        for s in seen:
            if not s <= allowed:
                bad.append((m, r, f))
    return bad


@pytest.mark.parametrize("protocol", [RepeatedCV(3, 2), RepeatedHoldout(2)], ids=["cv", "holdout"])
def test_weighter_sees_training_rows_only(tmp_path, protocol, recording_weighter, read_fit_log, leaky_method):
    X, y = _data(60, 3, seed=1)
    log = str(tmp_path / "fits.jsonl")
    rec = recording_weighter(log_path=log)
    methods = {"plain": weighted_knn(rec),
               "tuned": Tuned(weighted_knn(rec), {"n_neighbors": [1, 3], "weighter__share": [0.0, 0.34]}, cv=3)}
    data = {"toy": (X, y)}
    run_grid(methods, data, protocol=protocol, random_state=5, n_jobs=1, as_frame=False)
    fits, splits = _cell_fits(read_fit_log(log), methods, data, protocol, 5)
    assert len(fits) == 2 * len(splits)  # every cell fitted its weighter
    assert _leaks(fits, splits) == []
    for (m, r, f), seen in fits.items():
        tr, va, te = splits[(r, f)]
        # the final model is fitted on exactly the training rows (not validation, not test)
        assert set(tr.tolist()) in seen
        if m == "tuned" and va is None:
            # internal CV: 3 inner fits on strict subsets + the refit; the grid over k and
            # the share reuses the cached weighter fit instead of refitting it 4 times
            assert len(seen) == 4 and sum(s < set(tr.tolist()) for s in seen) == 3
        elif m == "tuned":
            assert len(seen) == 1  # validation protocol: one fit on the training part, cached
    # negative control: a method that fits on train + test rows is caught by the same check
    log2 = str(tmp_path / "leaky.jsonl")
    leaky = {"leaky": leaky_method(recording_weighter(log_path=log2))}
    run_grid(leaky, data, protocol=protocol, random_state=5, as_frame=False)
    fits2, _ = _cell_fits(read_fit_log(log2), leaky, data, protocol, 5)
    assert len(_leaks(fits2, splits)) == len(splits)


def test_resume_after_interruption_runs_only_missing_cells(tmp_path, flaky_method):
    X, y = _data(60)
    data = {"a": (X, y), "b": (X[:, ::-1].copy(), y)}
    protocol = RepeatedCV(3, 2)
    marker, calls = tmp_path / "fail", tmp_path / "calls.txt"
    fail_seed = derive_seed(11, "cell", "flaky", "b", 1, 0)  # 10th of 12 cells in serial order
    methods = {"flaky": flaky_method(str(marker), str(calls), fail_seed), "1nn": KNeighborsClassifier(1)}
    reference = run_grid(methods, data, protocol=protocol, random_state=11, as_frame=False)
    # rows ordered by method, dataset, repeat, fold
    assert [(r["method"], r["dataset"]) for r in reference][::6] == [("flaky", "a"), ("flaky", "b"), ("1nn", "a"),
                                                                     ("1nn", "b")]
    assert [(r["repeat"], r["fold"]) for r in reference[:6]] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    calls.unlink()
    store = tmp_path / "store" / "cells.jsonl"
    marker.touch()
    with pytest.raises(RuntimeError, match="injected failure"):
        run_grid(methods, data, protocol=protocol, random_state=11, store=store, n_jobs=1, as_frame=False)
    stored = ResultStore(store).read()
    first_calls = calls.read_text().split()
    assert 0 < len(stored) < 24 and len(first_calls) == 9  # flaky cells stored before the failure
    marker.unlink()
    calls.unlink()
    resumed = run_grid(methods, data, protocol=protocol, random_state=11, store=store, n_jobs=1, as_frame=False)
    assert _strip(resumed) == _strip(reference)
    second_calls = calls.read_text().split()
    assert len(second_calls) == 3 and not set(second_calls) & set(first_calls)  # only the missing cells ran
    lines = ResultStore(store).read()
    keys = [(r["method"], r["dataset"], r["repeat"], r["fold"]) for r in lines]
    assert len(keys) == 24 == len(set(keys))  # every cell once, none twice
    # a crash in the middle of a write leaves a torn line: ignored, cut, and the cell rerun
    raw = store.read_bytes().split(b"\n")
    store.write_bytes(b"\n".join(raw[:-2]) + b"\n" + raw[-2][: len(raw[-2]) // 2])
    calls.unlink()
    again = run_grid(methods, data, protocol=protocol, random_state=11, store=store, as_frame=False)
    assert _strip(again) == _strip(reference)
    assert all(json.loads(line) for line in store.read_text().splitlines())
    assert len(store.read_text().splitlines()) == 24
    # a different configuration does not reuse the stored cells
    with pytest.warns(RuntimeWarning, match="different configuration"):
        other = run_grid(methods, data, protocol=protocol, random_state=12, store=store, as_frame=False)
    assert [r["seed"] for r in other] != [r["seed"] for r in reference]


def test_callable_method_extra_columns_and_errors(tmp_path, flaky_method):
    X, y = _data()
    fm = flaky_method(str(tmp_path / "none"), str(tmp_path / "c.txt"), -1)
    rows = run_grid({"f": fm}, {"toy": (X, y)}, protocol=RepeatedCV(3, 1), as_frame=False)
    assert [r["n_train_seen"] for r in rows] == [r["n_train"] for r in rows] == [40, 40, 40]
    with pytest.raises(TypeError, match="expected an estimator"):
        run_grid({"bad": 3}, {"toy": (X, y)}, protocol=RepeatedCV(3, 1))
    with pytest.raises(ValueError, match="non-empty dict"):
        run_grid({}, {"toy": (X, y)})


def test_percentage_removal_picks_share_on_validation():
    # 3 informative + 57 noise features: removing low-weight features helps 1-NN
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 60)
    X = rng.normal(size=(120, 60))
    X[:, :3] += 1.5 * y[:, None]
    method = Tuned(weighted_knn(ReliefF(n_neighbors=5)), {"weighter__share": share_grid(0.1, 0.9), "n_neighbors": [1]})
    rows = run_grid({"rff": method}, {"toy": (X, y)}, protocol=RepeatedHoldout(3), random_state=0, as_frame=False)
    shares = [r["best_params"]["weighter__share"] for r in rows]
    assert all(s in share_grid(0.1, 0.9) for s in shares) and min(shares) >= 0.5
    base = run_grid({"1nn": KNeighborsClassifier(1)}, {"toy": (X, y)}, protocol=RepeatedHoldout(3), random_state=0,
                    as_frame=False)
    assert np.mean([r["accuracy"] for r in rows]) > np.mean([r["accuracy"] for r in base]) + 5


def test_progress_line():
    buf = io.StringIO()
    p = progress_bar(4, "run_grid", initial=1, file=buf, unit="cells", enabled=True)
    for _ in range(3):
        p.update()
    p.close()
    out = buf.getvalue()
    assert out.lstrip("\r").startswith("run_grid:") and "1/4" in out and "4/4" in out and "cells" in out
    assert out.endswith("\n")
    quiet = io.StringIO()  # not a terminal: nothing by default
    q = progress_bar(4, "run_grid", file=quiet, unit="cells", enabled=None)
    q.update()
    q.close()
    assert quiet.getvalue() == ""


def test_datasets_by_name_and_store_path_created(tmp_path):
    rows = run_grid({"1nn": KNeighborsClassifier(1)}, ["haberman"], protocol=RepeatedCV(2, 1),
                    store=os.path.join(tmp_path, "new", "s.jsonl"), as_frame=False)
    assert len(rows) == 2 and rows[0]["dataset"] == "haberman" and rows[0]["n_train"] + rows[0]["n_test"] == 306


def test_writes_csv_atomically(tmp_path):
    import csv

    from knnweights.evaluation import write_csv

    X, y = _data()
    rows = run_grid({"1nn": KNeighborsClassifier(1)}, {"toy": (X, y)}, protocol=RepeatedCV(3, 1), as_frame=False)
    assert isinstance(rows, list) and len(rows) == 3

    path = write_csv(rows, tmp_path / "out" / "cells.csv")
    with open(path, newline="") as fh:
        back = list(csv.DictReader(fh))
    assert [float(r["accuracy"]) for r in back] == [r["accuracy"] for r in rows]
    assert os.listdir(tmp_path / "out") == ["cells.csv"]  # no temporary file left behind
