"""Reading a user's table (CSV, TSV, Parquet, Excel) into a numeric feature matrix and labels.

:func:`read_table` reads the file through pandas, choosing the reader by the file's
extension; :func:`load_table` then picks the target column, an optional id column,
drops the columns asked for, handles non-numeric columns (dropped with a message naming
them, or one-hot encoded) and missing values (median imputation, dropping the affected
features, or refusing), and checks the labels (no missing label is kept, at least two
classes).  Every problem raises :class:`DataError` with a one-line message that names the
file and the column, which the command line prints as it is (exit status 2).
"""

import difflib
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .exceptions import DataError
from .utils import check_survival_target, format_label, make_survival_target

__all__ = ["DataError", "UserData", "PlinkData", "BedSource", "read_table", "load_table", "fill_median",
           "count_like_features", "read_plink", "read_plink_covariates", "IMPUTE"]

#: the imputation choices of :func:`load_table` (``"keep"`` leaves NaN for a pipeline to fill)
IMPUTE = ("median", "drop-features", "none")

_EXCEL = (".xlsx", ".xlsm", ".xls", ".ods")
_PARQUET = (".parquet", ".pq")
_TSV = (".tsv", ".tab")
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip", ".zst")


@dataclass
class UserData:
    """A table made ready for the weighters.

    Parameters
    ----------
    X : pandas.DataFrame of float64, shape (n_samples, n_features)
        The numeric features, named by their columns (one-hot columns as ``col=value``).
    y : numpy.ndarray, shape (n_samples,)
        The labels as read (strings stay strings).
    ids : pandas.Series or None
        The id column, when one was given.
    name : str
        The file's stem (the dataset name in reports).
    messages : list of str
        What was done to the table (columns dropped, values imputed), one line each.
    continuous : bool, default=False
        ``y`` is a continuous target (float64), not class labels.
    survival : bool, default=False
        ``y`` is a survival outcome: a structured array with fields ``event`` (bool) and
        ``time`` (float64).
    covariates : pandas.DataFrame or None
        The covariate columns (``load_table(covariates=...)``), not features, one row per sample of ``X``.
    """

    X: object
    y: np.ndarray
    ids: object = None
    name: str = "data"
    messages: list = field(default_factory=list)
    continuous: bool = False
    covariates: object = None
    survival: bool = False

    @property
    def feature_names(self):
        """Column names of ``X`` as a list of str."""
        return [str(c) for c in self.X.columns]


def _suffixes(path):
    low = os.path.basename(os.fspath(path)).lower()
    for c in _COMPRESSED:
        if low.endswith(c):
            low = low[: -len(c)]
            break
    return os.path.splitext(low)[1]


def _stem(path):
    base = os.path.basename(os.fspath(path))
    for _ in range(2):
        root, ext = os.path.splitext(base)
        if ext.lower() in (*_COMPRESSED, ".csv", ".tsv", ".tab", ".txt", *_PARQUET, *_EXCEL):
            base = root
    return base or "data"


def read_table(path, sheet=None, sep=None):
    """Read a CSV / TSV / Parquet / Excel file into a DataFrame.

    Parameters
    ----------
    path : str or path-like
        ``.csv`` (comma; other delimiters are sniffed), ``.tsv`` / ``.tab`` (tab),
        ``.txt`` (sniffed), ``.parquet`` / ``.pq`` (needs ``pyarrow`` or
        ``fastparquet``), ``.xlsx`` / ``.xls`` / ``.ods`` (needs ``openpyxl`` /
        ``xlrd`` / ``odfpy``); text files may be compressed (``.gz``, ``.bz2``,
        ``.xz``, ``.zip``, ``.zst``).
    sheet : str or int, optional
        Excel sheet (default: the first).
    sep : str, optional
        Delimiter of a text file (default: by extension, else sniffed).

    Returns
    -------
    pandas.DataFrame
        The table, its column names as str.

    Raises
    ------
    DataError
        Missing or unreadable file, a missing optional reader, an empty table.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise DataError(f"{path}: no such file.")
    if os.path.isdir(path):
        raise DataError(f"{path}: is a folder, not a data file.")
    ext = _suffixes(path)
    try:
        if ext in _PARQUET:
            df = pd.read_parquet(path)
        elif ext in _EXCEL:
            df = pd.read_excel(path, sheet_name=0 if sheet is None else sheet)
        else:
            if sep is None:
                sep = "\t" if ext in _TSV else ("," if ext == ".csv" else None)
            df = pd.read_csv(path, sep=sep, engine="python" if sep is None else "c")
    except ImportError as exc:
        pkg = "pyarrow" if ext in _PARQUET else "openpyxl"
        raise DataError(f"{path}: reading {ext} files needs an extra package ({exc}); "
                        f"try: pip install 'knnweights[files]' (or pip install {pkg})") from None
    except (UnicodeDecodeError, ValueError, OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise DataError(f"{path}: cannot read it as a {ext.lstrip('.') or 'text'} table ({msg}).") from None
    except Exception as exc:  # noqa: BLE001 - third-party readers raise their own types; one line for the user
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise DataError(f"{path}: cannot read it ({type(exc).__name__}: {msg}).") from None
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise DataError(f"{path}: the table is empty ({df.shape[0]} rows, {df.shape[1]} columns).")
    df.columns = [str(c) for c in df.columns]
    dup = df.columns[df.columns.duplicated()].unique().tolist()
    if dup:
        raise DataError(f"{path}: duplicate column name(s) {_names(dup)}.")
    return df


def _names(cols, limit=8):
    cols = [str(c) for c in cols]
    shown = ", ".join(repr(c) for c in cols[:limit])
    return shown + (f" and {len(cols) - limit} more" if len(cols) > limit else "")


def _column(df, name, what, path):
    if name in df.columns:
        return name
    close = difflib.get_close_matches(str(name), [str(c) for c in df.columns], n=3, cutoff=0.6)
    hint = f"; did you mean {_names(close)}?" if close else f"; the columns are {_names(df.columns, 6)}."
    raise DataError(f"{path}: no {what} column {name!r}{hint}")


def _numeric(series):
    """The column as float64 when every non-missing value is a number, else None."""
    if pd.api.types.is_bool_dtype(series):
        return series.astype(np.float64)
    if pd.api.types.is_numeric_dtype(series):
        return series.astype(np.float64)
    conv = pd.to_numeric(series, errors="coerce")
    if conv.notna().sum() == series.notna().sum():
        return conv.astype(np.float64)
    return None


def fill_median(X):
    """``X`` with each column's missing values set to that column's median.

    Parameters
    ----------
    X : pandas.DataFrame
        Numeric features.

    Returns
    -------
    pandas.DataFrame
        ``X`` itself when nothing is missing, else a filled copy.
    """
    return X.fillna(X.median()) if X.isna().to_numpy().any() else X


def load_table(path, target, *, id_col=None, drop=(), one_hot=False, impute="median", min_class_size=2,
               sheet=None, sep=None, target_type="classes", covariates=(), time=None, event=None):
    """Read a user's file and make it ready for the weighters.

    Parameters
    ----------
    path : str or path-like
        A file :func:`read_table` reads.
    target : str or None
        The label column (any type: strings stay strings).  Rows without a label are
        dropped (with a message).  ``None`` with ``target_type="survival"``.
    id_col : str, optional
        A sample-id column, kept apart (not a feature).
    drop : sequence of str
        Columns to leave out.
    covariates : sequence of str, default=()
        Covariate columns: not features, returned as ``UserData.covariates`` (rows as ``X``'s).
    one_hot : bool, default=False
        Encode non-numeric columns as one 0/1 column per value (``col=value``) instead
        of dropping them.
    impute : {"median", "drop-features", "none", "keep"}, default="median"
        Missing feature values: the column's median; drop every feature with a missing
        value; refuse (a :class:`DataError` naming the first such column); ``"keep"``
        leaves NaN (for a pipeline that imputes inside cross-validation).  Columns with
        no value at all are dropped in every mode but ``"none"``.
    min_class_size : int, default=2
        Every class needs at least this many rows (the Relief family needs a nearest
        hit of the same class).
    sheet, sep : str, optional
        Passed to :func:`read_table`.
    target_type : {"classes", "auto", "continuous"}, default="classes"
        ``"classes"``: the target holds class labels (non-integer numbers are refused);
        ``"auto"``: a numeric target with non-integer values is continuous (scikit-learn's
        ``type_of_target``), anything else class labels; ``"continuous"``: a numeric
        target (``UserData.continuous`` is then True and ``y`` float64); ``"survival"``: a
        censored outcome from the columns ``time`` and ``event`` (``UserData.survival`` is
        then True and ``y`` a structured array with fields ``event`` and ``time``).
    time, event : str, optional
        With ``target_type="survival"``: the column of event or censoring times (numbers,
        finite, ``>= 0``) and the column saying whether the event was observed (bool, 0 / 1, or
        the words true / false, yes / no).  Rows missing either are dropped (with a message).

    Returns
    -------
    UserData
        The features, the labels and what was done to the table.

    Raises
    ------
    DataError
        With a one-line message naming the file and the column.
    """
    if impute not in (*IMPUTE, "keep"):
        raise ValueError(f"impute must be one of {', '.join(IMPUTE)} or 'keep'; got {impute!r}.")
    path = os.fspath(path)
    if target_type not in ("classes", "auto", "continuous", "survival"):
        raise ValueError(f"target_type must be 'classes', 'auto', 'continuous' or 'survival'; got {target_type!r}.")
    survival = target_type == "survival"
    if survival and (target is not None or time is None or event is None):
        raise ValueError("target_type='survival' takes the outcome from time=COL and event=COL (and target=None).")
    if not survival and (time is not None or event is not None):
        raise ValueError("time= and event= are the columns of a survival outcome: use target_type='survival'.")
    df = read_table(path, sheet=sheet, sep=sep)
    msgs = []
    outcome_extra = []
    if survival:
        time_col, event_col = _column(df, time, "time", path), _column(df, event, "event", path)
        if time_col == event_col:
            raise DataError(f"{path}: the time and event columns are both {time_col!r}.")
        missing = df[[time_col, event_col]].isna().any(axis=1).to_numpy()
        if missing.all():
            raise DataError(f"{path}: no row has both a time ({time_col!r}) and an event ({event_col!r}) value.")
        if missing.any():
            msgs.append(f"dropped {int(missing.sum())} row(s) with no value in the time or event column")
            df = df.loc[~missing].reset_index(drop=True)
        target, outcome_extra = time_col, [event_col]
    target = _column(df, target, "target", path)
    y = df[target]
    ids = None
    if id_col is not None:
        id_col = _column(df, id_col, "id", path)
        if id_col in (target, *outcome_extra):
            raise DataError(f"{path}: the id column {id_col!r} is also an outcome column.")
        ids = df[id_col]
    dropped = [_column(df, c, "--drop", path) for c in (drop or ())]
    for c in (target, *outcome_extra):
        if c in dropped:
            raise DataError(f"{path}: --drop names the outcome column {c!r}.")
    cov_cols = list(dict.fromkeys(_column(df, c, "covariate", path) for c in (covariates or ())))
    if any(c in cov_cols for c in (target, *outcome_extra)) or (id_col is not None and id_col in cov_cols):
        raise DataError(f"{path}: a covariate column is also an outcome or id column.")
    missing_y = y.isna().to_numpy()
    if missing_y.all():
        raise DataError(f"{path}: the target column {target!r} has no values.")
    if missing_y.any():
        msgs.append(f"dropped {int(missing_y.sum())} row(s) with no value in the target column {target!r}")
        df = df.loc[~missing_y].reset_index(drop=True)
        y = df[target]
        ids = None if ids is None else df[id_col]
    feats = df.drop(columns=[c for c in dict.fromkeys([target, *outcome_extra, id_col, *dropped, *cov_cols])
                             if c is not None])
    cov_frame = df[cov_cols].reset_index(drop=True) if cov_cols else None
    if cov_cols:
        msgs.append(f"covariate column(s) {_names(cov_cols)} kept apart (not features)")
    if dropped:
        msgs.append(f"dropped column(s) {_names(dropped)} (--drop)")

    numeric, text = {}, []
    for c in feats.columns:
        v = _numeric(feats[c])
        if v is None:
            text.append(c)
        else:
            numeric[c] = v
    if text and one_hot:
        parts = []
        for c in text:
            parts.append(pd.get_dummies(feats[c].astype("string"), prefix=c, prefix_sep="=", dtype=np.float64))
        enc = pd.concat(parts, axis=1)
        msgs.append(f"one-hot encoded non-numeric column(s) {_names(text)} into {enc.shape[1]} columns")
    elif text:
        enc = None
        msgs.append(f"dropped non-numeric column(s) {_names(text)} (use --one-hot to encode them, "
                    "--drop to silence this)")
    else:
        enc = None
    X = pd.DataFrame(numeric, index=feats.index)
    if enc is not None:
        X = pd.concat([X, enc], axis=1)
    if X.shape[1] == 0:
        raise DataError(f"{path}: no numeric feature column is left besides the target {target!r}.")
    inf = np.isinf(X.to_numpy())
    if inf.any():
        raise DataError(f"{path}: column {X.columns[np.flatnonzero(inf.any(axis=0))[0]]!r} holds infinite values.")

    nan = X.isna().to_numpy()
    if nan.any():
        cols = X.columns[nan.any(axis=0)]
        empty = X.columns[nan.all(axis=0)]
        if impute == "none":
            c = cols[0]
            raise DataError(f"{path}: column {c!r} has {int(X[c].isna().sum())} missing value(s) "
                            f"({len(cols)} column(s) have some); use --impute median or drop-features.")
        if len(empty):
            X = X.drop(columns=empty)
            msgs.append(f"dropped column(s) {_names(empty)} with no value at all")
            cols = cols.difference(empty, sort=False)
        if impute == "drop-features" and len(cols):
            X = X.drop(columns=cols)
            msgs.append(f"dropped {len(cols)} feature(s) with missing values ({_names(cols, 5)})")
        elif impute == "median" and len(cols):
            n_missing = int(X[cols].isna().to_numpy().sum())
            X[cols] = fill_median(X[cols])
            msgs.append(f"filled {n_missing} missing value(s) in {len(cols)} column(s) with the column median")
        elif impute == "keep" and len(cols):
            n_missing = int(X[cols].isna().to_numpy().sum())
            msgs.append(f"{n_missing} missing value(s) in {len(cols)} column(s), imputed by the median "
                        "of each training part")
        if X.shape[1] == 0:
            raise DataError(f"{path}: every feature has missing values; use --impute median.")

    const = int((X.nunique(dropna=True) <= 1).sum())
    if const:
        msgs.append(f"{const} constant feature(s) kept (they carry no information and rank last)")

    if survival:
        y = _survival_outcome(df[target], df[outcome_extra[0]], path)
        n_ev = int(y["event"].sum())
        msgs.append(f"survival outcome: time {target!r}, event {outcome_extra[0]!r} ({n_ev} event(s), "
                    f"{y.size - n_ev} censored)")
        return UserData(X=X.astype(np.float64), y=y, ids=ids, name=_stem(path), messages=msgs, covariates=cov_frame,
                        survival=True)
    yv = y.to_numpy()
    continuous = target_type == "continuous" or (
        target_type == "auto" and yv.dtype.kind == "f" and not np.all(yv == np.round(yv)))
    if continuous:
        yc = pd.to_numeric(pd.Series(yv), errors="coerce").to_numpy(dtype=np.float64)
        if np.isnan(yc).any():
            bad = yv[np.flatnonzero(np.isnan(yc))[0]]
            raise DataError(f"{path}: the target column {target!r} is not numeric (value {bad!r}); a continuous "
                            "target needs numbers.")
        if np.unique(yc).size < 2:
            raise DataError(f"{path}: the target column {target!r} is constant; nothing to relate the features to.")
        msgs.append(f"continuous target {target!r} ({np.unique(yc).size} distinct values, "
                    f"{yc.min():.4g} to {yc.max():.4g})")
        return UserData(X=X.astype(np.float64), y=yc, ids=ids, name=_stem(path), messages=msgs, continuous=True,
                        covariates=cov_frame)
    if yv.dtype.kind == "f" and not np.all(yv == np.round(yv)):
        raise DataError(f"{path}: the target column {target!r} holds non-integer numbers ({len(np.unique(yv))} "
                        "distinct values); it must hold class labels (or use --target-type continuous).")
    classes, counts = np.unique(yv.astype(str) if yv.dtype == object else yv, return_counts=True)
    if classes.size < 2:
        raise DataError(f"{path}: the target column {target!r} has a single class ({format_label(classes[0])}); "
                        "a classification needs at least two.")
    small = classes[counts < min_class_size]
    if small.size:
        raise DataError(f"{path}: class {format_label(small[0])} of the target column {target!r} has "
                        f"{int(counts[counts < min_class_size][0])} row(s); every class needs at least "
                        f"{min_class_size}.")
    if yv.dtype == object:
        # mixed labels (numbers and strings) as read by pandas: compare them as strings
        kinds = {type(v) for v in yv}
        if len(kinds) > 1:
            yv = yv.astype(str)
    return UserData(X=X.astype(np.float64), y=yv, ids=ids, name=_stem(path), messages=msgs, covariates=cov_frame)


_EVENT_WORDS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


def _survival_outcome(time, event, path):
    """The structured survival outcome of a table's time and event columns, or a :class:`DataError`."""
    t = pd.to_numeric(time, errors="coerce")
    if t.isna().any():
        bad = time[t.isna()].iloc[0]
        raise DataError(f"{path}: the time column {time.name!r} is not numeric (value {bad!r}).")
    if pd.api.types.is_bool_dtype(event) or pd.api.types.is_numeric_dtype(event):
        ev = event.to_numpy()
    else:
        words = event.astype(str).str.strip().str.lower()
        unknown = ~words.isin(list(_EVENT_WORDS))
        if unknown.any():
            raise DataError(f"{path}: the event column {event.name!r} must be true / false, yes / no or 1 / 0; "
                            f"got {event[unknown].iloc[0]!r}.")
        ev = words.map(_EVENT_WORDS).to_numpy(dtype=bool)
    try:
        y = make_survival_target(ev, t.to_numpy(dtype=np.float64))
        check_survival_target(y, path)
    except ValueError as exc:
        msg = str(exc).replace("make_survival_target:", f"{path}:")
        msg = msg.replace("'event' field", f"event column {event.name!r}").replace("'time' field",
                                                                                  f"time column {time.name!r}")
        raise DataError(msg) from None
    return y


def count_like_features(X, skew_limit=1.0, share=0.5):
    """Whether ``X`` looks like counts (expression, abundances): non-negative and strongly right-skewed.

    True when every value is ``>= 0`` and at least ``share`` of the non-constant features
    have a sample skewness above ``skew_limit``; such features are usually analysed on a
    log scale (``log2(x + 1)``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The features (NaN ignored).
    skew_limit : float, default=1.0
        The skewness above which a feature counts as right-skewed.
    share : float, default=0.5
        The share of non-constant features that must be right-skewed.

    Returns
    -------
    (bool, float, int)
        The verdict, the median skewness of the non-constant features and how many of them
        exceed ``skew_limit``.
    """
    A = np.asarray(X, dtype=np.float64)
    if A.size == 0 or np.nanmin(A) < 0:
        return False, 0.0, 0
    varying = np.nanmax(A, axis=0) > np.nanmin(A, axis=0)
    if not varying.any():
        return False, 0.0, 0
    sk = stats.skew(A[:, varying], axis=0, nan_policy="omit")
    sk = np.asarray(sk, dtype=np.float64)
    n_skewed = int(np.sum(sk > skew_limit))
    return bool(n_skewed >= share * sk.size), float(np.median(sk)), n_skewed


# -- PLINK genotypes ---------------------------------------------------------------------------------------------------
@dataclass
class PlinkData:
    """Genotypes of a PLINK ``.bed`` / ``.bim`` / ``.fam`` fileset, ready for the Relief family.

    Parameters
    ----------
    X : numpy.ndarray of int8, shape (n_samples, n_snps), or :class:`BedSource`
        Allele counts 0/1/2 (bed-reader's ``count_A1`` convention), -127 where unknown; with
        ``lazy=True`` the file itself, read by column range where the work runs.
    y : numpy.ndarray, shape (n_samples,)
        The phenotype (from the ``.fam`` file or the ``pheno`` file; samples without one are left out).
    snps : list of str
        The SNP ids of the ``.bim`` file.
    samples : list of str
        The individual ids (IID) kept.
    name : str
        The fileset's stem.
    messages : list of str
        What was done (samples left out), one line each.
    covariates : pandas.DataFrame or None
        The covariates of the samples kept (``read_plink(covar=...)``), one row each in order.
    """

    X: object
    y: np.ndarray
    snps: list
    samples: list
    name: str = "study"
    messages: list = field(default_factory=list)
    covariates: object = None

    @property
    def feature_names(self):
        """The SNP ids, the names of the columns of ``X``."""
        return list(self.snps)


class BedSource:
    """The genotypes of a PLINK ``.bed`` file, read by column range (bed-reader).

    Picklable: a dask worker opens the file itself and reads only its own columns.

    Parameters
    ----------
    path : str or path-like
        The ``.bed`` file.
    shape : tuple of int
        ``(individuals, SNPs)`` of the whole file.
    rows : array-like of int, optional
        The individuals kept, in order (default: all).

    Attributes
    ----------
    shape : tuple of int
        ``(rows kept, SNPs)``.
    dtype : numpy.dtype
        ``int8``, the dtype that :meth:`read` returns.
    """

    def __init__(self, path, shape, rows=None):
        self.path = str(path)
        self.file_shape = tuple(int(s) for s in shape)
        self.rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        n = self.file_shape[0] if rows is None else self.rows.size
        self.shape = (n, self.file_shape[1])
        self.dtype = np.dtype(np.int8)
        self.ndim = 2

    def read(self, f0, f1=None):
        """Columns ``f0:f1`` (or the column indices ``f0``) as ``int8``, -127 where unknown.

        Parameters
        ----------
        f0 : int or array-like of int
            The first column, or the columns' indices when ``f1`` is ``None``.
        f1 : int, optional
            The column after the last.

        Returns
        -------
        numpy.ndarray of int8, shape (n_rows, n_columns)
            The genotypes of the kept rows, C-ordered.
        """
        from bed_reader import open_bed  # optional: bed-reader

        cols = slice(f0, f1) if f1 is not None else np.asarray(f0, dtype=np.int64)
        with open_bed(self.path, iid_count=self.file_shape[0], sid_count=self.file_shape[1]) as bed:
            r = slice(None) if self.rows is None else self.rows
            return bed.read(index=np.s_[r, cols], dtype="int8", order="C")

    def __getitem__(self, key):
        """``source[:, cols]``: those columns read into memory (as TuRF's rounds slice a matrix)."""
        rows, cols = key
        return self.read(np.arange(self.shape[1])[cols])[rows]


#: phenotype values PLINK reads as "unknown" ("0" only in the 1/2 case-control coding)
_PHENO_MISSING = {"-9", "0", "na", "nan", ""}


def _plink_prefix(path):
    p = os.fspath(path)
    for ext in (".bed", ".bim", ".fam"):
        if p.lower().endswith(ext):
            return p[: -len(ext)]
    return p


def _read_fid_file(path, what):
    """``(header, rows)`` of a PLINK sample file (whitespace-separated ``FID IID v1 v2 ...``; ``header``
    the first line's fields when it starts with ``FID`` or ``#FID``, else ``None``); ``what`` names the
    file in errors."""
    if not os.path.exists(path):
        raise DataError(f"{path}: no such {what} file.")
    with open(path) as f:
        lines = [ln.split() for ln in f if ln.strip()]
    if not lines:
        raise DataError(f"{path}: the {what} file is empty.")
    header = lines[0] if lines[0][0].upper() in ("FID", "#FID") else None
    return header, (lines[1:] if header else lines)


def _read_pheno_file(path, col):
    """``{(FID, IID): value}`` from a PLINK phenotype file (``FID IID v1 v2 ...``, an optional
    header line starting with ``FID``); ``col``: a header name or a 1-based index among the values."""
    header, rows = _read_fid_file(path, "phenotype")
    if col is None:
        j = 2
    elif header is not None and col in header:
        j = header.index(col)
    elif str(col).isdigit():
        if int(col) < 1:
            raise DataError(f"{path}: --pheno-col is 1-based (the first phenotype column is 1); got {col}.")
        j = 1 + int(col)
    else:
        names = header[2:] if header else []
        hint = difflib.get_close_matches(str(col), names, n=1)
        raise DataError(f"{path}: no phenotype column {col!r}" + (f"; did you mean {hint[0]!r}?" if hint else
                                                                  f" (columns: {', '.join(names) or 'none named'})."))
    out = {}
    for r in rows:
        if len(r) <= j:
            raise DataError(f"{path}: line for {r[:2]} has no column {j + 1}.")
        out[(r[0], r[1])] = r[j]
    return out


#: covariate values PLINK reads as "unknown" (its missing phenotype code and NA)
_COVAR_MISSING = {"-9", "na", "nan"}


def _covar_columns(path, header, width, names):
    """The value columns (positions in a line) that ``names`` (comma-separated; ``A-B`` a range of
    header names, as PLINK's ``--covar-name``) selects; all of them when ``names`` is ``None``."""
    labels = header[2:] if header is not None else [f"COV{k}" for k in range(1, width - 1)]
    if names is None:
        return list(range(2, 2 + len(labels))), labels
    cols = []
    for item in (t.strip() for t in str(names).split(",")):
        if not item:
            continue
        parts = [item] if item in labels else item.split("-") if item.count("-") == 1 else [item]
        for part in parts:
            if part not in labels:
                hint = difflib.get_close_matches(part, labels, n=1)
                raise DataError(f"{path}: no covariate column {part!r}" + (
                    f"; did you mean {hint[0]!r}?" if hint else f" (columns: {', '.join(labels) or 'none'})."))
        a, b = labels.index(parts[0]), labels.index(parts[-1])
        if b < a:
            raise DataError(f"{path}: the covariate range {item!r} runs backwards; write it first-last.")
        cols.extend(c for c in range(a, b + 1) if c not in cols)
    if not cols:
        raise DataError(f"{path}: --covar-name selects no column.")
    return [c + 2 for c in cols], [labels[c] for c in cols]


def read_plink_covariates(path, samples, names=None):
    """The covariates of the given samples from a PLINK covariate file, matched by ``(FID, IID)``.

    The file (PLINK's ``--covar``): whitespace-separated, one line per sample, ``FID IID c1 c2
    ...``, an optional header line starting with ``FID`` (or ``#FID``) that names the columns
    (else they are ``COV1``, ``COV2``, ...).  Every value must be a number: an unknown one
    (``-9``, ``NA``) or text is an error naming the column and the sample, since the covariate
    adjustment takes no missing values (drop those samples from the fileset first, e.g.
    ``plink --remove``).

    Parameters
    ----------
    path : str or path-like
        The covariate file.
    samples : sequence of tuple of str
        ``(FID, IID)`` of each sample, in the order of the genotype rows.
    names : str, optional
        Comma-separated columns by header name (``PC1-PC10``: the columns from ``PC1`` to ``PC10``);
        default: all.

    Returns
    -------
    pandas.DataFrame of shape (n_samples, n_covariates)
        The covariates (float), indexed by IID, in the order of ``samples``.
    """
    path = os.fspath(path)
    header, rows = _read_fid_file(path, "covariate")
    width = len(header) if header is not None else len(rows[0]) if rows else 2
    if width < 3:
        raise DataError(f"{path}: no covariate column (a line is FID IID c1 c2 ...).")
    cols, labels = _covar_columns(path, header, width, names)
    table = {}
    for r in rows:
        if len(r) != width:
            raise DataError(f"{path}: the line of {' '.join(r[:2])} has {len(r)} fields, the file {width}.")
        table[(r[0], r[1])] = r
    absent = [s for s in samples if tuple(s) not in table]
    if absent:
        raise DataError(f"{path}: {len(absent)} sample(s) of the genotypes have no line, e.g. FID {absent[0][0]} "
                        f"IID {absent[0][1]}; add them, or drop them from the fileset (plink --remove).")
    values = np.empty((len(samples), len(cols)))
    for i, s in enumerate(samples):
        line = table[tuple(s)]
        for k, c in enumerate(cols):
            text = line[c]
            if text.lower() in _COVAR_MISSING:
                raise DataError(f"{path}: covariate {labels[k]!r} is unknown ({text}) for FID {s[0]} IID {s[1]}; "
                                "the adjustment takes no missing values: impute it, or drop that sample "
                                "(plink --remove).")
            try:
                values[i, k] = float(text)
            except ValueError:
                raise DataError(f"{path}: covariate {labels[k]!r} is not numeric ({text!r} for FID {s[0]} IID "
                                f"{s[1]}); PLINK covariates are numbers (code a category as 0/1 columns).") from None
            if not np.isfinite(values[i, k]):
                raise DataError(f"{path}: covariate {labels[k]!r} is not finite ({text}) for FID {s[0]} IID {s[1]}.")
    return pd.DataFrame(values, columns=labels, index=pd.Index([s[1] for s in samples], name="IID"))


def read_plink(path, pheno=None, pheno_col=None, lazy=False, covar=None, covar_name=None):
    """Read a PLINK 1 binary fileset (``prefix.bed``, ``.bim``, ``.fam``) as genotype bytes.

    Needs bed-reader (``pip install 'knnweights[genomics]'``).  The genotypes stay ``int8``
    (0/1/2, -127 unknown): the Relief family scores them without a float copy
    (:mod:`knnweights.engine.genotypes`; unknown values need ``missing="diff"``).

    Parameters
    ----------
    path : str or path-like
        The ``.bed`` file or the prefix.
    pheno : str, optional
        A PLINK phenotype file (``FID IID value ...``, optional ``FID IID name ...`` header);
        default: the ``.fam`` file's sixth column.
    pheno_col : str or int, optional
        The phenotype file's column, by header name or 1-based index (default: the first).
    lazy : bool, default=False
        Return the file (a :class:`BedSource`) instead of the
        matrix: each feature block (each dask worker's columns) is read where it is used.
    covar : str, optional
        A PLINK covariate file (:func:`read_plink_covariates`), read for the samples kept into
        ``covariates``.
    covar_name : str, optional
        Its columns (default: all).

    Returns
    -------
    PlinkData
        Samples without a phenotype (``-9``, ``NA``; ``0`` when the others are coded 1/2, as
        PLINK reads case/control) are left out (said in ``messages``).
    """
    try:
        from bed_reader import open_bed  # optional: bed-reader
    except ImportError as exc:
        raise DataError("reading PLINK files needs bed-reader: pip install 'knnweights[genomics]'") from exc

    prefix = _plink_prefix(path)
    bed = prefix + ".bed"
    for ext in (".bed", ".bim", ".fam"):
        if not os.path.exists(prefix + ext):
            raise DataError(f"{prefix + ext}: no such file (a PLINK fileset needs .bed, .bim and .fam).")
    try:
        with open_bed(bed) as b:
            fid, iid = [str(v) for v in b.fid], [str(v) for v in b.iid]
            snps = [str(v) for v in b.sid]
            shape = b.shape
            if pheno is None:
                values = [str(v) for v in b.pheno]
            else:
                table = _read_pheno_file(pheno, pheno_col)
                values = [table.get((f, i), "-9") for f, i in zip(fid, iid, strict=True)]
            low = [v.strip().lower() for v in values]
            # "0" is unknown only in PLINK's 1/2 case-control coding; a 0/1 phenotype keeps its zeros
            seen = {v for v in low if v not in _PHENO_MISSING or v == "0"}
            plink12 = seen <= {"0", "1", "2"} and "2" in seen
            keep = np.array([v not in _PHENO_MISSING or (v == "0" and not plink12) for v in low])
            messages = []
            if not keep.any():
                raise DataError(f"{pheno or prefix + '.fam'}: no sample has a phenotype (all -9, 0 or NA).")
            if not keep.all():
                messages.append(f"{int((~keep).sum())} sample(s) without a phenotype left out")
            rows = np.flatnonzero(keep)
            if lazy:
                X = BedSource(bed, shape, rows=None if keep.all() else rows)
            else:
                X = b.read(index=np.s_[rows if not keep.all() else slice(None), :], dtype="int8", order="C")
    except DataError:
        raise
    except (ValueError, OSError) as exc:  # a corrupt or mismatched fileset: bed-reader's words, one line
        raise DataError(f"{bed}: {exc}") from exc
    y = np.array([values[i] for i in rows])
    try:  # numeric labels as numbers (1/2 from a .fam file, or quantitative values)
        yf = y.astype(np.float64)
        y = yf.astype(np.int64) if np.all(yf == np.round(yf)) else yf
    except ValueError:
        pass
    cov = None
    if covar is not None:
        cov = read_plink_covariates(covar, [(fid[i], iid[i]) for i in rows], covar_name)
    elif covar_name is not None:
        raise DataError("covar_name selects columns of a covariate file: give covar too.")
    return PlinkData(X, y, snps, [iid[i] for i in rows], os.path.basename(prefix), messages, cov)
