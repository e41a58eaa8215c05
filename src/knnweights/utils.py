"""Helpers shared across knnweights: input validation, the progress bar, durations.

Each validation check raises one ``ValueError`` whose message names the column (or sample) at
fault, so that a user of a DataFrame sees which gene or measurement to fix.
"""

import sys
import time

import numpy as np

__all__ = ["check_finite_columns", "check_numeric_columns", "check_target", "Progress", "format_seconds"]


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
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown."""
    if s is None or s != s or s in (float("inf"), float("-inf")):
        return "?"
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """The one progress bar of knnweights: items done out of ``total``, elapsed, and the time left
    estimated from the items computed so far.

    On a terminal it redraws one line (``\\r``) at most five times a second; on anything else
    (a CI log, a file) it writes one plain line each time another tenth is done, so logs stay
    readable.

    Parameters
    ----------
    total : int
        Items to account for (those read from a store count as done at the start).
    label : str
        Printed before the bar.
    initial : int, default=0
        Items already done (read from the store).
    stream : file, default=sys.stderr
    tty : bool, optional
        Redraw in place; default: ``stream.isatty()``.
    clock : callable, default=time.monotonic
    unit : str, default=""
        Printed after the counts (``"cells"``).
    enabled : bool or None, default=True
        ``False``: print nothing; ``None``: only on a terminal.
    """

    width = 24

    def __init__(self, total, label="", initial=0, stream=None, tty=None, clock=time.monotonic, unit="",
                 enabled=True):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else bool(tty)
        if enabled is None:
            enabled = self.tty
        self.unit = f" {unit}" if unit else ""
        self.total, self.done, self.start = (int(total) if enabled else 0), int(initial), int(initial)
        self.label = label
        self.clock = clock
        self.t0 = clock()
        self._last_draw = -1.0
        self._last_tenth = self._tenth()
        self._closed = False
        if self.total > 0 and self.tty:
            self._draw()

    def _tenth(self):
        return 10 * self.done // self.total if self.total else 10

    def line(self):
        """The text of the bar now."""
        el = self.clock() - self.t0
        ran = self.done - self.start
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        fill = int(round(self.width * frac))
        bar = "#" * fill + "." * (self.width - fill)
        if self.done >= self.total:
            tail = f"{format_seconds(el)} elapsed"
        else:
            left = (self.total - self.done) * el / ran if ran > 0 else float("nan")
            tail = f"{format_seconds(el)} elapsed, ~{format_seconds(left)} left"
        head = f"{self.label}: " if self.label else ""
        return f"{head}[{bar}] {self.done}/{self.total}{self.unit} ({100 * frac:3.0f}%) {tail}"

    def _draw(self):
        self.stream.write("\r" + self.line() + "  ")
        self.stream.flush()

    def update(self, n=1):
        """``n`` more cells done."""
        if self.total <= 0 or self._closed:
            return
        self.done = min(self.total, self.done + int(n))
        if self.tty:
            now = self.clock()
            if now - self._last_draw >= 0.2 or self.done >= self.total:
                self._last_draw = now
                self._draw()
        else:
            tenth = self._tenth()
            if tenth > self._last_tenth:
                self._last_tenth = tenth
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def close(self):
        """Finish the line (a terminal) or write the last line if it was not written."""
        if self._closed or self.total <= 0:
            self._closed = True
            return
        self._closed = True
        if self.tty:
            self._draw()
            self.stream.write("\n")
        elif self._last_tenth < 10 and self.done > self.start:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
