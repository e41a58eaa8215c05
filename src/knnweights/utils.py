"""Helpers shared across knnweights: input validation, the progress bar, durations.

Each validation check raises one ``ValueError`` whose message names the column (or sample) at
fault, so that a user of a DataFrame sees which gene or measurement to fix.
"""

import sys

import numpy as np
from tqdm import tqdm

__all__ = ["check_finite_columns", "check_numeric_columns", "check_target", "progress_bar", "format_seconds"]


def _label(c):
    """A class label as the user wrote it (numpy scalars shown as plain values)."""
    return repr(c.item() if hasattr(c, "item") else c)


def _column_label(names, j):
    """``'name'`` for a named (DataFrame) column, else its position."""
    return f"{j}" if names is None else repr(str(names[j]))


def _column_names(X):
    cols = getattr(X, "columns", None)
    return None if cols is None else [str(c) for c in cols]


def _is_missing(v):
    if v is None:
        return True
    try:
        return bool(v != v)
    except TypeError:  # pandas.NA
        return True


def _first_non_numeric(values):
    """The first value of a 1-d object column that does not convert to float, or None."""
    for v in values:
        if _is_missing(v):
            continue
        try:
            float(v)
        except ValueError:  # a string such as 'B1' (other objects: sklearn's TypeError)
            return v
        except TypeError:
            continue
    return None


def check_numeric_columns(X, what="X"):
    """Raise a ``ValueError`` naming the first column of ``X`` that holds a non-numeric value.

    DataFrame columns are named (``column 'batch' is not numeric (value 'B1')``), other
    inputs give the column's position.  Numeric and boolean columns are not inspected.
    """
    names = _column_names(X)
    if names is not None:
        for j, dt in enumerate(getattr(X, "dtypes", [])):
            if getattr(dt, "kind", "O") in "biufc":
                continue
            bad = _first_non_numeric(np.asarray(X.iloc[:, j], dtype=object))
            if bad is not None:
                _raise_non_numeric(what, _column_label(names, j), bad)
        return
    if isinstance(X, np.ndarray) and X.dtype.kind in "biufc":
        return
    try:
        np.asarray(X, dtype=np.float64)
        return  # converts: nothing to name
    except (TypeError, ValueError):
        pass
    try:
        A = np.asarray(X, dtype=object)
    except Exception:  # ragged input: let sklearn's validation explain it
        return
    if A.ndim != 2:
        return
    for j in range(A.shape[1]):
        bad = _first_non_numeric(A[:, j])
        if bad is not None:
            _raise_non_numeric(what, _column_label(None, j), bad)


def _raise_non_numeric(what, label, value):
    raise ValueError(
        f"Input {what}: column {label} is not numeric (value {value!r}). Drop it, or encode it (e.g. with "
        "sklearn.preprocessing.OneHotEncoder) before fitting: feature weights need numeric features."
    )


def check_finite_columns(X, what="X", allow_nan=False):
    """Raise a ``ValueError`` naming the first column that holds NaN or infinity.

    A DataFrame's column is named (``NaN in column 'gene907' (position 907)``), other
    inputs give the position.  Non-numeric input is left to :func:`check_numeric_columns`.
    With ``allow_nan=True`` only infinity is refused.
    """
    names = _column_names(X)
    try:
        X = np.asarray(X) if names is None else X.to_numpy()
    except Exception:  # ragged or mixed input: validate_data explains it
        return
    if X.dtype.kind == "O":
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            return
    if X.dtype.kind not in "fc" or X.ndim != 2:
        return
    bad = np.isinf(X) if allow_nan else ~np.isfinite(X)
    if bad.any():
        cols = np.flatnonzero(bad.any(axis=0))
        j = int(cols[0])
        kind = "NaN" if not allow_nan and np.isnan(X[:, j]).any() else "infinity (inf)"
        raise ValueError(
            f"Input {what} contains {kind} in column {_column_label(names, j)} ({int(bad[:, j].sum())} "
            f"value(s); {len(cols)} column(s) affected in all). Impute or drop the missing values, e.g. with "
            "sklearn.impute.SimpleImputer, before fitting: weights are not defined on NaN or inf."
        )


def check_target(y):
    """Raise a ``ValueError`` that says "y" when the labels hold a missing value (NaN or None)."""
    if y is None:
        return
    yv = np.asarray(y)
    if yv.dtype.kind == "f":
        missing = ~np.isfinite(yv)
    elif yv.dtype.kind == "O":
        missing = np.array([_is_missing(v) for v in yv.ravel()], dtype=bool)
    else:
        return
    if missing.any():
        first = int(np.flatnonzero(missing.ravel())[0])
        raise ValueError(
            f"y (the class labels) contains {int(missing.sum())} missing value(s) (NaN or None; the first at "
            f"sample {first}). Drop those samples or give them a label before fitting."
        )


# -- progress ----------------------------------------------------------------------------------------
def format_seconds(s):
    """``mm:ss`` or ``h:mm:ss`` (tqdm's format); ``?`` when unknown."""
    if s is None or s != s or s in (float("inf"), float("-inf")):
        return "?"
    return tqdm.format_interval(int(round(s)))


def progress_bar(total, label="", initial=0, unit="it", enabled=True, file=None):
    """The progress bar of knnweights' long loops: a :class:`tqdm.tqdm` with the package's defaults.

    Items done out of ``total``, elapsed time, and the time left estimated from the items run in
    this call (``initial`` ones, read from a store, count as done but not in the rate).  On a
    terminal it redraws at most five times a second; elsewhere (a CI log, a file) at most every
    30 seconds, so logs stay short.

    Parameters
    ----------
    total : int
        Items to account for.
    label : str, default=""
        Printed before the bar.
    initial : int, default=0
        Items already done (read from a store).
    unit : str, default="it"
        Name of an item (``"cells"``).
    enabled : bool or None, default=True
        ``False``: print nothing; ``None``: only on a terminal.
    file : file-like, default=sys.stderr
        Where the bar is written.

    Returns
    -------
    tqdm.tqdm
        Call ``update(n)`` as items finish and ``close()`` at the end (or use it as a context manager).
    """
    stream = sys.stderr if file is None else file
    tty = bool(getattr(stream, "isatty", lambda: False)())
    disable = (not tty) if enabled is None else not enabled
    return tqdm(total=int(total), desc=label or None, initial=int(initial), unit=unit, file=stream,
                disable=disable or int(total) <= 0, mininterval=0.2 if tty else 30.0, dynamic_ncols=tty,
                ascii=not tty, leave=True)
