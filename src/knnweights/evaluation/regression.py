"""Comparing weighters on a continuous target: repeated CV of weighted kNN regression against plain kNN.

The continuous-target counterpart of :func:`knnweights.evaluation.compare.compare_methods`
behind ``knnweights evaluate`` when the target is continuous: each cell imputes and scales
on its training part, fits the weighter there, and scores
:class:`~knnweights.classifiers.WeightedKNNRegressor` (or plain :class:`~knnweights.classifiers.KNNRegressor`) on
the test part by the root mean squared error and R^2; :func:`regression_tests` compares
every method with plain kNN on the same cells by Nadeau & Bengio's corrected resampled
t-test on the RMSE differences.
"""

import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.metrics import r2_score

from ..classifiers import KNNRegressor, WeightedKNNRegressor
from .compare import PLAIN, collect_warnings
from .preprocessing import impute_and_scale
from .protocols import RepeatedCV, derive_seed
from .stats import corrected_ttest, paired_outcome
from .tuning import set_random_states

__all__ = ["compare_regression", "regression_tests"]


def _regression_cell(method, weighter, X, y, train, test, n_neighbors, scale, seed):
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as record, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        Xtr, Xte = impute_and_scale(X[train], X[test], scale)
        k = min(n_neighbors, Xtr.shape[0])
        if weighter is None:
            model = KNNRegressor(n_neighbors=k)
        else:
            model = WeightedKNNRegressor(set_random_states(clone(weighter), seed), n_neighbors=k)
        pred = model.fit(Xtr, y[train]).predict(Xte)
    err = pred - y[test]
    return {"method": method, "rmse": float(np.sqrt(np.mean(err**2))), "r2": float(r2_score(y[test], pred)),
            "n_train": int(train.size), "n_test": int(test.size), "fit_time": time.perf_counter() - t0,
            "warnings": collect_warnings(record)}


def compare_regression(X, y, weighters, *, name="data", cv=(10, 10), n_neighbors=5, scale="standard",
                       random_state=0, n_jobs=None, plain=True):
    """Repeated (unstratified) k-fold CV of weighted kNN regression for each weighter, and plain kNN.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Numeric features; NaN allowed (filled with the training part's medians).
    y : array-like of shape (n,)
        The continuous target.
    weighters : dict
        Name -> unfitted weighter with a continuous-target definition.
    name : str, default="data"
        The dataset's name in the rows (and in the cells' seeds).
    cv : (n_splits, n_repeats), default=(10, 10)
        Folds per repeat and repeats of the CV.
    n_neighbors : int, default=5
        Neighbours of every kNN regressor.
    scale : {"standard", "minmax", "none"}, default="standard"
        Scaling fitted on each training part.
    random_state : int, default=0
        Root seed of the splits and of every cell.
    n_jobs : int, optional
        Cells in parallel (joblib).
    plain : bool, default=True
        Include plain kNN regression, named :data:`~knnweights.evaluation.compare.PLAIN`.

    Returns
    -------
    list of dict
        One row per (method, repeat, fold): ``rmse``, ``r2``, ``n_train``, ``n_test``,
        ``fit_time``, ``warnings``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    methods = ({PLAIN: None} if plain else {}) | dict(weighters)
    splits = list(RepeatedCV(cv[0], cv[1], stratified=False).split(y, random_state, name))
    jobs = [(m, w, r, f, tr, te) for m, w in methods.items() for r, f, tr, _, te in splits]
    out = Parallel(n_jobs=n_jobs)(delayed(_regression_cell)(m, w, X, y, tr, te, n_neighbors, scale,
                                                 derive_seed(random_state, "cell", m, name, r, f))
                                  for m, w, r, f, tr, te in jobs)
    for row, (_, _, r, f, _, _) in zip(out, jobs, strict=True):
        row.update(dataset=name, repeat=int(r), fold=int(f))
    return out


def regression_tests(rows, alpha=0.05, reference=PLAIN):
    """Every method against ``reference`` on the same cells: mean RMSE and R^2 differences, corrected t-test.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`compare_regression`.
    alpha : float, default=0.05
        Significance level.
    reference : str, default=PLAIN
        The method every other is compared with.

    Returns
    -------
    list of dict
        ``method``, ``rmse_diff`` (method minus reference; negative = better), ``r2_diff``,
        ``t``, ``p`` (two-sided, Nadeau & Bengio's corrected resampled t-test on the RMSE
        differences), ``outcome`` (``"win"`` = lower RMSE at ``alpha``, ``"loss"``, ``"tie"``).
    """
    cells = {}
    for r in rows:
        cells.setdefault(r["method"], {})[(r.get("dataset"), r["repeat"], r["fold"])] = r
    ref = cells[reference]
    out = []
    for m, c in cells.items():
        if m == reference:
            continue
        keys = sorted(set(c) & set(ref))
        d_rmse = np.array([c[k]["rmse"] - ref[k]["rmse"] for k in keys])
        d_r2 = np.array([c[k]["r2"] - ref[k]["r2"] for k in keys])
        n_train = np.mean([ref[k]["n_train"] for k in keys])
        n_test = np.mean([ref[k]["n_test"] for k in keys])
        t, p = corrected_ttest(d_rmse, n_train, n_test) if len(keys) > 1 else (0.0, 1.0)
        out.append({"method": m, "other": reference, "rmse_diff": float(d_rmse.mean()),
                    "r2_diff": float(d_r2.mean()), "t": float(t), "p": float(p),
                    "outcome": paired_outcome(-float(d_rmse.mean()), p, alpha=alpha), "n_pairs": len(keys)})
    return out
