"""A weighter followed by plain kNN with the matching metric."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

__all__ = ["WeightedKNN", "WeightedKNNRegressor"]


class WeightedKNN(ClassifierMixin, BaseEstimator):
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
    knn_ : fitted ``KNeighborsClassifier``
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

    def fit(self, X, y):
        """Fit the weighter and the kNN on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels; the weighter learns its weights from them too.

        Returns
        -------
        self : WeightedKNN
            The fitted classifier.
        """
        self._validate_params()
        self.weighter_ = clone(self.weighter).fit(X, y)
        metric = getattr(self.weighter_, "metric_", "manhattan")
        self.knn_ = KNeighborsClassifier(n_neighbors=self.n_neighbors,
                                         metric="manhattan" if metric == "manhattan" else "euclidean")
        self.knn_.fit(self.weighter_.transform(X), y)
        self.classes_ = self.knn_.classes_
        self.n_features_in_ = self.weighter_.n_features_in_
        return self

    def predict(self, X):
        """Predict the class of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query samples, in the original (unweighted) feature space.

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Majority class of each query's ``n_neighbors`` nearest training samples.
        """
        check_is_fitted(self, "knn_")
        return self.knn_.predict(self.weighter_.transform(X))

    def predict_proba(self, X):
        """Class probabilities of the kNN vote.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query samples, in the original (unweighted) feature space.

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Fraction of each query's neighbours in each class of ``classes_``.
        """
        check_is_fitted(self, "knn_")
        return self.knn_.predict_proba(self.weighter_.transform(X))


class WeightedKNNRegressor(RegressorMixin, BaseEstimator):
    """Weighted kNN regression: fit ``weighter`` on the training data, then kNN regression on its ``transform``.

    The regression twin of :class:`WeightedKNN`: the prediction is the mean target of the
    ``n_neighbors`` nearest training samples under the weighted distance ``d_w`` (the
    weighter's ``metric_``: Manhattan for L1 methods, Euclidean ranking for L2sq methods).
    The weighter must accept a continuous target: :class:`~knnweights.MLKRDiagonal`, or
    :class:`~knnweights.ReliefF`, :class:`~knnweights.Relief`, :class:`~knnweights.SURF`,
    :class:`~knnweights.MultiSURF` (continuous ``y`` detected, or ``target_type="continuous"``).

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter with a continuous-target definition.
    n_neighbors : int, default=5
        Neighbours averaged per prediction: more smooths the prediction, fewer follows
        local structure.
    weights : {"uniform", "distance"}, default="uniform"
        The neighbours' weights in the mean (scikit-learn's ``KNeighborsRegressor``).

    Attributes
    ----------
    weighter_ : fitted clone of ``weighter``
    knn_ : fitted ``KNeighborsRegressor``

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

    def __init__(self, weighter, n_neighbors=5, weights="uniform"):
        self.weighter = weighter
        self.n_neighbors = n_neighbors
        self.weights = weights

    def fit(self, X, y):
        """Fit the weighter and the kNN regression on ``(X, y)``.

        A weighter with a ``target_type`` parameter is set to ``"continuous"``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Continuous targets; the weighter learns its weights from them too.

        Returns
        -------
        self : WeightedKNNRegressor
            The fitted regressor.
        """
        self._validate_params()
        self.weighter_ = clone(self.weighter)
        if "target_type" in self.weighter_.get_params():
            self.weighter_.set_params(target_type="continuous")
        self.weighter_.fit(X, y)
        metric = getattr(self.weighter_, "metric_", "manhattan")
        self.knn_ = KNeighborsRegressor(n_neighbors=self.n_neighbors, weights=self.weights,
                                        metric="manhattan" if metric == "manhattan" else "euclidean")
        self.knn_.fit(self.weighter_.transform(X), np.asarray(y, dtype=np.float64))
        self.n_features_in_ = self.weighter_.n_features_in_
        return self

    def predict(self, X):
        """Predict the target of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query samples, in the original (unweighted) feature space.

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Mean target of each query's ``n_neighbors`` nearest training samples (weighted
            by inverse distance when ``weights="distance"``).
        """
        check_is_fitted(self, "knn_")
        return self.knn_.predict(self.weighter_.transform(X))
