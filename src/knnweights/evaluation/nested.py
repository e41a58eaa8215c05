"""Nested cross-validation around a whole model choice, and the stability of the selected feature sets.

:func:`nested_evaluate` refits an estimator that chooses its own configuration (such as
:class:`~knnweights.evaluation.AutoWeightedKNN`, whose inner CV picks the weighter, the features
and ``k``) in every outer training fold and tests it on the outer test fold, which the choice
never saw.  Selecting features on all samples and then cross-validating the classifier lets the
test folds leak into the selection and reports accuracy well above chance on pure noise; the
outer loop here does not.

:func:`selection_stability` is Nogueira, Sechidis & Brown's (2018) stability index of the
selected sets, with its asymptotic confidence interval.
"""

import html
import inspect
import numbers
from dataclasses import dataclass, field

import joblib
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats as _sps
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegressionCV
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_array

from ..utils import column_names, format_label, progress_bar
from ..weighters._validation import is_continuous_target, validate_training_data
from .auto import AutoWeightedKNN, _covariate_frame, _rows, fit_with_covariates
from .grid import _data_key, fingerprint_view
from .protocols import RepeatedCV, derive_seed, root_seed
from .stats import corrected_interval, corrected_ttest
from .store import ResultStore, jsonable
from .tuning import set_random_states

__all__ = ["NestedResult", "StabilityIndex", "nested_evaluate", "selection_stability"]


@dataclass
class StabilityIndex:
    """Nogueira, Sechidis & Brown's stability index of a collection of selected feature sets.

    Parameters
    ----------
    value : float
        The estimate ``Phi-hat`` (1: identical sets; about 0: sets as alike as random ones of the
        same sizes; it can be negative).
    variance : float
        Its estimated asymptotic variance.
    low, high : float
        The confidence interval ``value -+ z sqrt(variance)``.
    """

    value: float
    variance: float
    low: float
    high: float


def selection_stability(selected, confidence=0.95):
    """Stability index of selected feature sets (Nogueira, Sechidis & Brown 2018) with its interval.

    With ``Z`` the ``(M, d)`` 0/1 matrix of ``M`` selected sets, ``p_f`` the share of sets holding
    feature ``f``, ``s_f^2 = M / (M - 1) p_f (1 - p_f)`` its unbiased variance, ``k_i`` the size of
    set ``i`` and ``kbar`` their mean::

        Phi-hat = 1 - mean_f(s_f^2) / ((kbar / d) (1 - kbar / d))

    (Definition 4 of the paper: the only measure they find to satisfy all five of their
    properties, variable set sizes included).  Its asymptotic variance (their Theorem 7 and
    Section 5) is estimated by ``4 / M^2 sum_i (phi_i - mean(phi))^2`` with, for each set::

        phi_i = [ (1/d) sum_f Z_if p_f - k_i kbar / d^2
                  + (Phi-hat / 2) (2 k_i kbar / d^2 - k_i / d - kbar / d + 1) ] / ((kbar / d) (1 - kbar / d))

    and the interval is ``Phi-hat -+ z_{(1 + confidence) / 2} sqrt(variance)``.  The formulas
    are written from the paper's Definition 4 and Theorem 7 (the paper is not bundled with the
    package).  When every
    set is empty or every set holds all features the index is undefined (0 / 0); the sets are
    then identical, and the value is 1 with zero variance.

    Parameters
    ----------
    selected : array-like of bool or 0/1, shape (M, d)
        One row per selected set (``M >= 2``), one column per feature.
    confidence : float, default=0.95
        Coverage of the interval.

    Returns
    -------
    StabilityIndex
        ``value``, ``variance``, ``low``, ``high``.

    References
    ----------
    S. Nogueira, K. Sechidis and G. Brown, "On the stability of feature selection algorithms",
    Journal of Machine Learning Research 18(174):1-54, 2018.

    Examples
    --------
    >>> selection_stability([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]).value
    1.0
    >>> round(selection_stability([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0, 0]]).value, 4)
    0.3333
    """
    Z = check_array(selected, dtype=np.float64, ensure_min_samples=2, input_name="selected")
    if not np.all((Z == 0) | (Z == 1)):
        raise ValueError("selected must hold 0 / 1 (or boolean) values, one row per selected set.")
    M, d = Z.shape
    p = Z.mean(axis=0)
    k = Z.sum(axis=1)
    kbar = float(k.mean())
    denom = (kbar / d) * (1.0 - kbar / d)
    if denom <= 0.0:  # every set empty, or every set all features: identical sets
        return StabilityIndex(1.0, 0.0, 1.0, 1.0)
    value = float(1.0 - (M / (M - 1.0)) * np.mean(p * (1.0 - p)) / denom)
    phi = ((Z @ p) / d - k * kbar / d**2 + (value / 2.0) * (2.0 * k * kbar / d**2 - k / d - kbar / d + 1.0)) / denom
    variance = float(4.0 / M**2 * np.sum((phi - phi.mean()) ** 2))
    half = float(_sps.norm.ppf(0.5 + confidence / 2.0) * np.sqrt(variance))
    return StabilityIndex(value, variance, value - half, value + half)


@dataclass
class NestedResult:
    """What :func:`nested_evaluate` returns.

    Parameters
    ----------
    metric : str
        ``"accuracy"``, or ``"r2"`` for a continuous target.
    estimate : float
        The estimator's mean outer-test score.
    interval : tuple of float
        Its confidence interval (corrected resampled t, Nadeau & Bengio; an accuracy's is
        clipped to ``[0, 1]``).
    summary : pandas.DataFrame
        One row per method (the estimator first, then the baselines): ``mean``, ``low``,
        ``high`` of the score (for a continuous target also ``rmse``, ``rmse_low``,
        ``rmse_high``) and ``p_vs_estimator``, the corrected resampled t-test's p of the
        estimator against that method on the same folds.
    scores : pandas.DataFrame
        One row per outer split: ``repeat``, ``fold``, ``n_train``, ``n_test`` and each method's
        score (for a continuous target also ``rmse:<method>``).
    choices : pandas.DataFrame
        One row per outer split: ``repeat``, ``fold``, the estimator's ``best_params_`` and its
        inner score ``inner_score`` (where it has them) and ``n_selected``.
    selected : pandas.DataFrame
        The selected sets: one boolean row per outer split, one column per feature.
    selection_frequency : pandas.Series
        Each feature's share of the outer splits that selected it, highest first.
    mean_rank : pandas.Series
        Each feature's mean rank (1 = best) over the outer splits, best first.
    stability : StabilityIndex
        The selected sets' stability index with its interval (:func:`selection_stability`).
    consensus : list
        The features selected in at least ``consensus`` of the outer splits (all of them for
        ``"all"``), most often selected first.
    confidence : float
        Coverage of the intervals.
    """

    metric: str
    estimate: float
    interval: tuple
    summary: pd.DataFrame
    scores: pd.DataFrame
    choices: pd.DataFrame
    selected: pd.DataFrame
    selection_frequency: pd.Series
    mean_rank: pd.Series
    stability: StabilityIndex
    consensus: list = field(default_factory=list)
    confidence: float = 0.95

    def feature_table(self):
        """One row per feature: how often it was selected, its mean rank, whether it is in the consensus.

        Returns
        -------
        pandas.DataFrame
            Columns ``feature``, ``selection_frequency``, ``mean_rank``, ``consensus``; the
            consensus features first, then by frequency and mean rank.
        """
        t = pd.DataFrame({"feature": list(self.selected.columns),
                          "selection_frequency": self.selected.mean(axis=0).to_numpy(),
                          "mean_rank": self.mean_rank.reindex(self.selected.columns).to_numpy()})
        t["consensus"] = t["feature"].isin(self.consensus)
        return t.sort_values(["consensus", "selection_frequency", "mean_rank"], ascending=[False, False, True],
                             kind="stable").reset_index(drop=True)

    def to_html(self, title="Nested cross-validation", top=30):
        """A self-contained HTML report: the estimate and baselines, the choices, the stability, the features.

        Parameters
        ----------
        title : str, default="Nested cross-validation"
            The page's heading.
        top : int, default=30
            Rows of the feature table shown (the most often selected).

        Returns
        -------
        str
            The HTML page.
        """
        lo, hi = self.interval
        s = self.stability
        pct = round(100 * self.confidence)
        parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>",
                 f"<h1>{html.escape(title)}</h1>",
                 f"<p>Outer estimate ({self.metric}): <b>{self.estimate:.4f}</b>, {pct}% interval "
                 f"[{lo:.4f}, {hi:.4f}] (corrected resampled t, Nadeau &amp; Bengio), over "
                 f"{len(self.scores)} outer splits.</p>",
                 "<h2>Methods on the same outer splits</h2>", self.summary.to_html(float_format="%.4f"),
                 "<h2>Configuration chosen in each outer split</h2>", self.choices.to_html(index=False),
                 f"<h2>Stability of the selected sets</h2><p>Nogueira et al. (2018) index {s.value:.4f}, {pct}% "
                 f"interval [{s.low:.4f}, {s.high:.4f}].</p>",
                 f"<h2>Features (consensus: {len(self.consensus)})</h2>",
                 self.feature_table().head(int(top)).to_html(index=False, float_format="%.4g"),
                 "</body></html>"]
        return "\n".join(parts)


def _l1_logistic(inner_cv, random_state):
    """Standardised L1 logistic regression with C chosen by its own inner CV (one-vs-rest for several classes)."""
    params = inspect.signature(LogisticRegressionCV).parameters
    kw = {"Cs": 10, "cv": inner_cv, "solver": "liblinear", "scoring": "accuracy", "random_state": random_state}
    if params["penalty"].default == "deprecated":  # scikit-learn >= 1.8 names the L1 penalty by l1_ratios
        kw["l1_ratios"] = (1.0,)
    else:
        kw["penalty"] = "l1"
    if "use_legacy_attributes" in params:
        kw["use_legacy_attributes"] = False
    return make_pipeline(StandardScaler(), OneVsRestClassifier(LogisticRegressionCV(**kw)))


def default_baselines(estimator, regression):
    """The baselines beside ``estimator``: plain kNN (``k`` tuned alike) and a standard non-kNN model.

    Parameters
    ----------
    estimator : estimator
        The estimator evaluated (an :class:`AutoWeightedKNN` lends its ``n_neighbors`` grid and
        ``cv`` to the plain kNN; a pipeline's steps before its last precede every baseline).
    regression : bool
        Whether the target is continuous.

    Returns
    -------
    baselines : dict
        Name -> unfitted estimator: ``"kNN"`` (unweighted, all features, ``k`` by inner CV), and
        ``"L1 logistic"`` (standardised, C by 5-fold inner CV) or, for a continuous target,
        ``"random forest"``.
    """
    steps = getattr(estimator, "steps", None)
    if steps:  # a pipeline: the baselines get the same preprocessing steps before them
        return {name: Pipeline([*[(n, clone(t)) for n, t in steps[:-1]], ("model", model)])
                for name, model in default_baselines(steps[-1][1], regression).items()}
    inner = getattr(estimator, "cv", 5)
    knn = AutoWeightedKNN(weighters=[None], n_neighbors=getattr(estimator, "n_neighbors", None),
                          cv=inner if isinstance(inner, numbers.Integral) else 5)
    if regression:
        return {"kNN": knn, "random forest": RandomForestRegressor(n_estimators=200)}
    return {"kNN": knn, "L1 logistic": _l1_logistic(inner if isinstance(inner, numbers.Integral) else 5, None)}


def _outer_protocol(cv, regression):
    if isinstance(cv, numbers.Integral):
        return RepeatedCV(n_splits=int(cv), n_repeats=1, stratified=not regression)
    if isinstance(cv, tuple) and len(cv) == 2:
        return RepeatedCV(n_splits=int(cv[0]), n_repeats=int(cv[1]), stratified=not regression)
    if callable(getattr(cv, "split", None)):
        return cv
    raise ValueError(f"cv must be an int (folds), a tuple (folds, repeats) or a protocol such as RepeatedCV; "
                     f"got {cv!r}.")


def _score(model, X, y, regression):
    pred = model.predict(X)
    if regression:
        return float(r2_score(y, pred)), float(np.sqrt(mean_squared_error(y, pred)))
    return float(accuracy_score(y, pred)), None


def _final_step(model):
    """The model that chose, of a pipeline its last step (preprocessing keeps the columns)."""
    steps = getattr(model, "steps", None)
    return steps[-1][1] if steps else model


def _set_progress(estimator, value):
    """Set every ``progress`` parameter of ``estimator`` (nested ones included) to ``value``; returns it."""
    params = estimator.get_params(deep=True) if hasattr(estimator, "get_params") else {}
    new = {k: value for k in params if k == "progress" or k.endswith("__progress")}
    return estimator.set_params(**new) if new else estimator


def _outer_split(estimator, baselines, X, y, train, test, seed, regression, covariates=None):
    """Fit the estimator (given the training part's covariates) and the baselines on one outer training part,
    score them on its test part; the inner fits show no progress bars (the outer loop has one)."""
    out = {"scores": {}, "rmse": {}}
    for name, est in [("estimator", estimator), *baselines.items()]:
        model = _set_progress(set_random_states(clone(est), derive_seed(seed, name)), False)
        given = _rows(covariates, train) if name == "estimator" else None  # the baselines: X alone
        model = fit_with_covariates(model, X[train], y[train], given)
        out["scores"][name], out["rmse"][name] = _score(model, X[test], y[test], regression)
        if name == "estimator":
            model = _final_step(model)
            out["params"] = dict(getattr(model, "best_params_", {}))
            out["inner_score"] = getattr(model, "best_score_", np.nan)
            support = getattr(model, "support_", None)
            if support is None and hasattr(model, "get_support"):
                support = model.get_support()
            out["support"] = None if support is None else np.asarray(support, dtype=bool)
            ranking = getattr(model, "ranking_", None)
            out["ranking"] = None if ranking is None else np.asarray(ranking, dtype=np.float64)
    return out


def _split_key(estimator, baselines, data_key, protocol, seed, repeat, fold):
    """A stored outer split's key: what identifies it (the models as parameters, the data, the split)."""
    view = (fingerprint_view(estimator), fingerprint_view(baselines), data_key, repr(protocol), seed, repeat, fold)
    return joblib.hash(view)


def _stored_split(row):
    """An outer split's output as :func:`_outer_split` returns it, from its stored row."""
    out = {k: row[k] for k in ("scores", "rmse", "params", "inner_score")}
    out["inner_score"] = np.nan if out["inner_score"] is None else out["inner_score"]
    out["support"] = None if row["support"] is None else np.asarray(row["support"], dtype=bool)
    out["ranking"] = None if row["ranking"] is None else np.asarray(row["ranking"], dtype=np.float64)
    return out


def nested_evaluate(estimator, X, y, cv=(5, 5), baselines=True, consensus=0.5, confidence=0.95,
                    random_state=None, n_jobs=None, progress=None, store=None, covariates=None):
    """Nested cross-validation: an outer CV around the estimator's whole inner choice.

    Every outer training part gets a fresh clone of ``estimator`` (whose ``fit`` makes its own
    choices by inner CV, as :class:`AutoWeightedKNN` does); the outer test part, never seen by
    that choice, scores it.  The baselines are fitted and scored on the same outer splits, so
    the comparisons are paired.  The interval of each mean score is the corrected resampled t
    (Nadeau & Bengio 2003: variance ``(1/J + n_test/n_train) s^2`` for ``J`` splits, since the
    training parts overlap), :func:`~knnweights.evaluation.corrected_interval`.

    ``covariates`` go to the estimator's fit with the rows of each outer training part (and
    within it, :class:`AutoWeightedKNN` gives them to its inner folds' Relief fits, the same
    rows again): they adjust the q-value selection, and are neither features of the estimator
    nor of the baselines, which are fitted and scored on ``X`` alone.

    Parameters
    ----------
    estimator : estimator
        The model evaluated, unfitted: typically an :class:`AutoWeightedKNN`, or a pipeline
        ending in one after steps that keep the columns (imputation, scaling).  Its (last
        step's) ``best_params_``, ``support_`` (or ``get_support()``) and ``ranking_`` are read
        after each fit, where it has them.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Samples; a DataFrame's column names name the features in the result.
    y : array-like of shape (n_samples,)
        Class labels, or a continuous target (scores: R^2 and RMSE).
    cv : int, tuple (n_splits, n_repeats) or protocol, default=(5, 5)
        Outer splits: repeated stratified k-fold (plain k-fold for a continuous target), or a
        :class:`~knnweights.evaluation.RepeatedCV` / ``RepeatedHoldout``.
    baselines : bool or dict, default=True
        ``True``: :func:`default_baselines` (plain kNN with ``k`` tuned, and L1 logistic
        regression, or a random forest for a continuous target); ``False``: none; a dict
        name -> unfitted estimator: those.
    consensus : float in (0, 1] or "all", default=0.5
        The consensus list holds the features selected in at least this share of the outer
        splits; ``"all"``: in every one (the intersection).
    confidence : float, default=0.95
        Coverage of the intervals.
    random_state : int, RandomState or None, default=None
        Seeds the outer splits, and every ``random_state`` left ``None`` in the estimator and
        the baselines (a seed per split and method).
    n_jobs : int, default=None
        Outer splits fitted in parallel (joblib; any backend).
    progress : bool or None, default=None
        Show a progress bar over the outer splits (``None``: on a terminal only).
    store : str or path-like, optional
        A ``.jsonl`` file that keeps each finished outer split (keyed by the models'
        parameters, the data, the protocol and the split): a run killed part-way resumes
        from it, computing only the splits not stored, to the same result.
    covariates : array-like or DataFrame of shape (n_samples, n_covariates), optional
        Covariates to adjust for (one row per sample of ``X``): passed to the estimator's
        (last step's) ``fit(..., covariates=)``, the rows of each outer training part; see
        :class:`AutoWeightedKNN`.

    Returns
    -------
    NestedResult
        The outer estimate and its interval, the baselines, the choice per split, the selection
        frequencies, mean ranks, stability index and consensus list.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.evaluation import AutoWeightedKNN, nested_evaluate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 20)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> model = AutoWeightedKNN(weighters=["ReliefF"], n_features=[2, 20], n_neighbors=[1, 5], cv=3)
    >>> res = nested_evaluate(model, X, y, cv=(3, 2), baselines=False, random_state=0, progress=False)
    >>> sorted(res.mean_rank.index[:2])
    [0, 1]
    >>> bool(res.interval[0] < res.estimate < res.interval[1])
    True
    """
    if not (consensus == "all" or (isinstance(consensus, numbers.Real) and 0 < consensus <= 1)):
        raise ValueError(f"consensus must be a share in (0, 1] or 'all'; got {consensus!r}.")
    names = column_names(X)
    # shapes and labels only (a throwaway validates: the caller's estimator stays unfitted); NaN is for the
    # estimator to refuse or impute (a pipeline)
    Xv, yv = validate_training_data(AutoWeightedKNN(), X, y, allow_nan=True)
    covariates = _covariate_frame(covariates, X, "nested_evaluate")
    Xv = np.asarray(Xv, dtype=np.float64)
    yv = np.asarray(yv)
    regression = is_continuous_target(yv)
    if not regression:
        classes, counts = np.unique(yv, return_counts=True)
        if len(classes) < 2:
            raise ValueError(f"nested_evaluate needs at least 2 classes; y has one ({format_label(classes[0])}).")
    else:
        yv = yv.astype(np.float64)
    protocol = _outer_protocol(cv, regression)
    n_outer = getattr(protocol, "n_splits", None)
    if not regression and n_outer is not None and counts.min() < n_outer:
        c = int(np.argmin(counts))
        raise ValueError(f"class {format_label(classes[c])} has {counts[c]} sample(s), fewer than the {n_outer} "
                         "outer folds; use fewer outer folds (cv) or collect more samples of that class.")
    chosen = {} if baselines is False or baselines is None else (
        default_baselines(estimator, regression) if baselines is True else dict(baselines))
    seed = root_seed(random_state)
    splits = [(r, f, tr, te) for r, f, tr, _, te in protocol.split(yv, seed, "nested")]
    outs = [None] * len(splits)
    keys = [None] * len(splits)
    if store is not None:
        store = ResultStore(store)
        data_key = _data_key(Xv, yv) if covariates is None else _data_key((Xv, covariates), yv)
        quiet = _set_progress(clone(estimator), None)  # the key does not depend on the progress bars
        keys = [_split_key(quiet, chosen, data_key, protocol, seed, r, f) for r, f, _, _ in splits]
        done = {row.get("key"): row for row in store.read()}
        outs = [_stored_split(done[k]) if k in done else None for k in keys]
    todo = [i for i, o in enumerate(outs) if o is None]
    jobs = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_outer_split)(estimator, chosen, Xv, yv, splits[i][2], splits[i][3],
                              derive_seed(seed, "outer", splits[i][0], splits[i][1]), regression, covariates)
        for i in todo)
    with progress_bar(len(splits), "nested CV", unit="splits", enabled=progress) as bar:
        bar.update(len(splits) - len(todo))
        for i, out in zip(todo, jobs, strict=True):
            outs[i] = out
            if store is not None:
                store.append({"key": keys[i], "repeat": splits[i][0], "fold": splits[i][1], **jsonable(out)})
            bar.update(1)
    return _result(outs, splits, list(chosen), names, Xv.shape[1], regression, consensus, confidence)


def _result(outs, splits, baseline_names, names, d, regression, consensus, confidence):
    """Assemble the :class:`NestedResult` of the outer splits' outputs."""
    methods = ["estimator", *baseline_names]
    n_train = np.array([len(tr) for _, _, tr, _ in splits])
    n_test = np.array([len(te) for _, _, _, te in splits])
    ntr, nte = float(n_train.mean()), float(n_test.mean())
    scores = pd.DataFrame({"repeat": [s[0] for s in splits], "fold": [s[1] for s in splits],
                           "n_train": n_train, "n_test": n_test})
    rows = {}
    for m in methods:
        v = np.array([o["scores"][m] for o in outs])
        scores[m] = v
        mean, low, high = corrected_interval(v, ntr, nte, confidence)
        if not regression:  # an accuracy lies in [0, 1]
            low, high = max(low, 0.0), min(high, 1.0)
        row = {"mean": mean, "low": low, "high": high}
        if regression:
            e = np.array([o["rmse"][m] for o in outs])
            scores[f"rmse:{m}"] = e
            row["rmse"], row["rmse_low"], row["rmse_high"] = corrected_interval(e, ntr, nte, confidence)
        base = scores["estimator"].to_numpy()
        row["p_vs_estimator"] = np.nan if m == "estimator" else corrected_ttest(base - v, ntr, nte)[1]
        rows[m] = row
    summary = pd.DataFrame.from_dict(rows, orient="index")
    labels = list(names) if names is not None else list(range(d))
    choices = pd.DataFrame([{"repeat": s[0], "fold": s[1], **o["params"], "inner_score": o["inner_score"]}
                            for s, o in zip(splits, outs, strict=True)])
    support = [o["support"] if o["support"] is not None else np.ones(d, dtype=bool) for o in outs]
    selected = pd.DataFrame(np.vstack(support), columns=labels)
    choices["n_selected"] = selected.sum(axis=1).to_numpy()
    freq = selected.mean(axis=0)
    rankings = [o["ranking"] for o in outs if o["ranking"] is not None]
    mean_rank = pd.Series(np.vstack(rankings).mean(axis=0) if rankings else np.full(d, (d + 1) / 2.0),
                          index=labels).sort_values(kind="stable")
    if len(outs) >= 2:
        stab = selection_stability(selected.to_numpy(), confidence)
    else:  # one split: one set, trivially stable
        stab = StabilityIndex(1.0, 0.0, 1.0, 1.0)
    keep = freq >= (1.0 if consensus == "all" else float(consensus) - 1e-12)
    order = freq[keep].sort_values(ascending=False, kind="stable")
    return NestedResult(
        metric="r2" if regression else "accuracy",
        estimate=float(summary.loc["estimator", "mean"]),
        interval=(float(summary.loc["estimator", "low"]), float(summary.loc["estimator", "high"])),
        summary=summary, scores=scores, choices=choices, selected=selected,
        selection_frequency=freq.sort_values(ascending=False, kind="stable"), mean_rank=mean_rank,
        stability=stab, consensus=list(order.index), confidence=confidence)
