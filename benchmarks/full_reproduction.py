"""How big is ``knnweights reproduce --full``: cells per table and figure, and the time of sample cells.

Usage::

    python benchmarks/full_reproduction.py                 # cells per table / figure (seconds, nothing fitted)
    python benchmarks/full_reproduction.py --time          # + one full-protocol cell per (table, method), timed
    python benchmarks/full_reproduction.py --time --tables lhrelief_table2 im4e_table4 --datasets 0 -1
    python benchmarks/full_reproduction.py --remaining docs/results/full   # what a resumed run has left

``--time`` fits the first split of the protocol on the table's first (``--datasets 0``) and
last (``-1``) bundled dataset for every method, on one core (OMP threads 1), and multiplies
the CPU time of this process per cell by the method's number of cells: an estimate of the
serial time of the whole table (cell times vary across datasets: an order of magnitude).
CPU time, not wall time, so that a shared machine slows the estimate less; ``--cap`` stops
a cell early (shown ``>``).

``--remaining OUT`` reads a ``--full`` run's folder (the table CSVs of its last report and
``store/``) and lists, per table, dataset and method, the cells left and the median wall
seconds of the cells of that method and dataset in the store (what a cell took when it
ran, beside whatever else the machine was doing): the time left, by the run's own
measurements.  Only cells made by the code the report names (``report.json``) count when
there are any; older cells only when there are none.  Rows with no stored cell yet say
"unknown".  The figures' cells left follow, from ``report.json``.
"""

import argparse
import os
import signal
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def _n_splits(protocol):
    if hasattr(protocol, "n_splits"):
        return protocol.n_splits * protocol.n_repeats
    return protocol.n_repeats


def table_counts(cfg):
    """``[(table, {method: cells})]`` of every table of ``--full``, without loading data."""
    from knnweights.reproduce import PAPERS, _module

    out = []
    for p in PAPERS:
        for spec in _module(p).tables():
            per = _n_splits(spec.protocol(cfg))
            n_ds = sum(1 for ds in spec.datasets if ds.load is not None)
            methods = {}
            for m in spec.methods:
                if m.build is None:
                    continue
                try:
                    m.build(cfg)
                except NotImplementedError:
                    continue
                methods[m.label] = per * n_ds
            out.append((spec, methods))
    return out


def figure_counts():
    """Cells of the figures and custom tables of ``--full`` (their own units, see the paper modules)."""
    from knnweights.reproduce import efw
    from knnweights.reproduce.tables import read_paper_table

    ests, counts1, counts2, reps = 4, 11, 11, 10
    stab = len(read_paper_table("efw_text_stability_m5.csv")) * len(efw.READINGS)
    return [("lhrelief_fig1_spiral", ests * counts1 * reps, "(estimator, count, repeat): a 10-fold CV"),
            ("lhrelief_fig2 (Bupa, Pima)", 2 * ests * counts2 * reps, "(estimator, count, repeat): a 10-fold CV"),
            ("efw_stability_m5", stab, "(dataset, method, reading): 5 seeds x 5 subsamples"),
            ("efw_fig1 (2 datasets)", 2, "7 values of m x 2 methods per cell"),
            ("efw_fig2 (8 datasets)", 8, "3 methods x 5 folds per cell"),
            ("sqpfw_path_parkinsons", 1, "one path")]


class _Cap(Exception):
    pass


def _alarm(signum, frame):
    raise _Cap


def time_cells(spec, cfg, which, cap=300):
    """Seconds of the first split's cell per method on the datasets ``which`` (indices among the bundled ones)."""
    from knnweights.evaluation.grid import _run_cell

    bundled = [ds for ds in spec.datasets if ds.load is not None]
    times = {}
    for i in which:
        if not bundled:
            break
        ds = bundled[i]
        X, y = ds.load(cfg)
        r, f, tr, va, te = next(spec.protocol(cfg).split(y, 0, ds.key))
        for m in spec.methods:
            if m.build is None:
                continue
            try:
                obj = m.build(cfg)
            except NotImplementedError:
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            signal.alarm(int(cap))
            try:
                _run_cell(m.label, obj, ds.key, X, y, r, f, tr, va, te, 0, "accuracy", "")
                capped = ""
            except (_Cap, SystemError):  # the alarm inside a numba kernel arrives as a SystemError
                capped = ">"
            except Exception as exc:  # noqa: BLE001 - reported
                print(f"  {spec.name} {m.label} {ds.label}: failed ({type(exc).__name__}: {exc})", flush=True)
                continue
            finally:
                signal.alarm(0)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            times.setdefault(m.label, []).append(cpu)
            print(f"  {spec.name} {m.label} {ds.label} ({X.shape[0]}x{X.shape[1]}): CPU {capped}{cpu:.1f} s "
                  f"(wall {dt:.1f} s)", flush=True)
    return times


def _row_cells(row):
    """``(done, total)`` of a row of a report CSV, or None for a row that is not computed (no data, no method)."""
    import re

    # the row status strings are written by knnweights.reproduce.tables.run_table ("ok" with n_cells, or
    # "partial: k / N cells (...)"); the CSV has no separate column for the expected count
    status = row.get("status", "")
    if status == "ok":
        n = int(float(row["n_cells"]))
        return n, n
    m = re.match(r"partial: (\d+) / (\d+) cells", status)
    return (int(m.group(1)), int(m.group(2))) if m else None


def remaining(out):
    """Cells left per (table, dataset, method) of the ``--full`` run in ``out``, with the store's median cell time."""
    import csv
    import glob
    import json
    from collections import defaultdict

    side = os.path.join(out, "report.json")
    report = {}
    if os.path.exists(side):
        with open(side, encoding="utf-8") as fh:
            report = json.load(fh)
    current = {(t, m): rec.get("hash") for t, methods in report.get("code", {}).items() if isinstance(methods, dict)
               for m, rec in methods.items() if isinstance(rec, dict)}
    secs, old = defaultdict(list), defaultdict(list)  # cells made by the report's code / by any code
    for path in glob.glob(os.path.join(out, "store", "*.jsonl")):
        table = os.path.basename(path)[:-len(".jsonl")]
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                if "method" in r and "dataset" in r and "fit_time" in r:
                    key, t = (table, r["dataset"], r["method"]), r["fit_time"] + r.get("score_time", 0.0)
                    old[key].append(t)
                    if r.get("code") is not None and r.get("code") == current.get((table, r["method"])):
                        secs[key].append(t)
    print("| table | dataset | method | cells done / total | wall s per cell (store, median) "
          "| left (h, at that rate) |")
    print("| --- | --- | --- | --- | --- | --- |")
    total_h, unknown = 0.0, 0
    for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                cells = _row_cells(row) if "status" in row else None
                if cells is None or cells[0] == cells[1]:
                    continue
                done, n = cells
                key = (row["table"], row["dataset_key"], row["method"])
                t, now = sorted(secs.get(key) or old.get(key, [])), bool(secs.get(key))
                if t:
                    med = t[len(t) // 2]
                    hours = (n - done) * med / 3600
                    total_h += hours
                    rate, left = f"{med:.1f} ({len(t)} cells{'' if now else ', older code'})", f"{hours:.2f}"
                else:
                    unknown += n - done
                    rate, left = "unknown", "unknown"
                print(f"| {row['table']} | {row['dataset']} | {row['method']} | {done} / {n} | {rate} | {left} |")
    figs = [f for f in report.get("figures", []) if f.get("cells_total") and f["cells_done"] < f["cells_total"]]
    nfig = sum(f["cells_total"] - f["cells_done"] for f in figs)
    print(f"\nleft: {total_h:.1f} h of cells at their stored rates, plus {unknown} cells of rows with none stored "
          f"(time them: --time --tables ... --datasets ...), plus {nfig} figure cells:")
    for f in figs:
        print(f"- {f['title']}: {f['cells_done']} / {f['cells_total']} cells")


def main(argv=None):
    import warnings

    from knnweights.reproduce.tables import Config

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", action="store_true", help="time one cell per (table, method)")
    ap.add_argument("--tables", nargs="+", default=None)
    ap.add_argument("--datasets", nargs="+", type=int, default=[0], help="indices of the bundled datasets to time")
    ap.add_argument("--cap", type=float, default=300, help="stop timing a cell after this many seconds (shown '>')")
    ap.add_argument("--remaining", metavar="OUT", help="the cells a --full run in OUT has left, and their time")
    a = ap.parse_args(argv)
    if a.remaining:
        remaining(a.remaining)
        return 0
    warnings.simplefilter("ignore")
    cfg = Config(mode="full")
    total = 0
    print("| table | method | cells | sample cell (CPU s) | estimate (CPU h) |")
    print("| --- | --- | --- | --- | --- |")
    for spec, methods in table_counts(cfg):
        if a.tables and spec.name not in a.tables:
            continue
        signal.signal(signal.SIGALRM, _alarm)
        times = time_cells(spec, cfg, a.datasets, a.cap) if a.time else {}
        for m, n in methods.items():
            total += n
            t = times.get(m)
            mean = sum(t) / len(t) if t else None
            est = f"{mean * n / 3600:.1f}" if mean is not None else ""
            print(f"| {spec.name} | {m} | {n} | {'' if mean is None else f'{mean:.1f}'} | {est} |", flush=True)
    print(f"\ntable cells in all: {total}")
    for name, n, unit in figure_counts():
        print(f"{name}: {n} cells {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
