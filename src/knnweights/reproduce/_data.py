"""The papers' data as the tables use them: loading, class selection, feature filtering,
standardising, subsampling, and what identifies the prepared data without computing it."""

import functools

import joblib
import numpy as np
import sklearn.datasets

from ..datasets import _content_digest, dataset_info
from ..datasets import load as load_dataset
from ..engine.neighbors import TIE_RULE_VERSION
from ..utils import fill_docstring

__all__ = ["loader", "two_largest", "pool_classes", "standardize", "top_variance", "drop_constant", "subsample",
           "tie_heavy", "neighbour_ties", "ties_tag", "reduction", "limits_note", "data_doc", "SKLEARN_SETS",
           "PREPARATION_VERSION"]

#: paper datasets that scikit-learn ships (read from its installed files, no network), not bundled as a CSV:
#: name -> (loader in sklearn.datasets, n, d). WDBC is SQP-FW Table 1's "Breast Cancer Wisconsin (Diagnostic)".
SKLEARN_SETS = {"wdbc": ("load_breast_cancer", 569, 30)}

#: the version of :func:`loader`'s preparation steps (part of a loaded dataset's identity): bump it when a step
#: changes the data it gives
PREPARATION_VERSION = 1
_MISSING = "median"  # missing values in the bundled data (two sets have some): the feature median

#: the data parameters documented alike: ``{X}`` (the samples), ``{Xy}`` (the samples and their labels) and
#: ``{name}`` (a dataset's name) in a docstring
data_doc = fill_docstring(name="""name : str
    A bundled dataset (or one of :data:`SKLEARN_SETS`).""", X="""X : ndarray of shape (n_samples, n_features)
    The samples.""", Xy="""X : ndarray of shape (n_samples, n_features)
    The samples.
y : ndarray of shape (n_samples,)
    Their class labels.""")


@data_doc
def two_largest(X, y):
    """Keep the rows of the two largest classes (I-M4E, Sec. 5.2.2).

    Parameters
    ----------
    {Xy}

    Returns
    -------
    X, y : ndarray
        The rows of the two most frequent classes (all rows when there are at most two).
    """
    labels, counts = np.unique(y, return_counts=True)
    if labels.size <= 2:
        return X, y
    keep = labels[np.argsort(-counts, kind="stable")[:2]]
    m = np.isin(y, keep)
    return X[m], y[m]


@data_doc
def pool_classes(X, y, groups):
    """``(X, y)`` with the classes pooled as ``groups`` says.

    Samples of a class no group names are dropped; an original label named twice, or a
    group that matches no sample, raises ValueError.

    Parameters
    ----------
    {Xy}
    groups : dict
        ``{new label: [original labels]}``.

    Returns
    -------
    X, y : ndarray
        The rows of the named classes, labelled by their group.
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


@data_doc
def standardize(X):
    """Zero mean, unit variance per feature (constant features: centred only).

    Parameters
    ----------
    {X}

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


@data_doc
def drop_constant(X):
    """The features that are not constant.

    Parameters
    ----------
    {X}

    Returns
    -------
    ndarray of shape (n_samples, n_kept)
    """
    return X[:, X.std(axis=0) > 0]


@data_doc
def top_variance(X, k):
    """The ``k`` features of largest variance (unsupervised, so no label leaks into the folds).

    Parameters
    ----------
    {X}
    k : int or None
        Features kept, in their original order; ``None``: all.

    Returns
    -------
    ndarray of shape (n_samples, min(k, n_features))
    """
    if k is None or X.shape[1] <= k:
        return X
    idx = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:k])
    return X[:, idx]


@data_doc
def subsample(X, y, max_rows, seed=0, min_per_class=20):
    """A stratified random subset of about ``max_rows`` rows (all rows when ``None``).

    Every class keeps at least ``min(its size, min_per_class)`` rows, so that rare classes
    (Page Blocks) survive the stratified folds.

    Parameters
    ----------
    {Xy}
    max_rows : int or None
        About how many rows to keep; ``None``: all.
    seed : int, default=0
        Seed of the random choice.
    min_per_class : int, default=20
        Rows every class keeps at least (all of its rows when it has fewer).

    Returns
    -------
    X, y : ndarray
        The kept rows, in their original order.
    """
    if max_rows is None or X.shape[0] <= max_rows:
        return X, y
    rng = np.random.RandomState(seed)
    labels, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
    frac = max_rows / X.shape[0]
    keep = []
    for c in range(labels.size):
        idx = np.flatnonzero(inv == c)
        k = min(counts[c], max(int(round(frac * counts[c])), min_per_class))
        keep.append(rng.choice(idx, size=k, replace=False))
    idx = np.sort(np.concatenate(keep))
    return X[idx], y[idx]


def _raw_digest(name):
    """What identifies the raw data of ``name``: its file's digest, or a hash of scikit-learn's arrays as parsed."""
    if name in SKLEARN_SETS:
        X, y = getattr(sklearn.datasets, SKLEARN_SETS[name][0])(return_X_y=True)
        return joblib.hash((np.asarray(X), np.asarray(y)))
    return _content_digest(name)


def _load_raw(name):
    if name in SKLEARN_SETS:
        return getattr(sklearn.datasets, SKLEARN_SETS[name][0])(return_X_y=True)
    return load_dataset(name, return_X_y=True, missing=_MISSING)


def tie_heavy(X):
    """Whether the data's features mostly repeat their values.

    The median feature has more than half of its known values equal to another sample's
    (integer codes, few-level or few-digit measurements).  On such data many distances
    between samples are equal in exact arithmetic, so neighbour lists and kNN votes depend
    on how equal distances are ordered (:func:`knnweights.engine.neighbors.tie_tolerance`);
    on data whose features take mostly distinct values they practically never do.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The samples; NaN marks a missing value.

    Returns
    -------
    bool
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


@data_doc
def neighbour_ties(name):
    """The version of the neighbour tie rule a dataset's cells depend on.

    Parameters
    ----------
    {name}

    Returns
    -------
    dict
        ``{"neighbour_ties": v}`` for :func:`tie_heavy` data (part of its identity and of its
        figures' keys), ``{}`` otherwise.
    """
    return {"neighbour_ties": TIE_RULE_VERSION} if _tie_heavy_raw(name) else {}


@data_doc
def ties_tag(name):
    """What a stored figure value's key appends for the neighbour tie rule.

    Values made under another tie rule are computed again (the tables' cells carry it in
    their data identity).

    Parameters
    ----------
    {name}

    Returns
    -------
    tuple
        ``()``, or ``(("neighbour_ties", v),)`` for :func:`tie_heavy` data.
    """
    return tuple(neighbour_ties(name).items())


@data_doc
def loader(name, *, two=False, groups=None, std=False, const=False, rows=None, max_rows=None, max_features=None,
           min_class=None):
    """A ``callable(cfg) -> (X, y)`` for a bundled dataset (or one of :data:`SKLEARN_SETS`).

    The callable's ``identity(cfg)`` says which data ``load(cfg)`` gives without computing
    them: the dataset's name and content digest (of its file, before parsing), the preparation
    steps with their parameters and :data:`PREPARATION_VERSION`.  A stored cell's fingerprint
    is keyed on it, not on the prepared floats (standardising rounds differently on other CPUs).

    Parameters
    ----------
    {name}
    two : bool, default=False
        Keep the two largest classes (:func:`two_largest`).
    groups : dict, optional
        ``{new label: [original labels]}``: pool classes into new ones and drop the samples of
        classes not named (:func:`pool_classes`; instead of ``two``).
    std : bool, default=False
        Standardise the features (:func:`standardize`).
    const : bool, default=False
        Drop constant features (:func:`drop_constant`).
    rows : int, optional
        Keep the first ``rows`` samples (SQP-FW's 102 Prostate samples).
    max_rows : dict, optional
        Mode -> stratified subsample size (``--quick`` / ``--tiny`` reductions, said in the captions).
    max_features : dict, optional
        Mode -> highest-variance features kept (:func:`top_variance`).
    min_class : int, optional
        Drop the classes with fewer samples.

    Returns
    -------
    callable
        ``load(cfg) -> (X, y)``, with the attributes ``identity``, ``bundled``, ``max_rows`` and
        ``max_features``.
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


def reduction(load, mode):
    """How ``mode`` shrinks the data of a :func:`loader`, for the report.

    Parameters
    ----------
    load : callable
        A dataset's loader (:func:`loader`).
    mode : {"tiny", "quick", "full"}
        The run's mode.

    Returns
    -------
    str
        The reductions, ``""`` when there are none.
    """
    parts = []
    mr = getattr(load, "max_rows", {}).get(mode)
    mf = getattr(load, "max_features", {}).get(mode)
    name = getattr(load, "bundled", None)
    n = d = None
    if name is not None:
        try:
            info = dataset_info(name)
            n, d = info["n"], info["d"]
        except Exception:  # noqa: BLE001 - only a caption
            n, d = SKLEARN_SETS.get(name, (None, None, None))[1:]
    if mr and (n is None or n > mr):
        parts.append(f"--{mode} subsample of <= {mr} rows")
    if mf and (d is None or d > mf):
        parts.append(f"--{mode} keeps {mf} of {d if d is not None else 'the'} features")
    return "; ".join(parts)


def limits_note(max_rows=None, max_features=None):
    """Caption text for the quick-mode reductions.

    Parameters
    ----------
    max_rows : dict, optional
        Mode -> subsample size, as given to :func:`loader`.
    max_features : dict, optional
        Mode -> features kept, as given to :func:`loader`.

    Returns
    -------
    str
    """
    parts = []
    if max_rows and max_rows.get("quick"):
        parts.append(f"--quick subsamples to at most {max_rows['quick']} rows (stratified)")
    if max_features and max_features.get("quick"):
        parts.append(f"--quick keeps the {max_features['quick']} highest-variance features")
    return "; ".join(parts)
