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
Across machines (another CPU, another numba) the last bits may still differ, as with
any BLAS.
"""

import os
import subprocess
import sys
import warnings

import numpy as np

__all__ = ["compile_kernels", "ensure_cached", "kernels_cached"]


def kernels_cached():
    """True when numba's cache holds the main pairwise kernel for the sources installed now.

    ``None`` when that cannot be told (numba's cache internals changed, no cache).
    """
    try:
        from .engine import _kernels

        f = getattr(_kernels.pairwise_phi, "compiled", _kernels.pairwise_phi)
        index = f._cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - private numba API: unknown is not an error
        return None
    return bool(index)


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
        # the incremental hit / miss search (LH-RELIEF) prunes only from n = 64 on: a full pass, then a pruned one
        from .engine.incremental import IncrementalHitMiss

        rng = np.random.default_rng(1)
        X = rng.standard_normal((80, 6))
        for metric in ("manhattan", "sqeuclidean"):
            search = IncrementalHitMiss(X, np.arange(80) % 2, metric)
            w = np.full(6, 6**-0.5)
            search(w, 3)
            search(w * (1 + 1e-6 * np.arange(6)), 3)


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
