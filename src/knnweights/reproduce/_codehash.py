"""Which code computed a stored cell: a hash of the knnweights sources a method depends on.

A ``--full`` run takes longer than one session, so its finished cells are kept in a
committed store and reused by later runs.  A reused cell is only trustworthy while the
code that computed it is unchanged.  :func:`code_hash` names that code for one method
object (an estimator, a :class:`~knnweights.evaluation.Tuned`, a pipeline or a picklable
callable):

* every knnweights module whose classes or functions the pickled object refers to (found
  by unpickling it with a recording ``find_class``), plus the modules a class lists in its
  ``code_modules`` attribute (for callables that import their weighter inside ``__call__``);
* the modules they import, transitively (read from their source, function-level imports
  included; ``from ..pkg import Name`` counts the module that defines ``Name``, not the
  package's ``__init__``); the imports of ``knnweights.reproduce`` modules are not
  followed (glue and captions, not numbers);
* the cell runner (:mod:`knnweights.evaluation.runner`: only the definitions that compute a
  cell, ``_run_cell`` and the split protocols, not the store and resume code) and its imports;
* of a module named in ``_PARTS`` only the listed top-level definitions (functions, classes,
  module constants): the runner, and SQP-FW's table method in :mod:`knnweights.reproduce.sqpfw`
  (a table's dataset list or caption there changes no stored cell).

The method's parameters, the data and the split are already in the cell's fingerprint
(:func:`knnweights.evaluation.run_grid`), so together they pin the cell.  The hash is
SHA-256 over the sorted relative paths and bytes (line endings normalised), 16 hex digits.
"""

import ast
import hashlib
import importlib
import importlib.util
import io
import os
import pickle

__all__ = ["code_hash", "code_modules", "module_files"]

_PKG = "knnweights"
_NO_FOLLOW = ("knnweights.reproduce.",)
#: modules never counted (they re-export or draw, they do not compute a cell)
_SKIP = {"knnweights", "knnweights.cli", "knnweights.__main__", "knnweights.reproduce.report",
         "knnweights.reproduce._progress", "knnweights.reproduce._codehash"}
_ALWAYS = ("knnweights.evaluation.runner",)
#: modules of which only these top-level definitions compute a cell (the rest is storage, resuming, reporting):
#: their source segments are hashed instead of the whole file, and their imports are those of the module
_PARTS = {"knnweights.evaluation.runner": ("_run_cell", "RepeatedCV", "RepeatedHoldout", "_root_seed"),
          # the method SQP-FW's table cells pickle and what it calls or reads at run time (not the tables' glue:
          # dataset lists and captions, which are in the cells' fingerprints or change no number)
          "knnweights.reproduce.sqpfw": ("_SQPFWPathKNN", "_path_errors", "_T1_BREAKPOINTS")}


class _Recorder(pickle.Unpickler):
    def __init__(self, data):
        super().__init__(io.BytesIO(data))
        self.found = set()

    def find_class(self, module, name):
        obj = super().find_class(module, name)
        if module == _PKG or module.startswith(_PKG + "."):
            self.found.add(module)
            extra = getattr(obj, "code_modules", ())
            if isinstance(extra, (tuple, list)):
                self.found.update(str(m) for m in extra)
        return obj


def _referenced(obj):
    """knnweights modules the pickle of ``obj`` refers to."""
    rec = _Recorder(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    rec.load()
    return rec.found


def _file(module):
    spec = importlib.util.find_spec(module)
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _is_pkg(module):
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.submodule_search_locations is not None


_IMPORTS = {}


def _from_target(node, pkg):
    """The absolute module an ``ast.ImportFrom`` inside package ``pkg`` imports from."""
    if not node.level:
        return node.module or ""
    base = pkg.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _definitions(tree):
    """``{name: node}`` of a module's top-level functions, classes and constants (``name = ...``)."""
    out = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out[n.name] = n
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    out[t.id] = n
    return out


def _imports(module):
    """knnweights modules ``module`` imports (any level of its source), names resolved to their modules."""
    if module in _IMPORTS:
        return _IMPORTS[module]
    path = _file(module)
    out = set()
    if path is None:
        _IMPORTS[module] = out
        return out
    with open(path, "rb") as fh:
        tree = ast.parse(fh.read(), filename=path)
    pkg = module if _is_pkg(module) else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith(_PKG + ".") or a.name == _PKG)
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, pkg)
            if not (target == _PKG or target.startswith(_PKG + ".")):
                continue
            if not _is_pkg(target):
                out.add(target)
                continue
            for a in node.names:  # from PKG import name: the submodule, or the module defining name
                sub = f"{target}.{a.name}"
                if _file(sub) is not None:
                    out.add(sub)
                    continue
                try:
                    val = getattr(importlib.import_module(target), a.name)
                except (ImportError, AttributeError):
                    continue
                mod = getattr(val, "__module__", None) or getattr(val, "__name__", None)
                if mod and (mod == _PKG or mod.startswith(_PKG + ".")):
                    out.add(mod)
    _IMPORTS[module] = out
    return out


def code_modules(*objs):
    """The sorted knnweights modules whose sources decide the cells of ``objs`` (see the module doc)."""
    todo = set(_ALWAYS)
    for obj in objs:
        todo |= _referenced(obj)
    seen = set()
    while todo:
        m = todo.pop()
        if m in seen or m in _SKIP:
            continue
        seen.add(m)
        if not m.startswith(_NO_FOLLOW):
            todo |= _imports(m) - seen
    return sorted(m for m in seen if _file(m) is not None)


def module_files(modules):
    """``{module: path relative to the package root}`` of the modules' source files."""
    root = os.path.dirname(_file(_PKG))
    return {m: os.path.relpath(_file(m), root).replace(os.sep, "/") for m in modules}


_FILE_HASH = {}


def _file_digest(path, names=None):
    # read once per process: the code a run executes is the code it imported (an edit of the file
    # during a long run does not change the running code, so it must not change the cells' hash)
    key = (path, names)
    if key not in _FILE_HASH:
        with open(path, "rb") as fh:
            data = fh.read().replace(b"\r\n", b"\n")
        if names:
            text = data.decode("utf-8")
            tree = ast.parse(text)
            segs = {k: ast.get_source_segment(text, n) for k, n in _definitions(tree).items() if k in names}
            missing = set(names) - set(segs)
            if missing:  # renamed: hash the whole file rather than nothing
                segs = {"": text}
            data = "\0".join(f"{k}\0{v}" for k, v in sorted(segs.items())).encode("utf-8")
        _FILE_HASH[key] = hashlib.sha256(data).hexdigest()
    return _FILE_HASH[key]


def code_hash(*objs, modules=None):
    """16 hex digits naming the source code that computes the cells of ``objs`` (see the module doc)."""
    mods = code_modules(*objs) if modules is None else sorted(modules)
    root = os.path.dirname(_file(_PKG))
    h = hashlib.sha256()
    for m, rel in sorted(module_files(mods).items(), key=lambda kv: kv[1]):
        h.update(rel.encode() + b"\0" + _file_digest(os.path.join(root, rel), _PARTS.get(m)).encode() + b"\n")
    return h.hexdigest()[:16]
