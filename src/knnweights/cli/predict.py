"""``knnweights predict MODEL FILE``: a model saved by ``select`` applied to new samples."""

import sys

import joblib
import pandas as pd

from ..exceptions import DataError
from ..io import read_table
from ._options import Command


def _add_arguments(p):
    """Add the arguments of ``predict``."""
    p.add_argument("model", help="model.joblib written by knnweights select")
    p.add_argument("file", help="CSV, TSV, Parquet or Excel file of new samples, with the model's feature columns")
    p.add_argument("--id-col", metavar="COL", default=None, help="a sample-id column copied to the output")
    p.add_argument("--out", metavar="FILE", default=None, help="output CSV (default: standard output)")
    p.add_argument("--sep", default=None, help="delimiter of a text file (default: by extension, else guessed)")
    p.add_argument("--sheet", default=None, help="Excel sheet name (default: the first)")


def _load_model(path):
    try:
        model = joblib.load(path)
    except FileNotFoundError:
        raise DataError(f"{path}: no such model file.") from None
    except Exception as exc:  # a file joblib cannot read: not a model of ours
        raise DataError(f"{path}: not a model written by knnweights select ({type(exc).__name__}).") from None
    if not hasattr(model, "predict") or getattr(model, "feature_names_in_", None) is None:
        raise DataError(f"{path}: not a model written by knnweights select (no feature names).")
    return model


def predictions(model, table, id_col=None):
    """The predictions of ``model`` for the rows of ``table``, its columns taken by the model's feature names.

    Parameters
    ----------
    model : estimator
        A fitted model with ``feature_names_in_`` (``select``'s ``model.joblib``).
    table : pandas.DataFrame
        New samples; extra columns are ignored, the model's features may be in any order.
    id_col : str, optional
        A column copied to the output.

    Returns
    -------
    pandas.DataFrame
        ``prediction`` (and ``p(<class>)`` per class of a classifier), one row per sample.
    """
    names = [str(c) for c in model.feature_names_in_]
    table = table.rename(columns=str)
    missing = [c for c in names if c not in table.columns]
    if missing:
        shown = ", ".join(repr(c) for c in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(f"the table lacks {len(missing)} of the model's {len(names)} features ({shown}); give a table "
                        "with the columns the model was trained on.")
    X = table[names].apply(pd.to_numeric, errors="coerce")
    bad = [c for c in names if X[c].isna().any() and not table[c].isna().any()]
    if bad:
        raise DataError(f"column {bad[0]!r} is not numeric; the model's features must be numbers.")
    out = pd.DataFrame(index=table.index)
    if id_col is not None:
        if id_col not in table.columns:
            raise DataError(f"--id-col: no column {id_col!r} in the table.")
        out[id_col] = table[id_col]
    out["prediction"] = model.predict(X)
    if hasattr(model, "predict_proba") and hasattr(model, "classes_"):
        for c, p in zip(model.classes_, model.predict_proba(X).T, strict=True):
            out[f"p({c})"] = p
    return out


def _run(args):
    """Apply a saved model to a table; exit status."""
    model = _load_model(args.model)
    out = predictions(model, read_table(args.file, sheet=args.sheet, sep=args.sep), args.id_col)
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"{len(out)} predictions written to {args.out}", file=sys.stderr)
    else:
        out.to_csv(sys.stdout, index=False)
    return 0


COMMAND = Command(
    "predict", help="apply a model saved by knnweights select to new samples",
    description="Predict the rows of FILE with MODEL (model.joblib of knnweights select): the model's features "
                "are taken by name (extra columns are ignored); missing values are imputed by the training "
                "medians.\n\nexample: knnweights predict genes-select/model.joblib new.csv --id-col sample "
                "--out predictions.csv",
    run=_run, add_arguments=_add_arguments)
