"""The user's table in, the rank table out: the file read with its notes, the rank table fitted with a
status line per method, written and its top printed."""

import contextlib
import os

import numpy as np

from ..evaluation.ranking import BASELINES, fit_rank_table
from ..exceptions import UsageError
from ..io import count_like_features, load_table
from ._console import elapsed_ticker, one_line, print_status


def load_user_table(args, impute=None):
    """The user's table (:func:`knnweights.io.load_table`) as the command's arguments ask, its notes printed.

    With ``--log`` every feature becomes ``log2(x + 1)`` (refused when a value is negative);
    without it, count-like features (non-negative, strongly right-skewed) get a note
    suggesting it.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments (:func:`._options.add_data_arguments`).
    impute : str, optional
        The imputation to use instead of ``args.impute``.

    Returns
    -------
    knnweights.io.UserData
    """
    time, event = getattr(args, "time", None), getattr(args, "event", None)
    if args.target_type == "survival":
        if args.target is not None:
            raise UsageError("--target-type survival takes the outcome from --time COL and --event COL; leave out "
                             "--target.")
        if time is None or event is None:
            raise UsageError("--target-type survival needs --time COL and --event COL.")
    elif time is not None or event is not None:
        raise UsageError("--time / --event give a survival outcome: add --target-type survival.")
    elif args.target is None:
        raise UsageError("--target COL is required: the label column of the table.")
    covariates = [c.strip() for c in (getattr(args, "covariates", None) or "").split(",") if c.strip()]
    data = load_table(args.file, args.target, id_col=args.id_col, drop=args.drop, one_hot=args.one_hot,
                      impute=impute or args.impute, sheet=args.sheet, sep=args.sep, target_type=args.target_type,
                      covariates=covariates, time=time, event=event)
    for m in data.messages:
        print_status(f"note: {m}")
    if args.log:
        neg = (data.X < 0).any(axis=0).to_numpy()
        if neg.any():
            raise UsageError(f"--log: column {str(data.X.columns[np.flatnonzero(neg)[0]])!r} has negative values "
                             f"({int(neg.sum())} column(s) have some); log2(x + 1) needs x >= 0.")
        data.X = np.log2(data.X + 1.0)
        print_status("note: features transformed by log2(x + 1) before scaling (--log)")
    else:
        skewed, med, n_skewed = count_like_features(data.X.to_numpy())
        if skewed:
            print_status(f"note: {n_skewed} of {data.X.shape[1]} features are non-negative and strongly right-skewed "
                         f"(median skewness {med:.1f}), like expression counts; consider --log (log2(x + 1) before "
                         "scaling): neighbour distances on raw counts are dominated by a few large values.")
    return data


def describe_target(data):
    """The target in a few words: its range when continuous, else its number of classes.

    Parameters
    ----------
    data : knnweights.io.UserData
        The user's table.

    Returns
    -------
    str
    """
    if getattr(data, "survival", False):
        n_ev = int(data.y["event"].sum())
        return f"a survival outcome ({n_ev} events, {data.y.size - n_ev} censored)"
    if data.continuous:
        return f"a continuous target ({data.y.min():.4g} to {data.y.max():.4g})"
    return f"{len(np.unique(data.y.astype(str)))} classes"


def rank_with_status(names, X, y, args, continuous=False, *, scale=None, baselines=True, feature_names=None,
                     weighter_params=None, covariates=None, survival=False):
    """The rank table of the methods fitted on all rows (:func:`knnweights.selection.fit_rank_table`),
    with a status line per fit.

    With ``--pvalues`` (rank) each method gets ``<name>_p`` and ``<name>_q`` columns; the
    univariate baselines follow the methods.  A method whose fit fails is left out, said in
    one line.

    Parameters
    ----------
    names : list of str
        The weighters.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The features.
    y : array-like of shape (n_samples,)
        The target.
    args : argparse.Namespace
        The parsed arguments (scaling, seed, p-values, permutations, jobs).
    continuous : bool, default=False
        Whether the target is continuous.
    scale : str, optional
        The scaling to use instead of ``args.scale``.
    baselines : bool, default=True
        Add the univariate baselines.
    feature_names : sequence of str, optional
        The features' names (default: the DataFrame's columns).
    weighter_params : dict, optional
        Parameters set on every weighter that has them.
    covariates : DataFrame, optional
        Covariates that adjust the p-values (:func:`knnweights.rank_table`'s ``covariates``).
    survival : bool, default=False
        ``y`` is a survival outcome (a structured array with fields ``event`` and ``time``).

    Returns
    -------
    table : DataFrame
        The rank table.
    fitted : dict
        Method -> fitted weighter.
    kept : list of str
        The methods that were fitted.
    warnings : list of str
        The warnings of the fits, one line per method and message.
    """
    ticker = contextlib.ExitStack()

    def progress(event, label, index, total, **info):
        tag = f"[{index}/{total}] {label}"
        if event == "fit":
            print_status(f"{tag}: fitting on {info['shape'][0]} x {info['shape'][1]} ...")
            ticker.enter_context(elapsed_ticker(f"  {label}: fitting,"))
        elif event == "fitted":
            ticker.close()
            print_status(f"{tag}: done in {info['seconds']:.1f} s")
        elif event == "failed":
            ticker.close()
            exc = info["error"]
            if isinstance(exc, NotImplementedError):
                print_status(f"{tag}: skipped, not implemented ({one_line(exc)})")
            else:
                print_status(f"{tag}: failed ({type(exc).__name__}: {' '.join(str(exc).split())})")
        elif event == "pvalues":
            B = info["source"]
            how = ("its pair test (pvalues_)" if B == "pvalues_"
                   else f"{B} permutations (smallest possible p: {1 / (B + 1):.3g})")
            print_status(f"    {label}: p-values by {how}; {int(np.sum(info['qvalues'] <= 0.05))} feature(s) at "
                         "q <= 0.05")

    with ticker:
        res = fit_rank_table(names, X, np.asarray(y), feature_names, pvalues=bool(getattr(args, "pvalues", False)),
                             baselines=baselines, sort_by="mean_rank", scale=args.scale if scale is None else scale,
                             target_type="survival" if survival else "continuous" if continuous else "classes",
                             n_permutations=getattr(args, "permutations", 199), n_jobs=getattr(args, "n_jobs", None),
                             padj=getattr(args, "padj", "bh"),
                             random_state=args.random_state, weighter_params=weighter_params, on_error="skip",
                             record_warnings=True, progress=progress, covariates=covariates)
    if res.table is None:
        raise UsageError("no method could be fitted (see the lines above).")
    warn = [f"{name}: {text} ({count}x)" if count > 1 else f"{name}: {text}"
            for name in res.fitted for _, text, count in res.warnings[name]]
    return res.table, res.fitted, list(res.fitted), warn


def baseline_names(table):
    """The univariate baselines a rank table has columns for.

    Parameters
    ----------
    table : DataFrame
        A rank table.

    Returns
    -------
    list of str
    """
    return [b for b in BASELINES.values() if f"{b}_rank" in table]


def write_table(table, path):
    """Write a table in the format its extension names (TSV, Parquet, Excel, else CSV).

    Parameters
    ----------
    table : DataFrame
        The table.
    path : str or path-like
        The file; its folder is made when missing.

    Returns
    -------
    str
        ``path``.
    """
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


def print_top_features(table, methods, n, pvalues=False):
    """Print the first ``n`` rows of a rank table: each method's rank, q-values, the mean rank.

    Parameters
    ----------
    table : DataFrame
        A rank table, in the order to print.
    methods : list of str
        The methods (and baselines) whose rank columns are printed.
    n : int
        Rows printed.
    pvalues : bool, default=False
        Print the methods' q-values too (where the table has them).
    """
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
