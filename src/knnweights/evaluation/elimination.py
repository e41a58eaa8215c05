"""Feature elimination by weights, with the number of features chosen on training data.

* :class:`HalvingElimination` -- I-M4E's scheme for the gene-expression sets (Bei &
  Hong, Sec. 5.2.1, Table 3): "start from all features, remove the 50 % with the lowest
  rank at a time until fewer than 50 remain; the best number of features is chosen by
  internal 10-fold CV on the training part; the classifier is retrained on all
  training samples with those features".
* Percentage removal chosen on a validation set (SQP-FW's baselines, share 0 %..99 %):
  :class:`~knnweights.evaluation.RemoveLowestWeights` with ``share`` tuned by
  :func:`~knnweights.evaluation.tune` on the validation part
  (``Tuned(weighted_knn(w), {"weighter__share": share_grid(), "n_neighbors": [1, 3, 5]})``).
* Accuracy against the number of top-ranked features (EFW Fig. 2):
  ``knnweights.evaluation.top_feature_curve``.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..classifiers import KNNClassifier, WeightedKNN
from ..selection import fitted_ranking
from ..utils import HasMethods, Interval, check_finite_columns, check_numeric_columns, check_target, validate_params
from .pipelines import cached_fit, fit_cache

__all__ = ["HalvingElimination", "halving_counts", "ranked_subsets"]


def halving_counts(n_features, min_features=50, factor=0.5):
    """Feature counts visited by repeated halving: ``d, floor(d/2), ...`` down to the first below ``min_features``.

    Parameters
    ----------
    n_features : int
        The starting count (all features).
    min_features : int, default=50
        Halving stops at the first count below it; with fewer features to start with,
        the only count is ``n_features``.
    factor : float, default=0.5
        Share of features kept at each step (the next count is ``floor(count * factor)``,
        at least 1).

    Returns
    -------
    counts : list of int
        The counts, decreasing, starting with ``n_features``.

    Examples
    --------
    >>> halving_counts(2000)
    [2000, 1000, 500, 250, 125, 62, 31]
    >>> halving_counts(30)
    [30]
    """
    counts = [int(n_features)]
    while counts[-1] >= min_features:
        nxt = max(1, int(counts[-1] * factor))
        if nxt >= counts[-1]:
            break
        counts.append(nxt)
    return counts


def _top_indices(ranking, k):
    """Indices of the ``k`` best-ranked features, sorted."""
    return np.sort(np.argsort(ranking, kind="stable")[:k])


def ranked_subsets(ranker, X, y, counts, recursive=False):
    """Feature subsets of the given sizes from a ranker's weights.

    Parameters
    ----------
    ranker : estimator with ``feature_importances_`` or ``coef_``
        Unfitted; fitted (a clone, cached) on ``X, y``.
    X : ndarray of shape (n_samples, n_features)
        Training samples.
    y : ndarray of shape (n_samples,)
        Targets.
    counts : list of int
        Subset sizes, decreasing, ``counts[0] = n_features``.
    recursive : bool, default=False
        ``False``: rank once on all features and cut.  ``True``: refit the ranker on
        the surviving features before each cut (as SVM-RFE does).

    Returns
    -------
    subsets : list of ndarray of int
        The kept feature indices (sorted), one array per count.

    Notes
    -----
    Features are cut in the order of :func:`knnweights.selection.fitted_ranking`
    (a weighter's ``ranking_``: weight, then signed score, then column order).
    """
    d = X.shape[1]
    if not recursive:
        r = fitted_ranking(cached_fit(ranker, X, y))
        return [np.arange(d) if k >= d else _top_indices(r, k) for k in counts]
    current = np.arange(d)
    out = [current]
    for k in counts[1:]:
        r = fitted_ranking(cached_fit(ranker, X[:, current], y))
        current = current[_top_indices(r, k)]
        out.append(current)
    return out


def _default_estimator(ranker):
    if hasattr(ranker, "_metric") or hasattr(ranker, "metric_"):
        return WeightedKNN(ranker, n_neighbors=1)
    return KNNClassifier(n_neighbors=1)


class HalvingElimination(ClassifierMixin, SelectorMixin, BaseEstimator):
    """Halve the features by weight until fewer than ``min_features``; pick the count by internal CV.

    Bei & Hong (I-M4E), Sec. 5.2.1: features ranked by the method's weights (SMO by
    SVM-RFE), the lowest-ranked half removed at a time until fewer than 50 remain; the
    number of features with the best internal 10-fold CV accuracy on the training
    part is kept and the classifier retrained on the whole training part.  In the
    internal CV the ranker is refitted on each internal training fold, so the held-out
    fold never influences the ranking.

    Parameters
    ----------
    ranker : estimator
        A weighter (``feature_importances_``) or a linear model (``coef_``; squared
        coefficients rank, as in SVM-RFE).
    estimator : classifier, optional
        Fitted on the selected columns.  Default: ``WeightedKNN(ranker, 1)`` for a
        weighter (the weights retrained on the kept features), else 1-NN.
    min_features : int, default=50
        Halving stops at the first count below it (see :func:`halving_counts`).
    factor : float, default=0.5
        Share of features kept at each step.
    cv : int, default=10
        Internal stratified folds (at most the smallest class size).
    recursive : bool, default=False
        Refit the ranker on the surviving features before each cut (SVM-RFE style);
        the paper does not say whether the weighting methods re-ranked.
    random_state : int, optional
        Shuffles the internal folds.

    Attributes
    ----------
    counts_ : list of int
        Feature counts tried.
    cv_scores_ : ndarray of shape (len(counts_),)
        Mean internal-CV accuracy per count.  When there is only one count (fewer
        than ``min_features`` features to start with) no internal CV is run and the
        single entry is NaN on purpose: there is nothing to choose between.
    n_features_selected_ : int
        The count kept (the best mean accuracy; ties go to fewer features).
    support_ : ndarray of bool, shape (n_features,)
        Mask of the kept features (ranked on the whole training part);
        ``get_support(indices=True)`` gives their indices.
    estimator_ : classifier fitted on the kept features.

    Besides ``predict``, it is a selector in scikit-learn's sense: ``transform``
    returns the kept columns (unscaled), with ``get_support``,
    ``get_feature_names_out`` and ``set_output(transform="pandas")``.
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "ranker": [HasMethods(["fit"])],
        "estimator": [HasMethods(["fit", "predict"]), None],
        "min_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "factor": [Interval(numbers.Real, 0, 1, closed="neither")],
        "cv": [Interval(numbers.Integral, 2, None, closed="left")],
        "recursive": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, ranker, estimator=None, min_features=50, factor=0.5, cv=10, recursive=False,
                 random_state=None):
        self.ranker = ranker
        self.estimator = estimator
        self.min_features = min_features
        self.factor = factor
        self.cv = cv
        self.recursive = recursive
        self.random_state = random_state

    def fit(self, X, y):
        """Choose the feature count by internal CV, then fit on the whole training part.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (numeric, finite).
        y : array-like of shape (n_samples,)
            Class labels; the internal CV is stratified on them.

        Returns
        -------
        self : HalvingElimination
            The fitted selector and classifier.
        """
        validate_params(self)
        check_numeric_columns(X)
        check_finite_columns(X)
        check_target(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        est = self.estimator if self.estimator is not None else _default_estimator(self.ranker)
        counts = halving_counts(X.shape[1], self.min_features, self.factor)
        self.counts_ = counts
        self.classes_ = np.unique(y)
        with fit_cache():
            if len(counts) == 1:
                self.cv_scores_ = np.array([np.nan])
                best = 0
            else:
                smallest = int(np.unique(y, return_counts=True)[1].min())
                n_splits = min(self.cv, smallest)
                if n_splits < 2:
                    raise ValueError(f"the internal CV needs at least 2 samples per class; the smallest class has "
                                     f"{smallest} sample(s).")
                skf = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=self.random_state)
                scores = np.zeros((n_splits, len(counts)))
                for i, (tr, va) in enumerate(skf.split(X, y)):
                    subsets = ranked_subsets(self.ranker, X[tr], y[tr], counts, self.recursive)
                    for j, S in enumerate(subsets):
                        m = clone(est).fit(X[tr][:, S], y[tr])
                        scores[i, j] = np.mean(m.predict(X[va][:, S]) == y[va])
                self.cv_scores_ = scores.mean(axis=0)
                best = int(np.flatnonzero(self.cv_scores_ >= self.cv_scores_.max() - 1e-12)[-1])
            subsets = ranked_subsets(self.ranker, X, y, counts, self.recursive)
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[subsets[best]] = True
        self.n_features_selected_ = int(subsets[best].shape[0])
        self.estimator_ = clone(est).fit(X[:, self.support_], y)
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def predict(self, X):
        """Predict with the classifier on the kept features.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Query samples with all the original features; the kept ones are selected here.

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Predicted class labels.
        """
        check_is_fitted(self, "estimator_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.estimator_.predict(X[:, self.support_])
