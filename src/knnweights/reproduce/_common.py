"""Shared data preparation for the paper modules (two largest classes, standardising, subsampling)."""

import numpy as np

from .. import datasets as _ds
from .tables import subsample

__all__ = ["loader", "two_largest", "standardize", "top_variance", "drop_constant", "reduction"]


def two_largest(X, y):
    """Keep the rows of the two largest classes (I-M4E, Sec. 5.2.2)."""
    labels, counts = np.unique(y, return_counts=True)
    if labels.size <= 2:
        return X, y
    keep = labels[np.argsort(-counts, kind="stable")[:2]]
    m = np.isin(y, keep)
    return X[m], y[m]


def standardize(X):
    """Zero mean, unit variance per feature (constant features: centred only)."""
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def drop_constant(X):
    return X[:, X.std(axis=0) > 0]


def top_variance(X, k):
    """The ``k`` features of largest variance (unsupervised, so no label leaks into the folds)."""
    if k is None or X.shape[1] <= k:
        return X
    idx = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:k])
    return X[:, idx]


def loader(name, *, two=False, std=False, const=False, rows=None, max_rows=None, max_features=None, min_class=None):
    """A ``callable(cfg) -> (X, y)`` for a bundled dataset.

    ``max_rows`` / ``max_features``: dicts mode -> limit (quick / tiny subsampling, said in the
    table captions); ``rows``: keep the first ``rows`` samples (SQP-FW's 102 Prostate samples).
    """

    def load(cfg):
        X, y = _ds.load(name, return_X_y=True, missing="median")
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        if rows is not None:
            X, y = X[:rows], y[:rows]
        if two:
            X, y = two_largest(X, y)
        if min_class:  # drop classes too small to give every split part a hit
            labels, counts = np.unique(y, return_counts=True)
            keep = np.isin(y, labels[counts >= min_class])
            X, y = X[keep], y[keep]
        if const:
            X = drop_constant(X)
        mf = (max_features or {}).get(cfg.mode)
        X = top_variance(X, mf)
        if std:
            X = standardize(X)
        X, y = subsample(X, y, (max_rows or {}).get(cfg.mode), seed=cfg.random_state)
        return X, y

    load.bundled = name  # the name `knnweights datasets` prints (``reproduce --datasets`` accepts it)
    load.max_rows, load.max_features = dict(max_rows or {}), dict(max_features or {})
    return load


def reduction(load, mode, shape=None):
    """How ``mode`` shrinks the data of a :func:`loader` (``""`` when it does not), for the report."""
    parts = []
    mr = getattr(load, "max_rows", {}).get(mode)
    mf = getattr(load, "max_features", {}).get(mode)
    name = getattr(load, "bundled", None)
    n = d = None
    if name is not None:
        try:
            info = _ds.dataset_info(name)
            n, d = info["n"], info["d"]
        except Exception:  # noqa: BLE001 - only a caption
            pass
    if mr and (n is None or n > mr):
        parts.append(f"--{mode} subsample of <= {mr} rows")
    if mf and (d is None or d > mf):
        parts.append(f"--{mode} keeps {mf} of {d if d is not None else 'the'} features")
    return "; ".join(parts)


def limits_note(max_rows=None, max_features=None):
    """Caption text for the quick-mode reductions."""
    parts = []
    if max_rows and max_rows.get("quick"):
        parts.append(f"--quick subsamples to at most {max_rows['quick']} rows (stratified)")
    if max_features and max_features.get("quick"):
        parts.append(f"--quick keeps the {max_features['quick']} highest-variance features")
    return "; ".join(parts)


def cached(cfg, name, key, compute):
    """``compute()`` once per ``(name, key, mode, random_state)``; JSON-able result kept in ``OUT/store/figures.jsonl``.

    Figures and stability numbers are not :func:`run_grid` cells; they resume through the
    same :class:`~knnweights.evaluation.ResultStore` mechanism (one JSON line per result).
    """
    import os

    from ..evaluation import ResultStore
    from ..evaluation.runner import _jsonable

    store = ResultStore(os.path.join(cfg.out, "store", "figures.jsonl"))
    full_key = [name, repr(key), cfg.mode, cfg.random_state]
    for row in store.read():
        if row.get("key") == full_key:
            cfg.say(f"  {name}: from the store")
            return row["value"]
    import time

    t0 = time.monotonic()
    cfg.say(f"  {name}: computing ...")
    value = _jsonable(compute())
    cfg.say(f"  {name}: done in {time.monotonic() - t0:.0f} s (kept in the store)")
    cfg.computed = getattr(cfg, "computed", 0) + 1
    store._repair()
    store.append({"key": full_key, "value": value})
    return value


def curve_to_json(bunch):
    return {k: np.asarray(v).tolist() for k, v in bunch.items() if k in ("counts", "mean_error", "std_error",
                                                                            "n_features", "mean", "std")}


def savefig(ax, path):
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def as_arrays(res):
    """JSON curves (lists) back to arrays, for the plotting functions."""
    return {k: {f: np.asarray(v) for f, v in d.items()} for k, d in res.items()}


def holdout_two_to_one(tiny, quick, full):
    """Protocol: repeated random 2:1 train / test splits, the number of repeats per mode."""
    from ..evaluation import RepeatedHoldout

    return lambda cfg: cfg.pick(*(RepeatedHoldout(r, 2 / 3, 0, 1 / 3) for r in (tiny, quick, full)))
