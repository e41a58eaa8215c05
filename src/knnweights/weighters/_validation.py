"""The training-data checks every estimator's ``fit`` runs, weighters and classifiers alike.

One sequence, :func:`validate_training_data`, so that the same bad input gives the same
error from every estimator: a missing ``y``, a non-numeric column or a non-finite value
(named by column), a missing label, scikit-learn's shape checks, then values whose squared
differences would overflow or underflow.  :func:`encode_classes` turns class labels into
codes with the same errors (a continuous target, too few classes or samples per class,
as the method needs); :func:`validate_continuous_fit_data` is the sequence for a
continuous target.
"""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import column_or_1d, validate_data

from ..utils import check_finite_columns, check_numeric_columns, check_target, column_label, format_label

__all__ = ["CONTINUOUS_TARGET_METHODS", "check_scale", "encode_classes", "is_continuous_target",
           "refuse_continuous_target", "require_y", "validate_continuous_fit_data", "validate_query_data",
           "validate_training_data"]

#: the weighters with a definition for a continuous target (the error below names them)
CONTINUOUS_TARGET_METHODS = ("Relief", "ReliefF", "SURF", "MultiSURF", "IRelief", "MLKRDiagonal")


def is_continuous_target(y, target="auto"):
    """Whether ``y`` is treated as a continuous target.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The target.
    target : {"auto", "classes", "continuous"}, default="auto"
        ``"auto"``: continuous when scikit-learn's ``type_of_target`` says ``"continuous"``
        (floats that are not all integers); the other two force the answer.

    Returns
    -------
    bool
        ``True`` for a continuous target.
    """
    if target == "continuous":
        return True
    if target == "classes":
        return False
    try:
        return type_of_target(y) == "continuous"
    except (ValueError, TypeError):  # NaN, None, ragged...: the class-label validation explains it
        return False


def refuse_continuous_target(estimator, y):
    """Raise a ``ValueError`` naming the methods that take a continuous target when ``y`` is one.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted, defined for class labels only (named in the message).
    y : array-like of shape (n_samples,)
        The target; continuous as :func:`sklearn.utils.multiclass.type_of_target` decides.
    """
    try:
        kind = type_of_target(y)
    except (ValueError, TypeError):
        return  # sklearn's own check explains it
    if kind.startswith("continuous"):
        name = type(estimator).__name__
        hint = (" (target_type='continuous' forces it, target_type='classes' refuses it)"
                if hasattr(estimator, "target_type") else "")
        raise ValueError(
            f"{name} got a continuous target y ({np.unique(np.asarray(y)).size} distinct float values) but is "
            f"defined for class labels only{hint}. The methods with a continuous-target definition are: "
            f"{', '.join(CONTINUOUS_TARGET_METHODS)} (and the regressors KNNRegressor, WeightedKNNRegressor); "
            "or give y as class labels (integers or strings)."
        )


def check_scale(X, names=None):
    """Refuse data whose squared differences would overflow, or all underflow to zero.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated floating-point data.
    names : array-like of str, default=None
        Column names for the message (``feature_names_in_``).
    """
    amax = float(np.max(np.abs(X))) if X.size else 0.0
    log_limit = 300.0 if X.dtype == np.float64 else 36.0
    if amax > 0 and 2 * np.log10(2.0 * amax) + np.log10(X.shape[0] * X.shape[1]) >= log_limit:
        j = int(np.argmax(np.max(np.abs(X), axis=0)))
        raise ValueError(
            f"Input X has values up to {amax:.3g} (column {column_label(names, j)}): sums of squared differences "
            f"would overflow {X.dtype}. Rescale the features first, e.g. with sklearn.preprocessing.StandardScaler or "
            "MaxAbsScaler."
        )
    if 0 < amax < 1e-145:
        raise ValueError(
            f"Input X has no value larger than {amax:.3g} in magnitude: squared differences underflow to 0 in "
            f"{X.dtype}, so every distance would be 0. Rescale the features first, e.g. with "
            "sklearn.preprocessing.StandardScaler or MaxAbsScaler."
        )


def require_y(estimator, y):
    """Raise the ``ValueError`` of a supervised ``fit`` called without ``y``.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted (named in the message).
    y : array-like or None
        The target given to ``fit``.
    """
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is None: it learns "
                         "from the class labels (or target values) given with X.")


def validate_training_data(estimator, X, y, dtype=None, ensure_min_samples=2, y_numeric=False, allow_nan=False):
    """Validate the training data of ``estimator.fit``: ``(X, y)`` as arrays, or the error that names the problem.

    The checks, in order: ``y`` given; every column of ``X`` numeric and finite (``NaN``
    allowed with ``allow_nan``), named by column; no missing label; scikit-learn's
    ``validate_data`` (shapes, sample counts; sets ``n_features_in_`` and
    ``feature_names_in_``); values whose squared differences stay finite and non-zero.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        Class labels or target values.
    dtype : type or list of type, default=None
        Float dtypes ``X`` is kept in (the first is the conversion target); ``None``:
        ``[float64, float32]``.
    ensure_min_samples : int, default=2
        Fewest samples accepted.
    y_numeric : bool, default=False
        Convert ``y`` to a float array (a continuous target).
    allow_nan : bool, default=False
        Accept ``NaN`` in ``X`` (a method with its own missing-value rule).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The validated samples.
    y : ndarray of shape (n_samples,)
        The validated labels or targets.
    """
    require_y(estimator, y)
    check_numeric_columns(X)
    check_finite_columns(X, allow_nan=allow_nan)
    check_target(y)
    X, y = validate_data(estimator, X, y, dtype=[np.float64, np.float32] if dtype is None else dtype,
                         ensure_min_samples=ensure_min_samples, accept_sparse=False, y_numeric=y_numeric,
                         ensure_all_finite="allow-nan" if allow_nan else True)
    check_scale(X, getattr(estimator, "feature_names_in_", None))
    return X, y


def validate_query_data(estimator, X, dtype=None, allow_nan=False):
    """Validate the samples given to a fitted estimator (``transform``, ``predict``): the column
    checks of :func:`validate_training_data`, then scikit-learn's against the training data.

    Parameters
    ----------
    estimator : estimator
        The fitted estimator (its ``n_features_in_`` and ``feature_names_in_`` are checked).
    X : array-like or DataFrame of shape (n_queries, n_features)
        Query samples.
    dtype : type or list of type, default=None
        Float dtypes ``X`` is kept in; ``None``: ``[float64, float32]``.
    allow_nan : bool, default=False
        Accept ``NaN`` in ``X``.

    Returns
    -------
    X : ndarray of shape (n_queries, n_features)
        The validated samples.
    """
    check_numeric_columns(X)
    check_finite_columns(X, allow_nan=allow_nan)
    return validate_data(estimator, X, reset=False, dtype=[np.float64, np.float32] if dtype is None else dtype,
                         ensure_all_finite="allow-nan" if allow_nan else True)


def encode_classes(estimator, y, min_classes=1, min_class_size=1, n_samples=None):
    """Class codes ``0..K-1`` of the labels ``y``; sets ``estimator.classes_`` (sorted labels).

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted (named in the messages; gets ``classes_``).
    y : array-like of shape (n_samples,)
        Class labels (validated by :func:`validate_training_data`, or checked here when
        ``n_samples`` is given).
    min_classes : int, default=1
        Fewest classes the method needs (a margin method: 2, for misses).
    min_class_size : int, default=1
        Fewest samples per class the method needs (2: every sample has a hit).
    n_samples : int, default=None
        The number of samples of ``X`` when ``y`` has not been validated with it.

    Returns
    -------
    codes : ndarray of int64, shape (n_samples,)
        The index of each label in ``classes_``.
    """
    if n_samples is not None:
        check_target(y)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != n_samples:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n_samples}, "
                             f"{y.shape[0]}]")
    refuse_continuous_target(estimator, y)
    check_classification_targets(y)
    estimator.classes_, codes = np.unique(y, return_inverse=True)
    codes = codes.astype(np.int64).ravel()
    name = type(estimator).__name__
    if len(estimator.classes_) < min_classes:
        raise ValueError(
            f"{name} needs at least {min_classes} classes; y has {len(estimator.classes_)} class "
            f"({format_label(estimator.classes_[0])}). Feature weighting by margins needs samples of other classes "
            "(misses)."
        )
    counts = np.bincount(codes)
    small = np.flatnonzero(counts < min_class_size)
    if small.size:
        c = small[0]
        raise ValueError(
            f"{name} needs at least {min_class_size} samples per class (every sample needs a hit of its own "
            f"class), but class {format_label(estimator.classes_[c])} has {counts[c]} sample"
            f"{'s' if counts[c] != 1 else ''}. Remove or merge that class, or collect more samples."
        )
    return codes


def validate_continuous_fit_data(estimator, X, y):
    """Validate ``X`` and a continuous target ``y`` (:func:`validate_training_data` with at least 3
    samples and a numeric ``y`` that varies); forgets the classes of an earlier fit.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted (its ``_allow_nan`` says whether ``X`` may hold ``NaN``).
    X : array-like or DataFrame of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        The continuous target.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The validated samples.
    y : ndarray of float64, shape (n_samples,)
        The validated target.
    """
    X, y = validate_training_data(estimator, X, y, ensure_min_samples=3, y_numeric=True,
                                  allow_nan=bool(getattr(estimator, "_allow_nan", False)))
    y = np.asarray(y, dtype=np.float64)
    if not np.ptp(y) > 0:
        raise ValueError(f"{type(estimator).__name__}: the continuous target y is constant ({y[0]!r}); nothing to "
                         "relate the features to.")
    estimator.__dict__.pop("classes_", None)
    return X, y
