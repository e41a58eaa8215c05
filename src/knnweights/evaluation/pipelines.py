"""Pipelines that put a weighter before a classifier, fitted on training data only.

Every construction here is a scikit-learn estimator whose ``fit`` fits the weighter on
the rows given to ``fit`` and nothing else, so inside cross-validation (the runner,
``GridSearchCV``) the weights are learnt on the training folds only.

:class:`RemoveLowestWeights` fits a weighter, drops the share of lowest-weight features
(SQP-FW's baselines: "the lowest-weight features are removed, the percentage chosen on
the validation set from {0 %, 1 %, ..., 99 %}") and rescales the rest by the weights.
While a :func:`fit_cache` is active (the tuner opens one), refitting the same weighter
on the same rows returns the stored fit, so a grid over the share and ``k`` costs one
weighter fit per training set.
"""

import contextlib
import math
import numbers
import threading
from collections import OrderedDict

import joblib
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from ..classifiers import WeightedKNN
from ..selection import fitted_ranking, fitted_weights
from ..utils import HasMethods, Interval, check_finite_columns, check_numeric_columns, check_target, validate_params

__all__ = ["RemoveLowestWeights", "weighted_knn", "weighter_pipeline", "fit_cache", "cached_fit"]

_local = threading.local()


@contextlib.contextmanager
def fit_cache(maxsize=8):
    """Reuse weighter fits on identical (parameters, data) within this block (this thread only).

    At most ``maxsize`` fits are kept (least recently used first out); a nested block
    shares the outer cache and can only enlarge it while it runs.

    The cache is keyed by ``joblib.hash`` of the unfitted weighter (its class and every
    parameter, the seed included) and of ``X`` and ``y``; a fit is deterministic given
    those when ``random_state`` is an int, so a cached fit equals a new one.  Estimators
    whose ``random_state`` is ``None`` or a generator are never cached.

    Parameters
    ----------
    maxsize : int, default=8
        Most fits kept at once; a grid that refits several weighters on the same rows
        needs one entry per distinct (weighter, rows) to benefit.

    Yields
    ------
    cache : OrderedDict
        The active cache (key -> fitted estimator), shared with any nested block.
    """
    prev = getattr(_local, "cache", None)
    prev_size = getattr(_local, "maxsize", 8)
    _local.cache = OrderedDict() if prev is None else prev
    _local.maxsize = maxsize if prev is None else max(maxsize, prev_size)
    try:
        yield _local.cache
    finally:
        _local.maxsize = prev_size
        if prev is None:
            _local.cache = None


def _deterministic(est):
    """True when every ``random_state`` parameter of ``est`` is an int (a fixed seed)."""
    return all(
        v is not None and isinstance(v, numbers.Integral)
        for k, v in est.get_params(deep=True).items()
        if k.endswith("random_state")
    )


def cached_fit(estimator, X, y, covariates=None):
    """``clone(estimator).fit(X, y)``, taken from the active :func:`fit_cache` when possible.

    Parameters
    ----------
    estimator : estimator
        Unfitted estimator; it is cloned, never fitted in place.  Only one whose every
        ``random_state`` is an int is cached.
    X : array-like of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        Training targets.
    covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
        Passed to ``fit`` as ``covariates=`` (and part of the cache key) when given.

    Returns
    -------
    fitted : estimator
        The fitted clone; a cached one is shared, so do not modify it.
    """
    kw = {} if covariates is None else {"covariates": covariates}
    cache = getattr(_local, "cache", None)
    if cache is None or not _deterministic(estimator):
        return clone(estimator).fit(X, y, **kw)
    key = joblib.hash((estimator, np.asarray(X), np.asarray(y), *kw.values()))
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    fitted = clone(estimator).fit(X, y, **kw)
    cache[key] = fitted
    while len(cache) > getattr(_local, "maxsize", 8):
        cache.popitem(last=False)
    return fitted


class RemoveLowestWeights(TransformerMixin, BaseEstimator):
    """Fit a weighter, drop the ``share`` of lowest-weight features, rescale the rest.

    With ``share=0`` this is the weighter itself (``transform`` equals the weighter's).
    The number of features kept is ``d - floor(share * d)``, at least one; the features
    are taken in the order of the weighter's total ranking
    (:func:`knnweights.selection.fitted_ranking`: weight, then signed score, then
    column order), so ties at weight 0 are broken by the signed scores.

    A selector in scikit-learn's sense (``get_support``, ``get_feature_names_out``,
    ``set_output(transform="pandas")``), except that ``transform`` also rescales the
    kept columns by the weights (as the weighter's ``transform`` does).

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter (``fit``, ``transform``, ``feature_importances_``,
        ``metric_``) or any estimator with ``feature_importances_`` or ``coef_``.
    share : float in [0, 1), default=0.0
        Share of features with the lowest weights removed (SQP-FW's baselines tune it
        over ``{0, 0.01, ..., 0.99}`` on the validation set).

    Attributes
    ----------
    weighter_ : fitted weighter (on the rows given to ``fit`` only)
    support_ : ndarray of bool, shape (n_features,)
    ranking_ : ndarray of int, shape (n_features,)
        The weighter's ranking (1 = best).
    feature_importances_ : ndarray, shape (n_kept,)
        Weights of the kept features.
    metric_ : str
        The weighter's metric (read by :class:`knnweights.classifiers.WeightedKNN`).
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit"])],
        "share": [Interval(numbers.Real, 0, 1, closed="left")],
    }

    def __init__(self, weighter, share=0.0):
        self.weighter = weighter
        self.share = share

    def fit(self, X, y, covariates=None):
        """Fit the weighter on ``(X, y)`` and choose the features kept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (numeric; NaN only if the weighter accepts it).
        y : array-like of shape (n_samples,)
            Targets the weighter learns its weights from.
        covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
            Passed to the weighter's ``fit`` (the Relief family adjusts its p-values for them).

        Returns
        -------
        self : RemoveLowestWeights
            The fitted transformer.
        """
        validate_params(self)
        allow_nan = get_tags(self.weighter).input_tags.allow_nan
        check_numeric_columns(X)
        check_finite_columns(X, allow_nan=allow_nan)
        check_target(y)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32],
                             ensure_all_finite="allow-nan" if allow_nan else True)
        self.weighter_ = cached_fit(self.weighter, X, y, covariates)
        w = fitted_weights(self.weighter_)
        if w is None:
            raise TypeError(f"{type(self.weighter_).__name__} has neither feature_importances_ nor coef_.")
        n_keep = self._n_kept(w.shape[0])
        self.ranking_ = fitted_ranking(self.weighter_)
        self.support_ = self.ranking_ <= n_keep
        self.feature_importances_ = w[self.support_]
        self.metric_ = getattr(self.weighter_, "metric_", "manhattan")
        self.classes_ = getattr(self.weighter_, "classes_", None)
        return self

    def _n_kept(self, d):
        """The number of features kept out of ``d``."""
        return max(1, d - int(math.floor(self.share * d + 1e-9)))

    def get_support(self, indices=False):
        """Mask (or indices) of the kept features.

        Parameters
        ----------
        indices : bool, default=False
            Return the column indices of the kept features instead of a boolean mask.

        Returns
        -------
        support : ndarray
            Boolean mask of shape ``(n_features,)``, or the kept indices, increasing.
        """
        check_is_fitted(self, "support_")
        return np.flatnonzero(self.support_) if indices else self.support_

    def get_feature_names_out(self, input_features=None):
        """Names of the kept features (``feature_names_in_`` or ``x0, x1, ...``).

        Parameters
        ----------
        input_features : array-like of str, optional
            Names of all the input features; if given they must equal
            ``feature_names_in_`` (when set).  ``None``: ``feature_names_in_`` or
            ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str objects
            Names of the kept features, in column order.
        """
        check_is_fitted(self, "support_")
        names = getattr(self, "feature_names_in_", None)
        if input_features is None:
            names = names if names is not None else [f"x{i}" for i in range(self.n_features_in_)]
        else:
            given = np.asarray(input_features, dtype=object)
            if given.shape != (self.n_features_in_,) or (names is not None and not np.array_equal(given, names)):
                raise ValueError(f"input_features must be {self.n_features_in_} names"
                                 + (" equal to the feature names seen in fit." if names is not None else "."))
            names = given
        return np.asarray(names, dtype=object)[self.support_]

    def transform(self, X):
        """The weighter's rescaling restricted to the kept features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples with all the features seen in ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_kept)
            The kept columns, rescaled by the weighter's ``transform`` (unscaled when the
            weighter has none, e.g. a linear model).
        """
        check_is_fitted(self, "support_")
        check_numeric_columns(X)
        allow_nan = get_tags(self).input_tags.allow_nan
        check_finite_columns(X, allow_nan=allow_nan)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32],
                          ensure_all_finite="allow-nan" if allow_nan else True)
        if hasattr(self.weighter_, "transform") and hasattr(self.weighter_, "metric_"):
            Z = self.weighter_.transform(X)
        else:
            Z = X
        return Z[:, self.support_]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = get_tags(self.weighter).input_tags.allow_nan
        return tags


def weighted_knn(weighter, n_neighbors=1, share=0.0):
    """Weighted kNN with the weighter's metric, optionally after removing low-weight features.

    Returns ``WeightedKNN(RemoveLowestWeights(weighter, share), n_neighbors)``; tune it
    with parameter names ``n_neighbors``, ``weighter__share`` and
    ``weighter__weighter__<param>`` (e.g. ``{"n_neighbors": [1, 3, 5]}``).

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter, fitted on the training rows of each ``fit``.
    n_neighbors : int, default=1
        Neighbours voting (1 as in the papers' 1-NN protocols).
    share : float in [0, 1), default=0.0
        Share of lowest-weight features removed before the kNN.

    Returns
    -------
    model : WeightedKNN
        Unfitted classifier.
    """
    return WeightedKNN(RemoveLowestWeights(weighter, share=share), n_neighbors=n_neighbors)


def weighter_pipeline(weighter, classifier, share=0.0):
    """``Pipeline([("weights", RemoveLowestWeights(weighter, share)), ("clf", classifier)])``.

    Any scikit-learn classifier on the weighted (and reduced) data; the weighter is
    fitted on the training rows of each ``fit`` only.  Grid names:
    ``weights__share``, ``weights__weighter__<param>``, ``clf__<param>``.

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter, or any estimator with ``feature_importances_`` or ``coef_``.
    classifier : estimator
        Any scikit-learn classifier, fitted on the weighted, reduced columns.
    share : float in [0, 1), default=0.0
        Share of lowest-weight features removed before the classifier.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Unfitted two-step pipeline.
    """
    return Pipeline([("weights", RemoveLowestWeights(weighter, share=share)), ("clf", classifier)])
