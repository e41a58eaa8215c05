"""The rank table: every feature with each method's weight, signed score and rank, p- and q-values
and the univariate baselines, in one frame keyed by feature name.

:func:`rank_table` builds it (``knnweights rank`` writes it); :func:`fit_rank_table` also
returns the fitted weighters, their warnings and times.
"""

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ..engine.genotypes import is_byte_input
from ..selection import fitted_ranking, fitted_weights
from ..significance import PADJ_METHODS, adjust_pvalues, permutation_pvalues, univariate_tests
from ..utils import progress_bar
from ..weighters import REGRESSION_WEIGHTERS, SURVIVAL_METHODS, WEIGHTERS, is_continuous_target, is_survival_target
from .compare import collect_warnings
from .preprocessing import make_scaler

__all__ = ["rank_table", "fit_rank_table", "sort_by_mean_rank", "BASELINES", "MEAN_RANK"]


def _is_fitted(est):
    try:
        check_is_fitted(est)
    except Exception:
        return False
    return True


def _resolve_weighters(weighters):
    """``[(label, estimator), ...]`` from an estimator, a name, a list of either, or a dict."""
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
BASELINES = {"t": "t_test", "F": "anova", "pearson": "pearson", "spearman": "spearman", "cox": "cox_score",
             "t_adj": "t_test_adj", "F_adj": "anova_adj", "pearson_adj": "pearson_adj",
             "spearman_adj": "spearman_adj", "cox_adj": "cox_score_adj"}

#: ``sort_by`` value that orders the rows by the methods' mean rank
MEAN_RANK = "mean_rank"


def _configure(w, random_state, pvalues, target_type, params, padj="bh"):
    """Set rank_table's settings on a weighter built here (only the parameters it has)."""
    have = w.get_params()
    new = {k: v for k, v in (params or {}).items() if k in have}
    if random_state is not None and "random_state" in have and have["random_state"] is None:
        new["random_state"] = random_state
    if target_type != "auto" and "target_type" in have:
        new["target_type"] = target_type
    if pvalues and "pvalues" in have and not have["pvalues"]:
        new["pvalues"] = True  # the method's own test: one pass instead of B refits
    if pvalues and "padj" in have and have["padj"] != padj:
        new["padj"] = padj  # its qvalues_ then equal the table's q column
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


def _baseline_columns(A, y, continuous, survival=False, padj="bh", covariates=None):
    """``{column: values}`` of the univariate baselines (given ``covariates`` when there are):
    ``<b>_stat``, ``<b>_p``, ``<b>_q`` (``p`` adjusted by ``padj``) and ``<b>_rank`` (1 = smallest
    p; ties by larger ``|statistic|``, then column order)."""
    out = {}
    tests = univariate_tests(A, np.asarray(y), continuous=continuous, survival=survival, covariates=covariates)
    for key, (stat, p) in tests.items():
        b = BASELINES[key]
        order = np.lexsort((np.arange(p.size), -np.abs(stat), p))
        rank = np.empty(p.size, np.int64)
        rank[order] = np.arange(1, p.size + 1)
        out.update({f"{b}_stat": stat, f"{b}_p": p, f"{b}_q": adjust_pvalues(p, padj), f"{b}_rank": rank})
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


def rank_table(weighters, X, y=None, feature_names=None, *, pvalues=False, baselines=True, sort_by=None,
               scale=None, target_type="auto", n_permutations=199, n_jobs=None, random_state=None,
               weighter_params=None, verbose=0, progress=None, covariates=None, padj="bh"):
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
        Class labels, a continuous target, or a survival outcome (a structured array with
        fields ``event`` and ``time``); needed unless every weighter is fitted.
    feature_names : list of str, optional
        Feature names (default: ``X``'s columns, else the fitted weighter's
        ``feature_names_in_``, else ``x0, x1, ...``).
    pvalues : bool, default=False
        Add ``<label>_p`` and ``<label>_q`` (``p`` adjusted by ``padj``) per method: the
        method's own ``pvalues_`` where it has them (the Relief family; ``pvalues=True`` is
        set on those built here), else :func:`knnweights.permutation_pvalues` with
        ``n_permutations`` refits on the same (scaled) data.
    baselines : bool, default=True
        Add the univariate baselines of :func:`knnweights.significance.univariate_tests`
        (Welch t or ANOVA F for classes, Pearson and Spearman for a continuous target, the
        Cox score test ``cox_score`` for a survival outcome; with ``covariates`` the same
        questions given them, ``t_test_adj`` / ``anova_adj`` (the analysis of covariance),
        ``pearson_adj`` / ``spearman_adj`` (partial correlations), ``cox_score_adj``):
        ``<b>_stat``, ``<b>_p``, ``<b>_q`` (adjusted by ``padj``) and ``<b>_rank`` (1 =
        smallest p).  Needs ``y`` and finite values.
    sort_by : str, optional
        A method label: sort the rows by its rank; ``"mean_rank"``: by the methods' mean
        rank (a ``mean_rank`` column with several methods; ties by the first method's
        rank).  Default: the column order of ``X``.
    scale : {"standard", "minmax"} or None, default=None
        Scale the features before the fits, the permutation refits and the baselines
        (:func:`knnweights.evaluation.preprocessing.make_scaler`); the weights are those of the
        scaled features.
    target_type : {"auto", "classes", "continuous", "survival"}, default="auto"
        Set on the weighters built here that have the parameter (``"auto"`` leaves theirs);
        the baselines test classes, a continuous target or a survival outcome by the same
        rule (``"auto"``: a structured ``y`` is a survival outcome).  A survival outcome is
        scored by the Relief family only (``knnweights.weighters.SURVIVAL_METHODS``).
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
        Show progress bars on stderr: the methods fitted, and the permutation refits.
    progress : callable, optional
        Called as ``progress(event, label=, index=, total=, **info)`` with ``event`` one of
        ``"fit"`` (``shape``), ``"fitted"`` (``seconds``), ``"pvalues"`` (``source``:
        ``"pvalues_"`` or the number of permutations; ``qvalues``), so that a caller can
        report each step; with it the permutation refits show a progress bar too.
    covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
        Adjust the methods' p-values for these (needs ``pvalues=True``): passed to the fits as
        ``fit(X, y, covariates=...)`` (the Relief family's NPDR pair regression; the weights do
        not change).  A method without its own ``pvalues_`` (whose permutation test would permute
        ``y`` freely) is refused; the univariate baselines are adjusted too (their ``_adj``
        columns).
    padj : {"bh", "bonferroni", "holm", "by"}, default="bh"
        The multiple-testing adjustment of every ``_q`` column, each over the table's features
        (:func:`knnweights.significance.adjust_pvalues`: Benjamini-Hochberg or Benjamini-Yekutieli
        false discovery rate, Bonferroni or Holm family-wise error rate); set on the weighters
        built here (their ``qvalues_`` agree), and applied to a fitted weighter's ``pvalues_``.

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
                          progress=progress, covariates=covariates, padj=padj).table


def fit_rank_table(weighters, X, y=None, feature_names=None, *, pvalues=False, baselines=True, sort_by=None,
                   scale=None, target_type="auto", n_permutations=199, n_jobs=None, random_state=None,
                   weighter_params=None, on_error="raise", record_warnings=False, verbose=0, progress=None,
                   covariates=None, padj="bh"):
    """:func:`rank_table` with what the fits left: the fitted weighters, their warnings and times.

    Parameters
    ----------
    weighters, X, y, feature_names, pvalues, baselines, sort_by, scale, target_type, \
n_permutations, n_jobs, random_state, weighter_params, verbose, covariates, padj : see :func:`rank_table`
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
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip'; got {on_error!r}.")
    if padj not in PADJ_METHODS:
        raise ValueError(f"padj must be one of {', '.join(PADJ_METHODS)}; got {padj!r}.")
    if target_type not in ("auto", "classes", "continuous", "survival"):
        raise ValueError(f"target_type must be 'auto', 'classes', 'continuous' or 'survival'; got {target_type!r}.")
    items = _resolve_weighters(weighters)
    labels = [label for label, _ in items]
    survival = target_type == "survival" or (target_type == "auto" and y is not None and is_survival_target(y))
    if survival:
        other = [label for label, w in items if type(w).__name__ not in SURVIVAL_METHODS and not _is_fitted(w)]
        if other:
            raise ValueError(f"a survival outcome is scored by {', '.join(SURVIVAL_METHODS)} only; "
                             f"{', '.join(other)} cannot fit one (nor be tested by permuting it).")
        target_type = "survival"
    fit_kw = {}
    if covariates is not None:
        if not pvalues:
            raise ValueError("covariates adjust the p-values: pass pvalues=True (the weights do not depend on them).")
        for label, w in items:
            if _is_fitted(w) or "pvalues" not in w.get_params():
                raise ValueError(f"covariates: {label} has no covariate-adjusted p-values of its own (a fitted "
                                 "weighter, or one tested by permuting y freely); use the Relief family "
                                 "(ReliefF, MultiSURF, ...) unfitted, or leave covariates out.")
        fit_kw["covariates"] = covariates
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
        raise ValueError("baselines=True (the default) needs X (numeric, not genotype bytes) and y; "
                         "pass baselines=False to rank without the univariate baselines.")
    y_arr = None if y is None else np.asarray(y)
    permutation_bar = bool(verbose) or progress is not None

    def emit(event, **info):
        if progress is not None:
            progress(event, **info)

    cols, fitted, caught, seconds, failed, source = {}, {}, {}, {}, {}, {}

    def put(column, values):
        if column in cols or column == "feature":
            raise ValueError(f"two columns named {column!r}: give the methods other labels.")
        cols[column] = np.asarray(values)

    n_features = None
    with progress_bar(len(items), "rank_table", unit="methods", enabled=bool(verbose)) as fits:
        for i, (label, w) in enumerate(items, start=1):
            where = {"label": label, "index": i, "total": len(items)}
            idx = None  # fitted here: its arrays are in the column order of X
            if not _is_fitted(w):
                if X is None or y is None:
                    raise ValueError(f"{label} is not fitted: rank_table needs X and y to fit it.")
                w = _configure(clone(w), random_state, pvalues, target_type, weighter_params, padj)
                emit("fit", shape=tuple(A.shape), **where)
                t0 = time.perf_counter()
                try:
                    if record_warnings:
                        with warnings.catch_warnings(record=True) as record, np.errstate(all="ignore"):
                            warnings.simplefilter("always")
                            w.fit(A, y, **fit_kw)
                    else:
                        w.fit(A, y, **fit_kw)
                except Exception as exc:  # noqa: BLE001 - on_error="skip": one method failing must not hide the others
                    if on_error == "raise":
                        raise
                    failed[label] = exc
                    emit("failed", error=exc, **where)
                    fits.update()
                    continue
                seconds[label] = time.perf_counter() - t0
                caught[label] = collect_warnings(record) if record_warnings else []
                emit("fitted", seconds=seconds[label], **where)
            else:
                caught[label] = []
                idx = _name_order(w, names, label)
            rank = fitted_ranking(w)
            if n_features is None:
                n_features = rank.shape[0]
            elif rank.shape[0] != n_features:
                raise ValueError(f"{label} ranks {rank.shape[0]} features, the previous weighters {n_features}.")
            weight = fitted_weights(w)
            weight = np.full(n_features, np.nan) if weight is None else weight
            score = getattr(w, "scores_", None)
            score = weight if score is None else np.asarray(score, dtype=np.float64)
            own_p = getattr(w, "pvalues_", None) if pvalues else None
            by_name = [weight, score, rank] + ([np.asarray(own_p, dtype=np.float64), adjust_pvalues(own_p, padj)]
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
                                                  random_state=random_state, n_jobs=n_jobs, progress=permutation_bar,
                                                  padj=padj)
                    p, q, source[label] = res.pvalues, res.qvalues, int(n_permutations)
                put(f"{label}_p", p)
                put(f"{label}_q", q)
                emit("pvalues", source=source[label], qvalues=q, **where)
            fitted[label] = w
            fits.update()
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
        continuous = not survival and is_continuous_target(y_arr, target_type)
        for column, values in _baseline_columns(A, y_arr, continuous, survival, padj, covariates).items():
            put(column, values)
    table = pd.DataFrame({"feature": names, **cols})  # every column in X's column order, then one sort
    if sort_by == MEAN_RANK:
        table = sort_by_mean_rank(table, done)
    elif sort_by is not None:
        if sort_by not in fitted:
            raise ValueError(f"sort_by={sort_by!r}: that method could not be fitted.")
        table = table.sort_values(f"{sort_by}_rank", kind="stable").reset_index(drop=True)
    return Bunch(table=table, fitted=fitted, warnings=caught, seconds=seconds, failed=failed, pvalue_source=source)


