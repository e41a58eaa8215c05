"""Weighted kNN: a weighter followed by plain kNN with the matching metric, and the kNN vote itself.

The neighbour search and the vote are one implementation, used by every kNN of the library
(:class:`KNNClassifier`, :class:`KNNRegressor`, :class:`WeightedKNN`, :func:`predict_weighted_knn`
for SQP-FW's theta selection, the top-m curves of :mod:`knnweights.evaluation.compare`): the
``k`` nearest training samples come from :func:`knnweights.engine.neighbors.nearest` (equal
distances, within the rounding error of computing them, go to the lower training index: the
engine's tie rule), :func:`class_votes` counts their classes and :func:`majority_class` picks
the class of most votes (a tie goes to the lowest class code, scikit-learn's rule).
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..engine.neighbors import nearest
from ..utils import HasMethods, Interval, StrOptions, fill_docstring, validate_params
from ..weighters._validation import validate_query_data, validate_training_data
from ._base import method_doc, validate_training_set

__all__ = ["KNNClassifier", "KNNRegressor", "WeightedKNN", "WeightedKNNRegressor", "class_votes", "majority_class",
           "predict_weighted_knn", "predict_weighted_knn_ks"]

#: the kNN's metric name -> the engine's (the Euclidean ranking is the squared Euclidean one)
_SEARCH_METRIC = {"manhattan": "manhattan", "euclidean": "sqeuclidean", "sqeuclidean": "sqeuclidean"}


def class_votes(idx, codes, n_classes):
    """Votes per class of the listed neighbours of each query.

    Parameters
    ----------
    idx : ndarray of shape (n_queries, k)
        Neighbour indices into ``codes`` (``-1``: no neighbour, no vote).
    codes : ndarray of shape (n_candidates,)
        The candidates' class codes, ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes (the length of each row of ``votes``).

    Returns
    -------
    votes : ndarray of shape (n_queries, n_classes)
        How many of each query's neighbours are of each class.
    """
    idx = np.asarray(idx)
    nq = idx.shape[0]
    votes = np.zeros((nq, int(n_classes)))
    ok = idx >= 0
    rows = np.broadcast_to(np.arange(nq)[:, None], idx.shape)[ok]
    np.add.at(votes, (rows, np.asarray(codes)[idx[ok]]), 1.0)
    return votes


def majority_class(votes, classes):
    """The class of most votes per row of ``votes``; a tie goes to the first of ``classes``.

    The lowest class code wins a tie, as in scikit-learn's ``KNeighborsClassifier``.

    Parameters
    ----------
    votes : ndarray of shape (n_queries, n_classes)
        Votes (or probabilities) of each class.
    classes : array-like of shape (n_classes,)
        The class labels, in code order.

    Returns
    -------
    y_pred : ndarray of shape (n_queries,)
        The winning class label of each row.
    """
    return np.asarray(classes)[np.argmax(votes, axis=1)]


#: the parameters of :func:`predict_weighted_knn` and :func:`predict_weighted_knn_ks`: ``{search}`` (the
#: neighbour search's data and weights) and ``{labels}`` (the classes voted for)
_vote_doc = fill_docstring(
    search="""X_train : ndarray of shape (n_train, n_features)
    Training samples.
codes_train : ndarray of shape (n_train,)
    Their class codes, ``0 .. n_classes - 1``.
X_query : ndarray of shape (n_queries, n_features)
    Samples to classify.
w : ndarray of shape (n_features,)
    Feature weights of the distance ``sum_f w_f (x_f - z_f)^2``.""",
    labels="""n_classes : int
    Number of classes.
classes : array-like of shape (n_classes,)
    The class labels, in code order.""")


@_vote_doc
def predict_weighted_knn(X_train, codes_train, X_query, w, n_neighbors, n_classes, classes):
    """Majority vote of the ``n_neighbors`` nearest training samples under ``d_w`` (L2sq).

    Equally distant neighbours go to the lower training index (the engine's tie rule); a tie
    of votes goes to the lower class.

    Parameters
    ----------
    {search}
    n_neighbors : int
        Neighbours voting.
    {labels}

    Returns
    -------
    y_pred : ndarray of shape (n_queries,)
        Predicted class labels.
    """
    return predict_weighted_knn_ks(X_train, codes_train, X_query, w, (n_neighbors,), n_classes, classes)[0]


@_vote_doc
def predict_weighted_knn_ks(X_train, codes_train, X_query, w, ks, n_classes, classes):
    """:func:`predict_weighted_knn` for every ``k`` in ``ks`` from one neighbour search.

    The ``k`` nearest are the first ``k`` of the ``max(ks)`` nearest (the list is sorted, equal
    distances by index) and the distances do not depend on ``k``, so every prediction is the
    one of ``predict_weighted_knn(..., k, ...)``: one ``O(n_query n_train d)`` distance pass
    instead of ``len(ks)``.

    Parameters
    ----------
    {search}
    ks : sequence of int
        Neighbour counts to predict with.
    {labels}

    Returns
    -------
    predictions : list of ndarray of shape (n_queries,)
        The predicted labels for each ``k`` of ``ks``, in order.
    """
    idx, _ = nearest(X_query, X_train, w, int(max(ks)), "sqeuclidean")
    return [majority_class(class_votes(idx[:, :int(k)], codes_train, n_classes), classes) for k in ks]


class _PlainKNN(BaseEstimator):
    """Plain kNN on the library's neighbour engine: the stored training set and its neighbour search."""

    @method_doc
    def fit(self, X, y):
        """Store the training set (a lazy learner).

        {fit_X}
        y : array-like of shape (n_samples,)
            Class labels (:class:`KNNClassifier`) or continuous targets (:class:`KNNRegressor`).

        {fit_returns}
        """
        X, self._fit_y = self._training_set(X, y)
        self._fit_X = np.ascontiguousarray(X)
        return self

    @method_doc
    def kneighbors(self, X):
        """The ``n_neighbors`` nearest training samples of each query.

        {query_params}

        Returns
        -------
        idx : ndarray of shape (n_queries, n_neighbors)
            Training indices, nearest first (equal distances by the lower index).
        dist : ndarray of shape (n_queries, n_neighbors)
            Their distances in ``metric``.
        """
        check_is_fitted(self, "_fit_X")
        X = validate_query_data(self, X)
        n = self._fit_X.shape[0]
        if self.n_neighbors > n:
            raise ValueError(f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {self.n_neighbors}, "
                             f"n_samples_fit = {n}, n_samples = {X.shape[0]}")
        idx, dist = nearest(X, self._fit_X, None, self.n_neighbors, _SEARCH_METRIC[self.metric])
        return idx, (np.sqrt(dist) if self.metric == "euclidean" else dist)


class _MajorityVote(ClassifierMixin):
    """The kNN vote's prediction from ``predict_proba`` (:class:`KNNClassifier`, :class:`WeightedKNN`)."""

    @method_doc
    def predict(self, X):
        """The majority class of each query's ``n_neighbors`` nearest training samples.

        The votes are :meth:`predict_proba`'s (equally distant training samples by the engine's
        tie rule); a tie of votes goes to the first of ``classes_`` (:func:`majority_class`).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query samples (for :class:`WeightedKNN`: in the original, unweighted feature space).

        {label_returns}
        """
        return majority_class(self.predict_proba(X), self.classes_)


class KNNClassifier(_MajorityVote, _PlainKNN):
    """Plain k-nearest-neighbour classifier on the library's neighbour engine.

    scikit-learn's ``KNeighborsClassifier`` (uniform votes, a tie of votes to the lowest
    class) with one difference: equally distant training samples are ordered by the
    engine's tie rule (:func:`knnweights.engine.neighbors.tie_tolerance`: equal within the
    rounding error of computing the distances, then the lower training index), so which
    of them vote does not depend on the CPU, the BLAS or the search structure.

    Parameters
    ----------
    n_neighbors : int, default=5
        Neighbours voting.
    metric : {"euclidean", "manhattan", "sqeuclidean"}, default="euclidean"
        The distance (Euclidean and squared Euclidean rank alike).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.classifiers import KNNClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = [0, 0, 1, 1]
    >>> KNNClassifier(n_neighbors=1).fit(X, y).predict([[1.5], [0.2]]).tolist()
    [0, 0]
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "metric": [StrOptions(set(_SEARCH_METRIC))],
    }

    def __init__(self, n_neighbors=5, metric="euclidean"):
        self.n_neighbors = n_neighbors
        self.metric = metric

    def _training_set(self, X, y):
        X, _, codes = validate_training_set(self, X, y, dtype=[np.float64, np.float32])
        return X, codes

    @method_doc
    def predict_proba(self, X):
        """Each class's share of the ``n_neighbors`` nearest training samples.

        {query_params}

        {proba_returns}
        """
        idx, _ = self.kneighbors(X)
        return class_votes(idx, self._fit_y, len(self.classes_)) / float(self.n_neighbors)


class KNNRegressor(RegressorMixin, _PlainKNN):
    """Plain k-nearest-neighbour regression on the library's neighbour engine.

    scikit-learn's ``KNeighborsRegressor`` with the engine's tie rule for equally distant
    training samples (:class:`KNNClassifier`).

    Parameters
    ----------
    n_neighbors : int, default=5
        Neighbours averaged per prediction.
    weights : {"uniform", "distance"}, default="uniform"
        The neighbours' weights in the mean: equal, or the inverse distance (a query at
        distance 0 from training samples takes their mean).
    metric : {"euclidean", "manhattan", "sqeuclidean"}, default="euclidean"
        The distance.

    Attributes
    ----------
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.classifiers import KNNRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = [0.0, 1.0, 2.0, 3.0]
    >>> KNNRegressor(n_neighbors=2).fit(X, y).predict([[0.4]]).tolist()
    [0.5]
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "weights": [StrOptions({"uniform", "distance"})],
        "metric": [StrOptions(set(_SEARCH_METRIC))],
    }

    def __init__(self, n_neighbors=5, weights="uniform", metric="euclidean"):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric

    def _training_set(self, X, y):
        validate_params(self)
        X, y = validate_training_data(self, X, y, ensure_min_samples=1, y_numeric=True)
        return X, np.asarray(y, dtype=np.float64)

    @method_doc
    def predict(self, X):
        """The (inverse-distance weighted) mean target of each query's ``n_neighbors`` nearest.

        {query_params}

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Predicted targets.
        """
        idx, dist = self.kneighbors(X)
        Y = self._fit_y[idx]
        if self.weights == "uniform":
            return Y.mean(axis=1)
        with np.errstate(divide="ignore"):
            W = 1.0 / dist
        exact = ~np.isfinite(W)
        at_zero = exact.any(axis=1)
        W[at_zero] = exact[at_zero].astype(np.float64)  # a sample at distance 0: those samples alone
        return np.sum(W * Y, axis=1) / np.sum(W, axis=1)


def _knn_metric(weighter):
    """The kNN metric of a fitted weighter's ``metric_`` on its ``transform``: Manhattan for L1
    methods, Euclidean for squared-Euclidean ones (the same ranking)."""
    return "manhattan" if getattr(weighter, "metric_", "manhattan") == "manhattan" else "euclidean"


class _WeightedPlainKNN(BaseEstimator):
    """A weighter fitted on the training data, then a plain kNN (:meth:`_plain_knn`) on its ``transform``."""

    #: the ``target_type`` set on a weighter that has one (``None``: the weighter's own)
    _target_type = None

    @method_doc
    def fit(self, X, y, covariates=None):
        """Fit the weighter on ``(X, y)``, then the plain kNN on its ``transform``.

        For the regression (:class:`WeightedKNNRegressor`) a weighter with a ``target_type``
        parameter is set to ``"continuous"``.

        {fit_X}
        y : array-like of shape (n_samples,)
            Class labels, or continuous targets for the regression; the weighter learns its
            weights from them too.
        covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
            Passed to the weighter's ``fit`` (the Relief family adjusts its p-values for them);
            the kNN's distances use ``X`` alone, so ``predict`` needs no covariates.

        {fit_returns}
        """
        validate_params(self)
        self.weighter_ = clone(self.weighter)
        if self._target_type is not None and "target_type" in self.weighter_.get_params():
            self.weighter_.set_params(target_type=self._target_type)
        if covariates is None:
            self.weighter_.fit(X, y)
        else:
            self.weighter_.fit(X, y, covariates=covariates)
        self.knn_ = self._plain_knn(_knn_metric(self.weighter_)).fit(self.weighter_.transform(X), y)
        if hasattr(self.knn_, "classes_"):
            self.classes_ = self.knn_.classes_
        self.n_features_in_ = self.weighter_.n_features_in_
        return self

    def _weighted(self, X):
        """The queries ``X`` in the fitted weighter's ``transform``."""
        check_is_fitted(self, "knn_")
        return self.weighter_.transform(X)


class WeightedKNN(_MajorityVote, _WeightedPlainKNN):
    """Weighted kNN: fit ``weighter`` on the training data, then kNN on its ``transform``.

    The kNN uses the weighter's ``metric_`` (Manhattan for L1 methods, squared
    Euclidean, i.e. Euclidean ranking, for L2sq methods), so its neighbours are those
    of the weighted distance ``d_w``.  The weighter is fitted on the data given to
    ``fit`` only (inside cross-validation: the training folds).

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter (anything with ``fit``, ``transform``, ``metric_``).
    n_neighbors : int, default=5
        Neighbours voting (scikit-learn's default; the papers' 1-NN is
        ``n_neighbors=1``).

    Attributes
    ----------
    weighter_ : fitted clone of ``weighter``
    knn_ : fitted :class:`KNNClassifier`
    classes_ : ndarray
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit", "transform"])],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, weighter, n_neighbors=5):
        self.weighter = weighter
        self.n_neighbors = n_neighbors

    def _plain_knn(self, metric):
        return KNNClassifier(n_neighbors=self.n_neighbors, metric=metric)

    @method_doc
    def predict_proba(self, X):
        """Class probabilities of the kNN vote: each class's share of the ``n_neighbors`` nearest.

        {weighted_query_params}

        {proba_returns}
        """
        X = self._weighted(X)  # checks the fit first
        return self.knn_.predict_proba(X)


class WeightedKNNRegressor(RegressorMixin, _WeightedPlainKNN):
    """Weighted kNN regression: fit ``weighter`` on the training data, then kNN regression on its ``transform``.

    The regression twin of :class:`WeightedKNN`: the prediction is the mean target of the
    ``n_neighbors`` nearest training samples under the weighted distance ``d_w`` (the
    weighter's ``metric_``: Manhattan for L1 methods, Euclidean ranking for L2sq methods).
    The weighter must accept a continuous target (``knnweights.REGRESSION_WEIGHTERS``):
    :class:`~knnweights.MLKRDiagonal`, or :class:`~knnweights.ReliefF`, :class:`~knnweights.Relief`,
    :class:`~knnweights.SURF`, :class:`~knnweights.MultiSURF`, :class:`~knnweights.IRelief`
    (continuous ``y`` detected, or ``target_type="continuous"``).

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter with a continuous-target definition.
    n_neighbors : int, default=5
        Neighbours averaged per prediction: more smooths the prediction, fewer follows
        local structure.
    weights : {"uniform", "distance"}, default="uniform"
        The neighbours' weights in the mean (:class:`KNNRegressor`).

    Attributes
    ----------
    weighter_ : fitted clone of ``weighter``
    knn_ : fitted :class:`KNNRegressor`

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import MLKRDiagonal, WeightedKNNRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 6)); y = X[:, 0] + 0.1 * rng.normal(size=100)
    >>> WeightedKNNRegressor(MLKRDiagonal()).fit(X, y).score(X, y) > 0.8
    True
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit", "transform"])],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "weights": [StrOptions({"uniform", "distance"})],
    }

    _target_type = "continuous"

    def __init__(self, weighter, n_neighbors=5, weights="uniform"):
        self.weighter = weighter
        self.n_neighbors = n_neighbors
        self.weights = weights

    def _plain_knn(self, metric):
        return KNNRegressor(n_neighbors=self.n_neighbors, weights=self.weights, metric=metric)

    @method_doc
    def predict(self, X):
        """Predict the target of each row of ``X``.

        {weighted_query_params}

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Mean target of each query's ``n_neighbors`` nearest training samples (weighted
            by inverse distance when ``weights="distance"``).
        """
        X = self._weighted(X)  # checks the fit first
        return self.knn_.predict(X)
