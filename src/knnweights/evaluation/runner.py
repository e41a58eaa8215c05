"""The grid runner: methods x datasets x repeats x folds, seeded, resumable, parallel.

One call of :func:`run_grid` evaluates every method on every dataset under one
protocol:

* :class:`RepeatedCV` -- repeated stratified k-fold CV (I-M4E: 10 x 10-fold;
  LH-RELIEF: 20 runs; EFW: 5-fold);
* :class:`RepeatedHoldout` -- repeated random train / validation / test splits
  (SQP-FW: thirds, 10 repeats, hyper-parameters picked on the validation third; its
  microarray table: train / test 2:1 with internal CV).

Every split depends only on ``(random_state, dataset, repeat)``, so all methods see the
same folds (the paired tests need that); every method's randomness is seeded from
``(random_state, method, dataset, repeat, fold)`` through :func:`derive_seed`
(SHA-256 of the names, then :class:`numpy.random.SeedSequence`; never Python's
``hash``).  A rerun gives identical numbers, whatever the joblib backend or
``n_jobs``.

Finished cells go to a :class:`ResultStore` (one JSON line per cell, flushed and
fsynced as each cell finishes); a rerun with the same store skips them, so an
interrupted run resumes where it stopped and no cell is stored twice.
"""

import hashlib
import json
import math
import numbers
import os
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

from ..utils import progress_bar
from ._seeds import _MAX_SEED, derive_seed
from .tuning import Tuned, set_random_states, tune

__all__ = [
    "RepeatedCV",
    "RepeatedHoldout",
    "ResultStore",
    "run_grid",
    "derive_seed",
    "summarize",
    "paired_values",
    "to_frame",
    "write_csv",
    "fingerprint_view",
    "jsonable",
]



def _package_version():
    from .. import __version__

    return __version__


# -- seeds -----------------------------------------------------------------------------
def _root_seed(random_state):
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0] % _MAX_SEED)
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(_MAX_SEED))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_MAX_SEED))
    raise ValueError(f"random_state must be None, an int, a RandomState or a Generator; got {random_state!r}.")


# -- protocols -------------------------------------------------------------------------
class RepeatedCV:
    """Repeated (stratified) k-fold cross-validation.

    Parameters
    ----------
    n_splits : int, default=10
        Folds per repeat; every sample is tested once per repeat.
    n_repeats : int, default=10
        Repeats, each with new shuffled folds; more repeats make the mean accuracy less
        dependent on one partition.
    stratified : bool, default=True
        Stratified folds (:class:`~sklearn.model_selection.StratifiedKFold`, shuffled
        with a seed per repeat).
    """

    has_validation = False

    def __init__(self, n_splits=10, n_repeats=10, stratified=True):
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.stratified = stratified

    def __repr__(self):
        return f"RepeatedCV(n_splits={self.n_splits}, n_repeats={self.n_repeats}, stratified={self.stratified})"

    def split(self, y, random_state, dataset):
        """Yield ``(repeat, fold, train, val, test)`` index arrays (``val`` is ``None``).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels (the stratification uses them; only their number matters
            otherwise).
        random_state : int
            Root seed of the run (non-negative); each repeat's seed is derived from it,
            ``dataset`` and the repeat.
        dataset : str
            Name of the dataset, so that different datasets get independent splits
            under the same root seed.

        Yields
        ------
        repeat : int
            Repeat number, from 0.
        fold : int
            Fold number within the repeat.
        train : ndarray of int
            Indices of the training part.
        val : ndarray of int or None
            Indices of the validation part; always ``None`` (tuning uses internal CV).
        test : ndarray of int
            Indices of the test part.
        """
        y = np.asarray(y)
        for r in range(self.n_repeats):
            seed = derive_seed(random_state, "split", dataset, r)
            cls = StratifiedKFold if self.stratified else KFold
            cv = cls(n_splits=self.n_splits, shuffle=True, random_state=seed)
            for f, (tr, te) in enumerate(cv.split(np.zeros((y.shape[0], 1)), y)):
                yield r, f, tr, None, te


class RepeatedHoldout:
    """Repeated random train / validation / test splits.

    Parameters
    ----------
    n_repeats : int, default=10
        Independent random splits.
    train_size, val_size, test_size : float, default=1/3 each
        Shares of the samples (SQP-FW Table 1: equal thirds; its Table 2: train / test
        2:1 with ``val_size=0``).  They must sum to 1.
    stratified : bool, default=True
        Keep the class proportions in every part
        (:class:`~sklearn.model_selection.StratifiedShuffleSplit`).

    Notes
    -----
    With a validation part, :class:`Tuned` methods pick their hyper-parameters on it and
    the chosen model (fitted on the training part only) is tested; untuned methods are
    fitted on the training part.  Without one, tuning uses internal CV on the training part.
    """

    def __init__(self, n_repeats=10, train_size=1 / 3, val_size=1 / 3, test_size=1 / 3, stratified=True):
        self.n_repeats = n_repeats
        self.train_size = train_size
        self.val_size = val_size
        self.test_size = test_size
        self.stratified = stratified

    @property
    def has_validation(self):
        """Whether the splits have a validation part (``val_size > 0``)."""
        return self.val_size > 0

    def __repr__(self):
        return (f"RepeatedHoldout(n_repeats={self.n_repeats}, train_size={self.train_size!r}, "
                f"val_size={self.val_size!r}, test_size={self.test_size!r}, stratified={self.stratified})")

    def split(self, y, random_state, dataset):
        """Yield ``(repeat, 0, train, val, test)`` index arrays (``val`` ``None`` without a validation part).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels (the stratification uses them; only their number matters
            otherwise).
        random_state : int
            Root seed of the run (non-negative); each repeat's seed is derived from it,
            ``dataset`` and the repeat.
        dataset : str
            Name of the dataset, so that different datasets get independent splits
            under the same root seed.

        Yields
        ------
        repeat : int
            Repeat number, from 0.
        fold : int
            Fold number within the repeat; always 0 (one split per repeat).
        train : ndarray of int
            Indices of the training part.
        val : ndarray of int or None
            Indices of the validation part, sorted; ``None`` when ``val_size=0``.
        test : ndarray of int
            Indices of the test part.
        """
        total = self.train_size + self.val_size + self.test_size
        if not math.isclose(total, 1.0, rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"train_size + val_size + test_size must be 1; got {total}.")
        y = np.asarray(y)
        n = y.shape[0]
        Xd = np.zeros((n, 1))
        cls = StratifiedShuffleSplit if self.stratified else ShuffleSplit
        for r in range(self.n_repeats):
            seed = derive_seed(random_state, "split", dataset, r)
            n_test = int(round(self.test_size * n))
            rest, test = next(cls(n_splits=1, test_size=n_test, random_state=seed).split(Xd, y))
            rest.sort()
            test.sort()
            if self.val_size > 0:
                n_val = int(round(self.val_size * n))
                seed2 = derive_seed(random_state, "split-val", dataset, r)
                tr, va = next(cls(n_splits=1, test_size=n_val, random_state=seed2).split(Xd[rest], y[rest]))
                yield r, 0, np.sort(rest[tr]), np.sort(rest[va]), test
            else:
                yield r, 0, rest, None, test


# -- results store ---------------------------------------------------------------------
class ResultStore:
    """One JSON line per finished cell; crash-safe appends; resume by key.

    Each line is written whole, flushed and fsynced before the next cell is stored, so
    a crash leaves at most one torn last line; reading ignores it and the next append
    cuts it off first.  Only the parent process writes (workers return their rows);
    run one grid per store file at a time (two runs appending to the same file could
    both compute a cell, although each would still write whole lines).

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` file; created with its folder when missing.
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def read(self):
        """All complete rows (a torn last line, from a crash, is skipped).

        Returns
        -------
        rows : list of dict
            The stored rows in file order; empty when the file does not exist.
        """
        if not os.path.exists(self.path):
            return []
        rows = []
        with open(self.path, "rb") as fh:
            data = fh.read()
        lines = data.split(b"\n")
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            if i == len(lines) - 1:
                # no newline after it: torn by a crash, even when what was written parses ("...}" before
                # the "\n"); _repair cuts it before the next append, so it must not count as done
                continue
            try:
                rows.append(json.loads(line.decode("utf-8")))
            except (ValueError, UnicodeDecodeError):
                if i == len(lines) - 1:  # torn last line (no newline after it)
                    continue
                warnings.warn(f"{self.path}: skipping unreadable line {i + 1}.", RuntimeWarning, stacklevel=2)
        return rows

    def _repair(self):
        """Cut a torn last line so that the next append starts on a fresh line."""
        if not os.path.exists(self.path):
            d = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(d, exist_ok=True)
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)
                fh.flush()
                os.fsync(fh.fileno())

    def append(self, row):
        """Append one row as a complete, fsynced line.

        Parameters
        ----------
        row : dict
            One finished cell; NumPy scalars and arrays are stored as JSON numbers and
            lists, anything else not JSON-serialisable as its ``repr``.
        """
        line = (json.dumps(row, sort_keys=True, default=_json_default) + "\n").encode("utf-8")
        with open(self.path, "ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.bool_):
        return bool(o)
    return repr(o)


def jsonable(obj):
    """``obj`` as a stored result row holds it: through JSON, with NumPy scalars and arrays as plain
    numbers and lists, other objects as their ``repr`` (so that two values compare as stored)."""
    return json.loads(json.dumps(obj, sort_keys=True, default=_json_default))


# -- one cell --------------------------------------------------------------------------
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
        row.update(extra)
        row["fingerprint"] = fingerprint
        if code is not None:
            row["code"], row["package_version"] = code, _package_version()
        return row
    else:
        raise TypeError(f"method {method_name!r}: expected an estimator, a Tuned or a callable; got {method!r}.")
    row["fit_time"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    pred = est.predict(Xte)
    row["accuracy"] = 100.0 * float(np.mean(pred == yte))
    if scoring not in (None, "accuracy"):
        row["score"] = float(check_scoring(est, scoring=scoring)(est, Xte, yte))
    row["score_time"] = time.perf_counter() - t1
    for attr in ("n_features_selected_",):
        if hasattr(est, attr):
            extra["n_features_selected"] = int(getattr(est, attr))
    row.update(extra)
    row["fingerprint"] = fingerprint
    if code is not None:
        row["code"], row["package_version"] = code, _package_version()
    return row


def fingerprint_view(obj):
    """``obj`` as a stored cell's fingerprint sees it.

    A class may list in ``_added_parameters`` the parameters it gained after cells were
    stored, whose defaults keep its results: at their defaults they are left out, so the
    object pickles (and hashes) as it did before they existed, and the stored cells stay
    valid.  Nested estimators (pipelines, tuned and wrapped methods) are viewed alike; an
    object with nothing to leave out is returned as it is.
    """
    import copy
    import inspect

    if isinstance(obj, (list, tuple)):
        items = [fingerprint_view(v) for v in obj]
        if all(a is b for a, b in zip(items, obj, strict=True)):
            return obj
        return type(obj)(items) if not hasattr(obj, "_fields") else type(obj)(*items)
    if isinstance(obj, dict):
        items = {k: fingerprint_view(v) for k, v in obj.items()}
        return obj if all(items[k] is obj[k] for k in obj) else items
    if not hasattr(obj, "__dict__") or isinstance(obj, type) or not (
            hasattr(obj, "get_params") or type(obj).__module__.startswith("knnweights")):
        return obj
    state = {k: fingerprint_view(v) for k, v in obj.__dict__.items()}
    changed = any(state[k] is not obj.__dict__[k] for k in state)
    added = getattr(type(obj), "_added_parameters", ())
    if added:
        defaults = inspect.signature(type(obj).__init__).parameters
        for name in added:
            if name in state and name in defaults and _same(state[name], defaults[name].default):
                del state[name]
                changed = True
    if not changed:
        return obj
    view = copy.copy(obj)
    view.__dict__ = state
    return view


def _same(a, b):
    try:
        return bool(a is b or a == b)
    except Exception:  # noqa: BLE001 - arrays and the like: not a default
        return False


def _fingerprint(method, data_hash, protocol, root, scoring):
    import joblib

    try:
        mh = joblib.hash(fingerprint_view(method))
    except Exception:  # noqa: BLE001 - unpicklable spec: fall back to its repr
        mh = hashlib.sha256(repr(method).encode()).hexdigest()
    return hashlib.sha256(repr((mh, data_hash, repr(protocol), root, scoring)).encode()).hexdigest()[:16]


def _data_key(X, y, identity=None):
    """The data's part of a cell's fingerprint: a hash of ``identity`` when given, else of the arrays."""
    import joblib

    if identity is None:
        return joblib.hash((X, y))
    return "identity:" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def _load_datasets(datasets):
    if isinstance(datasets, dict):
        items = datasets.items()
    else:
        from .. import datasets as _ds

        items = [(name, _ds.load(name, return_X_y=True)) for name in datasets]
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


# -- the runner ------------------------------------------------------------------------
def run_grid(methods, datasets, *, protocol=None, random_state=0, n_jobs=None, store=None, progress=None,
             as_frame=None, scoring="accuracy", code_versions=None, compute=True, revalidate=0, data_identity=None):
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
    as_frame : bool, optional
        Return a pandas DataFrame; default: when pandas is importable, else a list
        of dicts.
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
    from joblib import Parallel, delayed

    if not isinstance(methods, dict) or not methods:
        raise ValueError("methods must be a non-empty dict name -> method.")
    protocol = RepeatedCV() if protocol is None else protocol
    root = _root_seed(random_state)
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
    return _maybe_frame(rows, as_frame)


_VOLATILE = ("fit_time", "score_time", "code", "package_version", "fingerprint", "revalidated")


def _same_result(a, b):
    keys = (set(a) | set(b)) - set(_VOLATILE)
    return all(jsonable(a.get(k)) == jsonable(b.get(k)) for k in keys)


def _revalidate(old_rows, done, n_check, methods, data, protocol, root, scoring, fps, code_versions, store, n_jobs):
    """Recompute ``n_check`` stale cells per (method, dataset); stamp the group if they all agree (see run_grid)."""
    from joblib import Parallel, delayed

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


def _maybe_frame(rows, as_frame):
    if as_frame is False:
        return rows
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise ImportError("as_frame=True needs pandas; install it or pass as_frame=False.") from None
        return rows
    return pd.DataFrame(rows)


def to_frame(rows):
    """A pandas DataFrame of the rows (needs pandas).

    Parameters
    ----------
    rows : iterable of dict or pandas.DataFrame
        Rows as :func:`run_grid` returns them; a DataFrame is copied.

    Returns
    -------
    frame : pandas.DataFrame
        One row per cell, one column per key.
    """
    import pandas as pd

    return pd.DataFrame(list(rows) if not hasattr(rows, "columns") else rows)


def _records(results):
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        return results.to_dict(orient="records")
    return list(results)


def paired_values(results, method, dataset, value="accuracy"):
    """The ``value`` of ``method`` on ``dataset`` ordered by (repeat, fold), as an array.

    Two methods' arrays from the same run are paired cell by cell (same splits), as the
    paired tests (:func:`wilcoxon_test`, :func:`win_tie_loss`) need.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`run_grid` returns them.
    method : str
        Method name (the ``method`` column).
    dataset : str
        Dataset name (the ``dataset`` column).
    value : str, default="accuracy"
        Column to extract, e.g. ``"score"`` or ``"n_features_selected"``.

    Returns
    -------
    values : ndarray of shape (n_cells,)
        One float per (repeat, fold) of that method on that dataset.
    """
    rows = sorted((r for r in _records(results) if r["method"] == method and r["dataset"] == dataset),
                  key=lambda r: (r["repeat"], r["fold"]))
    return np.array([float(r[value]) for r in rows])


def summarize(results, value="accuracy", as_frame=False):
    """Mean, standard deviation and count of ``value`` per (method, dataset).

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`run_grid` returns them.
    value : str, default="accuracy"
        Column to summarise.
    as_frame : bool, default=False
        Return a pandas DataFrame instead of a list of dicts.

    Returns
    -------
    summary : list of dict or pandas.DataFrame
        One entry per (method, dataset), in order of first appearance: ``method``,
        ``dataset``, ``mean``, ``std`` (sample standard deviation; 0 for one cell)
        and ``n`` (the number of cells).
    """
    groups = {}
    for r in _records(results):
        groups.setdefault((r["method"], r["dataset"]), []).append(float(r[value]))
    out = []
    for (m, d), v in groups.items():
        a = np.asarray(v)
        out.append({"method": m, "dataset": d, "mean": float(a.mean()),
                    "std": float(a.std(ddof=1)) if a.size > 1 else 0.0, "n": int(a.size)})
    return _maybe_frame(out, True) if as_frame else out


def write_csv(results, path):
    """Write the rows as CSV atomically (temporary file, then ``os.replace``).

    A reader never sees a half-written file; dict and list values (e.g. ``best_params``)
    are written as JSON.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Rows as :func:`run_grid` returns them.
    path : str or path-like
        Destination file; its folder is created when missing.

    Returns
    -------
    path : str
        The path written.
    """
    import csv

    rows = _records(results)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v) for k, v in r.items()})
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path
