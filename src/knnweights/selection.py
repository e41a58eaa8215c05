"""Rankings and feature selection from any weighter.

* :func:`rank_table`: one table of every feature with each method's weight, signed
  score and rank (a total order, 1 = best), optionally p- and q-values and the
  univariate baselines, e.g. for a preranked gene-set analysis; :func:`fit_rank_table`
  also returns the fitted weighters, their warnings and times (the command line's
  ``rank`` and ``evaluate`` write its table).
* :class:`SelectTopK`: keep the ``k`` best-ranked features of a weighter.
* :class:`TuRF`: Moore & White's (2007) tuned ReliefF: refit the weighter on the
  surviving features after each removal of the lowest-scoring share.

The selectors follow scikit-learn's selector contract
(:class:`sklearn.feature_selection.SelectorMixin`): ``get_support``, ``transform``
(the kept columns, unscaled), ``inverse_transform``, ``get_feature_names_out`` and
``set_output(transform="pandas")``.
"""

import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from .utils import HasMethods, Interval, StrOptions, check_finite_columns, check_numeric_columns, validate_params
from .weighters import feature_ranking

__all__ = ["rank_table", "fit_rank_table", "SelectTopK", "TuRF", "fitted_ranking"]


def _is_fitted(est):
    try:
        check_is_fitted(est)
    except Exception:
        return False
    return True


def fitted_ranking(estimator):
    """Ranks ``1..d`` (1 = best, no ties) of a fitted weighter or model.

    A knnweights weighter's ``ranking_`` (weight, then signed score, then column
    order); otherwise the order of ``feature_importances_`` or of the squared
    ``coef_`` summed over classes (SVM-RFE's criterion), ties by column order.

    Parameters
    ----------
    estimator : fitted estimator

    Returns
    -------
    ndarray of int64, shape (n_features,)
    """
    r = getattr(estimator, "ranking_", None)
    if r is not None:
        r = np.asarray(r)
        if np.array_equal(np.sort(r), np.arange(1, r.shape[0] + 1)):
            return r.astype(np.int64)
    w = _weights(estimator)
    if w is None:
        if r is not None:  # an elimination ranking with ties (e.g. sklearn's RFE): earlier rounds last
            return feature_ranking(-np.asarray(r, dtype=np.float64))
        raise TypeError(f"{type(estimator).__name__} has none of ranking_, feature_importances_ or coef_.")
    return feature_ranking(w, getattr(estimator, "scores_", None))


def _weights(est):
    if hasattr(est, "feature_importances_"):
        return np.asarray(est.feature_importances_, dtype=np.float64)
    if hasattr(est, "coef_"):
        coef = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
        return (coef**2).sum(axis=0)
    return None


def _resolve_weighters(weighters):
    """``[(label, estimator), ...]`` from an estimator, a name, a list of either, or a dict."""
    from . import REGRESSION_WEIGHTERS, WEIGHTERS

    known = {**WEIGHTERS, **REGRESSION_WEIGHTERS}
    if isinstance(weighters, dict):
        items = list(weighters.items())
    elif isinstance(weighters, (str, BaseEstimator)) or hasattr(weighters, "fit"):
        items = [(None, weighters)]
    else:
        items = [(None, w) for w in weighters]
    out, seen = [], {}
    for label, w in items:
        if isinstance(w, str):
            if w not in known:
                raise ValueError(f"unknown weighter {w!r}; choose from: {', '.join(known)}.")
            label = label or w
            w = known[w]()
        label = str(label or type(w).__name__)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}_{seen[label]}"
        out.append((label, w))
    if not out:
        raise ValueError("weighters is empty: give at least one weighter (an instance or a name).")
    return out


#: the univariate baselines: test of :func:`knnweights.significance.univariate_tests` -> column prefix
BASELINES = {"t": "t_test", "F": "anova", "pearson": "pearson", "spearman": "spearman"}

#: ``sort_by`` value that orders the rows by the methods' mean rank
MEAN_RANK = "mean_rank"


def _configure(w, random_state, pvalues, target_type, params):
    """Set rank_table's settings on a weighter built here (only the parameters it has)."""
    have = w.get_params()
    new = {k: v for k, v in (params or {}).items() if k in have}
    if random_state is not None and "random_state" in have and have["random_state"] is None:
        new["random_state"] = random_state
    if target_type != "auto" and "target_type" in have:
        new["target_type"] = target_type
    if pvalues and "pvalues" in have and not have["pvalues"]:
        new["pvalues"] = True  # the method's own test: one pass instead of B refits
    return w.set_params(**new) if new else w


def _name_order(w, names, label):
    """Indices that put a fitted weighter's per-feature arrays in the order of ``names`` (``None``: as they are).

    A weighter fitted on a DataFrame knows its features by name: its arrays are taken by name,
    and a weighter that knows other features is refused rather than joined by position.
    """
    own = getattr(w, "feature_names_in_", None)
    if own is None or names is None:
        return None
    own = [str(c) for c in own]
    if own == names:
        return None
    pos = {f: j for j, f in enumerate(own)}
    if len(own) != len(names) or any(f not in pos for f in names):
        missing = [f for f in names if f not in pos][:3]
        raise ValueError(f"{label} was fitted on other features than the table's ({len(own)} features"
                         + (f"; it lacks {', '.join(map(repr, missing))}" if missing else "") + ").")
    return np.array([pos[f] for f in names])


def _baseline_columns(A, y, continuous):
    """``{column: values}`` of the univariate baselines: ``<b>_stat``, ``<b>_p``, ``<b>_q`` and
    ``<b>_rank`` (1 = smallest p; ties by larger ``|statistic|``, then column order)."""
    from .significance import bh_qvalues, univariate_tests

    out = {}
    for key, (stat, p) in univariate_tests(A, np.asarray(y), continuous=continuous).items():
        b = BASELINES[key]
        order = np.lexsort((np.arange(p.size), -np.abs(stat), p))
        rank = np.empty(p.size, np.int64)
        rank[order] = np.arange(1, p.size + 1)
        out.update({f"{b}_stat": stat, f"{b}_p": p, f"{b}_q": bh_qvalues(p), f"{b}_rank": rank})
    return out


def _mean_rank(columns, methods):
    """The mean of the methods' ranks, feature by feature (``columns``: a table or a dict of columns)."""
    return np.mean([np.asarray(columns[f"{m}_rank"], dtype=np.float64) for m in methods], axis=0)


def sort_by_mean_rank(table, methods):
    """Order a ranking table (columns ``<method>_rank``) by the methods' mean rank.

    With several methods a ``mean_rank`` column is set and orders the rows, ties broken by
    the first method's rank; with one, its rank alone orders them.

    Parameters
    ----------
    table : pandas.DataFrame
        A ranking table; modified in place when a ``mean_rank`` column is set.
    methods : list of str
        The method labels whose ranks are averaged, the first breaking ties.

    Returns
    -------
    pandas.DataFrame
        The rows sorted, with a fresh index.
    """
    rank_cols = [f"{m}_rank" for m in methods]
    if len(rank_cols) > 1:
        table[MEAN_RANK] = _mean_rank(table, methods)
        table = table.sort_values([MEAN_RANK, rank_cols[0]], kind="stable")
    else:
        table = table.sort_values(rank_cols[0], kind="stable")
    return table.reset_index(drop=True)


def rank_table(weighters, X, y=None, feature_names=None, *, pvalues=False, baselines=False, sort_by=None,
               scale=None, target_type="auto", n_permutations=199, n_jobs=None, random_state=None,
               weighter_params=None, verbose=0, progress=None):
    """A table of every feature with each method's weight, signed score and rank (and p, q, baselines).

    Every column is computed in the column order of ``X`` and the rows are sorted once, at
    the end, as one frame: each value stays beside its own feature name.  This is the table
    ``knnweights rank`` writes (``scale="standard", baselines=True, sort_by="mean_rank"``).

    Parameters
    ----------
    weighters : estimator, str, list of them, or dict label -> estimator
        Weighters (instances, or names in :data:`knnweights.WEIGHTERS` or
        :data:`knnweights.REGRESSION_WEIGHTERS`, built with their defaults).  An already
        fitted weighter is used as it is (its arrays taken by feature name when it was
        fitted on a DataFrame); the others are fitted (a clone) on ``(X, y)``.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The data; a DataFrame's column names become the feature names.
    y : array-like of shape (n_samples,), optional
        Class labels or a continuous target; needed unless every weighter is fitted.
    feature_names : list of str, optional
        Feature names (default: ``X``'s columns, else the fitted weighter's
        ``feature_names_in_``, else ``x0, x1, ...``).
    pvalues : bool, default=False
        Add ``<label>_p`` and ``<label>_q`` (Benjamini-Hochberg) per method: the method's
        own ``pvalues_`` / ``qvalues_`` where it has them (the Relief family; ``pvalues=True``
        is set on those built here), else :func:`knnweights.permutation_pvalues` with
        ``n_permutations`` refits on the same (scaled) data.
    baselines : bool, default=False
        Add the univariate baselines of :func:`knnweights.significance.univariate_tests`
        (Welch t or ANOVA F for classes, Pearson and Spearman for a continuous target):
        ``<b>_stat``, ``<b>_p``, ``<b>_q`` and ``<b>_rank`` (1 = smallest p).  Needs ``y``
        and finite values.
    sort_by : str, optional
        A method label: sort the rows by its rank; ``"mean_rank"``: by the methods' mean
        rank (a ``mean_rank`` column with several methods; ties by the first method's
        rank).  Default: the column order of ``X``.
    scale : {"standard", "minmax"} or None, default=None
        Scale the features before the fits, the permutation refits and the baselines
        (:func:`knnweights.evaluation.compare.make_scaler`); the weights are those of the
        scaled features.
    target_type : {"auto", "classes", "continuous"}, default="auto"
        Set on the weighters built here that have the parameter (``"auto"`` leaves theirs);
        the baselines test classes or a continuous target by the same rule.
    n_permutations : int, default=199
        Permutations for the methods without their own p-values.
    n_jobs : int, optional
        Parallel permutation refits (joblib).
    random_state : int, optional
        Set on the weighters built here (from names, or unfitted instances whose
        ``random_state`` is ``None``) and seeds the permutations.
    weighter_params : dict, optional
        Further parameters set on the weighters built here that have them (e.g.
        ``{"missing": "diff"}`` for genotypes with unknown values).
    verbose : int, default=0
        Print each fit and its time.
    progress : callable, optional
        Called as ``progress(event, label=, index=, total=, **info)`` with ``event`` one of
        ``"fit"`` (``shape``), ``"fitted"`` (``seconds``), ``"pvalues"`` (``source``:
        ``"pvalues_"`` or the number of permutations; ``qvalues``); with it (or
        ``verbose``) the permutation refits show a progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        Column ``feature``, then for each method ``<label>_weight``
        (``feature_importances_``), ``<label>_score`` (signed ``scores_``; the weight
        where a method has none), ``<label>_rank`` (1 = best, a total order) and with
        ``pvalues`` ``<label>_p``, ``<label>_q``; then ``mean_rank`` (sorted by it, with
        several methods); then the baselines' columns.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import ReliefF, rank_table
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)); y = (X[:, 2] > 0).astype(int)
    >>> t = rank_table([ReliefF(n_neighbors=3), "Simba"], X, y, random_state=0)
    >>> list(t.columns)[:4]
    ['feature', 'ReliefF_weight', 'ReliefF_score', 'ReliefF_rank']
    >>> int(t.loc[t.ReliefF_rank == 1, "feature"].str[1:].iloc[0])
    2
    >>> t = rank_table("ReliefF", X, y, pvalues=True, baselines=True, sort_by="mean_rank")
    >>> t.feature.iloc[0], bool(t.ReliefF_q.iloc[0] < 0.05), list(t.columns)[-4:]
    ('x2', True, ['t_test_stat', 't_test_p', 't_test_q', 't_test_rank'])
    """
    return fit_rank_table(weighters, X, y, feature_names, pvalues=pvalues, baselines=baselines, sort_by=sort_by,
                          scale=scale, target_type=target_type, n_permutations=n_permutations, n_jobs=n_jobs,
                          random_state=random_state, weighter_params=weighter_params, verbose=verbose,
                          progress=progress).table


def fit_rank_table(weighters, X, y=None, feature_names=None, *, pvalues=False, baselines=False, sort_by=None,
                   scale=None, target_type="auto", n_permutations=199, n_jobs=None, random_state=None,
                   weighter_params=None, on_error="raise", record_warnings=False, verbose=0, progress=None):
    """:func:`rank_table` with what the fits left: the fitted weighters, their warnings and times.

    Parameters
    ----------
    weighters, X, y, feature_names, pvalues, baselines, sort_by, scale, target_type, \
n_permutations, n_jobs, random_state, weighter_params, verbose : see :func:`rank_table`
        As for :func:`rank_table`.
    on_error : {"raise", "skip"}, default="raise"
        ``"skip"``: a weighter whose fit raises is left out of the table (the exception
        in ``failed``, and a ``"failed"`` progress event with ``error``).
    record_warnings : bool, default=False
        Record the warnings each fit raises (in ``warnings``) instead of letting them through.
    progress : callable, optional
        As for :func:`rank_table`, and the ``"failed"`` event.

    Returns
    -------
    result : Bunch
        ``table`` (the DataFrame of :func:`rank_table`; ``None`` when every fit failed),
        ``fitted`` (label -> fitted weighter, in table order), ``warnings`` (label ->
        ``[[pattern, first message, count], ...]``, see
        :func:`~knnweights.evaluation.compare.collect_warnings`), ``seconds`` (label ->
        fit time), ``failed`` (label -> exception) and ``pvalue_source`` (label ->
        ``"pvalues_"`` or the number of permutations).
    """
    import pandas as pd
    from sklearn.utils import Bunch

    from .engine.genotypes import is_byte_input
    from .evaluation.compare import collect_warnings, make_scaler
    from .significance import bh_qvalues, permutation_pvalues
    from .weighters._relief_regression import is_continuous_target

    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip'; got {on_error!r}.")
    if target_type not in ("auto", "classes", "continuous"):
        raise ValueError(f"target_type must be 'auto', 'classes' or 'continuous'; got {target_type!r}.")
    items = _resolve_weighters(weighters)
    labels = [label for label, _ in items]
    if sort_by is not None and sort_by != MEAN_RANK and sort_by not in labels:
        raise ValueError(f"sort_by={sort_by!r} is not a method of the table; methods: {', '.join(labels)} "
                         f"(or {MEAN_RANK!r}).")
    names = None if feature_names is None else [str(f) for f in feature_names]
    if names is None and hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
    if names is None:  # a fitted weighter that knows its features' names
        names = next(([str(c) for c in w.feature_names_in_] for _, w in items
                      if _is_fitted(w) and getattr(w, "feature_names_in_", None) is not None), None)
    scaler = make_scaler(scale)
    A = X
    if scaler is not None:
        if X is None or is_byte_input(X):
            raise ValueError("scale needs a numeric X (genotype bytes are scored as they are: scale=None).")
        A = scaler.fit_transform(np.asarray(X, dtype=np.float64))
    if baselines and (X is None or y is None or is_byte_input(X)):
        raise ValueError("baselines=True needs X (numeric, not genotype bytes) and y.")
    y_arr = None if y is None else np.asarray(y)
    bar = bool(verbose) or progress is not None

    def emit(event, **info):
        if progress is not None:
            progress(event, **info)

    cols, fitted, caught, seconds, failed, source = {}, {}, {}, {}, {}, {}

    def put(column, values):
        if column in cols or column == "feature":
            raise ValueError(f"two columns named {column!r}: give the methods other labels.")
        cols[column] = np.asarray(values)

    n_features = None
    for i, (label, w) in enumerate(items, start=1):
        where = {"label": label, "index": i, "total": len(items)}
        idx = None  # fitted here: its arrays are in the column order of X
        if not _is_fitted(w):
            if X is None or y is None:
                raise ValueError(f"{label} is not fitted: rank_table needs X and y to fit it.")
            w = _configure(clone(w), random_state, pvalues, target_type, weighter_params)
            emit("fit", shape=tuple(A.shape), **where)
            t0 = time.perf_counter()
            try:
                if record_warnings:
                    with warnings.catch_warnings(record=True) as record, np.errstate(all="ignore"):
                        warnings.simplefilter("always")
                        w.fit(A, y)
                else:
                    w.fit(A, y)
            except Exception as exc:  # noqa: BLE001 - on_error="skip": one method failing must not hide the others
                if on_error == "raise":
                    raise
                failed[label] = exc
                emit("failed", error=exc, **where)
                continue
            seconds[label] = time.perf_counter() - t0
            caught[label] = collect_warnings(record) if record_warnings else []
            emit("fitted", seconds=seconds[label], **where)
            if verbose:
                print(f"[rank_table] {label}: fitted in {seconds[label]:.2f} s")
        else:
            caught[label] = []
            idx = _name_order(w, names, label)
        rank = fitted_ranking(w)
        if n_features is None:
            n_features = rank.shape[0]
        elif rank.shape[0] != n_features:
            raise ValueError(f"{label} ranks {rank.shape[0]} features, the previous weighters {n_features}.")
        weight = _weights(w)
        weight = np.full(n_features, np.nan) if weight is None else weight
        score = getattr(w, "scores_", None)
        score = weight if score is None else np.asarray(score, dtype=np.float64)
        own_p = getattr(w, "pvalues_", None) if pvalues else None
        own_q = getattr(w, "qvalues_", None) if own_p is not None else None
        by_name = [weight, score, rank] + ([np.asarray(own_p, dtype=np.float64),
                                             bh_qvalues(own_p) if own_q is None else np.asarray(own_q)]
                                            if own_p is not None else [])
        if idx is not None:  # the weighter's own feature order -> the table's
            by_name = [a[idx] for a in by_name]
        put(f"{label}_weight", by_name[0])
        put(f"{label}_score", by_name[1])
        put(f"{label}_rank", by_name[2])
        if pvalues:
            if own_p is not None:
                p, q, source[label] = by_name[3], by_name[4], "pvalues_"
            else:
                if X is None or y is None:
                    raise ValueError(f"{label} has no pvalues_: its permutation test needs X and y.")
                null_w = clone(w)
                if "pvalues" in null_w.get_params():
                    null_w.set_params(pvalues=False)
                null_w = _configure(null_w, random_state, False, target_type, weighter_params)
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")  # the refits on permuted labels warn as they please
                    res = permutation_pvalues(null_w, A, y_arr, n_permutations=n_permutations,
                                              random_state=random_state, n_jobs=n_jobs, progress=bar)
                p, q, source[label] = res.pvalues, res.qvalues, int(n_permutations)
            put(f"{label}_p", p)
            put(f"{label}_q", q)
            emit("pvalues", source=source[label], qvalues=q, **where)
        fitted[label] = w
    if not fitted:
        return Bunch(table=None, fitted=fitted, warnings=caught, seconds=seconds, failed=failed, pvalue_source=source)
    if names is None:
        names = [f"x{j}" for j in range(n_features)]
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names for {n_features} features.")
    done = list(fitted)
    if sort_by == MEAN_RANK and len(done) > 1:
        put(MEAN_RANK, _mean_rank(cols, done))  # here, before the baselines; the sort below sets the same
    if baselines:
        for column, values in _baseline_columns(A, y_arr, is_continuous_target(y_arr, target_type)).items():
            put(column, values)
    table = pd.DataFrame({"feature": names, **cols})  # every column in X's column order, then one sort
    if sort_by == MEAN_RANK:
        table = sort_by_mean_rank(table, done)
    elif sort_by is not None:
        if sort_by not in fitted:
            raise ValueError(f"sort_by={sort_by!r}: that method could not be fitted.")
        table = table.sort_values(f"{sort_by}_rank", kind="stable").reset_index(drop=True)
    return Bunch(table=table, fitted=fitted, warnings=caught, seconds=seconds, failed=failed, pvalue_source=source)


class _WeighterSelector(SelectorMixin, BaseEstimator):
    """Shared input handling: named column errors, NaN allowed when the weighter allows it."""

    def _check_X(self, X):
        w = self.weighter if self.weighter is not None else self._default_weighter()
        from .engine.genotypes import is_byte_input

        if is_byte_input(X) and getattr(w, "_byte_input", False):  # genotypes: the weighter takes the bytes
            if X.shape[0] < 2:
                raise ValueError(f"Found array with {X.shape[0]} sample(s) while a minimum of 2 is required.")
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
            return X
        allow_nan = get_tags(w).input_tags.allow_nan
        check_numeric_columns(X)
        check_finite_columns(X, allow_nan=allow_nan)
        return validate_data(self, X, dtype=[np.float64, np.float32],
                             ensure_all_finite="allow-nan" if allow_nan else True, ensure_min_samples=2)

    def _default_weighter(self):
        from .weighters import ReliefF

        return ReliefF()

    def _weighter(self):
        return clone(self.weighter if self.weighter is not None else self._default_weighter())

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        w = self.weighter if self.weighter is not None else self._default_weighter()
        tags.input_tags.allow_nan = get_tags(w).input_tags.allow_nan
        return tags


class SelectTopK(_WeighterSelector):
    """Keep the ``k`` best-ranked features of a weighter.

    Fits ``weighter`` and keeps the features of rank ``1..k`` of its ``ranking_``
    (by weight, then signed score, so features whose weights are clipped to 0 are
    still ordered; see :func:`knnweights.weighters._base.feature_ranking`).
    ``transform`` returns the kept columns unscaled; to weight them too, put the
    weighter after the selector in a pipeline.

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter, or any estimator with ``feature_importances_`` or
        ``coef_``.
    k : int or "all", default=10
        Features kept.  More than the data has keeps all of them (with a warning).

    Attributes
    ----------
    weighter_ : fitted clone of ``weighter``
    ranking_ : ndarray of int, shape (n_features_in_,)
        The weighter's ranking (1 = best).
    support_ : ndarray of bool, shape (n_features_in_,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import ReliefF, SelectTopK
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 20)); y = (X[:, 3] + X[:, 7] > 0).astype(int)
    >>> sel = SelectTopK(ReliefF(n_neighbors=5), k=2).fit(X, y)
    >>> sel.get_support(indices=True).tolist()
    [3, 7]
    >>> sel.transform(X).shape
    (80, 2)
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit"])],
        "k": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"all"})],
    }

    def __init__(self, weighter, k=10):
        self.weighter = weighter
        self.k = k

    def fit(self, X, y):
        """Fit the weighter on ``(X, y)`` and keep its ``k`` best features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training samples; a DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (n_samples,)
            Targets the weighter learns its weights from.

        Returns
        -------
        self : SelectTopK
            The fitted selector.
        """
        validate_params(self)
        if y is None:  # the weighter's message, before any of ours
            self._weighter().fit(X, y)
        Xv = self._check_X(X)
        self.weighter_ = self._weighter().fit(Xv, y)
        self.ranking_ = fitted_ranking(self.weighter_)
        d = self.ranking_.shape[0]
        k = d if self.k == "all" else int(self.k)
        if k > d:
            warnings.warn(f"k={k} is larger than the number of features ({d}); all features are kept.",
                          UserWarning, stacklevel=2)
            k = d
        self.support_ = self.ranking_ <= k
        return self


def _n_to_select(n_features_to_select, pct, d):
    if n_features_to_select is None:
        return max(1, min(d, int(round(pct * d))) if isinstance(pct, float) else int(pct))
    if isinstance(n_features_to_select, numbers.Integral):
        return int(min(n_features_to_select, d))
    return max(1, int(round(n_features_to_select * d)))


class TuRF(_WeighterSelector):
    """Tuned ReliefF (Moore & White 2007): remove the lowest-scoring features, refit, repeat.

    Moore & White's TuRF ("Tuning ReliefF for genome-wide genetic analysis"): with
    ``a`` iterations, run ReliefF, remove the ``n / a`` worst of the ``n`` original
    features, and run it again on the rest, so that the neighbours of the later
    rounds are found in a space with less noise (ReliefF's neighbours degrade when
    most features are irrelevant; interacting features such as an XOR pair are then
    missed by a single pass).  Here any weighter takes ReliefF's place, and the loop
    stops when ``n_features_to_select`` remain; the survivors are ranked by a last
    fit on them.

    Parameters
    ----------
    weighter : estimator, default=None
        The scorer refitted each round (default ``ReliefF()``, as in the paper).
    pct : float in (0, 1) or int, default=0.5
        Features removed per round: a float is the share of the *original* features
        (``round(pct * n)``, at least one; the paper's ``1 / a``), an int a count.
    n_features_to_select : int, float in (0, 1) or None, default=None
        Features kept; a float is a share of the features.  ``None``: one round's
        worth (``round(pct * n)``), i.e. the paper's ``a = 1 / pct`` fits.
    verbose : int, default=0
        Print each round.

    Attributes
    ----------
    ranking_ : ndarray of int, shape (n_features_in_,)
        1 = best: the survivors by the last fit's ranking, then the features removed
        in the last round (by that round's ranking), then those of the round before,
        and so on.
    elimination_round_ : ndarray of int, shape (n_features_in_,)
        Round in which each feature was removed (1 = first); 0 for the survivors.
    scores_ : ndarray of shape (n_features_in_,)
        Each feature's signed score (``scores_``, else its weight) in the last fit
        it took part in.
    support_ : ndarray of bool, shape (n_features_in_,)
    n_rounds_ : int
        Removal rounds run (fits = ``n_rounds_ + 1``).
    estimator_ : the weighter fitted on the surviving features.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame.

    References
    ----------
    J. H. Moore and B. C. White, "Tuning ReliefF for genome-wide genetic analysis",
    EvoBIO 2007, LNCS 4447, pp. 166-175.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import ReliefF, TuRF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 30)); y = (X[:, 0] - X[:, 1] > 0).astype(int)
    >>> t = TuRF(ReliefF(n_neighbors=5), pct=0.2, n_features_to_select=2).fit(X, y)
    >>> t.get_support(indices=True).tolist(), t.n_rounds_
    ([0, 1], 5)
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit"]), None],
        "pct": [Interval(numbers.Real, 0, 1, closed="neither"), Interval(numbers.Integral, 1, None, closed="left")],
        "n_features_to_select": [Interval(numbers.Integral, 1, None, closed="left"),
                                 Interval(numbers.Real, 0, 1, closed="neither"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, weighter=None, pct=0.5, n_features_to_select=None, verbose=0):
        self.weighter = weighter
        self.pct = pct
        self.n_features_to_select = n_features_to_select
        self.verbose = verbose

    def fit(self, X, y):
        """Run the rounds of removal and refitting on ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training samples; a DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (n_samples,)
            Targets the weighter learns its weights from in every round.

        Returns
        -------
        self : TuRF
            The fitted selector.
        """
        validate_params(self)
        if y is None:
            self._weighter().fit(X, y)
        X = self._check_X(X)
        d = X.shape[1]
        keep = _n_to_select(self.n_features_to_select, self.pct, d)
        per_round = max(1, int(round(self.pct * d))) if isinstance(self.pct, float) else int(self.pct)
        remaining = np.arange(d)
        removed = []  # per round: the removed indices, best first
        scores = np.zeros(d)
        rnd = np.zeros(d, dtype=np.int64)
        while True:
            est = self._weighter().fit(X[:, remaining], y)
            r = fitted_ranking(est)
            s = getattr(est, "scores_", None)
            scores[remaining] = _weights(est) if s is None else np.asarray(s, dtype=np.float64)
            order = remaining[np.argsort(r, kind="stable")]  # best first
            if remaining.shape[0] <= keep:
                break
            n_remove = min(per_round, remaining.shape[0] - keep)
            gone = order[-n_remove:]
            removed.append(gone)
            rnd[gone] = len(removed)
            if self.verbose:
                print(f"[TuRF] round {len(removed)}: {remaining.shape[0]} features, removed {n_remove}")
            remaining = np.sort(order[:-n_remove])
        ranking = np.empty(d, dtype=np.int64)
        sequence = np.concatenate([order] + removed[::-1]) if removed else order
        ranking[sequence] = np.arange(1, d + 1)
        self.ranking_ = ranking
        self.elimination_round_ = rnd
        self.scores_ = scores
        self.n_rounds_ = len(removed)
        self.estimator_ = est
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[remaining] = True
        return self
