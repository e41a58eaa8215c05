"""Shared data preparation for the paper modules (two largest classes, standardising, subsampling)."""

import functools

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


#: paper datasets that scikit-learn ships (read from its installed files, no network), not bundled as a CSV:
#: name -> (loader in sklearn.datasets, n, d). WDBC is SQP-FW Table 1's "Breast Cancer Wisconsin (Diagnostic)".
SKLEARN_SETS = {"wdbc": ("load_breast_cancer", 569, 30)}


#: the version of :func:`loader`'s preparation steps (part of a loaded dataset's identity): bump it when a step
#: changes the data it gives
PREPARATION_VERSION = 1
_MISSING = "median"  # missing values in the bundled data (two sets have some): the feature median


def _raw_digest(name):
    """What identifies the raw data of ``name``: its file's digest, or a hash of scikit-learn's arrays as parsed."""
    if name in SKLEARN_SETS:
        import joblib
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, SKLEARN_SETS[name][0])(return_X_y=True)
        return joblib.hash((np.asarray(X), np.asarray(y)))
    return _ds._content_digest(name)


def tie_heavy(X):
    """Whether the data's features mostly repeat their values: the median feature has more than half of
    its known values equal to another sample's (integer codes, few-level or few-digit measurements).

    On such data many distances between samples are equal in exact arithmetic, so neighbour lists and
    kNN votes depend on how equal distances are ordered (:func:`knnweights.engine.neighbors.tie_tolerance`);
    on data whose features take mostly distinct values they practically never do.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return False
    share = []
    for col in X.T:
        known = col[~np.isnan(col)]
        share.append(1.0 - np.unique(known).size / known.size if known.size else 0.0)
    return bool(np.median(share) > 0.5)


@functools.lru_cache(maxsize=None)
def _tie_heavy_raw(name):
    X, _ = _load_raw(name)
    return tie_heavy(X)


def neighbour_ties(name):
    """The version of the neighbour tie rule a dataset's cells depend on: ``{"neighbour_ties": v}`` for
    :func:`tie_heavy` data (part of its identity and of its figures' keys), ``{}`` otherwise."""
    from ..engine.neighbors import TIE_RULE_VERSION

    return {"neighbour_ties": TIE_RULE_VERSION} if _tie_heavy_raw(name) else {}


def ties_tag(name):
    """``()``, or ``(("neighbour_ties", v),)`` for :func:`tie_heavy` data: appended to a stored figure value's
    key, so values made under another tie rule are computed again (the tables' cells carry it in their
    data identity)."""
    return tuple(neighbour_ties(name).items())


def _load_raw(name):
    if name in SKLEARN_SETS:
        import sklearn.datasets

        return getattr(sklearn.datasets, SKLEARN_SETS[name][0])(return_X_y=True)
    return _ds.load(name, return_X_y=True, missing=_MISSING)


def loader(name, *, two=False, groups=None, std=False, const=False, rows=None, max_rows=None, max_features=None,
           min_class=None):
    """A ``callable(cfg) -> (X, y)`` for a bundled dataset (or one of :data:`SKLEARN_SETS`).

    ``max_rows`` / ``max_features``: dicts mode -> limit (quick / tiny subsampling, said in the
    table captions); ``rows``: keep the first ``rows`` samples (SQP-FW's 102 Prostate samples);
    ``two``: keep the two largest classes; ``groups``: ``{new label: [original labels]}``, pool
    classes into new ones and drop the samples of classes not named (instead of ``two``).

    The callable's ``identity(cfg)`` says which data ``load(cfg)`` gives without computing
    them: the dataset's name and content digest (of its file, before parsing), the preparation
    steps with their parameters and :data:`PREPARATION_VERSION`.  A stored cell's fingerprint
    is keyed on it, not on the prepared floats (standardising rounds differently on other CPUs).
    """

    def load(cfg):
        X, y = _load_raw(name)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        if rows is not None:
            X, y = X[:rows], y[:rows]
        if groups is not None:
            X, y = pool_classes(X, y, groups)
        elif two:
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

    def identity(cfg):
        mr = (max_rows or {}).get(cfg.mode)
        return {"dataset": name, "digest": _raw_digest(name), "missing": _MISSING, "rows": rows,
                "groups": groups, "two": two, "min_class": min_class, "const": const,
                "max_features": (max_features or {}).get(cfg.mode), "std": std, "max_rows": mr,
                "subsample_seed": cfg.random_state if mr is not None else None, "preparation": PREPARATION_VERSION,
                **neighbour_ties(name)}

    load.identity = identity
    load.bundled = name  # the name `knnweights datasets` prints (``reproduce --datasets`` accepts it)
    load.max_rows, load.max_features = dict(max_rows or {}), dict(max_features or {})
    return load


def pool_classes(X, y, groups):
    """``(X, y)`` with the classes pooled as ``groups`` says (``{new label: [original labels]}``).

    Samples of a class no group names are dropped; an original label named twice, or a
    group that matches no sample, raises ValueError.
    """
    named = [lab for labs in groups.values() for lab in labs]
    if len(set(named)) != len(named):
        raise ValueError(f"a class is named in two groups: {groups!r}")
    new = np.empty(len(y), dtype=object)
    keep = np.zeros(len(y), dtype=bool)
    for label, labs in groups.items():
        hit = np.isin(y, list(labs))
        if not hit.any():
            raise ValueError(f"group {label!r}: none of the classes {list(labs)!r} occurs in the data")
        new[hit] = label
        keep |= hit
    return X[keep], np.asarray(new[keep].tolist())


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
            n, d = SKLEARN_SETS.get(name, (None, None, None))[1:]
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


def _package_version():
    from .. import __version__

    return __version__


def _code_record(cfg, name, deps):
    """The algorithm versions of ``deps`` (:func:`._versions.version_key`), noted in ``cfg.code_used[name]``."""
    from ._versions import version_key

    key = version_key(*deps)
    used = getattr(cfg, "code_used", None)
    if used is None:
        used = cfg.code_used = {}
    used[name] = {"version": key}
    return key


def _params_hash(deps):
    """A hash of the estimators ``deps`` themselves (their parameters, nested ones included).

    The version key of :func:`_code_record` does not see a parameter changed where the
    estimator is built (``LHRelief(damping=0.2)`` instead of ``LHRelief()``); a stored value
    is used only when this hash matches too, as :func:`~knnweights.evaluation.run_grid`'s
    fingerprint does for the tables' cells.
    """
    import joblib

    from ..evaluation.grid import fingerprint_view

    return joblib.hash(fingerprint_view(list(deps)))[:16]


def cached(cfg, name, key, compute, deps=()):
    """``compute()`` once per ``(name, key, mode, random_state)`` and code; the JSON-able result is kept in the store.

    Figures and stability numbers are not :func:`run_grid` cells; they resume through the
    same :class:`~knnweights.evaluation.ResultStore` mechanism (one JSON line per result,
    ``OUT/store/figures.jsonl``).  ``deps``: the estimators the value comes from; their algorithm
    versions (:func:`._versions.version_key`) are stored with the value, and a value made
    by other versions is computed again.  With ``cfg.compute`` false, or ``name`` not among the
    figures a restricted run selects (``cfg.computes``), nothing is computed: a value not in
    the store gives ``None``.
    """
    import os

    from ..evaluation import ResultStore
    from ..evaluation.store import jsonable

    code = _code_record(cfg, name + repr(key), deps)
    params = _params_hash(deps)
    store = ResultStore(os.path.join(cfg.out, "store", "figures.jsonl"))
    full_key = [name, repr(key), cfg.mode, cfg.random_state]
    hit = None
    for row in store.read():
        if row.get("key") == full_key and row.get("code") == code and row.get("params") == params:
            hit = row  # the last one wins
    if hit is not None:
        cfg.say(f"  {name}: from the store")
        return hit["value"]
    if not cfg.computes(name):
        cfg.say(f"  {name}: not computed yet")
        return None
    import time

    t0 = time.monotonic()
    cfg.say(f"  {name}: computing ...")
    value = jsonable(compute())
    cfg.say(f"  {name}: done in {time.monotonic() - t0:.0f} s (kept in the store)")
    cfg.computed = getattr(cfg, "computed", 0) + 1
    store._repair()
    store.append({"key": full_key, "value": value, "code": code, "params": params,
                  "package_version": _package_version()})
    return value


def _curve_cell(tag, estimator, X, y, n_noise, cv, noise_seed, cv_seed):
    from ..evaluation.robustness import irrelevant_feature_errors

    return tag, irrelevant_feature_errors(estimator, X, y, n_noise, cv, noise_seed, cv_seed).tolist()


def _revalidate_curve(cfg, name, store, stale, done, n_check, estimators, code, params, base, X, y, counts, cv,
                      seeds):
    """``--revalidate N`` for figure cells: per estimator, recompute ``N`` of its cells made by
    other algorithm versions (the largest noise count of the first repeat first: the most demanding cell);
    when every one gives the stored fold errors exactly, the estimator's other stale cells are
    kept, stamped with the current versions and ``"revalidated": {"from": old key, "checked": N}``,
    as :func:`~knnweights.evaluation.run_grid` does for table cells.  The recomputed cells are
    stored whatever the verdict."""
    from joblib import Parallel, delayed

    pos = {c: i for i, c in enumerate(counts)}
    groups = {}
    for cell in sorted(stale, key=lambda t: (t[2], -t[1])):
        groups.setdefault(cell[0], []).append(cell)
    checks = [cell for cells in groups.values() for cell in cells[:n_check]]
    tasks = (delayed(_curve_cell)(cell, estimators[cell[0]], X, y, cell[1], cv, int(seeds[pos[cell[1]], cell[2], 0]),
                                  int(seeds[pos[cell[1]], cell[2], 1])) for cell in checks)
    new = dict(Parallel(n_jobs=cfg.n_jobs)(tasks))
    store._repair()
    for e, cells in groups.items():
        checked = [cell for cell in cells[:n_check] if cell in new]
        for cell in checked:
            done[cell] = new[cell]
            store.append({"base": base, "estimator": e, "count": cell[1], "repeat": cell[2], "fold_errors": new[cell],
                          "code": code[e], "params": params[e],
                          "package_version": _package_version()})
        same = all(new[cell] == stale[cell]["fold_errors"] for cell in checked)
        kept = 0
        if checked and same:
            for cell in cells[n_check:]:
                row = dict(stale[cell])
                row["revalidated"] = {"from": row.get("code"), "checked": len(checked)}
                row["code"] = code[e]
                done[cell] = row["fold_errors"]
                store.append(row)
                kept += 1
        cfg.say(f"  {name} / {e}: {len(checked)} cell(s) made by other algorithm versions recomputed: "
                + (f"the same fold errors; its {kept} other stale cell(s) are kept (revalidated)" if same else
                   "different fold errors: its stale cells are computed again"))


def curve_cells(cfg, name, key, estimators, X, y, counts, cv, n_repeats):
    """:func:`~knnweights.evaluation.irrelevant_feature_curve`, resumable cell by cell.

    One cell is one (estimator, count, repeat): a ``cv``-fold CV on the data with that many
    noise features, stored as its fold errors in ``OUT/store/<name>.jsonl`` with the
    estimator's algorithm versions (a cell made by other versions is computed again).  The noise and
    the folds are those of ``irrelevant_feature_curve(estimators, X, y, counts, cv,
    n_repeats, random_state=cfg.random_state)``, so a finished curve has the same numbers.
    Cells run repeat by repeat (every count and estimator of repeat 0 first), so a stopped
    run leaves whole repeats.

    Returns
    -------
    res : dict
        Estimator -> ``{"counts", "mean_error", "std_error"}`` over the repeats finished for
        every estimator and count (empty when none is).
    info : dict
        ``cells_done``, ``cells_total``, ``repeats_done``, ``n_repeats``, ``complete``, ``code``.
    """
    import os

    from joblib import Parallel, delayed
    from sklearn.utils import check_random_state

    from ..evaluation import ResultStore
    from ..utils import progress_bar

    counts = [int(c) for c in counts]
    seeds = check_random_state(cfg.random_state).randint(0, np.iinfo(np.int32).max, size=(len(counts), n_repeats, 2))
    code = {e: _code_record(cfg, f"{name}/{e}", [est]) for e, est in estimators.items()}
    params = {e: _params_hash([est]) for e, est in estimators.items()}
    store = ResultStore(os.path.join(cfg.out, "store", f"{name}.jsonl"))
    base = [repr(key), cfg.mode, cfg.random_state, cv, n_repeats]
    done, stale = {}, {}
    for row in store.read():
        e = row.get("estimator")
        if row.get("base") == base and e in code and row.get("params") == params[e]:
            cell = (e, row["count"], row["repeat"])
            if row.get("code") == code[e]:
                done[cell] = row["fold_errors"]
            else:
                stale[cell] = row
    total = len(counts) * n_repeats * len(estimators)
    n_check = int(getattr(cfg, "revalidate", 0) or 0)
    stale = {cell: row for cell, row in stale.items() if cell not in done and cell[1] in counts and cell[2] < n_repeats}
    if n_check and stale and cfg.computes(name):
        _revalidate_curve(cfg, name, store, stale, done, n_check, estimators, code, params, base, X, y, counts, cv,
                          seeds)
    todo = [(e, c, r) for r in range(n_repeats) for i, c in enumerate(counts) for e in estimators
            if (e, c, r) not in done]
    if todo and cfg.computes(name):
        store._repair()
        shown = cfg.log is not None and cfg.progress is not False
        bar = progress_bar(total, name, initial=total - len(todo)) if shown else None
        pos = {c: i for i, c in enumerate(counts)}
        tasks = (delayed(_curve_cell)((e, c, r), estimators[e], X, y, c, cv, int(seeds[pos[c], r, 0]),
                                      int(seeds[pos[c], r, 1])) for e, c, r in todo)
        try:
            for (e, c, r), errs in Parallel(n_jobs=cfg.n_jobs, return_as="generator_unordered")(tasks):
                done[(e, c, r)] = errs
                store.append({"base": base, "estimator": e, "count": c, "repeat": r, "fold_errors": errs,
                              "code": code[e], "params": params[e],
                          "package_version": _package_version()})
                cfg.computed = getattr(cfg, "computed", 0) + 1
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
    reps = [r for r in range(n_repeats) if all((e, c, r) in done for e in estimators for c in counts)]
    res = {}
    if reps:
        for e in estimators:
            per = np.array([[np.mean(done[(e, c, r)]) for r in reps] for c in counts])
            res[e] = {"counts": counts, "mean_error": per.mean(axis=1).tolist(), "std_error": per.std(axis=1).tolist()}
    info = {"cells_done": len(done), "cells_total": total, "repeats_done": len(reps), "n_repeats": n_repeats,
            "complete": len(reps) == n_repeats, "code": code}
    return res, info


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
