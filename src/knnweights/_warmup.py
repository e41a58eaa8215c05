"""Compile the numba kernels in a separate process before a run that must be repeatable.

Why: the compiled kernels use ``fastmath`` (the summation order over features is
LLVM's choice, which is what lets the pairwise kernels reach most of the machine's
limit).  Measured on this project's machine (numba 0.68, AVX-512), a kernel compiled in
the running process and the same kernel loaded from numba's on-disk cache sum in
different orders: the L1 distances differ in the last bit (about 1e-16 relative), which
is enough to flip a near-tie in a kNN vote or an iterative method's path.  The first run
after an installation (kernels compiled) then gave other numbers than every later run
(kernels loaded), e.g. two LOGO cells of I-M4E Table 3.

The remedy here: when the cache does not hold the kernels yet, compile them in a child
process (:func:`compile_kernels`, which writes the cache) before any cell is computed,
so that every process of the run, the parent and its joblib workers, loads the same
cached code.  :func:`ensure_cached` does that once; ``knnweights reproduce`` calls it.
A cache that holds only some kernels (a script or notebook that fitted one method
compiled and cached that method's kernels alone) counts as lacking them: the child
leaves a stamp beside numba's cache, keyed by the installed sources, and only the
stamp says that every kernel the warm-up reaches is there.
Across machines (another CPU, another numba) the last bits may still differ, as with
any BLAS.
"""

import hashlib
import os
import subprocess
import sys
import warnings

import numpy as np

__all__ = ["compile_kernels", "ensure_cached", "kernels_cached"]


def _main_kernel():
    from .engine import _kernels

    return getattr(_kernels.pairwise_phi, "compiled", _kernels.pairwise_phi)


def _main_kernel_indexed():
    """True when numba's cache holds the main pairwise kernel for its source now (its index is valid)."""
    return bool(_main_kernel()._cache._cache_file._load_index())


def _sources_key():
    """A key of the installed sources and compiler: numba keys its cache on each file's time and size."""
    import numba

    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(f"{numba.__version__} {sys.version}".encode())
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                st = os.stat(path)
                h.update(f"{os.path.relpath(path, root)} {st.st_mtime_ns} {st.st_size}\n".encode())
    return h.hexdigest()[:16]


def _stamp_path():
    """The warm-up's stamp, in the directory numba caches the main kernel in."""
    return os.path.join(_main_kernel()._cache._cache_path, f"knnweights-warm-{_sources_key()}.stamp")


def _write_stamp():
    """Say that every kernel the warm-up reaches is cached for these sources (older sources' stamps go)."""
    try:
        path = _stamp_path()
        folder, name = os.path.split(path)
        for old in os.listdir(folder):
            if old.startswith("knnweights-warm-") and old.endswith(".stamp") and old != name:
                os.remove(os.path.join(folder, old))
        with open(path, "w") as fh:
            fh.write("every kernel the warm-up reaches was compiled and cached for these sources\n")
    except Exception:  # noqa: BLE001 - an unwritable cache: the next run warms up again
        pass


def kernels_cached():
    """True when numba's cache holds the kernels for the sources installed now.

    That is: the main pairwise kernel is in the cache and the warm-up's stamp for these
    sources is there (written by :func:`compile_kernels` once every kernel it reaches is
    compiled).  ``None`` when that cannot be told (numba's cache internals changed, no cache).
    """
    try:
        indexed = _main_kernel_indexed()
        stamp = _stamp_path()
    except Exception:  # noqa: BLE001 - private numba API: unknown is not an error
        return None
    return indexed and os.path.exists(stamp)


def _tiny(n_classes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    n = 12 * n_classes
    y = np.repeat(np.arange(n_classes), 12)
    X = rng.standard_normal((n, 6)) + 0.8 * y[:, None] * (np.arange(6) < 2)
    return X.astype(dtype), y


def compile_kernels():
    """Fit every weighter and classifier once on tiny data (float64 and float32, 2 and 3 classes).

    Every kernel these fits reach is compiled (and written to numba's cache).  Failures
    are ignored: a method that cannot fit tiny data compiles its kernels when it is used.
    """
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning

    from . import WEIGHTERS
    from .classifiers import CKNN, HKNN, ExpectedDistanceClassifier, WeightedKNN

    ests = []
    for cls in WEIGHTERS.values():
        try:
            est = cls()
        except Exception:  # noqa: BLE001
            continue
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        ests.append(est)
    ests += [HKNN(), CKNN(), ExpectedDistanceClassifier(), WeightedKNN(WEIGHTERS["Relief"]())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("ignore", ConvergenceWarning)
        for dtype in (np.float64, np.float32):
            for n_classes in (2, 3):
                X, y = _tiny(n_classes, dtype)
                for est in ests:
                    try:
                        fitted = clone(est).fit(X, y)
                        if hasattr(fitted, "predict"):
                            fitted.predict(X[:5])
                        elif hasattr(fitted, "transform"):
                            fitted.transform(X[:5])
                    except Exception:  # noqa: BLE001 - see the docstring
                        pass
        # the byte (genotype) path of the Relief family: complete, with unknown values, continuous and discrete
        G = np.random.default_rng(2).integers(0, 3, (36, 8)).astype(np.uint8)
        yg = np.arange(36) % 3
        Gm = G.copy()
        Gm[::7, 1] = 255
        for est in (WEIGHTERS["MultiSURF"](missing="diff"), WEIGHTERS["ReliefF"](missing="diff", n_neighbors=3),
                    WEIGHTERS["MultiSURF"](missing="diff", discrete_features=True)):
            for Xg in (G, Gm):
                try:
                    clone(est).fit(Xg, yg)
                except Exception:  # noqa: BLE001 - see the docstring
                    pass
        # the incremental hit / miss search (LH-RELIEF) prunes only from n = 64 on: a full pass, then a pruned one
        from .engine.incremental import IncrementalHitMiss

        rng = np.random.default_rng(1)
        X = rng.standard_normal((80, 6))
        for metric in ("manhattan", "sqeuclidean"):
            search = IncrementalHitMiss(X, np.arange(80) % 2, metric)
            w = np.full(6, 6**-0.5)
            search(w, 3)
            search(w * (1 + 1e-6 * np.arange(6)), 3)
    _write_stamp()


def ensure_cached(log=None, timeout=900):
    """Compile the kernels in a child process when numba's cache lacks them (see the module doc).

    Returns True when a child ran.  ``log``: a callable for one line of progress.
    """
    if os.environ.get("NUMBA_DISABLE_JIT") == "1" or kernels_cached() is not False:
        return False
    if log is not None:
        log("compiling the numba kernels once, in a child process (about a minute; later runs load them) ...")
    code = "from knnweights._warmup import compile_kernels; compile_kernels()"
    try:
        subprocess.run([sys.executable, "-c", code], check=False, timeout=timeout,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return True
