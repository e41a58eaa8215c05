"""A weighter followed by plain kNN with the matching metric."""

import numbers

from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

__all__ = ["WeightedKNN"]


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
        """Fit the weighter and the kNN on ``(X, y)``."""
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
        """Predict the class of each row of ``X``."""
        check_is_fitted(self, "knn_")
        return self.knn_.predict(self.weighter_.transform(X))

    def predict_proba(self, X):
        """Class probabilities of the kNN vote."""
        check_is_fitted(self, "knn_")
        return self.knn_.predict_proba(self.weighter_.transform(X))
