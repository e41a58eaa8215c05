"""The weighter contract shared by every method: validation, weights, transform."""

import contextvars
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

__all__ = ["BaseWeighter", "ZeroWeightsWarning", "check_finite_columns", "check_numeric_columns", "check_target",
           "feature_ranking", "margin_gain", "warn_max_iter", "normalize_weights"]


class ZeroWeightsWarning(UserWarning):
    """A fit ended with every feature weight 0.

    ``transform`` then gives all-zero data and a kNN on it predicts one class for every
    sample.  The usual causes: every feature of ``X`` is constant, or no feature separates
    the classes at the method's neighbourhood (noise features, or too few samples per class).
    """


#: how many BaseWeighter.fit calls are running in this context: a weighter fitted inside another's fit
#: (ERelief's Relief members) leaves the ZeroWeightsWarning to the outer fit, so a user sees one
_FIT_DEPTH = contextvars.ContextVar("knnweights_fit_depth", default=0)


def _zero_weights_message(name, X, codes):
    """Why a fit may have ended with all-zero weights, in one sentence (for :class:`ZeroWeightsWarning`)."""
    varying = np.ptp(X, axis=0) > 0
    if not varying.any():
        cause = "every feature of X is constant, so no weight changes any distance"
    else:
        smallest = int(np.bincount(codes).min())
        cause = (f"no feature separates the classes at this method's neighbourhood ({int(varying.sum())} of "
                 f"{X.shape[1]} features vary; the smallest class has {smallest} samples)")
    return (f"{name} returned all-zero weights: {cause}. transform() gives all-zero data and a kNN on it "
            "predicts one class for every sample; check the features and labels, or try another method.")


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


def _check_scale(X, names=None):
    """Refuse data whose squared differences would overflow, or all underflow to zero."""
    amax = float(np.max(np.abs(X))) if X.size else 0.0
    log_limit = 300.0 if X.dtype == np.float64 else 36.0
    if amax > 0 and 2 * np.log10(2.0 * amax) + np.log10(X.shape[0] * X.shape[1]) >= log_limit:
        j = int(np.argmax(np.max(np.abs(X), axis=0)))
        raise ValueError(
            f"Input X has values up to {amax:.3g} (column {_column_label(names, j)}): sums of squared differences "
            f"would overflow {X.dtype}. Rescale the features first, e.g. with sklearn.preprocessing.StandardScaler or "
            "MaxAbsScaler."
        )
    if 0 < amax < 1e-145:
        raise ValueError(
            f"Input X has no value larger than {amax:.3g} in magnitude: squared differences underflow to 0 in "
            f"{X.dtype}, so every distance would be 0. Rescale the features first, e.g. with "
            "sklearn.preprocessing.StandardScaler or MaxAbsScaler."
        )


def feature_ranking(weights, scores=None, constant=None, margin_gain=None):
    """Ranks ``1..d`` (1 = best) of features: a total order without ties at zero weight.

    The order is: larger weight first; among equal weights, non-constant before
    constant features (``constant``, a mask: a constant feature carries nothing);
    then larger signed score first (``scores``, e.g. the Relief weights before
    clipping at 0); then larger ``margin_gain`` (see :func:`margin_gain`); then the
    lower column index first.

    Parameters
    ----------
    weights : array-like of shape (n_features,)
    scores : array-like of shape (n_features,), optional
        Signed scores; non-finite entries count as the lowest.
    constant : array-like of bool, shape (n_features,), optional
    margin_gain : array-like of shape (n_features,), optional
        A last data-driven key before the column order.

    Returns
    -------
    ndarray of int64, shape (n_features,)

    Examples
    --------
    >>> feature_ranking([0.5, 0.0, 0.0, 0.9], scores=[0.5, -0.2, -0.1, 0.9]).tolist()
    [2, 4, 3, 1]
    """
    w = np.asarray(weights, dtype=np.float64).ravel()
    d = w.shape[0]
    s = np.zeros(d) if scores is None else np.asarray(scores, dtype=np.float64).ravel()
    s = np.where(np.isfinite(s), s, -np.inf)
    c = np.zeros(d, dtype=bool) if constant is None else np.asarray(constant, dtype=bool).ravel()
    g = np.zeros(d) if margin_gain is None else np.asarray(margin_gain, dtype=np.float64).ravel()
    g = np.where(np.isfinite(g), g, -np.inf)
    order = np.lexsort((np.arange(d), -g, -s, c, -np.where(np.isfinite(w), w, -np.inf)))
    ranking = np.empty(d, dtype=np.int64)
    ranking[order] = np.arange(1, d + 1)
    return ranking


def _score_ties(weights, scores, constant):
    """Non-constant features whose (weight, score) pair is shared with another feature."""
    key = np.column_stack([weights, scores])
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return (counts[inverse.ravel()] > 1) & ~np.asarray(constant, dtype=bool)


def margin_gain(X, codes, w, metric, columns):
    """Mean range-normalised hypothesis margin of each of ``columns`` at the learned metric.

    For every sample, its nearest hit and nearest miss under the ``w``-weighted
    distance (unweighted when ``w`` is all zero); for feature ``j``,
    ``mean_n (phi(x_nj - miss_nj) - phi(x_nj - hit_nj)) / phi(range_j)`` with
    ``phi = |.|`` (manhattan) or ``(.)^2`` (sqeuclidean): the rate at which the sum
    of hypothesis margins (Gilad-Bachrach et al. 2004) would grow if feature ``j``
    gained weight.  It orders the features that a method without signed scores
    leaves tied at weight 0 (Relief's score, evaluated in the learned metric).

    Returns
    -------
    ndarray of shape (len(columns),)
    """
    from ..engine.neighbors import hard_margin_vectors, nearest_hits_misses

    columns = np.asarray(columns)
    ww = np.asarray(w, dtype=np.float64)
    nb = nearest_hits_misses(X, codes, w=ww if np.any(ww > 0) else None, n_neighbors=1, metric=metric)
    Z = np.ascontiguousarray(X[:, columns])
    rng = np.ptp(Z, axis=0)
    rng = np.where(rng > 0, rng, 1.0)
    m = hard_margin_vectors(Z, nb.hit_idx, nb.miss_idx, metric=metric) / X.shape[0]
    return m / (rng if metric == "manhattan" else rng**2)


def warn_max_iter(estimator, max_iter, what="the weights"):
    """Emit the ConvergenceWarning every iterative method gives when it stops at max_iter."""
    warnings.warn(
        f"{type(estimator).__name__} stopped at max_iter={max_iter} before {what} converged; "
        "increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=4,
    )


def warn_max_work(estimator, max_work, progress, result, optimum):
    """Emit the ConvergenceWarning of a fit stopped at its deterministic work budget ``max_work`` (GFLOP).

    ``progress``: what the fit did before the stop; ``result``: what the returned weights are;
    ``optimum``: what they are not (and what ``max_work=None`` runs to).
    """
    warnings.warn(
        f"{type(estimator).__name__} stopped at its work budget max_work={max_work:g} GFLOP ({progress}); the "
        f"weights are {result}, not {optimum}. Set max_work=None (no budget) or a larger max_work to reach it.",
        ConvergenceWarning,
        stacklevel=4,
    )


def normalize_weights(v, norm="l2"):
    """``max(v, 0)`` normalised to unit ``norm``; all-zero stays all-zero (never NaN)."""
    w = np.maximum(np.asarray(v, dtype=np.float64), 0.0)
    s = np.linalg.norm(w, 1 if norm == "l1" else (np.inf if norm == "max" else 2))
    return w / s if s > 0 and np.isfinite(s) else w


class BaseWeighter(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class of every feature weighter.

    Subclasses set the class attribute ``_metric`` (``"manhattan"`` or
    ``"sqeuclidean"``), declare ``_parameter_constraints`` and implement
    ``_fit(X, y_codes)`` returning the weight vector (and may set other fitted
    attributes).  ``fit`` validates the input (finite values with the column named,
    at least two classes, the per-class sizes the method needs), encodes the labels,
    calls ``_fit`` and stores ``feature_importances_`` (finite, ``>= 0``).

    ``transform`` rescales by ``w`` (L1 methods) or ``sqrt(w)`` (L2sq methods), so that
    ``KNeighborsClassifier(metric=self.metric_)`` on the output is the weighted kNN.
    A fit that ends with every weight 0 says so with one :class:`ZeroWeightsWarning`
    naming the likely cause (every feature constant, or no feature separating the classes).

    Every fitted weighter also has ``scores_`` and ``ranking_``:

    * ``scores_`` (n_features,): signed scores before clipping at 0.  A method that
      has its own (the Relief family: the raw Relief weights) sets them in ``_fit``;
      otherwise they are the vector ``_fit`` returned, before ``max(., 0)``.
    * ``ranking_`` (n_features,) int: 1 = best, a total order (see
      :func:`feature_ranking`): by weight, then constant features last, then by
      signed score (so the features whose weight is clipped to 0 are still
      ordered), then, for features still tied (a method without signed scores),
      by :func:`margin_gain` (the margin each would add at the learned metric:
      one extra nearest hit / miss pass, run only when such ties exist), then by
      column order.
    """

    #: the version of the algorithm's results: bump it in the commit that changes what
    #: ``fit`` computes (beyond a stated tolerance); stored reproduction cells are keyed by it
    algorithm_version = 1

    _metric = "manhattan"
    #: minimum samples per class the method needs (2 = a hit for every sample)
    _min_class_size = 2
    _parameter_constraints: dict = {}

    # -- input ---------------------------------------------------------------------
    def _validate_fit_data(self, X, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: feature weighting "
                "is supervised (pass the class labels)."
            )
        # named, one-line errors before sklearn's generic ones: the column (by name for a DataFrame), "y"
        check_numeric_columns(X)
        # estimators that declare ``_allow_nan`` (e.g. the Relief family with missing="diff") take NaN
        allow_nan = bool(getattr(self, "_allow_nan", False))
        check_finite_columns(X, allow_nan=allow_nan)
        check_target(y)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_min_samples=2,
                             accept_sparse=False, y_numeric=False,
                             ensure_all_finite="allow-nan" if allow_nan else True)
        _check_scale(X, getattr(self, "feature_names_in_", None))
        return X, self._encode_target(y)

    def _encode_target(self, y, n_samples=None):
        """Class codes ``0..K-1`` of ``y`` (sets ``classes_``), with the named errors of every weighter:
        missing labels, one class, a class smaller than ``_min_class_size``."""
        if n_samples is not None:
            check_target(y)
            y = column_or_1d(y, warn=True)
            if y.shape[0] != n_samples:
                raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n_samples}, "
                                 f"{y.shape[0]}]")
        check_classification_targets(y)
        self._label_encoder = LabelEncoder().fit(y)
        self.classes_ = self._label_encoder.classes_
        codes = self._label_encoder.transform(y).astype(np.int64)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes; y has 1 class ({_label(self.classes_[0])}). "
                "Feature weighting by margins needs samples of other classes (misses)."
            )
        counts = np.bincount(codes)
        small = np.flatnonzero(counts < self._min_class_size)
        if small.size:
            c = small[0]
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_class_size} samples per class (every sample "
                f"needs a hit of its own class), but class {_label(self.classes_[c])} has {counts[c]} sample"
                f"{'s' if counts[c] != 1 else ''}. Remove or merge that class, or collect more samples."
            )
        return codes

    def _check_n_neighbors(self, k, codes, need_hits=True, name="n_neighbors", clamp=None):
        """Raise when ``k`` exceeds the hits (class size - 1) or misses available.

        With ``clamp`` (the name of the option that turns the clamp off, e.g.
        ``"small_classes='error'"``) a ``UserWarning`` instead: the method then uses,
        per class, all the hits / misses that class has.
        """
        counts = np.bincount(codes)
        n = codes.shape[0]
        if need_hits and k > counts.min() - 1:
            c = int(np.argmin(counts))
            msg = (f"{name}={k} is larger than the number of hits of class {_label(self.classes_[c])} "
                   f"({counts[c] - 1}: {counts[c]} samples minus the sample itself).")
            if clamp:
                small = [_label(self.classes_[i]) for i in np.flatnonzero(counts - 1 < k)]
                warnings.warn(f"{msg} Clamped per class: class(es) {', '.join(small)} use all their hits "
                              f"(and misses); set {clamp} to raise instead.", UserWarning, stacklevel=4)
                return
            raise ValueError(f"{msg} Use {name} <= {counts.min() - 1}.")
        if k > n - counts.max():
            msg = f"{name}={k} is larger than the number of misses available ({n - counts.max()})."
            if clamp:
                warnings.warn(f"{msg} Clamped per class; set {clamp} to raise instead.", UserWarning, stacklevel=4)
                return
            raise ValueError(msg)

    # -- fit -------------------------------------------------------------------------
    def fit(self, X, y):
        """Learn the feature weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels of any type.

        Returns
        -------
        self
        """
        self._validate_params()
        X, codes = self._validate_fit_data(X, y)
        self.__dict__.pop("scores_", None)  # a method sets its own signed scores in _fit, or gets the default
        depth = _FIT_DEPTH.set(_FIT_DEPTH.get() + 1)
        try:
            w = np.asarray(self._fit(X, codes), dtype=np.float64)
        finally:
            _FIT_DEPTH.reset(depth)
        if w.shape != (X.shape[1],):
            raise RuntimeError(f"internal error: weights of shape {w.shape} for {X.shape[1]} features")
        if not np.all(np.isfinite(w)):
            raise FloatingPointError(
                f"{type(self).__name__} produced non-finite weights; this is a bug, please report it with the data."
            )
        if not hasattr(self, "scores_"):
            self.scores_ = w.copy()  # the method's vector before clipping at 0
        w = np.maximum(w, 0.0)
        # a constant feature adds nothing to any distance: its weight is 0 by definition
        constant = np.ptp(X, axis=0) == 0
        w[constant] = 0.0
        self.feature_importances_ = w
        if not np.any(w > 0) and _FIT_DEPTH.get() == 0:
            # point at the user's call, also through a subclass's fit that wraps this one (EFW)
            level = 2 if type(self).fit is BaseWeighter.fit else 3
            warnings.warn(_zero_weights_message(type(self).__name__, X, codes), ZeroWeightsWarning, stacklevel=level)
        gain = None
        tied = _score_ties(w, self.scores_, constant)
        if tied.sum() > 1 and np.all(np.isfinite(X[:, tied])):
            # a method without signed scores leaves its clipped features tied: order them by the margin
            # each would add at the learned metric (one neighbour pass, only in that case)
            gain = np.zeros(w.shape[0])
            gain[tied] = margin_gain(X, codes, w, self._metric, np.flatnonzero(tied))
        self.ranking_ = feature_ranking(w, self.scores_, constant, gain)
        self.metric_ = self._metric
        return self

    def _fit(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def __sklearn_is_fitted__(self):
        # parameters such as ``lambda_`` end in "_" too: fittedness is the weights
        return hasattr(self, "feature_importances_")

    # -- output ----------------------------------------------------------------------
    @property
    def weights_(self):
        """Alias of ``feature_importances_``."""
        check_is_fitted(self, "feature_importances_")
        return self.feature_importances_

    def transform(self, X):
        """Rescale ``X`` so a plain kNN with ``metric_`` equals the weighted kNN.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features), ``X * w`` (manhattan) or
        ``X * sqrt(w)`` (sqeuclidean), in the input's float dtype.
        """
        check_is_fitted(self, "feature_importances_")
        check_numeric_columns(X)
        check_finite_columns(X)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        w = self.feature_importances_
        scale = w if self.metric_ == "manhattan" else np.sqrt(w)
        return X * scale.astype(X.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _positive_int():
    return [Interval(numbers.Integral, 1, None, closed="left")]


def _positive_real():
    return [Interval(numbers.Real, 0, None, closed="neither")]
