"""``knnweights evaluate FILE``: repeated cross-validation of weighted kNN (one weighter per method) against
plain kNN on a user's table, with a report."""

import os
import shlex
import time

import numpy as np
import pandas as pd

from ..evaluation import summarize, write_csv
from ..evaluation.compare import PLAIN, compare_methods, pairwise_tests, top_curves, warning_summary
from ..evaluation.distributed import use_scheduler
from ..evaluation.regression import compare_regression, regression_tests
from ..exceptions import UsageError
from ..io import fill_median
from ..plotting.report import write_user_report
from ._console import print_status, print_warnings, require_packages
from ._options import Command, add_data_arguments, add_run_arguments, build_weighter, parse_cv, parse_methods
from ._tables import describe_target, load_user_table, rank_with_status, write_table


def _add_arguments(p):
    """Add the arguments of ``evaluate``."""
    add_data_arguments(p)
    p.add_argument("--cv", default="10x10", metavar="KxR", help="folds x repeats (default: 10x10)")
    p.add_argument("-k", "--n-neighbors", type=int, default=5, help="neighbours of the kNN (default: 5)")
    p.add_argument("--test", choices=["corrected", "plain"], default="corrected",
                   help="corrected resampled t-test (Nadeau & Bengio; default) or the papers' plain paired t-test")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    p.add_argument("--min-diff", type=float, default=0.0,
                   help="smallest mean difference, in points, that counts as a win (default: 0)")
    add_run_arguments(p, "evaluate", "cells")


def _run(args):
    """Repeated CV of weighted kNN (each method) against plain kNN on a user's file, report and CSVs; exit status."""
    require_packages("matplotlib")
    k, r = parse_cv(args.cv)
    if args.n_neighbors < 1:
        raise UsageError(f"--n-neighbors must be at least 1; got {args.n_neighbors}.")
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be in (0, 1); got {args.alpha}.")
    # median imputation inside each training part (no test values leak into the medians)
    data = load_user_table(args, impute="keep" if args.impute == "median" else args.impute)
    names = parse_methods(args.methods, continuous=data.continuous)
    if data.continuous:
        return _run_continuous(args, data, names, k, r)
    X, y = data.X, data.y
    labels, counts = np.unique(y.astype(str), return_counts=True)
    if counts.min() < k:
        raise UsageError(f"--cv {args.cv}: class {str(labels[np.argmin(counts)])!r} has {counts.min()} rows, fewer "
                         f"than the {k} folds; use --cv {max(2, int(counts.min()))}x{r}.")
    out = args.out or f"{data.name}-evaluate"
    os.makedirs(out, exist_ok=True)
    print_status(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features, {len(labels)} classes; "
                 f"{k}-fold CV x {r} repeats, {len(names)} method(s) + plain kNN")

    with use_scheduler(args.scheduler) as client:
        if client is not None:
            print_status(f"running the cells on the dask scheduler at {client.scheduler.address}")
        # 1. one fit per method on all rows: the rank table, the weight profiles, and which methods run
        table, fitted, kept, warn_full = rank_with_status(names, fill_median(X), y, args)
        write_table(table, os.path.join(out, "ranks.csv"))

        # 2. repeated CV, resumable, on this machine or the cluster
        weighters = {n: build_weighter(n, args.random_state) for n in kept}
        print_status(f"cross-validating {len(weighters) + 1} methods x {k * r} cells ...")
        t0 = time.monotonic()
        rows = compare_methods(X.to_numpy(), y, weighters, name=data.name, cv=(k, r), n_neighbors=args.n_neighbors,
                               scale=args.scale, random_state=args.random_state, n_jobs=args.n_jobs,
                               store=os.path.join(out, "store.jsonl"),
                               progress=False if args.no_progress else None)
    print_status(f"cross-validation done in {time.monotonic() - t0:.0f} s")
    methods = [PLAIN, *weighters]
    pairs = pairwise_tests(rows, test=args.test, alpha=args.alpha, min_diff=args.min_diff, methods=methods)
    summary = summarize(rows)
    warn = warn_full + warning_summary(rows)
    print_warnings(warn)

    write_csv(rows.drop(columns=[c for c in ("warnings", "top_n", "top_accuracy") if c in rows]),
              os.path.join(out, "results.csv"))
    pd.DataFrame(summary).to_csv(os.path.join(out, "summary.csv"), index=False)
    pd.DataFrame(pairs).to_csv(os.path.join(out, "pairwise.csv"), index=False)
    settings = {"cross-validation": f"stratified {k}-fold x {r} repeats", "classifier": f"kNN, k = {args.n_neighbors}",
                "scaling": args.scale, "missing values": args.impute,
                "test": "corrected resampled t-test" if args.test == "corrected" else "plain paired t-test",
                "alpha": args.alpha, "random state": args.random_state}
    command = "knnweights " + " ".join(shlex.quote(a) for a in (args.argv or []))
    classes = dict(zip(labels.tolist(), counts.tolist(), strict=True))
    rep = write_user_report(out, dataset=data.name, shape=X.shape, classes=classes,
                            messages=data.messages, settings=settings, results=rows, pairs=pairs, methods=methods,
                            test=args.test, alpha=args.alpha, min_diff=args.min_diff, curves=top_curves(rows),
                            weights={n: fitted[n].feature_importances_ for n in kept}, table=table,
                            warnings=warn, command=command)

    vs = {p["method"]: p for p in pairs if p["other"] == PLAIN}
    print(f"{'method':14s} {'accuracy (%)':>14s}  vs {PLAIN}")
    for s in summary:
        p = vs.get(s["method"])
        extra = f"{p['diff']:+6.2f} points, p = {p['p']:.3g} ({p['outcome']})" if p else "(reference)"
        print(f"{s['method']:14s} {s['mean']:7.2f} +- {s['std']:5.2f}  {extra}")
    print(f"report: {rep['html']} (and report.md, CSVs, {len(rep['plots'])} plots in {out})")
    return 0


def _run_continuous(args, data, names, k, r):
    """``evaluate`` on a continuous target: RMSE and R^2 of weighted kNN regression against plain kNN."""
    X, y = data.X, data.y
    if X.shape[0] < 2 * k:
        raise UsageError(f"--cv {args.cv}: {X.shape[0]} rows are too few for {k} folds of at least 2 rows.")
    out = args.out or f"{data.name}-evaluate"
    os.makedirs(out, exist_ok=True)
    print_status(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features, {describe_target(data)}; "
                 f"{k}-fold CV x {r} repeats, {len(names)} method(s) + plain kNN regression")
    table, fitted, kept, warn_full = rank_with_status(names, fill_median(X), y, args, continuous=True)
    write_table(table, os.path.join(out, "ranks.csv"))
    weighters = {n: build_weighter(n, args.random_state, continuous=True) for n in kept}
    print_status(f"cross-validating {len(weighters) + 1} methods x {k * r} cells ...")
    t0 = time.monotonic()
    rows = compare_regression(X.to_numpy(), y, weighters, name=data.name, cv=(k, r), n_neighbors=args.n_neighbors,
                              scale=args.scale, random_state=args.random_state, n_jobs=args.n_jobs)
    print_status(f"cross-validation done in {time.monotonic() - t0:.0f} s")
    tests = {t["method"]: t for t in regression_tests(rows, alpha=args.alpha)}
    warn = warn_full + warning_summary([{**row, "accuracy": 0.0} for row in rows])
    print_warnings(warn)
    pd.DataFrame(rows).drop(columns=["warnings"]).to_csv(os.path.join(out, "results.csv"), index=False)
    r2 = {s["method"]: s for s in summarize(rows, value="r2")}
    summary = pd.DataFrame([{"method": s["method"], "rmse": s["mean"], "rmse_std": s["std"],
                             "r2": r2[s["method"]]["mean"], "r2_std": r2[s["method"]]["std"], "n": s["n"]}
                            for s in summarize(rows, value="rmse")])
    summary.to_csv(os.path.join(out, "summary.csv"), index=False)
    pd.DataFrame(list(tests.values())).to_csv(os.path.join(out, "pairwise.csv"), index=False)
    lines = [f"# {data.name}: weighted kNN regression against plain kNN", "",
             f"{X.shape[0]} samples x {X.shape[1]} features, {describe_target(data)}; {k}-fold CV x {r} repeats, "
             f"kNN k = {args.n_neighbors}, scaling {args.scale}; Nadeau & Bengio's corrected resampled t-test on "
             f"the RMSE differences, alpha = {args.alpha}.", "",
             "| method | RMSE | R^2 | RMSE vs kNN | p | outcome |", "|---|---|---|---|---|---|"]
    print(f"{'method':14s} {'RMSE':>18s} {'R^2':>16s}  vs {PLAIN}")
    for s in summary.itertuples(index=False):
        t = tests.get(s.method)
        extra = f"{t['rmse_diff']:+.4g} RMSE, p = {t['p']:.3g} ({t['outcome']})" if t else "(reference)"
        print(f"{s.method:14s} {s.rmse:9.4g} +- {s.rmse_std:6.3g} {s.r2:7.3f} +- {s.r2_std:5.3f}  {extra}")
        lines.append(f"| {s.method} | {s.rmse:.4g} +- {s.rmse_std:.3g} | {s.r2:.3f} +- {s.r2_std:.3f} | "
                     + (f"{t['rmse_diff']:+.4g} | {t['p']:.3g} | {t['outcome']} |" if t else "(reference) | | |"))
    if warn:
        lines += ["", "Warnings:", "", *[f"- {w}" for w in warn]]
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"report: {os.path.join(out, 'report.md')} (and results.csv, summary.csv, pairwise.csv, ranks.csv in {out})")
    return 0


COMMAND = Command(
    "evaluate", help="repeated CV of weighted kNN against plain kNN on your file, with a report",
    description="Repeated stratified cross-validation of weighted kNN (one weighter per method) against plain "
                "kNN and each other on FILE; corrected resampled t-tests; writes report.md, a self-contained "
                "report.html with plots, CSVs and a resumable store to --out.\n\n"
                "example: knnweights evaluate genes.csv --target diagnosis --id-col sample --cv 10x10 "
                "--n-jobs 4",
    run=_run, add_arguments=_add_arguments)
