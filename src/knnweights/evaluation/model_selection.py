"""Choosing a weighter's regularisation by the error of the weighted kNN it feeds.

* :func:`sqpfw_path_errors`: the validation error of the weighted kNN at every theta of one
  SQP-FW regularisation path and every ``k`` (the one implementation of SQP-FW's theta
  selection); :func:`select_theta` picks theta from it.
* :func:`select_C`: soft MDM's ``C`` by stratified internal cross-validation.
"""

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from ..classifiers import WeightedKNN, predict_weighted_knn_ks
from ..utils import fill_docstring
from ..weighters.mdm import MDM
from ..weighters.sqpfw import SQPFW

__all__ = ["sqpfw_path_errors", "select_theta", "select_C"]

#: SQP-FW's theta grid: the paper's 100 log-spaced values in [1e-3, 100]
_PAPER_THETAS = (-3, 2, 100)

#: the training and validation parts of SQP-FW's theta selection: ``{train_val}`` in a docstring
_train_val_doc = fill_docstring(train_val="""X_train : array-like of shape (n_train, n_features)
    Training samples the path is fitted on.
y_train : array-like of shape (n_train,)
    Their class labels.
X_val : array-like of shape (n_val, n_features)
    Validation samples the weighted kNN is scored on.
y_val : array-like of shape (n_val,)
    Their class labels.""")


@_train_val_doc
def sqpfw_path_errors(X_train, y_train, X_val, y_val, thetas, ks=(1,), **params):
    """Weighted-kNN error on a validation part at every theta of one SQP-FW path and every ``k``.

    One regularisation path (:meth:`knnweights.SQPFW.path`) on the training part gives the
    weights at every theta, so the grid costs one fit rather than one per value.  The kNN is
    :func:`knnweights.classifiers.predict_weighted_knn_ks` (squared Euclidean distance under
    the weights, equal distances to the lower training index, a tie of votes to the lower
    class): one neighbour search per distinct weight vector serves every ``k``, and thetas
    whose weights are equal (e.g. past the path's last breakpoint) share it.

    Parameters
    ----------
    {train_val}
    thetas : array-like of shape (n_thetas,)
        Theta values; the path is traced up to ``max(thetas)``.
    ks : sequence of int, default=(1,)
        Neighbours of the weighted kNN vote.
    **params : dict
        Parameters of the :class:`~knnweights.SQPFW` whose path is traced (``kappa``,
        ``lambda_``, ``max_breakpoints``, ...).

    Returns
    -------
    errors : ndarray of shape (n_thetas, n_ks)
        Validation error rate at each theta and ``k``.
    weights : ndarray of shape (n_thetas, n_features)
        The path's weights at each theta.
    path : SQPFWPath
        The fitted path.
    """
    thetas = np.asarray(thetas, dtype=np.float64)
    est = SQPFW(**params)
    path = est.path(X_train, y_train, thetas)
    W = path(thetas)
    classes = est.classes_
    codes = np.searchsorted(classes, np.asarray(y_train))
    Xt, Xv = np.asarray(X_train, dtype=np.float64), np.asarray(X_val, dtype=np.float64)
    yv = np.asarray(y_val)
    errors = np.empty((thetas.size, len(ks)))
    seen = {}
    for t, w in enumerate(W):
        key = w.tobytes()
        if key in seen:
            errors[t] = errors[seen[key]]
            continue
        seen[key] = t
        for j, pred in enumerate(predict_weighted_knn_ks(Xt, codes, Xv, w, ks, len(classes), classes)):
            errors[t, j] = np.mean(pred != yv)
    return errors, W, path


@_train_val_doc
def select_theta(X_train, y_train, X_val, y_val, thetas=None, n_neighbors=1, **params):
    """Choose SQP-FW's theta by the validation error of the weighted kNN along the path.

    Parameters
    ----------
    {train_val}
    thetas : array-like, default=None
        Candidate values; ``None``: the paper's 100 log-spaced values in ``[1e-3, 100]``.
    n_neighbors : int, default=1
        Neighbours of the weighted kNN vote.
    **params : dict
        Parameters of the :class:`~knnweights.SQPFW` whose path is traced (e.g. ``kappa``).

    Returns
    -------
    best_theta : float
        The value of smallest validation error; ties go to the earliest in ``thetas``
        (the smallest theta for an increasing grid).
    errors : ndarray of shape (n_thetas,)
        Validation error rate at each theta of ``thetas``.
    path : SQPFWPath
        The fitted path (see :meth:`knnweights.SQPFW.path`).
    """
    thetas = np.logspace(*_PAPER_THETAS) if thetas is None else np.asarray(thetas, dtype=np.float64)
    errors, _, path = sqpfw_path_errors(X_train, y_train, X_val, y_val, thetas, (n_neighbors,), **params)
    errors = errors[:, 0]
    return float(thetas[int(np.argmin(errors))]), errors, path


def select_C(X, y, Cs=None, cv=5, n_neighbors=1, scoring="accuracy", n_jobs=None, random_state=None, **mdm_params):
    """Choose soft MDM's ``C`` by stratified internal cross-validation of a weighted kNN.

    A grid ``Cs`` (default 7 values log-spaced from ``10**-3`` to ``1``; any ``C >= 1``
    gives the hard-MDM optimum, so larger values add nothing), each scored by
    ``WeightedKNN(MDM(soft=True, C=C), n_neighbors)`` under
    ``StratifiedKFold(cv, shuffle=True, random_state)``; ties go to the smaller ``C``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        Their class labels.
    Cs : sequence of float, default=None
        Candidate values of ``C``; ``None``: ``numpy.logspace(-3, 0, 7)``.
    cv : int, default=5
        Folds of the stratified cross-validation.
    n_neighbors : int, default=1
        Neighbours of the weighted kNN vote.
    scoring : str, default="accuracy"
        Scikit-learn scorer the candidates are compared by.
    n_jobs : int, default=None
        Parallel fits of the grid search (joblib).
    random_state : int, RandomState or None
        Seeds the folds' shuffle.
    **mdm_params : dict
        Other :class:`~knnweights.MDM` parameters (``lazy``, ``tol``, ...).

    Returns
    -------
    best_C : float
        The value of best mean score.
    search : GridSearchCV
        The fitted search (``cv_results_`` per ``C``; ``best_estimator_`` is the weighted
        kNN refitted on all of ``X`` with ``best_C``).
    """
    Cs = np.logspace(-3, 0, 7) if Cs is None else np.asarray(Cs, dtype=float)
    model = WeightedKNN(MDM(soft=True, **mdm_params), n_neighbors=n_neighbors)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    search = GridSearchCV(model, {"weighter__C": list(np.sort(Cs))}, cv=folds, scoring=scoring, n_jobs=n_jobs)
    search.fit(X, y)
    return float(search.best_params_["weighter__C"]), search
