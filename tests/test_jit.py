"""The serial / threaded choice of the compiled kernels (knnweights.engine.jit)."""

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba import prange

import knnweights
from knnweights import IM4E, SQPFW, GFlip, IRelief, LHRelief, MultiSURF, NCADiagonal, ReliefF
from knnweights.engine import jit

two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba runs one thread here")


def _toy():
    @numba.njit(parallel=True, nogil=True)
    def row_sums(A, out):
        for i in prange(A.shape[0]):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i, k]
            out[i] = s
        return out

    return jit.size_dispatch(row_sums, lambda A, out: A.size, cache=False)


def test_a_small_call_compiles_and_runs_the_serial_kernel_only():
    k = _toy()
    A = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(k(A, np.empty(3)), A.sum(axis=1))
    assert k.serial.signatures and not k.compiled.signatures
    assert k.__name__ == "row_sums" and "row_sums" in repr(k)


@two_threads
def test_a_large_call_takes_the_threaded_kernel(monkeypatch):
    k = _toy()
    A = np.random.default_rng(0).normal(size=(50, 7))
    small = k(A, np.empty(50))
    monkeypatch.setattr(jit, "SERIAL_WORK", A.size)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        large = k(A, np.empty(50))
        assert k.compiled.signatures
        numba.set_num_threads(1)  # one thread: the serial kernel, whatever the size
        n_sig = len(k.compiled.signatures)
        k(A.astype(np.float32), np.empty(50, np.float32))
        assert len(k.compiled.signatures) == n_sig
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(small, large)


def _library_modules():
    for info in pkgutil.walk_packages(knnweights.__path__, "knnweights."):
        if info.name.split(".")[1] in ("engine", "_solvers", "weighters"):
            yield importlib.import_module(info.name)


def test_every_threaded_kernel_of_the_library_is_size_dispatched():
    """A ``parallel=True`` dispatcher left bare at module level would be compiled for threads on its
    first call, however small (several seconds of a first fit)."""
    bare = [f"{m.__name__}.{name}" for m in _library_modules() for name, obj in vars(m).items()
            if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.targetoptions.get("parallel")]
    assert not bare, bare
    sized = [obj for m in _library_modules() for obj in vars(m).values() if isinstance(obj, jit.SizedKernel)]
    assert len(sized) >= 40


def _fits():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 9)
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.randn(60) > 0).astype(int)
    G = rng.randint(0, 3, size=(60, 40)).astype(np.int8)
    G[rng.rand(60, 40) < 0.05] = -127
    yg = (G[:, 0] + G[:, 1] + rng.randint(0, 2, 60) > 2).astype(int)
    out = {}
    for est in (ReliefF(n_neighbors=5), MultiSURF(), IRelief(max_iter=20), IM4E(max_iter=10, random_state=0),
                NCADiagonal(max_iter=10), SQPFW(theta=1.0), GFlip(max_iter=3, random_state=0),
                LHRelief(max_iter=5)):
        out[type(est).__name__] = est.fit(X, y).feature_importances_
    out["ReliefF bytes"] = ReliefF(n_neighbors=3, missing="diff").fit(G, yg).feature_importances_
    Xm = X.copy()
    Xm[rng.rand(*X.shape) < 0.05] = np.nan
    out["ReliefF missing"] = ReliefF(n_neighbors=3, missing="diff").fit(Xm, y).feature_importances_
    out["p-values"] = ReliefF(n_neighbors=5, pvalues="mantel").fit(X, y).pvalues_
    return out


@two_threads
def test_serial_and_threaded_kernels_give_the_same_weights(monkeypatch):
    serial = _fits()
    monkeypatch.setattr(jit, "SERIAL_WORK", 0)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        threaded = _fits()
    finally:
        numba.set_num_threads(before)
    for name in serial:
        np.testing.assert_array_equal(serial[name], threaded[name], err_msg=name)


@pytest.mark.slow
def test_the_library_runs_uncompiled_under_numba_disable_jit():
    """``NUMBA_DISABLE_JIT=1`` (numba's switch for debugging kernels in Python) gives the compiled weights."""
    script = ("import json, numpy as np; from knnweights import ReliefF; rng = np.random.RandomState(0); "
              "X = rng.randn(30, 4); y = (X[:, 0] > 0).astype(int); "
              "print(json.dumps(ReliefF(n_neighbors=3).fit(X, y).feature_importances_.tolist()))")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    rng = np.random.RandomState(0)
    X = rng.randn(30, 4)
    y = (X[:, 0] > 0).astype(int)
    expected = knnweights.ReliefF(n_neighbors=3).fit(X, y).feature_importances_
    np.testing.assert_allclose(json.loads(res.stdout), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype, value", [(np.float64, -np.inf), (np.float64, 0.0), (np.int64, -1), (np.bool_, True)])
def test_full_helpers_equal_numpy_full(dtype, value):
    """The allocation helpers of compiled code return NumPy's ``full`` (shape, dtype and values)."""

    @jit.njit
    def both(n, r, c, value, dtype):
        return jit.full_1d(n, value, dtype), jit.full_2d(r, c, value, dtype)

    a, b = both(5, 3, 4, value, dtype)
    for got, want in ((a, np.full(5, value, dtype)), (b, np.full((3, 4), value, dtype))):
        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    assert both(0, 0, 3, value, dtype)[0].shape == (0,)
