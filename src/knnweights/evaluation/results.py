"""Tables of a grid's rows: records, summaries per (method, dataset), CSV."""

import csv
import json
import os

import numpy as np
import pandas as pd

__all__ = ["as_records", "paired_cells", "summarize", "write_csv"]


def as_records(results):
    """The rows as a list of dicts.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`~knnweights.evaluation.run_grid` returns them.

    Returns
    -------
    rows : list of dict
        One dict per row.
    """
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        return results.to_dict(orient="records")
    return list(results)


def paired_cells(results, value="accuracy"):
    """Each method's values by cell, so that two methods on the same splits pair cell by cell.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`~knnweights.evaluation.run_grid` returns them.
    value : str, default="accuracy"
        Column taken.

    Returns
    -------
    cells : dict
        ``(method, dataset)`` -> ``{(repeat, fold): value}``.
    sizes : dict
        Dataset -> ``(n_train, n_test)``, the means over its rows that record them (the
        corrected resampled t-test needs them).
    """
    cells, sizes = {}, {}
    for r in as_records(results):
        cells.setdefault((r["method"], r["dataset"]), {})[(int(r["repeat"]), int(r["fold"]))] = float(r[value])
        if "n_train" in r and "n_test" in r:
            sizes.setdefault(r["dataset"], []).append((float(r["n_train"]), float(r["n_test"])))
    return cells, {d: tuple(np.mean(np.asarray(v), axis=0)) for d, v in sizes.items()}


def _as_frame(rows, as_frame):
    return pd.DataFrame(rows) if as_frame else rows


def summarize(results, value="accuracy", as_frame=False):
    """Mean, standard deviation and count of ``value`` per (method, dataset).

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`~knnweights.evaluation.run_grid` returns them.
    value : str, default="accuracy"
        Column to summarise.
    as_frame : bool, default=False
        Return a pandas DataFrame instead of a list of dicts.

    Returns
    -------
    summary : list of dict or pandas.DataFrame
        One entry per (method, dataset), in order of first appearance: ``method``,
        ``dataset``, ``mean``, ``std`` (sample standard deviation; 0 for one cell)
        and ``n`` (the number of cells).
    """
    groups = {}
    for r in as_records(results):
        groups.setdefault((r["method"], r["dataset"]), []).append(float(r[value]))
    out = []
    for (m, d), v in groups.items():
        a = np.asarray(v)
        out.append({"method": m, "dataset": d, "mean": float(a.mean()),
                    "std": float(a.std(ddof=1)) if a.size > 1 else 0.0, "n": int(a.size)})
    return _as_frame(out, as_frame)


def write_csv(results, path):
    """Write the rows as CSV atomically (temporary file, then ``os.replace``).

    A reader never sees a half-written file; dict and list values (e.g. ``best_params``)
    are written as JSON.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`~knnweights.evaluation.run_grid` returns them.
    path : str or path-like
        Destination file; its folder is created when missing.

    Returns
    -------
    path : str
        The path written.
    """
    rows = as_records(results)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v) for k, v in r.items()})
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path
