"""Helpers shared across knnweights: input and parameter validation, and the progress bar.

Each input check raises one ``ValueError`` whose message names the column (or sample) at
fault, so that a user of a DataFrame sees which gene or measurement to fix.

Constructor parameters are declared once per estimator class, in ``_parameter_constraints``
(``{name: [constraint, ...]}``, scikit-learn's convention), and checked at ``fit`` by
:func:`validate_params`.  A constraint is an :class:`Interval`, :class:`StrOptions` or
:class:`HasMethods`, a type (its instances), ``None``, or one of the strings ``"boolean"``,
``"verbose"``, ``"random_state"`` and ``"array-like"``; a parameter declared
``"no_validation"`` is not checked.  (scikit-learn's own validation of the same form lives in a
private module, ``sklearn.utils._param_validation``, so the library keeps its own.)
"""

import numbers
import sys

import numpy as np
import scipy.sparse
from tqdm import tqdm

from .exceptions import InvalidParameterError

__all__ = ["SURVIVAL_FIELDS", "is_survival_target", "make_survival_target", "check_survival_target",
           "check_finite_columns", "check_numeric_columns", "check_target", "progress_bar", "format_label",
           "column_label", "column_names", "InvalidParameterError", "Interval", "StrOptions", "HasMethods",
           "validate_params", "fill_docstring"]


# -- docstrings -------------------------------------------------------------------------------------
def fill_docstring(**fragments):
    """Decorator: each docstring line that is only ``{name}`` becomes ``fragments[name]``, indented as that line.

    One text for what several functions document alike (the parameters of every plot's Axes, the
    arguments of every paper's ``figures``): the rendered docstring is whole, and the source says
    where the shared text goes.

    Parameters
    ----------
    **fragments : str
        Name -> text, its first line flush left and the lines under it indented relative to it (a
        numpydoc parameter: ``"name : type\n    Description."``).

    Returns
    -------
    callable
        The decorator: it fills the ``__doc__`` of a function or class and returns it.
    """
    def fill(obj):
        if obj.__doc__ is None:  # docstrings stripped (python -OO)
            return obj
        lines = []
        for line in obj.__doc__.split("\n"):
            key = line.strip()
            if key[:1] == "{" and key[-1:] == "}" and key[1:-1] in fragments:
                indent = line[:len(line) - len(line.lstrip())]
                lines.extend(indent + t if t else t for t in fragments[key[1:-1]].split("\n"))
            else:
                lines.append(line)
        obj.__doc__ = "\n".join(lines)
        return obj

    return fill


# -- input checks -----------------------------------------------------------------------------------
def format_label(c):
    """A class label as the user wrote it, for messages: ``repr`` of NumPy scalars as plain values.

    Parameters
    ----------
    c : object
        The label (a NumPy scalar is shown as its Python value).

    Returns
    -------
    str
        The label's ``repr``.
    """
    return repr(c.item() if hasattr(c, "item") else c)


def column_label(names, j):
    """Column ``j`` for messages: ``'name'`` of a named (DataFrame) column, else its position.

    Parameters
    ----------
    names : list of str or None
        :func:`column_names` of the input (``None`` for an unnamed array).
    j : int
        The column's position.

    Returns
    -------
    str
        The quoted name, or the position.
    """
    return f"{j}" if names is None else repr(str(names[j]))


def column_names(X):
    """The column names of a DataFrame ``X`` as strings, or ``None`` for input without names.

    Parameters
    ----------
    X : array-like
        The input; only a ``columns`` attribute is read.

    Returns
    -------
    list of str or None
        The names, or ``None``.
    """
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


#: the parameters of the column checks: ``{input}`` (the input and its name in the messages)
_column_check_doc = fill_docstring(
    input="""X : array-like of shape (n_samples, n_features)
    The input (a DataFrame, an array or nested lists).
what : str, default="X"
    The input's name in the message.""")


@_column_check_doc
def check_numeric_columns(X, what="X"):
    """Raise a ``ValueError`` naming the first column of ``X`` that holds a non-numeric value.

    DataFrame columns are named (``column 'batch' is not numeric (value 'B1')``), other
    inputs give the column's position.  Numeric and boolean columns are not inspected.

    Parameters
    ----------
    {input}
    """
    names = column_names(X)
    if names is not None:
        for j, dt in enumerate(getattr(X, "dtypes", [])):
            if getattr(dt, "kind", "O") in "biufc":
                continue
            bad = _first_non_numeric(np.asarray(X.iloc[:, j], dtype=object))
            if bad is not None:
                _raise_non_numeric(what, column_label(names, j), bad)
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
            _raise_non_numeric(what, column_label(None, j), bad)


def _raise_non_numeric(what, label, value):
    raise ValueError(
        f"Input {what}: column {label} is not numeric (value {value!r}). Drop it, or encode it (e.g. with "
        "sklearn.preprocessing.OneHotEncoder) before fitting: feature weights need numeric features."
    )


@_column_check_doc
def check_finite_columns(X, what="X", allow_nan=False):
    """Raise a ``ValueError`` naming the first column that holds NaN or infinity.

    A DataFrame's column is named (``NaN in column 'gene907' (position 907)``), other
    inputs give the position.  Non-numeric input is left to :func:`check_numeric_columns`.

    Parameters
    ----------
    {input}
    allow_nan : bool, default=False
        Refuse only infinity (NaN is left to the caller).
    """
    names = column_names(X)
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
            f"Input {what} contains {kind} in column {column_label(names, j)} ({int(bad[:, j].sum())} "
            f"value(s); {len(cols)} column(s) affected in all). Impute or drop the missing values, e.g. with "
            "sklearn.impute.SimpleImputer, before fitting: weights are not defined on NaN or inf."
        )


def check_target(y):
    """Raise a ``ValueError`` that says "y" when the labels hold a missing value (NaN or None).

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
        The labels (``None``: nothing to check).
    """
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


# -- constructor parameters --------------------------------------------------------------------------
class _Constraint:
    """One accepted kind of parameter value: ``is_satisfied_by(value)`` and a phrase for messages."""

    def __init__(self, test, text):
        self._test, self._text = test, text

    def is_satisfied_by(self, value):
        return bool(self._test(value))

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"<{type(self).__name__}: {self}>"


def _type_name(t):
    """``int`` / ``float`` for the number ABCs, the bare name of a builtin, else ``module.name``."""
    if t is numbers.Integral:
        return "int"
    if t is numbers.Real:
        return "float"
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _instances_of(t):
    return _Constraint(lambda v: isinstance(v, t), f"an instance of {_type_name(t)!r}")


def _one_of(constraints):
    """``"a"``, ``"a or b"``, ``"a, b or c"``: the phrases of several constraints."""
    texts = [str(c) for c in constraints]
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} or {texts[-1]}"


class _AnyOf(_Constraint):
    """Satisfied by a value that satisfies one of ``constraints``."""

    def __init__(self, constraints):
        super().__init__(lambda v: any(c.is_satisfied_by(v) for c in constraints), _one_of(constraints))


class Interval(_Constraint):
    """A parameter constraint: the numbers of one type between two bounds.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real}
        ``Integral``: integers only (Python and NumPy ints, and ``bool``); ``Real``: any
        real number, integers included.  NaN is never in an interval.
    left, right : int, float or None
        The bounds; ``None`` leaves that side unbounded (``-inf`` / ``inf``).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval: ``"left"`` is ``[left, right)``.
    """

    def __init__(self, type, left, right, *, closed):
        if type not in (numbers.Integral, numbers.Real):
            raise ValueError(f"type must be numbers.Integral or numbers.Real; got {type!r}.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither'; got {closed!r}.")
        bound_type = numbers.Integral if type is numbers.Integral else numbers.Real
        if any(b is not None and not isinstance(b, bound_type) for b in (left, right)):
            raise TypeError(f"the bounds of an interval of {_type_name(type)}s must be {_type_name(type)}s or None.")
        if left is not None and right is not None and right <= left:
            raise ValueError(f"right must be larger than left; got left={left}, right={right}.")
        self.type, self.left, self.right, self.closed = type, left, right, closed
        lo, hi = self._bounds_text()
        opening = "[" if closed in ("left", "both") else "("
        closing = "]" if closed in ("right", "both") else ")"
        kind = "an int" if type is numbers.Integral else "a float"
        super().__init__(self._contains, f"{kind} in the range {opening}{lo}, {hi}{closing}")

    def _bounds_text(self):
        """The bounds as messages print them: ``-inf`` / ``inf`` for none, floats for a real interval."""
        as_number = int if self.type is numbers.Integral else float
        return ("-inf" if self.left is None else as_number(self.left),
                "inf" if self.right is None else as_number(self.right))

    def _contains(self, value):
        if not isinstance(value, self.type) or value != value:  # value != value: NaN
            return False
        left = -np.inf if self.left is None else self.left
        right = np.inf if self.right is None else self.right
        above = value >= left if self.closed in ("left", "both") else value > left
        below = value <= right if self.closed in ("right", "both") else value < right
        return above and below


class StrOptions(_Constraint):
    """A parameter constraint: one string of a fixed set.

    Parameters
    ----------
    options : set of str
        The accepted strings.
    """

    def __init__(self, options):
        self.options = set(options)
        shown = ", ".join(repr(o) for o in sorted(self.options))
        super().__init__(lambda v: isinstance(v, str) and v in self.options, f"a str among {{{shown}}}")


class HasMethods(_Constraint):
    """A parameter constraint: an object with the given methods (an estimator, a splitter, ...).

    Parameters
    ----------
    methods : str or list of str
        The names of the methods the object must have (callable attributes).
    """

    def __init__(self, methods):
        self.methods = [methods] if isinstance(methods, str) else list(methods)
        names = [repr(m) for m in self.methods]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        super().__init__(lambda v: all(callable(getattr(v, m, None)) for m in self.methods),
                         f"an object implementing {listed}")


def _is_array_like(value):
    """A sequence or array that is not a scalar (a string is a scalar) nor a sparse matrix."""
    return (not scipy.sparse.issparse(value) and not np.isscalar(value)
            and any(hasattr(value, a) for a in ("__len__", "shape", "__array__")))


_NONE = _Constraint(lambda v: v is None, "None")
_BOOLEAN = _AnyOf([_instances_of(bool), _instances_of(np.bool_)])
#: the constraints named by a string in ``_parameter_constraints``
_NAMED = {
    "boolean": _BOOLEAN,
    "verbose": _AnyOf([Interval(numbers.Integral, 0, None, closed="left"), _instances_of(bool),
                       _instances_of(np.bool_)]),
    "random_state": _AnyOf([Interval(numbers.Integral, 0, 2**32 - 1, closed="both"),
                            _instances_of(np.random.RandomState), _NONE]),
    "array-like": _Constraint(_is_array_like, "an array-like"),
}


def _as_constraint(spec):
    """The constraint object of one entry of a ``_parameter_constraints`` list."""
    if isinstance(spec, _Constraint):
        return spec
    if spec is None:
        return _NONE
    if isinstance(spec, type):
        return _instances_of(spec)
    if isinstance(spec, str) and spec in _NAMED:
        return _NAMED[spec]
    raise ValueError(f"unknown parameter constraint {spec!r}")


def validate_params(estimator):
    """Check the constructor parameters of ``estimator`` against its class's constraints.

    The constraints are the ``_parameter_constraints`` dictionaries of the class and of its
    bases (a class's own entry for a parameter replaces a base's); a parameter without an
    entry, or declared ``"no_validation"``, is not checked.  Every estimator calls this at
    the start of ``fit``, so a bad value fails at once, naming the parameter and what it
    accepts.

    Parameters
    ----------
    estimator : estimator instance
        Any object with ``get_params(deep=False)``.

    Raises
    ------
    InvalidParameterError
        For the first parameter that satisfies none of its constraints, e.g. "The
        'n_neighbors' parameter of ReliefF must be an int in the range [1, inf). Got 0
        instead."
    """
    constraints = {}
    for klass in reversed(type(estimator).__mro__):
        constraints.update(vars(klass).get("_parameter_constraints", {}))
    for name, value in estimator.get_params(deep=False).items():
        specs = constraints.get(name)
        if specs is None or (isinstance(specs, str) and specs == "no_validation"):
            continue
        accepted = [_as_constraint(s) for s in specs]
        if not any(c.is_satisfied_by(value) for c in accepted):
            raise InvalidParameterError(f"The {name!r} parameter of {type(estimator).__name__} must be "
                                        f"{_one_of(accepted)}. Got {value!r} instead.")


# -- progress ----------------------------------------------------------------------------------------
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


# -- survival outcomes: the structured (event, time) array, scikit-survival's convention --------------------

#: the fields of a survival outcome, in scikit-survival's order
SURVIVAL_FIELDS = ("event", "time")


def _fields_text():
    return "a structured array with fields 'event' (bool) and 'time' (float), e.g. " \
           "knnweights.weighters.make_survival_target(event, time) or sksurv.util.Surv.from_arrays(event, time)"


def is_survival_target(y):
    """Whether ``y`` is a structured array (a survival outcome, or a malformed one).

    Parameters
    ----------
    y : object
        The outcome given to ``fit``.

    Returns
    -------
    bool
        ``True`` when ``y`` is a NumPy structured array (its fields checked by
        :func:`check_survival_target`).
    """
    dtype = getattr(y, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.names is not None


def make_survival_target(event, time):
    """A survival outcome from its two columns: a structured array with fields ``event`` and ``time``.

    Parameters
    ----------
    event : array-like of shape (n_samples,)
        Whether the event was observed (bool, or 0 / 1).
    time : array-like of shape (n_samples,)
        The time of the event, or of censoring.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        dtype ``[("event", bool), ("time", float64)]``.
    """
    event = np.asarray(event)
    time = np.asarray(time, dtype=np.float64)
    if event.shape != time.shape or event.ndim != 1:
        raise ValueError(f"event and time must be 1-D of the same length; got shapes {event.shape} and {time.shape}.")
    ev = _event_bool(event, "make_survival_target")
    y = np.empty(time.shape[0], dtype=[("event", bool), ("time", np.float64)])
    y["event"] = ev
    y["time"] = time
    return y


def _event_bool(event, name):
    if event.dtype == bool:
        return event
    if event.dtype.kind in "iuf":
        with np.errstate(invalid="ignore"):
            v = event.astype(np.float64)
        if np.isnan(v).any():
            raise ValueError(f"{name}: the survival outcome's 'event' field has missing values (NaN); each sample "
                             "needs event True / False.")
        if not np.all((v == 0) | (v == 1)):
            bad = v[~((v == 0) | (v == 1))][0]
            raise ValueError(f"{name}: the survival outcome's 'event' field must be boolean (or 0 / 1); got "
                             f"{float(bad):g}.")
        return v == 1
    raise ValueError(f"{name}: the survival outcome's 'event' field must be boolean (or 0 / 1); got dtype "
                     f"{event.dtype}.")


def check_survival_target(y, name="fit"):
    """Validate a survival outcome: ``(event, time)`` as a bool and a float64 array.

    The checks: a 1-D structured array with the fields ``event`` and ``time``; ``event``
    boolean (or 0 / 1) without missing values; ``time`` finite and ``>= 0`` (a time of 0 is an
    event or censoring at the origin, which the Nelson-Aalen estimate takes as it is); at least
    one event.

    Parameters
    ----------
    y : ndarray
        The survival outcome.
    name : str, default="fit"
        Who checks, for the messages.

    Returns
    -------
    event : ndarray of bool, shape (n_samples,)
    time : ndarray of float64, shape (n_samples,)

    Raises
    ------
    ValueError
        Naming the expected fields, or the value at fault.
    """
    if not is_survival_target(y):
        raise ValueError(f"{name}: a survival outcome must be {_fields_text()}; got "
                         f"{type(y).__name__}{' of dtype ' + str(y.dtype) if hasattr(y, 'dtype') else ''}.")
    names = y.dtype.names
    if set(SURVIVAL_FIELDS) - set(names):
        raise ValueError(f"{name}: a survival outcome must be {_fields_text()}; got the fields {list(names)}.")
    if y.ndim != 1:
        raise ValueError(f"{name}: a survival outcome must be 1-D (one entry per sample); got shape {y.shape}.")
    event = _event_bool(np.asarray(y["event"]), name)
    tv = np.asarray(y["time"])
    if tv.dtype.kind not in "iuf":
        raise ValueError(f"{name}: the survival outcome's 'time' field must be numeric; got dtype {tv.dtype}.")
    time = tv.astype(np.float64)
    if np.isnan(time).any():
        raise ValueError(f"{name}: the survival outcome's 'time' field has {int(np.isnan(time).sum())} missing "
                         "value(s) (NaN); drop those samples or give their times.")
    if not np.isfinite(time).all():
        raise ValueError(f"{name}: the survival outcome's 'time' field has infinite values; a censored sample "
                         "is given by its last follow-up time and event=False.")
    if (time < 0).any():
        raise ValueError(f"{name}: the survival outcome's 'time' field has negative values (smallest "
                         f"{time.min()!r}); times are measured from the origin, >= 0.")
    if not event.any():
        raise ValueError(f"{name}: the survival outcome has no event (every sample censored); nothing to "
                         "relate the features to.")
    return event, time
