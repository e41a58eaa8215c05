"""Weighted kNN: a weighter followed by plain kNN with the matching metric, and the kNN vote itself.

The vote is one implementation, used by :class:`WeightedKNN`, by :func:`predict_weighted_knn`
(SQP-FW's theta selection and its reproduction) and by the top-m curves of
:mod:`knnweights.evaluation.compare`: :func:`class_votes` counts the classes of the ``k`` nearest
candidates with an explicit rule for equally distant ones, :func:`majority_class` picks the class
of most votes (a tie goes to the lowest class code, scikit-learn's rule).  :class:`WeightedKNN`
takes its votes from scikit-learn's neighbour search (which decides between equally distant
samples itself), :func:`predict_weighted_knn` from per-class neighbour lists (equal distances go
to the lower class), the top-m curves from all training samples (equal distances go to the lower
training index).
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.utils.validation import check_is_fitted

from ..engine.neighbors import nearest_by_class
from ..utils import HasMethods, Interval, StrOptions, validate_params

__all__ = ["WeightedKNN", "WeightedKNNRegressor", "class_votes", "majority_class", "predict_weighted_knn",
           "predict_weighted_knn_ks"]

_TIES = ("order", "class")


def class_votes(dist, codes, n_neighbors, n_classes, ties="order"):
    """Votes of the ``n_neighbors`` nearest candidates of each query, per class.

    Parameters
    ----------
    dist : ndarray of shape (n_queries, m)
        Distances from each query to its ``m`` candidate neighbours.
    codes : ndarray of shape (m,) or (n_queries, m)
        The candidates' class codes, ``0 .. n_classes - 1``.
    n_neighbors : int
        Neighbours voting (at most ``m``).
    n_classes : int
        Number of classes (the length of each row of ``votes``).
    ties : {"order", "class"}, default="order"
        Which of equally distant candidates is nearer: ``"order"`` the earlier column (the lower
        training index when the columns are the training samples in order); ``"class"`` the lower
        class code, then the earlier column.

    Returns
    -------
    votes : ndarray of shape (n_queries, n_classes)
        How many of the ``n_neighbors`` nearest are of each class.
    """
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
    dist = np.asarray(dist)
    codes = np.broadcast_to(np.asarray(codes), dist.shape)
    nq = dist.shape[0]
    if ties == "order":
        order = np.argsort(dist, axis=1, kind="stable")
    else:  # lexsort is stable: equal (distance, class) keep the column order
        order = np.lexsort((codes, dist), axis=1)
    nearest = np.take_along_axis(codes, order[:, :int(n_neighbors)], axis=1)
    votes = np.zeros((nq, int(n_classes)))
    np.add.at(votes, (np.arange(nq)[:, None], nearest), 1.0)
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


def predict_weighted_knn(X_train, codes_train, X_query, w, n_neighbors, n_classes, classes):
    """Majority vote of the ``n_neighbors`` nearest training samples under ``d_w`` (L2sq).

    Equally distant neighbours go to the lower class, then to the lower training index (each
    class's list of :func:`~knnweights.engine.neighbors.nearest_by_class` is sorted by distance,
    ties by index); a tie of votes goes to the lower class.

    Parameters
    ----------
    X_train : ndarray of shape (n_train, n_features)
        Training samples.
    codes_train : ndarray of shape (n_train,)
        Their class codes, ``0 .. n_classes - 1``.
    X_query : ndarray of shape (n_queries, n_features)
        Samples to classify.
    w : ndarray of shape (n_features,)
        Feature weights of the distance ``sum_f w_f (x_f - z_f)^2``.
    n_neighbors : int
        Neighbours voting.
    n_classes : int
        Number of classes.
    classes : array-like of shape (n_classes,)
        The class labels, in code order.

    Returns
    -------
    y_pred : ndarray of shape (n_queries,)
        Predicted class labels.
    """
    return predict_weighted_knn_ks(X_train, codes_train, X_query, w, (n_neighbors,), n_classes, classes)[0]


def predict_weighted_knn_ks(X_train, codes_train, X_query, w, ks, n_classes, classes):
    """:func:`predict_weighted_knn` for every ``k`` in ``ks`` from one neighbour search.

    The ``k`` nearest samples of a class are the first ``k`` of its ``max(ks)`` nearest (the
    search keeps each class's list sorted by distance, ties by index) and the distances do not
    depend on ``k``, so every prediction is the one of ``predict_weighted_knn(..., k, ...)``,
    bit for bit: one ``O(n_query n_train d)`` distance pass instead of ``len(ks)``.

    Parameters
    ----------
    X_train : ndarray of shape (n_train, n_features)
        Training samples.
    codes_train : ndarray of shape (n_train,)
        Their class codes, ``0 .. n_classes - 1``.
    X_query : ndarray of shape (n_queries, n_features)
        Samples to classify.
    w : ndarray of shape (n_features,)
        Feature weights of the distance ``sum_f w_f (x_f - z_f)^2``.
    ks : sequence of int
        Neighbour counts to predict with.
    n_classes : int
        Number of classes.
    classes : array-like of shape (n_classes,)
        The class labels, in code order.

    Returns
    -------
    predictions : list of ndarray of shape (n_queries,)
        The predicted labels for each ``k`` of ``ks``, in order.
    """
    kmax = int(max(ks))
    _, dist = nearest_by_class(X_query, None, w, kmax, "sqeuclidean", n_classes, XB=X_train, yB=codes_train)
    nq = dist.shape[0]
    out = []
    for k in ks:
        k = int(k)
        # the first k of every class's list, class after class: (n_query, n_classes * k) candidates
        cand = dist[:, :, :k].reshape(nq, -1)
        codes = np.repeat(np.arange(n_classes), k)
        out.append(majority_class(class_votes(cand, codes, k, n_classes, ties="class"), classes))
    return out


def _knn_metric(weighter):
    """scikit-learn's metric for the neighbours of a fitted weighter's ``metric_`` on its ``transform``:
    Manhattan for L1 methods, Euclidean for squared-Euclidean ones (the same ranking)."""
    return "manhattan" if getattr(weighter, "metric_", "manhattan") == "manhattan" else "euclidean"


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
        validate_params(self)
        self.weighter_ = clone(self.weighter).fit(X, y)
        self.knn_ = KNeighborsClassifier(n_neighbors=self.n_neighbors, metric=_knn_metric(self.weighter_))
        self.knn_.fit(self.weighter_.transform(X), y)
        self.classes_ = self.knn_.classes_
        self.n_features_in_ = self.weighter_.n_features_in_
        return self

    def predict(self, X):
        """Predict the class of each row of ``X``: the majority of its ``n_neighbors`` nearest.

        The votes are :meth:`predict_proba`'s (scikit-learn's neighbour search decides between
        equally distant training samples); a tie of votes goes to the first of ``classes_``
        (:func:`majority_class`).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query samples, in the original (unweighted) feature space.

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Majority class of each query's ``n_neighbors`` nearest training samples.
        """
        return majority_class(self.predict_proba(X), self.classes_)

    def predict_proba(self, X):
        """Class probabilities of the kNN vote: each class's share of the ``n_neighbors`` nearest.

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
        validate_params(self)
        self.weighter_ = clone(self.weighter)
        if "target_type" in self.weighter_.get_params():
            self.weighter_.set_params(target_type="continuous")
        self.weighter_.fit(X, y)
        self.knn_ = KNeighborsRegressor(n_neighbors=self.n_neighbors, weights=self.weights,
                                        metric=_knn_metric(self.weighter_))
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
