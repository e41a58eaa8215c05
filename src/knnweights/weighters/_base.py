"""The weighter contract shared by every method: validation, weights, transform."""

import contextvars
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ..exceptions import ZeroWeightsWarning
from ..utils import (  # noqa: F401 - the validation helpers, defined once in knnweights.utils
    Interval,
    check_finite_columns,
    check_numeric_columns,
    check_target,
    column_label,
    format_label,
    validate_params,
)

__all__ = ["BaseWeighter", "ZeroWeightsWarning", "CONTINUOUS_TARGET_METHODS", "check_finite_columns",
           "check_numeric_columns", "check_target", "feature_ranking", "margin_gain", "refuse_continuous_target",
           "validate_continuous_fit_data", "warn_max_iter", "normalize_weights"]


#: how many BaseWeighter.fit calls are running in this context: a weighter fitted inside another's fit
#: (ERelief's Relief members) leaves the ZeroWeightsWarning to the outer fit, so a user sees one
_FIT_DEPTH = contextvars.ContextVar("knnweights_fit_depth", default=0)


def _zero_weights_message(name, X, codes):
    """Why a fit may have ended with all-zero weights, in one sentence (for :class:`ZeroWeightsWarning`)."""
    varying = np.ptp(X, axis=0) > 0
    if not varying.any():
        cause = "every feature of X is constant, so no weight changes any distance"
    elif codes is None:
        cause = (f"no feature relates to the continuous target at this method's neighbourhood "
                 f"({int(varying.sum())} of {X.shape[1]} features vary)")
    else:
        smallest = int(np.bincount(codes).min())
        cause = (f"no feature separates the classes at this method's neighbourhood ({int(varying.sum())} of "
                 f"{X.shape[1]} features vary; the smallest class has {smallest} samples)")
    return (f"{name} returned all-zero weights: {cause}. transform() gives all-zero data and a kNN on it "
            "predicts one class for every sample; check the features and labels, or try another method.")


#: the weighters with a definition for a continuous target (the error below names them)
CONTINUOUS_TARGET_METHODS = ("Relief", "ReliefF", "SURF", "MultiSURF", "IRelief", "MLKRDiagonal")


def refuse_continuous_target(estimator, y):
    """Raise a ``ValueError`` naming the methods that have a continuous-target definition when ``y``
    is continuous (as :func:`sklearn.utils.multiclass.type_of_target` decides) and ``estimator`` has none."""
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
            f"{', '.join(CONTINUOUS_TARGET_METHODS)}; or give y as class labels (integers or strings)."
        )


def validate_continuous_fit_data(est, X, y):
    """Validate ``X`` and a continuous target ``y`` (as :meth:`BaseWeighter._validate_fit_data` for classes):
    ``(X, y as float64)``; forgets the class attributes of an earlier fit."""
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None.")
    check_numeric_columns(X)
    allow_nan = bool(getattr(est, "_allow_nan", False))
    check_finite_columns(X, allow_nan=allow_nan)
    check_target(y)
    X, y = validate_data(est, X, y, dtype=[np.float64, np.float32], ensure_min_samples=3, y_numeric=True,
                         ensure_all_finite="allow-nan" if allow_nan else True)
    _check_scale(X, getattr(est, "feature_names_in_", None))
    y = np.asarray(y, dtype=np.float64)
    if not np.ptp(y) > 0:
        raise ValueError(f"{type(est).__name__}: the continuous target y is constant ({y[0]!r}); nothing to relate "
                         "the features to.")
    for attr in ("classes_", "_label_encoder"):
        est.__dict__.pop(attr, None)
    return X, y


def _check_scale(X, names=None):
    """Refuse data whose squared differences would overflow, or all underflow to zero."""
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


def check_class_neighbors(k, codes, classes, need_hits=True, name="n_neighbors", clamp=None, own_excluded=True,
                          stacklevel=4):
    """Check a per-class neighbour count ``k`` against the samples each class has.

    Raises a ``ValueError`` when ``k`` exceeds the hits of the smallest class (its size
    minus the sample itself; the size itself with ``own_excluded=False``, e.g. a
    classifier's neighbours of a query outside the training set) or the misses
    available.  With ``clamp`` (the name of the option that turns the clamp off, e.g.
    ``"small_classes='error'"``) a ``UserWarning`` instead: the caller then uses, per
    class, all the neighbours that class has.
    """
    counts = np.bincount(codes, minlength=len(classes))
    avail = counts - 1 if own_excluded else counts
    n = codes.shape[0]
    if need_hits and k > avail.min():
        c = int(np.argmin(avail))
        what = (f"the number of hits of class {format_label(classes[c])} ({avail[c]}: {counts[c]} samples minus the "
                "sample itself)" if own_excluded else
                f"the number of samples of class {format_label(classes[c])} ({counts[c]})")
        msg = f"{name}={k} is larger than {what}."
        if clamp:
            small = [format_label(classes[i]) for i in np.flatnonzero(avail < k)]
            warnings.warn(f"{msg} Clamped per class: class(es) {', '.join(small)} use all their "
                          f"{'hits (and misses)' if own_excluded else 'samples'}; set {clamp} to raise instead.",
                          UserWarning, stacklevel=stacklevel)
            return
        raise ValueError(f"{msg} Use {name} <= {avail.min()}.")
    if k > n - counts.max():
        msg = f"{name}={k} is larger than the number of misses available ({n - counts.max()})."
        if clamp:
            warnings.warn(f"{msg} Clamped per class; set {clamp} to raise instead.", UserWarning,
                          stacklevel=stacklevel)
            return
        raise ValueError(msg)


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
    _algorithm_version = 1

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
        refuse_continuous_target(self, y)
        check_classification_targets(y)
        self._label_encoder = LabelEncoder().fit(y)
        self.classes_ = self._label_encoder.classes_
        codes = self._label_encoder.transform(y).astype(np.int64)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes; y has 1 class ({format_label(self.classes_[0])}). "
                "Feature weighting by margins needs samples of other classes (misses)."
            )
        counts = np.bincount(codes)
        small = np.flatnonzero(counts < self._min_class_size)
        if small.size:
            c = small[0]
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_class_size} samples per class (every sample "
                f"needs a hit of its own class), but class {format_label(self.classes_[c])} has {counts[c]} sample"
                f"{'s' if counts[c] != 1 else ''}. Remove or merge that class, or collect more samples."
            )
        return codes

    def _check_n_neighbors(self, k, codes, need_hits=True, name="n_neighbors", clamp=None):
        """Raise when ``k`` exceeds the hits (class size - 1) or misses available.

        With ``clamp`` (the name of the option that turns the clamp off, e.g.
        ``"small_classes='error'"``) a ``UserWarning`` instead: the method then uses,
        per class, all the hits / misses that class has.  See :func:`check_class_neighbors`.
        """
        check_class_neighbors(k, codes, self.classes_, need_hits=need_hits, name=name, clamp=clamp,
                              stacklevel=5)

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
        validate_params(self)
        X, codes = self._validate_fit_data(X, y)
        # point a warning at the user's call, also through a subclass's fit that wraps this one (EFW)
        return self._fit_weights(X, codes, self._fit, stacklevel=3 if type(self).fit is BaseWeighter.fit else 4)

    def _fit_weights(self, X, codes, fit_fn, stacklevel=3, constant=None):
        """Run ``fit_fn(X, codes)`` and store ``feature_importances_``, ``scores_``, ``ranking_``, ``metric_``.

        ``codes`` is ``None`` for a continuous target (no classes: no margin-gain tie
        breaking).  ``stacklevel`` points the :class:`ZeroWeightsWarning` at the user's call.
        ``X`` may also be a genotype matrix (:class:`~knnweights.engine.genotypes.GenotypeMatrix`)
        that gives its ``constant`` columns; the margin-gain tie-break then needs float data and
        is left out.
        """
        self.__dict__.pop("scores_", None)  # a method sets its own signed scores in _fit, or gets the default
        depth = _FIT_DEPTH.set(_FIT_DEPTH.get() + 1)
        try:
            w = np.asarray(fit_fn(X, codes), dtype=np.float64)
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
        dense = isinstance(X, np.ndarray)
        constant = np.ptp(X, axis=0) == 0 if constant is None else np.asarray(constant, dtype=bool)
        w[constant] = 0.0
        self.feature_importances_ = w
        if not np.any(w > 0) and _FIT_DEPTH.get() == 0:
            msg = (_zero_weights_message(type(self).__name__, X, codes) if dense else
                   f"{type(self).__name__} returned all-zero weights on this genotype matrix: no feature separates "
                   "the classes at this method's neighbourhood.")
            warnings.warn(msg, ZeroWeightsWarning, stacklevel=stacklevel)
        gain = None
        tied = _score_ties(w, self.scores_, constant)
        if codes is not None and dense and tied.sum() > 1 and np.all(np.isfinite(X[:, tied])):
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
