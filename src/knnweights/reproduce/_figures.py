"""Figures and other values that are not table cells: computed once, kept in the store, drawn.

Figures and stability numbers are not :func:`~knnweights.evaluation.run_grid` cells; they
resume through the same :class:`~knnweights.evaluation.ResultStore` mechanism.  :func:`cached`
keeps one JSON-able value per key (``OUT/store/figures.jsonl``); :func:`curve_cells` keeps an
irrelevant-feature curve cell by cell (``OUT/store/<name>.jsonl``).  Every stored value records
the algorithm versions of the estimators it comes from (:func:`._versions.version_key`) and a
hash of their parameters; a value made by other versions or parameters is computed again.
"""

import os
import time

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_random_state

from .._version import __version__
from ..evaluation import ResultStore
from ..evaluation.grid import fingerprint_view
from ..evaluation.robustness import irrelevant_feature_errors
from ..evaluation.store import jsonable
from ..utils import fill_docstring, progress_bar
from ._data import data_doc
from ._versions import version_key

__all__ = ["cached", "curve_cells", "savefig", "as_arrays", "figures_doc", "not_computed"]

#: the Parameters and Returns of every paper's ``figures(cfg, out)``: ``{figures_params}`` in its docstring
figures_doc = fill_docstring(figures_params="""Parameters
----------
cfg : Config
    The run.
out : str
    The output folder: the PNG files go there.

Returns
-------
list of dict
    Per figure: ``title``, ``png`` (the file), ``claim``, ``verdict``, ``ours`` and, for a
    figure made of stored cells or not computed yet, ``cells`` (cells done and in all); empty
    for a paper without figures.""")


def not_computed(title):
    """The entry of ``figures`` for a figure whose value is neither in the store nor computed by this run.

    Parameters
    ----------
    title : str
        The figure's title.

    Returns
    -------
    dict
        ``title``, an empty ``claim``, ``verdict`` and ``ours`` saying so, ``cells``: 0 of 1 done.
    """
    return {"title": title, "claim": "", "verdict": "partial: not computed yet", "ours": "not computed yet",
            "cells": {"cells_done": 0, "cells_total": 1, "complete": False}}


def _code_record(cfg, name, deps):
    """The algorithm versions of ``deps`` (:func:`._versions.version_key`), noted in ``cfg.code_used[name]``."""
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
    return joblib.hash(fingerprint_view(list(deps)))[:16]


def cached(cfg, name, key, compute, deps=()):
    """``compute()`` once per ``(name, key, mode, random_state)`` and code; the JSON-able result is kept in the store.

    With ``cfg.compute`` false, or ``name`` not among the figures a restricted run selects
    (``cfg.computes``), nothing is computed: a value not in the store gives ``None``.

    Parameters
    ----------
    cfg : Config
        The run (mode, output folder, seed, what it computes).
    name : str
        The value's name in the store (a figure's, e.g. ``efw_fig1``).
    key : object
        What else identifies the value (its ``repr`` is stored).
    compute : callable
        ``compute()`` gives the value.
    deps : sequence of estimators, default=()
        The estimators the value comes from: their algorithm versions and parameters are
        stored with it.

    Returns
    -------
    object or None
        The value (from the store or computed now), ``None`` when it is neither.
    """
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
    t0 = time.monotonic()
    cfg.say(f"  {name}: computing ...")
    value = jsonable(compute())
    cfg.say(f"  {name}: done in {time.monotonic() - t0:.0f} s (kept in the store)")
    cfg.computed = getattr(cfg, "computed", 0) + 1
    store._repair()
    store.append({"key": full_key, "value": value, "code": code, "params": params, "package_version": __version__})
    return value


def _curve_cell(tag, estimator, X, y, n_noise, cv, noise_seed, cv_seed):
    return tag, irrelevant_feature_errors(estimator, X, y, n_noise, cv, noise_seed, cv_seed).tolist()


def _revalidate_curve(cfg, name, store, stale, done, n_check, estimators, code, params, base, X, y, counts, cv,
                      seeds):
    """``--revalidate N`` for figure cells.

    Per estimator, recompute ``N`` of its cells made by other algorithm versions (the
    largest noise count of the first repeat first: the most demanding cell); when every one
    gives the stored fold errors exactly, the estimator's other stale cells are kept, stamped
    with the current versions and ``"revalidated": {"from": old key, "checked": N}``, as
    :func:`~knnweights.evaluation.run_grid` does for table cells.  The recomputed cells are
    stored whatever the verdict.
    """
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
                          "code": code[e], "params": params[e], "package_version": __version__})
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


@data_doc
def curve_cells(cfg, name, key, estimators, X, y, counts, cv, n_repeats):
    """:func:`~knnweights.evaluation.irrelevant_feature_curve`, resumable cell by cell.

    One cell is one (estimator, count, repeat): a ``cv``-fold CV on the data with that many
    noise features, stored as its fold errors in ``OUT/store/<name>.jsonl`` with the
    estimator's algorithm versions (a cell made by other versions is computed again).  The noise and
    the folds are those of ``irrelevant_feature_curve(estimators, X, y, counts, cv,
    n_repeats, random_state=cfg.random_state)``, so a finished curve has the same numbers.
    Cells run repeat by repeat (every count and estimator of repeat 0 first), so a stopped
    run leaves whole repeats.

    Parameters
    ----------
    cfg : Config
        The run (mode, output folder, seed, parallelism, what it computes).
    name : str
        The curve's name (its store file).
    key : object
        What else identifies the curve (its ``repr`` is stored).
    estimators : dict
        Label -> estimator.
    {Xy}
    counts : sequence of int
        Numbers of noise features added.
    cv : int
        Folds of each cell's cross-validation.
    n_repeats : int
        Repeats (new noise and folds) per count.

    Returns
    -------
    res : dict
        Estimator -> ``{"counts", "mean_error", "std_error"}`` over the repeats finished for
        every estimator and count (empty when none is).
    info : dict
        ``cells_done``, ``cells_total``, ``repeats_done``, ``n_repeats``, ``complete``, ``code``.
    """
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
                              "code": code[e], "params": params[e], "package_version": __version__})
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


def savefig(ax, path):
    """Save the figure of ``ax`` to ``path`` (PNG, 90 dpi) and close it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        An axes of the figure.
    path : str
        The file.

    Returns
    -------
    str
        ``path``.
    """
    import matplotlib.pyplot as plt  # optional: matplotlib

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def as_arrays(res):
    """JSON curves (lists) back to arrays, for the plotting functions.

    Parameters
    ----------
    res : dict
        Label -> ``{field: list}``, as :func:`cached` or :func:`curve_cells` give them.

    Returns
    -------
    dict
        Label -> ``{field: ndarray}``.
    """
    return {k: {f: np.asarray(v) for f, v in d.items()} for k, d in res.items()}
