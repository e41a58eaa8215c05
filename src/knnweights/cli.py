"""The ``knnweights`` command line: ``rank`` and ``evaluate`` (a user's file), ``datasets``, ``demo``, ``reproduce``.

Bad input (a missing or unreadable file, a missing column, a single class) ends with
one line on stderr and exit status 2.  Warnings raised while methods are fitted are
gathered and printed once per method and dataset, not as raw library warnings.
"""

import argparse
import contextlib
import os
import re
import shlex
import sys
import textwrap
import threading
import time
import warnings

import numpy as np

from .exceptions import UsageError

#: a fast, varied default: Relief family (k neighbours, radius), iterative Relief, margins, NCA
DEFAULT_METHODS = ("ReliefF", "MultiSURF", "IRelief", "Simba", "NCADiagonal")
#: the default for a continuous target: RReliefF, MultiSURF's continuous rule, MLKR
DEFAULT_REGRESSION_METHODS = ("ReliefF", "MultiSURF", "MLKRDiagonal")

#: methods whose fit can take a minute or more on ten thousand features and more (MDM's LP, SQP-FW's
#: active-set path, which grows with the features); ``demo --methods all`` skips them above WIDE features
SLOW_ON_WIDE = ("MDM", "SQPFW")
#: the demo's default tour: one or two methods of each family, quick to compile and to fit
DEMO_METHODS = ("ReliefF", "MultiSURF", "IRelief", "Simba", "IM4E", "Logo", "NCADiagonal", "SVMRFE")
WIDE = 5000


# -- help texts without reStructuredText ----------------------------------------------
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)(?:\s*<[^`>]*>)?`")


def plain_text(text):
    """``text`` without reStructuredText markup (roles, double backquotes, emphasis)."""
    if not text:
        return text

    def role(m):
        name = m.group(1).strip()
        return name.rsplit(".", 1)[-1] if m.group(0).split("`", 1)[1].startswith("~") else name

    text = _ROLE.sub(role, text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"(?<![\w`])`([^`]+)`(?![\w`])", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    return text


class _PlainFormatter(argparse.HelpFormatter):
    """Help with reStructuredText markup removed; descriptions wrapped paragraph by paragraph."""

    def _format_text(self, text):
        return super()._format_text(plain_text(text))

    def _fill_text(self, text, width, indent):
        paragraphs = re.split(r"\n\s*\n", text.strip("\n"))
        out = []
        for par in paragraphs:
            if par.startswith("example:"):  # a command to copy: kept on one line
                out.append(indent + " ".join(par.split()))
            else:
                out.append(textwrap.fill(" ".join(par.split()), width, initial_indent=indent,
                                         subsequent_indent=indent))
        return "\n\n".join(out)

    def _expand_help(self, action):
        return plain_text(super()._expand_help(action))


# -- warnings --------------------------------------------------------------------------
@contextlib.contextmanager
def _cli_warnings(stream=None):
    """Warnings that escape the per-method summaries: one line each, once, no source line."""
    stream = stream or sys.stderr
    seen = set()
    old = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        text = f"{category.__name__}: {' '.join(str(message).split())}"
        if text not in seen:
            seen.add(text)
            print(f"knnweights: warning: {text}", file=stream, flush=True)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = old


def _print_warnings(lines):
    for line in lines:
        print(f"warning: {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _ticker(label, stream=None, every=1.0):
    """On a terminal, a line showing the seconds spent in a long step, redrawn every second."""
    stream = stream or sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield
        return
    stop = threading.Event()
    t0 = time.monotonic()

    def run():
        while not stop.wait(every):
            stream.write(f"\r{label} {time.monotonic() - t0:.0f} s ")
            stream.flush()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join()
        if time.monotonic() - t0 >= every:
            stream.write("\r" + " " * (len(label) + 12) + "\r")
            stream.flush()


def _short(exc, limit=160):
    """An exception's message on one line, cut to ``limit`` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


#: the extra that installs an optional package a command needs
_EXTRAS = {"matplotlib": "plot"}


def _require(*modules):
    """A one-line error naming the optional packages a command needs and lacks."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        extras = ",".join(dict.fromkeys(_EXTRAS.get(m, "files") for m in missing))
        raise UsageError(f"this command needs {' and '.join(missing)}: pip install 'knnweights[{extras}]' "
                         f"(or pip install {' '.join(missing)}).")


def _say(msg):
    print(msg, file=sys.stderr, flush=True)


# -- methods ---------------------------------------------------------------------------
def _all_weighters():
    from . import REGRESSION_WEIGHTERS, WEIGHTERS

    return {**WEIGHTERS, **REGRESSION_WEIGHTERS}


def parse_methods(text, default=None, continuous=False):
    """Weighter names from ``"ReliefF,MultiSURF"`` (case-insensitive; ``all``: every weighter for the target).

    With ``continuous`` only the weighters with a continuous-target definition are
    accepted (:data:`knnweights.REGRESSION_WEIGHTERS`); otherwise those for class labels.
    """
    from . import REGRESSION_WEIGHTERS, WEIGHTERS

    usable = REGRESSION_WEIGHTERS if continuous else WEIGHTERS
    if default is None:
        default = DEFAULT_REGRESSION_METHODS if continuous else DEFAULT_METHODS
    if text is None or not str(text).strip():
        names = list(default)
    else:
        names = [t.strip() for t in re.split(r"[,\s]+", str(text)) if t.strip()]
    every = _all_weighters()
    lookup = {n.lower(): n for n in every}
    out = []
    for n in names:
        if n.lower() == "all":
            out.extend(usable)
            continue
        if n.lower() not in lookup:
            raise UsageError(f"--methods: unknown method {n!r}; choose from {', '.join(sorted(usable))} or all.")
        name = lookup[n.lower()]
        if name not in usable:
            kind = "a continuous target" if continuous else "class labels"
            raise UsageError(f"--methods: {name} has no definition for {kind}; choose from "
                             f"{', '.join(sorted(usable))} or all.")
        out.append(name)
    return list(dict.fromkeys(out))


def _make(name, random_state, continuous=False):
    est = _all_weighters()[name]()
    params = est.get_params()
    if "random_state" in params:
        est.set_params(random_state=random_state)
    if continuous and "target_type" in params:
        est.set_params(target_type="continuous")
    return est


def parse_cv(text):
    """``"10x10"`` -> ``(10, 10)`` folds x repeats; ``"5"`` -> ``(5, 1)``."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:[xX*]\s*(\d+))?\s*", str(text))
    if not m:
        raise UsageError(f"--cv: expected FOLDSxREPEATS such as 10x10; got {text!r}.")
    k, r = int(m.group(1)), int(m.group(2) or 1)
    if k < 2 or r < 1:
        raise UsageError(f"--cv: needs at least 2 folds and 1 repeat; got {text!r}.")
    return k, r


# -- reading the user's file -----------------------------------------------------------
def _add_data_arguments(p):
    p.add_argument("file", help="CSV, TSV, Parquet or Excel file, one row per sample")
    p.add_argument("--target", metavar="COL", default=None, help="the label column (required for a table)")
    p.add_argument("--id-col", metavar="COL", default=None, help="a sample-id column (not a feature)")
    p.add_argument("--drop", metavar="COL", nargs="+", action="extend", default=[],
                   help="columns to leave out (repeatable)")
    p.add_argument("--methods", metavar="A,B,...", default=None,
                   help=f"weighters, comma-separated, or 'all' (default: {','.join(DEFAULT_METHODS)}; for a "
                        f"continuous target {','.join(DEFAULT_REGRESSION_METHODS)})")
    p.add_argument("--impute", choices=["median", "drop-features", "none"], default="median",
                   help="missing feature values: column median (default), drop those features, or refuse")
    p.add_argument("--one-hot", action="store_true",
                   help="one-hot encode non-numeric columns (default: drop them, naming them)")
    p.add_argument("--scale", choices=["standard", "minmax", "none"], default="standard",
                   help="feature scaling before the weighters (default: standard, mean 0 and variance 1)")
    p.add_argument("--sep", default=None, help="delimiter of a text file (default: by extension, else guessed)")
    p.add_argument("--sheet", default=None, help="Excel sheet name (default: the first)")
    p.add_argument("--random-state", type=int, default=0, help="seed of every random choice (default: 0)")
    p.add_argument("--target-type", choices=["auto", "classes", "continuous"], default="auto",
                   help="auto (default): a target with non-integer numbers is continuous, else class labels")
    p.add_argument("--log", action="store_true",
                   help="log2(x + 1) of every feature before scaling (expression counts; needs x >= 0)")


def _load(args, impute=None):
    from .io import count_like_features, load_table

    if args.target is None:
        raise UsageError("--target COL is required: the label column of the table.")
    data = load_table(args.file, args.target, id_col=args.id_col, drop=args.drop, one_hot=args.one_hot,
                      impute=impute or args.impute, sheet=args.sheet, sep=args.sep, target_type=args.target_type)
    for m in data.messages:
        _say(f"note: {m}")
    if args.log:
        neg = (data.X < 0).any(axis=0).to_numpy()
        if neg.any():
            raise UsageError(f"--log: column {str(data.X.columns[np.flatnonzero(neg)[0]])!r} has negative values "
                             f"({int(neg.sum())} column(s) have some); log2(x + 1) needs x >= 0.")
        data.X = np.log2(data.X + 1.0)
        _say("note: features transformed by log2(x + 1) before scaling (--log)")
    else:
        skewed, med, n_skewed = count_like_features(data.X.to_numpy())
        if skewed:
            _say(f"note: {n_skewed} of {data.X.shape[1]} features are non-negative and strongly right-skewed "
                 f"(median skewness {med:.1f}), like expression counts; consider --log (log2(x + 1) before "
                 "scaling): neighbour distances on raw counts are dominated by a few large values.")
    return data


def _fit_context(name):
    return _ticker(f"  {name}: fitting,")


def _rank_table(names, X, y, args, continuous=False, *, scale=None, baselines=True, feature_names=None,
                weighter_params=None):
    """The rank table of the methods fitted on all rows (:func:`knnweights.evaluation.fit_rank_table`),
    with a status line per fit; the table, the fitted weighters, the methods that ran, the warnings.

    With ``--pvalues`` (rank) each method gets ``<name>_p`` and ``<name>_q`` columns; the
    univariate baselines follow the methods.  A method whose fit fails is left out, said in
    one line.
    """
    from .evaluation.ranking import fit_rank_table

    ticker = contextlib.ExitStack()

    def progress(event, label, index, total, **info):
        tag = f"[{index}/{total}] {label}"
        if event == "fit":
            _say(f"{tag}: fitting on {info['shape'][0]} x {info['shape'][1]} ...")
            ticker.enter_context(_fit_context(label))
        elif event == "fitted":
            ticker.close()
            _say(f"{tag}: done in {info['seconds']:.1f} s")
        elif event == "failed":
            ticker.close()
            exc = info["error"]
            if isinstance(exc, NotImplementedError):
                _say(f"{tag}: skipped, not implemented ({_short(exc)})")
            else:
                _say(f"{tag}: failed ({type(exc).__name__}: {' '.join(str(exc).split())})")
        elif event == "pvalues":
            B = info["source"]
            how = ("its pair test (pvalues_)" if B == "pvalues_"
                   else f"{B} permutations (smallest possible p: {1 / (B + 1):.3g})")
            _say(f"    {label}: p-values by {how}; {int(np.sum(info['qvalues'] <= 0.05))} feature(s) at q <= 0.05")

    with ticker:
        res = fit_rank_table(names, X, np.asarray(y), feature_names, pvalues=bool(getattr(args, "pvalues", False)),
                             baselines=baselines, sort_by="mean_rank", scale=args.scale if scale is None else scale,
                             target_type="continuous" if continuous else "classes",
                             n_permutations=getattr(args, "permutations", 199), n_jobs=getattr(args, "n_jobs", None),
                             random_state=args.random_state, weighter_params=weighter_params, on_error="skip",
                             record_warnings=True, progress=progress)
    if res.table is None:
        raise UsageError("no method could be fitted (see the lines above).")
    warn = [f"{name}: {text} ({count}x)" if count > 1 else f"{name}: {text}"
            for name in res.fitted for _, text, count in res.warnings[name]]
    return res.table, res.fitted, list(res.fitted), warn


def _baseline_names(table):
    from .evaluation.ranking import BASELINES

    return [b for b in BASELINES.values() if f"{b}_rank" in table]


def _write_table(table, path):
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    low = path.lower()
    if low.endswith((".tsv", ".tab", ".txt")):
        table.to_csv(path, sep="\t", index=False)
    elif low.endswith((".parquet", ".pq")):
        table.to_parquet(path, index=False)
    elif low.endswith(".xlsx"):
        table.to_excel(path, index=False)
    else:
        table.to_csv(path, index=False)
    return path


def _print_top(table, methods, n, pvalues=False):
    n = min(n, len(table))
    if n <= 0:
        return
    width = max(7, *(len(str(f)) for f in table["feature"].head(n)))
    cols = [m[:12] for m in methods]
    qcols = [m for m in methods if pvalues and f"{m}_q" in table]
    head = f"{'rank':>4s}  {'feature':{width}s}" + "".join(f" {c:>12s}" for c in cols)
    head += "".join(f" {'q ' + m[:8]:>10s}" for m in qcols)
    if "mean_rank" in table:
        head += f" {'mean rank':>10s}"
    print(f"top {n} features (rank given by each method; 1 = best"
          + ("; q: Benjamini-Hochberg q-value" if qcols else "") + "):")
    print(head)
    for i, r in enumerate(table.head(n).to_dict(orient="records"), start=1):
        line = f"{i:4d}  {str(r['feature']):{width}s}" + "".join(f" {int(r[f'{m}_rank']):12d}" for m in methods)
        line += "".join(f" {r[f'{m}_q']:10.3g}" for m in qcols)
        if "mean_rank" in r:
            line += f" {r['mean_rank']:10.1f}"
        print(line)


def _describe_target(data):
    if data.continuous:
        return f"a continuous target ({data.y.min():.4g} to {data.y.max():.4g})"
    return f"{len(np.unique(data.y.astype(str)))} classes"


def _cmd_rank(args):
    """Rank the features of a user's file by each weighter (fit on all rows)."""
    if args.top < 0:
        raise UsageError(f"--top must be 0 or more; got {args.top}.")
    if str(args.file).lower().endswith(".bed"):
        return _cmd_rank_plink(args)
    if args.pheno or args.pheno_col:
        raise UsageError("--pheno / --pheno-col are for a PLINK .bed file; a table takes --target COL.")
    if args.permutations < 1:
        raise UsageError(f"--permutations must be at least 1; got {args.permutations}.")
    data = _load(args)
    names = parse_methods(args.methods, continuous=data.continuous)
    X, y = data.X, data.y
    _say(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features, {_describe_target(data)}")
    table, _, kept, warn = _rank_table(names, X, y, args, data.continuous)
    out = args.out or f"{data.name}_ranks.csv"
    _write_table(table, out)
    _print_warnings(warn)
    _print_top(table, list(kept) + _baseline_names(table), args.top, pvalues=args.pvalues)
    what = "weight, signed score, rank" + (", p, q" if args.pvalues else "")
    print(f"wrote {out}: {len(table)} features x {len(kept)} method(s) ({what}) and the univariate "
          f"baseline(s) {', '.join(_baseline_names(table))} (statistic, p, q, rank)")
    return 0


#: the weighters that take genotype bytes, and the default for a .bed file
PLINK_METHODS = ("MultiSURF", "ReliefF")


def _cmd_rank_plink(args):
    """Rank the SNPs of a PLINK fileset by the byte-capable Relief weighters (no float copy)."""
    from . import WEIGHTERS
    from .engine import config_context
    from .evaluation.distributed import scheduler_address
    from .io import read_plink

    names = parse_methods(args.methods, default=PLINK_METHODS)
    bad = [n for n in names if not getattr(WEIGHTERS[n], "_byte_input", False)]
    if bad:
        ok = sorted(n for n, c in WEIGHTERS.items() if getattr(c, "_byte_input", False))
        raise UsageError(f"--methods: {', '.join(bad)} cannot score genotype bytes; choose from {', '.join(ok)}.")
    address = scheduler_address(args.scheduler)
    given = [flag for flag, on in (("--pvalues", args.pvalues), ("--log", args.log), ("--target", args.target),
                                   ("--target-type", args.target_type not in (None, "auto"))) if on]
    if given:
        raise UsageError(f"{', '.join(given)}: not for a PLINK .bed file (its phenotype comes from the .fam file or "
                         "--pheno; its genotypes are scored as bytes).")
    data = read_plink(args.file, pheno=args.pheno, pheno_col=args.pheno_col, lazy=bool(address))
    if data.y.dtype.kind == "f":
        raise UsageError(f"{args.file}: a quantitative phenotype; the genotype byte path scores case/control or "
                         "other class labels (load the genotypes as floats for a continuous target).")
    if np.unique(data.y).size < 2:
        raise UsageError(f"{args.file}: the phenotype has one class ({data.y[0]!r}); at least two are needed.")
    for m in data.messages:
        _say(f"note: {m}")
    n, d = data.X.shape
    _say(f"{data.name}: {n} samples x {d} SNPs, {len(np.unique(data.y.astype(str)))} classes"
         + (f"; feature blocks on the dask scheduler at {address}" if address else ""))
    with config_context(n_jobs=args.n_jobs or 0, scheduler=address or ""):
        # unknown genotypes (-127): Relief's unknown-value diff
        table, _, kept, warn = _rank_table(names, data.X, data.y, args, scale="none", baselines=False,
                                           feature_names=data.snps, weighter_params={"missing": "diff"})
    out = args.out or f"{data.name}_ranks.csv"
    _write_table(table, out)
    _print_warnings(warn)
    _print_top(table, kept, args.top)
    print(f"wrote {out}: {len(table)} SNPs x {len(kept)} method(s) (weight, signed score, rank)")
    return 0


def _cmd_evaluate(args):
    """Repeated CV of weighted kNN (each method) against plain kNN on a user's file; report and CSVs."""
    _require("matplotlib")
    import pandas as pd

    from .evaluation import summarize, write_csv
    from .evaluation.compare import PLAIN, compare_methods, pairwise_tests, top_curves, warning_summary
    from .evaluation.distributed import use_scheduler
    from .io import fill_median
    from .plotting.report import write_user_report

    k, r = parse_cv(args.cv)
    if args.n_neighbors < 1:
        raise UsageError(f"--n-neighbors must be at least 1; got {args.n_neighbors}.")
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be in (0, 1); got {args.alpha}.")
    # median imputation inside each training part (no test values leak into the medians)
    data = _load(args, impute="keep" if args.impute == "median" else args.impute)
    names = parse_methods(args.methods, continuous=data.continuous)
    if data.continuous:
        return _evaluate_continuous(args, data, names, k, r)
    X, y = data.X, data.y
    labels, counts = np.unique(y.astype(str), return_counts=True)
    if counts.min() < k:
        raise UsageError(f"--cv {args.cv}: class {str(labels[np.argmin(counts)])!r} has {counts.min()} rows, fewer "
                         f"than the {k} folds; use --cv {max(2, int(counts.min()))}x{r}.")
    out = args.out or f"{data.name}-evaluate"
    os.makedirs(out, exist_ok=True)
    _say(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features, {len(labels)} classes; "
         f"{k}-fold CV x {r} repeats, {len(names)} method(s) + plain kNN")

    with use_scheduler(args.scheduler) as client:
        if client is not None:
            _say(f"running the cells on the dask scheduler at {client.scheduler.address}")
        # 1. one fit per method on all rows: the rank table, the weight profiles, and which methods run
        table, fitted, kept, warn_full = _rank_table(names, fill_median(X), y, args)
        _write_table(table, os.path.join(out, "ranks.csv"))

        # 2. repeated CV, resumable, on this machine or the cluster
        weighters = {n: _make(n, args.random_state) for n in kept}
        _say(f"cross-validating {len(weighters) + 1} methods x {k * r} cells ...")
        t0 = time.monotonic()
        rows = compare_methods(X.to_numpy(), y, weighters, name=data.name, cv=(k, r), n_neighbors=args.n_neighbors,
                               scale=args.scale, random_state=args.random_state, n_jobs=args.n_jobs,
                               store=os.path.join(out, "store.jsonl"),
                               progress=False if args.no_progress else None)
    _say(f"cross-validation done in {time.monotonic() - t0:.0f} s")
    methods = [PLAIN, *weighters]
    pairs = pairwise_tests(rows, test=args.test, alpha=args.alpha, min_diff=args.min_diff, methods=methods)
    summary = summarize(rows)
    warn = warn_full + warning_summary(rows)
    _print_warnings(warn)

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


def _evaluate_continuous(args, data, names, k, r):
    """``evaluate`` on a continuous target: RMSE and R^2 of weighted kNN regression against plain kNN."""
    import pandas as pd

    from .evaluation.compare import PLAIN, warning_summary
    from .evaluation.regression import compare_regression, regression_tests
    from .io import fill_median

    X, y = data.X, data.y
    if X.shape[0] < 2 * k:
        raise UsageError(f"--cv {args.cv}: {X.shape[0]} rows are too few for {k} folds of at least 2 rows.")
    out = args.out or f"{data.name}-evaluate"
    os.makedirs(out, exist_ok=True)
    _say(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features, {_describe_target(data)}; "
         f"{k}-fold CV x {r} repeats, {len(names)} method(s) + plain kNN regression")
    table, fitted, kept, warn_full = _rank_table(names, fill_median(X), y, args, continuous=True)
    _write_table(table, os.path.join(out, "ranks.csv"))
    weighters = {n: _make(n, args.random_state, continuous=True) for n in kept}
    _say(f"cross-validating {len(weighters) + 1} methods x {k * r} cells ...")
    t0 = time.monotonic()
    rows = compare_regression(X.to_numpy(), y, weighters, name=data.name, cv=(k, r), n_neighbors=args.n_neighbors,
                              scale=args.scale, random_state=args.random_state, n_jobs=args.n_jobs)
    _say(f"cross-validation done in {time.monotonic() - t0:.0f} s")
    tests = {t["method"]: t for t in regression_tests(rows, alpha=args.alpha)}
    warn = warn_full + warning_summary([{**row, "accuracy": 0.0} for row in rows])
    _print_warnings(warn)
    frame = pd.DataFrame(rows)
    frame.drop(columns=["warnings"]).to_csv(os.path.join(out, "results.csv"), index=False)
    summary = frame.groupby("method", sort=False).agg(rmse=("rmse", "mean"), rmse_std=("rmse", "std"),
                                                      r2=("r2", "mean"), r2_std=("r2", "std"), n=("rmse", "size"))
    summary.reset_index().to_csv(os.path.join(out, "summary.csv"), index=False)
    pd.DataFrame(list(tests.values())).to_csv(os.path.join(out, "pairwise.csv"), index=False)
    lines = [f"# {data.name}: weighted kNN regression against plain kNN", "",
             f"{X.shape[0]} samples x {X.shape[1]} features, {_describe_target(data)}; {k}-fold CV x {r} repeats, "
             f"kNN k = {args.n_neighbors}, scaling {args.scale}; Nadeau & Bengio's corrected resampled t-test on "
             f"the RMSE differences, alpha = {args.alpha}.", "",
             "| method | RMSE | R^2 | RMSE vs kNN | p | outcome |", "|---|---|---|---|---|---|"]
    print(f"{'method':14s} {'RMSE':>18s} {'R^2':>16s}  vs {PLAIN}")
    for m, s in summary.iterrows():
        t = tests.get(m)
        extra = f"{t['rmse_diff']:+.4g} RMSE, p = {t['p']:.3g} ({t['outcome']})" if t else "(reference)"
        print(f"{m:14s} {s.rmse:9.4g} +- {s.rmse_std:6.3g} {s.r2:7.3f} +- {s.r2_std:5.3f}  {extra}")
        lines.append(f"| {m} | {s.rmse:.4g} +- {s.rmse_std:.3g} | {s.r2:.3f} +- {s.r2_std:.3f} | "
                     + (f"{t['rmse_diff']:+.4g} | {t['p']:.3g} | {t['outcome']} |" if t else "(reference) | | |"))
    if warn:
        lines += ["", "Warnings:", "", *[f"- {w}" for w in warn]]
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"report: {os.path.join(out, 'report.md')} (and results.csv, summary.csv, pairwise.csv, ranks.csv in {out})")
    return 0


def _cmd_datasets(args):
    from .datasets import dataset_info, list_datasets

    rows = [dataset_info(n) for n in list_datasets()]
    print(f"{'name':34s} {'n':>6s} {'d':>6s} {'classes':>7s}  source / papers")
    for r in rows:
        print(f"{r['name']:34s} {r['n']:6d} {r['d']:6d} {r['classes']:7d}  {r['source']}")
        print(f"{'':58s}{r['papers']}")
    print(f"{len(rows)} datasets bundled (no network needed).")
    return 0


def _cmd_demo(args):
    """Fit the weighters on a bundled dataset; weighted kNN vs plain kNN."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from . import WEIGHTERS
    from .classifiers import KNNClassifier, WeightedKNN
    from .datasets import list_datasets, load
    from .evaluation.compare import collect_warnings

    if args.dataset not in list_datasets():
        hint = (f"; for your own file use: knnweights evaluate {args.dataset} --target COLUMN"
                if os.path.exists(args.dataset) or "." in args.dataset else "")
        raise UsageError(f"--dataset: unknown bundled dataset {args.dataset!r} (see: knnweights datasets){hint}")
    X, y = load(args.dataset, return_X_y=True, missing="median")
    n, d = X.shape
    tour = args.methods is None
    if tour:
        names, slow = list(DEMO_METHODS), []
    elif str(args.methods).strip().lower() == "all":
        names = sorted(WEIGHTERS)
        slow = [m for m in names if m in SLOW_ON_WIDE] if d > WIDE else []
        names = [m for m in names if m not in slow]
    else:
        names, slow = parse_methods(args.methods), []
    cv = StratifiedKFold(5, shuffle=True, random_state=args.random_state)
    base = cross_val_score(make_pipeline(StandardScaler(), KNNClassifier(args.k)), X, y, cv=cv).mean()
    print(f"{args.dataset}: {n} x {d}, 5-fold CV accuracy of {args.k}-NN"
          + (f" (a tour of {len(names)} methods; --methods all runs every weighter)" if tour else ""))
    if slow:
        print(f"(skipping {', '.join(slow)}: slow at {d} features; add --methods {','.join(slow)} to run them)")
    print(f"{'plain kNN':14s} {100 * base:6.2f} %", flush=True)
    warn = []
    for i, name in enumerate(names, start=1):
        est = _make(name, args.random_state)
        t = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as record, _ticker(f"  [{i}/{len(names)}] {name}:"):
                warnings.simplefilter("always")
                acc = cross_val_score(make_pipeline(StandardScaler(), WeightedKNN(est, args.k)), X, y, cv=cv,
                                      error_score="raise").mean()
        except NotImplementedError as exc:
            print(f"{name:14s} {'n/a':>6s}   ({_short(exc)})", flush=True)
            continue
        except Exception as exc:  # noqa: BLE001 - one method failing must not hide the others
            print(f"{name:14s} {'error':>6s}   ({type(exc).__name__}: {' '.join(str(exc).split())})", flush=True)
            continue
        print(f"{name:14s} {100 * acc:6.2f} %  ({time.perf_counter() - t:.1f} s)", flush=True)
        warn.extend(f"{name} on {args.dataset}: {text}" + (f" ({count}x over the 5 folds)" if count > 1 else "")
                    for _, text, count in collect_warnings(record))
    _print_warnings(warn)
    return 0


# -- the parser ------------------------------------------------------------------------
def add_scheduler_argument(parser):
    """Add ``--scheduler ADDRESS`` to an :mod:`argparse` parser (default: ``$DASK_SCHEDULER_ADDRESS``).

    Use the parsed value with ``with use_scheduler(args.scheduler): ...``.
    """
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", default=None,
        help="run the cells on a running dask.distributed scheduler (e.g. tcp://host:8786); "
             "default: $DASK_SCHEDULER_ADDRESS when set, else this machine")
    return parser


def _version():
    import sklearn

    from . import __version__

    return (f"knnweights {__version__} (Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"scikit-learn {sklearn.__version__})")


def build_parser():
    """The ``knnweights`` argument parser (every subcommand)."""

    p = argparse.ArgumentParser(prog="knnweights", formatter_class=_PlainFormatter,
                                description="Feature weighting for nearest-neighbour classification.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rank = sub.add_parser(
        "rank", help="rank the features of your file (CSV/TSV/Parquet/Excel) by each weighter",
        description="Fit each weighter on all rows of FILE and write one table: the feature, then per method its "
                    "weight, signed score and rank (1 = best, no ties), then a univariate baseline (Welch t or "
                    "ANOVA F for classes, Pearson and Spearman for a continuous target). Prints the top features. "
                    "A target with non-integer numbers is continuous (--target-type to choose).\n\n"
                    "example: knnweights rank genes.csv --target diagnosis --id-col sample --drop batch --top 30 "
                    "--pvalues\n\n"
                    "A PLINK .bed file (with its .bim and .fam) is ranked SNP by SNP from its bytes by the Relief "
                    f"family (default: {', '.join(PLINK_METHODS)}); the phenotype comes from the .fam file or "
                    "--pheno.\n\nexample: knnweights rank study.bed --pheno pheno.txt --pheno-col disease")
    _add_data_arguments(rank)
    rank.add_argument("--out", metavar="FILE", default=None,
                      help="the table (.csv, .tsv, .parquet, .xlsx; default: <file stem>_ranks.csv)")
    rank.add_argument("--top", metavar="N", type=int, default=20, help="features printed (default: 20)")
    rank.add_argument("--pvalues", action="store_true",
                      help="a p-value and a Benjamini-Hochberg q-value per feature and method: the Relief family's "
                           "pair test, a permutation test for the others (columns <method>_p, <method>_q)")
    rank.add_argument("--permutations", type=int, default=199, metavar="B",
                      help="permutations for the methods without their own p-values (default: 199)")
    rank.add_argument("--pheno", metavar="FILE", default=None,
                      help="PLINK .bed input: a phenotype file (FID IID value ...; default: the .fam file's)")
    rank.add_argument("--pheno-col", metavar="NAME", default=None,
                      help="PLINK .bed input: the phenotype file's column (header name or 1-based index)")
    rank.add_argument("--n-jobs", type=int, default=None,
                      help="parallel work: permutation refits (joblib), or the compiled kernels' threads for a "
                           ".bed file (default: all)")
    add_scheduler_argument(rank)
    rank.set_defaults(func=_cmd_rank)

    ev = sub.add_parser(
        "evaluate", help="repeated CV of weighted kNN against plain kNN on your file, with a report",
        description="Repeated stratified cross-validation of weighted kNN (one weighter per method) against plain "
                    "kNN and each other on FILE; corrected resampled t-tests; writes report.md, a self-contained "
                    "report.html with plots, CSVs and a resumable store to --out.\n\n"
                    "example: knnweights evaluate genes.csv --target diagnosis --id-col sample --cv 10x10 "
                    "--n-jobs 4")
    _add_data_arguments(ev)
    ev.add_argument("--cv", default="10x10", metavar="KxR", help="folds x repeats (default: 10x10)")
    ev.add_argument("-k", "--n-neighbors", type=int, default=5, help="neighbours of the kNN (default: 5)")
    ev.add_argument("--test", choices=["corrected", "plain"], default="corrected",
                    help="corrected resampled t-test (Nadeau & Bengio; default) or the papers' plain paired t-test")
    ev.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    ev.add_argument("--min-diff", type=float, default=0.0,
                    help="smallest mean difference, in points, that counts as a win (default: 0)")
    ev.add_argument("--out", metavar="DIR", default=None, help="output folder (default: <file stem>-evaluate)")
    ev.add_argument("--n-jobs", type=int, default=None, help="cells in parallel on this machine (joblib)")
    add_scheduler_argument(ev)
    ev.add_argument("--no-progress", action="store_true", help="no progress line")
    ev.set_defaults(func=_cmd_evaluate)

    d = sub.add_parser("datasets", help="list the bundled datasets with sizes and sources")
    d.set_defaults(func=_cmd_datasets)
    demo = sub.add_parser("demo", help="fit the weighters on a bundled dataset, weighted vs plain kNN",
                          description="5-fold CV of weighted kNN (each weighter) against plain kNN on a bundled "
                                      "dataset: a tour of one or two methods per family, or --methods all. On wide "
                                      f"data (more than {WIDE} features) the methods that can take minutes there "
                                      f"({', '.join(SLOW_ON_WIDE)}) are skipped by 'all' unless --methods names them.")
    demo.add_argument("--dataset", default="ionosphere", help="a bundled dataset (default: ionosphere)")
    demo.add_argument("--methods", metavar="A,B,...", default=None,
                      help="weighters, comma-separated, or 'all' (every weighter fast at this size; default: "
                           f"{','.join(DEMO_METHODS)})")
    demo.add_argument("-k", type=int, default=3, help="neighbours of the kNN (default: 3)")
    demo.add_argument("--random-state", type=int, default=0)
    demo.set_defaults(func=_cmd_demo)
    try:
        from .reproduce import add_parser as _add_reproduce
    except ImportError:
        pass
    else:
        _add_reproduce(sub)
    for sp in sub.choices.values():
        sp.formatter_class = _PlainFormatter
    for action in sub._choices_actions:
        action.help = plain_text(action.help)
    return p


def main(argv=None):
    """Run the command line; returns the exit status (2 for bad input)."""
    from .evaluation.distributed import SchedulerError
    from .io import DataError

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    old = np.seterr(all="ignore")
    try:
        with _cli_warnings():
            return args.func(args)
    except (DataError, UsageError, SchedulerError) as exc:
        print(f"knnweights {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print("knnweights: interrupted", file=sys.stderr, flush=True)
        return 130
    finally:
        np.seterr(**old)


if __name__ == "__main__":
    sys.exit(main())
