"""I-M4E's expected-distance classification rule (Bei & Hong, eq. 10)."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..engine.neighbors import distance_chunks
from ..utils import HasMethods, Interval
from ..weighters._validation import validate_query_data
from ._base import method_doc, validate_training_set

__all__ = ["ExpectedDistanceClassifier", "expected_class_distances"]


def expected_class_distances(D, codes, n_classes, sigma):
    """``Psi[q, c] = sum_{y_n = c} P_n^c d(x_n, x'_q)`` of eq. (10), in log space.

    ``P^c`` is the softmax over the training samples of class ``c`` of ``-D[q, n] / sigma``:
    the class's soft nearest neighbour of the query.  The row maximum is subtracted
    before exponentiating, so ``sigma`` may be tiny (``Psi_c`` then tends to the distance
    to the nearest sample of class ``c``).

    Parameters
    ----------
    D : ndarray of shape (n_queries, n_train)
        Weighted distances.
    codes : ndarray of shape (n_train,)
        Class codes ``0..n_classes-1``.
    n_classes : int
        Number of classes.
    sigma : float
        Kernel width of the soft nearest neighbour.

    Returns
    -------
    psi : ndarray of shape (n_queries, n_classes)
        The expected distances; ``inf`` for a class with no sample.
    """
    psi = np.full((D.shape[0], n_classes), np.inf)
    for c in range(n_classes):
        Dc = D[:, codes == c]
        if Dc.shape[1] == 0:
            continue
        logits = Dc * (-1.0 / sigma)
        logits -= logits.max(axis=1, keepdims=True)
        with np.errstate(under="ignore"):
            p = np.exp(logits)
        psi[:, c] = np.einsum("qn,qn->q", p, Dc) / p.sum(axis=1)
    return psi


class ExpectedDistanceClassifier(ClassifierMixin, BaseEstimator):
    """Expected-distance rule of I-M4E (Bei & Hong, Sec. 4, eq. 10).

    A query ``x'`` goes to the class of smallest expected distance

        y' = argmin_c Psi_c,   Psi_c = sum_{y_n = c} P_n^c d_w(x_n, x'),
        P_n^c = exp(-d_w(x_n, x') / sigma) / sum_{y_k = c} exp(-d_w(x_k, x') / sigma),

    with ``d_w`` the weighted Manhattan distance.  As ``sigma -> 0`` ``Psi_c`` becomes the
    distance to the nearest sample of class ``c`` and the rule becomes 1-NN; as
    ``sigma -> inf`` it becomes the mean distance to each class.

    Parameters
    ----------
    sigma : float, default=1.0
        Kernel width (the paper uses I-M4E's ``sigma``).
    weights : None, array-like of shape (n_features,) or weighter, default=None
        ``None``: unweighted Manhattan.  An array: the feature weights.  A weighter
        (e.g. :class:`knnweights.IM4E`): if it is already fitted (has
        ``feature_importances_``) its weights are used as they are; otherwise a clone is
        fitted on the data given to ``fit`` (so inside cross-validation the weights come
        from the training folds only).

    Attributes
    ----------
    weights_ : ndarray of shape (n_features,)
    weighter_ : fitted weighter or None
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    References
    ----------
    Y. Bei and P. Hong, "Maximizing margin quality and quantity", IEEE MLSP 2013, eq. (10).

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.classifiers import ExpectedDistanceClassifier
    >>> X = np.array([[0.0, 0], [0, 1], [5, 5], [5, 6]]); y = [0, 0, 1, 1]
    >>> ExpectedDistanceClassifier(sigma=0.5).fit(X, y).predict([[0.2, 0.4], [4.0, 5.5]])
    array([0, 1])
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "weights": [None, "array-like", HasMethods(["fit"])],
    }

    def __init__(self, sigma=1.0, weights=None):
        self.sigma = sigma
        self.weights = weights

    def _resolve_weights(self, X, y):
        d = X.shape[1]
        self.weighter_ = None
        wt = self.weights
        if wt is None:
            return np.ones(d)
        if hasattr(wt, "fit") and not isinstance(wt, np.ndarray):
            if hasattr(wt, "feature_importances_"):
                self.weighter_ = wt
            else:
                self.weighter_ = clone(wt).fit(X, y)
            w = np.asarray(self.weighter_.feature_importances_, dtype=np.float64)
        else:
            w = np.asarray(wt, dtype=np.float64)
        if w.shape != (d,):
            raise ValueError(f"weights must have shape ({d},) (one per feature), got {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("weights must be finite and non-negative")
        return w

    @method_doc
    def fit(self, X, y):
        """Store the training data and resolve the feature weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples; kept, since every prediction compares a query with all of them.
        y : array-like of shape (n_samples,)
            Class labels of the training samples.

        {fit_returns}
        """
        X, y, self._codes = validate_training_set(self, X, y)
        self.weights_ = self._resolve_weights(X, y)
        self.X_fit_ = X
        return self

    @method_doc
    def expected_distances(self, X):
        """``Psi_c`` of eq. (10) for every query and class.

        {query_params}

        Returns
        -------
        psi : ndarray of shape (n_queries, n_classes)
            Expected weighted distance of each query to each class of ``classes_``.
        """
        check_is_fitted(self, "X_fit_")
        X = validate_query_data(self, X, dtype=np.float64)
        out = np.empty((X.shape[0], len(self.classes_)))
        for s, e, D in distance_chunks(X, self.X_fit_, self.weights_, "manhattan", n_arrays=3):
            out[s:e] = expected_class_distances(D, self._codes, len(self.classes_), float(self.sigma))
        return out

    @method_doc
    def decision_function(self, X):
        """``-Psi`` (larger is more likely); for two classes the score of ``classes_[1]``.

        {query_params}

        Returns
        -------
        scores : ndarray of shape (n_queries,) or (n_queries, n_classes)
            ``Psi_0 - Psi_1`` for two classes (positive favours ``classes_[1]``), else
            ``-Psi`` per class, as scikit-learn's scorers expect.
        """
        psi = self.expected_distances(X)
        if len(self.classes_) == 2:
            return psi[:, 0] - psi[:, 1]
        return -psi

    @method_doc
    def predict(self, X):
        """The class of smallest expected distance (eq. 10).

        {query_params}

        {label_returns}
        """
        psi = self.expected_distances(X)
        return self.classes_[np.argmin(psi, axis=1)]
