"""The grid runner: methods x datasets x repeats x folds, seeded, resumable, parallel.

One call of :func:`run_grid` evaluates every method on every dataset under one
protocol (:mod:`~knnweights.evaluation.protocols`).  Every method's randomness is seeded
from ``(random_state, method, dataset, repeat, fold)`` through
:func:`~knnweights.evaluation.derive_seed`, so a rerun gives identical numbers, whatever
the joblib backend or ``n_jobs``.

Finished cells go to a :class:`~knnweights.evaluation.ResultStore`, each keyed by a
fingerprint of its method, data, protocol, root seed and scoring; a rerun with the same
store skips them, so an interrupted run resumes where it stopped and no cell is stored
twice.
"""

import hashlib
import inspect
import json
import os
import time
import warnings

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.metrics import check_scoring

from .._version import __version__
from ..datasets import load as load_dataset
from ..utils import progress_bar
from .protocols import RepeatedCV, derive_seed, root_seed
from .results import _as_frame
from .store import ResultStore, jsonable
from .tuning import Tuned, set_random_states, tune

__all__ = ["run_grid", "fingerprint_view"]


def _run_cell(method_name, method, dataset, X, y, repeat, fold, train, val, test, seed, scoring, fingerprint,
              code=None):
    """Fit and score one (method, dataset, repeat, fold) cell; returns its row."""
    Xtr, ytr, Xte, yte = X[train], y[train], X[test], y[test]
    Xva = yva = None
    if val is not None:
        Xva, yva = X[val], y[val]
    row = {"method": method_name, "dataset": dataset, "repeat": int(repeat), "fold": int(fold),
           "n_train": int(len(train)), "n_val": int(0 if val is None else len(val)), "n_test": int(len(test)),
           "seed": int(seed)}
    t0 = time.perf_counter()
    extra = {}
    if isinstance(method, Tuned):
        est = set_random_states(clone(method.estimator), seed)
        est, params, best = tune(est, method.param_grid, Xtr, ytr, X_val=Xva, y_val=yva, cv=method.cv,
                                 scoring=method.scoring, random_state=derive_seed(seed, "inner-cv"))
        extra["best_params"] = jsonable(params)
        extra["tuning_score"] = float(best)
    elif hasattr(method, "fit"):
        est = set_random_states(clone(method), seed).fit(Xtr, ytr)
    elif callable(method):
        out = method(Xtr, ytr, Xte, yte, X_val=Xva, y_val=yva, random_state=seed)
        if isinstance(out, dict):
            out = dict(out)
            acc = float(out.pop("accuracy"))
            extra.update(jsonable(out))
        else:
            acc = float(out)
        row["fit_time"] = time.perf_counter() - t0
        row["accuracy"] = 100.0 * acc
        return _stamped(row, extra, fingerprint, code)
    else:
        raise TypeError(f"method {method_name!r}: expected an estimator, a Tuned or a callable; got {method!r}.")
    row["fit_time"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    pred = est.predict(Xte)
    row["accuracy"] = 100.0 * float(np.mean(pred == yte))
    if scoring not in (None, "accuracy"):
        row["score"] = float(check_scoring(est, scoring=scoring)(est, Xte, yte))
    row["score_time"] = time.perf_counter() - t1
    if hasattr(est, "n_features_selected_"):
        extra["n_features_selected"] = int(est.n_features_selected_)
    return _stamped(row, extra, fingerprint, code)


def _stamped(row, extra, fingerprint, code):
    """``row`` with the recorded extras, the cell's fingerprint and (when given) the code that computed it."""
    row.update(extra)
    row["fingerprint"] = fingerprint
    if code is not None:
        row["code"], row["package_version"] = code, __version__
    return row


def fingerprint_view(obj):
    """``obj`` as a stored cell's fingerprint sees it: what identifies the method, as plain data.

    An object with parameters (an estimator, or any object of the library) becomes
    ``(class name, {attribute: view})``: the class by its name, not the module that defines
    it, so moving a class to another module (a refactor) leaves its stored cells valid;
    containers are viewed item by item, functions by their names, anything else (numbers,
    strings, arrays) is itself.  A class may list in ``_added_parameters`` the parameters it
    gained after cells were stored, whose defaults keep its results: at their defaults they
    are left out, so the view is what it was before they existed and the stored cells stay
    valid.

    Parameters
    ----------
    obj : object
        A method spec (an estimator, a callable, a container of them).

    Returns
    -------
    view : object
        Plain data (tuples, lists, dicts, strings, numbers, arrays) to hash.
    """
    if isinstance(obj, (list, tuple)):
        items = [fingerprint_view(v) for v in obj]
        return ("tuple", items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return {k: fingerprint_view(v) for k, v in obj.items()}
    if isinstance(obj, type) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return ("name", getattr(obj, "__qualname__", repr(obj)))
    if not hasattr(obj, "__dict__") or not (hasattr(obj, "get_params")
                                            or type(obj).__module__.startswith("knnweights")):
        return obj
    state = {k: fingerprint_view(v) for k, v in obj.__dict__.items()}
    added = getattr(type(obj), "_added_parameters", ())
    if added:
        defaults = inspect.signature(type(obj).__init__).parameters
        for name in added:
            value = obj.__dict__.get(name, None)
            if name in obj.__dict__ and name in defaults and _equals_default(value, defaults[name].default):
                del state[name]
    return (type(obj).__qualname__, state)


def _equals_default(a, b):
    try:
        return bool(a is b or a == b)
    except Exception:  # noqa: BLE001 - arrays and the like: not a default
        return False


def _fingerprint(method, data_hash, protocol, root, scoring):
    """The key of a stored cell: a hash of the method (as :func:`fingerprint_view` sees it), the data's key,
    ``repr(protocol)``, the root seed and the scoring."""
    try:
        mh = joblib.hash(fingerprint_view(method))
    except Exception:  # noqa: BLE001 - unpicklable spec: fall back to its repr
        mh = hashlib.sha256(repr(method).encode()).hexdigest()
    return hashlib.sha256(repr((mh, data_hash, repr(protocol), root, scoring)).encode()).hexdigest()[:16]


def _data_key(X, y, identity=None):
    """The data's part of a cell's fingerprint: a hash of ``identity`` when given, else of the arrays."""
    if identity is None:
        return joblib.hash((X, y))
    return "identity:" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _load_datasets(datasets):
    if isinstance(datasets, dict):
        items = datasets.items()
    else:
        items = [(name, load_dataset(name, return_X_y=True)) for name in datasets]
    out = {}
    for name, data in items:
        X, y = data
        if hasattr(X, "to_numpy"):
            X = X.to_numpy()
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        if X.ndim != 2 or y.shape[0] != X.shape[0]:
            raise ValueError(f"dataset {name!r}: X must be 2-D with one label per row.")
        out[str(name)] = (X, y)
    return out


def run_grid(methods, datasets, *, protocol=None, random_state=0, n_jobs=None, store=None, progress=None,
             as_frame=True, scoring="accuracy", code_versions=None, compute=True, revalidate=0, data_identity=None):
    """Evaluate every method on every dataset under one protocol (repeats x folds).

    Parameters
    ----------
    methods : dict
        Name -> method.  A method is an unfitted scikit-learn classifier (fitted on
        the training part), a :class:`~knnweights.evaluation.Tuned` (hyper-parameters
        tuned on the validation part or by internal CV on the training part, see
        :func:`~knnweights.evaluation.tune`), or a callable
        ``f(X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=int)``
        returning the test accuracy as a fraction, or a dict with ``"accuracy"`` and
        further JSON-able entries to record.
    datasets : dict or list of str
        Name -> ``(X, y)``, or names of bundled datasets
        (:func:`knnweights.datasets.load`).
    protocol : RepeatedCV or RepeatedHoldout, default=RepeatedCV(10, 10)
        How each dataset is split into training (, validation) and test parts; every
        method sees the same splits, so the results are paired.
    random_state : int, RandomState, Generator or None, default=0
        Root of every seed.  ``None`` draws a fresh root (recorded per row as the cell
        seeds; a store can then not be resumed).
    n_jobs : int, optional
        Cells run in parallel through joblib; ``None`` follows the active
        ``joblib.parallel_backend`` (e.g. ``"dask"``), else runs serially.  Results
        do not depend on it.
    store : str or path-like or ResultStore, optional
        JSON-lines file of finished cells; cells already in it (same method, data,
        protocol, seed and scoring) are not run again.
    progress : bool, optional
        Progress line on stderr; default: only when stderr is a terminal.
    as_frame : bool, default=True
        Return a pandas DataFrame; ``False``: a list of dicts.
    scoring : str, default="accuracy"
        A scikit-learn scorer name; when not ``"accuracy"``, each row gets an extra
        ``score`` column on the test part (``accuracy`` is always recorded).
        :class:`Tuned` methods tune by their own ``scoring``.
    code_versions : dict, optional
        Method name -> a string naming the algorithm versions that compute its cells
        (:func:`knnweights.reproduce._versions.version_key`).  Each new row records it as
        ``code`` (with the ``package_version``); a stored row whose ``code`` differs (or is
        missing) is stale: it is not reused and its cell is computed again.
    compute : bool, default=True
        ``False``: compute nothing, return only the cells found in the store (a report
        of a partly finished run).
    revalidate : int, default=0
        For stored cells made by other versions (``code_versions``): per (method, dataset),
        recompute up to this many of them now; when every recomputed row
        equals its stored one (accuracy and every recorded value but the timings), the
        group's other stale rows are kept and stamped with the new ``code`` (and
        ``revalidated``: the old code and the number checked), else they are all
        recomputed.  A cheap way past a version bump that does not change these cells'
        numbers; it is evidence from a sample, not a proof, so it is off by default.
    data_identity : dict, optional
        Dataset name -> a JSON-able value that identifies its data (e.g. the bundled file's
        digest and the preparation steps, as ``knnweights reproduce`` gives): a stored cell's
        fingerprint is then keyed on it rather than on the arrays.  Data prepared by float
        arithmetic (standardised) can differ in the last bit between CPUs; their identity does
        not.  Datasets not named are identified by their arrays' bytes (they are the input).

    Returns
    -------
    list of dict or pandas.DataFrame
        One row per cell, ordered by method, dataset, repeat, fold: ``method``,
        ``dataset``, ``repeat``, ``fold``, ``accuracy`` (percent), ``n_train``,
        ``n_val``, ``n_test``, ``seed``, ``fit_time``, ``score_time`` and, where they
        apply, ``best_params``, ``tuning_score``, ``n_features_selected``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from knnweights import ReliefF
    >>> from knnweights.evaluation import RepeatedCV, Tuned, run_grid, weighted_knn
    >>> X, y = load_iris(return_X_y=True)
    >>> rows = run_grid({"ReliefF": Tuned(weighted_knn(ReliefF()), {"n_neighbors": [1, 3, 5]}, cv=3)},
    ...                 {"iris": (X, y)}, protocol=RepeatedCV(3, 2), as_frame=False)
    >>> len(rows), sorted(rows[0])[:4]
    (6, ['accuracy', 'best_params', 'dataset', 'fit_time'])
    """
    if not isinstance(methods, dict) or not methods:
        raise ValueError("methods must be a non-empty dict name -> method.")
    protocol = RepeatedCV() if protocol is None else protocol
    root = root_seed(random_state)
    data = _load_datasets(datasets)
    if isinstance(store, (str, os.PathLike)):
        store = ResultStore(store)

    data_identity = dict(data_identity or {})
    if set(data_identity) - set(data):
        raise ValueError(f"data_identity names datasets not given: {sorted(set(data_identity) - set(data))!r}.")
    data_hash = {name: _data_key(X, y, data_identity.get(name)) for name, (X, y) in data.items()}
    fps = {(m, d): _fingerprint(spec, data_hash[d], protocol, root, scoring)
           for m, spec in methods.items() for d in data}

    code_versions = dict(code_versions or {})
    done, old_rows = {}, {}
    if store is not None:
        stale = 0
        for row in store.read():
            key = (row.get("method"), row.get("dataset"), row.get("repeat"), row.get("fold"))
            if fps.get(key[:2]) != row.get("fingerprint"):
                stale += int(key[:2] in fps)
            elif key[0] in code_versions and row.get("code") != code_versions[key[0]]:
                old_rows[key] = row
            else:
                done[key] = row  # the last matching row wins (a recomputed cell is appended after its stale row)
        old_rows = {k: r for k, r in old_rows.items() if k not in done}
        old_code = len(old_rows)
        if revalidate and compute and old_rows:
            _revalidate(old_rows, done, revalidate, methods, data, protocol, root, scoring, fps, code_versions,
                        store, n_jobs)
            old_code = sum(1 for k in old_rows if k not in done)
        if stale:
            warnings.warn(f"{store.path}: {stale} stored row(s) come from a different configuration "
                          "(method, data, protocol, seed or scoring) and are ignored.", RuntimeWarning, stacklevel=2)
        if old_code:
            warnings.warn(f"{store.path}: {old_code} stored row(s) were computed by other algorithm versions (their "
                          "'code' differs from the versions installed now) and are computed again.", RuntimeWarning,
                          stacklevel=2)
        if compute:
            store._repair()

    tasks, order = [], []
    for d, (X, y) in data.items():
        splits = list(protocol.split(y, root, d))
        for m, spec in methods.items():
            for r, f, tr, va, te in splits:
                key = (m, d, r, f)
                order.append(key)
                if key in done:
                    continue
                if not compute:
                    continue
                seed = derive_seed(root, "cell", m, d, r, f)
                tasks.append(delayed(_run_cell)(m, spec, d, X, y, r, f, tr, va, te, seed, scoring, fps[(m, d)],
                                                code_versions.get(m)))

    bar = progress_bar(len(order), "run_grid", initial=len(order) - len(tasks), unit="cells", enabled=progress)
    try:
        if tasks:
            try:
                results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
            except ValueError:  # a backend without generator support
                results = Parallel(n_jobs=n_jobs)(tasks)
            for row in results:
                key = (row["method"], row["dataset"], row["repeat"], row["fold"])
                if key in done:
                    continue
                done[key] = row
                if store is not None:
                    store.append(row)
                bar.update()
    finally:
        bar.close()
    mpos = {m: i for i, m in enumerate(methods)}
    dpos = {d: i for i, d in enumerate(data)}
    order.sort(key=lambda k: (mpos[k[0]], dpos[k[1]], k[2], k[3]))
    rows = []
    for key in order:
        if key not in done:  # compute=False: a cell not in the store
            continue
        row = dict(done[key])
        row.pop("fingerprint", None)
        rows.append(_canonical_order(row))
    return _as_frame(rows, as_frame)


_VOLATILE = ("fit_time", "score_time", "code", "package_version", "fingerprint", "revalidated")


def _same_result(a, b):
    keys = (set(a) | set(b)) - set(_VOLATILE)
    return all(jsonable(a.get(k)) == jsonable(b.get(k)) for k in keys)


def _revalidate(old_rows, done, n_check, methods, data, protocol, root, scoring, fps, code_versions, store, n_jobs):
    """Recompute ``n_check`` stale cells per (method, dataset); stamp the group if they all agree (see run_grid)."""
    groups = {}
    for key in sorted(old_rows, key=lambda k: (k[0], k[1], k[2], k[3])):
        groups.setdefault(key[:2], []).append(key)
    splits = {d: {(r, f): (tr, va, te) for r, f, tr, va, te in protocol.split(y, root, d)}
              for d, (_, y) in data.items()}
    checks, tasks = [], []
    for (m, d), keys in groups.items():
        X, y = data[d]
        for key in keys[:n_check]:
            if (key[2], key[3]) not in splits[d]:
                continue
            tr, va, te = splits[d][(key[2], key[3])]
            seed = derive_seed(root, "cell", m, d, key[2], key[3])
            checks.append(key)
            tasks.append(delayed(_run_cell)(m, methods[m], d, X, y, key[2], key[3], tr, va, te, seed, scoring,
                                            fps[(m, d)], code_versions.get(m)))
    new = dict(zip(checks, Parallel(n_jobs=n_jobs)(tasks), strict=True)) if tasks else {}
    store._repair()
    for (m, d), keys in groups.items():
        checked = [k for k in keys[:n_check] if k in new]
        for k in checked:  # the recomputed cells are new rows whatever the verdict
            done[k] = new[k]
            store.append(new[k])
        if checked and all(_same_result(new[k], old_rows[k]) for k in checked):
            for k in keys:
                if k in done:
                    continue
                row = dict(old_rows[k])
                row["revalidated"] = {"from": row.get("code"), "checked": len(checked)}
                row["code"] = code_versions.get(m)
                done[k] = row
                store.append(row)
            warnings.warn(f"{store.path}: {m} on {d}: {len(checked)} cell(s) made by other algorithm versions "
                          f"recomputed with the same results; its {len(keys) - len(checked)} other stale cell(s) are "
                          "kept (revalidated).",
                          RuntimeWarning, stacklevel=3)


#: the leading keys of a row, in the order _run_cell writes them (the rest follow sorted)
_ROW_KEYS = ("method", "dataset", "repeat", "fold", "n_train", "n_val", "n_test", "seed", "fit_time", "accuracy",
             "score", "score_time")


def _canonical_order(row):
    """``row`` with its keys in one order, whether it was computed now or read from the store (sorted keys).

    Without it a resumed run's table (and CSV) would have other columns first than an uninterrupted one.
    """
    lead = [k for k in _ROW_KEYS if k in row]
    return {k: row[k] for k in [*lead, *sorted(k for k in row if k not in _ROW_KEYS)]}


