"""Which algorithm versions made a stored cell.

A ``--full`` run takes longer than one session, so its finished cells are kept in a
committed store and reused by later runs.  A reused cell is trustworthy while the
algorithms that computed it still compute the same results.  Every weighter, classifier,
selector and reproduction callable declares that as an integer class attribute,
``_algorithm_version``, bumped in the commit that changes its results beyond the tolerance
of its golden regression test (``tests/test_golden.py``).  A refactor, a faster kernel or
a moved helper leaves the versions, and so every stored cell, alone.

:func:`version_key` names the versions behind one method object (an estimator, a
:class:`~knnweights.evaluation.Tuned`, a pipeline or a picklable callable): every
knnweights class its pickle refers to that declares a version, the classes a callable
names in ``_algorithm_uses`` (those its ``__call__`` uses, which its pickle does not name), and the cell
protocol's own :data:`PROTOCOL_VERSION` (splits, seeds, tuning).  The method's parameters,
the data and the split are in the cell's fingerprint
(:func:`knnweights.evaluation.run_grid`), so key and fingerprint together pin the cell.
"""

import importlib
import io
import os
import pickle
import pkgutil

__all__ = ["PROTOCOL_VERSION", "algorithm_versions", "version_key", "parse_key", "current_versions", "stale_names"]

_PKG = "knnweights"

#: the cell protocol (the splits and seeds of :mod:`knnweights.evaluation`, :mod:`~knnweights.evaluation.tuning`):
#: bump it when a stored cell of any method would come out differently
PROTOCOL_VERSION = 1
_PROTOCOL = "protocol"


def _own_version(obj):
    """The ``_algorithm_version`` a class (or a function, as an attribute) declares itself, not inherited."""
    v = obj.__dict__.get("_algorithm_version")
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _resolve(name):
    """``"package.module:Class"`` -> the class."""
    mod, _, attr = name.partition(":")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class _Recorder(pickle.Unpickler):
    def __init__(self, data):
        super().__init__(io.BytesIO(data))
        self.found = {}

    def find_class(self, module, name):
        obj = super().find_class(module, name)
        if module == _PKG or module.startswith(_PKG + "."):
            _add(self.found, obj)
        return obj


def _add(found, cls):
    if not isinstance(cls, type):  # a function used as a component (a score function)
        if callable(cls) and hasattr(cls, "__dict__") and _own_version(cls) is not None:
            found[cls.__name__] = _own_version(cls)
        return
    for klass in cls.__mro__:
        v = _own_version(klass)
        if v is not None and klass.__module__.startswith(_PKG):
            found[klass.__name__] = v
            break
    for used in getattr(cls, "_algorithm_uses", ()):
        _add(found, _resolve(used))


def algorithm_versions(*objs):
    """``{class name: _algorithm_version}`` of the classes that compute ``objs``' results, with the protocol's.

    Parameters
    ----------
    *objs : object
        Method objects (estimators, pipelines, picklable callables).

    Returns
    -------
    dict
    """
    found = {}
    for obj in objs:
        rec = _Recorder(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        rec.load()
        found.update(rec.found)
    found[_PROTOCOL] = PROTOCOL_VERSION
    return found


def version_key(*objs):
    """``"Class=1,Other=2,protocol=1"``: the versions of :func:`algorithm_versions`, sorted, as one string.

    Parameters
    ----------
    *objs : object
        Method objects (estimators, pipelines, picklable callables).

    Returns
    -------
    str
    """
    return ",".join(f"{k}={v}" for k, v in sorted(algorithm_versions(*objs).items()))


def parse_key(key):
    """``{name: version}`` of a key made by :func:`version_key` (``{}`` for anything else).

    Parameters
    ----------
    key : str or None
        A version key.

    Returns
    -------
    dict
    """
    out = {}
    for part in str(key or "").split(","):
        name, sep, v = part.partition("=")
        if not sep or not v.isdigit():
            return {}
        out[name] = int(v)
    return out


_CURRENT = None


def current_versions():
    """``{class name: _algorithm_version}`` of every versioned class in the installed package.

    Returns
    -------
    dict
    """
    global _CURRENT
    if _CURRENT is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        found = {}
        for info in pkgutil.walk_packages([root], _PKG + "."):
            if info.name.endswith(("__main__", "_torch_backend")):
                continue
            try:
                mod = importlib.import_module(info.name)
            except ImportError:  # an optional dependency's module
                continue
            for obj in vars(mod).values():
                if (callable(obj) and getattr(obj, "__module__", None) == mod.__name__ and hasattr(obj, "__dict__")
                        and _own_version(obj) is not None):
                    found[obj.__name__] = _own_version(obj)
        found[_PROTOCOL] = PROTOCOL_VERSION
        _CURRENT = found
    return _CURRENT


def stale_names(key):
    """The names in ``key`` whose version differs from the installed one (or that no longer exist).

    Parameters
    ----------
    key : str or None
        A version key (:func:`version_key`).

    Returns
    -------
    list of str
        Sorted; ``["(not a version key)"]`` when ``key`` is not one.
    """
    rec = parse_key(key)
    if not rec:
        return ["(not a version key)"]
    now = current_versions()
    return sorted(n for n, v in rec.items() if now.get(n) != v)
