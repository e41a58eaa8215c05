"""Weighted kNN with the weighter, the number of features kept and ``k`` chosen by an inner CV.

:class:`AutoWeightedKNN` searches a grid of (weighter, features kept, ``k``) by cross-validation
on the rows given to ``fit``, then refits the best configuration on all of them.  The search
shares work: each candidate weighter is fitted once per inner training fold, its ranking and
weights serve every number of features kept, and one neighbour search of the ``max(k)``
nearest serves every ``k`` (the ``k`` nearest are the first ``k`` of that sorted list).

Covariates (``fit(X, y, covariates=C)``) are adjusted for, not predictors: they go to the
candidates whose fits give p-values (the Relief family), whose ``q <= max_qvalue`` configuration
then keeps the features significant beyond the covariates; the distances, the weights and the
fitted model use ``X`` alone.
"""

import inspect
import numbers

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.impute import SimpleImputer
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..classifiers import KNNClassifier, KNNRegressor, WeightedKNN, WeightedKNNRegressor
from ..classifiers._weighted_knn import class_votes, majority_class
from ..engine.neighbors import nearest
from ..selection import fitted_ranking, fitted_weights
from ..utils import HasMethods, Interval, format_label, progress_bar, validate_params
from ..weighters import REGRESSION_WEIGHTERS, WEIGHTERS
from ..weighters._relief_covariates import check_covariates
from ..weighters._validation import is_continuous_target, validate_query_data, validate_training_data
from .pipelines import RemoveLowestWeights
from .preprocessing import make_scaler
from .protocols import derive_seed, root_seed
from .tuning import log_grid, set_random_states

__all__ = ["AutoWeightedKNN", "DEFAULT_WEIGHTERS", "DEFAULT_NEIGHBORS", "feature_count_grid", "fit_with_covariates",
           "selection_pipeline"]

#: the default candidates: fast, diverse weighters (Relief family, margin, probabilistic) and no weighting
DEFAULT_WEIGHTERS = ("ReliefF", "MultiSURF", "IRelief", "Simba", "NCADiagonal", None)

#: the default grid of ``k`` (odd, so that two classes never tie)
DEFAULT_NEIGHBORS = (1, 3, 5, 7, 11, 15)

#: the label of the candidate without weighting (plain kNN on all features)
NO_WEIGHTING = "None"


def feature_count_grid(n_features, num=10):
    """Numbers of features kept, on a log scale from 1 to ``n_features`` (both included).

    Parameters
    ----------
    n_features : int
        Number of features of the data (the last grid value).
    num : int, default=10
        Points of the log scale before rounding to integers (duplicates are dropped).

    Returns
    -------
    grid : list of int
        Increasing feature counts.

    Examples
    --------
    >>> feature_count_grid(2000)
    [1, 2, 5, 13, 29, 68, 159, 369, 860, 2000]
    """
    d = int(n_features)
    if d < 1:
        raise ValueError(f"n_features must be at least 1; got {d}.")
    grid = {int(round(v)) for v in log_grid(1.0, float(d), min(int(num), d))} | {d}
    return sorted(grid)


class KeepTopWeights(RemoveLowestWeights):
    """:class:`~knnweights.evaluation.RemoveLowestWeights` keeping a number of features, not a share.

    The ``n_features`` best-ranked features of one weighter fit, or those of q-value at most
    ``max_qvalue``, rescaled by their weights (the configuration :class:`AutoWeightedKNN` scores
    in its inner CV and refits).

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter; with ``max_qvalue``, one fitted with ``pvalues=True``.
    n_features : int, default=1
        Features kept (all of them when the data have fewer).
    max_qvalue : float or None, default=None
        Keep the features whose ``qvalues_`` are at most this instead (the best-ranked one when
        none is); ``n_features`` is then not used.
    """

    _parameter_constraints = {
        "weighter": [HasMethods(["fit"])],
        "n_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_qvalue": [Interval(numbers.Real, 0, 1, closed="both"), None],
    }

    def __init__(self, weighter, n_features=1, max_qvalue=None):
        self.weighter = weighter
        self.n_features = n_features
        self.max_qvalue = max_qvalue

    def fit(self, X, y, covariates=None):
        """Fit the weighter on ``(X, y)`` and choose the features kept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Targets the weighter learns its weights from.
        covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
            Passed to the weighter's ``fit``: the Relief family's q-values, and so the features
            of ``max_qvalue``, are then adjusted for them.

        Returns
        -------
        self : KeepTopWeights
            The fitted transformer.
        """
        super().fit(X, y, covariates)
        if self.max_qvalue is not None:
            q = getattr(self.weighter_, "qvalues_", None)
            if q is None:
                raise ValueError(f"max_qvalue needs q-values: set pvalues=True on {type(self.weighter_).__name__}.")
            self.support_ = _q_support(q, self.ranking_, self.max_qvalue)
            self.feature_importances_ = fitted_weights(self.weighter_)[self.support_]
        return self

    def _n_kept(self, d):
        return min(int(self.n_features), d)


def _candidate(spec, regression):
    """``(label, unfitted weighter or None)`` of one entry of ``weighters``."""
    if spec is None or (isinstance(spec, str) and spec == NO_WEIGHTING):
        return NO_WEIGHTING, None
    if isinstance(spec, str):
        table = {**WEIGHTERS, **REGRESSION_WEIGHTERS}
        if spec not in table:
            raise ValueError(f"Unknown weighter {spec!r}; give a name of knnweights.WEIGHTERS "
                             f"({', '.join(sorted(table))}), None or a weighter instance.")
        est = table[spec]()
    elif callable(getattr(spec, "fit", None)):
        est = clone(spec)
    else:
        raise ValueError(f"weighters must hold weighter names, instances or None; got {spec!r}.")
    if regression:
        if not isinstance(est, tuple(REGRESSION_WEIGHTERS.values())):
            raise ValueError(f"{type(est).__name__} has no definition for a continuous target y; use "
                             f"the regression-capable weighters: {', '.join(REGRESSION_WEIGHTERS)} (or None).")
        if "target_type" in est.get_params(deep=False):
            est.set_params(target_type="continuous")
    return type(est).__name__, est


def _candidates(weighters, regression):
    """The labelled candidates; equal labels get a suffix so that each names one candidate."""
    if weighters is None:
        specs = [w for w in DEFAULT_WEIGHTERS if w is None or not regression or w in REGRESSION_WEIGHTERS]
    elif isinstance(weighters, (str, BaseEstimator)) or callable(getattr(weighters, "fit", None)):
        specs = [weighters]
    else:
        specs = list(weighters)
    if not specs:
        raise ValueError("weighters is empty; give at least one weighter name, instance or None.")
    out, seen = [], {}
    for spec in specs:
        label, est = _candidate(spec, regression)
        seen[label] = seen.get(label, 0) + 1
        out.append((label if seen[label] == 1 else f"{label}#{seen[label]}", est))
    return out


def _int_grid(value, name, default):
    """A grid parameter (``None``, an int or a sequence of ints) as a sorted list of distinct ints."""
    values = default if value is None else ([value] if isinstance(value, numbers.Integral) else list(value))
    if not values or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1
                             for v in values):
        raise ValueError(f"{name} must be None, a positive int or a non-empty list of positive ints; got {value!r}.")
    return sorted({int(v) for v in values})


def _q_label(max_qvalue):
    """The ``n_features`` label of the configuration that keeps the features of ``q <= max_qvalue``."""
    return f"q<={max_qvalue:g}"


def _has_pvalues(weighter):
    """Whether ``weighter`` gives q-values (the Relief family's ``pvalues`` parameter)."""
    return weighter is not None and "pvalues" in weighter.get_params(deep=False)


def _takes_covariates(weighter):
    """Whether ``weighter`` is fitted with the covariates: its fit gives p-values to adjust."""
    return _has_pvalues(weighter) and weighter.get_params(deep=False)["pvalues"] is not False


def _covariate_frame(covariates, X, name):
    """``covariates`` checked against the rows of ``X`` (a ``ValueError`` naming the fix), as a DataFrame whose
    rows are taken by position; ``None`` stays ``None``."""
    if covariates is None:
        return None
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    names = check_covariates(covariates, n, name, X)[2]
    if isinstance(covariates, pd.Series):
        covariates = covariates.to_frame()
    if isinstance(covariates, pd.DataFrame):
        return covariates.reset_index(drop=True)
    return pd.DataFrame(np.asarray(covariates).reshape(n, -1), columns=names)


def _rows(covariates, index):
    """The covariates of the rows ``index`` (``None`` without covariates)."""
    return None if covariates is None else covariates.iloc[index].reset_index(drop=True)


def fit_with_covariates(estimator, X, y, covariates=None):
    """``estimator.fit(X, y)``, with ``covariates`` routed to the fit of its (last step's) model.

    Parameters
    ----------
    estimator : estimator
        An :class:`AutoWeightedKNN`, or a pipeline ending in one (such as
        :func:`selection_pipeline`'s); without covariates, any estimator.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        Targets.
    covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
        Passed as ``covariates=`` to the last step's ``fit``; ``None``: a plain ``fit``.

    Returns
    -------
    estimator : estimator
        The fitted estimator.
    """
    if covariates is None:
        return estimator.fit(X, y)
    steps = getattr(estimator, "steps", None)
    final = steps[-1][1] if steps else estimator
    if "covariates" not in inspect.signature(final.fit).parameters:
        raise ValueError(f"covariates: {type(final).__name__}.fit takes no covariates; evaluate an AutoWeightedKNN "
                         "(or a pipeline ending in one), or leave covariates out.")
    return estimator.fit(X, y, **{f"{steps[-1][0]}__covariates" if steps else "covariates": covariates})


def _q_support(qvalues, ranking, max_qvalue):
    """The features of ``q <= max_qvalue``; the best-ranked one when none is (a kNN needs a feature)."""
    keep = np.asarray(qvalues) <= max_qvalue
    return keep if keep.any() else np.asarray(ranking) == 1


def _fold_scores(weighter, X, y, train, test, counts, ks, regression, n_classes, max_qvalue=None, covariates=None):
    """Scores ``(len(counts), len(ks))`` of one candidate on one split: one weighter fit (given the split's
    covariates when it takes them), one search per count (a ``str`` count: the features of ``q <= max_qvalue``)."""
    Xtr, Xte, ytr, yte = X[train], X[test], y[train], y[test]
    kmax = max(ks)
    if weighter is None:
        searches = [(slice(None), None, "sqeuclidean")]
    else:
        kw = {"covariates": _rows(covariates, train)} if covariates is not None and _takes_covariates(weighter) else {}
        try:
            fitted = clone(weighter).fit(Xtr, ytr, **kw)
        except ValueError as exc:
            raise ValueError(f"{type(weighter).__name__} could not be fitted on an inner training fold of "
                             f"{len(train)} samples: {exc} Lower cv (more samples per inner training fold) or "
                             "leave that weighter out.") from exc
        w, rank = fitted_weights(fitted), fitted_ranking(fitted)
        metric = getattr(fitted, "metric_", "manhattan")
        searches = []
        for m in counts:
            keep = _q_support(fitted.qvalues_, rank, max_qvalue) if isinstance(m, str) else rank <= m
            searches.append((keep, w[keep], metric))
    scores = np.empty((len(searches), len(ks)))
    for i, (keep, w, metric) in enumerate(searches):
        idx, _ = nearest(np.ascontiguousarray(Xte[:, keep]), np.ascontiguousarray(Xtr[:, keep]), w, kmax, metric)
        for j, k in enumerate(ks):
            if regression:
                scores[i, j] = r2_score(yte, ytr[idx[:, :k]].mean(axis=1))
            else:
                pred = majority_class(class_votes(idx[:, :k], ytr, n_classes), np.arange(n_classes))
                scores[i, j] = accuracy_score(yte, pred)
    return scores


def _has_proba(self):
    return not getattr(self, "regression_", False)


class AutoWeightedKNN(ClassifierMixin, BaseEstimator):
    """Weighted kNN whose weighter, number of features kept and ``k`` are chosen by inner CV.

    ``fit`` scores every configuration (weighter, ``n_features`` best-ranked features kept
    with their weights, ``k`` neighbours) by cross-validation on the rows it is given, then
    refits the best one on all of them (``best_estimator_``).  Each candidate weighter is
    fitted once per inner training fold: its ranking and weights serve every number of
    features, and one search for the ``max(k)`` nearest neighbours serves every ``k``, so a
    grid of ``W`` weighters, ``F`` feature counts and ``K`` values of ``k`` costs ``W`` weighter
    fits and ``W * F`` neighbour searches per fold instead of ``W * F * K`` of each.

    The configuration scored and refitted is the weighter fitted on all features, its
    ``n_features`` best-ranked features kept and weighted by its weights (the weighter is not
    refitted on the kept features: that would cost one fit per grid point).  The candidate
    ``None`` is plain kNN on all features, unweighted.

    Covariates given to ``fit`` are adjusted for, not used as predictors: the candidates that
    compute p-values (the Relief family, fitted with ``pvalues=True`` for ``max_qvalue``) get
    them, with the rows of each inner training fold, so their ``q <= max_qvalue`` configuration
    keeps the features significant *given the covariates* (NPDR's covariate-adjusted pair test,
    ``fit(X, y, covariates=C)`` of :class:`~knnweights.ReliefF`); the other candidates are
    fitted on ``X`` alone, as without covariates.  The weights, the neighbour distances and the
    fitted model use ``X`` only, so ``predict`` takes the features alone.

    A continuous ``y`` (as :func:`sklearn.utils.multiclass.type_of_target` sees it) is a
    regression: the candidates are the regression-capable weighters
    (``knnweights.REGRESSION_WEIGHTERS``), the model :class:`~knnweights.WeightedKNNRegressor`,
    and the score R^2.  (scikit-learn's own ``cross_val_score`` stratifies the folds of a
    classifier; give it ``cv=KFold(...)`` for a continuous target.)

    Parameters
    ----------
    weighters : None, str, estimator or list of them, default=None
        The candidate weighters: names of ``knnweights.WEIGHTERS``, weighter instances, and
        ``None`` (no weighting).  ``None`` as the whole value takes ``DEFAULT_WEIGHTERS``
        (ReliefF, MultiSURF, IRelief, Simba, NCADiagonal and no weighting; for a continuous
        target those of them with a continuous-target definition).
    n_features : None, int or list of int, default=None
        Candidate numbers of features kept (values above the data's count keep all of them).
        ``None``: :func:`feature_count_grid`, a log scale from 1 to ``n_features_in_``.
    n_neighbors : None, int or list of int, default=None
        Candidate ``k``.  ``None``: ``DEFAULT_NEIGHBORS`` (1, 3, 5, 7, 11, 15); values larger
        than the smallest inner training fold are dropped.
    max_qvalue : float or None, default=0.05
        For each weighter with p-values (the Relief family's ``pvalues``; it is then fitted with
        ``pvalues=True``, once per fold as ever), one more configuration: the features of
        q-value at most this (``n_features`` is then the label ``"q<=0.05"``; the best-ranked
        feature alone when none qualifies).  ``None``: none.
    cv : int or CV splitter, default=5
        Inner folds: stratified and shuffled for classes, shuffled for a continuous target; a
        splitter object (anything with ``split(X, y)``) is used as it is.
    random_state : int, RandomState or None, default=None
        Seeds the inner folds and every candidate weighter whose ``random_state`` is ``None``.
    n_jobs : int, default=None
        Parallel (fold, weighter) fits of the search (joblib).
    progress : bool or None, default=None
        Show a progress bar on stderr over the search's (fold, weighter) fits and the refit
        (``None``: on a terminal only).

    Attributes
    ----------
    best_params_ : dict
        The chosen ``weighter`` (its label), ``n_features`` (a count, or the q-value label) and
        ``n_neighbors``.
    best_score_ : float
        Its mean inner-CV score (accuracy, or R^2 for a continuous target).
    best_index_ : int
        Its index in ``cv_results_``.
    cv_results_ : dict of ndarray
        As :class:`~sklearn.model_selection.GridSearchCV`'s: ``params``, ``param_weighter``,
        ``param_n_features``, ``param_n_neighbors``, ``split<i>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``.
    best_estimator_ : estimator
        The chosen configuration refitted on all rows: :class:`~knnweights.classifiers.WeightedKNN`
        (or :class:`~knnweights.WeightedKNNRegressor`) of a :class:`KeepTopWeights`, or plain kNN.
    weighters_ : dict
        Label -> unfitted candidate weighter (``None`` for no weighting).
    support_ : ndarray of bool, shape (n_features_in_,)
        The features the chosen model uses.
    ranking_ : ndarray of float, shape (n_features_in_,)
        The chosen weighter's ranking (1 = best) on all rows; every feature ``(d + 1) / 2``
        without weighting.
    selected_features_ : ndarray
        The kept features' names (``feature_names_in_``), or their column indices.
    regression_ : bool
        Whether ``y`` was taken as a continuous target.
    classes_ : ndarray of shape (n_classes,)
        The class labels (classification only).
    n_splits_ : int
        Number of inner folds.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        The column names, when ``X`` was a DataFrame.

    See Also
    --------
    knnweights.evaluation.nested_evaluate : an outer CV around this whole choice.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import AutoWeightedKNN
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 30)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> model = AutoWeightedKNN(weighters=["ReliefF", None], n_features=[2, 30], random_state=0).fit(X, y)
    >>> model.best_params_["weighter"], model.best_params_["n_features"]
    ('ReliefF', 2)
    >>> model.selected_features_.tolist()
    [0, 1]

    Covariates adjust the q-value configuration; the model predicts from ``X`` alone:

    >>> age = rng.normal(size=(80, 1))
    >>> adjusted = AutoWeightedKNN(weighters=["ReliefF"], n_features=[2], random_state=0).fit(X, y, covariates=age)
    >>> adjusted.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        "weighters": "no_validation",
        "n_features": [None, Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "n_neighbors": [None, Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "max_qvalue": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "cv": [Interval(numbers.Integral, 2, None, closed="left"), HasMethods(["split"])],
        "random_state": ["random_state"],
        "n_jobs": [None, numbers.Integral],
        "progress": ["boolean", None],
    }

    #: parameters added after stored results (their defaults leave a stored fingerprint as it was)
    _added_parameters = ("progress",)

    def __init__(self, weighters=None, n_features=None, n_neighbors=None, max_qvalue=0.05, cv=5, random_state=None,
                 n_jobs=None, progress=None):
        self.weighters = weighters
        self.n_features = n_features
        self.max_qvalue = max_qvalue
        self.n_neighbors = n_neighbors
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    def fit(self, X, y, covariates=None):
        """Choose the configuration by inner CV on ``(X, y)``, then refit it on all rows.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training samples; a DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (n_samples,)
            Class labels, or a continuous target (a regression).
        covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
            Adjust for these (one row per sample, in ``X``'s order; numeric or categorical
            columns, no missing values): given, with the same rows as ``X`` in every inner
            fold and the refit, to the candidates that compute p-values, whose
            ``q <= max_qvalue`` configuration becomes covariate-adjusted.  Not features: the
            model never uses them.  A ``ValueError`` if no candidate computes p-values.

        Returns
        -------
        self : AutoWeightedKNN
            The fitted estimator.
        """
        validate_params(self)
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2 and shape[1] == 0:
            raise ValueError(f"Found array with 0 feature(s) (shape={tuple(shape)}) while a minimum of 1 is required: "
                             "X has no features; give at least one feature column to choose from.")
        covariates = _covariate_frame(covariates, X, type(self).__name__)
        X, y = validate_training_data(self, X, y)
        X = np.ascontiguousarray(X, dtype=np.float64)
        self.regression_ = is_continuous_target(y)
        seed = root_seed(self.random_state)
        if self.regression_:
            target = np.asarray(y, dtype=np.float64)
            self.__dict__.pop("classes_", None)
            n_classes = 0
        else:
            self.classes_, target = np.unique(y, return_inverse=True)
            n_classes = len(self.classes_)
            self._check_classes(target)
        splits = self._inner_splits(X, y, target, seed)
        self.n_splits_ = len(splits)
        smallest = min(len(train) for train, _ in splits)
        ks = [k for k in _int_grid(self.n_neighbors, "n_neighbors", DEFAULT_NEIGHBORS) if k <= smallest]
        if not ks:
            raise ValueError(f"every n_neighbors exceeds the {smallest} samples of the smallest inner training fold; "
                             "give smaller values of n_neighbors.")
        d = X.shape[1]
        counts = [min(m, d) for m in _int_grid(self.n_features, "n_features", feature_count_grid(d))]
        counts = sorted(set(counts))
        cands = _candidates(self.weighters, self.regression_)
        sizes = []  # the feature counts of each candidate: all features unweighted; the grid (and q) weighted
        for label, est in cands:
            if est is None:
                sizes.append([d])
                continue
            set_random_states(est, derive_seed(seed, "weighter", label))
            with_q = self.max_qvalue is not None and _has_pvalues(est)
            if with_q and est.get_params()["pvalues"] is False:
                est.set_params(pvalues=True)  # the same fit gives the weights and the q-values
            sizes.append(counts + ([_q_label(self.max_qvalue)] if with_q else []))
        if covariates is not None and not any(_takes_covariates(est) for _, est in cands):
            raise ValueError("covariates adjust the q-values of the candidates with p-values (the Relief family: "
                             "ReliefF, MultiSURF, ...), and none has them here; add such a weighter (with "
                             "max_qvalue set, or pvalues=True), or leave covariates out.")
        self.weighters_ = dict(cands)
        tasks = [(f, c) for f in range(len(splits)) for c in range(len(cands))]
        jobs = Parallel(n_jobs=self.n_jobs, return_as="generator")(
            delayed(_fold_scores)(cands[c][1], X, target, splits[f][0], splits[f][1], sizes[c], ks,
                                  self.regression_, n_classes, self.max_qvalue, covariates)
            for f, c in tasks)
        with progress_bar(len(tasks) + 1, type(self).__name__, unit="fits", enabled=self.progress) as bar:
            results = []
            for scores in jobs:
                results.append(scores)
                bar.update(1)
            self._store_results(cands, sizes, ks, dict(zip(tasks, results, strict=True)), len(splits))
            self._refit(X, y, d, covariates)
            bar.update(1)
        return self

    def _check_classes(self, codes):
        """Two classes at least, and each with a sample in every inner fold."""
        counts = np.bincount(codes)
        if len(counts) < 2:
            raise ValueError(f"AutoWeightedKNN needs at least 2 classes to choose a model by cross-validation; y has "
                             f"one class ({format_label(self.classes_[0])}). Give samples of another class.")
        c = int(np.argmin(counts))
        label = format_label(self.classes_[c])
        if counts[c] < 2:
            raise ValueError(f"class {label} has 1 sample: no inner fold can both train and test on it. Remove or "
                             "merge that class, or collect more samples of it.")
        if isinstance(self.cv, numbers.Integral) and counts[c] < self.cv:
            raise ValueError(f"class {label} has {counts[c]} samples, fewer than the cv={self.cv} inner folds; "
                             f"lower cv (to at most {counts[c]}), or collect more samples of that class.")

    def _inner_splits(self, X, y, target, seed):
        """The inner ``(train, test)`` index pairs."""
        if isinstance(self.cv, numbers.Integral):
            if X.shape[0] < self.cv:
                raise ValueError(f"{X.shape[0]} samples cannot make cv={self.cv} inner folds; lower cv.")
            cls = KFold if self.regression_ else StratifiedKFold
            cv = cls(n_splits=int(self.cv), shuffle=True, random_state=derive_seed(seed, "inner-cv"))
            return list(cv.split(X, target))
        return [(np.asarray(tr), np.asarray(te)) for tr, te in self.cv.split(X, y)]

    def _store_results(self, cands, sizes, ks, results, n_splits):
        """``cv_results_``, ``best_index_``, ``best_params_`` and ``best_score_`` from the fold scores."""
        params, rows = [], []
        for c, (label, _) in enumerate(cands):
            for i, m in enumerate(sizes[c]):
                for j, k in enumerate(ks):
                    params.append({"weighter": label, "n_features": m, "n_neighbors": k})
                    rows.append([results[(f, c)][i, j] for f in range(n_splits)])
        S = np.asarray(rows)
        mean, std = S.mean(axis=1), S.std(axis=1)
        order = np.argsort(-mean, kind="stable")
        rank = np.empty(len(mean), dtype=np.int32)
        rank[order] = np.arange(1, len(mean) + 1)
        for a, b in zip(order[:-1], order[1:], strict=True):  # equal means share the better rank
            if mean[b] == mean[a]:
                rank[b] = rank[a]
        res = {"params": params}
        for key in ("weighter", "n_features", "n_neighbors"):
            res[f"param_{key}"] = np.asarray([p[key] for p in params], dtype=object)
        for f in range(n_splits):
            res[f"split{f}_test_score"] = S[:, f]
        res.update(mean_test_score=mean, std_test_score=std, rank_test_score=rank)
        self.cv_results_ = res
        self.best_index_ = int(order[0])
        self.best_params_ = dict(params[self.best_index_])
        self.best_score_ = float(mean[self.best_index_])

    def _refit(self, X, y, d, covariates=None):
        """Fit the chosen configuration on all rows (its weighter given the covariates when it takes them); the
        kept features and the ranking."""
        p = self.best_params_
        weighter = self.weighters_[p["weighter"]]
        k = p["n_neighbors"]
        if weighter is None:
            model = KNNRegressor(n_neighbors=k) if self.regression_ else KNNClassifier(n_neighbors=k)
        else:
            m = p["n_features"]
            keep = (KeepTopWeights(weighter, max_qvalue=self.max_qvalue) if isinstance(m, str)
                    else KeepTopWeights(weighter, n_features=m))
            model = WeightedKNNRegressor(keep, n_neighbors=k) if self.regression_ else WeightedKNN(keep, n_neighbors=k)
        if covariates is not None and _takes_covariates(weighter):
            self.best_estimator_ = model.fit(X, y, covariates=covariates)
        else:
            self.best_estimator_ = model.fit(X, y)
        if weighter is None:
            self.support_ = np.ones(d, dtype=bool)
            self.ranking_ = np.full(d, (d + 1) / 2.0)
        else:
            self.support_ = self.best_estimator_.weighter_.support_.copy()
            self.ranking_ = self.best_estimator_.weighter_.ranking_.astype(np.float64)
        names = getattr(self, "feature_names_in_", None)
        self.selected_features_ = np.asarray(names)[self.support_] if names is not None else np.flatnonzero(
            self.support_)

    def _query(self, X):
        """``X`` validated against the fitted features, with the fix named when its columns differ."""
        check_is_fitted(self, "best_estimator_")
        try:
            return validate_query_data(self, X)
        except ValueError as exc:
            if "feature names should match" in str(exc):
                raise ValueError(f"{exc}Give X with the columns the model was fitted on (feature_names_in_), "
                                 "in that order.") from None
            raise

    def predict(self, X):
        """Predict with the chosen configuration.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_queries, n_features)
            Query samples with the features seen in ``fit`` (a DataFrame: the same columns).

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
            Predicted class labels, or targets for a regression.
        """
        X = self._query(X)  # checks the fit first
        return self.best_estimator_.predict(X)

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities of the chosen kNN's vote.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_queries, n_features)
            Query samples with the features seen in ``fit``.

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Fraction of each query's neighbours in each class of ``classes_``.
        """
        X = self._query(X)
        return self.best_estimator_.predict_proba(X)

    def score(self, X, y, sample_weight=None):
        """Accuracy on ``(X, y)``, or R^2 for a regression.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_queries, n_features)
            Test samples.
        y : array-like of shape (n_queries,)
            True labels or targets.
        sample_weight : array-like of shape (n_queries,), default=None
            Weights of the samples in the score.

        Returns
        -------
        score : float
            Mean accuracy, or the coefficient of determination R^2.
        """
        check_is_fitted(self, "best_estimator_")
        if self.regression_:
            return float(r2_score(y, self.predict(X), sample_weight=sample_weight))
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        return tags


def selection_pipeline(weighters=None, *, log=False, scale="standard", cv=5, random_state=None, progress=None):
    """Median imputation, ``log(x + 1)``, scaling and :class:`AutoWeightedKNN`, as one pipeline.

    Every step is fitted on the rows it is given, so under :func:`nested_evaluate` the medians and
    scales come from the outer training part only, and ``predict`` applies the same steps to new
    samples.  This is the model ``knnweights select`` evaluates and saves.  Covariates reach the
    last step through :func:`fit_with_covariates` (or ``fit(X, y, choose__covariates=C)``).

    Parameters
    ----------
    weighters : list of str, estimator or None, optional
        The candidates of :class:`AutoWeightedKNN` (``None``: its defaults).
    log : bool, default=False
        Transform every feature by ``log(x + 1)`` first (non-negative data such as counts).
    scale : {"standard", "minmax", "none"} or None, default="standard"
        The scaling before the weighters (:func:`make_scaler`).
    cv : int or cross-validation splitter, default=5
        The inner folds of the choice.
    random_state : int, RandomState instance or None, default=None
        Seed of the inner folds and of the weighters.
    progress : bool or None, default=None
        :class:`AutoWeightedKNN`'s progress bar (``None``: on a terminal only).

    Returns
    -------
    sklearn.pipeline.Pipeline
        Unfitted.
    """
    steps = [("impute", SimpleImputer(strategy="median", keep_empty_features=True))]
    if log:  # log(x + 1): log2 up to a factor, which the scaling removes
        steps.append(("log", FunctionTransformer(np.log1p, feature_names_out="one-to-one")))
    scaler = make_scaler(scale)
    if scaler is not None:
        steps.append(("scale", scaler))
    steps.append(("choose", AutoWeightedKNN(weighters=weighters, cv=cv, random_state=random_state,
                                            progress=progress)))
    return Pipeline(steps)
