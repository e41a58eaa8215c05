"""Comparing weighters on a user's data: repeated CV of weighted kNN against plain kNN.

The pieces behind ``knnweights evaluate``:

* :class:`KNNCell` is one cross-validation cell (impute and scale on the training part
  only, fit the weighter, score the weighted kNN on the test part, and the accuracy of
  plain kNN on the top ``m`` features of the fold's ranking); it records the warnings
  the fit raised instead of printing them;
* :func:`compare_methods` runs every method's cells with
  :func:`~knnweights.evaluation.run_grid` (seeded, resumable, any joblib backend);
* :func:`pairwise_tests` compares every pair of methods on the same cells (Nadeau &
  Bengio's corrected resampled t-test by default, or the papers' plain paired t-test);
* :func:`warning_summary` gives one line per method, dataset and warning.
"""

import re
import warnings
from collections import Counter

import numpy as np
from sklearn.base import clone

from ..classifiers import KNNClassifier, WeightedKNN, class_votes, majority_class
from ..engine.neighbors import select_nearest, tie_tolerance, weighted_distances
from ..selection import fitted_ranking
from .grid import run_grid
from .preprocessing import impute_and_scale
from .protocols import RepeatedCV
from .results import as_records, paired_cells
from .stats import corrected_ttest, count_outcomes, paired_outcome, paired_ttest
from .tuning import set_random_states

__all__ = ["PLAIN", "KNNCell", "compare_methods", "pairwise_tests", "win_tie_loss_counts",
           "warning_summary", "top_grid", "top_curves", "collect_warnings"]

#: name of the plain (unweighted) kNN baseline in the results
PLAIN = "kNN"


def top_grid(n_features):
    """Numbers of top features for the curves: 1, 2, 5, 10, 20, 50, ... up to ``n_features`` (included).

    Parameters
    ----------
    n_features : int
        The number of features; the grid ends with it.

    Returns
    -------
    grid : list of int
        The numbers, increasing.
    """
    grid, base = [], 1
    while base <= n_features:
        grid.extend(m for m in (base, 2 * base, 5 * base) if m < n_features)
        base *= 10
    return [*sorted(set(grid)), int(n_features)]


_NUMBER = re.compile(r"[-+]?\d[\d.,eE+-]*")


def _warning_key(w):
    """A warning without its numbers, so the same warning from every fold counts once."""
    text = " ".join(str(w.message).split())
    pattern = _NUMBER.sub("#", text)
    return f"{w.category.__name__}: {pattern}", f"{w.category.__name__}: {text}"


def collect_warnings(record):
    """``[[pattern, first message, count], ...]`` of recorded warnings (``warnings.catch_warnings(record=True)``).

    A warning's pattern is its category and message with the numbers replaced by ``#``, so the
    same warning from every fold counts once; the first message of each pattern is kept.

    Parameters
    ----------
    record : list of warnings.WarningMessage
        The warnings caught.

    Returns
    -------
    summary : list of list
        One ``[pattern, first message, count]`` per pattern, in order of first appearance.
    """
    seen = {}
    for w in record:
        key, text = _warning_key(w)
        if key in seen:
            seen[key][2] += 1
        else:
            seen[key] = [key, text, 1]
    return list(seen.values())


def _top_curve(Xtr, ytr, Xte, yte, ranks, grid, k):
    """Accuracy (percent) of plain Euclidean kNN on the top ``m`` features, for each ``m`` of ``grid``.

    The squared distances grow by one block of features per step (each feature's
    contribution is added once, so the sums run in the order of the ranking); the ``k``
    nearest are found by the engine's tie rule (equal distances to the lower training index)
    with the tolerances of the top ``m`` features, and a tie of votes goes to the first class
    (:func:`~knnweights.classifiers.majority_class`).
    """
    order = np.argsort(ranks, kind="stable")
    classes, codes = np.unique(ytr, return_inverse=True)
    D = np.zeros((Xte.shape[0], Xtr.shape[0]))
    done, out = 0, []
    for m in grid:
        block = order[done:m]
        if block.size:
            D += weighted_distances(Xte[:, block], Xtr[:, block], metric="sqeuclidean")
        done = m
        top = order[:m]
        idx, _ = select_nearest(D, k, tie_tolerance(Xte[:, top], "sqeuclidean"),
                                tie_tolerance(Xtr[:, top], "sqeuclidean"))
        pred = majority_class(class_votes(idx, codes, classes.size), classes)
        out.append(100.0 * float(np.mean(pred == yte)))
    return out


class KNNCell:
    """One cross-validation cell of weighted kNN (or plain kNN), as a runner callable.

    Called by :func:`~knnweights.evaluation.run_grid` with a training and a test part:
    missing values are filled with the training medians, features scaled on the
    training part (``scale``), the weighter is fitted on the training part, and the
    test part is classified by kNN with the weighter's metric on the weighted features
    (:class:`~knnweights.classifiers.WeightedKNN`).  Without a weighter it is plain
    kNN (Euclidean) on the scaled features.

    Parameters
    ----------
    weighter : estimator or None
        An unfitted weighter (cloned; an unset ``random_state`` is seeded per cell).
    n_neighbors : int, default=5
        Neighbours of the kNN (at most the training part's size).
    scale : {"standard", "minmax", "none"}, default="standard"
        Scaling fitted on the training part (:func:`~knnweights.evaluation.preprocessing.make_scaler`).
    curve : bool, default=True
        Also record the accuracy of plain kNN on the fold's top ``m`` features
        (``m`` in :func:`top_grid`), from the weighter's ranking.

    Notes
    -----
    A call returns a dict: ``accuracy`` (fraction), ``warnings`` (``[[pattern, first
    message, count]]``, the warnings the cell raised, numbers masked in the pattern),
    and with a weighter and ``curve``: ``top_n`` and ``top_accuracy`` (percent).
    """

    def __init__(self, weighter=None, n_neighbors=5, scale="standard", curve=True):
        self.weighter = weighter
        self.n_neighbors = n_neighbors
        self.scale = scale
        self.curve = curve

    def __repr__(self):
        return (f"KNNCell(weighter={self.weighter!r}, n_neighbors={self.n_neighbors}, scale={self.scale!r}, "
                f"curve={self.curve})")

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        out = {}
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with np.errstate(all="ignore"):
                Xtr, Xte = impute_and_scale(X_train, X_test, self.scale)
                k = min(self.n_neighbors, Xtr.shape[0])
                if self.weighter is None:
                    knn = KNNClassifier(n_neighbors=k).fit(Xtr, y_train)
                    acc = float(np.mean(knn.predict(Xte) == y_test))
                else:
                    est = clone(self.weighter)
                    if random_state is not None:
                        set_random_states(est, random_state)
                    clf = WeightedKNN(est, n_neighbors=k).fit(Xtr, y_train)
                    acc = float(np.mean(clf.predict(Xte) == y_test))
                    if self.curve:
                        grid = top_grid(Xtr.shape[1])
                        out["top_n"] = grid
                        out["top_accuracy"] = _top_curve(Xtr, y_train, Xte, y_test, fitted_ranking(clf.weighter_),
                                                         grid, k)
        out["accuracy"] = acc
        out["warnings"] = collect_warnings(record)
        return out


def compare_methods(X, y, weighters, *, name="data", cv=(10, 10), n_neighbors=5, scale="standard",
                    random_state=0, n_jobs=None, store=None, progress=None, plain=True, curve=True):
    """Repeated stratified CV of weighted kNN for each weighter (and plain kNN) on one dataset.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Numeric features; NaN allowed (filled with the training part's medians per cell).
    y : array-like of shape (n,)
        Class labels.
    weighters : dict
        Name -> unfitted weighter.
    name : str, default="data"
        The dataset's name in the rows.
    cv : (n_splits, n_repeats), default=(10, 10)
        Folds per repeat and repeats of the stratified CV.
    n_neighbors : int, default=5
        Neighbours of every kNN.
    scale : {"standard", "minmax", "none"}, default="standard"
        Scaling fitted on each training part.
    random_state : int, default=0
        Root seed of the splits and of every cell.
    n_jobs : int, optional
        As in :func:`~knnweights.evaluation.run_grid` (``None`` follows the active
        joblib backend, e.g. a dask cluster through
        :func:`~knnweights.evaluation.distributed.use_scheduler`).
    store : str or path-like, optional
        Resumable store of finished cells (JSON lines).
    progress : bool, optional
        Progress bar on stderr; default: only when stderr is a terminal.
    plain : bool, default=True
        Include plain kNN, named :data:`PLAIN`.
    curve : bool, default=True
        Record the top-feature accuracy curve in each cell.

    Returns
    -------
    pandas.DataFrame
        The runner's rows (``accuracy`` in percent), with ``warnings`` and, for the
        weighters, ``top_n`` / ``top_accuracy``.
    """
    methods = {}
    if plain:
        methods[PLAIN] = KNNCell(None, n_neighbors=n_neighbors, scale=scale, curve=False)
    for m, w in weighters.items():
        if m == PLAIN:
            raise ValueError(f"the method name {PLAIN!r} is reserved for plain kNN.")
        methods[m] = KNNCell(w, n_neighbors=n_neighbors, scale=scale, curve=curve)
    n_splits, n_repeats = cv
    return run_grid(methods, {name: (np.asarray(X, dtype=np.float64), np.asarray(y))},
                    protocol=RepeatedCV(n_splits, n_repeats), random_state=random_state, n_jobs=n_jobs,
                    store=store, progress=progress, as_frame=True)


def pairwise_tests(results, test="corrected", alpha=0.05, min_diff=0.0, methods=None):
    """Every ordered pair of methods on every dataset: mean difference, t, p and outcome.

    Parameters
    ----------
    results : DataFrame or list of dict
        Rows of :func:`compare_methods` / :func:`~knnweights.evaluation.run_grid`.
    test : {"corrected", "plain"}, default="corrected"
        Nadeau & Bengio's corrected resampled t-test
        (:func:`~knnweights.evaluation.corrected_ttest`, the training-set overlap of
        repeated CV accounted for), or Student's plain paired t-test
        (:func:`~knnweights.evaluation.paired_ttest`, the papers' choice, too liberal
        for repeated CV).
    alpha : float, default=0.05
        Significance level.
    min_diff : float, default=0.0
        Minimum mean difference (percentage points) for a win.
    methods : list of str, optional
        The methods compared and their order (default: order of appearance).

    Returns
    -------
    list of dict
        ``dataset``, ``method``, ``other``, ``diff`` (mean accuracy of ``method`` minus
        ``other``, points), ``t``, ``p``, ``outcome`` (``"win"``, ``"tie"`` or
        ``"loss"`` for ``method``), ``n_pairs``.
    """
    if test not in ("corrected", "plain"):
        raise ValueError(f"test must be 'corrected' or 'plain'; got {test!r}.")
    rows = as_records(results)
    cells, sizes = paired_cells(rows)
    if methods is None:
        methods = list(dict.fromkeys(r["method"] for r in rows))
    out = []
    for d in dict.fromkeys(r["dataset"] for r in rows):
        for a in methods:
            for b in methods:
                if a == b or (a, d) not in cells or (b, d) not in cells:
                    continue
                keys = sorted(set(cells[(a, d)]) & set(cells[(b, d)]))
                if len(keys) < 2:
                    continue
                va = np.array([cells[(a, d)][k] for k in keys])
                vb = np.array([cells[(b, d)][k] for k in keys])
                diff = float(np.mean(va - vb))
                if test == "corrected":
                    n_train, n_test = sizes[d]
                    t, p = corrected_ttest(va - vb, n_train, n_test)
                else:
                    t, p = paired_ttest(va, vb)
                out.append({"dataset": d, "method": a, "other": b, "diff": diff, "t": float(t), "p": float(p),
                            "outcome": paired_outcome(diff, p, alpha=alpha, min_diff=min_diff), "n_pairs": len(keys)})
    return out


def win_tie_loss_counts(pairs, against=None):
    """W/T/L of each method against every other (or only against ``against``), from :func:`pairwise_tests`.

    Parameters
    ----------
    pairs : list of dict
        Rows of :func:`pairwise_tests`.
    against : str, optional
        Count only the comparisons with this method.

    Returns
    -------
    list of dict
        ``method``, ``wins``, ``ties``, ``losses`` and ``wtl`` (the format of
        :func:`knnweights.plotting.plot_win_tie_loss`), in order of first appearance.
    """
    outcomes = {}
    for p in pairs:
        if against is None or p["other"] == against:
            outcomes.setdefault(p["method"], []).append(p["outcome"])
    return [{"method": m, **count_outcomes(o)} for m, o in outcomes.items()]


def warning_summary(results):
    """One line per (method, dataset, warning): how many cells raised it and its first message.

    Parameters
    ----------
    results : DataFrame or list of dict
        Rows with a ``warnings`` entry (:class:`KNNCell`).

    Returns
    -------
    list of str
    """
    rows = as_records(results)
    groups, cells = {}, Counter()
    for r in rows:
        cells[(r["method"], r["dataset"])] += 1
        ws = r.get("warnings")
        if not isinstance(ws, list):
            continue
        for key, text, count in ws:
            g = groups.setdefault((r["method"], r["dataset"], key), [text, 0, 0])
            g[1] += 1
            g[2] += int(count)
    lines = []
    for (m, d, _), (text, n_cells, _) in groups.items():
        lines.append(f"{m} on {d}: {text} (in {n_cells} of {cells[(m, d)]} cells)")
    return lines


def top_curves(results):
    """Per method: ``n_features``, ``mean`` and ``std`` (fractions) of the top-feature accuracies over the cells.

    Parameters
    ----------
    results : DataFrame or list of dict
        Rows of :func:`compare_methods` (those with ``top_n`` and ``top_accuracy``).

    Returns
    -------
    dict
        Method -> ``{"n_features", "mean", "std"}``, the format
        :func:`knnweights.plotting.plot_top_feature_curves` draws.
    """
    rows = as_records(results)
    acc = {}
    for r in rows:
        grid, vals = r.get("top_n"), r.get("top_accuracy")
        if not isinstance(grid, list) or not isinstance(vals, list):
            continue
        acc.setdefault(r["method"], {"grid": grid, "vals": []})["vals"].append(vals)
    out = {}
    for m, v in acc.items():
        a = np.asarray(v["vals"], dtype=np.float64) / 100.0
        out[m] = {"n_features": np.asarray(v["grid"]), "mean": a.mean(axis=0), "std": a.std(axis=0)}
    return out
