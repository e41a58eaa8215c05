"""Long runs survive faults, and ``reproduce --scheduler`` gives the serial numbers.

``knnweights reproduce mdm --tiny`` and ``knnweights evaluate`` on a small generated CSV are
run as subprocesses and killed with SIGKILL at three random points (a random number of
finished cells, then a random delay, so a kill lands inside a cell, between cells or while
the process starts), then rerun to completion with the same ``--out``.  Every output file
must equal an uninterrupted run's byte for byte, apart from times, durations, the command
line and the provenance line: CSVs are compared cell by cell without their time columns,
reports line by line after those values are masked, PNGs byte for byte.  The store must
hold every cell exactly once.  The random points come from ``KNNWEIGHTS_RESUME_SEED``
(default 21), printed on failure.
"""

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

SEED = int(os.environ.get("KNNWEIGHTS_RESUME_SEED", "21"))
N_KILLS = 3
#: single-threaded children: the runs share the machine with the test process (and each other)
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
       "NUMBA_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}

REPRODUCE = ["reproduce", "mdm", "--tiny", "--datasets", "Sonar", "--n-jobs", "1", "--no-progress"]


def _evaluate_args(csv_path):
    return ["evaluate", str(csv_path), "--target", "diagnosis", "--id-col", "sample", "--drop", "batch",
            "--methods", "ReliefF,Relief", "--cv", "3x2", "--n-jobs", "1", "--no-progress"]


def _launch(args, out):
    # a session of its own: the kill reaches the run and anything it started, and nothing else
    return subprocess.Popen([sys.executable, "-m", "knnweights", *args, "--out", str(out)], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def _finish(proc, timeout=180):
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"run took more than {timeout} s")
    assert proc.returncode == 0, err.decode()[-3000:]


def _stored_lines(out):
    """Complete lines in the run's stores (the evaluate store, or reproduce's store/*.jsonl)."""
    files = [out / "store.jsonl", *sorted((out / "store").glob("*.jsonl"))]
    return sum(f.read_bytes().count(b"\n") for f in files if f.exists())


def _interrupted_run(args, out, total, rng, attempts=3):
    """Run ``args`` into ``out``, SIGKILL it at N_KILLS random points, rerun to completion; the kill log.

    On a loaded machine every kill can land after the last cell; then the whole interrupted run
    starts again in an empty ``out`` (at most ``attempts`` times), so that the test's claim (a kill
    in the middle of the cells resumes to the same report) is tested rather than skipped.
    """
    for attempt in range(attempts):
        if attempt:
            shutil.rmtree(out, ignore_errors=True)
        log = _one_interrupted_run(args, out, total, rng, delay=attempt == 0)
        if any(isinstance(n, int) and 0 < n < total for _, n in log):
            break
    return log


def _one_interrupted_run(args, out, total, rng, delay=True):
    targets = sorted(rng.choice(total, N_KILLS, replace=False).tolist())
    log = []
    for target in targets:
        proc = _launch(args, out)
        deadline = time.monotonic() + 120
        while _stored_lines(out) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        # a random delay of up to a few cells (evaluate's cells take ~10 ms, reproduce's ~150 ms)
        if delay:
            time.sleep(float(rng.uniform(0.0, 0.05)))
        if proc.poll() is not None:  # it finished (or failed) before the kill point
            _, err = proc.communicate()
            assert proc.returncode == 0, err.decode()[-3000:]
            log.append((target, "finished first"))
            continue
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        log.append((target, _stored_lines(out)))
    _finish(_launch(args, out))
    return log


# -- comparing two output folders, times masked --------------------------------------------
TIME_COLUMNS = re.compile(r"time|seconds|duration", re.I)
_MASKS = [
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|min|h)\b"), "<duration>"),
    (re.compile(r"\(\d+ computed in this run, \d+ read from the store\)"), "(<cells run>)"),
    (re.compile(r"\b\d+ run, \d+ from the store\b"), "<cells run>"),
]
# lines that name the command (with its --out), the wall time or the code's provenance
_MASK_LINES = re.compile(r"^\s*(Command:|knnweights (?:evaluate|reproduce) |Made by knnweights)|--out ")
_JSON_DROP = {"command", "provenance", "wall_seconds", "seconds", "cells_run", "fit_time", "score_time", "argv"}


def _text(path):
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if _MASK_LINES.search(line):
            out.append("<masked line>")
            continue
        for pattern, repl in _MASKS:
            line = pattern.sub(repl, line)
        out.append(line)
    return out


def _json(obj):
    if isinstance(obj, dict):
        return {k: _json(v) for k, v in obj.items() if k not in _JSON_DROP}
    if isinstance(obj, list):
        return [_json(v) for v in obj]
    return obj


def _csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    keep = [j for j, name in enumerate(rows[0]) if not TIME_COLUMNS.search(name)] if rows else []
    return [[r[j] for j in keep if j < len(r)] for r in rows]


def _store_rows(folder):
    rows = []
    for f in [folder / "store.jsonl", *sorted((folder / "store").glob("*.jsonl"))]:
        if f.exists():
            rows += [json.dumps(_json(json.loads(line)), sort_keys=True)
                     for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


def assert_same_outputs(ref, got, context):
    names = sorted(p.relative_to(ref).as_posix() for p in ref.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(got).as_posix() for p in got.rglob("*") if p.is_file()), context
    compared = 0
    for name in names:
        a, b = ref / name, got / name
        if name.endswith(".jsonl"):
            continue  # the stores: compared as sets of rows below (resumed cells are appended in another order)
        if name.endswith(".csv"):
            assert _csv(a) == _csv(b), f"{name} differs ({context})"
        elif name.endswith(".json"):
            assert _json(json.loads(a.read_text())) == _json(json.loads(b.read_text())), f"{name} ({context})"
        elif name.endswith((".md", ".html", ".txt")):
            ta, tb = _text(a), _text(b)
            diff = [(x, y) for x, y in zip(ta, tb, strict=False) if x != y]
            assert ta == tb, f"{name} differs ({context}): {diff[:3]}"
        else:
            assert a.read_bytes() == b.read_bytes(), f"{name} differs byte for byte ({context})"
        compared += 1
    ra, rb = _store_rows(ref), _store_rows(got)
    assert len(rb) == len(set(rb)), f"a cell stored twice ({context})"
    assert sorted(ra) == sorted(rb), f"the stores hold other cells ({context})"
    return compared


# -- the runs ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reproduce_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce") / "ref"
    _finish(_launch(REPRODUCE, out))
    return out


@pytest.mark.slow
def test_killed_reproduce_resumes_to_the_same_report(tmp_path, reproduce_reference):
    ref = reproduce_reference
    total = _stored_lines(ref)
    assert total >= 10
    rng = np.random.default_rng(SEED)
    log = _interrupted_run(REPRODUCE, tmp_path / "run", total, rng)
    context = f"seed {SEED}, kills at (target cells, cells stored) {log}"
    assert any(isinstance(n, int) and 0 < n < total for _, n in log), f"no kill interrupted a run ({context})"
    assert assert_same_outputs(ref, tmp_path / "run", context) >= 4  # report.md, report.json and the CSVs
    # the last run read the stored cells instead of computing them again
    meta = json.loads((tmp_path / "run" / "report.json").read_text())
    assert meta["cells_total"] == total and meta["cells_run"] < total, context


@pytest.mark.slow
def test_killed_evaluate_resumes_to_the_same_report(tmp_path, write_expression_csv):
    data = tmp_path / "genes.csv"
    write_expression_csv(data, n=40, d=30)
    args = _evaluate_args(data)
    ref_proc = _launch(args, tmp_path / "ref")  # the uninterrupted run, beside the interrupted ones
    rng = np.random.default_rng(SEED + 1)
    total = 3 * 2 * 3  # folds x repeats x (2 methods + plain kNN)
    log = _interrupted_run(args, tmp_path / "run", total, rng)
    _finish(ref_proc)
    context = f"seed {SEED + 1}, kills at (target cells, cells stored) {log}"
    assert _stored_lines(tmp_path / "ref") == total
    assert any(isinstance(n, int) and 0 < n < total for _, n in log), f"no kill interrupted a run ({context})"
    assert assert_same_outputs(tmp_path / "ref", tmp_path / "run", context) >= 8  # report, CSVs, plots


def test_masking_is_not_vacuous(tmp_path):
    """The comparison catches a changed number that is not a time (a test that cannot fail is a defect)."""
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "report.md").write_text(f"Command: `x --out {d}`; wall time 3 s\n\n| kNN | 85.71 |\n")
    (a / "results.csv").write_text("method,fit_time,accuracy\nkNN,0.11,85.71\n")
    (b / "results.csv").write_text("method,fit_time,accuracy\nkNN,0.11,85.72\n")
    with pytest.raises(AssertionError, match="results.csv"):
        assert_same_outputs(a, b, "test")
    (b / "results.csv").write_text("method,fit_time,accuracy\nkNN,9.9,85.71\n")  # only the time differs
    assert assert_same_outputs(a, b, "test") == 2
    (b / "report.md").write_text(f"Command: `y --out {b}`; wall time 7 s\n\n| kNN | 85.72 |\n")
    with pytest.raises(AssertionError, match="report.md"):
        assert_same_outputs(a, b, "test")
    (b / "report.md").write_text(f"Command: `y --out {b}`; wall time 7 s\n\n| kNN | 85.71 |\n")
    assert assert_same_outputs(a, b, "test") == 2
    (b / "plot.png").write_bytes(b"x")
    with pytest.raises(AssertionError):  # a file only one run wrote
        assert_same_outputs(a, b, "test")


def test_store_skips_a_torn_last_line(tmp_path):
    """A kill during a write leaves a last line without its newline: not counted, cut before the next append."""
    from knnweights.evaluation import ResultStore

    store = ResultStore(tmp_path / "s.jsonl")
    store.append({"cell": 1, "accuracy": 50.0})
    store.append({"cell": 2, "accuracy": 60.0})
    with open(store.path, "ab") as fh:
        fh.write(b'{"accuracy": 70.0, "cell": 3}')  # whole JSON, but the newline was never written
    assert [r["cell"] for r in store.read()] == [1, 2]
    with open(store.path, "ab") as fh:
        fh.write(b'\n{"accuracy": 7')  # a torn half line after a complete one
    assert [r["cell"] for r in store.read()] == [1, 2, 3]
    store._repair()
    store.append({"cell": 4, "accuracy": 80.0})
    assert [r["cell"] for r in store.read()] == [1, 2, 3, 4]
    assert Path(store.path).read_bytes().count(b"\n") == 4


# -- reproduce --scheduler ------------------------------------------------------------------
def test_reproduce_on_a_scheduler_equals_serial(tmp_path, capsys, reproduce_reference):
    distributed = pytest.importorskip("distributed")
    from knnweights.cli import main

    argv = [a for a in REPRODUCE if a not in ("--n-jobs", "1")] + ["--n-jobs", "2"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  protocol="tcp", host="127.0.0.1") as cluster:
        address = cluster.scheduler_address
        assert main([*argv, "--out", str(tmp_path / "dask"), "--scheduler", address]) == 0
        assert f"on the dask scheduler at {address}" in capsys.readouterr().err
        # the cells ran on the cluster's workers (in-process workers: their task counters are readable)
        executed = sum(w.state.executed_count for w in cluster.workers.values())
        assert executed > 0, "no cell ran on the cluster"  # (joblib batches cells into fewer tasks)
    assert assert_same_outputs(reproduce_reference, tmp_path / "dask", "dask scheduler vs serial") >= 4
    # both places at once is an error, in one line
    assert main([*argv, "--out", str(tmp_path / "x"), "--scheduler", address, "--backend", "dask"]) == 2
    assert "--scheduler and --backend dask" in capsys.readouterr().err
