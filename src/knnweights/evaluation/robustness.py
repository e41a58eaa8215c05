"""Robustness to irrelevant features: error against the number of appended noise features.

The protocol of LH-RELIEF (Cai & Ng, Sec. 3.2 and 3.3, Figs. 1b and 2): append
``0 .. N`` i.i.d. standard-normal features to the data, refit the whole pipeline
(weighter fitted on the training folds only, then the classifier) and record the
cross-validated classification error for each count.
"""

import numbers

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import Bunch, check_random_state

from ..datasets import add_irrelevant_features

__all__ = ["irrelevant_feature_curve", "irrelevant_feature_errors"]


def irrelevant_feature_errors(estimator, X, y, n_noise, cv, noise_seed, cv_seed):
    """Cross-validated errors of ``estimator`` on ``X`` plus ``n_noise`` N(0, 1) features.

    One repeat of :func:`irrelevant_feature_curve`.

    Parameters
    ----------
    estimator : classifier
        Unfitted; a clone is fitted on each training fold.
    X : ndarray of shape (n_samples, n_features)
        The original features.
    y : ndarray of shape (n_samples,)
        Class labels.
    n_noise : int
        Number of N(0, 1) features appended.
    cv : int or cross-validation splitter
        A number of stratified folds (shuffled by ``cv_seed``) or a splitter.
    noise_seed : int
        Seeds the noise features.
    cv_seed : int
        Shuffles the folds when ``cv`` is an int.

    Returns
    -------
    errors : ndarray of shape (n_splits,)
        The error of each fold.
    """
    Xn = add_irrelevant_features(X, n_noise, random_state=noise_seed)
    if isinstance(cv, numbers.Integral):
        splitter = StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=cv_seed)
    else:
        splitter = check_cv(cv, y, classifier=True)
    errors = []
    for train, test in splitter.split(Xn, y):
        est = clone(estimator).fit(Xn[train], y[train])
        errors.append(1.0 - float(np.mean(est.predict(Xn[test]) == y[test])))
    return np.asarray(errors)


def irrelevant_feature_curve(estimator_or_pipeline, X, y, counts, cv=10, n_repeats=10, random_state=None, n_jobs=None):
    """Cross-validated error as standard-normal irrelevant features are appended.

    For every count ``c`` in ``counts`` and every repeat, ``c`` i.i.d. N(0, 1)
    features are appended to ``X`` (:func:`knnweights.datasets.add_irrelevant_features`),
    and the estimator is refitted and scored by ``cv``-fold cross-validation. Pass a
    ``Pipeline(weighter, classifier)`` (or a :class:`~knnweights.classifiers.WeightedKNN`)
    so the weights are learnt on the training folds only.  This is the robustness
    experiment of Cai & Ng (LH-RELIEF, Figs. 1b and 2).

    Several estimators can be compared on the *same* noisy data and folds: pass a dict
    ``{name: estimator}``; the noise and the folds depend only on ``random_state``, the
    count and the repeat.

    Parameters
    ----------
    estimator_or_pipeline : estimator or dict of str -> estimator
        A classifier (``fit``, ``predict``), typically a pipeline of a weighter and a
        classifier.
    X : array-like of shape (n_samples, n_features)
        The original (relevant) features; the noise features are appended after them.
    y : array-like of shape (n_samples,)
        Class labels; the default folds are stratified on them.
    counts : sequence of int
        Numbers of irrelevant features to append (e.g. ``[0, 300, ..., 3000]``).
    cv : int or cross-validation splitter, default=10
        An int gives a shuffled ``StratifiedKFold`` re-drawn on each repeat.
    n_repeats : int, default=10
        Independent repeats (new noise features and new folds) per count.
    random_state : int, RandomState or None
        Seeds the noise and the folds.
    n_jobs : int, default=None
        Parallel jobs over (count, repeat) pairs (joblib; any backend, e.g. dask).

    Returns
    -------
    result : Bunch or dict of str -> Bunch
        A dict (name -> Bunch) when a dict of estimators is given.  Each Bunch holds

        - ``counts``, ndarray of shape (n_counts,): the counts of irrelevant features;
        - ``mean_error``, ndarray of shape (n_counts,): the mean CV error over repeats;
        - ``std_error``, ndarray of shape (n_counts,): the standard deviation over
          repeats of the per-repeat CV error;
        - ``errors``, ndarray of shape (n_counts, n_repeats): the per-repeat CV error
          (mean over folds);
        - ``fold_errors``, ndarray of shape (n_counts, n_repeats, n_splits): the error
          of every fold.

    References
    ----------
    H. Cai and M. Ng, "Feature weighting by RELIEF based on local hyperplane
    approximation", PAKDD 2012, Sec. 3.2-3.3.
    """
    single = not isinstance(estimator_or_pipeline, dict)
    estimators = {"estimator": estimator_or_pipeline} if single else dict(estimator_or_pipeline)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    counts = np.asarray([int(c) for c in counts], dtype=np.int64)
    if counts.size == 0 or (counts < 0).any():
        raise ValueError("counts must be a non-empty sequence of non-negative integers.")
    if not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive integer, got {n_repeats!r}.")
    rng = check_random_state(random_state)
    seeds = rng.randint(0, np.iinfo(np.int32).max, size=(counts.size, n_repeats, 2))
    jobs = [(name, i, r) for name in estimators for i in range(counts.size) for r in range(n_repeats)]
    out = Parallel(n_jobs=n_jobs)(
        delayed(irrelevant_feature_errors)(estimators[name], X, y, int(counts[i]), cv, int(seeds[i, r, 0]),
                                           int(seeds[i, r, 1]))
        for name, i, r in jobs
    )
    pos = {job: p for p, job in enumerate(jobs)}
    results = {}
    for name in estimators:
        fold = np.stack([np.stack([out[pos[(name, i, r)]] for r in range(n_repeats)]) for i in range(counts.size)])
        per_repeat = fold.mean(axis=2)
        results[name] = Bunch(
            counts=counts.copy(),
            mean_error=per_repeat.mean(axis=1),
            std_error=per_repeat.std(axis=1),
            errors=per_repeat,
            fold_errors=fold,
        )
    return results["estimator"] if single else results
