"""Accuracy against the number of top-ranked features (Li, Gao & Chen 2012, Fig. 2).

On each cross-validation fold the weighter is fitted on the training part only, the
features are ranked by its weights, and a classifier (by default the paper's linear SVM,
``C = 1``, LIBSVM through :class:`sklearn.svm.SVC`) is trained on the top ``m`` features
of the training part and scored on the test part, for every ``m`` of a grid.
"""

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.svm import SVC
from sklearn.utils import Bunch

from .preprocessing import make_scaler

__all__ = ["feature_order", "top_feature_curve"]


def feature_order(weights):
    """Feature indices from the largest weight down (ties: lower index first).

    Parameters
    ----------
    weights : array-like of shape (n_features,)
        Feature weights.

    Returns
    -------
    order : ndarray of int, shape (n_features,)
        ``order[:m]`` are the ``m`` top-ranked features.
    """
    w = np.asarray(weights, dtype=np.float64)
    return np.lexsort((np.arange(w.size), -w))


def _fold_scores(weighter, classifier, scaler, X, y, train, test, grid):
    Xtr, Xte = X[train], X[test]
    if scaler is not None:
        sc = clone(scaler).fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    w = clone(weighter).fit(Xtr, y[train]).feature_importances_
    order = feature_order(w)
    out = np.empty(len(grid))
    for g, m in enumerate(grid):
        top = order[:m]
        out[g] = clone(classifier).fit(Xtr[:, top], y[train]).score(Xte[:, top], y[test])
    return out, w


def top_feature_curve(weighter, X, y, n_features_grid, cv=5, classifier=None, random_state=None, n_jobs=None,
                      scaler="minmax"):
    """Cross-validated accuracy of a classifier on the top ``m`` features of a weighter.

    Parameters
    ----------
    weighter : estimator with ``feature_importances_``
        Cloned and fitted on the training folds only.
    X : array-like of shape (n, d)
        Samples.
    y : array-like of shape (n,)
        Class labels; the default folds are stratified on them.
    n_features_grid : sequence of int
        The numbers ``m`` of top-ranked features (values above ``d`` are clipped to ``d``).
    cv : int or cross-validation splitter, default=5
        An int gives :class:`~sklearn.model_selection.StratifiedKFold` with shuffling
        (``random_state``); the paper uses 5-fold cross-validation.
    classifier : classifier, default=None
        ``None``: ``SVC(kernel="linear", C=1.0)``, the paper's linear LIBSVM with ``C = 1``.
    random_state : int or None
        Shuffles the folds.
    n_jobs : int or None
        Folds in parallel (joblib; any backend).
    scaler : "minmax", transformer or None, default="minmax"
        Fitted on each training part and applied to both parts before the weighter and
        the classifier; ``"minmax"`` scales every feature to [0, 1] (LIBSVM's advised
        practice; the paper does not say how it scaled).  ``None``: raw features.

    Returns
    -------
    result : Bunch
        ``n_features`` (the grid), ``scores`` (n_folds, n_grid) accuracies, ``mean`` and
        ``std`` over the folds, and ``weights`` (n_folds, d), each fold's weights.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    d = X.shape[1]
    grid = np.array([min(int(m), d) for m in n_features_grid])
    if np.any(grid < 1):
        raise ValueError("n_features_grid must hold positive integers.")
    if classifier is None:
        classifier = SVC(kernel="linear", C=1.0)
    if isinstance(scaler, str):
        if scaler != "minmax":
            raise ValueError(f"scaler must be 'minmax', a transformer or None, got {scaler!r}.")
        scaler = make_scaler(scaler)
    if isinstance(cv, int):
        cv = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    cv = check_cv(cv, y, classifier=True)
    res = Parallel(n_jobs=n_jobs)(
        delayed(_fold_scores)(weighter, classifier, scaler, X, y, tr, te, grid) for tr, te in cv.split(X, y))
    scores = np.vstack([r[0] for r in res])
    return Bunch(n_features=grid, scores=scores, mean=scores.mean(axis=0), std=scores.std(axis=0),
                 weights=np.vstack([r[1] for r in res]))
