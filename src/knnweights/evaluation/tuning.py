"""Hyper-parameter tuning inside one training set: internal CV or a validation split.

The papers tune on the training part only: I-M4E picks sigma (and ReliefF's ``k``) by
internal cross-validation; LH-RELIEF its ``k`` and HKNN's parameters by 10-fold CV;
SQP-FW picks ``k``, ``(kappa, lambda)`` and theta (its baselines: the share of removed
features) on a separate validation third.  :func:`tune` does either; :class:`Tuned`
carries the grid into :func:`knnweights.evaluation.run_grid`.
"""

import decimal
import numbers

import numpy as np
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold

from .pipelines import fit_cache
from .protocols import derive_seed

__all__ = ["Tuned", "tune", "halving_grid", "share_grid", "log_grid", "set_random_states"]


class Tuned:
    """A method whose hyper-parameters are tuned in each training set.

    Parameters
    ----------
    estimator : classifier
        Unfitted scikit-learn classifier (e.g. from
        :func:`knnweights.evaluation.weighted_knn`).
    param_grid : dict or list of dict
        As for :class:`sklearn.model_selection.GridSearchCV`.
    cv : int, default=10
        Folds of the internal stratified CV (shuffled with the cell's seed) used when
        the protocol has no validation split.
    scoring : str, default="accuracy"
        Scikit-learn scorer name the candidates are compared by (the runner still
        records the test accuracy).
    """

    def __init__(self, estimator, param_grid, cv=10, scoring="accuracy"):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring

    def __repr__(self):
        return f"Tuned({self.estimator!r}, param_grid={self.param_grid!r}, cv={self.cv!r}, scoring={self.scoring!r})"


def set_random_states(estimator, seed):
    """Set every ``random_state`` parameter of ``estimator`` that is ``None`` to an int seed.

    Nested parameters (``weighter__random_state``) get seeds derived from ``seed`` and
    their name, so two components never share a stream by accident.  Parameters
    already set by the user are left as they are.

    Parameters
    ----------
    estimator : estimator
        Modified in place.
    seed : int
        Root seed (non-negative) the parameters' seeds are derived from.

    Returns
    -------
    estimator : estimator
        The same object, now deterministic given ``seed``.
    """

    params = estimator.get_params(deep=True)
    new = {k: derive_seed(seed, k) for k, v in params.items() if k.endswith("random_state") and v is None}
    if new:
        estimator.set_params(**new)
    return estimator


def _inner_cv(cv, y, seed):
    if isinstance(cv, numbers.Integral):
        counts = np.unique(y, return_counts=True)[1]
        n_splits = int(min(cv, counts.min()))
        if n_splits < 2:
            raise ValueError(
                f"internal CV needs at least 2 samples per class in the training part; got {counts.min()}."
            )
        return StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    return cv


def tune(estimator, param_grid, X, y, *, X_val=None, y_val=None, cv=10, scoring="accuracy", random_state=None):
    """Tune ``estimator`` over ``param_grid`` on a training set; return the refitted best.

    Parameters
    ----------
    estimator : classifier
        Unfitted classifier; candidates are clones with the grid's parameters set.
    param_grid : dict or list of dict
        Candidate parameters, as for :class:`sklearn.model_selection.GridSearchCV`.
    X, y : arrays
        The training part.
    X_val, y_val : arrays, optional
        A validation split (SQP-FW protocol).  Each candidate is fitted on ``(X, y)``
        and scored on ``(X_val, y_val)``; the first best candidate in grid order wins
        and is returned as fitted (on ``X, y`` only).
    cv : int or CV splitter, default=10
        Without a validation split: internal stratified ``cv``-fold CV on ``(X, y)``
        (at most the smallest class size folds; shuffled with ``random_state``), then
        the best candidate is refitted on all of ``(X, y)``.
    scoring : str, default="accuracy"
        Scikit-learn scorer name the candidates are compared by.
    random_state : int, optional
        Seeds the internal CV split.

    Returns
    -------
    best_estimator : fitted classifier
        The best candidate, fitted on ``(X, y)`` only.
    best_params : dict
        Its parameters from ``param_grid``.
    best_score : float
        Validation score or mean internal-CV score of the best candidate.

    Notes
    -----
    Weighter fits are cached within the call (:func:`~knnweights.evaluation.fit_cache`),
    so a grid over classifier parameters or the removed share refits the weighter once
    per training set.
    """
    grid = ParameterGrid(param_grid)
    inner = None if X_val is not None else _inner_cv(cv, y, random_state)
    # GridSearchCV runs every fold of one candidate before the next candidate: the cache must
    # hold one fit per (weighter setting, fold), or a grid that also varies classifier
    # parameters refits the weighter for every candidate (LRU eviction on a cycle of folds)
    n_fits = 1 if inner is None else inner.get_n_splits(X, y)
    with fit_cache(maxsize=max(8, len(grid) * n_fits + 1)):
        if X_val is not None:
            scorer = check_scoring(estimator, scoring=scoring)
            best = (None, None, -np.inf)
            for params in grid:
                est = clone(estimator).set_params(**params).fit(X, y)
                score = float(scorer(est, X_val, y_val))
                if score > best[2]:
                    best = (est, params, score)
            return best
        search = GridSearchCV(clone(estimator), param_grid, scoring=scoring, cv=inner,
                              n_jobs=1, refit=True, error_score="raise")
        search.fit(X, y)
        return search.best_estimator_, search.best_params_, float(search.best_score_)


def halving_grid(start=1.0, stop=1e-4, include_first_below=False):
    """``start, start/2, start/4, ...`` while ``>= stop`` (I-M4E's and LOGO's sigma grid).

    I-M4E (Sec. 5.2): "starting at 1 and halving until the value of sigma_i is smaller
    than 0.0001": 1, 1/2, ..., 2^-13 (14 values); ``include_first_below=True`` also
    takes 2^-14, the first value below ``stop`` (the wording allows both).

    Parameters
    ----------
    start : float, default=1.0
        First (largest) value.
    stop : float, default=1e-4
        Halving stops at the first value below it.
    include_first_below : bool, default=False
        Also take that first value below ``stop``.

    Returns
    -------
    grid : list of float
        The values, decreasing.
    """
    out = []
    v = float(start)
    while v >= stop:
        out.append(v)
        v /= 2.0
    if include_first_below:
        out.append(v)
    return out


def share_grid(step=0.01, stop=0.99):
    """Shares of lowest-weight features removed: ``0, step, ..., stop`` (SQP-FW baselines: 0 %..99 %).

    For the ``share`` of :class:`~knnweights.evaluation.RemoveLowestWeights`.

    Parameters
    ----------
    step : float, default=0.01
        Spacing of the shares.
    stop : float, default=0.99
        Largest share (below 1: at least one feature is always kept).

    Returns
    -------
    grid : list of float
        The shares, increasing from 0, rounded to 10 decimals.
    """
    n = int(np.floor(stop / step + 1e-9))
    return [round(i * step, 10) for i in range(n + 1) if round(i * step, 10) <= stop]


def log_grid(low=1e-3, high=1e2, num=100):
    """``num`` values evenly spaced in log scale from ``low`` to ``high`` (SQP-FW's theta grid).

    The values of ``np.logspace(np.log10(low), np.log10(high), num)``, each correctly
    rounded: the logarithms and powers are computed in exact decimal arithmetic, not by
    NumPy's CPU-dispatched ``log10`` and ``power``, whose last bit differs between CPUs.
    A grid is a parameter (it enters a stored cell's fingerprint), so it has the same
    bits on every machine.

    Parameters
    ----------
    low : float, default=1e-3
        First value (positive).
    high : float, default=1e2
        Last value.
    num : int, default=100
        Number of values.

    Returns
    -------
    grid : list of float
        The values, from ``low`` to ``high`` inclusive.
    """
    num = int(num)
    if not (low > 0 and high > 0) or num < 0:
        raise ValueError(f"log_grid needs low > 0, high > 0 and num >= 0, got {low!r}, {high!r}, {num!r}.")
    with decimal.localcontext() as ctx:
        ctx.prec = 50  # far beyond a double's 17 digits: rounding to float is then correct
        start, stop = (float(decimal.Decimal(v).log10()) for v in (low, high))
        # np.linspace's exponents: i * step + start, the last one stop (IEEE * and +: the same bits everywhere)
        step = (stop - start) / (num - 1) if num > 1 else 0.0
        exps = [i * step + start for i in range(num - 1)] + [stop] if num > 1 else [start] * num
        return [float(decimal.Decimal(10) ** decimal.Decimal(e)) for e in exps]
