"""``knnweights select FILE``: nested cross-validation of the automatic choice (weighter, features kept, ``k``)
on a user's table; writes the report, the feature table and the model fitted on all rows."""

import os

import joblib

from ..evaluation import fit_with_covariates, nested_evaluate, selection_pipeline
from ..evaluation.distributed import use_scheduler
from ..exceptions import UsageError
from ._console import print_status
from ._options import Command, add_data_arguments, add_run_arguments, parse_cv, parse_methods
from ._tables import load_user_table


def _add_arguments(p):
    """Add the arguments of ``select``."""
    add_data_arguments(p)
    p.add_argument("--cv", default="5x5", metavar="KxR", help="outer folds x repeats (default: 5x5)")
    p.add_argument("--inner", type=int, default=5, help="inner folds of the choice (default: 5)")
    p.add_argument("--consensus", type=float, default=0.5,
                   help="share of the outer folds a consensus feature is selected in (default: 0.5)")
    p.add_argument("--covariates", metavar="COLS", default=None,
                   help="comma-separated covariate columns to adjust for: not features, and not used by the saved "
                        "model (predict needs no covariate columns); the Relief-family candidates' q <= 0.05 "
                        "selection becomes covariate-adjusted (NPDR's pair regression), the other candidates "
                        "ignore them")
    add_run_arguments(p, "select", "outer folds")


def _run(args):
    """Nested CV of the automatic choice on a user's file; report, feature table and model; exit status."""
    k, r = parse_cv(args.cv)
    if args.inner < 2:
        raise UsageError(f"--inner must be at least 2; got {args.inner}.")
    if not 0 < args.consensus <= 1:
        raise UsageError(f"--consensus must be in (0, 1]; got {args.consensus}.")
    log, args.log = args.log, False  # the log is a step of the saved model, applied to new samples too
    data = load_user_table(args, impute="keep" if args.impute == "median" else args.impute)
    args.log = log
    if log and (data.X < 0).to_numpy().any():
        raise UsageError("--log: the table has negative values; log(x + 1) needs x >= 0.")
    names = parse_methods(args.methods, continuous=data.continuous)
    X, y = data.X, data.y
    out = args.out or f"{data.name}-select"
    os.makedirs(out, exist_ok=True)
    print_status(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features; nested CV, {k}-fold x {r} outer, "
                 f"{args.inner}-fold inner, candidates {', '.join(names)} and no weighting")
    if data.covariates is not None:
        print_status(f"adjusting the q-value selection for {', '.join(map(str, data.covariates.columns))}")
    progress = False if args.no_progress else None
    model = selection_pipeline([*names, None], log=args.log, scale=args.scale, cv=args.inner,
                               random_state=args.random_state, progress=progress)
    with use_scheduler(args.scheduler) as client:
        if client is not None:
            print_status(f"running the outer folds on the dask scheduler at {client.scheduler.address}")
        try:
            res = nested_evaluate(model, X, y, cv=(k, r), consensus=args.consensus, random_state=args.random_state,
                                  n_jobs=args.n_jobs, progress=progress, store=os.path.join(out, "store.jsonl"),
                                  covariates=data.covariates)
            final = fit_with_covariates(model, X, y, data.covariates)
        except ValueError as exc:  # too few samples of a class for the folds, a weighter refusing a fold...
            raise UsageError(str(exc)) from None
    features = res.feature_table()
    chosen = final.named_steps["choose"]
    features["in_model"] = features["feature"].isin(list(X.columns[chosen.support_]))
    features.to_csv(os.path.join(out, "features.csv"), index=False)
    res.summary.to_csv(os.path.join(out, "summary.csv"), index_label="method")
    res.choices.to_csv(os.path.join(out, "choices.csv"), index=False)
    joblib.dump(final, os.path.join(out, "model.joblib"))
    page = res.to_html(title=f"{data.name}: nested selection").replace(
        "</body>", f"<h2>Model fitted on all rows</h2><p>{chosen.best_params_} (inner score "
                   f"{chosen.best_score_:.4f}), {int(chosen.support_.sum())} features.</p></body>")
    with open(os.path.join(out, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(page)
    lo, hi = res.interval
    print(f"outer {res.metric}: {res.estimate:.4f} [{lo:.4f}, {hi:.4f}]; stability {res.stability.value:.3f}; "
          f"{len(res.consensus)} consensus feature(s)")
    for method, row in res.summary.iterrows():
        print(f"{method:14s} {row['mean']:.4f} [{row['low']:.4f}, {row['high']:.4f}]")
    print(f"model on all rows: {chosen.best_params_}")
    print(f"report: {os.path.join(out, 'report.html')} (and features.csv, summary.csv, choices.csv, model.joblib)")
    return 0


COMMAND = Command(
    "select", help="nested CV of the automatic weighted-kNN choice on your file; saves the model",
    description="Nested cross-validation of AutoWeightedKNN (the weighter, the number of features kept and k "
                "chosen by inner CV) on FILE, beside plain kNN and L1 logistic regression; writes report.html, "
                "features.csv (selection frequency, mean rank, consensus), summary.csv, choices.csv and "
                "model.joblib (the choice refitted on all rows, for knnweights predict); each finished outer split is "
                "kept in store.jsonl, so a killed run given the same --out resumes.\n\n"
                "example: knnweights select genes.csv --target diagnosis --id-col sample --cv 5x5 --inner 5",
    run=_run, add_arguments=_add_arguments)
